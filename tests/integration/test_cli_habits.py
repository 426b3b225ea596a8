"""What curl and wget users type (issue 33 items 4 and 5), run as the `anyurl` command against
nginx: a URL without its scheme gets a hint naming the URL to write; the options they reach for
either work (a header, credentials, a rate limit, insecure TLS with a warning) or are answered
with anyurl's way, under the subcommand's usage."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures.launcher import Endpoint, Launcher

from anyurl.errors import UnsupportedScheme, URLSyntaxError

ANYURL = str(Path(sys.executable).parent / "anyurl")
ENV = {**os.environ, "COLUMNS": "120", "NO_COLOR": "1"}


def run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ANYURL, *args], capture_output=True, text=True, timeout=timeout, env=ENV)


@pytest.fixture(scope="module")
def nginx(servers: Launcher) -> Endpoint:
    return servers.get("nginx")


def test_a_host_and_port_without_a_scheme_gets_the_url_to_write(nginx: Endpoint) -> None:
    # item 4: "no handler for scheme '127.0.0.1'" said nothing of what to write
    given = f"{nginx.host}:{nginx.port}/hello.txt"
    proc = run("get", given)
    assert proc.returncode == UnsupportedScheme.exit_code, proc.stderr
    hint = f"did you mean http://{given}?"
    assert hint in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
    again = run("get", f"http://{given}")  # what the hint says works
    assert again.returncode == 0 and again.stdout == "hello over http\n", again.stderr


@pytest.mark.parametrize(("given", "meant"), [
    ("example.org/x.html", "http://example.org/x.html"),
    ("ftp.example.org/pub/", "ftp://ftp.example.org/pub/"),
    ("localhost:8080", "http://localhost:8080"),
])
def test_other_schemeless_forms_get_the_hint_before_any_connection(given: str, meant: str) -> None:
    proc = run("get", given)
    assert proc.returncode in (URLSyntaxError.exit_code, UnsupportedScheme.exit_code), proc.stderr
    assert f"did you mean {meant}?" in proc.stderr, proc.stderr


def test_a_url_of_an_unknown_scheme_gets_no_hint() -> None:
    proc = run("get", "foo:bar")
    assert proc.returncode == UnsupportedScheme.exit_code and "did you mean" not in proc.stderr

"""What curl and wget users type (issue 33 items 4 and 5), run as the `anyurl` command against
nginx: a URL without its scheme gets a hint naming the URL to write; the options they reach for
either work (a header, credentials, a rate limit, insecure TLS with a warning) or are answered
with anyurl's way, under the subcommand's usage."""

from __future__ import annotations

import os
import subprocess
import sys
import time
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


@pytest.mark.parametrize(("habit", "way"), [
    (["-L"], "redirects are followed by default"),
    (["-C", "-"], "use -c (--continue)"),
    (["-I"], "anyurl stat URL"),
    (["-r"], "anyurl mirror URL DIR"),
    (["--mirror"], "anyurl mirror URL DIR"),
    (["-s"], "use -q (--quiet)"),
])
def test_curl_and_wget_habits_get_anyurls_way_under_the_commands_usage(habit: list[str], way: str) -> None:
    # item 5: argparse's top-level usage and "unrecognized arguments" said nothing of either
    proc = run(*habit, "http://127.0.0.1:9/x")  # `anyurl URL` is `anyurl get URL`
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("usage: anyurl get "), proc.stderr
    assert f"anyurl get: error: unrecognized arguments: {habit[0]}" in proc.stderr
    assert way in proc.stderr and "Traceback" not in proc.stderr
    bogus = run("stat", "--bogus", "http://127.0.0.1:9/x")
    assert bogus.returncode == 2 and bogus.stderr.startswith("usage: anyurl stat ")


def test_a_header_reaches_the_server(nginx: Endpoint, tmp_path: Path) -> None:
    creds = Path(nginx.info["creds_log"])
    mark = creds.stat().st_size
    proc = run("get", "-q", "-H", "Cookie: habit=1", "--header", "X-Ignored-By-Log: 2",
               "-H", "User-Agent: curl-habit/1.0", "-o", str(tmp_path / "h.txt"), nginx.url("http", "/hello.txt"))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "h.txt").read_bytes() == b"hello over http\n"
    logged = creds.read_text()[mark:]
    assert '"GET /hello.txt HTTP/1.1" auth="-" cookie="habit=1"' in logged, logged
    access = Path(nginx.info["access_log"]).read_text()
    assert '"curl-habit/1.0"' in access.splitlines()[-1] or "curl-habit/1.0" in access
    bad = run("get", "-H", "no colon here", nginx.url("http", "/hello.txt"))
    assert bad.returncode == 2 and "not a header: 'no colon here'" in bad.stderr
    assert bad.stderr.startswith("usage: anyurl get ")


def test_user_and_password_log_in(nginx: Endpoint) -> None:
    from fixtures.servers.nginx import PASSWORD, USER

    url = nginx.url("http", "/private/hello.txt")
    refused = run("get", url)
    assert refused.returncode == 12, refused.stderr  # AccessDenied: 401
    proc = run("get", "-u", f"{USER}:{PASSWORD}", url)
    assert proc.returncode == 0 and proc.stdout == "hello over http\n", proc.stderr
    wrong = run("get", "-u", f"{USER}:nope", url)
    assert wrong.returncode == 12 and "nope" not in wrong.stderr  # the password stays masked


def test_insecure_fetches_from_a_self_signed_server_with_a_warning(nginx: Endpoint) -> None:
    url = f"https://127.0.0.1:{nginx.info['tls_port']}/hello.txt"
    checked = run("get", url)
    assert checked.returncode != 0 and "certificate verify failed" in checked.stderr, checked.stderr
    proc = run("get", "-k", url)
    assert proc.returncode == 0 and proc.stdout == "hello over http\n", proc.stderr
    assert "warning: --insecure: TLS certificates and host names are not checked" in proc.stderr


def test_limit_rate_limits_the_transfer(nginx: Endpoint, tmp_path: Path) -> None:
    # 1 MiB at 256 KiB/s: at least ~3 s (the first read comes at once); unlimited it is a few ms
    data = os.urandom(1 << 20)
    name = f"rate-{os.getpid()}.bin"
    (Path(nginx.info["www"]) / name).write_bytes(data)
    try:
        start = time.monotonic()
        proc = run("get", "-q", "--limit-rate", "256k", "-o", str(tmp_path / "r.bin"), nginx.url("http", f"/{name}"))
        took = time.monotonic() - start
        assert proc.returncode == 0, proc.stderr
        assert (tmp_path / "r.bin").read_bytes() == data
        assert took >= 3.0, took
        start = time.monotonic()
        out = subprocess.run([ANYURL, "get", "--limit-rate", "512k", nginx.url("http", f"/{name}")],
                             capture_output=True, timeout=60, env=ENV)  # to stdout too
        assert out.returncode == 0 and out.stdout == data and time.monotonic() - start >= 1.4
    finally:
        (Path(nginx.info["www"]) / name).unlink()


def test_user_and_password_log_in_to_ftp_too(servers: Launcher, tmp_path: Path) -> None:
    vsftpd = servers.get("vsftpd")
    user, pw = vsftpd.info["user"], vsftpd.info["password"]
    url = f"ftp://127.0.0.1:{vsftpd.port}/private.txt"
    listed = tmp_path / "list.txt"
    listed.write_text(url + "\n")
    proc = run("get", "-q", "-u", f"{user}:{pw}", "-d", str(tmp_path / "out"), "-i", str(listed))
    assert proc.returncode == 0, proc.stderr
    want = (Path(vsftpd.info["local_root"]) / "private.txt").read_bytes()
    assert (tmp_path / "out" / "private.txt").read_bytes() == want
    anonymous = run("get", url)  # without -u: anonymous, which has no such file
    assert anonymous.returncode != 0

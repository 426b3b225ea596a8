"""``anyurl ls`` of an empty listing, in every scheme that can have one, against the real
servers: no bare header on stdout, ``anyurl: URL: (no entries)`` on stderr, exit 0 (an
empty directory is a listing, unlike a plain file, exit 1); ``--json`` prints ``[]``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from fixtures.launcher import Launcher

ANYURL = str(Path(sys.executable).parent / "anyurl")
ENV = {**os.environ, "COLUMNS": "120", "NO_COLOR": "1"}


def ls(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([ANYURL, "ls", *args], capture_output=True, timeout=60, env=ENV)


def empty_dir(root: str) -> str:
    name = f"empty-{uuid.uuid4().hex[:8]}"
    path = Path(root) / name
    path.mkdir()
    path.chmod(0o755)
    return name


def html_page(servers: Launcher) -> str:
    ep = servers.get("nginx")
    name = f"nolinks-{uuid.uuid4().hex[:8]}.html"
    (Path(ep.info["www"]) / name).write_bytes(
        b"<!DOCTYPE html><html><head><title>No links</title></head>"
        b"<body><p>Nothing to follow here.</p></body></html>\n")
    return f"http://{ep.host}:{ep.port}/{name}"


def ftp_dir(servers: Launcher) -> str:
    ep = servers.get("vsftpd")
    return f"ftp://{ep.host}:{ep.port}/{empty_dir(ep.info['anon_root'])}/"


def gopher_menu(server: str) -> Callable[[Launcher], str]:
    def url(servers: Launcher) -> str:
        ep = servers.get(server)
        return f"gopher://{ep.host}:{ep.port}/1/{empty_dir(ep.info['root'])}"
    return url


def file_dir_abs(servers: Launcher) -> str:
    tmp = os.environ.get("TMPDIR", "/tmp")
    return (Path(tmp) / empty_dir(tmp)).as_uri() + "/"


def news_group(servers: Launcher) -> str:
    inn = servers.get("inn")
    return f"nntp://{inn.host}:{inn.port}/{inn.info['empty_group']}"


# (gophernicus is left out: its menu of an empty directory is not empty, it heads it with an
# info line naming the directory)
EMPTY = {"html": html_page, "ftp": ftp_dir, "gopher": gopher_menu("pygopherd"),
         "file": file_dir_abs, "nntp": news_group}


@pytest.mark.parametrize("kind", list(EMPTY))
def test_ls_of_an_empty_listing_says_so(kind: str, servers: Launcher) -> None:
    url = EMPTY[kind](servers)
    proc = ls(url)
    if kind == "nntp" and proc.returncode == 16 and b"load at" in proc.stderr:
        pytest.skip("INN refuses readers while the machine is loaded")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b""  # no header over nothing
    assert proc.stderr.decode().splitlines() == [f"anyurl: {url}: (no entries)"]
    as_json = ls("--json", url)
    assert as_json.returncode == 0 and json.loads(as_json.stdout) == []
    assert ls("-q", url).stderr == b""  # -q: no message


def test_ls_of_a_listing_with_entries_prints_no_such_line(servers: Launcher) -> None:
    ep = servers.get("vsftpd")
    proc = ls(f"ftp://{ep.host}:{ep.port}/pub/")
    assert proc.returncode == 0 and b"hello.txt" in proc.stdout
    assert b"no entries" not in proc.stderr

"""A gopher item that arrives as nothing at all (the server closes without a byte).

pygopherd, gophernicus and Flask-Gopher all send nothing for an empty file; curl and Lynx
return it empty. anyurl asks once more with Gopher+ ("\\t+"): pygopherd then states the
length ("+0", or "+-2" and the close for a menu) and ``meta["empty_confirmed"]`` is True;
gophernicus (no Gopher+) and a Flask-Gopher-like server send nothing again, and the item
is empty all the same (``empty_confirmed`` False), through fetch, open, get and mirror.
Until issue 25 that second case was a truncated transfer (exit 17): 27 of 546 items of a
real hole failed. A Gopher+ error answered to the probe is still an error.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from fixtures.launcher import Launcher
from fixtures.servers.gophernicus import EMPTY_DIR
from tests.hostile.fakes.gopher_hostile import Reply, hostile_gopher

from anyurl import Client
from anyurl.errors import ResourceNotFound


def anyurl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "anyurl", *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "COLUMNS": "200"})


def empty_items(root: str) -> str:
    """An empty file and an empty directory in a server's tree; their common stem."""
    stem = f"empty-{uuid.uuid4().hex[:8]}"
    path = Path(root) / f"{stem}.bin"
    path.write_bytes(b"")
    path.chmod(0o644)
    (Path(root) / stem).mkdir()
    (Path(root) / stem).chmod(0o755)
    return stem


@pytest.mark.parametrize("gtype", ["0", "9"])
def test_empty_file_on_pygopherd_is_saved_once_gopher_plus_says_it_is_empty(
        servers: Launcher, gtype: str, tmp_path: Path) -> None:
    ep = servers.get("pygopherd")
    stem = empty_items(ep.info["root"])
    out = tmp_path / "got"
    proc = anyurl("get", "-v", "-o", str(out), f"gopher://{ep.host}:{ep.port}/{gtype}/{stem}.bin")
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes() == b""
    # nothing came to the plain request; the Gopher+ one was answered "+0"
    assert f"> b'/{stem}.bin\\r\\n'" in proc.stderr and f"> b'/{stem}.bin\\t\\t+\\r\\n'" in proc.stderr


def test_empty_menu_on_pygopherd_is_an_empty_listing(servers: Launcher) -> None:
    ep = servers.get("pygopherd")
    stem = empty_items(ep.info["root"])
    url = f"gopher://{ep.host}:{ep.port}/1/{stem}"
    proc = anyurl("ls", url)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "" and proc.stderr.splitlines() == [f"anyurl: {url}: (no entries)"]


@pytest.mark.parametrize("gtype", ["0", "9"])
def test_empty_file_on_gophernicus_is_an_empty_file(servers: Launcher, gtype: str, tmp_path: Path) -> None:
    ep = servers.get("gophernicus")
    out = tmp_path / "got"
    url = f"gopher://{ep.host}:{ep.port}/{gtype}/empty/empty.txt"
    proc = anyurl("get", "-v", "-o", str(out), url)
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes() == b"" and os.listdir(tmp_path) == ["got"]  # no part file left
    # asked twice: plain, then the Gopher+ probe (gophernicus ignores it and sends nothing again)
    assert "> b'/empty/empty.txt\\r\\n'" in proc.stderr and "> b'/empty/empty.txt\\t\\t+\\r\\n'" in proc.stderr
    to_stdout = anyurl("get", url)
    assert to_stdout.returncode == 0 and to_stdout.stdout == "", to_stdout.stderr


async def test_empty_file_on_gophernicus_through_fetch_says_what_the_probe_found(servers: Launcher) -> None:
    ep = servers.get("gophernicus")
    async with Client() as c:
        r = await c.fetch(f"gopher://{ep.host}:{ep.port}/0/empty/empty.txt")
        async with c.open(f"gopher://{ep.host}:{ep.port}/9/empty/empty.bin") as body:
            chunks = [chunk async for chunk in body]
    assert r.content == b"" and r.size == 0
    assert r.meta["empty_asked"] is True and r.meta["empty_confirmed"] is False
    assert r.meta["gopher_plus"] is False  # the probe got no Gopher+ answer
    assert chunks == [] and body.meta["empty_confirmed"] is False


async def test_empty_file_on_pygopherd_is_confirmed_by_gopher_plus(servers: Launcher) -> None:
    ep = servers.get("pygopherd")
    stem = empty_items(ep.info["root"])
    async with Client() as c:
        r = await c.fetch(f"gopher://{ep.host}:{ep.port}/0/{stem}.bin")
    assert r.content == b""
    assert r.meta["empty_asked"] is True and r.meta["gopher_plus"] is True and r.meta["plus_length"] == 0
    assert r.meta["empty_confirmed"] is True


def test_mirror_of_a_gophernicus_menu_with_empty_files_saves_them_all(servers: Launcher, tmp_path: Path) -> None:
    ep = servers.get("gophernicus")
    tree = tmp_path / "tree"
    proc = anyurl("mirror", f"gopher://{ep.host}:{ep.port}/1/empty", str(tree))
    assert proc.returncode == 0, proc.stderr
    got = {str(p.relative_to(tree)): p.read_bytes() for p in tree.rglob("*") if p.is_file()}
    assert {Path(k).name: v for k, v in got.items()} == EMPTY_DIR, got


@pytest.mark.parametrize("gtype", ["0", "1", "9"])
def test_flask_gopher_like_server_that_sends_nothing_serves_an_empty_item(gtype: str, tmp_path: Path) -> None:
    # Flask-Gopher, like gophernicus, closes without a byte for an empty file, and ignores "\t+"
    with hostile_gopher({"/x": Reply()}) as g:
        url = f"gopher://127.0.0.1:{g.port}/{gtype}/x"
        proc = anyurl("ls", url) if gtype == "1" else anyurl("get", "-o", str(tmp_path / "x"), url)
        listed = anyurl("mirror", url, str(tmp_path / "tree")) if gtype == "1" else None
    assert proc.returncode == 0, proc.stderr
    assert g.log[:2] == ["/x", "/x"]  # asked twice: plain, then Gopher+
    if gtype == "1":
        assert proc.stdout == "" and proc.stderr.splitlines() == [f"anyurl: {url}: (no entries)"]
        assert listed is not None and listed.returncode == 0, listed.stderr
    else:
        assert (tmp_path / "x").read_bytes() == b"" and proc.stdout == ""


def test_gopher_plus_error_to_the_probe_is_still_an_error(tmp_path: Path) -> None:
    # the probe disambiguates: a Gopher+ server that answers it with an error is believed
    plus = {"/gone": Reply(b"--1\r\n1 Vanished <v@h>\r\nno such item\r\n.\r\n")}
    with hostile_gopher({"/gone": Reply()}, plus) as g:
        url = f"gopher://127.0.0.1:{g.port}/0/gone"
        proc = anyurl("get", "-o", str(tmp_path / "x"), url)
    assert proc.returncode == ResourceNotFound.exit_code, proc.stderr
    assert "the item is not available: no such item" in proc.stderr and not (tmp_path / "x").exists()
    assert g.log == ["/gone", "/gone"]


def test_fsspec_get_recursive_and_urllib_take_empty_items(servers: Launcher, tmp_path: Path) -> None:
    # fsspec's get -r stopped at the first empty item; urllib's urlopen raised
    import urllib.request

    import fsspec

    import anyurl.adapters.urllib

    ep = servers.get("gophernicus")
    fs = fsspec.filesystem("anyurl+gopher")
    fs.get(f"gopher://{ep.host}:{ep.port}/1/empty", str(tmp_path / "got"), recursive=True)
    got = {p.name: p.read_bytes() for p in (tmp_path / "got").rglob("*") if p.is_file()}
    assert got == EMPTY_DIR
    assert fs.cat(f"gopher://{ep.host}:{ep.port}/0/empty/empty.txt") == b""
    anyurl.adapters.urllib.install()
    try:
        with urllib.request.urlopen(f"gopher://{ep.host}:{ep.port}/9/empty/empty.bin", timeout=30) as r:
            assert r.read() == b""
    finally:
        anyurl.adapters.urllib.uninstall()

"""HTTP servers' odd replies, against lighttpd, Apache and BusyBox httpd (and nginx).

* A Range at the file's size: the 416 of lighttpd and Apache has no ``Content-Range:
  bytes */N`` (nginx's has), so anyurl asks the size with a HEAD; at the size the body is empty (resuming a
  complete file), past it a ProtocolError naming the size. It raised for lighttpd.
* BusyBox answers ``bytes=0-0`` with the whole file as ``206 bytes 0-99999/100000``: the
  reply covers the range, so the slice asked for is taken (``meta["range_cut"]``). It raised.
* BusyBox's index.cgi pages have no Content-Type: the start of the body is sniffed for HTML,
  so ``ls`` lists the directory and ``mirror`` copies the tree (it saved one file).
* Two Content-Type fields (joined ``"application/json, text/x-zoo"``): the last valid one,
  as browsers do (a fault server: real servers do not send two).

Each on both HTTP paths (the lean one and aiohttp).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from fixtures.launcher import Endpoint, Launcher
from fixtures.servers._http_seed import FILES
from tests.hostile.fakes.http_faults import FaultServer, response

from anyurl import Client, ProtocolError
from anyurl.handlers.http import HTTPOptions

BIG = FILES["big.bin"]


def anyurl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "anyurl", *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "COLUMNS": "200"})


@pytest.fixture(scope="module")
def lighttpd(servers: Launcher) -> Endpoint:
    return servers.get("lighttpd")


@pytest.fixture(scope="module")
def busybox(servers: Launcher) -> Endpoint:
    return servers.get("busybox_httpd")


@pytest.fixture(params=[True, False], ids=["lean", "aiohttp"])
def opts(request: pytest.FixtureRequest) -> HTTPOptions:
    return HTTPOptions(lean=request.param)


# -- a Range at (or past) the file's size --------------------------------------------------

@pytest.mark.parametrize("server", ["lighttpd", "apache", "nginx"])
async def test_range_at_the_size_is_an_empty_body(servers: Launcher, server: str, opts: HTTPOptions) -> None:
    ep = servers.get(server)
    name, data = ("hello.txt", b"hello over http\n") if server == "nginx" else ("big.bin", BIG)
    url = f"http://{ep.host}:{ep.port}/{name}"
    async with Client(http=opts) as c:
        r = await c.fetch(url, offset=len(data))
        assert r.content == b"" and r.meta["status"] == 416
        r = await c.fetch(url, offset=len(data), length=10)
        assert r.content == b""
        async with c.open(url, offset=len(data)) as body:
            assert [chunk async for chunk in body] == []
        with pytest.raises(ProtocolError, match=f"cannot serve from offset {len(data) + 1} "
                                                f"\\(it has {len(data)} bytes\\)"):
            await c.fetch(url, offset=len(data) + 1)


def test_get_c_of_a_complete_file_on_lighttpd_writes_nothing(lighttpd: Endpoint, tmp_path: Path) -> None:
    out = tmp_path / "big.bin"
    out.write_bytes(BIG)
    proc = anyurl("get", "-c", "-o", str(out), f"http://{lighttpd.host}:{lighttpd.port}/big.bin")
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes() == BIG
    assert os.listdir(tmp_path) == ["big.bin"]


# -- a 206 wider than the range asked for ------------------------------------------------------

async def test_busybox_whole_file_206_to_bytes_0_0_gives_the_first_byte(busybox: Endpoint, opts: HTTPOptions) -> None:
    url = f"http://{busybox.host}:{busybox.port}/big.bin"
    async with Client(http=opts) as c:
        r = await c.fetch(url, length=1)
        assert r.content == BIG[:1] and r.size == 1
        assert r.meta["content_range"] == "bytes 0-99999/100000" and r.meta["range_cut"] is True
        async with c.open(url, length=1) as body:
            assert b"".join([chunk async for chunk in body]) == BIG[:1]
        # a range BusyBox does serve exactly is unchanged
        r = await c.fetch(url, offset=10, length=5)
        assert r.content == BIG[10:15] and "range_cut" not in r.meta


async def test_a_206_that_covers_the_range_is_cut_and_one_that_does_not_is_refused(opts: HTTPOptions) -> None:
    data = bytes(range(100))
    wide = response("206 Partial Content", {"Content-Range": "bytes 0-99/100", "Content-Length": "100"}, data)
    early = response("206 Partial Content", {"Content-Range": "bytes 10-99/100", "Content-Length": "90"}, data[10:])
    late = response("206 Partial Content", {"Content-Range": "bytes 30-99/100", "Content-Length": "70"}, data[30:])
    short = response("206 Partial Content", {"Content-Range": "bytes 20-24/100", "Content-Length": "5"}, data[20:25])
    async with FaultServer({"/wide": wide, "/early": early, "/late": late, "/short": short}) as srv, \
            Client(http=opts) as c:
        assert (await c.fetch(srv.url("/wide"), offset=20, length=10)).content == data[20:30]
        assert (await c.fetch(srv.url("/early"), offset=20)).content == data[20:]
        with pytest.raises(ProtocolError, match="asked for bytes 20-29, server sent Content-Range 'bytes 30-99/100'"):
            await c.fetch(srv.url("/late"), offset=20, length=10)
        with pytest.raises(ProtocolError, match="asked for bytes 20-29, server sent Content-Range 'bytes 20-24/100'"):
            await c.fetch(srv.url("/short"), offset=20, length=10)


# -- pages without a Content-Type ------------------------------------------------------------

async def test_busybox_index_page_without_a_type_is_sniffed_as_html(busybox: Endpoint, opts: HTTPOptions) -> None:
    url = f"http://{busybox.host}:{busybox.port}/docs/"
    async with Client(http=opts) as c:
        r = await c.fetch(url)
        assert "content-type" not in {k.lower() for k in r.meta["headers"]}
        assert r.content_type == "text/html" and r.meta["content_type_sniffed"] == "text/html"
        assert r.content.startswith(b"<html>")
        names = sorted(e.name for e in await _ls(c, url))
        # a text file with no type stays bytes
        typed = await c.fetch(f"http://{busybox.host}:{busybox.port}/hello.txt")
    assert {"a.txt", "b.txt", "deeper"} <= set(names)
    assert typed.content == FILES["hello.txt"]


async def test_busybox_index_rows_give_size_and_date(busybox: Endpoint, opts: HTTPOptions) -> None:
    # issue 33 item 16: BusyBox's rows put the size before the date ("<td class=sz>500<td
    # class=dt>2026-12-01 23:04:48"); size was None for every file (looked for after the date)
    www = Path(busybox.info["www"])
    async with Client(http=opts) as c:
        entries = {e.name: e for e in await _ls(c, f"http://{busybox.host}:{busybox.port}/docs/")}
    assert {n: entries[n].size for n in ("a.txt", "b.txt")} == {"a.txt": 7, "b.txt": 7}
    assert entries["deeper"].kind == "directory" and entries["deeper"].size is None
    mtime = (www / "docs" / "a.txt").stat().st_mtime
    got = entries["a.txt"].modified
    assert got is not None and abs(got.timestamp() - int(mtime)) < 1


async def _ls(c: Client, url: str) -> list:  # type: ignore[type-arg]
    return [e async for e in c.ls(url)]


def test_ls_and_mirror_of_a_busybox_tree(busybox: Endpoint, tmp_path: Path) -> None:
    base = f"http://{busybox.host}:{busybox.port}"
    ls = anyurl("ls", f"{base}/docs/")
    assert ls.returncode == 0, ls.stderr
    assert "a.txt" in ls.stdout and "deeper" in ls.stdout
    tree = tmp_path / "tree"
    proc = anyurl("mirror", f"{base}/", str(tree))
    assert proc.returncode == 0, proc.stderr
    got = {str(p.relative_to(tree)): p.read_bytes() for p in tree.rglob("*") if p.is_file()}
    assert got == FILES


# -- two Content-Type fields -------------------------------------------------------------------

def _two_types(*values: str) -> Callable[[str], bytes]:
    head = "HTTP/1.1 200 OK\r\n" + "".join(f"Content-Type: {v}\r\n" for v in values)
    head += "Content-Length: 2\r\nConnection: close\r\n\r\n"
    return lambda request: (head if request.startswith("HEAD ") else head + "{}").encode()


@pytest.mark.parametrize(("values", "want", "charset"), [
    (("application/json", "text/x-zoo"), "text/x-zoo", None),
    (("text/html; charset=latin1", "garbage"), "text/html", "latin1"),
    (("text/plain; charset=utf-8", "text/plain"), "text/plain", "utf-8"),  # the same type keeps the charset
    (("text/plain; charset=utf-8", "text/html"), "text/html", None),  # another type drops it
    (("text/csv", "*/*"), "text/csv", None),
])
async def test_two_content_type_fields_give_the_last_valid_one(
        values: tuple[str, ...], want: str, charset: str | None, opts: HTTPOptions) -> None:
    async with FaultServer({"/t": _two_types(*values)}) as srv, Client(http=opts) as c:
        r = await c.fetch(srv.url("/t"))
        st = await c.stat(srv.url("/t"))
    assert (r.content_type, r.charset) == (want, charset)
    assert st.content_type == want

"""Many requests on one kept-alive connection: the quick common case and everything that leaves it.

The lean path lends an idle connection and gives it back without the pool's
general machinery (``Pool.lend_idle``/``Lease.keep_idle``), and ``Body.read``
and ``async for`` take the HTTP body without a wrapper around each piece. Each
test here runs on ONE connection (the server counts them) and checks that a
redirect, an error status, a gzip body, a truncated body and a stale
connection still end as they do on a fresh connection.
"""

from __future__ import annotations

import asyncio
import errno
import gc
import gzip
import os

import pytest
from tests.hostile.fakes.base import AsyncServer

from anyurl import Client, Limits, ResourceNotFound, TruncatedTransfer
from anyurl.net.pool import Pool
from anyurl.response import Body

BODY = b"kept alive\n" * 100


def _reply(status: str, headers: dict[str, str], body: bytes = b"") -> bytes:
    head = f"HTTP/1.1 {status}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
    return head.encode("latin-1") + body


def _chunked(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n0\r\n\r\n" % (len(data), data)


GZ = gzip.compress(BODY, mtime=0)
REPLIES = {
    "/ok": _reply("200 OK", {"Content-Length": str(len(BODY))}, BODY),
    "/gz": _reply("200 OK", {"Transfer-Encoding": "chunked", "Content-Encoding": "gzip",
                             "Content-Type": "text/plain"}, _chunked(GZ)),
    "/redirect": _reply("302 Found", {"Location": "/ok", "Content-Length": "0"}),
    "/missing": _reply("404 Not Found", {"Content-Length": "9"}, b"not here\n"),
    "/empty": _reply("200 OK", {"Content-Length": "0"}),
    "/empty-gz": _reply("200 OK", {"Transfer-Encoding": "chunked", "Content-Encoding": "gzip"}, b"0\r\n\r\n"),
    "/bad-gz": _reply("200 OK", {"Transfer-Encoding": "chunked", "Content-Encoding": "gzip"},
                      _chunked(GZ[:20] + b"garbage that is not deflate")),
}


class KeepAliveServer(AsyncServer):
    """Answers every request of a connection in turn from REPLIES (keeps it open);
    ``/short`` sends a head announcing 100 bytes, 40 of them, and closes;
    ``/close-after`` answers like /ok, then closes without a word (a stale idle connection)."""

    def __init__(self) -> None:
        super().__init__()
        self.paths: list[str] = []

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for _ in range(100):  # bounded: at most 100 requests per connection
            async with asyncio.timeout(10):
                head = await reader.readuntil(b"\r\n\r\n")
            path = head.split(b" ", 2)[1].decode()
            self.paths.append(path)
            if path == "/short":
                writer.write(_reply("200 OK", {"Content-Length": "100"}, b"x" * 40))
                await writer.drain()
                return
            if path == "/close-after":
                writer.write(REPLIES["/ok"])
                await writer.drain()
                return
            writer.write(REPLIES[path])
            await writer.drain()


async def test_one_connection_serves_ok_gzip_redirect_and_404_in_turn() -> None:
    async with KeepAliveServer() as srv, Client() as c:
        for _ in range(3):
            assert (await c.fetch(srv.url("/ok"))).content == BODY
            got = await c.fetch(srv.url("/gz"))
            assert got.content == BODY and got.meta["decoded"] == "gzip"
            redirected = await c.fetch(srv.url("/redirect"))
            assert redirected.content == BODY and redirected.meta["redirects"] == [srv.url("/redirect")]
            with pytest.raises(ResourceNotFound) as info:
                await c.fetch(srv.url("/missing"))
            assert srv.url("/missing") in str(info.value) and "404" in str(info.value)
            async with c.open(srv.url("/gz")) as body:
                pieces = [chunk async for chunk in body]
            assert b"".join(pieces) == BODY and body.bytes_read == len(BODY) and body.complete
    assert srv.connections == 1  # every request above on the one kept-alive connection
    assert srv.paths.count("/ok") == 6 and srv.paths.count("/missing") == 3


async def test_a_truncated_body_on_a_kept_alive_connection_is_an_error() -> None:
    async with KeepAliveServer() as srv, Client() as c:
        assert (await c.fetch(srv.url("/ok"))).content == BODY  # the connection is now idle, reused next
        with pytest.raises(TruncatedTransfer, match="40 of 100 bytes") as info:
            async with c.open(srv.url("/short")) as body:
                await body.read()
        assert srv.url("/short") in str(info.value)
        with pytest.raises(TruncatedTransfer, match="40 of 100 bytes"):
            async with c.open(srv.url("/short")) as body:
                async for _ in body:
                    pass
        assert not body.complete
        assert (await c.fetch(srv.url("/ok"))).content == BODY  # a new connection, not the broken one
    assert srv.connections == 3


async def test_a_stale_kept_alive_connection_is_replaced_once() -> None:
    async with KeepAliveServer() as srv, Client() as c:
        assert (await c.fetch(srv.url("/close-after"))).content == BODY
        await asyncio.sleep(0.05)  # the server's close reaches the idle connection
        assert (await c.fetch(srv.url("/ok"))).content == BODY
    assert srv.connections == 2 and srv.paths == ["/close-after", "/ok"]


async def test_read_max_size_holds_on_the_quick_read() -> None:
    from anyurl import TransferError

    async with KeepAliveServer() as srv, Client() as c:
        with pytest.raises(TransferError, match="max_size=100"):
            async with c.open(srv.url("/gz")) as body:
                await body.read(100)
        assert (await c.fetch(srv.url("/ok"))).content == BODY


async def test_kept_alive_requests_leave_no_cyclic_garbage() -> None:
    # a reader <-> parser or body <-> iterator cycle per response would be freed only by
    # the cyclic GC: a cost on every request of a batch
    async with KeepAliveServer() as srv, Client() as c:
        for _ in range(3):
            await c.fetch(srv.url("/gz"))
        gc.collect()
        gc.disable()
        try:
            before = gc.collect()
            for _ in range(20):
                async with c.open(srv.url("/gz")) as body:
                    assert await body.read() == BODY
                async with c.open(srv.url("/ok")) as body:
                    async for _ in body:
                        pass
            garbage = gc.collect()
        finally:
            gc.enable()
    assert before == 0
    assert garbage < 20  # not one cycle per request (40 requests)


async def test_lend_idle_only_lends_a_clean_fresh_connection_of_the_key() -> None:
    class Conn:
        def __init__(self, key: str) -> None:
            self.key = key
            self.clean = True

        def is_reusable(self) -> bool:
            return self.clean

        async def reset_for(self, target: object) -> bool:
            return True

        async def aclose(self) -> None:
            pass

        def abort(self) -> None:
            pass

    from anyurl.settings import Request
    from anyurl.urls import parse

    pool: Pool[Conn] = Pool("test")
    req = Request(parse("http://h/"), limits=Limits(per_host=2, max_idle=30))
    assert pool.lend_idle(req, "h", 80, "a") is None  # nothing idle

    async def connect() -> Conn:
        return Conn("a")

    lease = await pool.acquire(req, "h", 80, "a", connect)
    conn = lease.conn
    assert lease.keep_idle() and pool.open_count("h", 80) == 1
    assert not lease.keep_idle()  # only once
    assert pool.lend_idle(req, "h", 80, "b") is None  # another key
    again = pool.lend_idle(req, "h", 80, "a")
    assert again is not None and again.conn is conn and again.reused
    conn.clean = False
    assert not again.keep_idle()  # not clean: the caller releases it
    await again.release(False)
    assert pool.open_count("h", 80) == 0
    expired = Request(parse("http://h/"), limits=Limits(per_host=2, max_idle=0.005))
    lease = await pool.acquire(expired, "h", 80, "a", connect)
    assert lease.keep_idle()
    await asyncio.sleep(0.05)
    assert pool.lend_idle(expired, "h", 80, "a") is None  # too old: acquire decides


def test_body_without_bind_body_still_reads_through_chunks() -> None:
    async def go() -> bytes:
        return await Body.from_bytes("x://y", b"abc").read()

    assert asyncio.run(go()) == b"abc"


async def test_empty_and_broken_bodies_on_the_quick_read() -> None:
    from anyurl import ProtocolError

    async with KeepAliveServer() as srv, Client() as c:
        for path in ("/empty", "/empty-gz"):
            async with c.open(srv.url(path)) as body:
                assert await body.read() == b"" and body.complete
        with pytest.raises(ProtocolError, match="bad gzip data") as info:
            async with c.open(srv.url("/bad-gz")) as body:
                await body.read()
        assert srv.url("/bad-gz") in str(info.value) and not body.complete
        assert (await c.fetch(srv.url("/gz"))).content == BODY


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_aclose_closes_every_kept_alive_socket_before_it_returns(loop: str) -> None:
    # the transports close their sockets a loop turn after close(): aclose waits for that, so
    # nothing is left open once it returns (a caller may exit, fork or count fds right after)
    async def go() -> list[int]:
        async with KeepAliveServer() as srv:
            c = Client(limits=Limits(per_host=3))
            got = await asyncio.gather(*(c.fetch(srv.url("/ok")) for _ in range(3)))
            assert [g.content for g in got] == [BODY] * 3
            handler = c.handler(c.parse(srv.url("/ok")))
            pool = handler._h1.pool  # type: ignore[attr-defined]
            conns = [i.conn for h in pool._hosts.values() for i in h.idle]
            fds = [conn.transport.get_extra_info("socket").fileno() for conn in conns]
            assert len(fds) == 3 and all(fd >= 0 for fd in fds)
            await c.aclose()
            # no await between aclose and here: no loop turn
            closed = []
            for fd in fds:
                try:
                    os.fstat(fd)
                except OSError as exc:
                    closed.append(exc.errno)
            assert closed == [errno.EBADF] * 3
            return fds

    if loop == "uvloop":
        import uvloop

        uvloop.run(go())
    else:
        asyncio.run(go())

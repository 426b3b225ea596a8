"""The lean HTTP/1.1 path against servers that misbehave on purpose: every bound holds.

Each test checks that the lean path served the request (its connection log in
``anyurl.http``, which the aiohttp path does not write), the error a user sees,
that it came quickly, and that the server was cut off long before it ran out
of bytes to send.
"""

from __future__ import annotations

import logging
import time

import pytest
from tests.hostile.fakes.http_faults import FaultServer, response
from tests.hostile.fakes.http_streams import StreamServer

from anyurl import Client, FetchTimeout, OverlongTransfer, ProtocolError, Timeouts, TruncatedTransfer
from anyurl.handlers.http import HTTPOptions

MIB = 1 << 20


def lean_used(caplog: pytest.LogCaptureFixture) -> bool:
    return any(r.name == "anyurl.http" and "opened connection" in r.getMessage() for r in caplog.records)


@pytest.fixture(autouse=True)
def _debug(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="anyurl.http")


@pytest.mark.parametrize("first, then, match", [
    (b"HTTP/1.1 200 OK\r\n", b"X-Again: and again\r\n", "more than 256 header fields"),
    (b"HTTP/1.1 200 OK\r\nX-Long: ", b"a" * 4096, "response head longer than"),
    (b"HTTP/1.1 100 Continue\r\n\r\n", b"HTTP/1.1 100 Continue\r\n\r\n", "response head longer than"),
], ids=["endless header fields", "endless header line", "endless 100 Continue"])
async def test_endless_head_is_cut_off(first: bytes, then: bytes, match: str,
                                       caplog: pytest.LogCaptureFixture) -> None:
    async with StreamServer(first, then=then, repeat=(64 * MIB) // len(then)) as srv, Client() as c:
        t0 = time.monotonic()
        with pytest.raises(ProtocolError, match=match) as info:
            await c.fetch(srv.url)
        # generous: on a loaded machine the server's writes alone take seconds; what matters is
        # that the client stopped reading long before the server ran dry (below)
        assert time.monotonic() - t0 < 60
    assert srv.url in str(info.value)
    assert srv.sent < 16 * MIB  # stopped reading long before the server ran dry
    assert lean_used(caplog)


@pytest.mark.parametrize("start", [b"1;", b"10\r\n" + b"x" * 16 + b"\r\n0\r\nX-Trailer: "],
                         ids=["chunk-size line", "trailer"])
async def test_chunk_framing_that_never_ends_is_cut_off(start: bytes, caplog: pytest.LogCaptureFixture) -> None:
    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + start
    async with StreamServer(head, then=b"a" * 4096, repeat=(64 * MIB) // 4096) as srv, Client() as c:
        with pytest.raises(ProtocolError, match="chunked framing"):
            await c.fetch(srv.url)
    assert srv.sent < 16 * MIB
    assert lean_used(caplog)


async def test_body_longer_than_content_length_on_a_kept_alive_connection(caplog: pytest.LogCaptureFixture) -> None:
    # no "Connection: close": the extra bytes would be read as the next response
    long = response("200 OK", {"Content-Length": "10"}, b"0123456789" + b"HTTP/1.1 200 OK\r\n\r\nsmuggled")
    async with FaultServer({"/long": long}) as srv, Client() as c:
        with pytest.raises(OverlongTransfer, match="more than the response announced"):
            await c.fetch(srv.url("/long"))
    assert lean_used(caplog)


async def test_stall_mid_body_hits_the_read_timeout(caplog: pytest.LogCaptureFixture) -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + b"x" * 1000
    async with StreamServer(head, stall=20) as srv, Client(timeouts=Timeouts(read=0.5)) as c:
        got = 0
        t0 = time.monotonic()
        with pytest.raises(FetchTimeout, match="timed out"):
            async with c.open(srv.url) as body:
                async for chunk in body:
                    got += len(chunk)
        took = time.monotonic() - t0
    assert got == 1000 and 0.4 < took < 5
    assert lean_used(caplog)


async def test_stall_mid_body_hits_the_total_deadline(caplog: pytest.LogCaptureFixture) -> None:
    # a trickle that keeps the read timeout happy: only Timeouts.total stops it
    head = b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n"
    async with StreamServer(head, stall=20) as srv, Client(timeouts=Timeouts(read=30, total=1)) as c:
        t0 = time.monotonic()
        with pytest.raises(FetchTimeout):
            await c.fetch(srv.url)
        assert time.monotonic() - t0 < 5
    assert lean_used(caplog)


async def test_server_closing_mid_body_is_truncated(caplog: pytest.LogCaptureFixture) -> None:
    cut = response("200 OK", {"Content-Length": "100"}, b"x" * 40)
    chunked_cut = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n" + b"y" * 8
    async with FaultServer({"/cut": cut, "/chunked": chunked_cut}) as srv, Client() as c:
        with pytest.raises(TruncatedTransfer, match="after 40 of 100 bytes"):
            await c.fetch(srv.url("/cut"))
        with pytest.raises(TruncatedTransfer, match="after 8 bytes"):
            await c.fetch(srv.url("/chunked"))
    assert lean_used(caplog)


async def test_a_connection_the_server_closed_while_idle_is_replaced() -> None:
    # FaultServer closes every connection after its reply, without saying so: the idle
    # connection the pool kept is dead, and the next request must still succeed
    ok = response("200 OK", {"Content-Length": "2"}, b"ok")
    async with FaultServer({"/a": ok}) as srv, Client() as c:
        for _ in range(5):
            assert (await c.fetch(srv.url("/a"))).content == b"ok"
    assert len(srv.requests) == 5


async def test_aiohttp_path_gives_the_same_errors() -> None:
    # the same faults through HTTPOptions(lean=False): one behaviour, two engines
    head = b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + b"x" * 1000
    async with StreamServer(head, stall=20) as srv, \
            Client(timeouts=Timeouts(read=0.5), http=HTTPOptions(lean=False)) as c:
        with pytest.raises(FetchTimeout):
            await c.fetch(srv.url)
    long = response("200 OK", {"Content-Length": "10", "Connection": "close"}, b"0123456789ABCDEFGHIJ")
    async with FaultServer({"/long": long}) as srv, Client(http=HTTPOptions(lean=False)) as c:
        with pytest.raises(OverlongTransfer, match="more than the response announced"):
            await c.fetch(srv.url("/long"))


async def test_failed_bodies_leave_the_stream_count_as_it_was() -> None:
    # the count shares the receive-size budget out among running streams: a failed body
    # that stayed counted would shrink every later stream's reads in this process
    from anyurl.handlers import http1

    before = http1._streams
    cut = response("200 OK", {"Content-Length": "100"}, b"x" * 40)
    head = b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + b"x" * 1000
    async with FaultServer({"/cut": cut}) as srv, Client() as c:
        with pytest.raises(TruncatedTransfer):
            async with c.open(srv.url("/cut")) as body:
                async for _ in body:
                    assert http1._streams == before + 1
    assert http1._streams == before
    async with StreamServer(head, stall=20) as srv, Client(timeouts=Timeouts(read=0.3)) as c:
        with pytest.raises(FetchTimeout):
            async with c.open(srv.url) as body:
                async for _ in body:
                    pass
    assert http1._streams == before

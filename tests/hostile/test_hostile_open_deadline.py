"""``Timeouts.total`` bounds ``Client.open`` from the start, not only once the body streams.

A server that trickles its reply head (one byte every 0.2 s keeps any read timeout
happy) or sends nothing at all held ``open()`` until the head was whole or the read
timeout struck, while ``fetch`` stopped at ``total``. Checked on both HTTP paths and on
gopher (the deadline is the client's, so it holds for every scheme).
"""

from __future__ import annotations

import asyncio
import time

import pytest
from tests.hostile.fakes.base import AsyncServer
from tests.hostile.fakes.gopher_hostile import Reply, hostile_gopher

from anyurl import Client, FetchTimeout, Timeouts
from anyurl.handlers.http import HTTPOptions

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Padding: " + b"p" * 200 + b"\r\nContent-Length: 2\r\n\r\nok"


class Stalling(AsyncServer):
    """Reads the request, sends *first* at once, then *trickle* one byte every *gap* seconds,
    then nothing more until the client goes."""

    def __init__(self, first: bytes = b"", trickle: bytes = b"", gap: float = 0.0) -> None:
        super().__init__()
        self.first, self.trickle, self.gap = first, trickle, gap

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(self.first)
        await writer.drain()
        for i in range(len(self.trickle)):
            writer.write(self.trickle[i:i + 1])
            await writer.drain()
            await asyncio.sleep(self.gap)
        await reader.read()  # until the client goes


TOTAL = r"total timeout 1\.5 s"  # the one wording when Timeouts.total ends the request


@pytest.mark.parametrize("lean", [True, False])
async def test_open_of_a_trickled_http_head_ends_at_total(lean: bool) -> None:
    async with Stalling(trickle=HEAD, gap=0.2) as srv, \
            Client(timeouts=Timeouts(read=30, total=1.5), http=HTTPOptions(lean=lean)) as c:
        t0 = time.monotonic()
        with pytest.raises(FetchTimeout, match=TOTAL) as info:
            async with c.open(f"http://127.0.0.1:{srv.port}/slow"):
                pass
        took = time.monotonic() - t0
    # the whole head would take ~45 s; the read timeout (30 s) never strikes
    assert 1.4 < took < 10, took
    assert info.value.url == f"http://127.0.0.1:{srv.port}/slow"


# The handler's own read wait, cut to what is left of Timeouts.total, ends at the deadline
# with the handler's words ("timed out while requesting ...") before the client's guard: the
# total is what struck, and the error says so (a busy machine made the trickle above do this).
@pytest.mark.parametrize("lean", [True, False])
async def test_a_read_wait_cut_by_the_total_says_total(lean: bool) -> None:
    async with Stalling() as srv, \
            Client(timeouts=Timeouts(read=30, total=1.5), http=HTTPOptions(lean=lean)) as c:
        url = f"http://127.0.0.1:{srv.port}/quiet"
        t0 = time.monotonic()
        with pytest.raises(FetchTimeout, match=TOTAL) as info:
            async with c.open(url):
                pass
        assert 1.4 < time.monotonic() - t0 < 10
        assert info.value.url == url and str(info.value).startswith(f"{url}: ")
        with pytest.raises(FetchTimeout, match=TOTAL) as info:
            await c.fetch(url)
        assert info.value.url == url


@pytest.mark.parametrize("lean", [True, False])
async def test_a_body_stalled_until_the_total_says_total(lean: bool) -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n0123456789"
    async with Stalling(head) as srv, \
            Client(timeouts=Timeouts(read=30, total=1.5), http=HTTPOptions(lean=lean)) as c:
        url = f"http://127.0.0.1:{srv.port}/stalls"
        with pytest.raises(FetchTimeout, match=TOTAL) as info:
            async with c.open(url) as body:
                async for _ in body:
                    pass
        assert info.value.url == url
        with pytest.raises(FetchTimeout, match=TOTAL) as info:
            await c.fetch(url)
        assert info.value.url == url


async def test_open_of_a_silent_gopher_item_ends_at_total() -> None:
    with hostile_gopher({"/quiet": Reply(silent=True)}) as g:
        async with Client(timeouts=Timeouts(read=30, total=1.5)) as c:
            t0 = time.monotonic()
            with pytest.raises(FetchTimeout, match="total timeout"):
                async with c.open(f"gopher://127.0.0.1:{g.port}/0/quiet"):
                    pass
            took = time.monotonic() - t0
    assert 1.4 < took < 10, took

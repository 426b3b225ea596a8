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


class TrickleHead(AsyncServer):
    """Reads the request, then sends the reply one byte every *gap* seconds."""

    def __init__(self, gap: float) -> None:
        super().__init__()
        self.gap = gap

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        for i in range(len(HEAD)):
            writer.write(HEAD[i:i + 1])
            await writer.drain()
            await asyncio.sleep(self.gap)


@pytest.mark.parametrize("lean", [True, False])
async def test_open_of_a_trickled_http_head_ends_at_total(lean: bool) -> None:
    async with TrickleHead(0.2) as srv, \
            Client(timeouts=Timeouts(read=30, total=1.5), http=HTTPOptions(lean=lean)) as c:
        t0 = time.monotonic()
        # The client's guard names the total. The handler's idle read wait, bounded by the
        # deadline when the request starts, strikes first (in its own words) when a busy machine
        # held the trickle back that long: either way open() ends at the total, as `took` shows.
        words = r"total timeout 1\.5 s|timed out while (requesting|waiting for the response)"
        with pytest.raises(FetchTimeout, match=words) as info:
            async with c.open(f"http://127.0.0.1:{srv.port}/slow"):
                pass
        took = time.monotonic() - t0
    # the whole head would take ~45 s; the read timeout (30 s) never strikes
    assert 1.4 < took < 10, took
    assert info.value.url == f"http://127.0.0.1:{srv.port}/slow"


async def test_open_of_a_silent_gopher_item_ends_at_total() -> None:
    with hostile_gopher({"/quiet": Reply(silent=True)}) as g:
        async with Client(timeouts=Timeouts(read=30, total=1.5)) as c:
            t0 = time.monotonic()
            with pytest.raises(FetchTimeout, match="total timeout"):
                async with c.open(f"gopher://127.0.0.1:{g.port}/0/quiet"):
                    pass
            took = time.monotonic() - t0
    assert 1.4 < took < 10, took

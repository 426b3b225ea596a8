"""anyurl.handlers.news: a pooled connection that received bytes while idle is not reused,
found without StreamReader's private buffer (bytes_waiting)."""

from __future__ import annotations

import asyncio
import socket

from anyurl.handlers.news_conn import bytes_waiting


async def _soon(reader: asyncio.StreamReader) -> bool:
    """bytes_waiting within 10 s (what the peer sent takes a loop turn or a few to arrive)."""
    for _ in range(1000):
        if bytes_waiting(reader):
            return True
        await asyncio.sleep(0.01)
    return False


async def test_bytes_waiting_sees_data_and_eof_and_leaves_an_idle_reader_usable() -> None:
    ours, theirs = socket.socketpair()
    reader, writer = await asyncio.open_connection(sock=ours)
    try:
        assert not bytes_waiting(reader)
        assert not bytes_waiting(reader)  # twice: the stopped read left no waiter behind
        theirs.sendall(b"220 unasked\r\n")
        assert await _soon(reader)
        # the reader still works after a check that found nothing
        theirs.sendall(b"more")
        async with asyncio.timeout(10):
            assert (await reader.readuntil(b"more")).endswith(b"more")
        assert not bytes_waiting(reader)
        theirs.close()
        assert await _soon(reader)  # EOF counts: the connection is over
    finally:
        theirs.close()
        writer.close()

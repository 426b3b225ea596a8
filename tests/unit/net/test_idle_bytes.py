"""anyurl.net.pingpong.bytes_waiting (FTP's and NNTP's idle check): an idle connection is stale when the server sent
anything unasked, closed it, or its reader holds an error; asked through StreamReader's public
read (issue 23: no private API of a dependency), leaving a quiet reader usable."""

from __future__ import annotations

import asyncio

from anyurl.net.pingpong import bytes_waiting


async def test_quiet_reader_is_not_stale_and_stays_usable() -> None:
    reader = asyncio.StreamReader()
    assert not bytes_waiting(reader)
    assert not bytes_waiting(reader)  # asking twice leaves no waiter behind
    reader.feed_data(b"226 done\r\n")
    assert await asyncio.wait_for(reader.readuntil(b"\n"), 1) == b"226 done\r\n"


async def test_unasked_bytes_eof_or_error_make_it_stale() -> None:
    unasked = asyncio.StreamReader()
    unasked.feed_data(b"421 Timeout.\r\n")
    assert bytes_waiting(unasked)
    closed = asyncio.StreamReader()
    closed.feed_eof()
    assert bytes_waiting(closed)
    failed = asyncio.StreamReader()
    failed.set_exception(ConnectionResetError())
    assert bytes_waiting(failed)
    late = asyncio.StreamReader()
    late.set_exception(TimeoutError())  # the read watchdog's mark
    assert bytes_waiting(late)

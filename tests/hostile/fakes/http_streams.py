"""An HTTP server that streams a scripted reply without end (or stalls): faults nginx never makes.

``async with StreamServer(first, then=b"...", repeat=N, stall=S) as srv:`` answers
every connection with *first*, then *then* up to *repeat* times (stopping as soon
as the client goes away, or once *limit* bytes were sent), then stays silent for
*stall* seconds before closing. *then* may be a function of the piece's number.
``srv.url`` is the URL to ask, ``srv.sent`` counts the bytes written,
``srv.connections`` the connections accepted. Every write has a deadline
(``write_timeout``: a client that stops reading ends the stream); every loop is
bounded by *repeat* and *limit* (see :class:`tests.hostile.fakes.base.AsyncServer`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from tests.hostile.fakes.base import AsyncServer

Piece = bytes | Callable[[int], bytes]


class StreamServer(AsyncServer):
    def __init__(self, first: bytes, *, then: Piece = b"", repeat: int = 0, stall: float = 0.0,
                 limit: int | None = None, path: str = "/x", write_timeout: float = 10.0,
                 settle: float = 0.0) -> None:
        super().__init__(settle=settle)
        self.first = first
        self.then = then
        self.repeat = repeat
        self.stall = stall
        self.limit = limit
        self.path = path
        self.write_timeout = write_timeout
        self.sent = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.path}"

    async def _write(self, writer: asyncio.StreamWriter, data: bytes) -> None:
        writer.write(data)
        self.sent += len(data)
        async with asyncio.timeout(self.write_timeout):
            await writer.drain()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        async with asyncio.timeout(10):
            await reader.readuntil(b"\r\n\r\n")
        await self._write(writer, self.first)
        for n in range(self.repeat):
            if self.limit is not None and self.sent >= self.limit:
                break
            await self._write(writer, self.then(n) if callable(self.then) else self.then)
        if self.stall:
            await asyncio.sleep(self.stall)

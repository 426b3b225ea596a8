"""An HTTP server whose page never ends: a head, then the same piece again and again.

``async with EndlessPage(b"<a href=\\"", b"A" * 65536) as srv:`` serves
``srv.url`` as text/html without a length, writing *piece* until the client
goes away or ``limit`` bytes were sent; ``srv.sent`` counts the body bytes the
client took. Every wait has a deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from types import TracebackType


class EndlessPage:
    def __init__(self, head: bytes, piece: bytes | Callable[[int], bytes], *, limit: int = 1 << 30) -> None:
        self.head = head
        self.piece = piece
        self.limit = limit
        self.sent = 0
        self.done = asyncio.Event()
        self.connected = False
        self.port = 0
        self._server: asyncio.Server | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/page.html"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connected = True
        try:
            async with asyncio.timeout(10):
                await reader.readuntil(b"\r\n\r\n")
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n" + self.head)
            n = 0
            while self.sent < self.limit:
                piece = self.piece(n) if callable(self.piece) else self.piece
                n += 1
                writer.write(piece)
                async with asyncio.timeout(10):  # a client that stops reading ends the page
                    await writer.drain()
                self.sent += len(piece)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, OSError):
            pass
        finally:
            self.done.set()
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    async def __aenter__(self) -> EndlessPage:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()
        if self.connected:  # the page's writer ends once the client is gone (bounded by its own timeouts)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(15):
                    await self.done.wait()

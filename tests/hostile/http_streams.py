"""An HTTP server that streams a scripted reply without end (or stalls): faults nginx never makes.

``async with StreamServer(first, then=b"...", repeat=N, stall=S) as srv:`` answers
every connection with *first*, then *then* up to *repeat* times (stopping as soon
as the client goes away), then stays silent for *stall* seconds before closing.
``srv.sent`` counts the bytes written, ``srv.connections`` the connections
accepted. Every write has a deadline; every loop is bounded by *repeat*.
"""

from __future__ import annotations

import asyncio
import contextlib
from types import TracebackType


class StreamServer:
    def __init__(self, first: bytes, *, then: bytes = b"", repeat: int = 0, stall: float = 0.0) -> None:
        self.first = first
        self.then = then
        self.repeat = repeat
        self.stall = stall
        self.sent = 0
        self.connections = 0
        self.port = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def url(self, path: str = "/x") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.connections += 1
        try:
            async with asyncio.timeout(30):
                await reader.readuntil(b"\r\n\r\n")
                writer.write(self.first)
                self.sent += len(self.first)
                await writer.drain()
                for _ in range(self.repeat):
                    writer.write(self.then)
                    self.sent += len(self.then)
                    await writer.drain()
                if self.stall:
                    await asyncio.sleep(self.stall)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, ConnectionError,
                asyncio.CancelledError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError, asyncio.CancelledError):
                await writer.wait_closed()
            self._tasks.discard(task)

    async def __aenter__(self) -> StreamServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        assert self._server is not None
        self._server.close()
        for t in list(self._tasks):
            t.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

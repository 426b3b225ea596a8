"""A tap between a command under test and a real server: it forwards every byte both ways (it
is not a server), holding what the server sends for a while (a round trip, so that what the
client sends before an answer does not depend on the machine's speed), and keeps each side's
lines in the order they passed."""

from __future__ import annotations

import asyncio
import contextlib


class Tap:
    """Forwards connections to *target*, holding what the server sends for *delay* seconds (a
    round trip, so that what the client sends before an answer does not depend on the machine's
    speed); ``events`` is ("send"|"recv", line): sent as the tap reads it, received as it
    hands it on."""

    def __init__(self, target: tuple[str, int], delay: float) -> None:
        self.target = target
        self.delay = delay
        self.events: list[tuple[str, bytes]] = []
        self.connections = 0
        self.handlers: set[asyncio.Task[None]] = set()
        self.server: asyncio.Server | None = None
        self.tasks: set[asyncio.Future[None]] = set()

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return int(self.server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        assert self.server is not None
        self.server.close()
        for t in self.tasks:
            t.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        # each connection's writers closed
        await asyncio.wait_for(asyncio.gather(*self.handlers, return_exceptions=True), 30)
        await self.server.wait_closed()

    def _record(self, direction: str, buf: bytearray, data: bytes) -> None:
        buf += data
        while (end := buf.find(b"\n")) >= 0:
            self.events.append((direction, bytes(buf[: end + 1])))
            del buf[: end + 1]

    async def _serve(self, cr: asyncio.StreamReader, cw: asyncio.StreamWriter) -> None:
        self.connections += 1
        me = asyncio.current_task()
        assert me is not None
        self.handlers.add(me)
        await self._forward(cr, cw)

    async def _forward(self, cr: asyncio.StreamReader, cw: asyncio.StreamWriter) -> None:
        sr, sw = await asyncio.open_connection(*self.target)
        loop = asyncio.get_running_loop()
        late: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def upstream() -> None:
            buf = bytearray()
            while data := await cr.read(65536):
                self._record("send", buf, data)
                sw.write(data)
            sw.close()

        async def downstream_read() -> None:
            while data := await sr.read(65536):
                late.put_nowait((loop.time() + self.delay, data))
            late.put_nowait((loop.time() + self.delay, b""))

        async def downstream_write() -> None:
            buf = bytearray()
            while True:
                due, data = await late.get()
                await asyncio.sleep(max(0.0, due - loop.time()))
                if not data:
                    break
                self._record("recv", buf, data)
                cw.write(data)
            cw.close()

        jobs = [asyncio.ensure_future(j()) for j in (upstream, downstream_read, downstream_write)]
        self.tasks.update(jobs)
        try:
            await asyncio.gather(*jobs, return_exceptions=True)
        finally:
            for w in (cw, sw):
                w.close()
                with contextlib.suppress(Exception):
                    await w.wait_closed()

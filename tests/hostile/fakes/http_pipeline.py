"""An HTTP/1.1 server that takes pipelined requests, and breaks a pipeline on purpose.

``async with PipelineServer(fault) as srv:`` listens on a free loopback port and answers
every GET in order on a kept-alive connection with :func:`body_of` its path (framed by
Content-Length). Before each answer it waits a moment, so that requests sent behind
others are already there; ``srv.depths`` holds, per connection, the most requests it
held unanswered at once (above 1: the client pipelined), and ``srv.bursts``, per
connection, how many requests each of its reads brought (a read and what came within
the pause after it).

Faults, on the first connection that pipelines (the first to hold two requests at once;
later connections are served well, so that a retry succeeds):

* ``"close"``: answers one request, then closes with the others unanswered (no
  ``Connection: close``: the close is a surprise);
* ``"drop"``: answers the first of the requests it holds and forgets the others (a server
  that reads one request per packet), keeping the connection open;
* ``"garbage"``: answers the first, then sends bytes that are no HTTP response (a
  desync: what a server that lost track of the framing sends).

Every read has a deadline and a size limit (see :class:`tests.hostile.fakes.base.AsyncServer`).
"""

from __future__ import annotations

import asyncio

from tests.hostile.fakes.base import AsyncServer

__all__ = ["PipelineServer", "body_of"]


def body_of(path: str) -> bytes:
    """The body served for *path* (distinct per path, a few KiB; 300 KiB for a path starting
    with /big: longer than anyurl pipelines behind)."""
    if path.startswith("/big"):
        return (f"{path} ".encode() * (300 << 10))[: 300 << 10]
    return (f"{path} ".encode() * 400)[: 1000 + 37 * len(path)]


def _answer(path: str) -> bytes:
    body = body_of(path)
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nContent-Type: application/octet-stream\r\n\r\n%s" % (
        len(body), body)


async def _arrived(reader: asyncio.StreamReader) -> bytes:
    """What has arrived already, without waiting (b"" when nothing has)."""
    try:
        async with asyncio.timeout(0):
            return await reader.read(1 << 16)
    except TimeoutError:
        return b""


class PipelineServer(AsyncServer):
    def __init__(self, fault: str | None = None, *, pause: float = 0.05) -> None:
        super().__init__()
        self.fault = fault
        self.pause = pause
        self.depths: list[int] = []  # per connection, in order of arrival
        self.bursts: list[list[int]] = []  # per connection: the requests each read brought
        self.paths: list[str] = []
        self.faulted = False

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        index = len(self.depths)
        self.depths.append(0)
        self.bursts.append([])
        buf = b""
        while True:
            async with asyncio.timeout(10):
                data = await reader.read(1 << 16)
            if not data:
                return
            buf += data
            if len(buf) > 1 << 20:
                return  # no client sends that much head
            await asyncio.sleep(self.pause)  # let requests sent behind this one arrive
            buf += await _arrived(reader)
            heads = buf.split(b"\r\n\r\n")
            buf = heads.pop()
            paths = [h.split(b" ")[1].decode() for h in heads]
            self.depths[index] = max(self.depths[index], len(paths))
            self.bursts[index].append(len(paths))
            fault = self.fault if not self.faulted and len(paths) > 1 else None
            if fault is not None:
                self.faulted = True
            for n, path in enumerate(paths):
                if fault is not None and n == 1:
                    if fault == "close":
                        return
                    if fault == "drop":
                        break
                    if fault == "garbage":
                        writer.write(b"this is not an HTTP response\r\n\r\n")
                        await writer.drain()
                        break
                self.paths.append(path)
                writer.write(_answer(path))
            await writer.drain()

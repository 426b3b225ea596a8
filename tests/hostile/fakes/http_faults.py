"""An HTTP server that answers with exactly the bytes a test scripts: faults nginx never makes.

``async with FaultServer({"/path": reply}) as srv:`` listens on a free loopback
port; ``reply`` is the raw response (status line, headers, body) and the
connection closes after it. ``srv.requests`` holds each request's head as text
(request line and headers), in order, so a test can check what was sent.
Every read has a deadline and a size limit (see :class:`tests.hostile.fakes.base.AsyncServer`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping

from tests.hostile.fakes.base import AsyncServer

Reply = bytes | Callable[[str], bytes]


def response(status: str, headers: Mapping[str, str], body: bytes = b"") -> bytes:
    """Raw response bytes: ``status`` like "206 Partial Content", headers as given, then *body*."""
    head = f"HTTP/1.1 {status}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
    return head.encode("latin-1") + body


class FaultServer(AsyncServer):
    """Serves scripted replies by path; 404 for anything else."""

    def __init__(self, replies: Mapping[str, Reply]) -> None:
        super().__init__()
        self.replies = dict(replies)
        self.requests: list[str] = []

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def headers_of(self, index: int) -> dict[str, str]:
        """The headers of request number *index* (lower-case names)."""
        lines = self.requests[index].split("\r\n")[1:]
        return {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines if line)}

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        async with asyncio.timeout(10):
            head = await reader.readuntil(b"\r\n\r\n")
        text = head.decode("latin-1").rstrip("\r\n")
        self.requests.append(text)
        path = text.split(" ")[1] if text.count(" ") >= 2 else "/"
        reply = self.replies.get(path)
        if callable(reply):
            reply = reply(text)
        if reply is None:
            reply = response("404 Not Found", {"Content-Length": "0", "Connection": "close"})
        writer.write(reply)
        await writer.drain()

"""TEST DOUBLE: an HTTP proxy that reads a request and never answers it.

``async with MuteProxy() as proxy:`` listens on a free loopback port; each connection's
first request head (a ``CONNECT host:port``, or a ``GET`` in absolute form) is read and
kept in ``proxy.heads``, then nothing is sent until the client leaves. A real proxy
answers or closes; a stuck one (an overloaded squid, a firewall that swallows the
CONNECT) does this. See :class:`tests.hostile.fakes.base.AsyncServer`.
"""

from __future__ import annotations

import asyncio

from tests.hostile.fakes.base import AsyncServer


class MuteProxy(AsyncServer):
    def __init__(self) -> None:
        super().__init__()
        self.heads: list[bytes] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.heads.append(await reader.readuntil(b"\r\n\r\n"))
        await reader.read()  # until the client closes (or the deadline)

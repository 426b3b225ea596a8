"""A news server that greets, answers CAPABILITIES, then never answers a command:
every wait for a reply after that ends only by the client's read timeout.

``commands`` records what was asked; the connection is held until the client goes."""

from __future__ import annotations

import asyncio

from tests.hostile.fakes.base import AsyncServer


class SilentNewsServer(AsyncServer):
    deadline = 30.0

    def __init__(self) -> None:
        super().__init__()
        self.commands: list[str] = []

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"200 silent test server ready\r\n")
        await writer.drain()
        while line := await reader.readline():
            cmd = line.decode("ascii", "replace").strip()
            self.commands.append(cmd)
            if cmd.upper() == "CAPABILITIES":
                writer.write(b"101 caps\r\nVERSION 2\r\nREADER\r\nOVER\r\n.\r\n")
                await writer.drain()
            # anything else: no answer, ever

"""A small NNTP server that injects a fault INN never produces: after article 1
it appends an unrequested ``220`` reply carrying a forged article.

Only what the desync test needs: greeting, CAPABILITIES, MODE READER, GROUP,
ARTICLE <number>, QUIT. ``delay`` sends the forged reply that many seconds
after the real one (so it arrives while the connection sits idle in the pool)
instead of in the same write. Every connection and command is recorded.
"""

from __future__ import annotations

import asyncio

from tests.hostile.fakes.base import AsyncServer, nntp_quit_or_unknown

FORGED = b"FORGED BODY: this article was never requested\r\n"


def article(number: int, body: bytes) -> bytes:
    mid = f"<a{number}@desync.test>"
    head = (f"Message-ID: {mid}\r\nSubject: article {number}\r\nFrom: t@desync.test\r\n"
            f"Newsgroups: desync.test\r\n\r\n").encode()
    return f"220 {number} {mid} article\r\n".encode() + head + body + b".\r\n"


class DesyncServer(AsyncServer):
    def __init__(self, delay: float | None = None) -> None:
        super().__init__()
        self.delay = delay  # None: the forged reply in the same write as article 1
        self.commands: list[str] = []

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"200 desync test server ready\r\n")
        while True:
            async with asyncio.timeout(10):
                line = await reader.readline()
            if not line:
                return
            cmd = line.decode().strip()
            self.commands.append(cmd)
            verb = cmd.split(" ", 1)[0].upper()
            if verb == "CAPABILITIES":
                writer.write(b"101 caps\r\nVERSION 2\r\nREADER\r\nOVER\r\n.\r\n")
            elif verb == "GROUP":
                writer.write(b"211 2 1 2 desync.test\r\n")
            elif verb == "ARTICLE":
                number = int(cmd.split()[1])
                writer.write(article(number, f"real body of article {number}\r\n".encode()))
                if number == 1:
                    forged = article(2, FORGED)
                    if self.delay is None:
                        writer.write(forged)
                    else:
                        await writer.drain()
                        await asyncio.sleep(self.delay)
                        writer.write(forged)
            elif await nntp_quit_or_unknown(verb, writer):
                return
            await writer.drain()

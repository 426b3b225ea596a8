"""An NNTP server that breaks a pipelined window, in ways INN never does.

On its first connection only (later connections answer correctly, so the client's
retries can succeed):

* ``"skip"``: the reply to ``ARTICLE 3`` is article 4 (a desync in the middle of a window);
* ``"close"``: after answering ``ARTICLE 3`` it closes the connection, with the
  commands after it unanswered;
* ``"extra"``: after article 2 it sends an unrequested ``220`` for article 9.

With ``"big"``, article 1 is 2 MiB on every connection (longer than a window reads ahead).

It records every command per connection, and how many commands it had received
on a connection before it wrote its first article (so a test sees the pipelining).
"""

from __future__ import annotations

import asyncio

from tests.hostile.fakes.base import AsyncServer, nntp_quit_or_unknown

GROUP = "pipe.test"
COUNT = 12
BIG = b"x" * 1022 + b"\r\n"
BIG *= 2048


def article(number: int, body: bytes | None = None) -> bytes:
    mid = f"<p{number}@pipe.test>"
    head = (f"Message-ID: {mid}\r\nSubject: article {number}\r\nFrom: t@pipe.test\r\n"
            f"Newsgroups: {GROUP}\r\n\r\n").encode()
    body = body if body is not None else f"real body of article {number}\r\n".encode()
    return f"220 {number} {mid} article\r\n".encode() + head + body + b".\r\n"


class PipelineFaultServer(AsyncServer):
    def __init__(self, fault: str) -> None:
        super().__init__()
        self.fault = fault
        self.sessions: list[list[str]] = []
        self.ahead: list[int] = []  # per connection: commands read before the first article was written

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        commands: list[str] = []
        self.sessions.append(commands)
        first = len(self.sessions) == 1
        writer.write(b"200 pipeline fault server ready\r\n")
        await writer.drain()
        lines: asyncio.Queue[str] = asyncio.Queue()

        async def read() -> None:  # reads ahead, so the commands a client pipelined are counted
            while True:
                line = await reader.readline()
                if not line:
                    await lines.put("")
                    return
                commands.append(line.decode().strip())
                await lines.put(commands[-1])

        reading = asyncio.create_task(read())
        try:
            wrote_article = False
            while True:
                async with asyncio.timeout(10):
                    cmd = await lines.get()
                if not cmd:
                    return
                verb = cmd.split(" ", 1)[0].upper()
                if verb == "CAPABILITIES":
                    writer.write(b"101 caps\r\nVERSION 2\r\nREADER\r\nOVER\r\n.\r\n")
                elif verb == "GROUP":
                    writer.write(f"211 {COUNT} 1 {COUNT} {GROUP}\r\n".encode())
                elif verb == "ARTICLE":
                    number = int(cmd.split()[1])
                    if not wrote_article:
                        await asyncio.sleep(0.05)  # the client's pipelined commands arrive
                        self.ahead.append(len(commands))
                        wrote_article = True
                    if self.fault == "big" and number == 1:
                        writer.write(article(1, BIG))
                    elif first and self.fault == "skip" and number == 3:
                        writer.write(article(4))
                    else:
                        writer.write(article(number))
                    if first and self.fault == "close" and number == 3:
                        await writer.drain()
                        return
                    if first and self.fault == "extra" and number == 2:
                        writer.write(article(9, b"FORGED\r\n"))
                elif await nntp_quit_or_unknown(verb, writer):
                    return
                await writer.drain()
        finally:
            reading.cancel()

"""A gopher server that misbehaves per selector, each connection in its own thread.

Real servers send what their files hold; these faults they never produce on cue:
a reply only after a delay, no reply at all (a silent connection), a close with
nothing sent, a reset, and display strings carrying terminal escape sequences.
"""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from tests.hostile.fakes.base import ThreadServer


@dataclass(frozen=True)
class Reply:
    """What one selector gets: *data* after *delay* seconds, then the close.

    ``silent``: nothing at all, the connection held open until the server stops.
    ``reset``: after the delay, an RST instead of a close (no data).
    """

    data: bytes = b""
    delay: float = 0.0
    silent: bool = False
    reset: bool = False


class HostileGopher(ThreadServer):
    """Answers each selector from *replies* (``{port}`` in data is this server's port)."""

    concurrent = True  # a slow item never holds up the others

    def __init__(self, replies: dict[str, Reply], plus_replies: dict[str, Reply] | None = None) -> None:
        super().__init__()
        self.replies = replies
        self.plus_replies = plus_replies or {}  # what a Gopher+ request ("\t+") gets instead
        self.log: list[str] = []
        self._tcp_listener()

    def answer(self, conn: socket.socket) -> None:
        try:
            line = self.read_until(conn, b"\n", 4096)
        except OSError:
            conn.close()
            return
        fields = line.rstrip(b"\r\n").split(b"\t")
        selector = fields[0].decode()
        self.log.append(selector)
        reply = self.replies.get(selector, Reply(b"3not here\t\terror.host\t1\r\n.\r\n"))
        if len(fields) > 2 and fields[2].startswith(b"+"):
            reply = self.plus_replies.get(selector, reply)
        if reply.silent:
            self.held.append(conn)
            return
        end = time.monotonic() + reply.delay
        while self.running() and time.monotonic() < end:
            time.sleep(0.02)
        try:
            if reply.reset:
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            elif reply.data:
                conn.sendall(reply.data.replace(b"{port}", str(self.port).encode()))
        except OSError:
            pass
        finally:
            conn.close()


@contextmanager
def hostile_gopher(replies: dict[str, Reply],
                   plus_replies: dict[str, Reply] | None = None) -> Iterator[HostileGopher]:
    """Run a :class:`HostileGopher` for the duration of a ``with`` block."""
    with HostileGopher(replies, plus_replies) as server:
        yield server

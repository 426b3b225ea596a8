"""A gopher server that sends one reply in timed pieces, then closes, stalls or resets.

Real servers send a whole item and close at once; a test of the bulk reader
needs the data to arrive over time while the download writes it out, and then
an early close on an item with an announced size, a stall with the connection
open, or a reset. Each step is ``(data, pause_s)``; *end* is "close", "stall"
(held open until exit) or "reset" (an RST: SO_LINGER 0).
"""

from __future__ import annotations

import socket
import struct
import time

from tests.hostile.fakes.base import ThreadServer


class GopherBulk(ThreadServer):
    """Answers every request with *steps*, then ends the connection as *end* says."""

    def __init__(self, steps: list[tuple[bytes, float]], end: str = "close") -> None:
        super().__init__(max_seconds=30.0)
        self.steps = steps
        self.end = end
        self.requests: list[bytes] = []
        self._tcp_listener()

    def answer(self, conn: socket.socket) -> None:
        self._spawn(self._serve, conn)

    def _serve(self, conn: socket.socket) -> None:
        try:
            self.requests.append(self.read_until(conn, b"\n", 4096))
            for data, pause in self.steps:
                conn.sendall(data)
                deadline = time.monotonic() + pause
                while self.running() and time.monotonic() < deadline:
                    time.sleep(0.01)
        except OSError:
            conn.close()
            return
        if self.end == "stall":
            self.held.append(conn)  # closed at exit
            return
        if self.end == "reset":
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        conn.close()

"""A fault-injecting HTTP/1.1 server: answers 503 (with Retry-After) to the first N requests.

No real server fails on purpose a set number of times; this one lets a test
check retries. Runs in a thread on a loopback port; every request is logged.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager

from tests.hostile.fakes.base import ThreadServer


class FlakyHTTP(ThreadServer):
    def __init__(self, body: bytes, failures: int, retry_after: str | None = "0") -> None:
        super().__init__()
        self.body = body
        self.failures = failures
        self.retry_after = retry_after
        self.log: list[str] = []
        self._tcp_listener()

    def answer(self, conn: socket.socket) -> None:
        with conn:
            data = self.read_until(conn, b"\r\n\r\n", 65536)
            line = data.split(b"\r\n", 1)[0].decode("latin-1")
            self.log.append(line)
            if len(self.log) <= self.failures:
                extra = f"Retry-After: {self.retry_after}\r\n" if self.retry_after is not None else ""
                conn.sendall(f"HTTP/1.1 503 Busy\r\n{extra}Content-Length: 0\r\n"
                             "Connection: close\r\n\r\n".encode())
            else:
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                             + f"Content-Length: {len(self.body)}\r\nConnection: close\r\n\r\n".encode()
                             + self.body)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/thing.bin"


@contextmanager
def flaky_http(body: bytes, failures: int, retry_after: str | None = "0") -> Iterator[FlakyHTTP]:
    with FlakyHTTP(body, failures, retry_after) as srv:
        yield srv

"""TEST DOUBLE: an HTTPS server (HTTP/1.1) that breaks its TLS stream in the middle of a body.

``TLSBreak(cert, key, how)`` answers each request with a head announcing 100,000 bytes and
sends 1,000 of them through TLS, then, by *how*: ``"garbage"`` writes bytes that are no TLS
record straight onto the socket; ``"fin"`` closes the TCP connection without close_notify;
``"close_notify"`` ends the TLS stream properly (still short of the announced length).
Runs in a thread of the test process (:class:`tests.hostile.fakes.base.ThreadServer`).
"""

from __future__ import annotations

import os
import socket
import ssl
from pathlib import Path

from tests.hostile.fakes.base import ThreadServer

HEAD = b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\nContent-Type: application/octet-stream\r\n\r\n"


class TLSBreak(ThreadServer):
    def __init__(self, cert: Path, key: Path, how: str, max_seconds: float = 60.0) -> None:
        super().__init__(max_seconds)
        self._ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self._ctx.load_cert_chain(cert, key)
        self._ctx.set_alpn_protocols(["http/1.1"])
        self.how = how
        self._tcp_listener()

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}/x"

    def answer(self, conn: socket.socket) -> None:
        conn.settimeout(10)
        try:
            tls = self._ctx.wrap_socket(conn, server_side=True)
        except OSError:
            conn.close()
            return
        try:
            if b"\r\n\r\n" not in self.read_until(tls, b"\r\n\r\n", 64 * 1024):
                return
            tls.sendall(HEAD + b"x" * 1000)
            if self.how == "garbage":
                os.write(tls.fileno(), b"\x17\x03\x03\x00\x10this is no record")
            elif self.how == "close_notify":
                tls = tls.unwrap()  # type: ignore[assignment]
        except OSError:
            pass
        finally:
            tls.close()

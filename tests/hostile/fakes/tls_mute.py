"""TEST DOUBLE: an HTTPS server that never answers the client's TLS close_notify.

``with TLSMute(cert, key) as srv:`` answers one request per connection (a keep-alive
``200 OK``, body ``ok``), then reads on: the client's close_notify shows as the end of
the TLS stream (``srv.close_notify`` is set), but the server neither answers it nor
closes, as a busy or careless server may not. A client that waits for the answer
keeps its socket open (asyncio: up to 30 s). Runs in a thread of the test process
(see :class:`tests.hostile.fakes.base.ThreadServer`); exit closes what it holds.
"""

from __future__ import annotations

import socket
import ssl
import threading
from pathlib import Path

from tests.hostile.fakes.base import ThreadServer

REPLY = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok"


class TLSMute(ThreadServer):
    def __init__(self, cert: Path, key: Path, max_seconds: float = 30.0) -> None:
        super().__init__(max_seconds)
        self._ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self._ctx.load_cert_chain(cert, key)
        self._tcp_listener()
        self.close_notify = threading.Event()

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}/x"

    def answer(self, conn: socket.socket) -> None:
        conn.settimeout(5)
        try:
            tls = self._ctx.wrap_socket(conn, server_side=True, suppress_ragged_eofs=False)
        except OSError:
            conn.close()
            return
        self.held.append(tls)  # closed at exit, never before
        try:
            if b"\r\n\r\n" not in self.read_until(tls, b"\r\n\r\n", 64 * 1024):
                return
            tls.sendall(REPLY)
            if tls.recv(1) == b"":  # close_notify (a bare FIN raises SSLEOFError)
                self.close_notify.set()
        except OSError:
            pass

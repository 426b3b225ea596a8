"""A tiny gopher server with fixed menus, and a tarpit that accepts and never answers.

Real servers build menus from files; a test of walk's scope and politeness
needs menus that point at other hosts and at ``file:`` URLs, and a host that
stalls forever. Both run in a thread on a loopback port; every selector asked
is logged.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class GopherMenus:
    """Answers each selector from *menus* (bytes sent as is); with ``tarpit=True`` answers nothing."""

    def __init__(self, menus: dict[str, bytes], host: str = "127.0.0.1", tarpit: bool = False) -> None:
        self.menus = menus
        self.tarpit = tarpit
        self.log: list[str] = []
        self.sock = socket.create_server((host, 0))
        self.sock.settimeout(0.2)
        self.host = host
        self.port = self.sock.getsockname()[1]
        self._stop = threading.Event()
        self._held: list[socket.socket] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            if self.tarpit:
                self._held.append(conn)  # keep it open, say nothing
                continue
            with conn:
                conn.settimeout(5)
                data = b""
                try:
                    while b"\n" not in data and len(data) < 4096:
                        chunk = conn.recv(4096)
                        if not chunk:
                            break
                        data += chunk
                    selector = data.split(b"\t")[0].strip(b"\r\n").decode("utf-8", "replace")
                    self.log.append(selector)
                    conn.sendall(self.menus.get(selector, b"3not here\t\terror.host\t1\r\n.\r\n"))
                except OSError:
                    pass

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.sock.close()
        for conn in self._held:
            conn.close()


@contextmanager
def gopher_menus(menus: dict[str, bytes], host: str = "127.0.0.1", tarpit: bool = False) -> Iterator[GopherMenus]:
    """Run a :class:`GopherMenus` for the duration of a ``with`` block."""
    server = GopherMenus(menus, host, tarpit)
    server._thread.start()
    try:
        yield server
    finally:
        server.close()

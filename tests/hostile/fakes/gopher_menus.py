"""A tiny gopher server with fixed menus, and a tarpit that accepts and never answers.

Real servers build menus from files; a test of walk's scope and politeness
needs menus that point at other hosts and at ``file:`` URLs, and a host that
stalls forever. Both run in a thread on a loopback port; every selector asked
is logged.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager

from tests.hostile.fakes.base import ThreadServer


class GopherMenus(ThreadServer):
    """Answers each selector from *menus* (bytes sent as is); with ``tarpit=True`` answers nothing."""

    def __init__(self, menus: dict[str, bytes], host: str = "127.0.0.1", tarpit: bool = False) -> None:
        super().__init__()
        self.menus = menus
        self.tarpit = tarpit
        self.log: list[str] = []
        self._tcp_listener(host)

    def answer(self, conn: socket.socket) -> None:
        if self.tarpit:
            self.held.append(conn)  # keep it open, say nothing
            return
        with conn:
            try:
                data = self.read_until(conn, b"\n", 4096)
                selector = data.split(b"\t")[0].strip(b"\r\n").decode("utf-8", "replace")
                self.log.append(selector)
                conn.sendall(self.menus.get(selector, b"3not here\t\terror.host\t1\r\n.\r\n"))
            except OSError:
                pass


@contextmanager
def gopher_menus(menus: dict[str, bytes], host: str = "127.0.0.1", tarpit: bool = False) -> Iterator[GopherMenus]:
    """Run a :class:`GopherMenus` for the duration of a ``with`` block."""
    with GopherMenus(menus, host, tarpit) as server:
        yield server

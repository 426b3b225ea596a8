"""Connections begun before the code that uses them is loaded: the TCP handshake overlaps it.

A handshake takes a round trip; loading a driver's modules (and, for the ``anyurl`` command,
asyncio itself) takes tens of milliseconds. :class:`Early` begins non-blocking connects to
one (scheme, host, port) at once (a literal address at once, a name resolved in a daemon
thread), and :meth:`Early.take` hands them over one by one when a driver connects to exactly
that target (:mod:`anyurl.net.handoff`, :func:`anyurl.net.connect.early_socket`). Nothing is
sent early. A connect still resolving when it is asked for is dropped (no wait on a resolver
with no deadline), and a failed one is closed by the taker: the driver then connects as
usual and reports that connect's error. :meth:`Early.close` closes what nobody took.

Users: the CLI (:mod:`anyurl.cli.early`, before asyncio is imported) and a batch
(:mod:`anyurl.transfer.batch`, before its first driver is loaded). This module imports
neither asyncio nor the drivers.
"""

from __future__ import annotations

import os
import socket
import threading

from ..schemes import EARLY_CONNECT

TYPE_CHECKING = False  # not typing's: importing typing costs start-up time
if TYPE_CHECKING:
    from typing import Any

    from ..urls import URL

__all__ = ["Early", "literal_family", "target", "turned_off"]


def turned_off() -> bool:
    """``ANYURL_EARLY_CONNECT=0`` (or no, off, false) turns early connects off."""
    return os.environ.get("ANYURL_EARLY_CONNECT", "").strip().lower() in ("0", "no", "off", "false")


def target(url: URL, text: str = "") -> tuple[str, str, int] | None:
    """(scheme, host, port) that *url*'s driver opens a plain TCP connection to first, or None:
    another scheme, no host, a gopher port the default policy refuses, or a URL (*text*, as
    given) with a control character that the driver refuses before any I/O. The caller checks
    for a proxy."""
    if any(c in text for c in "\r\n\0") or any(e in text.lower() for e in ("%0d", "%0a", "%00")):
        return None
    scheme, host, port = url.scheme, getattr(url, "host", None), getattr(url, "port", None)
    if scheme not in EARLY_CONNECT or not host or not isinstance(port, int):
        return None
    if scheme == "gopher":
        from ..protocols.gopher import service_port_refusal

        if service_port_refusal(port):
            return None
    return scheme, host, port


def literal_family(host: str) -> int | None:
    """The address family of an IP address literal, None for a name."""
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            socket.inet_pton(family, host)
        except OSError:
            continue
        return family
    return None


class Early:
    """*count* connections begun to *key* = (scheme, host, port) (:meth:`start`), taken one by
    one (:meth:`take`)."""

    __slots__ = ("abandoned", "count", "done", "key", "lock", "socks")

    def __init__(self, key: tuple[str, str, int], count: int = 1) -> None:
        self.key = key
        self.count = count  # how many connections to begin
        self.socks: list[socket.socket] = []
        self.done = False  # the sockets (or the failure) are known
        self.abandoned = False  # nobody will take them: the thread closes what it makes
        self.lock = threading.Lock()

    def start(self) -> None:
        """Begin the connects: at once to a literal address, else from a resolving thread."""
        family = literal_family(self.key[1])
        if family is not None:
            self.connect(family, (self.key[1], self.key[2]))
            self.done = True
        else:
            threading.Thread(target=self.resolve, name="anyurl-early-connect", daemon=True).start()

    def connect(self, family: int, address: Any) -> None:
        """Start *count* non-blocking connects to *address* (their outcome is read by the taker)."""
        made: list[socket.socket] = []
        for _ in range(self.count):
            sock = socket.socket(family, socket.SOCK_STREAM)
            try:
                sock.setblocking(False)
                sock.connect_ex(address)  # EINPROGRESS; refused and the like show in SO_ERROR
            except OSError:
                sock.close()
                break
            made.append(sock)
        with self.lock:
            if self.abandoned:
                for sock in made:
                    sock.close()
            else:
                self.socks = made

    def resolve(self) -> None:
        """The thread's work: getaddrinfo, then a connect to the first address (as asyncio tries first)."""
        try:
            host, port = self.key[1], self.key[2]
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            if infos:
                family, _, _, _, address = infos[0]
                self.connect(family, address)
        except (OSError, UnicodeError):
            pass  # the driver's own connect reports it
        finally:
            self.finish()

    def finish(self) -> None:
        """The thread is done: its sockets wait for a taker, or are closed when nobody will take them."""
        with self.lock:
            self.done = True
            if self.abandoned:
                for sock in self.socks:
                    sock.close()
                self.socks = []

    def take(self, scheme: str, host: str, port: int) -> tuple[socket.socket | None, bool]:
        """(a socket begun to exactly (scheme, host, port), or None; whether any is left to take).
        A connect still resolving is abandoned: none is left."""
        if self.key != (scheme, host, port):
            return None, not self.abandoned
        with self.lock:
            if not self.done:  # still resolving: no wait on a resolver without a deadline
                self.abandoned = True
                return None, False
            sock = self.socks.pop(0) if self.socks else None
            return sock, bool(self.socks)

    def close(self) -> None:
        """Close what nobody took (the thread closes what it makes later)."""
        with self.lock:
            self.abandoned = True
            socks, self.socks = self.socks, []
        for sock in socks:
            sock.close()

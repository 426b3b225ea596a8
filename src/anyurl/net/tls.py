"""The one place anyurl makes a TLS client context, and the TLS handshake the CLI begins early.

Every scheme's options spell TLS the same way: ``verify`` (check the server's certificate
and name, default on), ``cafile`` (a PEM bundle of CAs to trust instead of the system's)
and ``ssl_context`` (a context of the caller's own, which wins over both). Drivers ask
:func:`client_context`; a context is made once per (verify, cafile) and shared, since
loading a trust store costs milliseconds and a context is safe to share.

:class:`EarlyTLS` is the CLI's early https connection (:mod:`anyurl.cli.early`): in a thread,
while asyncio and the handlers are still importing, it makes the context the handler will ask
for, finishes the TCP connect and runs the whole TLS handshake over memory BIOs; the connection
layer then adopts the session (:mod:`anyurl.net.tlsbio`). This module imports no asyncio.
"""

from __future__ import annotations

import select
import socket
import ssl
import threading
import time

from ..errors import ConfigurationError

TYPE_CHECKING = False  # not typing's: importing typing costs start-up time
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["EarlyTLS", "client_context"]

_made: dict[tuple[bool, str | None, tuple[str, ...]], ssl.SSLContext] = {}
# the early TLS thread and the handler may ask for the same context at once: one object for both
_making = threading.Lock()


def client_context(verify: bool = True, cafile: str | None = None,
                   ssl_context: ssl.SSLContext | None = None, alpn: tuple[str, ...] = ()) -> ssl.SSLContext:
    """The TLS client context for these options (ConfigurationError for a cafile that won't load).
    *alpn*: the protocols a context made here offers (HTTP/2's "h2"); a caller's own
    *ssl_context* is returned as it is, never changed."""
    if ssl_context is not None:
        return ssl_context
    key = (bool(verify), cafile, alpn)
    ctx = _made.get(key)
    if ctx is None:
        with _making:
            ctx = _made.get(key)
            if ctx is None:
                ctx = _made[key] = _new_context(verify, cafile, alpn)
    return ctx


def _new_context(verify: bool, cafile: str | None, alpn: tuple[str, ...]) -> ssl.SSLContext:
    try:
        ctx = ssl.create_default_context(cafile=cafile)
    except (OSError, ssl.SSLError) as exc:
        raise ConfigurationError(f"cannot load cafile {cafile}: {exc}") from exc
    if not verify:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    if alpn:
        ctx.set_alpn_protocols(list(alpn))
    return ctx


class EarlyTLS:
    """A TLS client handshake run in a thread on a socket whose connect was begun before the event
    loop: :meth:`run` is the thread's work; the taker waits with :meth:`when_done`, then finds
    the session in ``sock``, ``sslobj``, ``incoming`` and ``outgoing`` (``sock`` None: it failed,
    and the handler connects as usual, so the error the user sees is the usual one).

    The context is :func:`client_context`'s for (*verify*, no cafile, *alpn*), the very object
    the handler asks for with the same options: the taker adopts the session only for that
    object. Every wait in the thread ends at its deadline."""

    __slots__ = ("_busy", "_lock", "_notify", "abandoned", "alpn", "ctx", "done", "host", "incoming", "outgoing", "sock",
                 "sslobj", "verify")

    def __init__(self, host: str, verify: bool, alpn: tuple[str, ...]) -> None:
        self.host = host
        self.verify = verify
        self.alpn = alpn
        self.ctx: ssl.SSLContext | None = None
        self.sock: socket.socket | None = None
        self.sslobj: ssl.SSLObject | None = None
        self.incoming = ssl.MemoryBIO()
        self.outgoing = ssl.MemoryBIO()
        self.done = False
        self.abandoned = False  # nobody will take it: closed when done
        self._notify: Callable[[], None] | None = None
        self._lock = threading.Lock()
        self._busy: socket.socket | None = None  # the socket the thread is shaking hands on

    def run(self, sock: socket.socket | None, seconds: float) -> None:
        """Connect (*sock* is non-blocking, its connect begun; None: it could not begin) and shake
        hands within *seconds*; then tell the taker."""
        ok = False
        with self._lock:
            self._busy = sock
        try:
            if sock is not None and not self.abandoned:
                self.ctx = client_context(self.verify, None, alpn=self.alpn)
                ok = self._handshake(sock, time.monotonic() + seconds)
        except Exception:  # noqa: BLE001 - whatever failed here, the handler's own connect reports it
            ok = False
        finally:
            with self._lock:
                self.done = True
                self._busy = None
                if sock is not None and (not ok or self.abandoned):
                    sock.close()
                elif ok:
                    self.sock = sock
                notify, self._notify = self._notify, None
            if notify is not None:
                notify()

    def _handshake(self, sock: socket.socket, deadline: float) -> bool:
        if not _ready(sock, select.POLLOUT, deadline) or sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
            return False
        assert self.ctx is not None
        obj = self.ctx.wrap_bio(self.incoming, self.outgoing, server_hostname=self.host)
        while True:
            try:
                obj.do_handshake()
                finished = True
            except ssl.SSLWantReadError:
                finished = False
            pending = self.outgoing.read()
            if pending and not _send(sock, pending, deadline):
                return False
            if finished:
                self.sslobj = obj
                return True
            if not _ready(sock, select.POLLIN, deadline):
                return False
            try:
                data = sock.recv(1 << 16)
            except (BlockingIOError, InterruptedError):
                continue
            if not data:
                return False
            self.incoming.write(data)

    def when_done(self, notify: Callable[[], None]) -> None:
        """Call *notify* once the thread has finished (at once when it has; else from the thread)."""
        with self._lock:
            if not self.done:
                self._notify = notify
                return
        notify()

    def abandon(self) -> None:
        """Nobody will take the session: close its socket now, or when the thread finishes."""
        with self._lock:
            self.abandoned = True
            self._notify = None
            sock, self.sock = self.sock, None
            busy = self._busy
            if busy is not None:  # wakes the thread's wait at once (it closes the socket): not at its deadline
                try:
                    busy.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        if sock is not None:
            sock.close()


def _ready(sock: socket.socket, event: int, deadline: float) -> bool:
    """Wait until *sock* has *event* (POLLIN, POLLOUT), at most until *deadline*."""
    poller = select.poll()
    poller.register(sock, event | select.POLLERR | select.POLLHUP)
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        try:
            if poller.poll(left * 1000):
                return True
        except InterruptedError:
            continue


def _send(sock: socket.socket, data: bytes, deadline: float) -> bool:
    view = memoryview(data)
    while view:
        try:
            n = sock.send(view)
        except (BlockingIOError, InterruptedError):
            n = 0
        view = view[n:]
        if view and not _ready(sock, select.POLLOUT, deadline):
            return False
    return True

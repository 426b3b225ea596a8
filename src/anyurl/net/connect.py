"""The one way a driver opens a connection, and the one table that names what went wrong.

Every driver connects with :func:`open_transport` (its own protocol) or :func:`open_stream` (asyncio
streams), upgrades with :func:`start_tls`, and runs each later network step inside
:func:`exchanging`. The OS's, asyncio's and ssl's exceptions are translated once, around
each step (httpcore's ``map_exceptions``), so every scheme says the same thing for the
same failure:

=====================================  ============  ================================================
failure                                error         wording
=====================================  ============  ================================================
the connect (or its TLS) took too long  FetchTimeout  ``connecting to PEER timed out``
the TLS handshake failed                ConnectError  ``TLS handshake with PEER failed: REASON``
refused, unreachable, no such name      ConnectError  ``cannot connect to PEER: REASON``
lost once connected                     ConnectError  ``connection lost while DOING: REASON``
=====================================  ============  ================================================

PEER is ``host:port``, with a label where the peer is not the URL's server
(``SMTP relay host:port``, ``host:port (data connection)``). REASON is the system's words
for the error (``Connection refused``, never asyncio's "Connect call failed") or ssl's
(``certificate verify failed: self-signed certificate``, never the ``[SSL: ...]`` code and
the C source line). An SSL error is never read through ``os.strerror``: its errno is
OpenSSL's, not the system's (it made a bad certificate read "Operation not permitted").
"""

from __future__ import annotations

import asyncio
import socket
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import AnyURLError, ConnectError, FetchTimeout, is_tls_error, os_reason, tls_reason, translate
from . import handoff
from .pool import logger

if TYPE_CHECKING:
    import ssl
    from collections.abc import Callable
    from types import TracebackType

    from .tls import EarlyTLS

P = TypeVar("P", bound=asyncio.BaseProtocol)

__all__ = ["connect_failure", "connect_target", "connecting", "early_socket", "early_tls", "exchanging", "lost", "open_stream",
           "open_transport", "start_tls"]


def connect_failure(exc: BaseException, url: object, peer: str, *, handshake: bool = False) -> AnyURLError:
    """The anyurl error for *exc*, raised while connecting to *peer* (``host:port``, maybe
    labelled). *handshake*: the TCP connection stood, so an OSError ended the TLS handshake."""
    if isinstance(exc, AnyURLError):
        return exc
    if isinstance(exc, TimeoutError):
        return FetchTimeout(f"connecting to {peer} timed out", url=url)
    if is_tls_error(exc) or (handshake and isinstance(exc, OSError)):
        reason = tls_reason(exc) if is_tls_error(exc) else os_reason(exc)  # type: ignore[arg-type]
        return ConnectError(f"TLS handshake with {peer} failed: {reason}", url=url)
    if isinstance(exc, OSError):
        return ConnectError(f"cannot connect to {peer}: {os_reason(exc)}", url=url)
    return translate(exc, url)  # not a network error: the general table


class _Mapped:
    """A ``with`` block whose OS, ssl and timeout errors become the anyurl tree (see the table)."""

    __slots__ = ("doing", "handshake", "peer", "url")

    def __init__(self, url: object, peer: str, doing: str | None, handshake: bool) -> None:
        self.url = url
        self.peer = peer
        self.doing = doing
        self.handshake = handshake

    def __enter__(self) -> None:
        return None

    def __exit__(self, typ: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc is None or not isinstance(exc, OSError) or isinstance(exc, AnyURLError):
            return  # AnyURLError may subclass OSError (ConnectionError...): already ours
        doing = self.doing
        if doing is None:
            raise connect_failure(exc, self.url, self.peer, handshake=self.handshake) from exc
        if isinstance(exc, TimeoutError):
            return  # a read or write deadline: the driver words what it waited for
        raise lost(exc, self.url, doing) from exc


def lost(exc: BaseException, url: object, doing: str) -> AnyURLError:
    """The anyurl error for *exc*, raised by a read or write on an open connection (for a
    hot loop's own ``except OSError``, where a ``with`` per chunk would cost), or handed to a
    protocol's ``connection_lost``."""
    if isinstance(exc, AnyURLError):
        return exc
    if is_tls_error(exc):
        reason = f"TLS error: {tls_reason(exc)}"
    elif isinstance(exc, OSError):
        reason = os_reason(exc)
    else:
        reason = str(exc) or type(exc).__name__
    return ConnectError(f"connection lost while {doing}: {reason}", url=url)


def connecting(url: object, peer: str, *, handshake: bool = False) -> _Mapped:
    """``with connecting(url, "host:port"):`` around a connect, maps its errors by the table.
    *handshake*: only a TLS handshake runs inside (STARTTLS, AUTH TLS)."""
    return _Mapped(url, peer, None, handshake)


def exchanging(url: object, doing: str) -> _Mapped:
    """``with exchanging(url, "sending a command"):`` around a read or write on an open
    connection: a lost connection becomes ConnectError "connection lost while DOING: ...".
    A TimeoutError passes through: the driver names the wait that ran out."""
    return _Mapped(url, "", doing, False)


async def open_transport(url: object, scheme: str, host: str, port: int, factory: Callable[[], P], *,
                         timeout: float | None,  # noqa: ASYNC109 - the connect deadline, mapped by the table
                         tls: ssl.SSLContext | None = None,
                         server_hostname: str | None = None) -> tuple[asyncio.Transport, P]:
    """Connect to scheme://host:port (the CLI's early socket when it has one), with TLS when
    *tls* is given, within *timeout*: (transport, protocol)."""
    loop = asyncio.get_running_loop()
    with connecting(url, f"{host}:{port}"):
        async with asyncio.timeout(timeout):
            if tls is not None:
                early = await early_tls(scheme, host, port, tls)
                if early is not None:
                    from .tlsbio import adopt

                    return await adopt(early, factory)
            where = await connect_target(scheme, host, port)
            if tls is None:
                return await loop.create_connection(factory, **where)
            return await loop.create_connection(
                factory, **where, ssl=tls, server_hostname=server_hostname or host)


async def open_stream(url: object, scheme: str, host: str, port: int, *,
                      timeout: float | None,  # noqa: ASYNC109 - as open_transport's
                      limit: int = 1 << 16, tls: ssl.SSLContext | None = None,
                      server_hostname: str | None = None) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """:func:`open_transport` with asyncio streams (what ``asyncio.open_connection`` gives)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=limit, loop=loop)
    protocol = asyncio.StreamReaderProtocol(reader, loop=loop)
    transport, _ = await open_transport(url, scheme, host, port, lambda: protocol, timeout=timeout, tls=tls,
                                        server_hostname=server_hostname)
    return reader, asyncio.StreamWriter(transport, protocol, reader, loop)


async def start_tls(url: object, writer: asyncio.StreamWriter, tls: ssl.SSLContext, host: str, port: int, *,
                    timeout: float | None) -> None:  # noqa: ASYNC109 - as open_transport's
    """Upgrade an open stream to TLS (STARTTLS, AUTH TLS), mapped as a handshake."""
    with connecting(url, f"{host}:{port}", handshake=True):
        async with asyncio.timeout(timeout):
            await writer.start_tls(tls, server_hostname=host)


# -- the CLI's early connection ----------------------------------------------------


def _outcome(sock: socket.socket) -> bool | None:
    """True: connected; False: the connect failed; None: still connecting."""
    if sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
        return False
    try:
        sock.getpeername()
    except OSError:
        return None
    return True


async def early_socket(scheme: str, host: str, port: int) -> socket.socket | None:
    """The socket the CLI began connecting to scheme://host:port before asyncio was
    imported (see :mod:`anyurl.net.handoff`), once it is connected; for the caller's
    ``create_connection(sock=...)``. None when there is none, or it failed: the caller
    connects as usual, and reports that connect's error. Call it inside the connect
    deadline: a connect still under way is waited for, and closed if the wait ends."""
    sock = handoff.take(scheme, host, port)
    if sock is None:
        return None
    try:
        state = _outcome(sock)
        if state is None:
            loop = asyncio.get_running_loop()
            ready: asyncio.Future[None] = loop.create_future()

            def writable() -> None:  # the handshake is over (it may be called again before we resume)
                if not ready.done():
                    ready.set_result(None)

            loop.add_writer(sock, writable)
            try:
                await ready
            finally:
                loop.remove_writer(sock)
            state = _outcome(sock)
    except BaseException:
        sock.close()
        raise
    if not state:
        sock.close()
        return None
    logger.debug("using the connection to %s:%s opened at start-up", host, port)
    return sock


async def early_tls(scheme: str, host: str, port: int, tls: ssl.SSLContext) -> EarlyTLS | None:
    """The TLS session the CLI began with scheme://host:port before asyncio was imported (see
    :class:`anyurl.net.tls.EarlyTLS`), once its handshake is over, when it was made with *tls*
    itself (the context this connection would use); None when there is none, it failed, or its
    context differs: the caller connects as usual. A handshake still running is waited for,
    inside the caller's connect deadline (and the thread's own); given up, it is closed."""
    early = handoff.take_tls(scheme, host, port)
    if early is None:
        return None
    try:
        if not early.done:
            loop = asyncio.get_running_loop()
            ready: asyncio.Future[None] = loop.create_future()

            def finished() -> None:  # (from the handshake's thread)
                try:
                    loop.call_soon_threadsafe(_settle, ready)
                except RuntimeError:  # the loop closed meanwhile: nobody waits
                    pass

            early.when_done(finished)
            await ready
    except BaseException:
        early.abandon()
        raise
    if early.sock is None or early.ctx is not tls:
        early.abandon()
        return None
    logger.debug("using the connection to %s:%s opened at start-up (TLS included)", host, port)
    return early


def _settle(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


async def connect_target(scheme: str, host: str, port: int) -> dict[str, Any]:
    """Where a new connection to scheme://host:port goes, as keywords of ``create_connection``
    and ``asyncio.open_connection``: the CLI's early socket when there is one, else host and port."""
    sock = await early_socket(scheme, host, port)
    return {"sock": sock} if sock is not None else {"host": host, "port": port}

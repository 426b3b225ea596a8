"""FTP data connections: set up (passive or active, plain or TLS) and read or written.

The FTP driver (:mod:`anyurl.handlers.ftp`) opens them when the session
(:mod:`anyurl.protocols.ftpsession`) asks for one. Downloads and listings are read
by the shared :class:`~anyurl.net.bulk.BulkReader`, or, for a small file on
a pipelined passive connection, straight from the socket (:class:`SocketReader`);
uploads are written through :class:`Writer`.
"""

from __future__ import annotations

import asyncio
import errno
import os
import socket
import ssl
from typing import TYPE_CHECKING, Any, Protocol, cast

from ..errors import ConfigurationError, ProtocolError
from ..net.bulk import BulkReader
from ..net.connect import connecting

if TYPE_CHECKING:
    from ..urls import URL
    from .base import Request

__all__ = ["SMALL", "AnyReader", "DataChannel", "SocketReader", "Writer"]


class ControlSide(Protocol):
    """What a data connection needs of its control connection (anyurl.handlers.ftp_control.Control)."""

    @property
    def host(self) -> str: ...
    @property
    def peer(self) -> str: ...
    @property
    def family(self) -> int: ...
    @property
    def loop(self) -> asyncio.AbstractEventLoop: ...
    @property
    def req(self) -> Request: ...
    @property
    def tls(self) -> ssl.SSLContext | None: ...
    @property
    def writer(self) -> asyncio.StreamWriter: ...
    @property
    def url(self) -> URL: ...


SMALL = 1 << 16  # at most this many bytes announced: read without a transport

# A data socket made non-blocking by socket() itself where the OS can (no extra ioctl per file).
_SOCK_NONBLOCK: int = getattr(socket, "SOCK_NONBLOCK", 0)
_NONBLOCKING_STREAM = socket.SOCK_STREAM | _SOCK_NONBLOCK


class SocketReader:
    """A small transfer read from its socket with plain ``recv`` calls: no transport,
    protocol or buffer to set up and tear down for a few KiB (the same ``next_chunk``
    and ``close`` as :class:`BulkReader`). ``recv`` is tried first; only when nothing is
    there yet does it wait for the socket to become readable."""

    def __init__(self, sock: socket.socket, loop: asyncio.AbstractEventLoop) -> None:
        self._sock: socket.socket | None = sock
        self._loop = loop

    async def next_chunk(self, timeout: float | None) -> bytes | None:  # noqa: ASYNC109 - as BulkReader's
        sock = self._sock
        if sock is None:
            return None
        try:
            data = sock.recv(SMALL + 1)
        except (BlockingIOError, InterruptedError):
            async with asyncio.timeout(timeout):
                data = await self._loop.sock_recv(sock, SMALL + 1)
        if not data:
            self.close()
            return None
        return data

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None


AnyReader = BulkReader | SocketReader


class Writer(asyncio.Protocol):
    """A data connection we write to (STOR), with flow control."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self._can_write = asyncio.Event()
        self._can_write.set()
        self.lost: BaseException | None = None
        self.closed = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not asyncio.Transport subclasses, but have the same API.
        self.transport = cast(asyncio.Transport, transport)

    def pause_writing(self) -> None:
        self._can_write.clear()

    def resume_writing(self) -> None:
        self._can_write.set()

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = exc or ConnectionResetError("data connection closed by the server")
        self._can_write.set()
        if not self.closed.done():
            self.closed.set_result(None)

    async def write(self, data: bytes, timeout: float | None) -> None:  # noqa: ASYNC109
        if self.transport is None or self.transport.is_closing():
            raise ConnectionResetError("data connection closed by the server")
        self.transport.write(data)
        async with asyncio.timeout(timeout):
            await self._can_write.wait()
        if self.lost is not None and self.closed.done():
            raise self.lost

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    def abort(self) -> None:
        """Drop what is still buffered: the server stopped reading."""
        if self.transport is not None:
            self.transport.abort()


class DataChannel:
    """A data connection being set up. Passive: the TCP connection is made in
    :meth:`connect_tcp`, before the transfer command; TLS (PROT P) and the protocol
    are put on it by :meth:`connect` after the server's 150, because servers such
    as vsftpd start the TLS handshake only once the command arrived. Active: we
    listen (:meth:`listen`), and accept in :meth:`connect`."""

    def __init__(self, conn: ControlSide, factory: Any) -> None:
        self.conn = conn
        self.factory = factory
        self.listener: socket.socket | None = None
        self.sock: socket.socket | None = None
        self.transport: asyncio.BaseTransport | None = None  # plain passive: connected at once
        self.protocol: Any = None
        self.port = 0

    def start_connect(self, port: int) -> None:
        """Start a non-blocking connect to the server's data port (a pipelined RETR); the
        socket is taken over by a transport in :meth:`connect` once the transfer command's
        1xx came (by then the server has accepted it, or the transport waits for it)."""
        conn = self.conn
        self.port = port
        sock = socket.socket(conn.family, _NONBLOCKING_STREAM)
        self.sock = sock
        if not _NONBLOCKING_STREAM & _SOCK_NONBLOCK:
            sock.setblocking(False)
        err = sock.connect_ex((conn.peer, port))
        if err not in (0, errno.EINPROGRESS, errno.EAGAIN):
            raise OSError(err, os.strerror(err))

    def connect_error(self) -> OSError | None:
        """The error of the connect started by :meth:`start_connect`, if it failed."""
        assert self.sock is not None
        err = self.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        return OSError(err, os.strerror(err)) if err else None

    async def connect_tcp(self, port: int) -> None:
        """Connect to the control connection's peer address (never one from a reply)."""
        conn = self.conn
        self.port = port
        loop = conn.loop
        with connecting(conn.url, f"{conn.peer}:{port} (data connection)"):
            async with asyncio.timeout(conn.req.connect_timeout):
                if conn.tls is None:  # plain: the protocol can start reading right away
                    self.transport, self.protocol = await loop.create_connection(
                        self.factory, conn.peer, self.port)
                    return
                sock = socket.socket(conn.family, socket.SOCK_STREAM)
                sock.setblocking(False)
                self.sock = sock
                await loop.sock_connect(sock, (conn.peer, self.port))

    def listen(self) -> tuple[bool, str, int]:
        """Active mode: listen beside the control connection's local address;
        (IPv6?, address, port) for EPRT/PORT."""
        conn = self.conn
        if conn.tls is not None:
            raise ConfigurationError("active mode (EPRT/PORT) is not supported with TLS data connections",
                                     url=conn.url)
        local = conn.writer.get_extra_info("sockname")[0]
        family = socket.AF_INET6 if ":" in local else socket.AF_INET
        lsock = socket.socket(family, socket.SOCK_STREAM)
        self.listener = lsock
        lsock.bind((local, 0))
        lsock.listen(1)
        lsock.setblocking(False)
        return family == socket.AF_INET6, local, lsock.getsockname()[1]

    async def connect(self) -> Any:
        """The protocol instance on the data connection (call after the 150)."""
        conn = self.conn
        if self.protocol is not None:
            self.transport = None  # handed over: the caller closes it
            return self.protocol
        factory = self.factory
        loop = conn.loop
        try:
            with connecting(conn.url, f"{conn.peer}:{self.port} (data connection)",
                            handshake=conn.tls is not None):
                if self.listener is None and conn.tls is None:
                    # a pipelined passive connect, accepted by the server before its 1xx (or on
                    # the way): taking the socket over waits for nothing on the network
                    assert self.sock is not None
                    _, protocol = await loop.create_connection(factory, sock=self.sock)
                    self.sock = None
                    return protocol
                async with asyncio.timeout(conn.req.connect_timeout):
                    if self.listener is not None:
                        sock, addr = await loop.sock_accept(self.listener)
                        self.sock = sock
                        peer = conn.peer
                        if addr[0] != peer:  # only the server may connect to us
                            raise ProtocolError(f"active data connection from {addr[0]}, not the server {peer}",
                                                url=conn.url)
                        _, protocol = await loop.connect_accepted_socket(factory, sock)
                    else:
                        assert self.sock is not None
                        _, protocol = await loop.create_connection(
                            factory, sock=self.sock, ssl=conn.tls,
                            server_hostname=conn.host if conn.tls else None)
                    self.sock = None  # the transport owns it now
        finally:
            self.close()
        return protocol

    def direct(self) -> bool:
        """A plain passive socket not yet given to a transport (a pipelined connect)."""
        return (self.sock is not None and self.listener is None and self.protocol is None
                and self.conn.tls is None)

    def take_socket(self) -> socket.socket:
        """The data socket, handed over (after the transfer command's 1xx)."""
        sock = self.sock
        assert sock is not None
        self.sock = None
        return sock

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()
            self.transport = None
        if self.listener is not None:
            self.listener.close()
            self.listener = None
        if self.sock is not None:
            self.sock.close()
            self.sock = None

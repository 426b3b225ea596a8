"""FTP and FTPS: the asyncio driver for :mod:`anyurl.protocols.ftp`.

The control connection is our own small asyncio-streams client rather than
aioftp's: aioftp inserts commands of its own (TYPE at login, stat calls before
downloads) so the exact RFC 1738 command sequence could not be guaranteed, and
its data path copies through 8 KiB reads. The protocol decisions (command plan,
reply and listing parsing) live in the sans-I/O module; this module only moves
bytes: control lines, and data connections read by the shared
:class:`~anyurl.net.bulk.BulkReader`. Control connections are pooled by
:class:`~anyurl.net.pool.Pool` (per-host slots, idle reuse, the stale retry);
commands and replies are logged at DEBUG to ``anyurl.ftp`` (passwords masked).
"""

from __future__ import annotations

import asyncio
import errno
import functools
import io
import logging
import os
import socket
import ssl
from collections.abc import AsyncIterator, Callable
from typing import Any, BinaryIO, cast

from .._record import Record
from ..errors import (
    AccessDenied,
    AnyURLError,
    ConfigurationError,
    ConnectError,
    FetchTimeout,
    NotSupported,
    OverlongTransfer,
    ProtocolError,
    ResourceNotFound,
    TransferError,
    TruncatedTransfer,
    mask_password,
)
from ..net.bulk import BulkReader
from ..net.pool import Lease, Pool
from ..net.tls import client_context, renamed_option
from ..protocols import ftp as proto
from ..protocols.ftp import Plan, Reply
from ..response import Body, Entry, Stat, guess_content_type
from ..urls import FTPURL, URL
from .base import (
    Context,
    Handler,
    Request,
    apply_length,
    open_connection,
    render_entries,
)

__all__ = ["FTPHandler", "FTPOptions"]

log = logging.getLogger("anyurl.ftp")
_set = object.__setattr__  # how a frozen Record's __init__ sets its fields


class FTPOptions(Record):
    """FTP settings, passed as ``Client(ftp=FTPOptions(...))``.

    cwd_strategy: "multicwd" (RFC 1738: one CWD per segment), "singlecwd"
        (one CWD with the joined path) or "nocwd" (no CWD, full path to RETR/LIST).
    passive: EPSV then PASV (True) or active EPRT then PORT (False).
    epsv: try EPSV before PASV.
    guess_type: without a typecode, transfer names ending in one of text_suffixes as
        TYPE A (the old guess; the default is TYPE I, byte-exact like curl, wget and lftp).
    use_size: send SIZE before a binary RETR (size for progress and truncation checks).
    use_mlsd: use MLSD for listings when FEAT offers it.
    tls: explicit FTPS (AUTH TLS) for ftp:// URLs; ftps:// is always implicit TLS.
    verify, cafile, ssl_context: how the server's certificate is checked, spelled as for
        every scheme (anyurl.net.tls); ``tls_context`` is the old name of ``ssl_context``.
    atomic_upload: STOR to a temporary name, then RNFR/RNTO.
    reuse: keep idle control connections for the next URL on the same server.
    pipeline: once EPSV worked on a connection, send [SIZE,] EPSV and RETR of the
        next file in one write (one round trip less per file; plain connections only).
    """

    __slots__ = ("cwd_strategy", "passive", "epsv", "text_suffixes", "guess_type", "use_size", "use_mlsd", "tls",
                 "tls_context", "atomic_upload", "reuse", "pipeline", "verify", "cafile", "ssl_context")
    cwd_strategy: str
    passive: bool
    epsv: bool
    text_suffixes: tuple[str, ...]
    guess_type: bool
    use_size: bool
    use_mlsd: bool
    tls: bool
    tls_context: ssl.SSLContext | None
    atomic_upload: bool
    reuse: bool
    pipeline: bool
    verify: bool
    cafile: str | None
    ssl_context: ssl.SSLContext | None

    # a frozen dataclass before; written out, it costs nothing at import (see anyurl._record)
    def __init__(self, cwd_strategy: str = "multicwd", passive: bool = True, epsv: bool = True,
                 text_suffixes: tuple[str, ...] = proto.DEFAULT_TEXT_SUFFIXES, guess_type: bool = False,
                 use_size: bool = True, use_mlsd: bool = True, tls: bool = False,
                 tls_context: ssl.SSLContext | None = None, atomic_upload: bool = True, reuse: bool = True,
                 pipeline: bool = True, verify: bool = True, cafile: str | None = None,
                 ssl_context: ssl.SSLContext | None = None) -> None:
        if tls_context is not None:
            renamed_option("FTPOptions", "tls_context", "ssl_context")
            ssl_context = ssl_context or tls_context
        _set(self, "cwd_strategy", cwd_strategy)
        _set(self, "passive", passive)
        _set(self, "epsv", epsv)
        _set(self, "text_suffixes", text_suffixes)
        _set(self, "guess_type", guess_type)
        _set(self, "use_size", use_size)
        _set(self, "use_mlsd", use_mlsd)
        _set(self, "tls", tls)
        _set(self, "tls_context", tls_context)
        _set(self, "atomic_upload", atomic_upload)
        _set(self, "reuse", reuse)
        _set(self, "pipeline", pipeline)
        _set(self, "verify", verify)
        _set(self, "cafile", cafile)
        _set(self, "ssl_context", ssl_context)


# ---------------------------------------------------------------------------
# Data connections
# ---------------------------------------------------------------------------


# Data connections are read by the shared bulk reader (stream.py), or, for a small file
# on a pipelined passive connection, straight from the socket (_SocketReader).
_Reader = BulkReader
_SMALL = 1 << 16  # at most this many bytes announced: read without a transport


class _SocketReader:
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
            data = sock.recv(_SMALL + 1)
        except (BlockingIOError, InterruptedError):
            async with asyncio.timeout(timeout):
                data = await self._loop.sock_recv(sock, _SMALL + 1)
        if not data:
            self.close()
            return None
        return data

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None


_AnyReader = BulkReader | _SocketReader

# A data socket made non-blocking by socket() itself where the OS can (no extra ioctl per file).
_SOCK_NONBLOCK: int = getattr(socket, "SOCK_NONBLOCK", 0)
_NONBLOCKING_STREAM = socket.SOCK_STREAM | _SOCK_NONBLOCK


def _content_type(name: str) -> str:
    """guess_content_type(name), looked up once per suffix pair (what mimetypes looks at:
    the type's suffix and one compression suffix) instead of once per file."""
    if ":" in name:  # mimetypes reads "scheme:" prefixes ("data:"): ask it directly
        return guess_content_type(name)
    # a suffix counts only after a stem that is not all dots (as posixpath.splitext)
    last = name.rfind(".")
    if last <= 0 or not name[:last].lstrip("."):
        return _suffix_type("")
    before = name.rfind(".", 0, last)
    return _suffix_type(name[before if before > 0 and name[:before].lstrip(".") else last:])


@functools.lru_cache(maxsize=512)
def _suffix_type(suffixes: str) -> str:
    return guess_content_type("x" + suffixes)


class _Writer(asyncio.Protocol):
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


# ---------------------------------------------------------------------------
# The control connection
# ---------------------------------------------------------------------------

_PoolKey = tuple[str, int, str, "str | None", str]


class _Control:
    """One logged-in control connection (a :class:`~anyurl.net.pool.Connection`)."""

    def __init__(self, handler: FTPHandler, key: _PoolKey, url: FTPURL, host: str, port: int,
                 reader: asyncio.StreamReader, writer: asyncio.StreamWriter, tls: ssl.SSLContext | None,
                 req: Request) -> None:
        self.handler = handler
        self.key = key
        self.req = req  # the request using the connection now: its timeouts and limits apply
        self.lease: Lease[_Control] | None = None
        self.url = url
        self.host = host
        self.port = port
        self.reader = reader
        self.writer = writer
        self.tls = tls  # the context for data connections when PROT P is in force
        self.login_dir: str | None = None
        self.cwd_path: tuple[str, ...] | None = ()  # CWDs applied since login; None: unknown
        self.type: str | None = None  # the TYPE in force
        self.size_in_150 = False  # the server's 150 replies carry "(N bytes)": SIZE is redundant
        self.reused = False  # taken from the idle pool (it may have died while idle)
        self.features: set[str] | None = None
        self.epsv_ok = True
        self.epsv_seen = False  # a 229 came on this connection: EPSV may be pipelined with RETR
        self.size_ok = True
        self._replies = proto.ReplyReader(req.limits.max_line, req.limits.max_reply_lines)
        self.log = handler.pool.log
        self.broken = False
        # the error of a refusing reply that completed its command: after it the connection
        # is still in step and may be reused (a 550 on RETR, CWD...)
        self.refused: AnyURLError | None = None
        self._due: float | None = None  # when the line being waited for is late
        self._watchdog: asyncio.TimerHandle | None = None
        self._watchdog_at = 0.0
        self._late = False
        # Looked up once: each transfer needs them, and asking again costs calls.
        peer = writer.get_extra_info("peername")
        self.peer: str = peer[0]
        self.family = socket.AF_INET6 if ":" in self.peer else socket.AF_INET
        self.loop = asyncio.get_running_loop()

    @property
    def _timeout(self) -> float | None:
        req = self.req
        # without a total deadline the read timeout is the setting itself: no calls to work it out
        return req.timeouts.read if req.deadline is None else req.read_timeout

    # -- lines ---------------------------------------------------------------

    async def send(self, verb: str, arg: str | None = None, *more: tuple[str, str | None]) -> None:
        """Send one command, or several in one write (*more*: pipelined (verb, arg) pairs)."""
        line = proto.format_command(verb, arg)
        if more:
            line += b"".join(proto.format_command(v, a) for v, a in more)
        if self.log.isEnabledFor(logging.DEBUG):
            for v, a in ((verb, arg), *more):
                self.log.debug("%s:%s > %s", self.host, self.port, _show(v, a))
        try:
            self.writer.write(line)
            if self.writer.transport.get_write_buffer_size():  # only then can drain block
                async with asyncio.timeout(self._timeout):
                    await self.writer.drain()
        except TimeoutError as exc:
            self.broken = True
            raise FetchTimeout(f"timed out sending {verb}", url=self.url) from exc
        except (OSError, RuntimeError) as exc:
            self.broken = True
            raise ConnectError(f"control connection lost sending {verb}: {exc}", url=self.url) from exc

    def _check_late(self) -> None:
        """The watchdog: fail the reply being waited for once its deadline passed."""
        self._watchdog = None
        due = self._due
        if due is None:
            return  # nothing is waited for now
        if self.loop.time() + 0.001 >= due:
            self._late = True
            self.reader.set_exception(TimeoutError())  # the connection is not reused after this
        else:
            self._watchdog = self.loop.call_at(due, self._check_late)
            self._watchdog_at = due

    async def _readline(self) -> bytes:
        """One reply line of at most ``Limits.max_line`` bytes, b"" at EOF. The read
        timeout is kept by one timer per connection, moved only when it fires early,
        instead of a timer armed and cancelled for every line."""
        timeout = self._timeout
        if timeout is not None:
            due = self.loop.time() + timeout
            self._due = due
            if self._watchdog is None or self._watchdog_at > due:
                if self._watchdog is not None:
                    self._watchdog.cancel()
                self._watchdog = self.loop.call_at(due, self._check_late)
                self._watchdog_at = due
        limit = self.req.limits.max_line
        try:
            line = await self.reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:
            line = exc.partial
        except asyncio.LimitOverrunError as exc:
            raise ProtocolError(f"reply line longer than {limit} bytes", url=self.url) from exc
        except TimeoutError as exc:  # set by the watchdog (an outer timeout cancels instead)
            raise FetchTimeout(_waited(self.req, "a reply line"), url=self.url) from exc
        finally:
            self._due = None
        if len(line) > limit:
            raise ProtocolError(f"reply line longer than {limit} bytes", url=self.url)
        return line

    async def reply(self) -> Reply:
        while True:
            try:
                line = await self._readline()
            except AnyURLError:
                self.broken = True
                raise
            except OSError as exc:
                self.broken = True
                raise ConnectError(f"control connection lost: {exc}", url=self.url) from exc
            if not line:
                self.broken = True
                raise ConnectError("the server closed the control connection", url=self.url)
            try:
                reply = self._replies.feed(line)
            except ProtocolError as exc:
                self.broken = True
                raise ProtocolError(exc.message, url=self.url) from exc
            if reply is not None:
                if self.log.isEnabledFor(logging.DEBUG):
                    self.log.debug("%s:%s < %s", self.host, self.port, reply.text)
                return reply

    async def cmd(self, verb: str, arg: str | None = None) -> Reply:
        await self.send(verb, arg)
        return await self.reply()

    async def expect(self, verb: str, arg: str | None = None, ok: tuple[int, ...] = (2,)) -> Reply:
        """Send a command; its error from the tree unless the reply's first digit is in *ok*."""
        reply = await self.cmd(verb, arg)
        if reply.kind not in ok:
            raise self.refuse(reply, _show(verb, arg))
        return reply

    def refuse(self, reply: Reply, what: str, url: URL | None = None) -> AnyURLError:
        """The error for *reply*, which ended its command's reply sequence: the connection
        stays in step and is kept after a permanent refusal (5xx: a missing file...). A
        transient one (4xx: closing, busy) or a lost login (530) drops it, so that a
        retry starts on a fresh session."""
        err = proto.error_for(reply, what, url or self.url)
        if reply.kind == 5 and reply.code not in (530, 532):
            self.refused = err
        return err

    def ended(self, reply: Reply, what: str, url: URL | None = None) -> AnyURLError:
        """The error for *reply*, the last of a transfer's sequence, sent once the data
        connection closed (426, 451, 452, 552 after STOR: a full disk, a quota): the
        transfer failed, not the session, so the connection is kept, after a 4xx too,
        unless the server is closing it (421) or the login is gone (530, 532)."""
        err = proto.error_for(reply, what, url or self.url)
        if reply.kind in (4, 5) and reply.code not in (421, 530, 532):
            self.refused = err
        return err

    def in_step_after(self, exc: BaseException) -> bool:
        """True when *exc* came from a refusal that left the connection in step."""
        return exc is self.refused and not self.broken

    # -- state ---------------------------------------------------------------

    def is_reusable(self) -> bool:
        """Logged in, open, and nothing unread: the pool may lend it again."""
        return self.login_dir is not None and not self.stale()

    async def reset_for(self, target: tuple[Request, tuple[str, ...]]) -> bool:
        self.req, cwds = target
        self.url = cast(FTPURL, self.req.url)
        return await self.reset(cwds)

    async def aclose(self) -> None:
        await self.quit()

    def stale(self) -> bool:
        """True when the server closed this idle connection (or sent something unasked)."""
        transport = self.writer.transport
        return (self.broken or transport.is_closing() or bool(getattr(self.reader, "_buffer", b""))
                or bool(getattr(self.reader, "_eof", False)))

    async def reset(self, target: tuple[str, ...]) -> bool:
        """Prepare for reuse by a URL whose CWDs are *target*: back to the login
        directory (section 3.2.5), unless the connection already stands where
        *target* leads (as curl does) or on the way there (the rest of the CWDs
        follow). On a server with Unix paths, one CWD to the absolute path stands for
        "back to the login directory, then each segment"; where that fails, the
        sequence itself runs (and fails where the RFC's would). False when the
        connection cannot be brought back reliably."""
        if self.stale() or self.login_dir is None:
            return False
        here = self.cwd_path
        if here == target or here == ():
            return True
        try:
            if here is not None and target[:len(here)] == here:
                return True  # deeper down the same path: change_dirs sends the rest
            jump = proto.absolute_cwd(self.login_dir, target)
            if jump is not None:
                self.cwd_path = None
                if (await self.cmd("CWD", jump)).code == 250:
                    self.cwd_path = target
                    return True
            reply = await self.cmd("CWD", self.login_dir)
        except AnyURLError:
            return False
        if reply.code != 250:
            return False
        self.cwd_path = ()
        return True

    async def change_dirs(self, cwds: tuple[str, ...]) -> None:
        """The URL's CWD sequence, from the login directory, or from where the
        connection stands when that is part of the way (skipped when already there)."""
        here = self.cwd_path
        if here == cwds:
            return
        start = len(here) if here is not None and cwds[:len(here)] == here else 0
        self.cwd_path = None
        for cwd in cwds[start:]:
            await self.expect("CWD", cwd)
        self.cwd_path = cwds

    async def set_type(self, type_: str) -> None:
        """TYPE, unless already in force on this connection."""
        if self.type != type_:
            self.type = None
            await self.expect("TYPE", type_)
            self.type = type_

    async def features_list(self) -> set[str]:
        if self.features is None:
            reply = await self.cmd("FEAT")
            feats: set[str] = set()
            if reply.code == 211:
                for line in reply.lines[1:-1] if len(reply.lines) > 2 else ():
                    word = line.strip().split(" ", 1)[0].upper()
                    if word:
                        feats.add(word)
            self.features = feats
        return self.features

    def _stop_watchdog(self) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None

    def abort(self) -> None:
        self.broken = True
        self._stop_watchdog()
        self.writer.transport.abort()

    async def quit(self) -> None:
        try:
            if not self.stale():
                self.writer.write(b"QUIT\r\n")
                async with asyncio.timeout(2):
                    await self.reply()
        except (AnyURLError, OSError, TimeoutError):
            pass
        finally:
            self._stop_watchdog()
            self.writer.close()
            try:
                async with asyncio.timeout(2):
                    await self.writer.wait_closed()
            except (OSError, TimeoutError):
                pass


def _waited(req: Request, what: str) -> str:
    """What a wait for *what* that timed out ran into: the read timeout, or the total deadline
    (``Timeouts.total``), which cuts the read timeout short when it comes first."""
    deadline = req.deadline
    if deadline is not None and deadline - asyncio.get_running_loop().time() < 0.01:
        return (f"the total timeout (Timeouts.total={req.timeouts.total:g} s) ran out "
                f"while waiting for {what}")
    return f"timed out waiting for {what} (read timeout {req.timeouts.read:g} s)"


def _show(verb: str, arg: str | None) -> str:
    if verb == "PASS":
        return "PASS <password>"
    return verb if arg is None else f"{verb} {arg}"


class _DataChannel:
    """A data connection being set up. Passive: the TCP connection is made in
    :meth:`prepare`, before the transfer command; TLS (PROT P) and the protocol
    are put on it by :meth:`connect` after the server's 150, because servers such
    as vsftpd start the TLS handshake only once the command arrived. Active: we
    listen, and accept in :meth:`connect`."""

    def __init__(self, conn: _Control, factory: Any) -> None:
        self.conn = conn
        self.factory = factory
        self.listener: socket.socket | None = None
        self.sock: socket.socket | None = None
        self.transport: asyncio.BaseTransport | None = None  # plain passive: connected at once
        self.protocol: Any = None
        self.port = 0

    @classmethod
    async def prepare(cls, conn: _Control, opts: FTPOptions, factory: Any) -> _DataChannel:
        """Set up the data connection whose protocol *factory* makes."""
        chan = cls(conn, factory)
        try:
            if opts.passive:
                chan.port = await chan._passive(opts)
                await chan._connect_tcp()
            else:
                await chan._active()
        except BaseException:
            chan.close()
            raise
        return chan

    @classmethod
    async def pipelined(cls, conn: _Control, plan: Plan, factory: Any,
                        want_size: bool) -> tuple[int | None, _DataChannel | None, Reply | None]:
        """[SIZE,] EPSV and RETR in one write, on a connection where EPSV worked before:
        one round trip less per file. Servers accept the data connection when the
        transfer command arrives, so it may come before we connect. Returns (size,
        channel, RETR's reply); channel and reply are None when EPSV failed this time
        (every reply read, nothing started): the caller goes on without pipelining."""
        if want_size:
            await conn.send("SIZE", plan.argument, ("EPSV", None), ("RETR", plan.argument))
        else:
            await conn.send("EPSV", None, ("RETR", plan.argument))
        total: int | None = None
        chan = cls(conn, factory)
        in_step = False  # True once every reply to what was sent has been read
        try:
            if want_size:
                reply = await conn.reply()
                if reply.code == 421:  # closing: the rest will not be answered
                    raise proto.error_for(reply, f"SIZE {plan.argument}", conn.url)
                total = proto.parse_size(reply)
                if reply.code in (500, 502):
                    conn.size_ok = False
            epsv = await conn.reply()
            if epsv.code == 421:
                raise proto.error_for(epsv, "EPSV", conn.url)
            if epsv.code != 229 and epsv.kind not in (4, 5):
                # a 1xx, or a 2xx/3xx other than 229, cannot answer EPSV: the server answered the
                # pipelined commands out of turn, and every later reply would be read one place off
                raise ProtocolError(f"reply out of turn: {epsv.text!r} where the answer to EPSV was due",
                                    url=conn.url, reply=epsv.text)
            if epsv.code != 229:
                retr = await conn.reply()  # the server's answer to a RETR without a data port
                if retr.kind == 1:
                    raise ProtocolError(f"the server started RETR after refusing EPSV ({epsv.text})",
                                        url=conn.url)
                in_step = True
                conn.epsv_seen = False
                if epsv.kind == 4 and epsv.code != 425:
                    raise proto.error_for(epsv, "EPSV", conn.url)
                conn.epsv_ok = epsv.kind == 4  # e.g. 500/502: use PASV from now on
                chan.close()
                return total, None, None
            chan.port = proto.parse_epsv(epsv)
            connect_error: OSError | None = None
            try:
                chan._start_connect()
            except OSError as exc:
                connect_error = exc
            retr = await conn.reply()
            in_step = retr.kind != 1
            if not in_step and connect_error is None:
                connect_error = chan._connect_error()
            if connect_error is not None and not in_step:
                # the server waits for a data connection that failed
                raise ConnectError(f"cannot open the data connection to port {chan.port}: {connect_error}",
                                   url=conn.url) from connect_error
            in_step = True
        except BaseException:
            chan.close()
            if not in_step:
                conn.broken = True
            raise
        return total, chan, retr

    def _start_connect(self) -> None:
        """Start a non-blocking connect to the server's data port; the socket is taken
        over by a transport in :meth:`connect` once the transfer command's 1xx came
        (by then the server has accepted it, or the transport waits for it)."""
        conn = self.conn
        sock = socket.socket(conn.family, _NONBLOCKING_STREAM)
        self.sock = sock
        if not _NONBLOCKING_STREAM & _SOCK_NONBLOCK:
            sock.setblocking(False)
        err = sock.connect_ex((conn.peer, self.port))
        if err not in (0, errno.EINPROGRESS, errno.EAGAIN):
            raise OSError(err, os.strerror(err))

    def _connect_error(self) -> OSError | None:
        """The error of the connect started by :meth:`_start_connect`, if it failed."""
        assert self.sock is not None
        err = self.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        return OSError(err, os.strerror(err)) if err else None

    async def _passive(self, opts: FTPOptions) -> int:
        conn = self.conn
        if opts.epsv and conn.epsv_ok:
            reply = await conn.cmd("EPSV")
            if reply.code == 229:
                port = proto.parse_epsv(reply)
                conn.epsv_seen = True
                return port
            if reply.kind == 4 and reply.code != 425:
                raise conn.refuse(reply, "EPSV")
            conn.epsv_ok = False  # e.g. 500/502: not supported, use PASV from now on
        reply = await conn.expect("PASV")
        return proto.parse_pasv(reply)  # the address is ignored on purpose

    async def _connect_tcp(self) -> None:
        """Connect to the control connection's peer address (never one from a reply)."""
        conn = self.conn
        loop = conn.loop
        try:
            async with asyncio.timeout(conn.req.connect_timeout):
                if conn.tls is None:  # plain: the protocol can start reading right away
                    self.transport, self.protocol = await loop.create_connection(
                        self.factory, conn.peer, self.port)
                    return
                sock = socket.socket(conn.family, socket.SOCK_STREAM)
                sock.setblocking(False)
                self.sock = sock
                await loop.sock_connect(sock, (conn.peer, self.port))
        except TimeoutError as exc:
            raise FetchTimeout(f"timed out opening the data connection to port {self.port}",
                               url=conn.url) from exc
        except OSError as exc:
            raise ConnectError(f"cannot open the data connection to port {self.port}: {exc}",
                               url=conn.url) from exc

    async def _active(self) -> None:
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
        port = lsock.getsockname()[1]
        reply = await conn.cmd("EPRT", f"|{2 if family == socket.AF_INET6 else 1}|{local}|{port}|")
        if reply.kind != 2:
            if family == socket.AF_INET6:
                raise proto.error_for(reply, "EPRT", conn.url)
            h = local.replace(".", ",")
            await conn.expect("PORT", f"{h},{port >> 8},{port & 255}")

    async def connect(self) -> Any:
        """The protocol instance on the data connection (call after the 150)."""
        conn = self.conn
        if self.protocol is not None:
            self.transport = None  # handed over: the caller closes it
            return self.protocol
        factory = self.factory
        loop = conn.loop
        try:
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
        except TimeoutError as exc:
            raise FetchTimeout("timed out opening the data connection", url=conn.url) from exc
        except (OSError, ssl.SSLError) as exc:
            raise ConnectError(f"cannot open the data connection: {exc}", url=conn.url) from exc
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


class _Listing:
    """What a listing command returned: the entries kept, and the line count and first
    line (NLST of a file name answers with just that name)."""

    __slots__ = ("items", "lines", "first", "parser")

    def __init__(self, parser: proto.ListParser) -> None:
        self.items: list[proto.ListItem] = []
        self.lines = 0
        self.first: str | None = None
        self.parser = parser  # what it read: entries, lines in no known format (logged)


# ---------------------------------------------------------------------------
# The handler
# ---------------------------------------------------------------------------


def _source_name(source: Any, url: URL) -> str:
    """The base name an upload to a directory URL stores *source* under: a path's, or a file
    object's ``.name`` (not a descriptor number nor a pseudo name like ``<stdin>``)."""
    name = source if isinstance(source, (str, os.PathLike)) else getattr(source, "name", None)
    if isinstance(name, (str, bytes, os.PathLike)):
        base = os.path.basename(os.fsdecode(name))
        if base not in ("", ".", "..") and not (base.startswith("<") and base.endswith(">")):
            return base
    raise ConfigurationError("the upload URL ends in '/' and the source has no file name to store "
                             "it under: put the name in the URL", url=url)


class FTPHandler(Handler):
    """ftp:// (RFC 1738 section 3.2) and ftps:// (implicit TLS); explicit TLS via FTPOptions."""

    options_name = "ftp"

    def __init__(self, client: Context) -> None:
        super().__init__(client)
        # 421: the server is closing the control connection (often an idle timeout)
        self.pool: Pool[_Control] = Pool("ftp", closing_replies=("421",))

    def _plan(self, url: URL, opts: FTPOptions) -> tuple[FTPURL, Plan]:
        if not isinstance(url, FTPURL):
            raise ConfigurationError(f"not an FTP URL: {url}", url=url)
        try:
            plan = proto.plan(url, anonymous_email=self.client.anonymous_email,
                              cwd_strategy=opts.cwd_strategy, text_suffixes=opts.text_suffixes,
                              guess_type=opts.guess_type)
        except ValueError as exc:
            if isinstance(exc, AnyURLError):
                raise
            raise ConfigurationError(str(exc), url=url) from exc
        return url, plan

    # -- pool ------------------------------------------------------------------

    def _tls_context(self, opts: FTPOptions) -> ssl.SSLContext:
        return client_context(opts.verify, opts.cafile, opts.ssl_context)

    async def _acquire(self, url: FTPURL, plan: Plan, opts: FTPOptions, req: Request | None = None,
                       *, fresh: bool = False) -> _Control:
        """An idle connection reset for *plan*, or a new one (waits for a per-host slot)."""
        req = req if req is not None else self.client.request(url)
        implicit = url.scheme == "ftps"
        mode = "implicit" if implicit else ("explicit" if opts.tls else "plain")
        key: _PoolKey = (url.host, url.port, plan.user, plan.password, mode)
        lease = await self.pool.acquire(req, url.host, url.port, key,
                                        lambda: self._login(url, plan, opts, key, mode, req),
                                        (req, plan.cwds), fresh=fresh)
        conn = lease.conn
        conn.lease = lease
        conn.req = req
        conn.url = url
        conn.reused = lease.reused
        return conn

    async def _release(self, conn: _Control, reusable: bool, opts: FTPOptions) -> None:
        assert conn.lease is not None
        conn.refused = None  # holds a traceback: not kept past the request
        await conn.lease.release(reusable, keep=opts.reuse)

    async def _login(self, url: FTPURL, plan: Plan, opts: FTPOptions, key: _PoolKey, mode: str,
                     req: Request) -> _Control:
        host, port = url.host, url.port
        ctx = self._tls_context(opts) if mode != "plain" else None
        kwargs: dict[str, Any] = {"limit": req.limits.max_line}
        if mode == "implicit":
            kwargs.update(ssl=ctx, server_hostname=host)
        try:
            reader, writer = await open_connection(url, host, port, timeout=req.connect_timeout, **kwargs)
        except ssl.SSLError as exc:
            raise ConnectError(f"TLS handshake with {host}:{port} failed: {exc}", url=url) from exc
        conn = _Control(self, key, url, host, port, reader, writer, ctx, req)
        try:
            greeting = await conn.reply()
            while greeting.kind == 1:  # 120: ready in a moment
                greeting = await conn.reply()
            if greeting.kind != 2:
                raise proto.error_for(greeting, f"connecting to {host}:{port}", url)
            if mode == "explicit":
                await conn.expect("AUTH", "TLS")
                try:
                    async with asyncio.timeout(req.connect_timeout):
                        await writer.start_tls(ctx, server_hostname=host)  # type: ignore[arg-type]
                except (OSError, ssl.SSLError, TimeoutError) as exc:
                    raise ConnectError(f"TLS handshake with {host}:{port} failed: {exc}", url=url) from exc
            await self._authenticate(conn, plan)
            if mode != "plain":
                await conn.expect("PBSZ", "0")
                await conn.expect("PROT", "P")
            else:
                conn.tls = None
            pwd = await conn.cmd("PWD")
            conn.login_dir = proto.parse_pwd(pwd)  # None: cannot come back, so no reuse
        except BaseException:
            conn.abort()
            raise
        return conn

    async def _authenticate(self, conn: _Control, plan: Plan) -> None:
        who = f"user {plan.user!r} at {conn.host}"
        reply = await conn.cmd("USER", plan.user)
        if reply.code == 230:
            return
        if reply.code in (530, 332) or reply.kind not in (2, 3):
            if reply.kind == 4:
                raise proto.error_for(reply, "USER", conn.url)
            raise AccessDenied(f"login refused for {who}", url=conn.url, reply=reply.text)
        password = plan.password
        if password is None:
            password = await self.client.ask_password(plan.user, conn.host)
            if password is None:
                raise AccessDenied(f"the server asks a password for {who}; none in the URL, "
                                   "from the password callback or in ~/.netrc", url=conn.url,
                                   reply=reply.text)
            if any(c in password for c in "\r\n\0"):
                raise AccessDenied(f"the password given for {who} contains control characters", url=conn.url)
        reply = await conn.cmd("PASS", password)
        if reply.kind == 2:
            return
        if reply.kind == 4:
            raise proto.error_for(reply, "PASS", conn.url)
        if reply.code == 332:
            raise AccessDenied(f"the server wants an account (ACCT) for {who}; not supported",
                               url=conn.url, reply=reply.text)
        raise AccessDenied(f"login refused for {who}", url=conn.url, reply=reply.text)

    async def aclose(self) -> None:
        await self.pool.aclose()

    # -- open ------------------------------------------------------------------

    async def open(self, req: Request) -> Body:
        """Retrieve a file (streaming) or a directory listing (``Body.entries``)."""
        opts = self.options(req, FTPOptions)
        furl, plan = self._plan(req.url, opts)  # UnsafeURL here, before any connection

        async def acquire(fresh: bool) -> Lease[_Control]:
            conn = await self._acquire(furl, plan, opts, req, fresh=fresh)
            assert conn.lease is not None
            return conn.lease

        async def step(lease: Lease[_Control]) -> Body:
            return await self._open_on(lease.conn, req, furl, plan, opts)

        # A reused connection the server dropped (or closed with 421) while idle: one fresh try.
        return await self.pool.run(acquire, step)

    # -- stat ------------------------------------------------------------------

    async def stat(self, req: Request) -> Stat:
        """Size, time and kind without a transfer: MLST when FEAT offers it, else
        TYPE I + SIZE + MDTM; a name SIZE does not know that CWD accepts is a directory."""
        opts = self.options(req, FTPOptions)
        furl, plan = self._plan(req.url, opts)

        async def acquire(fresh: bool) -> Lease[_Control]:
            conn = await self._acquire(furl, plan, opts, req, fresh=fresh)
            assert conn.lease is not None
            return conn.lease

        async def step(lease: Lease[_Control]) -> Stat:
            conn = lease.conn
            try:
                result = await self._stat_on(conn, furl, plan, opts)
            except BaseException as exc:
                await self._release(conn, conn.in_step_after(exc), opts)
                raise
            await self._release(conn, True, opts)
            return result

        # as in open(): a reused connection the server dropped while idle gets one fresh try
        return await self.pool.run(acquire, step)

    async def _stat_on(self, conn: _Control, url: FTPURL, plan: Plan, opts: FTPOptions) -> Stat:
        await conn.change_dirs(plan.cwds)
        name = plan.argument
        if not url.name:  # "ftp://host/dir/": a directory if the CWDs (or, nocwd, one CWD) succeed
            feats = await conn.features_list() if opts.use_mlsd else set()
            item = None
            if "MLST" in feats or (opts.use_mlsd and not feats):
                reply = await conn.cmd("MLST", name or None)
                item = proto.parse_mlst(reply)
                if item is None and reply.kind == 5 and reply.code not in (500, 501, 502, 504):
                    raise conn.refuse(reply, _show("MLST", name or None), url)
            if item is None and name:
                conn.cwd_path = None
                await conn.expect("CWD", name)
            return self._stat_result(url, "directory", item)
        feats = await conn.features_list() if opts.use_mlsd else set()
        # FEAT with nothing in it (or refused, as aioftp.Server does) says nothing: MLST may still work.
        if "MLST" in feats or (opts.use_mlsd and not feats):
            reply = await conn.cmd("MLST", name)
            item = proto.parse_mlst(reply)
            if item is not None:
                return self._stat_result(url, item.kind, item)
            if reply.kind == 5 and reply.code not in (500, 501, 502, 504):
                raise conn.refuse(reply, f"MLST {name}", url)
        # SIZE counts bytes of the binary representation (RFC 3659 4); some servers refuse it under A.
        await conn.set_type("I")
        size_reply = await conn.cmd("SIZE", name)
        size = proto.parse_size(size_reply)
        if size is None and size_reply.code not in (500, 502, 504):
            if await self._is_directory(conn, url, name):
                return Stat(str(url), kind="directory", meta={"ftp_reply": size_reply.text})
            raise conn.refuse(size_reply, f"SIZE {name}", url)
        mdtm_reply = await conn.cmd("MDTM", name)
        modified = proto.parse_mdtm(mdtm_reply)
        if size is None and modified is None:
            if await self._is_directory(conn, url, name):
                return Stat(str(url), kind="directory")
            if mdtm_reply.code not in (500, 502, 504):
                raise conn.refuse(mdtm_reply, f"MDTM {name}", url)
            raise NotSupported(f"the server has neither MLST, SIZE nor MDTM ({mdtm_reply.text})", url=url)
        return Stat(str(url), kind="file", size=size, modified=modified,
                    content_type=guess_content_type(url.name), meta={"ftp_reply": size_reply.text})

    @staticmethod
    async def _is_directory(conn: _Control, url: FTPURL, name: str) -> bool:
        """CWD into *name*: 250 means a directory (the connection's place is then unknown)."""
        conn.cwd_path = None
        reply = await conn.cmd("CWD", name)
        return reply.code == 250

    @staticmethod
    def _stat_result(url: FTPURL, kind: str, item: proto.ListItem | None) -> Stat:
        if item is None:
            return Stat(str(url), kind=kind)
        return Stat(str(url), kind=item.kind if item.known else kind,
                    size=item.size if item.kind != "directory" else None, modified=item.modified,
                    content_type=guess_content_type(url.name) if item.kind == "file" else None,
                    meta={"ftp_facts": dict(item.facts)})

    async def _open_on(self, conn: _Control, req: Request, furl: FTPURL, plan: Plan, opts: FTPOptions) -> Body:
        handed_over = False
        try:
            await conn.change_dirs(plan.cwds)
            if plan.action == "NLST":
                body = await self._nlst(conn, req, furl, plan, opts)
            elif plan.action == "LIST":
                body = await self._listing(conn, req, furl, plan.argument or None, furl.cwd, opts)
            else:
                body, streaming = await self._retr(conn, req, furl, plan, opts)
                if streaming:  # the body's stream releases the connection when done
                    handed_over = True
                    return body
            body = apply_length(body, req.length)  # a listing: already in memory
        except BaseException as exc:
            if not handed_over:  # a refusal (550...) leaves the connection in step: keep it
                await self._release(conn, conn.in_step_after(exc), opts)
            raise
        await self._release(conn, True, opts)
        return body

    async def _retr(self, conn: _Control, req: Request, url: FTPURL, plan: Plan,
                    opts: FTPOptions) -> tuple[Body, bool]:
        """RETR as a streaming Body (True), or the 550 fallback's listing (False)."""
        offset, length = req.offset, req.length
        await conn.set_type(plan.type)
        total: int | None = None
        limit = req.max_size
        want_size = (plan.type == "I" and opts.use_size and conn.size_ok
                     and not (conn.size_in_150 and not offset and limit is None))
        if want_size and limit is not None:
            # the caller's limit is checked before RETR: SIZE on its own, never pipelined with RETR
            want_size = False
            reply = await conn.cmd("SIZE", plan.argument)
            total = proto.parse_size(reply)
            if reply.code in (500, 502):
                conn.size_ok = False
            if total is not None:
                self._check_limit(conn, url, total, offset, length, limit)
        chunk_size = req.limits.chunk_size

        loop = conn.loop

        def factory() -> _Reader:
            return _Reader(chunk_size, loop=loop)

        begun: tuple[_DataChannel, Reply] | None = None
        if (opts.pipeline and opts.passive and opts.epsv and conn.epsv_seen and conn.tls is None
                and not offset):
            total, pchan, preply = await _DataChannel.pipelined(conn, plan, factory, want_size)
            want_size = False  # asked already
            if pchan is not None and preply is not None:
                begun = pchan, preply
        if begun is not None:
            chan, reply = begun
        else:
            if want_size:
                reply = await conn.cmd("SIZE", plan.argument)
                total = proto.parse_size(reply)
                if reply.code in (500, 502):
                    conn.size_ok = False
            chan = await _DataChannel.prepare(conn, opts, factory)
        reader: _AnyReader | None = None
        try:
            if begun is None:
                if offset:
                    await conn.expect("REST", str(offset), ok=(3,))
                reply = await conn.cmd("RETR", plan.argument)
            if reply.kind != 1:
                if reply.code == 550 and plan.fallback:
                    self._close_data(chan, reader)
                    return await self._fallback_listing(conn, req, url, plan, opts, reply), False
                raise conn.refuse(reply, f"RETR {plan.argument}", url)
            size150 = proto.parse_150_size(reply)
            announced = total if total is not None else size150
            if announced is not None and announced <= _SMALL and chan.direct():
                reader = _SocketReader(chan.take_socket(), loop)
            else:
                reader = await chan.connect()
        except BaseException:
            self._close_data(chan, reader)
            raise
        if size150 is not None and plan.type == "I":
            conn.size_in_150 = True
        if total is None:
            total = size150
        # Under TYPE A the server's byte count is not what arrives after CRLF -> "\n".
        size = max(total - offset, 0) if total is not None and plan.type == "I" else None
        if length is not None and size is not None and length >= size:
            length = None  # the range reaches the end: let the transfer finish with its 226
        started: list[bool] = []
        chunks = self._stream(conn, req, url, reader, opts, plan.type == "A", size, length, started)

        async def on_close() -> None:
            # A generator closed before its first step never runs its finally: release here.
            if not started:
                assert reader is not None
                await self._release(conn, await self._abort_transfer(conn, reader, req), opts)
        body_size = size if length is None else (length if size is None else min(size, length))
        # the type is guessed only when asked for: a download never asks, and a process that
        # never guesses does not load mimetypes and its tables (as the file and gopher handlers)
        return Body(url, chunks, content_type=functools.partial(_content_type, url.name), size=body_size,
                    offset=offset, meta={"ftp_type": plan.type, "ftp_reply": reply.text}, on_close=on_close,
                    resumable=plan.type == "I"), True  # REST offsets count bytes only under TYPE I

    @staticmethod
    def _check_limit(conn: _Control, url: FTPURL, total: int, offset: int, length: int | None, limit: int) -> None:
        """The caller's TransferError for a file SIZE says is over its limit, before any RETR
        (the connection stays in step and is kept)."""
        size = max(total - offset, 0) if length is None else min(max(total - offset, 0), length)
        if size <= limit:
            return
        part = f" ({size} of them from byte {offset})" if offset or length is not None else ""
        conn.refused = err = TransferError(
            f"resource is {total} bytes{part}, larger than the limit of {limit} bytes "
            "(SIZE said so; not retrieved)", url=url)
        raise err

    @staticmethod
    def _close_data(chan: _DataChannel, reader: _AnyReader | None) -> None:
        chan.close()
        if reader is not None:
            reader.close()

    async def _abort_transfer(self, conn: _Control, reader: _AnyReader, req: Request) -> bool:
        """Stop a transfer we no longer want (RFC 959 ABOR); True when the control
        connection is known to be back in step, so it may be reused.

        The data connection is closed first: servers that only read commands between
        transfers (vsftpd without async_abor_enable) then fail their write and answer
        426, and the ABOR reply (225/226) follows. Which replies come depends on whether
        the transfer had already ended, so a NOOP is sent along: its 200 marks the end.
        """
        reader.close()
        try:
            async with asyncio.timeout(req.bound(min(req.read_timeout or 5.0, 5.0))):
                await conn.send("ABOR")
                await conn.send("NOOP")
                # 426 + 226, or 226 (transfer) + 225/226 (ABOR), then NOOP's 200. ABOR's own reply
                # always comes first, so a 200 in first place (a server answering ABOR with 200) is not NOOP's.
                for i in range(5):
                    reply = await conn.reply()
                    if reply.code == 200 and i > 0:
                        return True
                    if reply.kind not in (2, 4):
                        return False
        except (AnyURLError, TimeoutError):
            pass
        return False

    async def _stream(self, conn: _Control, req: Request, url: FTPURL, reader: _AnyReader, opts: FTPOptions,
                      ascii_mode: bool, expected: int | None, length: int | None,
                      started: list[bool]) -> AsyncIterator[bytes]:
        """The data connection's bytes. *expected*: the announced size (more or fewer
        bytes are errors); *length*: stop after that many bytes and ABOR the rest."""
        started.append(True)
        ok = False
        received = 0
        left = length
        decoder = proto.CRLFDecoder() if ascii_mode else None
        timeout = req.read_timeout
        try:
            if left is not None and left <= 0:
                ok = await self._abort_transfer(conn, reader, req)
                return
            while True:
                try:
                    chunk = await reader.next_chunk(timeout)
                except TimeoutError as exc:
                    raise FetchTimeout(_waited(req, "data"), url=url) from exc
                except (OSError, ssl.SSLError) as exc:
                    raise TruncatedTransfer(f"data connection failed after {received} bytes: {exc}",
                                            url=url) from exc
                if chunk is None:
                    break
                received += len(chunk)
                if expected is not None and received > expected:
                    # Never report success for a body that does not match its SIZE, long or short.
                    if (keep := expected - (received - len(chunk))) > 0 and left is None:
                        yield chunk[:keep]
                    raise OverlongTransfer(f"the server sent more bytes than announced: over {received} "
                                           f"bytes where SIZE said {expected}", url=url)
                if decoder is not None:
                    chunk = decoder.feed(chunk)
                    if not chunk:
                        continue
                if left is not None and len(chunk) >= left:
                    # The range is complete: stop the transfer before handing over its last bytes,
                    # so the connection is back in the pool when the caller sees the end.
                    ok = await self._abort_transfer(conn, reader, req)
                    yield chunk[:left]
                    return
                if left is not None:
                    left -= len(chunk)
                yield chunk
            if decoder is not None and (tail := decoder.flush()):
                yield tail
            reader.close()
            try:
                final = await conn.reply()
            except (ConnectError, FetchTimeout) as exc:
                raise TruncatedTransfer(f"no end-of-transfer reply after {received} bytes "
                                        f"(226 missing): {exc.message}", url=url) from exc
            if final.kind != 2:
                if final.code in (426, 451, 551, 552) or final.kind == 4:
                    raise TruncatedTransfer(f"transfer aborted after {received} bytes: {final.text}",
                                            url=url, reply=final.text)
                raise proto.error_for(final, "RETR", url)
            if expected is not None and received < expected:
                raise TruncatedTransfer(f"data connection closed after {received} of {expected} bytes",
                                        url=url, reply=final.text)
            ok = True
        except GeneratorExit:
            # The caller stopped reading (closed the body early): ABOR, keep the connection if in step.
            ok = await self._abort_transfer(conn, reader, req)
            raise
        finally:
            reader.close()
            await self._release(conn, ok, opts)

    async def _fallback_listing(self, conn: _Control, req: Request, url: FTPURL, plan: Plan, opts: FTPOptions,
                                retr_reply: Reply) -> Body:
        """RETR said 550 and there was no typecode: maybe the name is a directory (as urllib, Lynx)."""
        if opts.cwd_strategy == "nocwd":
            return await self._listing(conn, req, url, plan.argument, (*url.cwd, url.name), opts,
                                       not_found=retr_reply)
        conn.cwd_path = None
        reply = await conn.cmd("CWD", url.name)
        if reply.code != 250:
            raise conn.refuse(retr_reply, f"RETR {plan.argument}", url)
        return await self._listing(conn, req, url, None, (*url.cwd, url.name), opts)

    async def _read_listing(self, conn: _Control, req: Request, url: FTPURL, verb: str, arg: str | None,
                            opts: FTPOptions) -> tuple[Reply, _Listing]:
        """Run one listing command, parsing entry by entry as the data arrives; a failed
        reply is returned, not raised. Beyond ``Limits.max_entries`` entries the transfer
        is aborted (ABOR) at once: memory grows with the entries kept, not with what the
        server sends."""
        chan = await _DataChannel.prepare(conn, opts, lambda: _Reader(1 << 16))
        reader: _Reader | None = None
        listing = _Listing(proto.ListParser(verb if verb in ("MLSD", "NLST") else "LIST"))
        limits = req.limits
        try:
            reply = await conn.cmd(verb, arg)
            if reply.kind != 1:
                self._close_data(chan, reader)
                return reply, listing
            reader = await chan.connect()
            splitter = proto.LineSplitter(limits.max_line)

            def take(lines: list[str]) -> None:
                for line in lines:
                    listing.lines += 1
                    if listing.first is None:
                        listing.first = line
                    elif listing.lines > 2 * limits.max_entries + 16:  # endless lines we cannot parse
                        raise ProtocolError(f"listing has more than {2 * limits.max_entries + 16} lines "
                                            f"and at most {limits.max_entries} entries are allowed", url=url)
                    keep(listing.parser.feed(line))

            def keep(items: list[proto.ListItem | None]) -> None:
                for item in items:
                    if item is not None:
                        if len(listing.items) >= limits.max_entries:
                            raise ProtocolError(f"listing has more than {limits.max_entries} entries", url=url)
                        listing.items.append(item)
            while True:
                try:
                    chunk = await reader.next_chunk(req.read_timeout)
                except TimeoutError as exc:
                    raise FetchTimeout(_waited(req, "listing data"), url=url) from exc
                except (OSError, ssl.SSLError) as exc:
                    raise TruncatedTransfer(f"listing data connection failed: {exc}", url=url) from exc
                if chunk is None:
                    break
                try:
                    take(splitter.feed(chunk))
                except ProtocolError as exc:
                    await self._abort_transfer(conn, reader, req)  # stop the server sending the rest
                    raise ProtocolError(exc.message, url=url) from None
            take(splitter.flush())
            keep(listing.parser.flush())
            reader.close()
            try:
                final = await conn.reply()
            except (ConnectError, FetchTimeout) as exc:
                raise TruncatedTransfer(f"listing ended without its 226 reply: {exc.message}", url=url) from exc
            if final.kind != 2:
                raise TruncatedTransfer(f"listing aborted: {final.text}", url=url, reply=final.text)
        except BaseException:
            self._close_data(chan, reader)
            raise
        return reply, listing

    async def _listing(self, conn: _Control, req: Request, url: FTPURL, arg: str | None,
                       directory: tuple[str, ...], opts: FTPOptions, not_found: Reply | None = None) -> Body:
        """The best listing the server offers: MLSD (if FEAT has it), else LIST, else NLST."""
        items: list[proto.ListItem] | None = None
        reply: Reply | None = None
        feats = await conn.features_list() if opts.use_mlsd else set()
        if feats & {"MLST", "MLSD"}:  # RFC 3659 advertises MLST; MLSD comes with it
            # no TYPE A: MLSD's format does not depend on TYPE (RFC 3659's examples list under
            # BINARY), so a connection that moves files keeps its TYPE I
            reply, listing = await self._read_listing(conn, req, url, "MLSD", arg, opts)
            if reply.kind == 1:
                items = listing.items
                _log_unread(url, listing.parser)
        if items is None and (reply is None or reply.code in (500, 501, 502, 504)):
            await conn.set_type("A")  # LIST and NLST are ASCII (RFC 959)
            reply, listing = await self._read_listing(conn, req, url, "LIST", arg, opts)
            if reply.kind == 1:
                items = listing.items
                parsed = listing.parser
                if parsed.unread and not parsed.entries:
                    # no line in a format we read: NLST at least names every entry
                    nlst_reply, names = await self._read_listing(conn, req, url, "NLST", arg, opts)
                    if nlst_reply.kind == 1 and names.items:
                        log.warning("%s: no line of the LIST reply in a known format (%d lines, first %r): "
                                    "names from NLST instead", mask_password(str(url)), parsed.unread,
                                    parsed.samples[0])
                        return self._listing_body(url, directory, names.items, "nlst", conn.login_dir)
                _log_unread(url, parsed)
        if items is None and reply is not None and reply.code in (500, 501, 502, 504):
            reply, listing = await self._read_listing(conn, req, url, "NLST", arg, opts)
            if reply.kind == 1:
                items = listing.items
        if items is None:
            assert reply is not None
            failed = not_found or reply
            raise conn.refuse(failed, "listing", url)
        return self._listing_body(url, directory, items, "ftp_listing", conn.login_dir)

    async def _nlst(self, conn: _Control, req: Request, url: FTPURL, plan: Plan, opts: FTPOptions) -> Body:
        """typecode d: NLST with the name (section 3.2.2)."""
        await conn.set_type("A")
        arg = plan.argument or None
        reply, listing = await self._read_listing(conn, req, url, "NLST", arg, opts)
        if reply.kind != 1:
            raise conn.refuse(reply, _show("NLST", arg), url)
        directory = url.cwd
        if url.name and not (listing.lines == 1 and listing.first == url.name):
            directory = (*url.cwd, url.name)
        return self._listing_body(url, directory, listing.items, "nlst", conn.login_dir)

    def _listing_body(self, url: FTPURL, directory: tuple[str, ...], items: list[proto.ListItem],
                      source: str, login_dir: str | None) -> Body:
        child = proto.child_urls(url, directory)  # the directory's URL text built once
        entries = [_entry(child, url, directory, i, login_dir) for i in items]
        data = render_entries(entries)
        return Body.from_bytes(url, data, content_type="text/plain", entries=entries, charset="utf-8",
                               meta={"listing": source})

    # -- upload ----------------------------------------------------------------

    async def upload(self, req: Request, source: Any) -> None:
        """STOR *source* (bytes, a local path or a binary file object) at ``req.url``: to a
        temporary name, then RNFR/RNTO. A URL ending in "/" stores the source's base name in
        that directory (as ``curl -T``); a source without a name is refused there.

        How it was stored is logged on the "anyurl.ftp" logger: "temp-dot" (``.name.XXXX.part``),
        "temp" (``name.XXXX.part``, when the server refuses dot names) at INFO, or "direct" (STOR
        of the name itself: no rename, or no temporary name allowed; not atomic) at WARNING.
        """
        url = req.url
        opts = self.options(req, FTPOptions)
        if isinstance(url, FTPURL) and not url.name and url.typecode is None:
            url = url.__replace__(name=_source_name(source, url))  # ftp://h/dir/: dir/<base name>
        furl, plan = self._plan(url, opts)
        if not furl.name or furl.typecode == "d":
            raise ConfigurationError("an upload URL needs a file name", url=url)
        path: str | BinaryIO | None = None
        data: bytes | None = None
        if isinstance(source, (bytes, bytearray, memoryview)):
            data = bytes(source)
        elif isinstance(source, (str, os.PathLike)):
            path = os.fsdecode(source)
            if not os.path.isfile(path):  # noqa: ASYNC240 - one stat
                raise ConfigurationError(f"no such file to upload: {path}", url=url)
        elif callable(getattr(source, "read", None)) and not isinstance(source, io.TextIOBase):
            path = source
        else:
            raise ConfigurationError("upload source must be bytes, a file path or a file object "
                                     "opened in binary mode", url=url)
        conn = await self._acquire(furl, plan, opts)
        try:
            await conn.change_dirs(plan.cwds)
            await conn.set_type("I")
            method = await self._store(conn, req, furl, plan.argument, data, path, opts)
        except BaseException as exc:
            await self._release(conn, conn.in_step_after(exc), opts)
            raise
        await self._release(conn, True, opts)
        if method == "direct" and opts.atomic_upload:
            log.warning("%s: stored directly (not atomic): the server refused the temporary names or "
                        "renaming", mask_password(str(furl)))
        else:
            log.info("%s: stored by %s", mask_password(str(furl)), method)

    async def _store(self, conn: _Control, req: Request, url: FTPURL, final: str, data: bytes | None,
                     path: str | BinaryIO | None, opts: FTPOptions) -> str:
        """STOR under each temporary name the server accepts, then RNFR/RNTO; the method used."""
        if not opts.atomic_upload:
            await self._stor(conn, req, url, final, data, path, opts)
            return "direct"
        import secrets  # uploads only: not at start-up

        token = secrets.token_hex(4)
        for method, temp in proto.upload_names(final, token):
            if temp is None:
                break
            try:
                await self._stor(conn, req, url, temp, data, path, opts, discard=True)
            except (ProtocolError, AccessDenied, ResourceNotFound) as exc:
                # Pure-FTPd answers 553 to dot names for anonymous users, ProFTPD's PathDenyFilter
                # 550: try the next pattern, and in the end the name itself.
                if not proto.retry_stor_name(exc.reply):
                    raise
                continue
            reply = await conn.cmd("RNFR", temp)
            if reply.code == 350:
                await conn.expect("RNTO", final)
                return method
            await conn.cmd("DELE", temp)
            if reply.code not in (500, 502, 504):
                raise conn.refuse(reply, f"RNFR {temp}", url)
            break  # no rename on this server: store under the final name
        await self._stor(conn, req, url, final, data, path, opts)
        return "direct"

    async def _stor(self, conn: _Control, req: Request, url: FTPURL, name: str, data: bytes | None,
                    path: str | BinaryIO | None, opts: FTPOptions, *, discard: bool = False) -> None:
        """STOR *name*; with *discard* (a temporary name), a transfer that failed with the
        connection in step is followed by DELE of what the server kept of it."""
        chan = await _DataChannel.prepare(conn, opts, _Writer)
        writer: _Writer | None = None
        # a file object is rewound after a failure: the next temporary name sends it all again
        start = path.tell() if not isinstance(path, str | None) and path.seekable() else None
        try:
            reply = await conn.cmd("STOR", name)
            if reply.kind != 1:
                raise conn.refuse(reply, f"STOR {name}", url)
            writer = await chan.connect()
            timeout = req.read_timeout
            lost: OSError | None = None
            try:
                if data is not None:
                    await writer.write(data, timeout)
                else:
                    assert path is not None
                    size = req.limits.chunk_size
                    if isinstance(path, str):
                        with open(path, "rb") as f:  # noqa: ASYNC230 - local file reads are short
                            while block := f.read(size):
                                await writer.write(block, timeout)
                    else:  # the caller's file object, from where it stands (left open)
                        while block := path.read(size):
                            await writer.write(block, timeout)
                assert writer.transport is not None
                writer.transport.close()
                async with asyncio.timeout(timeout):
                    await writer.closed
            except TimeoutError as exc:
                raise FetchTimeout("timed out sending data", url=url) from exc
            except OSError as exc:
                # The server may have ended the transfer itself (disk full, quota): its reply
                # (426, 452, 552...) then completes STOR and the control connection is in step.
                lost = exc
                writer.abort()
            try:
                final = await conn.reply()
            except (ConnectError, FetchTimeout) as exc:
                if lost is None:
                    raise
                raise TruncatedTransfer(f"data connection failed during STOR: {lost}; "
                                        f"no reply after it: {exc.message}", url=url) from lost
            if final.kind == 2 and lost is not None:
                conn.refused = err = TruncatedTransfer(  # the reply came: in step
                    f"data connection failed during STOR {name}: {lost} (the server said {final.text})",
                    url=url, reply=final.text)
                raise err
            if final.kind != 2:
                raise conn.ended(final, f"STOR {name}", url)
        except BaseException as exc:
            if start is not None:
                assert not isinstance(path, str | None)
                path.seek(start)
            if writer is not None and discard and conn.in_step_after(exc):
                await self._discard(conn, name)
            raise
        finally:
            chan.close()
            if writer is not None:
                writer.close()

    @staticmethod
    async def _discard(conn: _Control, name: str) -> None:
        """DELE the part a failed STOR left under a temporary name (best effort: the STOR's
        error is the one reported; a DELE that fails to complete drops the connection)."""
        try:
            await conn.cmd("DELE", name)
        except AnyURLError:
            pass


def _log_unread(url: FTPURL, parser: proto.ListParser) -> None:
    """One warning per listing with lines in no known format (each kept as an "info" entry)."""
    if parser.unread:
        log.warning("%s: %d %s line(s) in no known format, listed as kind 'info' entries (first %r)",
                    mask_password(str(url)), parser.unread, parser.command, parser.samples[0])


def _entry(child: Callable[[proto.ListItem], str], url: FTPURL, directory: tuple[str, ...], item: proto.ListItem,
           login_dir: str | None = "/") -> Entry:
    """The Entry of one listed name (*child*: its URL, from :func:`proto.child_urls`):
    a symlink keeps its target (meta) and is keyed by it
    (an absolute target resolved on the server's paths, see :func:`proto.symlink_key`).
    A line in no known format (kind "info") has no URL; its text is the title."""
    if item.kind == "info":
        meta = dict(item.meta)
        return Entry(name=item.name, url=None, kind="info", title=meta.pop("line", None), meta=meta)
    meta = dict(item.meta)
    key = None
    if item.target:
        meta["target"] = item.target
        key = proto.symlink_key(url, directory, item.target, login_dir)
    if not item.known:
        meta["kind_known"] = False  # NLST, or a type the listing does not call a file
    return Entry(name=item.name, url=child(item), kind=item.kind, size=item.size,
                 modified=item.modified, key=key, meta=meta)

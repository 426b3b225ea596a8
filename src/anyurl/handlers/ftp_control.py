"""The FTP control connection: lines in and out, and the loop that runs a session's ops.

What to send and what a reply means is decided by :class:`anyurl.protocols.ftpsession.Session`;
:meth:`Control.run` carries out the events its ops yield: writes commands, reads replies
(bounded lines, one read-timeout watchdog per connection), and opens the data connections
(:mod:`anyurl.handlers.ftp_data`). Commands and replies are logged at DEBUG (passwords masked).
"""

from __future__ import annotations

import asyncio
import logging
import socket
import ssl
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, BinaryIO, TypeVar, cast

from ..errors import AnyURLError, ConnectError, FetchTimeout, ProtocolError, TruncatedTransfer
from ..net.bulk import BulkReader
from ..net.connect import lost, start_tls
from ..net.pingpong import CommandConnection
from ..protocols import ftpsession as fs
from ..protocols.ftp import Reply
from .ftp_data import SMALL, AnyReader, DataChannel, SocketReader, Writer

if TYPE_CHECKING:
    import logging

    from ..net.pool import Lease
    from ..response import Capture
    from ..urls import FTPURL, URL
    from .base import Context, Request

__all__ = ["Control", "PoolKey", "waited"]

T = TypeVar("T")
PoolKey = tuple[str, int, str, "str | None", str]


def waited(req: Request, what: str) -> str:
    """What a wait for *what* that timed out ran into: the read timeout, or the total deadline
    (``Timeouts.total``), which cuts the read timeout short when it comes first."""
    deadline = req.deadline
    if deadline is not None and deadline - asyncio.get_running_loop().time() < 0.01:
        return (f"the total timeout (Timeouts.total={req.timeouts.total:g} s) ran out "
                f"while waiting for {what}")
    return f"timed out waiting for {what} (read timeout {req.timeouts.read:g} s)"


class Control(CommandConnection):
    """One logged-in control connection (a :class:`~anyurl.net.pool.Connection`)."""

    def __init__(self, context: Context, log: logging.Logger, key: PoolKey, url: FTPURL, host: str, port: int,
                 reader: asyncio.StreamReader, writer: asyncio.StreamWriter, tls: ssl.SSLContext | None,
                 req: Request) -> None:
        self.context = context  # the driver's: the password prompt
        self.key = key
        self.req = req  # the request using the connection now: its timeouts and limits apply
        self.lease: Lease[Control] | None = None
        self.session = fs.Session(url, req.limits.max_line, req.limits.max_reply_lines)
        self.host = host
        self.port = port
        super().__init__(reader, writer)
        self.tls = tls  # the context for data connections when PROT P is in force
        self.reused = False  # taken from the idle pool (it may have died while idle)
        self.log = log
        self.chan: DataChannel | None = None  # the data connection being set up
        self.data: AnyReader | None = None  # a RETR's data connection, once open
        self.upload: tuple[bytes | None, str | BinaryIO | None, int | None] = (None, None, None)
        self.upload_req: Request | None = None  # the upload's request: its timeouts apply to the data
        # a request whose commands are queued behind this connection's transfer (Session.follow):
        # set True when the connection is handed over to it, False when it must go elsewhere
        self.follower: asyncio.Future[bool] | None = None
        self.lone = False  # the request in progress takes no follower (it was made again after Behind)
        self.orphan: fs.Op[Any] | None = None  # the op of a queued request that gave up waiting (_release)
        self.on_awaiting: Callable[[Control], None] | None = None  # the handler's: see run()
        self._due: float | None = None  # when the line being waited for is late
        self._watchdog: asyncio.TimerHandle | None = None
        self._watchdog_at = 0.0
        self._late = False
        #: the capture of the request using the connection (``capture=True``): every command
        #: and reply line, and a listing's bytes, are noted in it
        self.capture: Capture | None = None
        # Looked up once: each transfer needs them, and asking again costs calls.
        peer = writer.get_extra_info("peername")
        self.peer: str = peer[0]
        self.family = socket.AF_INET6 if ":" in self.peer else socket.AF_INET
        self.loop = asyncio.get_running_loop()

    @property
    def url(self) -> URL:
        url = self.session.url
        assert url is not None
        return url

    @url.setter
    def url(self, url: URL) -> None:
        self.session.url = url

    @property
    def _timeout(self) -> float | None:
        req = self.req
        # without a total deadline the read timeout is the setting itself: no calls to work it out
        return req.timeouts.read if req.deadline is None else req.read_timeout

    # -- running a session's op ----------------------------------------------------

    async def run(self, op: fs.Op[T]) -> T:
        """Carry out *op*'s events until it returns; a failure of our I/O is thrown into it."""
        value: Any = None
        error: BaseException | None = None
        try:
            while True:
                try:
                    event = op.send(value) if error is None else op.throw(error)
                except StopIteration as stop:
                    result: T = stop.value
                    return result
                value = error = None
                try:
                    if event is fs.READ:
                        if self.session.awaiting_end and self.on_awaiting is not None:
                            self.on_awaiting(self)  # a request may queue behind this transfer now
                        value = await self.reply()
                    elif type(event) is fs.Send:
                        await self.send(event)
                    else:
                        value = await self._act(event)
                except BaseException as exc:  # noqa: BLE001 - thrown into the op, which re-raises
                    error = exc
        except BaseException:
            self.close_data()
            raise
        finally:
            value = error = None

    async def _act(self, event: fs.Event) -> Any:
        """The data-connection (and other non-byte) events of an op."""
        if type(event) is fs.DataPort:
            chan = self._new_channel(event.use)
            await chan.connect_tcp(event.port)
        elif type(event) is fs.DataOpen:
            opened = self.chan
            assert opened is not None
            announced = event.announced
            if announced is not None and announced <= SMALL and opened.direct():
                self.data = SocketReader(opened.take_socket(), self.loop)
            else:
                self.data = await opened.connect()
        elif type(event) is fs.DataEarly:
            chan = self._new_channel("retr")
            try:
                chan.start_connect(event.port)
            except OSError as exc:
                return exc
        elif event is fs.DATA_CHECK:
            assert self.chan is not None
            return self.chan.connect_error()
        elif event is fs.DATA_CLOSE:
            self.close_data()
        elif type(event) is fs.Receive:
            await self._receive(event.listing)
        elif event is fs.SEND_DATA:
            return await self._send_upload()
        elif type(event) is fs.DataListen:
            return self._new_channel(event.use).listen()
        elif event is fs.START_TLS:
            assert self.tls is not None
            await start_tls(self.url, self.writer, self.tls, self.host, self.port, timeout=self.req.connect_timeout)
        elif type(event) is fs.AskPassword:
            return await self.context.ask_password(event.user, event.host)
        else:  # pragma: no cover - a new event without its handler
            raise AssertionError(f"unknown FTP session event {event!r}")
        return None

    def _new_channel(self, use: str) -> DataChannel:
        self.close_data()
        if use == "stor":
            factory: Any = Writer
        elif use == "list":
            factory = lambda: BulkReader(1 << 16)  # noqa: E731
        else:
            chunk_size, loop = self.req.limits.chunk_size, self.loop
            factory = lambda: BulkReader(chunk_size, loop=loop)  # noqa: E731
        self.chan = chan = DataChannel(self, factory)
        return chan

    def close_data(self) -> None:
        """Close the data connection being set up, and a RETR's not yet handed over."""
        if self.chan is not None:
            self.chan.close()
            self.chan = None
        if self.data is not None:
            self.data.close()
            self.data = None

    def take_data(self) -> AnyReader:
        """The open RETR data connection, handed over to the caller."""
        data = self.data
        assert data is not None
        self.data = None
        self.chan = None
        return data

    async def _receive(self, listing: fs.Listing) -> None:
        """A listing's data connection, read to its end into *listing*; beyond
        ``Limits.max_entries`` entries the transfer is aborted (ABOR) at once."""
        chan = self.chan
        assert chan is not None
        reader: BulkReader = await chan.connect()
        req, url = self.req, self.url
        try:
            while True:
                try:
                    chunk = await reader.next_chunk(req.read_timeout)
                except TimeoutError as exc:
                    raise FetchTimeout(waited(req, "listing data"), url=url) from exc
                except OSError as exc:  # ssl.SSLError too
                    raise TruncatedTransfer(f"listing data connection failed: {exc}", url=url) from exc
                if chunk is None:
                    break
                if self.capture is not None:
                    self.capture.keeping().append(chunk)  # the listing as the server sent it
                try:
                    listing.feed(chunk)
                except ProtocolError as exc:
                    await self.abort_transfer(reader)  # stop the server sending the rest
                    raise ProtocolError(exc.message, url=url) from None
            try:
                listing.flush()
            except ProtocolError as exc:
                raise ProtocolError(exc.message, url=url) from None
        finally:
            reader.close()

    async def _send_upload(self) -> OSError | None:
        """STOR's data: connect, send the bytes, the file or the file object, close; the
        OSError that cut it short (the server may have ended it: its reply tells)."""
        chan = self.chan
        assert chan is not None
        data, path, start = self.upload
        if start is not None:  # a later try (another temporary name) sends it all again
            assert not isinstance(path, str | None)
            path.seek(start)
        writer: Writer = await chan.connect()
        req = self.upload_req or self.req
        timeout = req.read_timeout
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
            writer.close()
            raise FetchTimeout("timed out sending data", url=self.url) from exc
        except OSError as exc:
            writer.abort()
            return exc
        except BaseException:
            writer.close()
            raise
        return None

    async def abort_transfer(self, reader: AnyReader) -> bool:
        """Stop a transfer we no longer want (:meth:`Session.abort`); True when the control
        connection is known to be back in step, so it may be reused. The data connection
        is closed first."""
        reader.close()
        req = self.req
        try:
            async with asyncio.timeout(req.bound(min(req.read_timeout or 5.0, 5.0))):
                return await self.run(self.session.abort())
        except (AnyURLError, TimeoutError):
            pass
        return False

    # -- lines ---------------------------------------------------------------

    async def send(self, event: fs.Send) -> None:
        """Write *event*'s commands (several in one write: pipelined)."""
        line = event.data()
        commands = event.commands
        if self.capture is not None:
            for v, a in commands:
                self.capture.sent(fs.show(v, a))
        if self.log.isEnabledFor(logging.DEBUG):
            for v, a in commands:
                self.log.debug("%s:%s > %s", self.host, self.port, fs.show(v, a))
        try:
            await self.write(line, commands[0][0], self.url, self._timeout)
        except AnyURLError:
            self.session.broken = True
            raise

    def write_now(self, event: fs.Send) -> None:
        """Write *event*'s commands without waiting (a few bytes behind a transfer in progress:
        no drain; the transport buffers them)."""
        if self.log.isEnabledFor(logging.DEBUG):
            for v, a in event.commands:
                self.log.debug("%s:%s > %s (queued)", self.host, self.port, fs.show(v, a))
        try:
            self.write_nowait(event.data(), event.commands[0][0], self.url)
        except AnyURLError:
            self.session.broken = True
            raise

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
            raise FetchTimeout(waited(self.req, "a reply line"), url=self.url) from exc
        finally:
            self._due = None
        if len(line) > limit:
            raise ProtocolError(f"reply line longer than {limit} bytes", url=self.url)
        return line

    async def reply(self) -> Reply:
        session = self.session
        while True:
            try:
                line = await self._readline()
            except AnyURLError:
                session.broken = True
                raise
            except OSError as exc:
                session.broken = True
                raise lost(exc, self.url, "reading a reply") from exc
            if not line:
                session.broken = True
                raise ConnectError("the server closed the control connection", url=self.url)
            if self.capture is not None:
                self.capture.received(line)
            try:
                reply = session.receive_line(line)
            except ProtocolError as exc:
                session.broken = True
                raise ProtocolError(exc.message, url=self.url) from exc
            if reply is not None:
                if self.log.isEnabledFor(logging.DEBUG):
                    self.log.debug("%s:%s < %s", self.host, self.port, reply.text)
                return reply

    # -- state ---------------------------------------------------------------

    def in_step_after(self, exc: BaseException) -> bool:
        """True when *exc* came from a refusal that left the connection in step."""
        return self.session.in_step_after(exc)

    def is_reusable(self) -> bool:
        """Logged in, open, and nothing unread: the pool may lend it again."""
        return self.session.login_dir is not None and not self.stale()

    async def reset_for(self, target: tuple[Request, tuple[str, ...], bool]) -> bool:
        """*target*: the request, its CWDs and whether they may go as one (Plan.joinable)."""
        self.req, cwds, joinable = target
        self.url = cast("FTPURL", self.req.url)
        if self.stale():
            return False
        return await self.run(self.session.reset(cwds, joinable))

    async def aclose(self) -> None:
        await self.quit()

    def stale(self) -> bool:
        """True when the server closed this idle connection (or sent something unasked)."""
        return self.session.broken or super().stale()

    def _stop_watchdog(self) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None

    def abort(self) -> None:
        self.session.broken = True
        self._stop_watchdog()
        super().abort()

    async def quit(self) -> None:
        """QUIT and close. On a plain connection the 221 is not waited for: the pool closes its
        idle connections one after another, and on a real network each wait was a round trip at
        the end of every run (8 connections at 50 ms: 0.4 s). Over TLS the reply is read first,
        so that the TLS close that follows meets a server still there."""
        try:
            if not self.stale():
                self.writer.write(b"QUIT\r\n")
                if self.writer.get_extra_info("ssl_object") is not None:
                    async with asyncio.timeout(2):
                        await self.reply()
        except (AnyURLError, OSError, RuntimeError, TimeoutError):
            pass
        finally:
            self._stop_watchdog()
            await self.hang_up()

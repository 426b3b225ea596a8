"""The lean HTTP/1.1 driver: keep-alive connections on the shared pool, no aiohttp.

:class:`H1Connection` is an ``asyncio.Protocol`` holding one socket and the
:class:`~anyurl.protocols.http1.ResponseReader` of the response in flight;
:class:`H1Client` lends connections from one :class:`~anyurl.net.pool.Pool`
(``Limits.per_host``, ``Limits.max_idle``, the stale-connection retry) and
returns a :class:`LeanResponse` per request. The policy around it (redirects,
ranges, decoding, errors) is :mod:`anyurl.handlers.http`'s, shared with the
aiohttp path.

Costs are per transfer: one watchdog timer enforces the read timeout (no
timer per chunk); body pieces are the bytes objects the transport received
(sliced only at a Content-Length boundary); reading pauses while more than one
receive's worth waits unread. The transport's receive size starts at 64 KiB
and grows (x4) while receives come back full, up to ``Limits.chunk_size``
shared out among the streams running at once, so 128 slow streams do not each
hold a megabyte.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import ssl
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, cast

from ..errors import AnyURLError, ConnectError, FetchTimeout, os_reason
from ..net.pool import Lease, Pool, connect_target
from ..protocols.http1 import Headers, ResponseReader, header_block, request_start, request_tail
from ..protocols.mime import content_type_of

if TYPE_CHECKING:
    from ..settings import Request

__all__ = ["H1Client", "H1Connection", "LeanResponse"]

_START = 1 << 16
# receive sizes of all lean streams together stay near this (each at least _START)
_BUDGET = 8 << 20
_streams = 0  # bodies being read now, in this process

_Key = tuple[str, str, int]


class H1Connection(asyncio.BaseProtocol):
    """One HTTP/1.1 connection (a :class:`~anyurl.net.pool.Connection`).

    On asyncio's own loop the transport's ``max_size`` sets the receive size;
    elsewhere (uvloop) :func:`connection_class` picks :class:`H1BufferedConnection`,
    which reads into a buffer of that size (uvloop's own reads are 250 KB).
    """

    def __init__(self, key: _Key, chunk_size: int) -> None:
        self.key = key
        self.transport: asyncio.Transport | None = None
        self.reader: ResponseReader | None = None
        self._loop = asyncio.get_running_loop()
        self._chunks: collections.deque[bytes] = collections.deque()
        self._queued = 0
        self._exc: BaseException | None = None
        self._lost = False
        self._paused = False
        self._waiter: asyncio.Future[None] | None = None
        self._watchdog: asyncio.TimerHandle | None = None
        self._timeout: float | None = None
        self._last = self._loop.time()
        self._chunk_size = chunk_size
        self._size = min(_START, chunk_size)  # the transport's receive size now
        self._sizable = False
        self._dropped = False  # connection_lost came: the socket is closed
        self._gone: asyncio.Future[None] | None = None  # what aclose waits on for connection_lost

    # -- protocol side -------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's has the same API
        # asyncio's own transport reads max_size bytes per recv (256 KiB): start small
        self._sizable = isinstance(getattr(transport, "max_size", None), int)
        if self._sizable:
            transport.max_size = self._size  # type: ignore[attr-defined]

    def data_received(self, data: bytes) -> None:
        r = self.reader
        if r is None or self._exc is not None:
            # unasked bytes on an idle connection: it cannot be trusted with a request
            self._exc = self._exc or ConnectError("server sent data while no request was made", url=None)
            if self.transport is not None:
                self.transport.close()
            return
        self._last = self._loop.time()
        try:
            pieces = r.feed(data)
        except AnyURLError as exc:
            self._fail(exc)
            return
        if pieces:
            if len(pieces) == 1:
                self._chunks.append(pieces[0])
                self._queued += len(pieces[0])
            else:
                self._chunks.extend(pieces)
                self._queued += sum(map(len, pieces))
            if self._sizable:
                full = len(data) >= self._size
                if full or self._size > _START:  # (a short receive at the start size changes nothing)
                    self._resize(full)
            elif len(data) >= _START and isinstance(self, H1BufferedConnection):
                self._read_into_buffer()
            if self._queued >= 2 * self._size and not self._paused and not r.complete:
                self._paused = True
                assert self.transport is not None
                self.transport.pause_reading()
        w = self._waiter
        if w is not None and (pieces or r.complete or r.head_done) and not w.done():
            w.set_result(None)  # (_wake, inline)

    def eof_received(self) -> bool | None:
        self._end()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        if not self._lost:
            self._lost = True
            if exc is not None and self._exc is None and self.reader is not None \
                    and not self.reader.complete:
                self._exc = ConnectError(f"connection lost: {exc}", url=self.reader.url)
            self._end()
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        self._dropped = True
        gone = self._gone
        if gone is not None and not gone.done():
            gone.set_result(None)

    # -- internals -----------------------------------------------------------------

    def _end(self) -> None:
        self._lost = True
        r = self.reader
        if r is not None and self._exc is None and not r.complete:
            if not r.head_done and not r.started:
                # nothing of a reply: on a reused connection, the server closed it while idle
                self._exc = ConnectError("server closed the connection before answering", url=r.url)
            else:
                try:
                    r.eof()
                except AnyURLError as exc:
                    self._exc = exc
        self._wake()

    def _fail(self, exc: BaseException) -> None:
        self._exc = exc
        if self.transport is not None:
            self.transport.abort()
        self._wake()

    def _resize(self, full: bool) -> None:
        """Grow the receive size after a full receive (the stream is fast), within this
        stream's share of the budget; shrink it when more streams started since."""
        cap = min(self._chunk_size, max(_START, _BUDGET // max(1, _streams)))
        size = self._size
        if full and size < cap:
            size = min(cap, size * 4)
        elif size > cap:
            size = cap
        if size != self._size:
            self._size = size
            if not isinstance(self, H1BufferedConnection):
                self.transport.max_size = size  # type: ignore[union-attr]

    def _wake(self) -> None:
        w = self._waiter
        if w is not None and not w.done():
            w.set_result(None)

    def _check_idle(self) -> None:
        self._watchdog = None
        w = self._waiter
        if self._timeout is None or w is None or w.done():
            return
        due = self._last + self._timeout
        if self._loop.time() >= due:
            w.set_exception(TimeoutError())
        else:
            self._watchdog = self._loop.call_at(due, self._check_idle)

    def _arm(self, timeout: float | None) -> asyncio.Future[None]:
        """The future the next event (data, end, error, *timeout* s of silence) completes;
        the caller awaits it (not a coroutine: a level less for every wake-up to resume).
        One watchdog per transfer, no timer per wait."""
        self._timeout = timeout
        if timeout is not None and self._watchdog is None:
            self._watchdog = self._loop.call_at(self._last + timeout, self._check_idle)
        w = self._waiter = self._loop.create_future()
        return w

    # -- the driver's side -----------------------------------------------------------

    def send(self, reader: ResponseReader, head: bytes) -> None:
        """Write a request head; *reader* receives its response."""
        assert self.transport is not None
        self.reader = reader
        self._chunks.clear()
        self._queued = 0
        self._last = self._loop.time()
        self.transport.write(head)

    async def next_chunk(self, timeout: float | None) -> bytes | None:  # noqa: ASYNC109 - see _arm
        """The next body piece; None at the end of the body."""
        r = self.reader
        assert r is not None
        while not self._chunks:
            if self._exc is not None:
                raise self._exc
            if r.complete:
                return None
            if self._paused:  # nothing queued: read on
                self._resume()
            await self._arm(timeout)
        return self._pop()

    def _pop(self) -> bytes:
        chunk = self._chunks.popleft()
        self._queued -= len(chunk)
        if self._paused and self._queued < 2 * self._size:
            self._resume()
        return chunk

    def _resume(self) -> None:
        self._paused = False
        self._last = self._loop.time()  # the silence while paused was ours, not the server's
        if self.transport is not None and not self._lost:
            self.transport.resume_reading()

    def done(self) -> bool:
        """The whole response arrived (what was not read of it is dropped)."""
        r = self.reader
        if r is None or not r.complete or self._exc is not None:
            return False
        self._chunks.clear()
        self._queued = 0
        return True

    # -- what the pool needs ----------------------------------------------------------

    def is_reusable(self) -> bool:
        t = self.transport
        r = self.reader
        return (t is not None and not self._lost and not t.is_closing() and self._exc is None
                and r is not None and r.complete and r.keep_alive and not r._after_end  # (r.reusable)
                and not self._chunks)

    async def reset_for(self, target: Any) -> bool:
        if not self.is_reusable():
            return False
        self.reader = None  # idle until the next send
        return True

    def shut(self) -> None:
        """Close now: over TLS close() sends close_notify, then keeps the socket until the
        server's close_notify comes (up to 30 s): past the Client and its loop, a
        ResourceWarning later. HTTP needs no answer (RFC 9112 9.8): the socket is aborted too
        (closed on the next loop turn)."""
        if self.transport is not None:
            self.transport.close()
            self.transport.abort()

    async def aclose(self) -> None:
        if self.transport is not None:
            self.shut()
            # the transport closes its socket on the next loop turn (connection_lost): wait for
            # it, so that the socket is closed when Client.aclose() returns
            if not self._dropped:
                self._gone = gone = self._loop.create_future()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(1.0):
                        await gone

    def abort(self) -> None:
        if self.transport is not None:
            self.transport.abort()


class H1BufferedConnection(H1Connection):
    """An :class:`H1Connection` whose transport reads into its buffer (``get_buffer``)
    instead of handing over bytes once the stream proves fast: how the receive size is
    set on uvloop, whose transports have no ``max_size``. Each receive is copied out
    once, as uvloop copies its own buffer for ``data_received``.

    It starts as a plain protocol (uvloop's shared buffer, one Python call per receive,
    no buffer of its own: what small responses want) and turns buffered at the first
    receive of ``_START`` bytes or more: the methods get their public names on the
    instance and the transport is told again (uvloop looks for ``get_buffer`` on a
    protocol that is no ``asyncio.Protocol``: hence H1Connection's BaseProtocol).
    """

    _view: memoryview | None = None

    def _read_into_buffer(self) -> None:
        self.get_buffer = self._get_buffer
        self.buffer_updated = self._buffer_updated
        self._sizable = True  # the buffer's size is the receive size
        self._resize(True)  # (from the start size, within this stream's share of the budget)
        if self.transport is not None and not self._lost:
            self.transport.set_protocol(self)

    def _get_buffer(self, sizehint: int) -> memoryview:
        view = self._view
        if view is None or len(view) != self._size:
            view = self._view = memoryview(bytearray(self._size))
        return view

    def _buffer_updated(self, nbytes: int) -> None:
        assert self._view is not None
        self.data_received(self._view[:nbytes].tobytes())


def connection_class(loop: asyncio.AbstractEventLoop, tls: bool) -> type[H1Connection]:
    """The protocol class for a connection on *loop*: the buffered one where the loop's
    transport has no ``max_size`` (uvloop) and reads go straight to the socket (no TLS)."""
    if tls or isinstance(loop, asyncio.BaseEventLoop):
        return H1Connection
    return H1BufferedConnection


_types_seen: dict[str, tuple[str, str | None]] = {}  # a server sends the same few values


def _content_type(value: str | None) -> tuple[str, str | None]:
    """(type, charset) of a Content-Type value; "" when absent or not a valid type (the body
    may then be sniffed)."""
    if value is None:
        return "", None
    seen = _types_seen.get(value)
    if seen is not None:
        return seen
    seen = _parse_content_type(value)
    if len(value) <= 128:  # bounded: 256 short values (a hostile server may send a new one each time)
        if len(_types_seen) >= 256:
            _types_seen.clear()
        _types_seen[value] = seen
    return seen


def _parse_content_type(value: str) -> tuple[str, str | None]:
    # two fields arrive joined ("application/json, text/x-zoo"): the last valid one, as browsers
    return content_type_of(value) or ("", None)


class LeanResponse:
    """A response read from an :class:`H1Connection`; the interface :mod:`.http` uses for
    both paths (status, reason, headers, content_length/type, charset, read/release/close)."""

    def __init__(self, conn: H1Connection, lease: Lease[H1Connection], reader: ResponseReader,
                 timeout: float | None) -> None:
        self.conn = conn
        self.lease = lease
        self.reader = reader
        self.status = reader.status
        self.reason = reader.reason
        self.headers: Headers = reader.headers
        self.content_length = reader.content_length
        key = self.headers._lower.get("content-type")  # (Headers.get, inline)
        self.content_type, self.charset = _content_type(None if key is None else dict.__getitem__(self.headers, key))
        self._timeout = timeout
        self._counted = False
        self._done = False

    async def read_chunk(self, size: int = 0) -> bytes:
        """The next body piece, b"" at the end (pieces are what arrived: *size* is not used,
        the receive size never exceeds ``Limits.chunk_size``)."""
        global _streams
        if not self._counted:
            self._counted = True
            _streams += 1
        conn = self.conn
        if conn._chunks:  # next_chunk's answer without a wait: here, one coroutine less
            return conn._pop()
        if conn._exc is None and self.reader.complete:
            self._counted = False  # (_uncount, inline: counted just above)
            _streams -= 1
            return b""
        try:
            chunk = await conn.next_chunk(self._timeout)
        except TimeoutError:
            self._uncount()
            raise FetchTimeout(f"timed out while reading the body (no data for {self._timeout:.3g} s)",
                               url=self.reader.url) from None
        except BaseException:
            self._uncount()  # a body that failed is no stream any more, released or not
            raise
        if chunk is None:
            self._uncount()
            return b""
        return chunk

    def buffered_body(self) -> list[bytes] | None:
        """The rest of the body at once when all of it arrived already (the response
        complete, no error, nothing read of it yet): taken from the connection. None
        otherwise (then :meth:`read_chunk`)."""
        conn = self.conn
        if conn._exc is not None or not self.reader.complete or conn._paused or self._counted:
            return None
        pieces = list(conn._chunks)
        conn._chunks.clear()
        conn._queued = 0
        return pieces

    def _uncount(self) -> None:
        global _streams
        if self._counted:
            self._counted = False
            _streams -= 1

    def widen(self, chunk_size: int) -> None:
        """Nothing to do: receive sizes grow by themselves."""

    def release_now(self) -> bool:
        """:meth:`release` without a coroutine when the connection is kept (the common case):
        True when released so (or released already); False: await :meth:`release`."""
        if self._done:
            return True
        if self.conn.done() and self.lease.keep_idle():
            self._done = True
            if self._counted:
                self._uncount()
            return True
        return False

    async def release(self) -> None:
        """Done with the response: the connection goes back to the pool if the response
        arrived whole (what was not read of it is dropped), else it is closed. Only the
        first call counts: the connection may already carry another request."""
        if self._done:
            return
        self._done = True
        if self._counted:
            self._uncount()
        reusable = self.conn.done()
        if reusable and self.lease.keep_idle():  # the common case, no coroutine
            return
        await self.lease.release(reusable)

    async def close(self) -> None:
        """Drop the response (the same as :meth:`release`: a response that arrived whole
        leaves a reusable connection)."""
        await self.release()


class H1Client:
    """Lends pooled :class:`H1Connection` objects; one per HTTPHandler (so per Client)."""

    def __init__(self, ssl_context: Callable[[], ssl.SSLContext]) -> None:
        self.pool: Pool[H1Connection] = Pool("http")
        self._ssl_source = ssl_context  # makes the TLS context (anyurl.net.tls), on the first https
        self._ssl: ssl.SSLContext | None = None
        # the last header list sent and its checked lines (the handler reuses one list)
        self._block_of: list[tuple[str, str]] | None = None
        self._block: tuple[str | None, str] = (None, "")
        self._tails: dict[str, bytes] = {}  # Host value -> request_tail of _block

    def _context(self) -> ssl.SSLContext:
        if self._ssl is None:
            self._ssl = self._ssl_source()
        return self._ssl

    async def request(self, req: Request, method: str, scheme: str, host: str, port: int, target: str,
                      hostport: str, headers: list[tuple[str, str]], url: object) -> LeanResponse:
        """Send one request and wait for its head; the body is read from the result."""
        if headers is not self._block_of:
            self._block = header_block(headers, url)
            self._block_of = headers
            self._tails.clear()
        tail = self._tails.get(hostport)
        if tail is None:  # the end of the head, the same for every request to this host
            tail = request_tail(hostport, self._block, url)
            if len(self._tails) >= 256:  # bounded: a crawl meets many hosts
                self._tails.clear()
            self._tails[hostport] = tail
        head = request_start(method, target, url) + tail
        key: _Key = (scheme, host, port)
        limits = req.limits
        timeout = req.timeouts.read if req.deadline is None else req.read_timeout
        max_head = max(2 * limits.max_line, 1 << 16)
        max_framing = max(limits.max_line, 1 << 12)
        pool = self.pool
        fresh = False
        lease = pool.lend_idle(req, host, port, key)
        if lease is not None:  # the common case: a kept-alive connection, no coroutine to get it
            try:
                return await self._send(lease, method, url, head, target, host, port, timeout, max_head,
                                        max_framing)
            except AnyURLError as exc:
                await lease.release(False)
                if not pool.is_stale(exc):
                    raise
                pool.log.debug("reused connection to %s:%s was stale (%s); retrying on a new one",
                               host, port, exc.message)
                fresh = True  # (what Pool.run does: one try on a new connection)
            except BaseException:
                await lease.release(False)
                raise
        chunk_size = limits.chunk_size

        async def connect() -> H1Connection:
            loop = asyncio.get_running_loop()  # here, not per request: it costs a getpid()
            ctx = self._context() if scheme == "https" else None
            cls = connection_class(loop, ctx is not None)
            try:
                async with asyncio.timeout(req.connect_timeout):
                    target = await connect_target(scheme, host, port)  # maybe the CLI's early socket
                    _, conn = await loop.create_connection(
                        lambda: cls(key, chunk_size), **target, ssl=ctx,
                        server_hostname=host if ctx is not None else None)
            except TimeoutError as exc:
                raise FetchTimeout(f"timed out while connecting to {host}:{port}", url=url) from exc
            except ssl.SSLError as exc:
                raise ConnectError(f"TLS handshake with {host}:{port} failed: {exc}", url=url) from exc
            except OSError as exc:
                raise ConnectError(f"cannot connect to {host}:{port}: {os_reason(exc)}", url=url) from exc
            return conn

        async def acquire(fresh: bool) -> Lease[H1Connection]:
            return await pool.acquire(req, host, port, key, connect, fresh=fresh)

        def step(lease: Lease[H1Connection]) -> Awaitable[LeanResponse]:
            return self._send(lease, method, url, head, target, host, port, timeout, max_head, max_framing)

        return await pool.run(acquire, step, fresh=fresh)

    async def _send(self, lease: Lease[H1Connection], method: str, url: object, head: bytes, target: str,
                    host: str, port: int, timeout: float | None,  # noqa: ASYNC109 - see H1Connection._arm
                    max_head: int, max_framing: int) -> LeanResponse:
        """Send one request on the lent connection and wait for the response head."""
        conn: H1Connection = lease._conn  # type: ignore[assignment]  # (not the conn property: a call less)
        reader = ResponseReader(method, url, max_head=max_head, max_framing=max_framing)
        debug = self.pool.debug
        if debug:
            self.pool.log.debug("%s:%s > %s %s", host, port, method, target)
        conn.send(reader, head)
        try:
            while not reader.head_done:  # (here, not a method of conn: a coroutine level less to resume)
                if conn._exc is not None:
                    raise conn._exc
                if conn._lost:  # closed before this request was sent (a stale idle connection)
                    raise ConnectError("server closed the connection before answering", url=url)
                await conn._arm(timeout)
        except TimeoutError:
            raise FetchTimeout(f"timed out while waiting for the response to {method} {target} "
                               f"from {host}:{port}", url=url) from None
        if debug:
            self.pool.log.debug("%s:%s < %s %s", host, port, reader.status, reader.reason)
        return LeanResponse(conn, lease, reader, timeout)

    async def aclose(self) -> None:
        # every idle socket shut at once first: their transports all close in the next loop
        # turn, which the first connection's aclose waits for (not one turn per connection)
        for h in self.pool._hosts.values():
            for item in h.idle:
                item.conn.shut()
        await self.pool.aclose()

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
import socket
import ssl
from collections.abc import Callable
from time import monotonic as _clock
from typing import TYPE_CHECKING, Any, cast

from ..errors import AnyURLError, ConnectError, FetchTimeout, OverlongTransfer
from ..net.connect import lost, open_transport
from ..net.pool import Lease, Pool
from ..protocols.http1 import (
    Headers,
    RawResponseReader,
    ResponseReader,
    header_block,
    request_start,
    request_tail,
)
from ..protocols.mime import parse_content_type

if TYPE_CHECKING:
    from ..settings import Request

__all__ = ["FreshH1Connection", "H1Client", "H1Connection", "LeanResponse", "parse_content_type"]

_START = 1 << 16
# receive sizes of all lean streams together stay near this (each at least _START)
_BUDGET = 8 << 20
_streams = 0  # bodies being read now, in this process

_Key = tuple[str, str, int]

# pipelining (see docs/http.md): never behind a response longer than this (a Content-Length
# above it, a chunked body past it, or one delimited by the connection's end)
PIPE_BEHIND = 256 << 10
# body bytes held for a connection's responses beyond the receive size, before reading pauses
_PIPE_HOLD = 1 << 20
# origins remembered as not pipelining (a crawl meets many: the oldest is forgotten)
_NO_PIPE_MAX = 4096
# pipelining hides round trips: an origin whose quickest answer so far came sooner than this
# (loopback, a LAN) has none to hide, and the bookkeeping would cost more CPU than it saves
# (1,000 x 4 KiB from nginx on loopback: ~8% slower pipelined)
PIPE_MIN_RTT = 0.002
# and none where the connections at hand already keep us busy: C connections one request at a time
# carry C per round trip, more than we can handle once the round trip is below C x our CPU per
# request (a small response: ~110 us in the library, 150-250 in the CLI); a loaded machine's
# loopback answers take several ms and would judge pipelining on there, for more CPU, no time saved
PIPE_REQUEST_COST = 200e-6
# what a burst of requests on a connection not yet trusted may hold when the socket cannot say
# its segment size (TCP_MAXSEG): the bytes of one segment on a common path
_BURST_DEFAULT = 1400


class _Unanswered(Exception):
    """A pipelined request the connection will not answer: retried unpipelined. *mark*: the
    server's fault (closed or broke the pipeline unannounced): the origin stops pipelining."""

    def __init__(self, cause: BaseException, mark: bool) -> None:
        super().__init__(str(cause))
        self.cause = cause
        self.mark = mark


class _Exchange:
    """One request of a pipeline: its reader, its body pieces, who waits for them."""

    __slots__ = ("reader", "chunks", "waiter", "exc", "taken", "released")

    def __init__(self, reader: ResponseReader, chunks: collections.deque[bytes]) -> None:
        self.reader = reader
        self.chunks = chunks
        self.waiter: asyncio.Future[None] | None = None
        self.exc: BaseException | None = None
        self.taken = False  # its head went to the caller
        self.released = False


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
        # (precise clock, not the loop's: uvloop's counts whole milliseconds, read at the start
        # of a loop turn that may be long) when the request went, and when its answer's first
        # bytes came (0: not yet): the origin's round trip, for pipelining
        self._sent_at = 0.0
        self._got_at = 0.0
        self._chunk_size = chunk_size
        self._size = min(_START, chunk_size)  # the transport's receive size now
        self._sizable = False
        self._dropped = False  # connection_lost came: the socket is closed
        self._gone: asyncio.Future[None] | None = None  # what aclose waits on for connection_lost
        # pipelining: the requests in flight (empty while one at a time: the fast path)
        self.inflight: collections.deque[_Exchange] = collections.deque()  # (read-only elsewhere)
        self._fed: ResponseReader | None = None  # the reader bytes go to now (pipelined)
        self.lease: Lease[H1Connection] | None = None  # the lease the requests on it share
        self.proven = False  # a response on it proved HTTP/1.1 keep-alive
        # a response to a request sent behind another came. Until then, requests go behind the
        # first only in the same write as it, of one TCP segment at most (_burst), and none after
        # that write: a server that drops all but the first of the requests it reads at once
        # shows so by not answering, and no request sent later can take a dropped one's answer
        self.trusted = False
        self._out: list[bytes] = []  # request heads to write at the end of this loop turn
        self._out_size = 0
        self._burst = _BURST_DEFAULT  # the segment size (TCP_MAXSEG) once connected
        self.room: Callable[[], None] | None = None  # told when it may take another request
        self._broken = False  # a pipeline on it failed: no more requests
        self.clean_close = False  # the server announced the close (Connection: close)
        self.by_us = False  # we broke it (a response dropped unread): not the server's fault

    # -- protocol side -------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's has the same API
        # asyncio's own transport reads max_size bytes per recv (256 KiB): start small
        self._sizable = isinstance(getattr(transport, "max_size", None), int)
        if self._sizable:
            transport.max_size = self._size  # type: ignore[attr-defined]
        if self.key[0] == "http":  # (pipelining may use it: plain http only)
            sock = transport.get_extra_info("socket")
            if sock is not None:
                with contextlib.suppress(OSError):
                    self._burst = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG) or _BURST_DEFAULT

    def data_received(self, data: bytes) -> None:
        if self.inflight:
            self._route(data)
            return
        r = self.reader
        if r is None or self._exc is not None:
            # unasked bytes on an idle connection: it cannot be trusted with a request
            self._exc = self._exc or ConnectError("server sent data while no request was made", url=None)
            if self.transport is not None:
                self.transport.close()
            return
        self._last = self._loop.time()
        if not self._got_at:
            self._got_at = _clock()
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
        if self.inflight:
            self._lost = True
            self._pipe_end(None)
            return False
        self._end()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        if self.inflight:
            self._lost = True
            self._pipe_end(exc)
        if not self._lost:
            self._lost = True
            if exc is not None and self._exc is None and self.reader is not None \
                    and not self.reader.complete:
                # (the table's words: an ssl error without its code and C source line)
                self._exc = lost(exc, self.reader.url, "reading the response")
            self._end()
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        self._dropped = True
        gone = self._gone
        if gone is not None and not gone.done():
            gone.set_result(None)
        if self.room is not None:
            self.room()

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

    # -- pipelining ------------------------------------------------------------------

    def _exchange(self, reader: ResponseReader) -> _Exchange | None:
        for ex in self.inflight:
            if ex.reader is reader:
                return ex
        return None

    def _route(self, data: bytes) -> None:
        """Bytes for a pipeline: each response's to its own exchange, in order."""
        if self._broken:
            return
        self._last = self._loop.time()
        if not self._got_at:  # the answer to a burst's first request (send): its round trip
            self._got_at = _clock()
        r = self._fed or self.reader
        assert r is not None
        try:
            while True:
                if r.complete:
                    n = r.next
                    if n is None:
                        raise OverlongTransfer("server sent more responses than were asked for", url=r.url)
                    r = n
                pieces = r.feed(data)
                rest = r.rest
                self._store(r, pieces)
                if r.forwarded_to is not None:  # later responses began in the same bytes
                    for f in r.forwarded():
                        self._store(f, f.take())
                        r = f
                    if r.error is not None:
                        raise r.error
                if not rest:
                    break
                r.rest = b""
                data = rest
        except AnyURLError as exc:
            self._fed = r
            self.fail_pipeline(r, exc)
            return
        self._fed = r
        if not self._paused and self._queued >= 2 * self._size + _PIPE_HOLD:
            self._paused = True
            assert self.transport is not None
            self.transport.pause_reading()
        self._wake_all()
        if self.inflight and self.inflight[0].released:
            self._settle()

    def _store(self, r: ResponseReader, pieces: list[bytes]) -> None:
        ex = self._exchange(r)
        if ex is None:
            return
        if ex.released:  # its caller left: dropped, and never a long drain
            if not r.complete and r.received > PIPE_BEHIND:
                self.by_us = True
                raise ConnectError("pipelined response dropped unread", url=r.url)
            return
        if pieces:
            ex.chunks.extend(pieces)
            self._queued += sum(map(len, pieces))

    def _wake_all(self) -> None:
        self._wake()
        for ex in self.inflight:
            w = ex.waiter
            if w is not None and not w.done():
                w.set_result(None)

    def fail_pipeline(self, at: ResponseReader | None, exc: BaseException) -> None:
        """The pipeline broke at reader *at* (None: at the first unfinished one): *exc* for it,
        "unanswered" for those behind; whole responses stay readable."""
        self._broken = True
        hit = False
        for ex in self.inflight:
            r = ex.reader
            if ex.exc is not None or r.complete:  # (a whole response stays readable)
                continue
            if r is at or not hit:
                hit = True
                ex.exc = exc if r.started else ConnectError(
                    "server closed the connection before answering", url=r.url)
            else:
                ex.exc = ConnectError("server closed the connection before answering", url=r.url)
        front = self.inflight[0] if self.inflight else None
        if front is not None and front.exc is not None and self._exc is None:
            self._exc = front.exc
        if self.transport is not None:
            self.transport.abort()
        self._wake_all()

    def _pipe_end(self, err: BaseException | None) -> None:
        """The server closed a connection carrying a pipeline."""
        if self._broken:
            return
        r = self._fed or self.reader
        if r is not None and not r.complete and r.started:
            try:
                r.eof()  # a body delimited by the close ends here
            except AnyURLError as exc:
                self.fail_pipeline(r, exc)
                return
        self.clean_close = any(ex.reader.complete and not ex.reader.keep_alive for ex in self.inflight)
        if any(not ex.reader.complete for ex in self.inflight):
            why = f": {err}" if err is not None else ""
            first = next(ex.reader for ex in self.inflight if not ex.reader.complete)
            self.fail_pipeline(None, ConnectError(f"connection closed with requests unanswered{why}", url=first.url))
        else:
            self._broken = True
            self._wake_all()

    async def wait(self, ex: _Exchange, timeout: float | None) -> None:  # noqa: ASYNC109 - see _arm
        """Until the pipeline moves (bytes, end, error): TimeoutError after *timeout* s in which
        the server sent nothing (while reading was not paused by us)."""
        loop = self._loop
        fut = ex.waiter = loop.create_future()
        handle: asyncio.TimerHandle | None = None
        if timeout is not None:
            def check() -> None:
                nonlocal handle
                if fut.done():
                    return
                now = loop.time()
                if self._paused:
                    self._last = now
                due = self._last + timeout
                if now >= due:
                    fut.set_exception(TimeoutError())
                else:
                    handle = loop.call_at(due, check)

            handle = loop.call_at(self._last + timeout, check)
        try:
            await fut
        finally:
            if handle is not None:
                handle.cancel()
            ex.waiter = None

    def can_take(self, depth: int, size: int = 0) -> bool:
        """True when one more GET (a head of *size* bytes) may go behind the requests in flight:
        the connection proved HTTP/1.1 keep-alive, fewer than *depth* requests are in flight,
        all GETs, none whose head came has a long or unknown length, and, until a request sent
        behind another was answered, the first request's write is still to go and has room
        for this one within a segment (see ``trusted``)."""
        lease = self.lease
        if (not self.proven or self._broken or self._lost or self._exc is not None or lease is None
                or lease.released or self.transport is None or self.transport.is_closing()):
            return False
        if not self.trusted and (not self._out or self._out_size + size > self._burst):
            return False
        exs = self.inflight
        if exs:
            if len(exs) >= depth:
                return False
            readers = [ex.reader for ex in exs]
        else:
            if depth < 2 or self.reader is None:
                return False
            readers = [self.reader]
        for r in readers:
            if r.method != "GET":
                return False
            if r.head_done:
                if not r.keep_alive or r.version != "1.1":
                    return False
                cl = r.content_length
                if (r.received if cl is None else cl) > PIPE_BEHIND:
                    return False
        return True

    def hopeful(self) -> bool:
        """Busy with GETs, and may take another one later (:meth:`can_take`)."""
        lease = self.lease
        r = self.reader
        return (lease is not None and not lease.released and not self._broken and not self._lost
                and r is not None and r.method == "GET" and (not r.head_done or r.keep_alive))

    def attach(self, reader: ResponseReader, head: bytes) -> _Exchange:
        """Send a request behind those in flight (:meth:`can_take` said yes)."""
        exs = self.inflight
        if not exs:  # the request in flight becomes the pipeline's first
            assert self.reader is not None
            exs.append(_Exchange(self.reader, self._chunks))
            self._fed = self.reader
        exs[-1].reader.next = reader
        ex = _Exchange(reader, collections.deque())
        exs.append(ex)
        self._queue(head)
        return ex

    def _queue(self, head: bytes) -> None:
        """Write *head* together with the others queued in this loop turn: one write for a burst
        (and one system call). The write waits two loop turns: the requests woken to join the
        burst run in the next one."""
        if not self._out:
            self._loop.call_soon(self._loop.call_soon, self._flush)
        self._out.append(head)
        self._out_size += len(head)

    def _flush(self) -> None:
        out = self._out
        if not out:
            return
        data = out[0] if len(out) == 1 else b"".join(out)
        self._out = []
        self._out_size = 0
        t = self.transport
        if t is not None and not t.is_closing():
            t.write(data)

    def round_trip(self) -> float | None:
        """Seconds from the last request's write (:meth:`send`) to its answer's first bytes
        (also when a pipeline formed behind it: they are the first bytes after it); None before."""
        return self._got_at - self._sent_at if self._got_at else None

    @property
    def last_data(self) -> float:
        """The loop time data last came (or a request went)."""
        return self._last

    @property
    def dropped(self) -> bool:
        """The socket is closed (connection_lost came)."""
        return self._dropped

    def read_on(self) -> None:
        """Resume reading if it was paused (a caller waits with nothing of its own queued)."""
        if self._paused:
            self._resume()

    def take_pieces(self, ex: _Exchange) -> list[bytes]:
        """All of *ex*'s queued body pieces at once."""
        pieces = list(ex.chunks)
        ex.chunks.clear()
        self._queued -= sum(map(len, pieces))
        return pieces

    def pop_piece(self, ex: _Exchange) -> bytes:
        chunk = ex.chunks.popleft()
        self._queued -= len(chunk)
        if self._paused and self._queued < 2 * self._size + _PIPE_HOLD:
            self._resume()
        return chunk

    def release_piped(self, ex: _Exchange | ResponseReader) -> None:
        """A pipelined request's caller is done with its response."""
        if not isinstance(ex, _Exchange):
            found = self._exchange(ex)
            if found is None:
                return
            ex = found
        if ex.released:
            return
        ex.released = True
        if ex.chunks:
            self._queued -= sum(map(len, ex.chunks))
            ex.chunks.clear()
        self._settle()

    def _settle(self) -> None:
        """Drop the finished requests from the front; when none is left, the connection goes
        back to the pool (kept when clean, else closed)."""
        exs = self.inflight
        last = None
        while exs and exs[0].released and (exs[0].reader.complete or exs[0].exc is not None or self._broken):
            last = exs.popleft().reader
        if exs:
            front = exs[0]
            self.reader = front.reader
            self._chunks = front.chunks
            self._exc = front.exc
        elif last is not None:
            self.reader = last
            self._chunks = collections.deque()
            self._fed = None
            lease = self.lease
            if lease is not None and not lease.released and not lease.keep_idle():
                self.abort()
                lease.forget()
        if self._paused and self._queued < 2 * self._size:
            self._resume()
        if self.room is not None:
            self.room()

    # -- the driver's side -----------------------------------------------------------

    def send(self, reader: ResponseReader, head: bytes, burst: bool = False) -> None:
        """Write a request head; *reader* receives its response. *burst*: at the end of this
        loop turn, with the requests sent behind it meanwhile (:meth:`attach`) in one write."""
        assert self.transport is not None
        self.reader = reader
        self._chunks.clear()
        self._queued = 0
        self._last = self._loop.time()
        if burst:
            self._queue(head)
        else:
            self.transport.write(head)
        self._sent_at = _clock()
        self._got_at = 0.0

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
                and not self._chunks and not self.inflight and not self._broken)

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


class FreshH1Connection(H1Connection):
    """An HTTP/1.1 connection that ALPN gave (an https server that did not pick h2): like any
    :class:`H1Connection`, and clean before its first request too, so that the pool keeps it
    idle for :class:`H1Client` to send on."""

    def is_reusable(self) -> bool:
        if self.reader is None:  # nothing asked on it yet
            t = self.transport
            return t is not None and not self._lost and not t.is_closing() and self._exc is None
        return super().is_reusable()


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


def pipe_floor(per_host: int) -> float:
    """The quickest answer (request written to its first bytes back, seconds) an origin must
    take before GETs are pipelined to it over *per_host* connections (docs/http.md)."""
    return max(PIPE_MIN_RTT, per_host * PIPE_REQUEST_COST)


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
        self.content_type, self.charset = parse_content_type(None if key is None else dict.__getitem__(self.headers, key))
        self._timeout = timeout
        self._counted = False
        self._done = False

    @property
    def http_version(self) -> str:
        return f"HTTP/{self.reader.version or '1.1'}"

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
        if conn.inflight:  # a pipeline formed behind it: its pieces counted off the pipeline's
            return conn.take_pieces(conn.inflight[0])
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
        conn = self.conn
        if conn.inflight:  # a pipeline formed behind it: the connection goes back with the last
            self._done = True
            self._uncount()
            conn.release_piped(self.reader)
            return True
        if conn.done() and self.lease.keep_idle():
            self._done = True
            if self._counted:
                self._uncount()
            if conn.room is not None:
                conn.room()
            return True
        return False

    async def release(self) -> None:
        """Done with the response: the connection goes back to the pool if the response
        arrived whole (what was not read of it is dropped), else it is closed. Only the
        first call counts: the connection may already carry another request."""
        if self._done:
            return
        if self.conn.inflight:
            self.release_now()
            return
        self._done = True
        if self._counted:
            self._uncount()
        conn = self.conn
        reusable = conn.done()
        if not (reusable and self.lease.keep_idle()):  # (the common case: kept, no coroutine)
            await self.lease.release(reusable)
        if conn.room is not None:
            conn.room()

    async def close(self) -> None:
        """Drop the response (the same as :meth:`release`: a response that arrived whole
        leaves a reusable connection)."""
        await self.release()


class PipedResponse(LeanResponse):
    """The response to a request sent behind others on one connection: its body pieces are
    its own exchange's (they may come while an earlier response is still being read)."""

    def __init__(self, conn: H1Connection, ex: _Exchange, timeout: float | None) -> None:
        assert conn.lease is not None
        super().__init__(conn, conn.lease, ex.reader, timeout)
        self.ex = ex

    async def read_chunk(self, size: int = 0) -> bytes:
        ex = self.ex
        conn = self.conn
        while True:
            if ex.chunks:
                return conn.pop_piece(ex)
            if ex.exc is not None:
                raise ex.exc
            if ex.reader.complete:
                return b""
            conn.read_on()  # nothing of ours queued: read on if paused
            try:
                await conn.wait(ex, self._timeout)
            except TimeoutError:
                raise FetchTimeout(f"timed out while reading the body (no data for {self._timeout:.3g} s)",
                                   url=self.reader.url) from None

    def buffered_body(self) -> list[bytes] | None:
        ex = self.ex
        if ex.exc is not None or not ex.reader.complete:
            return None
        return self.conn.take_pieces(ex)

    def release_now(self) -> bool:
        if not self._done:
            self._done = True
            self.conn.release_piped(self.ex)
        return True

    async def release(self) -> None:
        self.release_now()


class H1Client:
    """Lends pooled :class:`H1Connection` objects; one per HTTPHandler (so per Client).

    *pipeline*: the most requests in flight on one plain-http connection (GETs sent behind
    others, see docs/http.md); 0 or 1: one at a time.
    """

    def __init__(self, ssl_context: Callable[[], ssl.SSLContext], pipeline: int = 0) -> None:
        self.pool: Pool[H1Connection] = Pool("http")
        self._ssl_source = ssl_context  # makes the TLS context (anyurl.net.tls), on the first https
        self._ssl: ssl.SSLContext | None = None
        # the last header list sent and its checked lines (the handler reuses one list)
        self._block_of: list[tuple[str, str]] | None = None
        self._block: tuple[str | None, str] = (None, "")
        self._tails: dict[str, bytes] = {}  # Host value -> request_tail of _block
        self.pipeline = pipeline
        self._depth: dict[_Key, int] = {}  # origin -> pipeline depth now (adaptive, <= pipeline)
        self._no_pipe: dict[_Key, None] = {}  # origins that broke a pipeline: never again
        self._conns: dict[_Key, set[H1Connection]] = {}  # open connections per origin (pipelining on)
        self._room: dict[_Key, list[asyncio.Future[None]]] = {}  # requests waiting for a place
        self._opening: dict[_Key, int] = {}  # connections being opened per origin (pipelining on)
        self._rtt: dict[_Key, float] = {}  # origin -> its quickest answer (request to head), seconds
        self._per_host = 0
        self._floor = PIPE_MIN_RTT  # pipe_floor(self._per_host): below it, no pipelining

    def _context(self) -> ssl.SSLContext:
        if self._ssl is None:
            self._ssl = self._ssl_source()
        return self._ssl

    def pipelines(self, key: _Key) -> bool:
        """True when GETs to *key* go several at a time on a connection now."""
        return (self._depth.get(key, 0) >= 2 and key not in self._no_pipe
                and self._rtt.get(key, 0.0) >= self._floor)

    def _set_floor(self, per_host: int) -> None:
        """The quickest answer that makes pipelining worth it with *per_host* connections."""
        self._per_host = per_host
        self._floor = pipe_floor(per_host)

    def _learn(self, key: _Key, r: ResponseReader) -> None:
        """Adapt the origin's depth to a response head: one deeper after a short (or chunked)
        response kept alive, back to one at a time after a long one or one delimited by the
        close (a chunked one that grows long stops pipelining on its connection: can_take)."""
        cl = r.content_length
        if len(self._depth) >= _NO_PIPE_MAX and key not in self._depth:
            self._depth.clear()  # bounded: a crawl meets many origins
            self._rtt.clear()
        if r.keep_alive and r.version == "1.1" and (cl is None or cl <= PIPE_BEHIND):
            depth = self._depth.get(key)
            if depth is None or depth < self.pipeline:
                # a new origin starts at the bound (a burst carries a batch at once); after a long
                # response the depth doubles back from one
                self._depth[key] = self.pipeline if depth is None else min(self.pipeline, 2 * depth)
                self._wake(key)
        elif r.method == "GET":
            self._depth[key] = 1

    def _wake(self, key: _Key, everyone: bool = False) -> None:
        """Let requests waiting for a place on *key*'s connections look again: as many as
        there are places now, and one more (for an idle connection or a free slot), not all
        (each event would wake every waiter: quadratic in a batch's size)."""
        waiting = self._room.get(key)
        if not waiting:
            return
        n = len(waiting)
        if not everyone:
            depth = self._depth.get(key, 1)
            n = 1
            for conn in self._conns.get(key, ()):
                if conn.can_take(depth):
                    n += depth - (len(conn.inflight) or 1)
        for fut in waiting:
            if n <= 0:
                break
            if not fut.done():
                fut.set_result(None)
                n -= 1

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
        if limits.per_host != self._per_host:
            self._set_floor(limits.per_host)
        timeout = req.timeouts.read if req.deadline is None else req.read_timeout
        max_head = max(2 * limits.max_line, 1 << 16)
        max_framing = max(limits.max_line, 1 << 12)
        pool = self.pool
        fresh = False
        lease = pool.lend_idle(req, host, port, key)
        if lease is not None:  # the common case: a kept-alive connection, no coroutine to get it
            try:
                return await self._send(lease, method, url, head, target, host, port, timeout, max_head,
                                        max_framing, req.capture)
            except BaseException as exc:
                if not await self._after_error(lease, exc, False):
                    raise
                fresh = True  # the pool's rule: one try on a new connection
        chunk_size = limits.chunk_size

        async def connect() -> H1Connection:
            loop = asyncio.get_running_loop()  # here, not per request: it costs a getpid()
            ctx = self._context() if scheme == "https" else None
            cls = connection_class(loop, ctx is not None)
            piping = self.pipeline > 1 and scheme == "http"
            if piping:  # requests that find every slot taken wait for it (see _piped)
                self._opening[key] = self._opening.get(key, 0) + 1
            try:
                _, conn = await open_transport(url, scheme, host, port, lambda: cls(key, chunk_size),
                                                timeout=req.connect_timeout, tls=ctx)
            finally:
                if piping:
                    n = self._opening[key] - 1
                    if n:
                        self._opening[key] = n
                    else:
                        del self._opening[key]
                    self._wake(key)
            if piping:
                conns = self._conns.setdefault(key, set())
                conns.add(conn)

                def room() -> None:
                    if conn.dropped:
                        conns.discard(conn)
                    self._wake(key)

                conn.room = room
            return conn

        if (not fresh and method == "GET" and self.pipeline > 1 and scheme == "http"
                and key not in self._no_pipe):
            try:
                resp = await self._piped(req, key, head, method, url, target, host, port, timeout,
                                         max_head, max_framing, req.capture)
            except _Unanswered as exc:
                if exc.mark and key not in self._no_pipe:
                    if len(self._no_pipe) >= _NO_PIPE_MAX:
                        del self._no_pipe[next(iter(self._no_pipe))]
                    self._no_pipe[key] = None
                    self._wake(key, True)  # the others waiting for a place go the usual way
                    pool.log.info("%s:%s broke a pipeline (%s): one request at a time from now on",
                                  host, port, exc)
                else:
                    pool.log.debug("%s:%s left pipelined requests unanswered (%s); sending again",
                                   host, port, exc)
                fresh = True  # unpipelined, on a new connection
            else:
                if resp is not None:
                    return resp
        while True:
            lease = await pool.acquire(req, host, port, key, connect, fresh=fresh)
            try:
                return await self._send(lease, method, url, head, target, host, port, timeout, max_head,
                                        max_framing, req.capture)
            except BaseException as exc:
                if not await self._after_error(lease, exc, fresh):
                    raise
                fresh = True

    async def _after_error(self, lease: Lease[H1Connection], exc: BaseException, fresh: bool) -> bool:
        """The pool's rule after a failed try (:meth:`Pool.after_error`): True when one more
        try on a new connection is due. A connection that carries a pipeline is shared: only
        this request leaves it."""
        conn = lease.conn
        if conn.inflight:
            assert conn.reader is not None
            conn.release_piped(conn.reader)
            if not (isinstance(exc, AnyURLError) and self.pool.is_stale(exc) and lease.reused and not fresh):
                return False
            self.pool.log.debug("reused connection to %s:%s was stale (%s); retrying on a new one",
                                *lease.address, exc.message)
            return True
        return await self.pool.after_error(lease, exc, fresh=fresh)

    async def _piped(self, req: Request, key: _Key, head: bytes, method: str, url: object, target: str,
                     host: str, port: int, timeout: float | None,  # noqa: ASYNC109 - see H1Connection._arm
                     max_head: int, max_framing: int, capture: bool = False) -> LeanResponse | None:
        """A GET sent behind others on a busy connection, when every connection to the origin is
        busy and one may take it; None: go the usual way (an idle connection, a free slot, or
        none may take it soon). *capture*: as :meth:`_send`'s (a capture pipelines too: a WARC
        written over a long round trip would otherwise wait one per request per connection)."""
        pool = self.pool
        waited = False
        loop: asyncio.AbstractEventLoop | None = None
        until = 0.0
        while True:
            # an origin not timed yet may pipeline: its waiters hope for the first answer, which says
            if key in self._no_pipe or self._rtt.get(key, self._floor) < self._floor:
                return None
            depth = self._depth.get(key, 1)
            best: H1Connection | None = None
            hope = key in self._opening  # a connection that may take it once its answer comes
            for conn in self._conns.get(key, ()):
                if conn.can_take(depth, len(head)):
                    if best is None or len(conn.inflight) < len(best.inflight):
                        best = conn
                elif conn.hopeful():
                    hope = True
            if best is not None:
                return await self._send_piped(best, key, method, url, head, target, host, port, timeout,
                                              max_head, max_framing, capture)
            if waited:  # a place may have come free in the pool itself
                lease = pool.lend_idle(req, host, port, key)
                if lease is not None:
                    try:
                        return await self._send(lease, method, url, head, target, host, port, timeout,
                                                max_head, max_framing, capture)
                    except BaseException as exc:
                        if not await self._after_error(lease, exc, False):
                            raise
                        return None
            if (pool.open_count(host, port) < req.limits.per_host or (depth < 2 and key in self._depth)
                    or not hope):
                return None  # a new connection, or one at a time for now: the pool's way
            if loop is None:
                loop = asyncio.get_running_loop()
                wait = req.bound(req.timeouts.pool)
                until = float("inf") if wait is None else loop.time() + wait
            left = until - loop.time()
            if left <= 0:
                return None  # the pool's wait says the rest (PoolTimeout)
            fut = loop.create_future()
            waiting = self._room.setdefault(key, [])
            waiting.append(fut)
            try:
                async with asyncio.timeout(None if left == float("inf") else left):
                    await fut
            except TimeoutError:
                return None
            finally:
                waiting.remove(fut)
                if not waiting:
                    del self._room[key]
            waited = True

    async def _send_piped(self, conn: H1Connection, key: _Key, method: str, url: object, head: bytes,
                          target: str, host: str, port: int,
                          timeout: float | None,  # noqa: ASYNC109 - see H1Connection._arm
                          max_head: int, max_framing: int, capture: bool = False) -> LeanResponse:
        """Send a GET behind the requests in flight on *conn* and wait for its head; a request
        the connection leaves unanswered raises :class:`_Unanswered` (sent again unpipelined)."""
        reader = (ResponseReader(method, url, max_head=max_head, max_framing=max_framing) if not capture else
                  RawResponseReader(method, url, max_head=max_head, max_framing=max_framing, request_head=head))
        if self.pool.debug:
            self.pool.log.debug("%s:%s > %s %s (pipelined, %d in flight)", host, port, method, target,
                                len(conn.inflight) or 1)
        ex = conn.attach(reader, head)
        try:
            while not reader.head_done:
                if ex.exc is not None:
                    raise ex.exc
                await conn.wait(ex, timeout)
        except TimeoutError:
            # no answer: the server may have dropped it (some drop all but the first request)
            exc = FetchTimeout(f"timed out while waiting for the response to {method} {target} "
                               f"from {host}:{port} (pipelined)", url=url)
            conn.fail_pipeline(None, exc)
            conn.release_piped(ex)
            raise _Unanswered(exc, True) from None
        except AnyURLError as exc:
            conn.release_piped(ex)
            raise _Unanswered(exc, not (conn.clean_close or conn.by_us)) from None
        except BaseException:
            conn.release_piped(ex)  # its response is read and dropped
            raise
        ex.taken = True
        conn.trusted = True
        self._learn(key, reader)
        if self.pool.debug:
            self.pool.log.debug("%s:%s < %s %s", host, port, reader.status, reader.reason)
        return PipedResponse(conn, ex, timeout)

    async def _send(self, lease: Lease[H1Connection], method: str, url: object, head: bytes, target: str,
                    host: str, port: int, timeout: float | None,  # noqa: ASYNC109 - see H1Connection._arm
                    max_head: int, max_framing: int, capture: bool = False) -> LeanResponse:
        """Send one request on the lent connection and wait for the response head (*capture*:
        a reader that keeps the head as received, and the head sent)."""
        conn: H1Connection = lease._conn  # type: ignore[assignment]  # (not the conn property: a call less)
        reader = (ResponseReader(method, url, max_head=max_head, max_framing=max_framing) if not capture else
                  RawResponseReader(method, url, max_head=max_head, max_framing=max_framing, request_head=head))
        debug = self.pool.debug
        if debug:
            self.pool.log.debug("%s:%s > %s %s", host, port, method, target)
        conn.lease = lease
        # a connection that may pipeline but was not trusted yet: the GETs waiting for a place
        # join this request's write (a burst, see H1Connection.trusted)
        burst = (method == "GET" and conn.room is not None and conn.proven and not conn.trusted
                 and self._rtt.get(conn.key, 0.0) >= self._floor and conn.key not in self._no_pipe)
        conn.send(reader, head, burst)
        if burst:
            self._wake(conn.key)
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
        if conn.room is not None:  # pipelining on: the first answer proves the connection
            if not conn.proven and reader.keep_alive and reader.version == "1.1":
                conn.proven = True
            key = conn.key
            took = conn.round_trip()
            if took is not None:
                if took < self._rtt.get(key, took + 1):
                    self._rtt[key] = took
            self._learn(key, reader)
        return LeanResponse(conn, lease, reader, timeout)

    async def aclose(self) -> None:
        # every idle socket shut at once first: their transports all close in the next loop
        # turn, which the first connection's aclose waits for (not one turn per connection)
        for h in self.pool._hosts.values():
            for item in h.idle:
                item.conn.shut()
        await self.pool.aclose()

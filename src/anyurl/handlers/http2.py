"""HTTP/2 for https origins that pick it by ALPN: many requests on one connection (the h2 library).

:class:`H2Client` takes the lean path's https requests (``HTTPOptions(http2=True)``,
the default). The first request to an origin connects offering ``h2`` and
``http/1.1``; the requests that arrive meanwhile wait for that connection
instead of opening their own. When the server picks ``h2`` the connection is
an :class:`H2Connection` and every later request to the origin is a stream on
it; otherwise the connection is an HTTP/1.1 one (made by the factory
:mod:`~anyurl.handlers.http` hands in: this module imports nothing of the HTTP/1.1
driver), put in the pool idle, :meth:`H2Client.request` answers None and
:mod:`~anyurl.handlers.http` sends the request over HTTP/1.1 on it; the origin is
remembered as HTTP/1.1 for the Client's life.

Bounds, the same as HTTP/1.1's plus HTTP/2's own:

* connections: an HTTP/2 connection holds one of the pool's ``Limits.per_host``
  slots while it is open; a second one is opened only when every open one has
  as many streams as the server allows (its SETTINGS_MAX_CONCURRENT_STREAMS);
* requests in flight to a host: ``Limits.per_host_requests`` (a request waits,
  at most ``Timeouts.pool``, then :class:`~anyurl.errors.PoolTimeout`);
* flow control: each stream's window is ``_stream_window`` bytes, handed back
  (WINDOW_UPDATE) only as the caller takes the data, so a stream holds at most
  that much unread; the connection's window bounds all streams together;
* the response head: SETTINGS_MAX_HEADER_LIST_SIZE of ``max(2 * Limits.max_line,
  64 KiB)`` enforced by the HPACK decoder, at most 256 fields, frames of 16 KiB
  and h2's own cap on CONTINUATION frames;
* every wait (the head, each body piece) has the read timeout, never past
  ``Timeouts.total``;
* a malformed response head (:func:`~anyurl.protocols.http2.malformed_head`, RFC 9113 8.1.1) fails its own stream only.

A stream the server did not process is sent again on another connection
(at most ``_RETRIES`` times): one refused with RST_STREAM REFUSED_STREAM, or
one above a GOAWAY's last stream id (RFC 9113 8.7), or one that met a reused
connection closed before any answer. Streams at or below a GOAWAY's last id
go on to their end; no new stream starts on that connection.
"""

from __future__ import annotations

import asyncio
import collections
import importlib
import os
import ssl
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import (
    AnyURLError,
    ConnectError,
    FetchTimeout,
    OverlongTransfer,
    ProtocolError,
    TruncatedTransfer,
)
from ..net.connect import open_transport
from ..net.pool import Lease, Pool
from ..protocols.http1 import Headers, header_block
from ..protocols.http2 import GoawayFilter, malformed_head
from ..protocols.mime import parse_content_type

if TYPE_CHECKING:
    import h2
    import h2.config
    import h2.connection
    import h2.errors
    import h2.events
    import h2.exceptions
    import h2.settings

    from ..settings import Request
else:
    h2 = None  # the HTTP/2 library _load_h2 picked: jh2, or h2 (the same API)

__all__ = ["H2Client", "H2Connection", "H2Response"]

_Key = tuple[str, str, int]

#: tries of a request the server did not process (REFUSED_STREAM, above a GOAWAY's last id)
_RETRIES = 4
#: the connection's receive window: all its streams' unread data together
_CONNECTION_WINDOW = 16 << 20
#: bytes written but not yet sent on a connection before the server counts as not reading
_MAX_UNSENT = 1 << 20
#: requests encoded but not yet written after which they are written at once, not at the end of the
#: loop turn: a turn that starts many streams (the workers woken by one read) sends its first
#: requests while it encodes the rest, and the server starts on them a batch earlier
_WRITE_EVERY = 8
#: this client's own cap on streams per connection
_MAX_STREAMS = 256
#: the streams a new connection carries before the server's SETTINGS say how many it takes
#: (RFC 9113 6.5.2 recommends servers allow at least 100)
_FIRST_STREAMS = 100
# request headers HTTP/2 forbids (RFC 9113 8.2.2); Host becomes :authority
_HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "host"})


#: the library that speaks HTTP/2: "jh2" (h2's maintained fork, its HPACK compiled: 8-18x faster to
#: decode a response head, 5x to encode a request) where its wheel is installed, else "h2" (pure
#: Python); ANYURL_H2_LIBRARY=h2 picks h2 (the tests run both)
LIBRARY = ""
_never: Any = None  # the library's NeverIndexedHeaderTuple
_strict: Any = None  # wraps a compiled HPACK decoder (anyurl.protocols.hpack.StrictDecoder), or None
_Conn: Any = None  # the library's H2Connection, counting its open streams from anyurl's own


def _load_h2() -> None:
    """The HTTP/2 library's modules (about 17 ms of imports for h2 and hpack on a quiet machine,
    three times that on a busy one), loaded while the first TLS handshake waits for the server
    rather than before its ClientHello. Every use of ``h2.<module>`` comes after a connection
    picked h2."""
    global h2, LIBRARY, _never, _strict, _Conn
    if LIBRARY:
        return
    lib: Any = None
    if os.environ.get("ANYURL_H2_LIBRARY", "jh2") != "h2":
        try:
            lib = importlib.import_module("jh2")
            importlib.import_module("jh2.connection")
        except ImportError:
            lib = None
        # (without its compiled HPACK jh2 is h2 again: h2, the one tested, then)
        if lib is not None and not getattr(lib.connection, "ALTERNATIVE_HPACK", False):
            lib = None
    if lib is None:
        lib = importlib.import_module("h2")
    for sub in ("config", "connection", "errors", "events", "exceptions", "settings"):
        importlib.import_module(f"{lib.__name__}.{sub}")
    if lib.__name__ == "jh2":
        from ..protocols.hpack import StrictDecoder

        _never = importlib.import_module("jh2.hpack").NeverIndexedHeaderTuple
        error = lib.connection.HPACKError  # what the compiled decoder raises, and the connection catches

        def strict(decoder: Any) -> Any:
            return StrictDecoder(decoder, error)

        _strict = strict
    else:
        _never = importlib.import_module("hpack").NeverIndexedHeaderTuple
        _strict = None
    _Conn = _counting(lib.connection.H2Connection)
    h2 = lib
    LIBRARY = lib.__name__


#: a stream-count scan in the library (which also forgets closed streams) every so many new streams
_SCAN_EVERY = 32


def _counting(base: type) -> type:
    """*base* (the library's H2Connection) whose ``open_outbound_streams`` is anyurl's own count:
    the library counts by walking every stream at each new one (6% of the CPU of a small
    response at 100 streams). anyurl's count (its streams not yet finished) is never below the
    library's, and :meth:`H2Connection.has_room` keeps it under the server's limit; every
    ``_SCAN_EVERY`` streams the library's own count runs, which forgets the closed streams."""

    class Counting(base):  # type: ignore[misc]
        owner: H2Connection | None = None
        since_scan = 0

        @property
        def open_outbound_streams(self) -> int:
            owner = self.owner
            if owner is None or self.since_scan >= _SCAN_EVERY:
                self.since_scan = 0
                return int(super().open_outbound_streams)
            self.since_scan += 1
            return len(owner.streams)

    return Counting


def _never_indexed(name: bytes, value: bytes) -> tuple[bytes, bytes]:
    return _never(name, value)  # type: ignore[no-any-return]


def _stream_window(chunk_size: int) -> int:
    """Each stream's receive window: a chunk, between 64 KiB and 1 MiB."""
    return max(1 << 16, min(chunk_size, 1 << 20))


def _code_name(code: int) -> str:
    try:
        return h2.errors.ErrorCodes(code).name
    except ValueError:
        return f"error {code}"


class _Unprocessed(ConnectError):
    """The server did not process the request (it may go again on another connection)."""


class _Negotiated(asyncio.Protocol):
    """The protocol asyncio makes for an ALPN connection: once TLS is up it hands the
    transport to the connection of the protocol the server picked (before any data)."""

    def __init__(self, make_h2: Any, make_h1: Any) -> None:
        super().__init__()
        self._make_h2 = make_h2
        self._make_h1 = make_h1
        self.conn: asyncio.BaseProtocol | None = None  # an H2Connection, or the HTTP/1.1 one make_h1 gave

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        sslobj = transport.get_extra_info("ssl_object")
        picked = sslobj.selected_alpn_protocol() if sslobj is not None else None
        if picked == "h2":
            _load_h2()  # (done during the handshake already, as a rule)
        conn = self._make_h2() if picked == "h2" else self._make_h1()
        self.conn = conn
        transport.set_protocol(conn)
        conn.connection_made(transport)

    # (asyncio calls these only before connection_made, when the connection failed)
    def connection_lost(self, exc: Exception | None) -> None:
        pass

    def pause_writing(self) -> None:
        pass

    def resume_writing(self) -> None:
        pass

    def data_received(self, data: bytes) -> None:  # pragma: no cover - never before the switch
        pass

    def eof_received(self) -> bool | None:  # pragma: no cover
        return None


def _expire(w: asyncio.Future[None]) -> None:
    if not w.done():
        w.set_exception(TimeoutError())


class _Stream:
    """One request's stream: its head, the body pieces not yet taken, its end or error."""

    __slots__ = ("sid", "conn", "url", "fields", "chunks", "ended", "error", "waiter", "received", "finished",
                 "reused")

    def __init__(self, sid: int, conn: H2Connection, url: object, reused: bool) -> None:
        self.sid = sid
        self.conn = conn
        self.url = url
        self.fields: list[tuple[bytes, bytes]] | None = None  # the response head
        self.chunks: collections.deque[tuple[bytes, int]] = collections.deque()  # (data, flow-controlled size)
        self.ended = False
        self.error: AnyURLError | None = None
        self.waiter: asyncio.Future[None] | None = None
        self.received = 0
        self.finished = False  # given up by the response (released, closed, or failed before its head)
        self.reused = reused  # opened on a connection that carried other streams before

    def wake(self) -> None:
        w = self.waiter
        if w is not None and not w.done():
            w.set_result(None)

    async def wait(self, timeout: float | None) -> None:  # noqa: ASYNC109 - one timer per wait, not a scope
        """Until something happens on the stream; TimeoutError after *timeout* s without."""
        loop = self.conn.loop
        w = self.waiter = loop.create_future()
        timer = None if timeout is None else loop.call_later(timeout, _expire, w)
        try:
            await w
        finally:
            self.waiter = None
            if timer is not None:
                timer.cancel()


class H2Connection(asyncio.Protocol):
    """One HTTP/2 connection: the h2 state, its streams, and the pool slot it holds
    (a :class:`~anyurl.net.pool.Connection` that is never idle in the pool)."""

    def __init__(self, key: _Key, client: H2Client, *, window: int, max_header_list: int) -> None:
        self.key = key
        self.client = client
        self.loop = asyncio.get_running_loop()
        self.transport: asyncio.Transport | None = None
        self.lease: Lease[Any] | None = None
        # outbound fields are checked (CR, LF, NUL, names) and lower-cased by H2Client already;
        # inbound heads by malformed_head() (a stream error, not the connection's, RFC 9113 8.1.1)
        config = h2.config.H2Configuration(client_side=True, header_encoding=None,
                                           validate_outbound_headers=False, normalize_outbound_headers=False,
                                           validate_inbound_headers=False, normalize_inbound_headers=False)
        self.h2 = _Conn(config=config)
        self.h2.owner = self
        if _strict is not None:  # a compiled HPACK decoder: held to hpack's rules
            self.h2.decoder = _strict(self.h2.decoder)
        codes = h2.settings.SettingCodes
        self.h2.local_settings = h2.settings.Settings(client=True, initial_values={
            codes.ENABLE_PUSH: 0, codes.MAX_CONCURRENT_STREAMS: _MAX_STREAMS,
            codes.INITIAL_WINDOW_SIZE: window, codes.MAX_HEADER_LIST_SIZE: max_header_list})
        # the HPACK decoder's bound from the start (h2 applies a setting only once acknowledged)
        self.h2.decoder.max_header_list_size = max_header_list
        self.max_header_list = max_header_list
        self.frames = GoawayFilter()
        self.streams: dict[int, _Stream] = {}
        self.goaway: int | None = None  # the last stream id of a GOAWAY received
        self.lost = False
        self.opened = 0  # streams ever opened here
        self.settled = False  # the server's SETTINGS arrived
        self.first_limit = _FIRST_STREAMS  # the streams it carries until then
        self._idle: asyncio.TimerHandle | None = None
        self._flushing = False  # a _write is scheduled
        self._unwritten = 0  # requests encoded since the last write
        self._gone: asyncio.Future[None] | None = None

    # -- protocol side ---------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.h2.initiate_connection()
        self.h2.increment_flow_control_window(_CONNECTION_WINDOW - 65535)
        self._flush()

    def data_received(self, data: bytes) -> None:
        try:
            data, goaways = self.frames.feed(data)
            events = self.h2.receive_data(data) if data else []
        except AnyURLError as exc:  # (GoawayFilter's)
            self._broken(exc)
            return
        except h2.exceptions.ProtocolError as exc:
            self._write()  # h2's GOAWAY, before the socket closes
            self._broken(self._protocol_error(exc))
            return
        for ev in events:
            if isinstance(ev, h2.events.DataReceived):
                s = self.streams.get(ev.stream_id)
                size = ev.flow_controlled_length or 0
                if s is None or s.finished:
                    if size:  # nobody reads it: the window back at once
                        self._ack(size, ev.stream_id)
                    continue
                data_ = ev.data or b""
                if data_ or size:
                    s.chunks.append((data_, size))
                    s.received += len(data_)
                s.wake()
            elif isinstance(ev, h2.events.ResponseReceived):
                s = self.streams.get(ev.stream_id)
                if s is not None:
                    fields = list(ev.headers or ())
                    problem = malformed_head(fields)
                    if problem is not None:
                        self._reset(s, ProtocolError(f"malformed HTTP/2 response head: {problem}", url=s.url),
                                    h2.errors.ErrorCodes.PROTOCOL_ERROR)
                        continue
                    s.fields = fields
                    s.wake()
            elif isinstance(ev, h2.events.StreamEnded):
                s = self.streams.get(ev.stream_id)
                if s is not None:
                    s.ended = True
                    s.wake()
            elif isinstance(ev, h2.events.StreamReset):
                s = self.streams.get(ev.stream_id)
                if s is not None and s.error is None and not s.ended:
                    code = ev.error_code or 0
                    if s.fields is None and code == h2.errors.ErrorCodes.REFUSED_STREAM:
                        s.error = _Unprocessed("the server refused the stream (REFUSED_STREAM)", url=s.url)
                    elif s.fields is None:
                        s.error = ProtocolError(f"the server reset the stream ({_code_name(code)})", url=s.url)
                    else:
                        s.error = TruncatedTransfer(f"the server reset the stream after {s.received} bytes "
                                                    f"({_code_name(code)})", url=s.url)
                    s.wake()
            elif isinstance(ev, h2.events.ConnectionTerminated):  # (h2's own, after its protocol error)
                self._goaway(ev.last_stream_id or 0, ev.error_code or 0)
            elif isinstance(ev, h2.events.RemoteSettingsChanged):
                self.settled = True
                self.client.settings(self.key, self.h2.remote_settings.max_concurrent_streams)
        for last, code, _debug in goaways:
            self._goaway(last, code)
        self._flush()

    def eof_received(self) -> bool | None:
        return False  # close the transport: connection_lost follows

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.lost:
            self.lost = True
            why = f": {exc}" if exc is not None else ""
            for s in list(self.streams.values()):
                if s.error is None and not s.ended:
                    if s.fields is None and s.reused and self.goaway is None:
                        s.error = _Unprocessed(f"the connection closed before the server answered{why}",
                                               url=s.url)
                    elif s.fields is None:
                        s.error = ConnectError(f"connection lost before the response{why}", url=s.url)
                    else:
                        s.error = TruncatedTransfer(f"connection closed after {s.received} bytes{why}",
                                                    url=s.url)
                    s.wake()
            if self._idle is not None:
                self._idle.cancel()
                self._idle = None
            self.client.gone(self)
        gone = self._gone
        if gone is not None and not gone.done():
            gone.set_result(None)

    # -- internals -------------------------------------------------------------------

    def _flush(self) -> None:
        """Write what h2 has to send at the end of this loop turn: the requests (and window
        updates) of every stream started in one turn go out in one TLS write."""
        if not self._flushing:
            self._flushing = True
            self.loop.call_soon(self._write)

    def _write(self) -> None:
        self._flushing = False
        self._unwritten = 0
        data = self.h2.data_to_send()
        t = self.transport
        if data and t is not None and not t.is_closing():
            t.write(data)
            if t.get_write_buffer_size() > _MAX_UNSENT:
                # what a client sends is small (requests, acks): this much unsent means a server
                # that sends (PINGs, SETTINGS: each answered) but does not read
                self._broken(ProtocolError(f"the server does not read what it asks for (more than "
                                           f"{_MAX_UNSENT} bytes of answers to its frames unsent)", url=None))

    def _ack(self, size: int, sid: int) -> None:
        """Hand *size* bytes of window back (nothing once h2 closed the connection itself)."""
        try:
            self.h2.acknowledge_received_data(size, sid)
        except h2.exceptions.ProtocolError:
            pass

    def _protocol_error(self, exc: h2.exceptions.ProtocolError) -> AnyURLError:
        if isinstance(exc, h2.exceptions.InvalidBodyLengthError):
            cls = OverlongTransfer if exc.actual_length > exc.expected_length else TruncatedTransfer
            return cls(f"the body's length ({exc.actual_length} bytes) differs from its Content-Length "
                       f"({exc.expected_length})", url=None)
        if isinstance(exc, h2.exceptions.DenialOfServiceError):
            return ProtocolError(f"response head refused: {exc} (at most {self.max_header_list} bytes "
                                 "of header list)", url=None)
        return ProtocolError(f"HTTP/2 protocol error from the server: {exc}", url=None)

    def _broken(self, exc: AnyURLError) -> None:
        """A connection error: every stream fails with *exc* (naming its URL), the socket is closed."""
        for s in self.streams.values():
            if s.error is None and not (s.ended and not s.chunks):
                err = type(exc)(exc.message, url=s.url)
                s.error = err
                s.wake()
        self.goaway = self.goaway if self.goaway is not None else 0
        if self.transport is not None:
            self.transport.close()

    def _goaway(self, last: int, code: int) -> None:
        """GOAWAY: streams above *last* were not processed (sent again elsewhere); the others end."""
        self.goaway = last if self.goaway is None else min(self.goaway, last)
        for sid, s in self.streams.items():
            if sid > last and s.error is None and not s.ended:
                s.error = _Unprocessed(f"the server sent GOAWAY ({_code_name(code)}) before processing it",
                                       url=s.url)
                s.wake()
        self.client.retire(self)
        self._close_if_idle()

    def _reset(self, s: _Stream, err: AnyURLError, code: int | None = None) -> None:
        if s.error is None:
            s.error = err
        try:
            self.h2.reset_stream(s.sid, h2.errors.ErrorCodes.CANCEL if code is None else code)
        except h2.exceptions.ProtocolError:
            pass  # closed already
        s.wake()

    def _close_if_idle(self) -> None:
        if self.streams:
            return
        if self.goaway is not None:
            self.shut()
            return
        if self._idle is None and not self.lost:
            self._idle = self.loop.call_later(self.client.max_idle, self._idle_out)

    def _idle_out(self) -> None:
        self._idle = None
        if not self.streams:
            self.client.log.debug("closing idle HTTP/2 connection to %s:%s", self.key[1], self.key[2])
            self.goaway = self.goaway if self.goaway is not None else 0
            self.client.retire(self)
            self.shut()

    # -- the client's side --------------------------------------------------------------

    def usable(self) -> bool:
        """Open, and new streams may start on it."""
        t = self.transport
        return t is not None and not self.lost and self.goaway is None and not t.is_closing()

    def has_room(self) -> bool:
        limit = (min(self.h2.remote_settings.max_concurrent_streams, _MAX_STREAMS) if self.settled
                 else self.first_limit)
        # (len(self.streams), not h2's open_outbound_streams: that scans every stream each call;
        # a stream leaves self.streams only once closed in h2 too, ended or reset)
        return self.usable() and len(self.streams) < limit

    def open_stream(self, fields: list[tuple[bytes, bytes]], url: object) -> _Stream:
        """Send a request without a body; its stream."""
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None
        try:
            sid = self.h2.get_next_available_stream_id()
            # the path differs from request to request: never put in HPACK's dynamic table, where
            # it would only evict the fields that repeat and lengthen every look-up (about a third
            # less CPU per request in h2's encoder)
            if type(fields[3]) is tuple:
                fields[3] = _never_indexed(*fields[3])
            self.h2.send_headers(sid, fields, end_stream=True)
        except h2.exceptions.NoAvailableStreamIDError:
            self.goaway = 0  # stream ids used up: a new connection
            self.client.retire(self)
            self._close_if_idle()
            raise _Unprocessed("no stream id left on the connection", url=url) from None
        except h2.exceptions.TooManyStreamsError:
            raise _Unprocessed("no stream free on the connection", url=url) from None
        s = _Stream(sid, self, url, self.opened > 0)
        self.opened += 1
        self.streams[sid] = s
        self._unwritten += 1
        if self._unwritten >= _WRITE_EVERY:
            self._write()
        else:
            self._flush()
        return s

    def take(self, s: _Stream, most: int) -> bytes:
        """The pieces of *s* that arrived (there is one), joined up to *most* bytes (nginx sends
        8 KiB frames: one piece per frame would cost a round of the caller's loop each); their
        window handed back."""
        chunks = s.chunks
        data, size = chunks.popleft()
        if chunks and len(data) < most:
            parts = [data]
            n = len(data)
            while chunks and n + len(chunks[0][0]) <= most:
                piece, more = chunks.popleft()
                parts.append(piece)
                n += len(piece)
                size += more
            data = b"".join(parts)
        if size and not self.lost:
            self._ack(size, s.sid)
            self._flush()
        return data

    def finish(self, s: _Stream) -> None:
        """The response is done with *s*: reset it if it has not ended, its window given back."""
        if s.finished:
            return
        s.finished = True
        if not self.lost:
            acked = sum(size for _, size in s.chunks)
            s.chunks.clear()
            if acked:
                self._ack(acked, s.sid)
            if not s.ended:
                try:
                    self.h2.reset_stream(s.sid, h2.errors.ErrorCodes.CANCEL)
                except h2.exceptions.ProtocolError:
                    pass  # closed already (reset by the server)
            self._flush()
        self.streams.pop(s.sid, None)
        self.client.stream_done(self)
        self._close_if_idle()

    # -- what the pool needs ----------------------------------------------------------

    def is_reusable(self) -> bool:
        return False  # never idle in the pool: its streams are lent by H2Client

    async def reset_for(self, target: Any) -> bool:
        return False

    def shut(self) -> None:
        t = self.transport
        if t is not None and not t.is_closing():
            try:
                self.h2.close_connection()
                self._write()
            except h2.exceptions.ProtocolError:
                pass
            # over TLS close() waits for the server's close_notify (a round trip, up to 30 s);
            # GOAWAY and close_notify are written already and HTTP needs no answer: abort too
            t.close()
            t.abort()

    async def aclose(self) -> None:
        if self.transport is None:
            return
        self.shut()
        if not self.lost:
            self._gone = gone = self.loop.create_future()
            try:
                async with asyncio.timeout(1.0):
                    await gone
            except TimeoutError:
                self.abort()

    def abort(self) -> None:
        if self.transport is not None:
            self.transport.abort()


class H2Response:
    """A response read from an HTTP/2 stream (the interface :mod:`.http` uses for both
    paths: status, reason, headers, content_length/type, charset, read/release/close)."""

    http_version = "HTTP/2"

    def __init__(self, stream: _Stream, host: str, port: int, timeout: float | None) -> None:
        self.stream = stream
        self.host = host
        self.port = port
        fields = stream.fields or []
        status = 0
        pairs = []
        for name, value in fields:
            if name.startswith(b":"):
                if name == b":status":
                    status = int(value) if value.isdigit() else 0
                continue
            pairs.append((name, value))
        self.status = status
        self.reason = _reason(status)
        self.headers: Headers = Headers.from_fields(pairs)
        cl = self.headers.get("content-length")
        self.content_length = int(cl) if cl is not None and cl.isdigit() else None
        self.content_type, self.charset = parse_content_type(self.headers.get("content-type"))
        self._timeout = timeout
        self._size = 1 << 20  # the most read_chunk joins when given no size
        self._done = False
        self._started = False

    async def read_chunk(self, size: int = 0) -> bytes:
        """The next body piece as it arrived (a DATA frame's), b"" at the end."""
        s = self.stream
        self._started = True
        conn = s.conn
        while True:
            if s.chunks:
                data = conn.take(s, size or self._size)
                if data:
                    return data
                continue
            if s.error is not None:
                raise s.error
            if s.ended:
                return b""
            try:
                await s.wait(self._timeout)
            except TimeoutError:
                raise FetchTimeout(f"timed out while reading the body (no data for {self._timeout:.3g} s)",
                                   url=s.url) from None

    def buffered_body(self) -> list[bytes] | None:
        """All of the body when it arrived already and nothing was read of it; else None."""
        s = self.stream
        if self._started or not s.ended or s.error is not None:
            return None
        self._started = True
        pieces = [data for data, _ in s.chunks if data]
        self._finish()  # (the window of every piece given back)
        return pieces

    def widen(self, chunk_size: int) -> None:
        """Nothing to do: flow control sets what may arrive."""

    def _finish(self) -> None:
        if not self._done:
            self._done = True
            s = self.stream
            s.conn.finish(s)
            s.conn.client.pool.exit_request(self.host, self.port)

    def release_now(self) -> bool:
        """Done (never a wait: the stream is reset when it has not ended)."""
        self._finish()
        return True

    async def release(self) -> None:
        self._finish()

    async def close(self) -> None:
        self._finish()


# the common ones without importing http's HTTPStatus (an enum of ~60 members: ~1% of a small batch's CPU)
_REASONS: dict[int, str] = {200: "OK", 204: "No Content", 206: "Partial Content", 301: "Moved Permanently",
                            302: "Found", 304: "Not Modified", 404: "Not Found"}
_ALL_REASONS = False


def _reason(status: int) -> str:
    """HTTP/2 has no reason phrase: the standard one, as HTTP/1.1 servers send it."""
    global _ALL_REASONS
    reason = _REASONS.get(status)
    if reason is None and not _ALL_REASONS:
        from http import HTTPStatus

        _REASONS.update({s.value: s.phrase for s in HTTPStatus})
        _ALL_REASONS = True
        reason = _REASONS.get(status)
    return reason or ""


class _Origin:
    """The HTTP/2 connections to one origin, the one opening, and who waits for a stream."""

    __slots__ = ("conns", "opening", "waiters", "limit")

    def __init__(self) -> None:
        self.limit = _FIRST_STREAMS  # the server's SETTINGS_MAX_CONCURRENT_STREAMS, once known
        self.conns: list[H2Connection] = []
        self.opening: asyncio.Future[None] | None = None
        self.waiters: collections.deque[asyncio.Future[None]] = collections.deque()

    def wake(self) -> None:
        for fut in self.waiters:
            if not fut.done():
                fut.set_result(None)


class H2Client:
    """HTTPS requests over HTTP/2 where the server picks it; one per HTTPHandler, on the HTTP/1.1
    client's *pool*. Where the server picks HTTP/1.1 by ALPN, :meth:`request` answers None and
    leaves the connection (made by *make_h1*: the HTTP/1.1 driver's, which this module does not
    import) idle in the pool: :mod:`.http` then sends the request over HTTP/1.1."""

    def __init__(self, pool: Pool[Any], ssl_source: Callable[[], ssl.SSLContext],
                 make_h1: Callable[[_Key, int], asyncio.BaseProtocol]) -> None:
        self.pool = pool
        self._make_h1 = make_h1
        self.log = self.pool.log
        self._ssl_source = ssl_source  # makes the context offering h2 (anyurl.net.tls), on first use
        self._ssl: ssl.SSLContext | None = None
        self._origins: dict[_Key, _Origin] = {}
        self._h1_only: set[_Key] = set()  # origins that did not pick h2
        self._live: set[H2Connection] = set()  # every open connection, retired ones included
        self.max_idle = 60.0
        self._block_of: list[tuple[str, str]] | None = None
        self._fields: list[tuple[bytes, bytes]] = []
        self._authority: bytes | None = None
        self.pool.room_makers.append(self._make_room)

    def _context(self) -> ssl.SSLContext:
        if self._ssl is None:
            self._ssl = self._ssl_source()
        return self._ssl

    # -- the connections' callbacks ---------------------------------------------------

    def wake(self, key: _Key) -> None:
        o = self._origins.get(key)
        if o is not None:
            o.wake()

    def settings(self, key: _Key, max_streams: int) -> None:
        """The server's stream limit: kept for the origin's next connections, before their own SETTINGS."""
        o = self._origins.get(key)
        if o is not None:
            o.limit = min(max_streams, _MAX_STREAMS)
            o.wake()  # the limit may have risen

    def _make_room(self, address: tuple[str, int]) -> None:
        """A request waits for a slot to *address*: close the connections there that carry no stream."""
        for c in list(self._live):
            if (c.key[1], c.key[2]) == address and not c.streams:
                c.goaway = c.goaway if c.goaway is not None else 0
                self.retire(c)
                c.shut()

    def stream_done(self, conn: H2Connection) -> None:
        self.wake(conn.key)

    def retire(self, conn: H2Connection) -> None:
        """*conn* takes no new stream (GOAWAY, idle, ids used up): others go elsewhere."""
        o = self._origins.get(conn.key)
        if o is not None and conn in o.conns:
            o.conns.remove(conn)
            o.wake()

    def gone(self, conn: H2Connection) -> None:
        """*conn*'s socket closed: its pool slot is free."""
        self.retire(conn)
        self._live.discard(conn)
        lease, conn.lease = conn.lease, None
        if lease is not None:
            lease.forget()

    def multiplexed(self, key: _Key) -> bool:
        """True when requests to *key* go as streams of an HTTP/2 connection open now."""
        o = self._origins.get(key)
        return o is not None and any(c.usable() for c in o.conns)

    async def negotiated(self, key: _Key) -> bool:
        """:meth:`multiplexed`, once the connection being opened to *key* (if any) has picked
        its protocol: a caller learns at the handshake, not after a first response, that more
        requests may go at once. (The opening is bounded by its connect timeout.)"""
        o = self._origins.get(key)
        if o is not None and o.opening is not None and not any(c.usable() for c in o.conns):
            fut = asyncio.get_running_loop().create_future()
            o.waiters.append(fut)
            try:
                await fut  # (woken when the opening ends, or when a stream frees)
            finally:
                o.waiters.remove(fut)
        return self.multiplexed(key)

    # -- requests --------------------------------------------------------------------

    async def request(self, req: Request, method: str, scheme: str, host: str, port: int, target: str,
                      hostport: str, headers: list[tuple[str, str]], url: object) -> H2Response | None:
        """Send one request and wait for its head: an :class:`H2Response`; None, sending
        nothing, where the server did not pick h2 (the caller goes over HTTP/1.1)."""
        key: _Key = (scheme, host, port)
        if key in self._h1_only:
            return None
        self.max_idle = req.limits.max_idle
        fields = self._request_fields(method, target, hostport, headers, url)
        timeout = req.timeouts.read if req.deadline is None else req.read_timeout
        tries = 0
        while True:
            await self.pool.enter_request(req, host, port)
            try:
                conn = await self._connection(req, key, url)
            except BaseException:
                self.pool.exit_request(host, port)
                raise
            if conn is None:  # the server did not pick h2
                self.pool.exit_request(host, port)
                return None
            try:
                return await self._exchange(conn, fields, method, target, host, port, timeout, url)
            except _Unprocessed as exc:
                tries += 1
                if tries >= _RETRIES:
                    raise ConnectError(f"{exc.message} ({tries} tries)", url=url) from None
                self.log.debug("%s:%s did not process %s %s (%s); sending it again", host, port, method,
                               target, exc.message)

    async def _exchange(self, conn: H2Connection, fields: list[tuple[bytes, bytes]], method: str, target: str,
                        host: str, port: int, timeout: float | None,  # noqa: ASYNC109 - per wait
                        url: object) -> H2Response:
        """One stream on *conn*: the response once its head arrived. The request slot
        (enter_request) passes to the response, or is given back on an error."""
        try:
            s = conn.open_stream(fields, url)
        except BaseException:
            self.pool.exit_request(host, port)
            raise
        debug = self.pool.log.isEnabledFor(10)
        if debug:
            self.log.debug("%s:%s > %s %s (HTTP/2 stream %d)", host, port, method, target, s.sid)
        try:
            while s.fields is None:
                if s.error is not None:
                    raise s.error
                if s.ended:
                    raise ProtocolError("the server ended the stream without a response", url=url)
                await s.wait(timeout)
        except BaseException as exc:
            conn.finish(s)
            self.pool.exit_request(host, port)
            if isinstance(exc, TimeoutError):
                raise FetchTimeout(f"timed out while waiting for the response to {method} {target} "
                                   f"from {host}:{port}", url=url) from None
            raise
        resp = H2Response(s, host, port, timeout)
        if debug:
            self.log.debug("%s:%s < %s %s (HTTP/2 stream %d)", host, port, resp.status, resp.reason, s.sid)
        return resp

    def _request_fields(self, method: str, target: str, hostport: str, headers: list[tuple[str, str]],
                        url: object) -> list[tuple[bytes, bytes]]:
        """The request's header fields; CR, LF, NUL and bad names refused as on HTTP/1.1."""
        if headers is not self._block_of:
            own_host, _ = header_block(headers, url)  # (the checks; its lines are HTTP/1.1's)
            rest: list[tuple[bytes, bytes]] = []
            for name, value in headers:
                low = name.lower()
                if low in _HOP_BY_HOP or (low == "te" and value.strip().lower() != "trailers"):
                    continue
                rest.append((low.encode("ascii", "surrogateescape"), value.encode("utf-8", "surrogateescape")))
            self._fields = rest
            self._authority = None if own_host is None else own_host.encode("utf-8", "surrogateescape")
            self._block_of = headers
        from ..protocols.http1 import request_start

        request_start(method, target, url)  # (the same refusals of the target as HTTP/1.1)
        authority = self._authority or hostport.encode("utf-8", "surrogateescape")
        return [(b":method", method.encode()), (b":scheme", b"https"), (b":authority", authority),
                (b":path", target.encode("utf-8", "surrogateescape")), *self._fields]

    async def _connection(self, req: Request, key: _Key, url: object) -> H2Connection | None:
        """An HTTP/2 connection to *key* with a stream free (None: the server speaks HTTP/1.1),
        opening one when none has room and the pool allows; waits at most ``Timeouts.pool``
        with no stream ending meanwhile (each one that ends starts the count again)."""
        o = self._origins.get(key)
        if o is None:
            o = self._origins[key] = _Origin()
        _, host, port = key
        loop = asyncio.get_running_loop()
        wait = req.bound(req.timeouts.pool)
        until = None if wait is None else loop.time() + wait
        while True:
            for c in o.conns:
                if c.has_room():
                    return c
            if key in self._h1_only:
                return None
            # another connection only once every open one is full by its server's own SETTINGS
            # (before them a connection takes 100: the rest wait a round trip for them, not a new
            # connection's two or three)
            if o.opening is None and (not o.conns or (self.pool.open_count(host, port) < req.limits.per_host
                                                      and all(c.settled for c in o.conns))):
                return await self._open(req, key, o, url)
            # wait for the connection being opened, or for a stream to end
            fut = loop.create_future()
            o.waiters.append(fut)
            try:
                async with asyncio.timeout_at(until):
                    await fut
            except TimeoutError:
                from ..errors import PoolTimeout

                raise PoolTimeout(f"waited {wait:.3g} s for a free HTTP/2 stream to {host}:{port} "
                                  f"with none ending meanwhile (Limits.per_host={req.limits.per_host}, "
                                  "every connection's streams busy)", url=req.url) from None
            finally:
                o.waiters.remove(fut)
            # a stream ended (or a connection opened): busy, not stuck (a batch of large files
            # on a server of few streams), so Timeouts.pool counts again, never past the deadline
            wait = req.bound(req.timeouts.pool)
            until = None if wait is None else loop.time() + wait

    async def _open(self, req: Request, key: _Key, o: _Origin, url: object) -> H2Connection | None:
        scheme, host, port = key
        o.opening = asyncio.get_running_loop().create_future()
        limits = req.limits
        chunk_size = limits.chunk_size
        window = _stream_window(chunk_size)
        max_header_list = max(2 * limits.max_line, 1 << 16)

        async def connect() -> Any:
            loop = asyncio.get_running_loop()
            ctx = self._context()
            def make_h2() -> H2Connection:
                conn = H2Connection(key, self, window=window, max_header_list=max_header_list)
                conn.first_limit = o.limit
                return conn

            proto = _Negotiated(make_h2, lambda: self._make_h1(key, chunk_size))
            if not LIBRARY:
                # the library's imports in the handshake's wait: two loop turns on, when the transport's
                # connection_made (scheduled as the connection is made) has sent the ClientHello
                loop.call_soon(loop.call_soon, _load_h2)
            await open_transport(url, scheme, host, port, lambda: proto, timeout=req.connect_timeout, tls=ctx)
            assert proto.conn is not None
            return proto.conn

        try:
            lease = await self.pool.acquire(req, host, port, key, connect, fresh=True)
            conn = lease.conn
            if isinstance(conn, H2Connection):
                self.log.debug("%s:%s speaks HTTP/2", host, port)
                conn.lease = lease
                self._live.add(conn)
                if conn.lost:  # closed before it was lent
                    self.gone(conn)
                else:
                    o.conns.append(conn)
                return conn
            # HTTP/1.1: remembered for the Client's life; this connection goes to the HTTP/1.1 client
            self.log.debug("%s:%s did not pick HTTP/2: HTTP/1.1", host, port)
            if len(self._h1_only) >= 1024:  # bounded: a crawl meets many hosts
                self._h1_only.clear()
            self._h1_only.add(key)
            if not lease.keep_idle():
                await lease.release(False)
            return None
        finally:
            fut, o.opening = o.opening, None
            if not fut.done():
                fut.set_result(None)
            o.wake()

    async def aclose(self) -> None:
        """Close every HTTP/2 connection (GOAWAY, then the socket)."""
        self._origins = {}
        conns = list(self._live)
        for c in conns:
            c.goaway = c.goaway if c.goaway is not None else 0
        for c in conns:
            c.shut()
        for c in conns:
            await c.aclose()
            lease, c.lease = c.lease, None
            if lease is not None:
                lease.forget()

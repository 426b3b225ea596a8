"""HTTP/3 over QUIC for https origins (qh3, the ``anyurl[http3]`` extra).

:class:`H3Client` takes the https requests :mod:`.http` sends over QUIC: when
``HTTPOptions(http3=True)`` (the CLI's ``--http3``) asks for it, or when an earlier response
from the origin said ``Alt-Svc: h3=":PORT"`` (see :class:`~anyurl.protocols.http3.AltSvcCache`).
Which version a request uses is chosen in :mod:`.http` only; this module speaks HTTP/3 and
nothing else (it imports neither the HTTP/1.1 nor the HTTP/2 driver).

One QUIC connection per origin carries every request as a stream of its own; the requests
that arrive while it is being opened wait for it. The UDP socket is our own (connected, so
an ICMP "port unreachable" ends the handshake at once), read by the loop's reader callback.

When QUIC cannot be used (the UDP port refuses, nothing answers before the handshake's
deadline, the handshake fails, qh3 is not installed) the request fails with
:class:`H3Unavailable` before anything was sent, and :mod:`.http` goes over TCP instead.

Bounds:

* the handshake: ``HTTPOptions.http3_timeout``, never past ``Timeouts.connect`` or the
  request's deadline;
* streams: at most what the server's MAX_STREAMS allows; a request waits for a free one
  (``Timeouts.pool``, then :class:`~anyurl.errors.PoolTimeout`);
* memory: the body bytes received but not yet taken, all streams together, at most
  ``_MAX_BUFFERED`` (at least a chunk); past it the socket is not read (the server's packets
  wait in the kernel or are dropped, and QUIC's loss recovery and congestion control slow it)
  until the caller takes data. qh3 widens QUIC's flow-control windows as data arrives, not
  as it is consumed, so the windows alone would not bound it;
* the response head: at most 256 fields, checked by
  :func:`~anyurl.protocols.http3.malformed_head` (qh3 bounds its QPACK size);
* every wait (the head, each body piece) has the read timeout, never past ``Timeouts.total``.
"""

from __future__ import annotations

import asyncio
import collections
import importlib
import importlib.util
import logging
import socket
import ssl
from typing import TYPE_CHECKING, Any

from ..errors import AnyURLError, ConnectError, FetchTimeout, PoolTimeout, ProtocolError, TruncatedTransfer
from ..protocols.http1 import Headers, header_block, request_start
from ..protocols.http3 import malformed_head
from ..protocols.mime import content_type_of

if TYPE_CHECKING:
    from ..settings import Request

__all__ = ["H3Client", "H3Response", "H3Unavailable", "available"]

_log = logging.getLogger("anyurl.http")

_Key = tuple[str, int]  # (host, port) of the origin
#: body bytes held for the caller, all streams of a connection together, before the socket waits
_MAX_BUFFERED = 8 << 20
#: datagrams read per wake-up of the reader (then the events are handled and the acks sent)
_READ_BATCH = 64
#: H3_NO_ERROR, H3_REQUEST_CANCELLED (RFC 9114 8.1)
_NO_ERROR = 0x100
_CANCELLED = 0x10C
# request fields HTTP/3 forbids (RFC 9114 4.2); Host becomes :authority
_HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "host"})

# qh3's modules, loaded on the first HTTP/3 connection (about 100-300 ms of imports on this
# machine: never on a path that does not use HTTP/3)
_q: Any = None


def available() -> bool:
    """True when qh3 (``pip install anyurl[http3]``) is installed."""
    return _q is not None or importlib.util.find_spec("qh3") is not None


def _load() -> Any:
    global _q
    if _q is None:
        mods = {name: importlib.import_module(f"qh3.{name}") for name in
                ("quic.configuration", "quic.connection", "quic.events", "h3.connection", "h3.events")}

        class Q:
            Configuration = mods["quic.configuration"].QuicConfiguration
            QuicConnection = mods["quic.connection"].QuicConnection
            H3Connection = mods["h3.connection"].H3Connection
            HandshakeCompleted = mods["quic.events"].HandshakeCompleted
            ConnectionTerminated = mods["quic.events"].ConnectionTerminated
            StreamReset = mods["quic.events"].StreamReset
            HeadersReceived = mods["h3.events"].HeadersReceived
            DataReceived = mods["h3.events"].DataReceived

        _q = Q
    return _q


class H3Unavailable(ConnectError):
    """QUIC did not reach the origin (refused, no answer before the deadline, the handshake
    failed, qh3 missing): nothing was sent, the request may go over TCP."""


def _expire(w: asyncio.Future[None]) -> None:
    if not w.done():
        w.set_exception(TimeoutError())


class _Stream:
    """One request's stream: its head, the body pieces not yet taken, its end or error."""

    __slots__ = ("sid", "conn", "url", "fields", "chunks", "ended", "error", "waiter", "finished")

    def __init__(self, sid: int, conn: H3Connection, url: object) -> None:
        self.sid = sid
        self.conn = conn
        self.url = url
        self.fields: list[tuple[bytes, bytes]] | None = None
        self.chunks: collections.deque[bytes] = collections.deque()
        self.ended = False
        self.error: AnyURLError | None = None
        self.waiter: asyncio.Future[None] | None = None
        self.finished = False

    def wake(self) -> None:
        w = self.waiter
        if w is not None and not w.done():
            w.set_result(None)

    async def wait(self, timeout: float | None) -> None:  # noqa: ASYNC109 - one timer per wait, not a scope
        loop = self.conn.loop
        w = self.waiter = loop.create_future()
        timer = None if timeout is None else loop.call_later(timeout, _expire, w)
        try:
            await w
        finally:
            self.waiter = None
            if timer is not None:
                timer.cancel()


class H3Connection:
    """One QUIC connection and its HTTP/3 state, driven from a UDP socket of our own."""

    def __init__(self, client: H3Client, key: _Key, udp_port: int, max_buffered: int) -> None:
        self.client = client
        self.key = key
        self.udp_port = udp_port
        self.loop = asyncio.get_running_loop()
        self.sock: socket.socket | None = None
        self.addr: Any = None
        self.quic: Any = None
        self.h3: Any = None
        self.streams: dict[int, _Stream] = {}
        self.buffered = 0
        self.max_buffered = max_buffered
        self.reading = False
        self.ready: asyncio.Future[None] = self.loop.create_future()
        self.closed = False
        self.error: AnyURLError | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at: float | None = None
        self._room: collections.deque[asyncio.Future[None]] = collections.deque()  # requests waiting for a stream
        self._flush_due = False  # a _flush is scheduled for the end of this loop turn

    @property
    def transport(self) -> socket.socket | None:
        """The UDP socket while open (a capture's peer)."""
        return self.sock

    # -- opening -------------------------------------------------------------------

    async def open(self, config: Any, timeout: float | None) -> None:  # noqa: ASYNC109 - the handshake's deadline
        """Resolve, connect the socket and finish the QUIC handshake within *timeout* s;
        :class:`H3Unavailable` when it cannot."""
        host, _ = self.key
        where = f"{host}:{self.udp_port}"
        q = _load()
        try:
            async with asyncio.timeout(timeout):
                infos = await self.loop.getaddrinfo(host, self.udp_port, type=socket.SOCK_DGRAM)
                family, _, _, _, addr = infos[0]
                sock = socket.socket(family, socket.SOCK_DGRAM)
                self.sock = sock
                sock.setblocking(False)
                try:  # room for a window's packets while the loop is busy elsewhere
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
                except OSError:
                    pass
                sock.connect(addr)
                self.addr = addr
                self.quic = q.QuicConnection(configuration=config)
                self.h3 = q.H3Connection(self.quic)
                self._resume()
                self.quic.connect(addr, now=self.loop.time())
                self._flush()
                await self.ready
        except TimeoutError:
            self.abort()
            raise H3Unavailable(f"QUIC handshake with {where} timed out (no HTTP/3 answer in "
                                f"{timeout:.3g} s)") from None
        except H3Unavailable:
            self.abort()
            raise
        except AnyURLError as exc:
            self.abort()
            raise H3Unavailable(f"QUIC handshake with {where} failed: {exc.message}") from exc
        except (OSError, ValueError) as exc:
            self.abort()
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise H3Unavailable(f"cannot reach {where} over QUIC: {reason}") from exc

    # -- the socket's side ---------------------------------------------------------------

    def _resume(self) -> None:
        if not self.reading and self.sock is not None and not self.closed:
            self.reading = True
            self.loop.add_reader(self.sock.fileno(), self._readable)

    def _pause(self) -> None:
        if self.reading and self.sock is not None:
            self.reading = False
            self.loop.remove_reader(self.sock.fileno())

    def _readable(self) -> None:
        sock, quic, addr = self.sock, self.quic, self.addr
        if sock is None:
            return
        now = self.loop.time()
        for _ in range(_READ_BATCH):
            try:
                data = sock.recv(65536)
            except (BlockingIOError, InterruptedError):
                break
            except OSError as exc:  # an ICMP error (port unreachable) on the connected socket
                self._lost(H3Unavailable(f"cannot reach {self.key[0]}:{self.udp_port} over QUIC: "
                                         f"{exc.strerror or exc}"))
                return
            quic.receive_datagram(data, addr, now=now)
        self._events()
        self._flush()

    def _flush(self) -> None:
        """Send what QUIC has to send, and set its timer."""
        sock, quic = self.sock, self.quic
        if sock is None or quic is None:
            return
        for data, _ in quic.datagrams_to_send(now=self.loop.time()):
            try:
                sock.send(data)
            except (BlockingIOError, InterruptedError):
                break  # QUIC sends it again (it counts as lost)
            except OSError as exc:
                self._lost(H3Unavailable(f"cannot reach {self.key[0]}:{self.udp_port} over QUIC: "
                                         f"{exc.strerror or exc}"))
                return
        at = quic.get_timer()
        if at != self._timer_at:
            if self._timer is not None:
                self._timer.cancel()
            self._timer_at = at
            self._timer = None if at is None else self.loop.call_at(at, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = self._timer_at = None
        if self.quic is None or self.closed:
            return
        self.quic.handle_timer(now=self.loop.time())
        self._events()
        self._flush()

    def _events(self) -> None:
        q = _q
        quic, h3 = self.quic, self.h3
        streams = self.streams
        while (ev := quic.next_event()) is not None:
            kind = type(ev)
            if kind is q.ConnectionTerminated:
                reason = ev.reason_phrase or f"error {ev.error_code:#x}"
                if not self.ready.done():
                    self._lost(H3Unavailable(f"QUIC handshake with {self.key[0]}:{self.udp_port} "
                                             f"failed: {reason}"))
                else:
                    self._lost(ConnectError(f"HTTP/3 connection to {self.key[0]}:{self.key[1]} closed: "
                                            f"{reason}"))
                return
            if kind is q.HandshakeCompleted:
                if not self.ready.done():
                    self.ready.set_result(None)
                continue
            if kind is q.StreamReset:
                s = streams.get(ev.stream_id)
                if s is not None and not s.ended:
                    s.error = TruncatedTransfer(f"the server reset the HTTP/3 stream (error {ev.error_code:#x})",
                                                url=s.url)
                    s.wake()
                continue
            for h in h3.handle_event(ev):
                s = streams.get(h.stream_id)
                if s is None:
                    continue
                hk = type(h)
                if hk is q.DataReceived:
                    if h.data:
                        s.chunks.append(h.data)
                        self.buffered += len(h.data)
                elif hk is q.HeadersReceived:
                    if s.fields is None:
                        bad = malformed_head(h.headers)
                        if bad is not None:
                            s.error = ProtocolError(f"malformed HTTP/3 response head: {bad}", url=s.url)
                            self._cancel(s)
                        s.fields = list(h.headers)
                    # (trailers: ignored, as on HTTP/2)
                else:
                    continue
                if h.stream_ended:
                    s.ended = True
                s.wake()
        if self.buffered > self.max_buffered:
            self._pause()
        if self._room:
            self._wake_room()

    def _lost(self, err: AnyURLError) -> None:
        """The connection is gone: every stream fails with *err* (a handshake's waiter too)."""
        if self.error is None:
            self.error = err
        if not self.ready.done():
            self.ready.set_exception(err)
            self.ready.exception()  # (retrieved: the opener reads it)
        for s in self.streams.values():
            if not s.ended and s.error is None:
                s.error = err if s.fields is None else TruncatedTransfer(
                    f"HTTP/3 connection lost while reading the body: {err.message}", url=s.url)
            s.wake()
        self._close_socket()
        self._wake_room()
        self.client.gone(self)

    def _close_socket(self) -> None:
        self.closed = True
        self._pause()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = self._timer_at = None
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    # -- streams ---------------------------------------------------------------------------

    def room(self) -> int:
        """How many new streams are allowed now (qh3 refuses one past the server's MAX_STREAMS)."""
        quic = self.quic
        if self.closed or quic is None:
            return 0
        return int(quic.max_concurrent_bidi_streams) - int(quic.get_next_available_stream_id() >> 2)

    def has_room(self) -> bool:
        return self.room() > 0

    def queued(self) -> bool:
        """Requests are waiting for a stream."""
        return bool(self._room)

    async def wait_room(self) -> None:
        """Until a stream may be free (first come, first woken; the caller bounds the wait)."""
        w = self.loop.create_future()
        self._room.append(w)
        try:
            await w
        finally:
            if not w.done():
                self._room.remove(w)

    def _wake_room(self) -> None:
        """Wake as many waiting requests as streams are allowed (all of them once closed)."""
        waiting = self._room
        n = len(waiting) if self.closed else self.room()
        while n > 0 and waiting:
            w = waiting.popleft()
            if not w.done():
                w.set_result(None)
                n -= 1

    def open_stream(self, fields: list[tuple[bytes, bytes]], url: object) -> _Stream:
        if self.error is not None:
            raise self.error
        sid = self.quic.get_next_available_stream_id()
        self.h3.send_headers(sid, fields, end_stream=True)
        s = self.streams[sid] = _Stream(sid, self, url)
        if not self._flush_due:  # the requests of this loop turn go out together, in few datagrams
            self._flush_due = True
            self.loop.call_soon(self._flush_now)
        return s

    def _flush_now(self) -> None:
        self._flush_due = False
        self._flush()

    def take(self, s: _Stream, most: int) -> bytes:
        data = s.chunks.popleft()
        if len(data) > most:
            s.chunks.appendleft(data[most:])
            data = data[:most]
        self.buffered -= len(data)
        if not self.reading and self.buffered <= self.max_buffered // 2 and not self.closed:
            self._resume()
            self._readable()  # (what arrived while paused)
        return data

    def _cancel(self, s: _Stream) -> None:
        """Tell the server this stream's response is not wanted (its unread data dropped)."""
        quic = self.quic
        if quic is not None and not self.closed:
            try:
                quic.stop_stream(s.sid, _CANCELLED)
                quic.reset_stream(s.sid, _CANCELLED)
            except (ValueError, AssertionError):  # (the stream ended meanwhile)
                pass
            self._flush()

    def finish(self, s: _Stream) -> None:
        """The response is done with *s* (read to its end or given up)."""
        if s.finished:
            return
        s.finished = True
        if not s.ended and s.error is None:
            self._cancel(s)
        self.streams.pop(s.sid, None)
        left = sum(map(len, s.chunks))
        s.chunks.clear()
        if left:
            self.buffered -= left
            if not self.reading and self.buffered <= self.max_buffered // 2 and not self.closed:
                self._resume()
        self._wake_room()

    def abort(self) -> None:
        self._close_socket()

    def close(self) -> None:
        """Close politely (CONNECTION_CLOSE with H3_NO_ERROR), then the socket."""
        if self.closed:
            return
        if self.quic is not None:
            self.quic.close(error_code=_NO_ERROR)
            self._flush()
        self._close_socket()


class H3Response:
    """A response read from an HTTP/3 stream (the interface :mod:`.http` uses for every
    version: status, reason, headers, content_length/type, charset, read/release/close)."""

    http_version = "HTTP/3"
    reason = ""  # HTTP/3 carries no reason phrase

    def __init__(self, stream: _Stream, timeout: float | None) -> None:
        self.stream = stream
        fields = stream.fields or []
        self.status = int(fields[0][1]) if fields else 0
        self.headers: Headers = Headers.from_fields(fields[1:])
        cl = self.headers.get("content-length")
        self.content_length = int(cl) if cl is not None and cl.isdigit() else None
        found = content_type_of(self.headers.get("content-type"))
        self.content_type, self.charset = found or ("", None)
        self._timeout = timeout
        self._started = False
        self._done = False

    async def read_chunk(self, size: int = 0) -> bytes:
        s = self.stream
        self._started = True
        while True:
            if s.chunks:
                return s.conn.take(s, size or (1 << 20))
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
        pieces = list(s.chunks)
        self._finish()
        return pieces

    def widen(self, chunk_size: int) -> None:
        """Nothing to do: the connection's buffer bound sets what may wait."""

    def _finish(self) -> None:
        if not self._done:
            self._done = True
            self.stream.conn.finish(self.stream)

    def release_now(self) -> bool:
        self._finish()
        return True

    async def release(self) -> None:
        self._finish()

    async def close(self) -> None:
        self._finish()


class H3Client:
    """HTTP/3 connections, one per origin, opened on demand; *tls*: (verify, cafile)."""

    def __init__(self, tls: tuple[bool, str | None], chunk_size: int) -> None:
        self.verify, self.cafile = tls
        self.max_buffered = max(_MAX_BUFFERED, 2 * chunk_size)
        self.conns: dict[_Key, H3Connection] = {}
        self._opening: dict[_Key, asyncio.Future[H3Connection]] = {}
        self._block_of: list[tuple[str, str]] | None = None
        self._fields: list[tuple[bytes, bytes]] = []
        self._authority: bytes | None = None

    def multiplexed(self, key: _Key) -> bool:
        conn = self.conns.get(key)
        return conn is not None and not conn.closed

    async def negotiated(self, key: _Key) -> bool:
        """:meth:`multiplexed`, once the connection being opened to *key* (if any) finished its
        handshake or failed (bounded by the handshake's deadline)."""
        opening = self._opening.get(key)
        if opening is not None:
            await asyncio.wait([opening])  # (its error is the opener's to raise)
        return self.multiplexed(key)

    def gone(self, conn: H3Connection) -> None:
        if self.conns.get(conn.key) is conn:
            del self.conns[conn.key]

    def _config(self, host: str, idle: float) -> Any:
        q = _load()
        config = q.Configuration(is_client=True, alpn_protocols=["h3"], idle_timeout=max(idle, 5.0))
        config.server_name = host  # (an IP address too: verified against the certificate's IP SANs)
        if not self.verify:
            config.verify_mode = ssl.CERT_NONE
        elif self.cafile is not None:
            config.load_verify_locations(cafile=self.cafile)
        return config

    async def _connection(self, req: Request, key: _Key, udp_port: int, handshake: float | None) -> H3Connection:
        conn = self.conns.get(key)
        if conn is not None and not conn.closed:
            return conn
        opening = self._opening.get(key)
        if opening is not None:  # another request is opening it: wait for that one
            return await asyncio.shield(opening)
        fut: asyncio.Future[H3Connection] = asyncio.get_running_loop().create_future()
        self._opening[key] = fut
        try:
            if not available():
                raise H3Unavailable("HTTP/3 needs qh3 (pip install anyurl[http3])")
            conn = H3Connection(self, key, udp_port, self.max_buffered)
            await conn.open(self._config(key[0], req.limits.max_idle), handshake)
        except BaseException as exc:
            if isinstance(exc, Exception):
                fut.set_exception(exc)
                fut.exception()  # (retrieved: the waiters read it)
            else:
                fut.cancel()
            raise
        finally:
            del self._opening[key]
        _log.debug("%s:%s HTTP/3 connection open (UDP port %d)", key[0], key[1], udp_port)
        self.conns[key] = conn
        fut.set_result(conn)
        return conn

    async def request(self, req: Request, method: str, host: str, port: int, udp_port: int,
                      handshake: float | None,  # noqa: ASYNC109 - the handshake's own deadline
                      target: str, hostport: str, headers: list[tuple[str, str]], url: object) -> H3Response:
        """Send one request over HTTP/3 and wait for its head. :class:`H3Unavailable` when no
        QUIC connection could be made (nothing was sent)."""
        key = (host, port)
        fields = self._request_fields(method, target, hostport, headers, url)
        conn = await self._connection(req, key, udp_port, handshake)
        if not conn.has_room() or conn.queued():  # (first come, first served)
            pool = req.bound(req.timeouts.pool)
            try:
                async with asyncio.timeout(pool):  # (one timer for the whole wait)
                    while True:
                        if conn.closed:
                            conn = await self._connection(req, key, udp_port, handshake)
                            if conn.has_room() and not conn.queued():
                                break
                        await conn.wait_room()
                        if conn.has_room():
                            break
            except TimeoutError:
                raise PoolTimeout(f"waited {pool:.3g} s for a free HTTP/3 stream to {host}:{port} "
                                  "(the server's stream limit reached)", url=url) from None
        s = conn.open_stream(fields, url)
        timeout = req.read_timeout
        _log.debug("%s:%s > %s %s (HTTP/3 stream %d)", host, port, method, target, s.sid)
        try:
            while s.fields is None:
                if s.error is not None:
                    raise s.error
                if s.ended:
                    raise ProtocolError("the server ended the HTTP/3 stream without a response", url=url)
                await s.wait(timeout)
            if s.error is not None:
                raise s.error
        except BaseException as exc:
            conn.finish(s)
            if isinstance(exc, TimeoutError):
                raise FetchTimeout(f"timed out while waiting for the response to {method} {target} "
                                   f"from {host}:{port} (HTTP/3)", url=url) from None
            raise
        resp = H3Response(s, timeout)
        _log.debug("%s:%s < %s (HTTP/3 stream %d)", host, port, resp.status, s.sid)
        return resp

    def _request_fields(self, method: str, target: str, hostport: str, headers: list[tuple[str, str]],
                        url: object) -> list[tuple[bytes, bytes]]:
        """The request's fields; CR, LF, NUL and bad names refused as on HTTP/1.1."""
        if headers is not self._block_of:
            own_host, _ = header_block(headers, url)
            rest: list[tuple[bytes, bytes]] = []
            for name, value in headers:
                low = name.lower()
                if low in _HOP_BY_HOP or (low == "te" and value.strip().lower() != "trailers"):
                    continue
                rest.append((low.encode("ascii", "surrogateescape"), value.encode("utf-8", "surrogateescape")))
            self._fields = rest
            self._authority = None if own_host is None else own_host.encode("utf-8", "surrogateescape")
            self._block_of = headers
        request_start(method, target, url)
        authority = self._authority or hostport.encode("utf-8", "surrogateescape")
        return [(b":method", method.encode()), (b":scheme", b"https"), (b":authority", authority),
                (b":path", target.encode("utf-8", "surrogateescape")), *self._fields]

    async def aclose(self) -> None:
        conns = list(self.conns.values())
        self.conns.clear()
        for conn in conns:
            conn.close()

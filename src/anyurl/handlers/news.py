"""news:, nntp: and nntps: URLs (RFC 1738 sections 3.6 and 3.7) over NNTP (RFC 3977).

A thin asyncio driver around the pure :mod:`anyurl.protocols.nntp`:

* ``nntp://host:port/group/number``: GROUP, then ARTICLE number.
* ``nntp://host/group`` and ``news:group``: the group's newest articles (at
  most ``NewsOptions.listing_limit``) from OVER (XOVER on older servers) as
  entries, newest last.
* ``news:unique@host``: ARTICLE <unique@host>.
* ``news:*`` and ``nntp://host/``: every group (LIST ACTIVE, with descriptions
  from LIST NEWSGROUPS when offered).

``news:`` URLs use ``Client(news_server="host[:port]")`` or the NNTPSERVER
environment variable (``host``, ``host:port`` or ``nntps://host:port``).

Connections are pooled per server (scheme, host, port, TLS mode): one
authenticated reader connection is reused across URLs (GROUP again when the
group changes), and overlapping requests open more, up to
``client.limits.per_host``. A 480 reply triggers AUTHINFO USER/PASS with
``client.credentials_for(host, port)`` (Client credentials, then ~/.netrc).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import socket
import ssl
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from ..errors import (
    AnyURLError,
    ConfigurationError,
    FetchTimeout,
    NotSupported,
    PoolTimeout,
    ProtocolError,
    UnsafeURL,
)
from ..net.connect import lost, open_stream, start_tls
from ..net.pool import Lease, Pool
from ..net.tls import client_context
from ..protocols import nntp
from ..protocols import nntpsession as ns
from ..protocols.nntp import Data, End, Reply, ReplyReader
from ..response import Body, Capture, Entry, Stat
from ..settings import NewsOptions
from ..urls import NNTPURL, URL, NewsURL
from .base import Context, Handler, Request, apply_length, render_entries

__all__ = ["NewsHandler", "NewsOptions"]

TraceHook = Callable[[str, str], None]
_log = logging.getLogger("anyurl.news")
T = TypeVar("T")
_QUICKACK: int | None = getattr(socket, "TCP_QUICKACK", None)  # Linux only


#: the most bytes of one article read ahead into memory on a pipelined connection, so the
#: commands behind it go on without waiting for its reader; a longer article streams, and
#: holds the commands behind it until it is read
PIPELINE_READ_AHEAD = 1 << 20
#: the most commands in flight on one connection, whatever NewsOptions.pipeline says
MAX_PIPELINE = 256


@dataclass(frozen=True)
class _Server:
    scheme: str  # "nntp" or "nntps" (TLS from the first byte)
    host: str
    port: int
    starttls: bool

    @property
    def tls(self) -> bool:
        return self.scheme == "nntps"


def _rewrap(exc: AnyURLError, url: object) -> AnyURLError:
    """The same error with the URL attached (pure code raises without one)."""
    if exc.url is not None:
        return exc
    new = type(exc)(exc.message, url=url, reply=exc.reply)
    new.__cause__ = exc.__cause__ or exc
    return new


def _bytes_waiting(reader: asyncio.StreamReader) -> bool:
    """Whether *reader* holds bytes nobody read yet (or its EOF or error). StreamReader has no
    public way to ask: start a read of one byte by hand, without the event loop. It returns
    at once when something is there (then the byte is gone: the caller drops the connection);
    else it stops at its first wait, and is closed there, leaving the reader as it was.
    (~3 us; asyncio.timeout(0) around the read costs ~27 us, a loop turn and a cancellation.)"""
    step = reader.read(1)
    try:
        step.send(None)
    except (StopIteration, OSError):
        return True
    step.close()
    return False


class _Conn:
    """One NNTP connection (a :class:`~anyurl.net.pool.Connection`): the stream
    pair, the reply reader and session state."""

    def __init__(self, server: _Server, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 *, max_line: int, chunk: int, req: Request, trace: TraceHook | None) -> None:
        self.server = server
        self.key = server
        self.reader = reader
        self.writer = writer
        self.replies = ReplyReader(max_line)
        self.chunk = chunk
        self.req = req  # the request using the connection now: its timeouts apply
        self.trace = trace
        self.session = ns.Session(server.host, server.port)
        self.lines: deque[bytes] = deque()  # a block's lines read and not yet handed to the session
        self.starttls: Callable[[], Awaitable[None]] | None = None  # the TLS upgrade, when asked for
        self.login: Callable[[str, int], tuple[str, str] | None] = lambda host, port: None
        self.closed = False
        self.reads = 0  # reads done: a pipelined request waiting its turn sees the head move
        #: the capture of the request using the connection (capture=True): its command and
        #: status lines, and the data of its last multi-line reply (dot-stuffing undone)
        self.capture: Capture | None = None
        self._sock = writer.get_extra_info("socket") if _QUICKACK is not None else None

    @property
    def read_timeout(self) -> float | None:
        return self.req.read_timeout

    def is_reusable(self) -> bool:
        """Open, between replies, and nothing received that was not asked for: bytes
        after a reply's end (an unrequested "220 ...") would be read as the answer
        to the next request."""
        return (not self.closed and not self.replies.in_block and not self.replies.pending
                and not self.replies.buffered and not self.reader.at_eof()
                and not self.writer.transport.is_closing() and not _bytes_waiting(self.reader))

    async def reset_for(self, target: tuple[Request, TraceHook | None]) -> bool:
        self.req, self.trace = target
        self.capture = None
        return True

    async def aclose(self) -> None:
        await self.close(polite=True)

    def abort(self) -> None:
        self.closed = True
        self.writer.transport.abort()

    def quickack(self) -> None:
        """Ask the kernel to ACK at once. Servers like INN's nnrpd write a status
        line and then the data in two small writes; with Nagle on their side and
        delayed ACKs on ours every reply would stall about 40 ms."""
        if self._sock is not None and _QUICKACK is not None:
            try:
                self._sock.setsockopt(socket.IPPROTO_TCP, _QUICKACK, 1)
            except OSError:
                self._sock = None

    async def send(self, line: bytes, block: frozenset[int] = nntp.NO_BLOCK) -> None:
        if self.trace is not None or _log.isEnabledFor(logging.DEBUG):
            text = line.decode("utf-8", "replace").rstrip("\r\n")
            if text.upper().startswith("AUTHINFO PASS"):
                text = "AUTHINFO PASS ****"
            _log.debug("%s:%s > %s", self.server.host, self.server.port, text)
            if self.trace is not None:
                self.trace("send", text)
        if self.capture is not None:
            self.capture.sent(line)
            self.capture.keeping().clear()  # the body is the last command's data
        self.replies.expect(block)
        try:
            self.writer.write(line)
            async with asyncio.timeout(self.read_timeout):
                await self.writer.drain()
        except TimeoutError as exc:
            raise FetchTimeout("timed out sending a command") from exc
        except OSError as exc:
            raise lost(exc, None, "sending a command") from exc

    async def event(self) -> Reply | Data | End:
        while True:
            ev = self.replies.next_event()
            if isinstance(ev, (Reply, Data, End)):
                if self.capture is not None and type(ev) is Data:
                    self.capture.keeping().append(ev.data)
                return ev
            self.quickack()
            self.reads += 1
            try:
                async with asyncio.timeout(self.read_timeout):
                    data = await self.reader.read(self.chunk)
            except TimeoutError as exc:
                raise FetchTimeout("timed out waiting for the news server") from exc
            except OSError as exc:  # reset, TLS errors
                data = b""
                if not self.replies.in_block:
                    raise lost(exc, None, "reading a reply") from exc
            if data:
                self.replies.feed(data)
            else:
                self.replies.feed_eof()

    async def reply(self) -> Reply:
        ev = await self.event()
        if not isinstance(ev, Reply):
            raise ProtocolError("expected a status line")
        _log.debug("%s:%s < %s", self.server.host, self.server.port, ev.line)
        if self.trace is not None:
            self.trace("recv", ev.line)
        if self.capture is not None:
            self.capture.received(ev.line)
        return ev

    async def send_many(self, lines: list[tuple[bytes, frozenset[int]]]) -> None:
        """Write several commands at once (pipelined): one write, replies expected in order."""
        for line, block in lines:
            if self.trace is not None or _log.isEnabledFor(logging.DEBUG):
                text = line.decode("utf-8", "replace").rstrip("\r\n")
                _log.debug("%s:%s > %s", self.server.host, self.server.port, text)
                if self.trace is not None:
                    self.trace("send", text)
            if self.capture is not None:
                self.capture.sent(line)
            self.replies.expect(block)
        try:
            self.writer.write(b"".join(line for line, _ in lines))
            async with asyncio.timeout(self.read_timeout):
                await self.writer.drain()
        except TimeoutError as exc:
            raise FetchTimeout("timed out sending a command") from exc
        except OSError as exc:
            raise lost(exc, None, "sending a command") from exc

    async def command(self, line: bytes, block: frozenset[int] = nntp.NO_BLOCK) -> Reply:
        await self.send(line, block)
        return await self.reply()

    async def run(self, op: ns.Op[T]) -> T:
        """Carry out the session *op*'s events until it returns (see anyurl.protocols.nntpsession)."""
        value: Any = None
        while True:
            try:
                event = op.send(value)
            except StopIteration as stop:
                result: T = stop.value
                return result
            kind = type(event)
            value = None
            if kind is ns.Send:
                await self.send(event.line, event.block)  # type: ignore[union-attr]
            elif event is ns.READ:
                value = await self.reply()
            elif event is ns.LINE:
                value = await self.line()
            elif kind is ns.Block:
                value = await self.block(event.limit)  # type: ignore[union-attr]
            elif event is ns.START_TLS:
                assert self.starttls is not None
                await self.starttls()
            elif kind is ns.AskLogin:
                value = self.login(self.server.host, self.server.port)
            else:  # pragma: no cover - a new event without its handler
                raise AssertionError(f"unknown NNTP session event {event!r}")

    async def line(self) -> bytes | None:
        """The block's next line, without its line end; None after the block's end."""
        lines = self.lines
        while not lines:
            ev = await self.event()
            if isinstance(ev, End):
                return None
            if isinstance(ev, Data):
                lines.extend(ev.data.splitlines())
        return lines.popleft()

    async def block(self, limit: int) -> bytes:
        """The rest of a multi-line block, at most *limit* bytes."""
        parts: list[bytes] = []
        total = 0
        while True:
            ev = await self.event()
            if isinstance(ev, End):
                return b"".join(parts)
            if isinstance(ev, Data):
                total += len(ev.data)
                if total > limit:
                    raise ProtocolError(f"multi-line reply larger than {limit} bytes")
                parts.append(ev.data)

    async def close(self, polite: bool = False) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            if polite:
                self.writer.write(b"QUIT\r\n")
            self.writer.close()
            async with asyncio.timeout(2):
                await self.writer.wait_closed()
        except (OSError, TimeoutError, ssl.SSLError, RuntimeError):
            pass  # closing must not hide anything else


class _Retry(Exception):
    """A pipelined request must be asked again on a connection of its own: its window broke
    (an unexpected reply, the connection closed or failed) before its reply was handed out."""


class _Slot:
    """One request's commands in a window: the turn is its to read once it is at the head."""

    __slots__ = ("lines", "ref", "turn")

    def __init__(self, lines: list[tuple[bytes, frozenset[int]]], ref: int | str) -> None:
        self.lines = lines
        self.ref = ref
        self.turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()


class _Window:
    """The article commands in flight on one connection, answered in order (RFC 3977 3.5).

    The first request opens the connection (the pool's slot is the window's until the
    last request in it is done); requests for the same server (and group, when they
    name one) join while there is room: their commands are written at once and they
    wait for their turn to read. Whoever meets a reply that is not the one expected
    breaks the window: the connection is dropped and every request still waiting is
    asked again on a connection of its own.
    """

    def __init__(self, server: _Server, group: str | None, depth: int) -> None:
        self.server = server
        self.group = group  # the group every command in the window is read in
        self.depth = depth
        self.slots: deque[_Slot] = deque()
        self.conn: _Conn | None = None  # None while the first request connects
        self.broken = False
        self.sealed = False  # no one joins any more: the head sends commands of its own

    def alone(self) -> bool:
        """The head is the only request in the window: it may send a command of its own once
        the window is sealed (a login, an OVER), since no reply is queued behind it."""
        return len(self.slots) == 1 and not self.broken

    def has_room(self, group: str | None) -> bool:
        return (not self.broken and not self.sealed and len(self.slots) < self.depth
                and (group is None or group == self.group))

    def add(self, lines: list[tuple[bytes, frozenset[int]]], ref: int | str) -> _Slot:
        slot = _Slot(lines, ref)
        self.slots.append(slot)
        if len(self.slots) == 1:
            slot.turn.set_result(None)
        return slot

    async def wait_turn(self, slot: _Slot, req: Request) -> _Conn:
        """Wait until *slot* is at the head; the wait ends when the head stops moving for the
        read timeout (its reader stalled): then the window breaks (FetchTimeout)."""
        while not slot.turn.done():
            conn = self.conn
            before = conn.reads if conn is not None else -1
            try:
                async with asyncio.timeout(req.read_timeout):
                    await asyncio.shield(slot.turn)
            except TimeoutError:
                conn = self.conn
                if slot.turn.done() or (conn is not None and conn.reads != before):
                    continue
                raise FetchTimeout("waited for an earlier article on a pipelined news connection "
                                   "that nobody read") from None
        slot.turn.result()  # _Retry when the window broke
        assert self.conn is not None
        return self.conn


class NewsHandler(Handler):
    """Driver for news:, nntp: and nntps: URLs."""

    options_name = "news"

    def __init__(self, context: Context) -> None:
        super().__init__(context)
        # 400: the server is closing the connection (often an idle timeout)
        self.pool: Pool[_Conn] = Pool("news", closing_replies=("400",))
        self._windows: dict[_Server, list[_Window]] = {}
        self._room: dict[_Server, asyncio.Future[None]] = {}  # woken when a window or slot frees
        self._reserved: dict[_Server, object] = {}  # the request the next free connection is for
        # servers whose replies matched a pipelined window: a batch may overlap its requests to
        # them from the start, before any window is open (one transfer at a time never opens one)
        self._proved: set[_Server] = set()

    # -- URL -> what to do -------------------------------------------------------

    def _news_server(self, url: URL, opts: NewsOptions) -> _Server:
        spec = self.context.news_server or os.environ.get("NNTPSERVER")
        if not spec or not spec.strip():
            raise ConfigurationError(
                "news: URLs need a news server: `anyurl --news-server HOST[:PORT]`, "
                "Client(news_server='host[:port]') in Python, or the NNTPSERVER environment variable "
                "(host, host:port or nntps://host:port)",
                url=url)
        return parse_server(spec.strip(), opts, url)

    async def open(self, req: Request) -> Body:
        """Open an article (streaming) or a listing (entries)."""
        return apply_length(await self._open(req), req.length)

    async def _open(self, req: Request) -> Body:
        url, offset = req.url, req.offset
        opts = self.options(req, NewsOptions)
        if isinstance(url, NewsURL):
            # Validate before anything (even the configuration) so nothing unsafe is sent.
            if url.message_id is not None:
                mid = _checked(url, nntp.check_message_id, url.message_id)
                server = self._news_server(url, opts)
                return await self._article(req, server, opts, None, mid, offset)
            group = url.group or "*"
            if group != "*":
                _checked(url, nntp.check_group, group)
            server = self._news_server(url, opts)
            if group == "*":
                return await self._groups(req, server, opts)
            return await self._listing(req, server, opts, group)
        if isinstance(url, NNTPURL):
            server = _Server(url.scheme, url.host, url.port or (563 if url.scheme == "nntps" else 119),
                             opts.starttls)
            if not url.group:
                return await self._groups(req, server, opts)
            _checked(url, nntp.check_group, url.group)
            if url.article is None:
                return await self._listing(req, server, opts, url.group)
            return await self._article(req, server, opts, url.group, url.article, offset)
        raise UnsafeURL(f"not a news or nntp URL: {url!r}", url=url)

    async def stat(self, req: Request) -> Stat:
        """Metadata without the body: STAT then HEAD for an article, GROUP for a group.

        An article's size is its ``Bytes:`` header when the server adds one
        (INN does), else the ``:bytes`` field of its overview line when the
        article was named by number; ``modified`` is its ``Date:``.
        """
        url = req.url
        opts = self.options(req, NewsOptions)
        if isinstance(url, NewsURL):
            if url.message_id is not None:
                mid = _checked(url, nntp.check_message_id, url.message_id)
                return await self._stat_article(req, self._news_server(url, opts), opts, None, mid)
            group = url.group or "*"
            if group == "*":
                raise NotSupported("news:* lists every group; there is no metadata to ask for", url=url)
            _checked(url, nntp.check_group, group)
            return await self._stat_group(req, self._news_server(url, opts), opts, group)
        if isinstance(url, NNTPURL):
            server = _Server(url.scheme, url.host, url.port or (563 if url.scheme == "nntps" else 119),
                             opts.starttls)
            if not url.group:
                raise NotSupported("an nntp URL without a group lists every group; there is no "
                                   "metadata to ask for", url=url)
            _checked(url, nntp.check_group, url.group)
            if url.article is None:
                return await self._stat_group(req, server, opts, url.group)
            return await self._stat_article(req, server, opts, url.group, url.article)
        raise UnsafeURL(f"not a news or nntp URL: {url!r}", url=url)

    async def _stat_group(self, req: Request, server: _Server, opts: NewsOptions, group: str) -> Stat:
        url = req.url
        conn, status = await self._start(req, server, opts, lambda conn: conn.run(conn.session.select(group)))
        await self._pool(server).release(conn, True)
        return Stat(str(url), kind="group", content_type="text/plain",
                    meta={"group": status.name or group, "count": status.count, "low": status.low,
                          "high": status.high, "server": f"{server.host}:{server.port}"})

    async def _stat_article(self, req: Request, server: _Server, opts: NewsOptions, group: str | None,
                            ref: int | str) -> Stat:
        url = req.url

        result: tuple[int | None, str | None, bytes, int | None] | None = None
        if self._depth(opts) > 1:
            with contextlib.suppress(_Retry):
                result = await self._stat_pipelined(req, server, opts, group, ref)
        if result is None:
            conn, unpipelined = await self._start(req, server, opts,
                                                  lambda conn: conn.run(conn.session.stat(group, ref, opts.max_head)))
            await self._pool(server).release(conn, True)
            result = unpipelined
        number, mid, head, over_size = result
        fields = nntp.parse_article_head(head)
        facts = nntp.article_facts(fields)
        meta: dict[str, Any] = {
            "number": number if number else (ref if isinstance(ref, int) else None),
            "message_id": mid or facts.message_id or (ref if isinstance(ref, str) else None),
            "subject": facts.subject,
            "group": group,
            "lines": facts.lines,
            "server": f"{server.host}:{server.port}",
            "headers": {name.lower(): value for name, value in reversed(fields)},
        }
        if facts.size is None and over_size is not None:
            meta["size_from"] = ":bytes"
        elif facts.size is not None:
            meta["size_from"] = "Bytes:"
        return Stat(str(url), kind="article", size=facts.size if facts.size is not None else over_size,
                    modified=facts.modified, content_type="message/rfc822", meta=meta)

    async def _stat_pipelined(self, req: Request, server: _Server, opts: NewsOptions, group: str | None,
                              ref: int | str) -> tuple[int | None, str | None, bytes, int | None]:
        """STAT and HEAD in a window; _Retry: ask again on a connection of its own (also when
        the head has no Bytes: field and the size needs an OVER, which is not pipelined)."""
        url = req.url
        lines = [(nntp.article_cmd(ref, "STAT"), nntp.NO_BLOCK), (nntp.article_cmd(ref, "HEAD"), nntp.ARTICLE_CODES)]
        window, slot = await self._join(req, server, opts, group, lines, ref)
        try:
            conn = await window.wait_turn(slot, req)
            stat = await conn.reply()
            head_reply = await conn.reply()
            if not (_answers(223, ref, stat) and _answers(221, ref, head_reply)):
                _log.info("%s:%s answered %r, %r to STAT, HEAD %s on a pipelined connection: dropping it",
                          server.host, server.port, stat.line, head_reply.line, ref)
                self._proved.discard(server)
                raise _Retry
            head = await conn.block(opts.max_head) if head_reply.code == 221 else b""
            size: int | None = None
            # No Bytes: header: the overview's :bytes, as unpipelined, when no reply is queued
            # behind this one (else on a connection of its own)
            if head_reply.code == 221 and conn.session.needs_size(ref, head):
                if not window.alone():
                    raise _Retry
                window.sealed = True
                size = await conn.run(conn.session.over_size(ref))
        except BaseException as exc:
            await self._break(window)
            if isinstance(exc, AnyURLError):
                raise _Retry from exc
            raise
        await self._finish(window, slot, True)
        if stat.code != 223:
            raise _rewrap(nntp.error_for(stat, f"STAT {ref}"), url)
        if head_reply.code != 221:
            raise _rewrap(nntp.error_for(head_reply, f"HEAD {ref}"), url)
        number, mid = nntp.parse_stat_reply(stat)
        return number, mid, head, size

    # -- connections -----------------------------------------------------------

    def _pool(self, server: _Server) -> Pool[_Conn]:
        return self.pool

    def _ssl(self, opts: NewsOptions) -> ssl.SSLContext:
        return client_context(opts.verify, opts.cafile, opts.ssl_context)

    async def _connect(self, url: URL, server: _Server, opts: NewsOptions, req: Request) -> _Conn:
        reader, writer = await open_stream(url, url.scheme, server.host, server.port, timeout=req.connect_timeout,
                                           tls=self._ssl(opts) if server.tls else None)
        conn = _Conn(server, reader, writer, max_line=req.limits.max_line,
                     chunk=min(req.limits.chunk_size, 256 * 1024), req=req, trace=opts.trace)
        if req.capture:  # the greeting and the session's start are this request's exchange
            conn.capture = _capture(url, conn)
        conn.login = self.context.credentials_for

        async def starttls() -> None:
            if conn.replies.pending or conn.replies.buffered or conn.reader.at_eof():
                # bytes after 382 would be read as if they came over TLS (STARTTLS injection)
                raise ProtocolError("unexpected data before the TLS handshake")
            await start_tls(None, conn.writer, self._ssl(opts), server.host, server.port,
                            timeout=conn.req.connect_timeout)

        conn.starttls = starttls
        try:
            await conn.run(conn.session.login(server.starttls and not server.tls))
        except BaseException:
            await conn.close()
            raise
        return conn

    async def _start(self, req: Request, server: _Server, opts: NewsOptions,
                     step: Callable[[_Conn], Awaitable[T]]) -> tuple[_Conn, T]:
        """Run the first commands of a request on a pooled connection (the pool retries
        once on a fresh one if a reused one turns out closed by the server)."""
        url = req.url

        async def acquire(fresh: bool) -> Lease[_Conn]:
            try:
                return await self.pool.acquire(req, server.host, server.port, server,
                                               lambda: self._connect(url, server, opts, req),
                                               (req, opts.trace), fresh=fresh)
            except AnyURLError as exc:
                raise _rewrap(exc, url) from None

        async def run(lease: Lease[_Conn]) -> tuple[_Conn, T]:
            if req.capture and lease.conn.capture is None:
                lease.conn.capture = _capture(url, lease.conn)
            try:
                return lease.conn, await step(lease.conn)
            except AnyURLError as exc:
                raise _rewrap(exc, url) from None

        # a complete error reply (430 no such article) leaves the connection clean for reuse
        return await self.pool.run(acquire, run, keep_on_error=True)

    # -- articles --------------------------------------------------------------

    async def _article(self, req: Request, server: _Server, opts: NewsOptions, group: str | None,
                       ref: int | str, offset: int) -> Body:
        url = req.url
        if self._depth(opts) > 1 and not req.capture:  # (a capture's connection is its own)
            with contextlib.suppress(_Retry):
                return await self._article_pipelined(req, server, opts, group, ref, offset)

        conn, reply = await self._start(req, server, opts, lambda conn: conn.run(conn.session.article(group, ref)))
        pool = self._pool(server)
        cap = conn.capture
        body = await self._article_body(url, server, opts, group, ref, offset, conn, reply,
                                        lambda done: pool.release(conn, done), 0)
        if cap is not None:
            body.capture = cap
            cap.complete = not offset
            cap.status_line = reply.line
        return body

    async def _article_pipelined(self, req: Request, server: _Server, opts: NewsOptions, group: str | None,
                                 ref: int | str, offset: int) -> Body:
        """ARTICLE in a window (see :class:`_Window`); _Retry: ask again on a connection of its own."""
        url = req.url
        window, slot = await self._join(req, server, opts, group,
                                        [(nntp.article_cmd(ref), nntp.ARTICLE_CODES)], ref)
        try:
            conn = await window.wait_turn(slot, req)
            reply = await conn.reply()
            if reply.code == 480 and not conn.session.authenticated and window.alone():
                window.sealed = True
                await conn.run(conn.session.authenticate(reply))
                reply = await conn.command(nntp.article_cmd(ref), nntp.ARTICLE_CODES)
            if not _answers(220, ref, reply):
                _log.info("%s:%s answered %r to ARTICLE %s on a pipelined connection: dropping it",
                          server.host, server.port, reply.line, ref)
                self._proved.discard(server)
                raise _Retry
            if window.depth > 1:
                self._proved.add(server)
        except BaseException as exc:
            await self._break(window)
            if isinstance(exc, AnyURLError):
                raise _Retry from exc
            raise
        if reply.code != 220:
            await self._finish(window, slot, True)
            raise _rewrap(nntp.error_for(reply, f"ARTICLE {ref}"), url)
        try:
            # read ahead only for the requests queued behind; alone, it streams as unpipelined
            return await self._article_body(url, server, opts, group, ref, offset, conn, reply,
                                            lambda done: self._finish(window, slot, done),
                                            PIPELINE_READ_AHEAD if len(window.slots) > 1 else 0)
        except AnyURLError as exc:  # nothing was handed out yet: ask again
            raise _Retry from exc

    async def _article_body(self, url: URL, server: _Server, opts: NewsOptions, group: str | None,
                            ref: int | str, offset: int, conn: _Conn, reply: Reply,
                            give_back: Callable[[bool], Awaitable[None]], read_ahead: int) -> Body:
        """The article after its 220 reply: the head read, then the body streamed. *read_ahead*:
        read up to that many bytes before returning; an article that ends within them gives
        the connection back at once (a pipelined window goes on without waiting for the reader)."""
        words = reply.text.split()
        meta: dict[str, Any] = {
            "number": int(words[0]) if words and words[0].isdigit() else None,
            "message_id": words[1] if len(words) > 1 else (ref if isinstance(ref, str) else None),
            "group": group,
            "server": f"{server.host}:{server.port}",
        }
        try:
            head, ended = await self._read_head(conn, opts)
            ahead: list[bytes] = []  # read past the head (as the chunks came)
            size = len(head)
            while read_ahead and not ended and size <= read_ahead:
                ev = await conn.event()
                if isinstance(ev, End):
                    ended = True
                elif isinstance(ev, Data):
                    ahead.append(ev.data)
                    size += len(ev.data)
        except AnyURLError as exc:
            await give_back(False)
            raise _rewrap(exc, url) from None
        except BaseException:
            await give_back(False)
            raise
        given_back = False
        if ended and read_ahead:
            given_back = True
            await give_back(True)
        body_at = nntp.split_head(head)
        meta["body_offset"] = body_at if body_at >= 0 else len(head)
        fields = nntp.parse_article_head(head[: meta["body_offset"]])
        meta["header_list"] = fields
        headers: dict[str, str] = {}
        for name, value in fields:
            headers.setdefault(name.lower(), value)
        meta["headers"] = headers
        done = False

        async def chunks() -> AsyncIterator[bytes]:
            nonlocal done
            skip = offset
            body_parts: list[bytes] | None = [head[meta["body_offset"]:], *ahead] if body_at >= 0 else None
            body_size = sum(len(p) for p in body_parts or ())
            if body_size > opts.body_in_meta:
                body_parts = None
            queued = [head, *ahead]
            ahead.clear()
            try:
                while True:
                    for pending in queued:
                        if skip:
                            cut = min(skip, len(pending))
                            skip -= cut
                            pending = pending[cut:]
                        if pending:
                            yield pending
                    queued = []
                    if ended:
                        break
                    ev = await conn.event()
                    if isinstance(ev, End):
                        break
                    if isinstance(ev, Data):
                        queued = [ev.data]
                        if body_parts is not None:
                            body_size += len(ev.data)
                            if body_size > opts.body_in_meta:
                                body_parts = None
                            else:
                                body_parts.append(ev.data)
            except AnyURLError as exc:
                raise _rewrap(exc, url) from None
            done = True
            if body_parts is not None:
                meta["body"] = b"".join(body_parts)

        async def release() -> None:
            if not given_back:
                await give_back(done)

        return Body(url, chunks(), content_type="message/rfc822", meta=meta, offset=offset,
                    on_close=release)

    # -- pipelining ------------------------------------------------------------

    @staticmethod
    def _depth(opts: NewsOptions) -> int:
        return max(1, min(opts.pipeline, MAX_PIPELINE))

    def multiplexed(self, url: URL) -> bool:
        """True when a request for *url* would join a pipelined window open (or opening) now, or
        its server has answered in a window before: many requests share its connection, so a
        caller may run more at once than ``Limits.per_host`` (the CLI's batch does).
        news: URLs name no server: any window."""
        host = getattr(url, "host", None)
        port = getattr(url, "port", 0)

        def mine(server: _Server) -> bool:
            return host is None or (server.host == host and (not port or server.port == port))

        if any(mine(server) for server in self._proved):
            return True
        for server, windows in self._windows.items():
            if mine(server) and any(w.depth > 1 and not w.broken and not w.sealed for w in windows):
                return True
        return False

    async def _join(self, req: Request, server: _Server, opts: NewsOptions, group: str | None,
                    lines: list[tuple[bytes, frozenset[int]]], ref: int | str) -> tuple[_Window, _Slot]:
        """A place for *lines* in a window: one with room (the least busy), else a new window
        on a connection from the pool while it has a free slot, else wait for room: at most
        ``Timeouts.pool`` with no request on the server's connections ending (each one that
        ends starts the count again). *group*: the group the commands are read in (None: any)."""
        wait = req.bound(req.timeouts.pool)
        until = None if wait is None else asyncio.get_running_loop().time() + wait
        me = object()
        try:
            return await self._join_or_wait(req, server, opts, group, lines, ref, me, until, wait)
        finally:
            if self._reserved.get(server) is me:
                del self._reserved[server]

    async def _join_or_wait(self, req: Request, server: _Server, opts: NewsOptions, group: str | None,
                            lines: list[tuple[bytes, frozenset[int]]], ref: int | str,
                            me: object, until: float | None, wait: float | None) -> tuple[_Window, _Slot]:
        url = req.url
        loop = asyncio.get_running_loop()
        while True:
            windows = self._windows.get(server, [])
            best = min((w for w in windows if w.has_room(group)), key=lambda w: len(w.slots), default=None)
            if best is not None:
                slot = best.add(lines, ref)
                if best.conn is not None:
                    # a failed write shows when the reply is read (the window breaks then)
                    with contextlib.suppress(AnyURLError):
                        await best.conn.send_many(lines)
                return best, slot
            reserved = self._reserved.get(server)
            if ((not windows or self.pool.open_count(server.host, server.port) < req.limits.per_host)
                    and reserved in (None, me)):
                self._reserved.pop(server, None)
                return await self._open_window(req, server, opts, group, lines, ref)
            if (reserved is None and group is not None and not any(w.sealed for w in windows)
                    and all(w.group != group for w in windows)):
                # every connection is busy with other groups: the least busy window takes no
                # one more, and its connection is this request's next (else a steady stream
                # for one group would keep the others waiting)
                min(windows, key=lambda w: len(w.slots)).sealed = True
                self._reserved[server] = me
            room = self._room.get(server)
            if room is None or room.done():
                room = self._room[server] = loop.create_future()
            left = None if until is None else until - loop.time()
            try:
                if left is not None and left <= 0:
                    raise TimeoutError
                async with asyncio.timeout(left):
                    await asyncio.shield(room)
            except TimeoutError:
                raise PoolTimeout(f"waited {wait:.3g} s for room on a connection to {server.host}:"
                                  f"{server.port} with no request on its connections ending meanwhile "
                                  f"(Limits.per_host={req.limits.per_host}, "
                                  f"NewsOptions.pipeline={self._depth(opts)}, all full)", url=url) from None
            # a request ahead ended: the connections are busy, not stuck (a batch of large articles
            # in other groups), so Timeouts.pool counts again from here, never past the deadline
            wait = req.bound(req.timeouts.pool)
            until = None if wait is None else loop.time() + wait

    async def _open_window(self, req: Request, server: _Server, opts: NewsOptions, group: str | None,
                           lines: list[tuple[bytes, frozenset[int]]], ref: int | str) -> tuple[_Window, _Slot]:
        window = _Window(server, group, self._depth(opts))
        self._windows.setdefault(server, []).append(window)
        slot = window.add(lines, ref)

        try:
            conn, _ = await self._start(req, server, opts, lambda conn: conn.run(conn.session.enter(group)))
        except BaseException:
            await self._break(window)  # the requests that joined it ask again on their own
            raise
        if window.broken:  # dropped while connecting (a request in it was cancelled): ask again
            await self.pool.release(conn, True)
            raise _Retry
        # every command queued while connecting, in one write
        queued = [line for s in window.slots for line in s.lines]
        window.conn = conn
        window.group = conn.session.group
        with contextlib.suppress(AnyURLError):
            await conn.send_many(queued)
        return window, slot

    def _unregister(self, window: _Window) -> None:
        windows = self._windows.get(window.server)
        if windows is not None and window in windows:
            windows.remove(window)
            if not windows:
                del self._windows[window.server]
        room = self._room.pop(window.server, None)
        if room is not None and not room.done():
            room.set_result(None)

    async def _finish(self, window: _Window, slot: _Slot, reusable: bool) -> None:
        """*slot* is done with the connection: the next request in the window reads on; the
        last gives the connection back to the pool. Not *reusable*: the window breaks."""
        if window.broken:
            return
        if not reusable or not window.slots or window.slots[0] is not slot:
            await self._break(window)
            return
        window.slots.popleft()
        if window.slots:
            window.slots[0].turn.set_result(None)
            room = self._room.pop(window.server, None)
            if room is not None and not room.done():
                room.set_result(None)
            return
        self._unregister(window)
        if window.conn is not None:
            await self.pool.release(window.conn, True)

    async def _break(self, window: _Window) -> None:
        """Drop the window's connection; every request still waiting in it asks again."""
        if window.broken:
            return
        window.broken = True
        self._unregister(window)
        for s in window.slots:
            if not s.turn.done():
                s.turn.set_exception(_Retry())
                s.turn.exception()  # (read here: a waiter that was cancelled never reads it)
        window.slots.clear()
        if window.conn is not None:
            await self.pool.release(window.conn, False)

    async def _read_head(self, conn: _Conn, opts: NewsOptions) -> tuple[bytes, bool]:
        """Read until the article head is complete: (bytes read so far, whether the block ended)."""
        parts: list[bytes] = []
        total = 0
        while True:
            ev = await conn.event()
            if isinstance(ev, End):  # an article that is all head
                return b"".join(parts), True
            if isinstance(ev, Data):
                parts.append(ev.data)
                total += len(ev.data)
                data = b"".join(parts) if len(parts) > 1 else ev.data
                if nntp.split_head(data) >= 0:
                    return data, False
                if total > opts.max_head:
                    raise ProtocolError(f"article head larger than {opts.max_head} bytes")

    # -- listings --------------------------------------------------------------

    async def _listing(self, req: Request, server: _Server, opts: NewsOptions, group: str) -> Body:
        url = req.url
        limit = max(1, opts.listing_limit)

        conn, (status, kept, ignored) = await self._start(req, server, opts,
                                                           lambda conn: conn.run(conn.session.overview(group, limit)))
        cap = conn.capture
        await self._pool(server).release(conn, True)
        items: list[nntp.Overview] = []
        for number in sorted(kept):
            try:
                items.append(nntp.parse_overview(kept[number]))
            except ProtocolError:
                continue  # one bad overview line should not hide the group
        entries = [self._article_entry(url, server, group, o) for o in items]
        meta = {"group": group, "count": status.count, "low": status.low, "high": status.high,
                "truncated": status.count > len(entries)}
        if ignored:
            meta["ignored_lines"] = ignored  # outside the range asked for, or unnumbered
        body = Body.from_bytes(url, render_entries(entries), content_type="text/plain", charset="utf-8",
                               entries=entries, meta=meta)
        if cap is not None:  # the overview lines as sent (those of the range asked for)
            body.capture = cap
            cap.body_type = "text/plain"
        return body

    def _article_entry(self, url: URL, server: _Server, group: str, o: nntp.Overview) -> Entry:
        nntp_url = str(NNTPURL(server.scheme, server.host, server.port, None, None, group, o.number))
        mid = o.message_id[1:-1] if o.message_id.startswith("<") and o.message_id.endswith(">") else ""
        by_id = str(NewsURL("news", None, mid)) if mid else None
        link = by_id if isinstance(url, NewsURL) and by_id else nntp_url
        # name: the article number (its file name in a group); key: the message-id, the
        # same in every group an article is cross-posted to
        return Entry(name=str(o.number), url=link, kind="article", size=o.size, title=o.subject,
                     key=by_id, modified=o.date,
                     meta={"number": o.number, "message_id": o.message_id, "from": o.sender,
                           "date": o.date_text, "references": o.references, "lines": o.lines,
                           "nntp_url": nntp_url})

    async def _groups(self, req: Request, server: _Server, opts: NewsOptions) -> Body:
        """Every group as a streamed listing: LIST NEWSGROUPS first (descriptions, kept
        up to ``NewsOptions.max_descriptions`` bytes), then LIST ACTIVE, one entry per line."""
        url = req.url
        max_entries = req.limits.max_entries
        meta: dict[str, Any] = {"groups": 0}

        conn, (descriptions, cut) = await self._start(req, server, opts,
                                                       lambda conn: conn.run(conn.session.groups(opts.max_descriptions)))
        if cut:
            meta["descriptions_truncated"] = True
        cap = conn.capture
        pool = self._pool(server)
        done = False
        released = False

        async def release() -> None:
            nonlocal released
            if not released:
                released = True
                await pool.release(conn, done)

        async def entries() -> AsyncIterator[Entry]:
            nonlocal done
            count = 0
            try:
                while (line := await conn.line()) is not None:
                    try:
                        g = nntp.parse_active(line)
                    except ProtocolError:
                        continue
                    count += 1
                    if count > max_entries:
                        raise ProtocolError(f"group list longer than {max_entries} entries")
                    meta["groups"] = count
                    yield self._group_entry(url, server, g, descriptions.get(g.group))
                done = True
            except AnyURLError as exc:
                raise _rewrap(exc, url) from None
            finally:
                await release()

        body = Body.listing(url, entries(), meta=meta, on_close=release)
        if cap is not None:  # LIST NEWSGROUPS' lines, then LIST ACTIVE's, as sent
            body.capture = cap
            cap.body_type = "text/plain"
        return body

    def _group_entry(self, url: URL, server: _Server, g: nntp.Active, description: str | None) -> Entry:
        if isinstance(url, NewsURL):
            link = f"news:{g.group}" if _GROUP_URL.fullmatch(g.group) else None
        else:
            link = (str(NNTPURL(server.scheme, server.host, server.port, None, None, g.group, None))
                    if _GROUP_URL.fullmatch(g.group) else None)
        count = max(0, g.high - g.low + 1) if g.high >= g.low else 0
        return Entry(name=g.group, url=link, kind="group", size=None, title=description,
                     meta={"high": g.high, "low": g.low, "status": g.status, "estimated_count": count})

    async def aclose(self) -> None:
        """QUIT and close every idle connection."""
        await self.pool.aclose()


def _capture(url: URL, conn: _Conn) -> Capture:
    cap = Capture("NNTP", str(url))
    cap.kept_by_driver = True
    cap.peer_of(conn.writer)
    return cap


def _answers(code: int, ref: int | str, reply: Reply) -> bool:
    """Whether *reply* can be the answer to ARTICLE (220), HEAD (221) or STAT (223) of *ref*
    on a pipelined connection: a "no such article" reply, or the success reply naming the
    article asked for (its number, or its message-id)."""
    if reply.code in (412, 420, 423, 430):
        return True
    if reply.code != code:
        return False
    number, mid = nntp.parse_stat_reply(reply)
    return number == ref if isinstance(ref, int) else mid == ref


# A group name that can stand in a URL as it is (the RFC 1738 <group> rule).
_GROUP_URL = re.compile(r"[A-Za-z][A-Za-z0-9.+\-_]*")


def _checked(url: URL, check: Callable[[str], str], value: str) -> str:
    try:
        return check(value)
    except UnsafeURL as exc:
        raise UnsafeURL(exc.message, url=url) from None


def parse_server(spec: str, opts: NewsOptions, url: object = None) -> _Server:
    """``host``, ``host:port``, ``[v6]:port`` or ``nntp(s)://host[:port][/]`` -> a server."""
    scheme = "nntp"
    m = re.match(r"(nntps?)://", spec, re.I)
    if m:
        scheme = m.group(1).lower()
        spec = spec[m.end():].rstrip("/")
    m = re.fullmatch(r"\[([0-9A-Fa-f:.]+)\](?::(\d{1,5}))?|([^\s:/\[\]@]+)(?::(\d{1,5}))?", spec)
    if not m:
        raise ConfigurationError(f"bad news server {spec!r}: expected host, host:port or nntps://host:port",
                                 url=url)
    host = m.group(1) or m.group(3)
    port_text = m.group(2) or m.group(4)
    port = int(port_text) if port_text else (563 if scheme == "nntps" else 119)
    if not 0 < port < 65536:
        raise ConfigurationError(f"bad port in news server {spec!r}", url=url)
    return _Server(scheme, host.lower(), port, opts.starttls)

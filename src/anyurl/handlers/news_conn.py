"""One NNTP connection: the stream pair, the reply reader and the session
(:mod:`anyurl.protocols.nntpsession`) whose ops it carries out; and an article read off it.

The driver, :mod:`anyurl.handlers.news`, pools these (:class:`~anyurl.net.pool.Pool`);
:mod:`anyurl.handlers.news_pipeline` pipelines article commands on them.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

from .._record import Record
from ..errors import AnyURLError, FetchTimeout, ProtocolError
from ..net.pingpong import CommandConnection, bytes_waiting
from ..protocols import nntp
from ..protocols import nntpsession as ns
from ..protocols.nntp import Data, End, Reply, ReplyReader
from ..response import Body, Capture
from ..settings import NewsOptions, Request
from ..urls import URL

__all__ = ["NewsConnection", "Server", "TraceHook", "article_body", "bytes_waiting", "capture_for", "read_head",
           "rewrap"]

TraceHook = Callable[[str, str], None]
_log = logging.getLogger("anyurl.news")
T = TypeVar("T")
_set = object.__setattr__  # how a frozen Record's __init__ sets its fields
_QUICKACK: int | None = getattr(socket, "TCP_QUICKACK", None)  # Linux only


class Server(Record):
    """A news server as a connection key: scheme (nntps: TLS from the first byte), host, port,
    and whether a plain connection is upgraded with STARTTLS."""

    __slots__ = ("scheme", "host", "port", "starttls")
    scheme: str  # "nntp" or "nntps" (TLS from the first byte)
    host: str
    port: int
    starttls: bool

    def __init__(self, scheme: str, host: str, port: int, starttls: bool) -> None:
        _set(self, "scheme", scheme)
        _set(self, "host", host)
        _set(self, "port", port)
        _set(self, "starttls", starttls)

    @property
    def tls(self) -> bool:
        return self.scheme == "nntps"


def rewrap(exc: AnyURLError, url: object) -> AnyURLError:
    """The same error with the URL attached (pure code raises without one)."""
    if exc.url is not None:
        return exc
    new = type(exc)(exc.message, url=url, reply=exc.reply)
    new.__cause__ = exc.__cause__ or exc
    return new


class NewsConnection(CommandConnection):
    """One NNTP connection (a :class:`~anyurl.net.pool.Connection`): the stream
    pair, the reply reader and session state."""

    def __init__(self, server: Server, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 *, max_line: int, chunk: int, req: Request, trace: TraceHook | None) -> None:
        self.server = server
        self.key = server
        super().__init__(reader, writer)
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
                and not self.replies.buffered and not self.reader.at_eof() and not self.stale())

    async def reset_for(self, target: tuple[Request, TraceHook | None]) -> bool:
        self.req, self.trace = target
        self.capture = None
        return True

    async def aclose(self) -> None:
        await self.close(polite=True)

    def abort(self) -> None:
        self.closed = True
        super().abort()

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
        await self._write(line)

    async def _write(self, data: bytes) -> None:
        await self.write(data, "a command", None, self.read_timeout)

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
                    data = await self.read(self.chunk, None, "reading a reply")
            except TimeoutError as exc:
                raise FetchTimeout("timed out waiting for the news server") from exc
            except OSError:  # reset, TLS errors (ConnectError): inside a block, a cut reply
                data = b""
                if not self.replies.in_block:
                    raise
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
        await self._write(b"".join(line for line, _ in lines))

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
        await self.hang_up(b"QUIT\r\n" if polite else b"")


async def read_head(conn: NewsConnection, opts: NewsOptions) -> tuple[bytes, bool]:
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


async def article_body(url: URL, server: Server, opts: NewsOptions, group: str | None,
                       ref: int | str, offset: int, conn: NewsConnection, reply: Reply,
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
        head, ended = await read_head(conn, opts)
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
        raise rewrap(exc, url) from None
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
            raise rewrap(exc, url) from None
        done = True
        if body_parts is not None:
            meta["body"] = b"".join(body_parts)

    async def release() -> None:
        if not given_back:
            await give_back(done)

    return Body(url, chunks(), content_type="message/rfc822", meta=meta, offset=offset,
                on_close=release)


def capture_for(url: URL, conn: NewsConnection) -> Capture:
    cap = Capture("NNTP", str(url))
    cap.kept_by_driver = True
    cap.peer_of(conn.writer)
    return cap

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

import contextlib
import logging
import os
import re
import socket
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

from ..errors import (
    AnyURLError,
    ConfigurationError,
    NotSupported,
    ProtocolError,
    UnsafeURL,
)
from ..net.connect import open_stream, start_tls
from ..net.pool import Lease, Pool
from ..net.tls import client_context
from ..protocols import nntp
from ..response import Body, Entry, Stat
from ..settings import NewsOptions
from ..urls import NNTPURL, URL, NewsURL
from .base import Context, Handler, Request, apply_length, render_entries
from .news_conn import NewsConnection, Server, article_body, capture_for, rewrap
from .news_pipeline import PIPELINE_READ_AHEAD, AskAgain, Windows, answers

__all__ = ["NewsHandler", "NewsOptions"]

TraceHook = Callable[[str, str], None]
_log = logging.getLogger("anyurl.news")
T = TypeVar("T")
_QUICKACK: int | None = getattr(socket, "TCP_QUICKACK", None)  # Linux only


class NewsHandler(Handler):
    """Driver for news:, nntp: and nntps: URLs."""

    options_name = "news"

    def __init__(self, context: Context) -> None:
        super().__init__(context)
        # 400: the server is closing the connection (often an idle timeout)
        self.pool: Pool[NewsConnection] = Pool("news", closing_replies=("400",))
        self.windows = Windows(self.pool, self._start)

    # -- URL -> what to do -------------------------------------------------------

    def _news_server(self, url: URL, opts: NewsOptions) -> Server:
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
            server = Server(url.scheme, url.host, url.port or (563 if url.scheme == "nntps" else 119),
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
            server = Server(url.scheme, url.host, url.port or (563 if url.scheme == "nntps" else 119),
                             opts.starttls)
            if not url.group:
                raise NotSupported("an nntp URL without a group lists every group; there is no "
                                   "metadata to ask for", url=url)
            _checked(url, nntp.check_group, url.group)
            if url.article is None:
                return await self._stat_group(req, server, opts, url.group)
            return await self._stat_article(req, server, opts, url.group, url.article)
        raise UnsafeURL(f"not a news or nntp URL: {url!r}", url=url)

    async def _stat_group(self, req: Request, server: Server, opts: NewsOptions, group: str) -> Stat:
        url = req.url
        conn, status = await self._start(req, server, opts, lambda conn: conn.run(conn.session.select(group)))
        await self._pool(server).release(conn, True)
        return Stat(str(url), kind="group", content_type="text/plain",
                    meta={"group": status.name or group, "count": status.count, "low": status.low,
                          "high": status.high, "server": f"{server.host}:{server.port}"})

    async def _stat_article(self, req: Request, server: Server, opts: NewsOptions, group: str | None,
                            ref: int | str) -> Stat:
        url = req.url

        result: tuple[int | None, str | None, bytes, int | None] | None = None
        if self.windows.depth(opts) > 1:
            with contextlib.suppress(AskAgain):
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

    async def _stat_pipelined(self, req: Request, server: Server, opts: NewsOptions, group: str | None,
                              ref: int | str) -> tuple[int | None, str | None, bytes, int | None]:
        """STAT and HEAD in a window; AskAgain: ask again on a connection of its own (also when
        the head has no Bytes: field and the size needs an OVER, which is not pipelined)."""
        url = req.url
        lines = [(nntp.article_cmd(ref, "STAT"), nntp.NO_BLOCK), (nntp.article_cmd(ref, "HEAD"), nntp.ARTICLE_CODES)]
        window, slot = await self.windows.join(req, server, opts, group, lines, ref)
        try:
            conn = await window.wait_turn(slot, req)
            stat = await conn.reply()
            head_reply = await conn.reply()
            if not (answers(223, ref, stat) and answers(221, ref, head_reply)):
                _log.info("%s:%s answered %r, %r to STAT, HEAD %s on a pipelined connection: dropping it",
                          server.host, server.port, stat.line, head_reply.line, ref)
                self.windows.proved.discard(server)
                raise AskAgain
            head = await conn.block(opts.max_head) if head_reply.code == 221 else b""
            size: int | None = None
            # No Bytes: header: the overview's :bytes, as unpipelined, when no reply is queued
            # behind this one (else on a connection of its own)
            if head_reply.code == 221 and conn.session.needs_size(ref, head):
                if not window.alone():
                    raise AskAgain
                window.sealed = True
                size = await conn.run(conn.session.over_size(ref))
        except BaseException as exc:
            await self.windows.drop(window)
            if isinstance(exc, AnyURLError):
                raise AskAgain from exc
            raise
        await self.windows.finish(window, slot, True)
        if stat.code != 223:
            raise rewrap(nntp.error_for(stat, f"STAT {ref}"), url)
        if head_reply.code != 221:
            raise rewrap(nntp.error_for(head_reply, f"HEAD {ref}"), url)
        number, mid = nntp.parse_stat_reply(stat)
        return number, mid, head, size

    # -- connections -----------------------------------------------------------

    def _pool(self, server: Server) -> Pool[NewsConnection]:
        return self.pool

    def _ssl(self, opts: NewsOptions) -> ssl.SSLContext:
        return client_context(opts.verify, opts.cafile, opts.ssl_context)

    async def _connect(self, url: URL, server: Server, opts: NewsOptions, req: Request) -> NewsConnection:
        reader, writer = await open_stream(url, url.scheme, server.host, server.port, timeout=req.connect_timeout,
                                           tls=self._ssl(opts) if server.tls else None)
        conn = NewsConnection(server, reader, writer, max_line=req.limits.max_line,
                     chunk=min(req.limits.chunk_size, 256 * 1024), req=req, trace=opts.trace)
        if req.capture:  # the greeting and the session's start are this request's exchange
            conn.capture = capture_for(url, conn)
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

    async def _start(self, req: Request, server: Server, opts: NewsOptions,
                     step: Callable[[NewsConnection], Awaitable[T]]) -> tuple[NewsConnection, T]:
        """Run the first commands of a request on a pooled connection (the pool retries
        once on a fresh one if a reused one turns out closed by the server)."""
        url = req.url

        async def acquire(fresh: bool) -> Lease[NewsConnection]:
            try:
                return await self.pool.acquire(req, server.host, server.port, server,
                                               lambda: self._connect(url, server, opts, req),
                                               (req, opts.trace), fresh=fresh)
            except AnyURLError as exc:
                raise rewrap(exc, url) from None

        async def run(lease: Lease[NewsConnection]) -> tuple[NewsConnection, T]:
            if req.capture and lease.conn.capture is None:
                lease.conn.capture = capture_for(url, lease.conn)
            try:
                return lease.conn, await step(lease.conn)
            except AnyURLError as exc:
                raise rewrap(exc, url) from None

        # a complete error reply (430 no such article) leaves the connection clean for reuse
        return await self.pool.run(acquire, run, keep_on_error=True)

    # -- articles --------------------------------------------------------------

    async def _article(self, req: Request, server: Server, opts: NewsOptions, group: str | None,
                       ref: int | str, offset: int) -> Body:
        url = req.url
        if self.windows.depth(opts) > 1 and not req.capture:  # (a capture's connection is its own)
            with contextlib.suppress(AskAgain):
                return await self._article_pipelined(req, server, opts, group, ref, offset)

        conn, reply = await self._start(req, server, opts, lambda conn: conn.run(conn.session.article(group, ref)))
        pool = self._pool(server)
        cap = conn.capture
        body = await article_body(url, server, opts, group, ref, offset, conn, reply,
                                        lambda done: pool.release(conn, done), 0)
        if cap is not None:
            body.capture = cap
            cap.complete = not offset
            cap.status_line = reply.line
        return body

    async def _article_pipelined(self, req: Request, server: Server, opts: NewsOptions, group: str | None,
                                 ref: int | str, offset: int) -> Body:
        """ARTICLE in a window (see :class:`Window`); AskAgain: ask again on a connection of its own."""
        url = req.url
        window, slot = await self.windows.join(req, server, opts, group,
                                        [(nntp.article_cmd(ref), nntp.ARTICLE_CODES)], ref)
        try:
            conn = await window.wait_turn(slot, req)
            reply = await conn.reply()
            if reply.code == 480 and not conn.session.authenticated and window.alone():
                window.sealed = True
                await conn.run(conn.session.authenticate(reply))
                reply = await conn.command(nntp.article_cmd(ref), nntp.ARTICLE_CODES)
            if not answers(220, ref, reply):
                _log.info("%s:%s answered %r to ARTICLE %s on a pipelined connection: dropping it",
                          server.host, server.port, reply.line, ref)
                self.windows.proved.discard(server)
                raise AskAgain
            if window.depth > 1:
                self.windows.proved.add(server)
        except BaseException as exc:
            await self.windows.drop(window)
            if isinstance(exc, AnyURLError):
                raise AskAgain from exc
            raise
        if reply.code != 220:
            await self.windows.finish(window, slot, True)
            raise rewrap(nntp.error_for(reply, f"ARTICLE {ref}"), url)
        try:
            # read ahead only for the requests queued behind; alone, it streams as unpipelined
            return await article_body(url, server, opts, group, ref, offset, conn, reply,
                                            lambda done: self.windows.finish(window, slot, done),
                                            PIPELINE_READ_AHEAD if len(window.slots) > 1 else 0)
        except AnyURLError as exc:  # nothing was handed out yet: ask again
            raise AskAgain from exc

    def multiplexed(self, url: URL) -> bool:
        """True when a request for *url* would join a pipelined window (see :meth:`Windows.multiplexed`)."""
        return self.windows.multiplexed(url)

    # -- listings --------------------------------------------------------------

    async def _listing(self, req: Request, server: Server, opts: NewsOptions, group: str) -> Body:
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

    def _article_entry(self, url: URL, server: Server, group: str, o: nntp.Overview) -> Entry:
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

    async def _groups(self, req: Request, server: Server, opts: NewsOptions) -> Body:
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
                raise rewrap(exc, url) from None
            finally:
                await release()

        body = Body.listing(url, entries(), meta=meta, on_close=release)
        if cap is not None:  # LIST NEWSGROUPS' lines, then LIST ACTIVE's, as sent
            body.capture = cap
            cap.body_type = "text/plain"
        return body

    def _group_entry(self, url: URL, server: Server, g: nntp.Active, description: str | None) -> Entry:
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


# A group name that can stand in a URL as it is (the RFC 1738 <group> rule).
_GROUP_URL = re.compile(r"[A-Za-z][A-Za-z0-9.+\-_]*")


def _checked(url: URL, check: Callable[[str], str], value: str) -> str:
    try:
        return check(value)
    except UnsafeURL as exc:
        raise UnsafeURL(exc.message, url=url) from None


def parse_server(spec: str, opts: NewsOptions, url: object = None) -> Server:
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
    return Server(scheme, host.lower(), port, opts.starttls)

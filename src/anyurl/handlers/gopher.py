"""Gopher and Gopher+ handler: a thin asyncio driver around :mod:`anyurl.protocols.gopher`.

One connection per request: connect, send the request line, read the reply
with bounded reads until the server closes (or a "." line ends a menu).
Menus become ``Body.entries``; text is streamed with its "." framing undone;
binary types stream raw until the close.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import replace
from typing import Any

from ..errors import (
    AnyURLError,
    ConfigurationError,
    FetchTimeout,
    NotSupported,
    ProtocolError,
    ResourceNotFound,
    TransferError,
    TruncatedTransfer,
    UnsafeURL,
)
from ..net.bulk import BulkReader
from ..net.connect import lost, open_transport
from ..net.pool import Connection, Lease, Pool
from ..protocols import gopher as gp
from ..response import Body, Capture, Entry, Stat
from ..settings import GopherOptions
from ..spool import Spool
from ..urls import GopherURL
from .base import Context, Handler, Request, apply_length

__all__ = ["GopherHandler", "GopherOptions"]

SendHook = Callable[[bytes], Any]
_set = object.__setattr__


class _Conn:
    """A connection with a push-back buffer, so a reply's first line can be peeked."""

    def __init__(self, proto: BulkReader, url: object, req: Request, slot: Lease[Connection] | None = None) -> None:
        self.proto = proto
        self.slot = slot  # the per-host connection slot, released at close
        self.url = url
        self.req = req
        self.buf = b""  # received, not yet consumed: buf[pos:]
        self.pos = 0
        self.eof = False
        self.cap: Capture | None = None  # the request's capture (capture=True)
        self.kept: Spool | None = None  # its pieces: every byte received

    async def _receive(self) -> bytes:
        timeout = self.req.read_timeout
        try:
            data = await self.proto.next_chunk(timeout)  # one watchdog per transfer, not a timer per chunk
        except TimeoutError as exc:
            read = self.req.timeouts.read
            if timeout is not None and read is not None and timeout < read:  # cut short by Timeouts.total
                raise FetchTimeout(f"the gopher transfer took longer than the total timeout "
                                   f"{self.req.timeouts.total} s", url=self.url) from exc
            raise FetchTimeout(f"no data from the gopher server for {timeout} s", url=self.url) from exc
        except OSError as exc:
            raise lost(exc, self.url, "reading") from exc
        if not data:
            self.eof = True
            return b""
        if self.kept is not None:
            self.kept.append(data)
        return data

    async def read(self, n: int) -> bytes:
        """Up to *n* bytes; b"" at end of stream."""
        if self.pos < len(self.buf):
            end = min(len(self.buf), self.pos + n)
            data = self.buf[self.pos:end] if self.pos or end < len(self.buf) else self.buf
            self.pos = end
            return data
        if self.eof:
            return b""
        data = await self._receive()
        if len(data) > n:
            self.buf, self.pos = data, n
            return data[:n]
        self.buf, self.pos = b"", 0
        return data

    def unread(self, data: bytes) -> None:
        """Put *data* back in front of what is buffered."""
        self.buf = data + self.buf[self.pos:]
        self.pos = 0

    async def peek_line(self, limit: int) -> bytes:
        """The first line (with its LF) if one arrives within *limit* bytes, else what came
        (at most *limit* bytes); nothing is consumed."""
        start = self.pos
        while True:
            nl = self.buf.find(b"\n", start, self.pos + limit)
            if nl >= 0:
                return self.buf[self.pos:nl + 1]
            if len(self.buf) - self.pos >= limit or self.eof:
                return self.buf[self.pos:self.pos + limit]
            start = len(self.buf)
            data = await self._receive()
            if not data:
                return self.buf[self.pos:self.pos + limit]
            self.buf = self.buf[self.pos:] + data
            start -= self.pos
            self.pos = 0

    async def readline(self, limit: int) -> bytes:
        """One line with its LF (or the last bytes at EOF); ProtocolError beyond *limit*."""
        line = await self.peek_line(limit + 1)
        if not line.endswith(b"\n") and len(line) > limit:
            raise ProtocolError(f"a gopher reply line is longer than {limit} bytes", url=self.url)
        self.pos += len(line)
        return line

    def skip(self, n: int) -> None:
        """Consume *n* peeked bytes."""
        self.pos += n

    async def close(self) -> None:
        transport = self.proto.transport
        if transport is not None and not transport.is_closing():
            transport.close()
        slot, self.slot = self.slot, None
        if slot is not None:
            await slot.release(False)


class GopherHandler(Handler):
    """``gopher://`` URLs: RFC 1436 items, searches, Gopher+ views, attributes and forms."""

    options_name = "gopher"

    def __init__(self, context: Context) -> None:
        super().__init__(context)
        # one request per connection: the pool only bounds them per host (Limits.per_host)
        self.pool: Pool[Connection] = Pool("gopher")

    @property
    def gopher_options(self) -> GopherOptions:
        return self.context.options_for("gopher", GopherOptions)

    # -- entry point ---------------------------------------------------------

    async def open(self, req: Request) -> Body:
        """Send the URL's request and return the reply as a streaming Body.

        ``GopherOptions.on_send`` and ``form_answers`` apply per request
        (``options=GopherOptions(...)``). Byte ranges: the offset is skipped on
        the client side (gopher has no way to ask for one).
        """
        url, offset = req.url, req.offset
        opts = self.options(req, GopherOptions)
        if not isinstance(url, GopherURL):
            raise ConfigurationError(f"not a gopher URL: {url}", url=url)
        plan = gp.plan_request(url)  # refuses control characters before anything is sent
        port = url.port or gp.DEFAULT_PORT
        reason = gp.service_port_refusal(port)
        if reason and not self.context.policy.allow_gopher_to_service_ports:
            raise UnsafeURL(reason, url=url)
        on_send: SendHook | None = opts.on_send
        cap = None
        if plan.kind == "ask":
            body = await self._ask(url, plan, on_send, opts.form_answers)
        else:
            cap = Capture("gopher", str(url)) if req.capture else None
            body = await self._request(url, plan, on_send, req, cap)
        if offset:
            body = _skip(body, offset)
        if cap is not None:
            body.capture = cap
            cap.complete = not offset
            if body.entries is not None and url.gophertype in gp.MENU_TYPES:
                cap.body_type = gp.MENU_MEDIA_TYPE
        return apply_length(body, req.length)

    async def stat(self, req: Request) -> Stat:
        """Gopher+ item attributes (``selector TAB TAB !``): size from +VIEWS, date
        from +ADMIN Mod-Date, type from +INFO.

        A server that does not answer in Gopher+ (a Gopher0 server such as
        gophernicus) has no way to describe an item without sending it: the
        connection is closed after the first reply line and NotSupported raised.
        """
        url = req.url
        opts = self.options(req, GopherOptions)
        if not isinstance(url, GopherURL):
            raise ConfigurationError(f"not a gopher URL: {url}", url=url)
        plan = gp.stat_request(url)
        port = url.port or gp.DEFAULT_PORT
        reason = gp.service_port_refusal(port)
        if reason and not self.context.policy.allow_gopher_to_service_ports:
            raise UnsafeURL(reason, url=url)
        conn = await self._connect(url, plan.request, opts.on_send)
        try:
            first = await conn.peek_line(32)
            header = gp.parse_plus_header(first)
            if header is None:
                raise NotSupported("the server did not answer the Gopher+ attribute request "
                                   "(a Gopher0 server): gopher has no way to learn an item's size "
                                   "or date without downloading it", url=url)
            conn.skip(len(first))
            if header.error:
                data = await self._read_limited(conn, header.length, 64 * 1024, url)
                raise gp.error_for_plus(gp.parse_plus_error(data), url)
            data = await self._read_limited(conn, header.length, opts.max_menu_bytes, url)
        finally:
            await conn.close()
        items = gp.parse_attributes(data)
        attrs = items[0] if items else {}
        facts = gp.plus_facts(attrs, gp.plan_request(url).view)
        gtype = facts.gophertype or url.gophertype
        meta: dict[str, Any] = {
            "gopher_plus": True, "gophertype": gtype, "selector": url.selector,
            "attributes": attrs,
            "views": [v._asdict() for v in facts.views],
        }
        if facts.size_text is not None:
            meta["size_text"] = facts.size_text
            meta["size_approximate"] = facts.size_approximate
        return Stat(str(url), kind=gp.kind_for(gtype, url.selector), size=facts.size,
                    modified=facts.modified,
                    content_type=facts.content_type or gp.content_type_for(gtype, url.selector),
                    meta=meta)

    # -- one request -----------------------------------------------------------

    async def _connect(self, url: GopherURL, request: bytes, on_send: SendHook | None,
                       req: Request | None = None, cap: Capture | None = None) -> _Conn:
        req = req if req is not None else self.context.request(url)
        port = url.port or gp.DEFAULT_PORT
        size = max(req.limits.chunk_size, 64 * 1024)
        slot = await self.pool.lend_slot(req, url.host, port)  # waiting here is not the connect timeout
        try:
            _, proto = await open_transport(url, "gopher", url.host, port, lambda: BulkReader(size, rcvbuf=2 * size),
                                     timeout=req.connect_timeout)
        except BaseException:
            await slot.release(False)
            raise
        conn = _Conn(proto, url, req, slot)
        if cap is not None:  # the reply of this request (a retry's replaces the one before)
            conn.cap = cap
            conn.kept = cap.keeping()
            conn.kept.clear()
            cap.kept_by_driver = True
            cap.sent(request)
            cap.peer_of(proto.transport)
        try:
            self.pool.log.debug("%s:%s > %r", url.host, port, request)
            if on_send is not None:
                res = on_send(request)
                if inspect.isawaitable(res):
                    await res
            # One short line: the transport buffers it, so there is nothing to drain.
            assert proto.transport is not None
            proto.transport.write(request)
        except BaseException:
            await conn.close()
            raise
        return conn

    async def _request(self, url: GopherURL, plan: gp.RequestPlan, on_send: SendHook | None,
                       req: Request | None = None, cap: Capture | None = None) -> Body:
        conn = await self._connect(url, plan.request, on_send, req, cap)
        try:
            return await self._reply(url, plan, conn, on_send)
        except BaseException:
            await conn.close()
            raise

    async def _reply(self, url: GopherURL, plan: gp.RequestPlan, conn: _Conn,
                     on_send: SendHook | None, meta: dict[str, Any] | None = None) -> Body:
        gtype = url.gophertype
        if meta is None:
            meta = {"gophertype": gtype, "selector": url.selector, "request": plan.request}
        if plan.kind in ("plain", "search"):
            return await self._gopher0(url, gtype, conn, meta, plan, on_send)
        # A Gopher+ request: the reply starts with a +<n> / -<n> header...
        first = await conn.peek_line(32)
        header = gp.parse_plus_header(first)
        if header is None:
            # ...unless the server speaks only Gopher0 (gophernicus ignores "\t+").
            if plan.kind in ("attributes", "directory-attributes") and plan.attribute_names \
                    and not meta.get("attributes_fallback"):
                # pygopherd answers only "!" and "$", not "!+NAME": ask for them all
                # and keep the named ones.
                await conn.close()
                whole = "!" if plan.kind == "attributes" else "$"
                retry = plan._replace(request=gp.plan_request(
                    replace(url, search=url.search or "", gopher_plus=whole)).request)
                conn = await self._connect(url, retry.request, on_send, conn.req, conn.cap)
                meta["attributes_fallback"] = True
                meta["request"] = retry.request
                try:
                    return await self._reply(url, retry, conn, on_send, meta)
                except BaseException:
                    await conn.close()
                    raise
            if plan.kind in ("attributes", "directory-attributes", "plus"):
                raise ProtocolError("the server did not answer with a Gopher+ reply: it does not "
                                    "support Gopher+ attribute requests", url=url)
            meta["gopher_plus"] = False
            return await self._gopher0(url, gtype, conn, meta, plan, on_send)
        conn.skip(len(first))
        meta["gopher_plus"] = True
        meta["plus_length"] = header.length
        if meta.get("empty_asked") and header.length == 0:
            meta["empty_confirmed"] = True  # the probe of an empty reply: Gopher+ says "+0"
        if header.error:
            data = await self._read_limited(conn, header.length, 64 * 1024, url)
            raise gp.error_for_plus(gp.parse_plus_error(data), url)
        if plan.kind in ("attributes", "directory-attributes"):
            data = await self._read_limited(conn, header.length, self.gopher_options.max_menu_bytes, url)
            await conn.close()
            return self._attributes_body(url, plan, data, meta)
        if gtype in gp.MENU_TYPES and plan.kind in ("data", "form"):
            return await self._menu(url, conn, meta, header.length)
        if header.length >= 0:
            chunks = self._exact(conn, header.length)
        elif header.length == -1 or gp.is_text_type(gtype):
            chunks = self._text(conn, meta)
        else:
            chunks = self._raw(conn)
        # the type is worked out when asked for: a guess from the selector loads mimetypes' tables
        return Body(url, chunks, content_type=lambda: gp.content_type_for(gtype, url.selector, plan.view),
                    size=header.length if header.length >= 0 else None, meta=meta,
                    on_close=conn.close)

    async def _gopher0(self, url: GopherURL, gtype: str, conn: _Conn, meta: dict[str, Any],
                       plan: gp.RequestPlan, on_send: SendHook | None) -> Body:
        # An error item (type 3) or gophernicus' "Error: ..." text in place of the resource.
        first = await conn.peek_line(4096)
        if not first and conn.eof:
            return await self._nothing_sent(url, gtype, conn, meta, plan, on_send)
        found = gp.error_text(first) if first.endswith(b"\n") else None
        if found is not None:
            text, certain = found
            conn.skip(len(first))
            rest = await conn.read(64)
            if certain or not rest or rest.strip() in (b".", b"") or gtype in gp.MENU_TYPES:
                raise ResourceNotFound(f"the server says: {text}", url=url, reply=text)
            conn.unread(first + rest)
        if gtype in gp.MENU_TYPES:
            return await self._menu(url, conn, meta, -1)
        chunks = self._text(conn, meta) if gp.is_text_type(gtype) else self._raw(conn)
        view = plan.view if meta.get("gopher_plus") else None
        return Body(url, chunks, content_type=lambda: gp.content_type_for(gtype, url.selector, view), meta=meta,
                    on_close=conn.close)

    async def _nothing_sent(self, url: GopherURL, gtype: str, conn: _Conn, meta: dict[str, Any],
                            plan: gp.RequestPlan, on_send: SendHook | None) -> Body:
        """The server closed without sending a byte: an empty item. pygopherd, gophernicus
        and Flask-Gopher send nothing for an empty file, and curl and Lynx return it empty.
        An RFC 1436 text or menu ends with a "." line and a binary item has no length, so
        nothing tells it from a failed server: anyurl asks once more with Gopher+ ("\t+").
        A Gopher+ server then states the length ("+0", or "+-2" and the close) or its error
        (raised); a Gopher0 server (gophernicus) sends nothing again, and the item is empty
        with ``meta["empty_confirmed"] = False``."""
        if plan.kind in ("plain", "search") and not meta.get("empty_asked"):
            await conn.close()
            meta["empty_asked"] = True
            again = gp.plan_request(replace(url, gopher_plus="+"))
            retry = await self._connect(url, again.request, on_send, conn.req, conn.cap)
            meta["request"] = again.request
            try:
                return await self._reply(url, again, retry, on_send, meta)
            except BaseException:
                await retry.close()
                raise
        # nothing again (or a Gopher+ request had nothing): an empty item nobody confirmed
        meta["empty_confirmed"] = False
        self.pool.log.debug("%s: an empty reply, not confirmed by Gopher+: an empty item", url)
        if gtype in gp.MENU_TYPES:
            return await self._menu(url, conn, meta, -1)  # at its end: an empty listing
        view = plan.view if meta.get("gopher_plus") else None
        return Body(url, self._raw(conn), content_type=lambda: gp.content_type_for(gtype, url.selector, view),
                    size=0, meta=meta, on_close=conn.close)

    # -- reply shapes ------------------------------------------------------------

    async def _raw(self, conn: _Conn) -> AsyncIterator[bytes]:
        size = self.context.limits.chunk_size
        try:
            while True:
                data = await conn.read(size)
                if not data:
                    return
                yield data
        finally:
            await conn.close()

    async def _exact(self, conn: _Conn, length: int) -> AsyncIterator[bytes]:
        size = self.context.limits.chunk_size
        left = length
        try:
            while left > 0:
                data = await conn.read(min(size, left))
                if not data:
                    raise TruncatedTransfer(f"the Gopher+ reply announced {length} bytes but the "
                                            f"connection closed after {length - left}", url=conn.url)
                left -= len(data)
                yield data
        finally:
            await conn.close()

    async def _text(self, conn: _Conn, meta: dict[str, Any]) -> AsyncIterator[bytes]:
        unstuffer = gp.TextUnstuffer(self.gopher_options.hold_limit)
        size = self.context.limits.chunk_size
        try:
            while not unstuffer.terminated:
                data = await conn.read(size)
                if not data:
                    break
                out = unstuffer.feed(data)
                if out:
                    yield out
            out = unstuffer.finish()
            meta["terminated"] = unstuffer.terminated
            meta["dot_stuffed"] = unstuffer.stuffed
            if out:
                yield out
        finally:
            await conn.close()

    async def _read_limited(self, conn: _Conn, length: int, limit: int, url: object) -> bytes:
        """A whole Gopher+ block: *length* bytes, to "." (-1) or to the close (-2)."""
        buf = bytearray()
        want = length if length >= 0 else None
        while want is None or len(buf) < want:
            data = await conn.read(min(65536, (want - len(buf)) if want is not None else 65536))
            if not data:
                if want is not None:
                    raise TruncatedTransfer(f"the Gopher+ reply announced {want} bytes, got {len(buf)}",
                                            url=url)
                break
            start = max(0, len(buf) - 4)
            buf += data
            if len(buf) > limit:
                raise TransferError(f"the Gopher+ reply is larger than {limit} bytes", url=url)
            if length == -1:  # ends at a "." line
                if buf.startswith(b".\r\n") or buf.startswith(b".\n"):
                    return b""
                for end in (b"\n.\r\n", b"\n.\n"):
                    i = buf.find(end, start)
                    if i >= 0:
                        return bytes(buf[:i + 1])
        return bytes(buf)

    async def _menu(self, url: GopherURL, conn: _Conn, meta: dict[str, Any], length: int) -> Body:
        """A menu as a streamed listing: entries are parsed as lines arrive and none is kept.

        The first lines are read ahead (at most ``_LOOKAHEAD``) until an item that is
        neither info nor error, so that a reply that is only an error, or no menu at
        all, raises here as before.
        """
        limits = self.context.limits
        max_bytes = self.gopher_options.max_menu_bytes
        if limits.max_size is not None:
            max_bytes = min(max_bytes, limits.max_size)
        port = url.port or gp.DEFAULT_PORT
        broken: list[dict[str, Any]] = []  # the first _MAX_BROKEN, for the caller to see
        meta["terminated"] = False
        meta["broken_lines"] = broken
        meta["broken_count"] = 0
        total = 0
        number = 0
        ended = False

        async def next_line() -> gp.MenuItem | gp.BrokenLine | None:
            """The next non-empty parsed line; None at the end of the menu."""
            nonlocal total, number, ended
            while not ended:
                if 0 <= length <= total:
                    break
                line = await conn.readline(limits.max_line)
                if not line:
                    break
                total += len(line)
                number += 1
                if total > max_bytes:
                    raise TransferError(f"the menu is larger than {max_bytes} bytes", url=url)
                if line.rstrip(b"\r\n") == b".":
                    meta["terminated"] = True
                    break
                item = gp.parse_menu_line(line, number, host=url.host, port=port)
                if isinstance(item, gp.BrokenLine):
                    meta["broken_count"] += 1
                    if len(broken) < _MAX_BROKEN:
                        broken.append(item.as_dict())
                if item is not None:
                    return item
            ended = True
            return None

        head: list[Entry] = []
        seen = 0
        try:
            while seen < _LOOKAHEAD:
                item = await next_line()
                if item is None:
                    break
                seen += 1
                if isinstance(item, gp.MenuItem):
                    head.append(gp.menu_entry(item, url))
                    if head[-1].kind not in ("info", "error"):
                        break
            if ended:
                await conn.close()
            real = [e for e in head if e.kind != "info"]
            if (ended or seen >= _LOOKAHEAD) and real and all(e.kind == "error" for e in real):
                text = "; ".join(e.title or "" for e in real)
                raise ResourceNotFound(f"the server says: {text}", url=url, reply=text)
            if not head and broken and (ended or seen >= _LOOKAHEAD):
                text = broken[0]["text"]
                raise ProtocolError(f"not a gopher menu: {text[:200]}", url=url, reply=text[:200])
        except BaseException:
            await conn.close()
            raise

        def counted(count: int) -> int:
            if count > limits.max_entries:
                raise TransferError(f"the menu has more than {limits.max_entries} entries", url=url)
            return count

        async def entries() -> AsyncIterator[Entry]:
            count = 0
            try:
                for entry in head:
                    count = counted(count + 1)
                    yield entry
                head.clear()
                while True:
                    item = await next_line()
                    if item is None:
                        break
                    if isinstance(item, gp.MenuItem):
                        count = counted(count + 1)
                        yield gp.menu_entry(item, url)
            finally:
                await conn.close()

        return Body.listing(url, entries(), meta=meta, on_close=conn.close)

    def _attributes_body(self, url: GopherURL, plan: gp.RequestPlan, data: bytes,
                         meta: dict[str, Any]) -> Body:
        items = gp.parse_attributes(data)
        names = plan.attribute_names
        if names:
            # Keep +INFO (it names the item) and the attributes asked for.
            items = [{k: v for k, v in it.items() if k == "INFO" or "+" + k in names or k in names}
                     for it in items]
            data = gp.render_attributes(items)
        if plan.kind == "attributes":
            attrs = items[0] if items else {}
            meta["attributes"] = attrs
            if "VIEWS" in attrs:
                meta["views"] = [v._asdict() for v in gp.parse_views(attrs["VIEWS"])]
            if "ASK" in attrs:
                meta["form"] = [f._asdict() for f in gp.parse_ask(attrs["ASK"])]
            entries = None
        else:
            meta["attributes"] = items
            entries = []
            port = url.port or gp.DEFAULT_PORT
            menu = replace(url, gopher_plus=None)
            for it in items:
                item = gp.parse_menu_line(it.get("INFO", ""), host=url.host, port=port)
                if isinstance(item, gp.MenuItem):
                    e = gp.menu_entry(item, menu)
                    e.meta["attributes"] = it
                    if e.kind == "file":  # Gopher+ tells size and date, as for stat()
                        facts = gp.plus_facts(it)
                        more: dict[str, Any] = {"size_text": facts.size_text} if facts.size_text else {}
                        if facts.size is not None:
                            more["size_approximate"] = facts.size_approximate
                        e = e.__replace__(size=facts.size, modified=facts.modified, meta={**e.meta, **more})
                    entries.append(e)
        return Body.from_bytes(url, data, content_type="text/plain", entries=entries, meta=meta)

    # -- Gopher+ ASK forms -----------------------------------------------------

    async def _ask(self, url: GopherURL, plan: gp.RequestPlan, on_send: SendHook | None,
                   answers: Sequence[str] | None) -> Body:
        attr_plan = gp.RequestPlan("attributes", plan.request)
        body = await self._request(url, attr_plan, on_send)
        await body.aclose()
        attrs: dict[str, str] = body.meta.get("attributes", {})
        if "ASK" not in attrs:
            raise ProtocolError("the item has no +ASK form", url=url)
        fields = gp.parse_ask(attrs["ASK"])
        if answers is None:
            callback = self.context.form_callback
            if callback is None:
                raise ConfigurationError("this gopher item has an ASK form: pass form_answers= or "
                                         "set Client(form_callback=...)", url=url)
            try:
                result = callback(fields)
                if inspect.isawaitable(result):
                    result = await result
            except AnyURLError:
                raise
            except Exception as exc:
                raise ConfigurationError(f"the form callback failed: {exc}", url=url) from exc
            if result is None:
                raise ConfigurationError("the form callback gave no answers to the item's ASK form "
                                         "(the CLI asks only on a terminal)", url=url)
            answers = [str(a) for a in result]
        filled = gp.answer_fields(fields, list(answers), url)
        target = gp.form_url(url, filled)
        form_plan = gp.plan_request(target)
        result_body = await self._request(target, form_plan, on_send)
        result_body.meta["form_url"] = str(target)
        result_body.meta["form"] = [f._asdict() for f in fields]
        return result_body


# Menu lines read ahead before a menu body is returned (to tell an error reply from a menu).
_LOOKAHEAD = 256
# Broken menu lines kept in meta["broken_lines"] (meta["broken_count"] counts them all).
_MAX_BROKEN = 1000


def _skip(body: Body, offset: int) -> Body:
    """Gopher cannot resume: drop the first *offset* bytes client-side."""
    source = body.__aiter__()

    async def rest() -> AsyncIterator[bytes]:
        left = offset
        async for chunk in source:
            if left >= len(chunk):
                left -= len(chunk)
                continue
            yield chunk[left:]
            left = 0

    size = None if body.size is None else max(0, body.size - offset)
    # a range of a streamed menu is bytes of its rendering only: its entries are not collected
    entries = None if body.streams_entries else body.entries
    return Body(body.url, rest(), content_type=body.content_type, size=size, entries=entries,
                meta=body.meta, offset=offset, on_close=body.aclose, charset=body.charset)


"""wais: URLs over Z39.50-1995 (the thin asyncio driver; the APDUs are in protocols/z3950.py).

Three URL forms (RFC 1738 section 3.9):

- ``wais://host:port/database``: Init, then one search for
  :attr:`WAISOptions.count_term` to learn whether the database exists and
  how many records it holds; the body is a short text description.
- ``wais://host:port/database?words``: a search; the body's ``entries``
  are the first :attr:`WAISOptions.max_results` hits.
- ``wais://host:port/database/wtype/wpath``: one document.

Z39.50-1995 has no WAIS document id, so this client mints its own opaque
wpath for each hit: ``z1:<position>:<search words>``. Retrieving it runs
the same search again and presents record <position> in the record syntax
that <wtype> names (TEXT -> SUTRS, XML -> XML, USMARC -> USMARC, or a
record-syntax OID). A wpath in any other form is refused with
NotRetrievable: only the server that issued a document id may decompose it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..errors import (
    ConnectError,
    FetchTimeout,
    NotRetrievable,
    ProtocolError,
    ResourceNotFound,
    TemporaryFailure,
    TruncatedTransfer,
    UnsafeURL,
)
from ..net.connect import exchanging, open_stream
from ..net.pool import Connection, Lease, Pool
from ..protocols import z3950
from ..response import Body, Capture, Entry, utc_now
from ..schemes import port_of
from ..settings import WAISOptions
from ..urls import URL, WAISURL, percent_encode
from .base import (
    Context,
    Handler,
    Request,
    apply_length,
    refuse_controls,
    refuse_range,
    render_entries,
)

__all__ = ["WAISHandler", "WAISOptions", "WTYPES"]

# WAIS document types -> Z39.50 record syntax.
WTYPES: dict[str, str] = {
    "TEXT": "SUTRS",
    "SUTRS": "SUTRS",
    "XML": "XML",
    "USMARC": "USMARC",
    "MARC": "USMARC",
}
_CONTENT_TYPES = {"SUTRS": "text/plain", "XML": "application/xml", "USMARC": "application/marc"}
_NOT_FOUND = {13, 109, 235}  # out of range, database unavailable, database does not exist
_DOCID_PREFIX = "z1:"


def make_docid(position: int, search: str) -> str:
    """The opaque wpath this client mints for hit *position* of *search*."""
    return f"{_DOCID_PREFIX}{position}:{search}"


def parse_docid(wpath: str) -> tuple[int, str] | None:
    """(position, search) from a wpath minted by :func:`make_docid`, else None."""
    if not wpath.startswith(_DOCID_PREFIX):
        return None
    pos, sep, search = wpath[len(_DOCID_PREFIX):].partition(":")
    if not sep or not pos.isdigit() or int(pos) < 1:
        return None
    return int(pos), search


class _Session:
    """One Z39.50 association: APDU round trips with bounded reads and timeouts."""

    def __init__(self, url: URL, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 read_timeout: float | None, max_apdu: int) -> None:
        self.url = url
        self.reader = reader
        self.writer = writer
        self.read_timeout = read_timeout
        self.max_apdu = max_apdu
        self.buffer = bytearray()
        self.scanner = z3950.APDUScanner(max_apdu)  # where the APDU at the buffer's start ends
        self.slot: Lease[Connection] | None = None  # the per-host slot, released at close
        #: a capture's exchange (each APDU summarised) and every APDU received, as received
        self.capture: Capture | None = None
        self.received: list[bytes] = []

    async def call(self, apdu: bytes, summary: str = "") -> z3950.Decoded:
        if self.writer.is_closing():  # the target hung up (uvloop's write would raise RuntimeError)
            raise ConnectError("the target closed the connection", url=self.url)
        if self.capture is not None:
            self.capture.sent(summary)
        with exchanging(self.url, "sending"):
            self.writer.write(apdu)
            await self.writer.drain()
        return await self._receive()

    async def _receive(self) -> z3950.Decoded:
        try:
            with exchanging(self.url, "reading"):
                async with asyncio.timeout(self.read_timeout):
                    while True:
                        n = self.scanner.length(self.buffer)
                        if n is not None and len(self.buffer) >= n:
                            break
                        chunk = await self.reader.read(65536)
                        if not chunk:
                            if self.buffer:
                                raise TruncatedTransfer("the target closed the connection in the middle of an APDU",
                                                        url=self.url)
                            raise ConnectError("the target closed the connection", url=self.url)
                        self.buffer += chunk
        except TimeoutError as exc:
            raise FetchTimeout(f"no reply from the Z39.50 target within {self.read_timeout} s",
                               url=self.url) from exc
        except z3950.Z3950Error as exc:
            raise ProtocolError(f"bad APDU from the target: {exc}", url=self.url) from exc
        data = bytes(self.buffer[:n])
        del self.buffer[:n]
        self.scanner.reset()  # the next APDU starts at the buffer's start
        if self.capture is not None:
            self.received.append(data)
        try:
            result = z3950.decode_apdu(data)
        except z3950.Z3950Error as exc:
            raise ProtocolError(str(exc), url=self.url) from exc
        if self.capture is not None:
            self.capture.received(z3950.summarize(result))
        if isinstance(result, tuple) and result[0] == "close":
            reason, text = result[1]
            raise ProtocolError(f"the target closed the association (reason {reason})", url=self.url,
                                reply=text or None)
        return result

    async def close(self) -> None:
        try:
            if not self.writer.is_closing():  # a target that hung up gets no Close
                if self.capture is not None:
                    self.capture.sent("close reason=0")
                self.writer.write(z3950.encode_close())
                await self.writer.drain()
        except (OSError, RuntimeError, z3950.Z3950Error):
            pass  # the association is over either way (uvloop raises RuntimeError on a closed transport)
        self.writer.close()
        try:
            await self.writer.wait_closed()
        except OSError:
            pass
        finally:
            slot, self.slot = self.slot, None
            if slot is not None:
                await slot.release(False)


def _raise_diagnostic(url: URL, diag: z3950.Diagnostic, doing: str) -> None:
    reply = str(diag)
    if diag.condition in _NOT_FOUND:
        raise ResourceNotFound(f"{doing}: {reply}", url=url, reply=reply)
    if diag.condition == 2:
        raise TemporaryFailure(f"{doing}: {reply}", url=url, reply=reply)
    raise ProtocolError(f"{doing}: {reply}", url=url, reply=reply)


class WAISHandler(Handler):
    """Databases, searches and documents of ``wais://`` URLs, spoken as Z39.50-1995."""

    options_name = "wais"

    def __init__(self, context: Context) -> None:
        super().__init__(context)
        self.pool: Pool[Connection] = Pool("wais")  # one association per request: per-host slots only

    async def open(self, req: Request) -> Body:
        """Describe a database, run a search, or retrieve a document (see the module docstring)."""
        url = req.url
        if not isinstance(url, WAISURL):
            raise NotRetrievable("not a wais URL", url=url)
        opts = self.options(req, WAISOptions)
        self._check(url)
        if url.wtype is not None:
            return apply_length(await self._document(url, opts, req.offset, req), req.length)
        refuse_range(req)
        if url.search is not None:
            return await self._search(url, opts, req)
        return await self._describe(url, opts, req)

    def _check(self, url: WAISURL) -> None:
        # Nothing here reaches a command line, but control bytes in a database
        # name or a term are never what the user meant.
        for what, value in (("the database", url.database), ("the search", url.search),
                            ("the wtype", url.wtype), ("the wpath", url.wpath)):
            refuse_controls(url, what, value)
        if url.user is not None or url.password is not None:
            raise UnsafeURL("a wais URL carries no user name or password", url=url)
        if not url.database:
            raise NotRetrievable("a wais URL needs a database name", url=url)

    async def _connect(self, url: WAISURL, opts: WAISOptions, req: Request) -> tuple[_Session, z3950.InitResult]:
        slot = await self.pool.lend_slot(req, url.host, port_of(url))  # released by session.close()
        try:
            reader, writer = await open_stream(url, "wais", url.host, port_of(url), timeout=req.connect_timeout,
                                               limit=65536)
        except BaseException:
            await slot.release(False)
            raise
        self.pool.log.debug("opened association with %s:%s", url.host, port_of(url))
        session = _Session(url, reader, writer, req.read_timeout, opts.max_apdu)
        session.slot = slot
        if req.capture:
            session.capture = Capture("Z39.50", str(url), started=utc_now())
            session.capture.peer_of(writer.transport)
        try:
            init = await session.call(z3950.encode_init(message_size=opts.max_apdu, record_size=opts.max_apdu),
                                      f"initRequest version=1,2,3 message-size={opts.max_apdu}")
            if not isinstance(init, z3950.InitResult):
                raise ProtocolError("the target did not answer the Init request", url=url)
            if not init.accepted:
                raise ProtocolError("the target refused the Init request", url=url,
                                    reply=init.implementation_name)
        except BaseException:
            await session.close()
            raise
        return session, init

    async def _run_search(self, session: _Session, url: WAISURL, opts: WAISOptions,
                          term: str) -> z3950.SearchResult:
        try:
            apdu = z3950.encode_search(term, url.database, use_attribute=opts.use_attribute)
        except z3950.Z3950Error as exc:
            raise ProtocolError(str(exc), url=url) from exc
        use = "" if opts.use_attribute is None else f" use={opts.use_attribute}"
        result = await session.call(apdu, f"searchRequest database={url.database!r} term={term!r}{use}")
        if not isinstance(result, z3950.SearchResult):
            raise ProtocolError("the target did not answer the Search request", url=url)
        return result

    async def _describe(self, url: WAISURL, opts: WAISOptions, req: Request) -> Body:
        session, init = await self._connect(url, opts, req)
        try:
            count: int | None = None
            note = ""
            if opts.count_term is not None:
                result = await self._run_search(session, url, opts, opts.count_term)
                if result.diagnostics and result.diagnostics[0].condition in _NOT_FOUND:
                    _raise_diagnostic(url, result.diagnostics[0], f"database {url.database!r}")
                if result.success:
                    count = result.count
                elif result.diagnostics:
                    note = f" (the target refused the count search: {result.diagnostics[0]})"
        finally:
            await session.close()
        target = " ".join(x for x in (init.implementation_name, init.implementation_version) if x)
        lines = [
            f"WAIS database {url.database} at {url.host}:{port_of(url)} (Z39.50 version {init.version})",
            f"Target: {target or 'unnamed'}" + (f" (id {init.implementation_id})" if init.implementation_id else ""),
            f"Services: {' '.join(sorted(init.options))}",
        ]
        if opts.count_term is not None:
            shown = "unknown" + note if count is None else str(count)
            lines.append(f"Records matching {opts.count_term!r}: {shown}")
        lines.append(f"Search it with: wais://{_authority(url)}/{percent_encode(url.database)}?<words>")
        meta = {"database": url.database, "count": count, "count_term": opts.count_term,
                "target": target, "implementation_id": init.implementation_id,
                "version": init.version, "services": sorted(init.options)}
        return _attach(Body.from_bytes(url, ("\n".join(lines) + "\n").encode("utf-8"),
                                       content_type="text/plain", charset="utf-8", meta=meta), session)

    async def _search(self, url: WAISURL, opts: WAISOptions, req: Request) -> Body:
        search = url.search or ""
        session, _init = await self._connect(url, opts, req)
        try:
            result = await self._run_search(session, url, opts, search)
            if not result.success or result.diagnostics:
                if result.diagnostics:
                    _raise_diagnostic(url, result.diagnostics[0], f"search {search!r}")
                raise ProtocolError(f"search {search!r} failed without a diagnostic", url=url)
            wanted = min(result.count, max(0, opts.max_results), req.limits.max_entries)
            records: list[z3950.Record] = []
            headline_note = None
            while len(records) < wanted:
                # A target may return fewer records than asked (message size): ask for the rest.
                present = await session.call(z3950.encode_present(len(records) + 1, wanted - len(records),
                                                                  record_syntax=opts.headline_syntax,
                                                                  element_set=None),
                                             f"presentRequest start={len(records) + 1} "
                                             f"count={wanted - len(records)} syntax={opts.headline_syntax}")
                if not isinstance(present, z3950.PresentResult):
                    raise ProtocolError("the target did not answer the Present request", url=url)
                if present.diagnostics:
                    headline_note = str(present.diagnostics[0])  # list the hits without headlines
                if not present.records:
                    break
                records.extend(present.records)
        finally:
            await session.close()
        wtype = next((k for k, v in WTYPES.items() if v == opts.headline_syntax.upper()), opts.headline_syntax)
        entries = []
        for pos in range(1, wanted + 1):
            rec = records[pos - 1] if pos <= len(records) else None
            headline, size = f"record {pos}", None
            if rec is not None and rec.diagnostic is None:
                size = len(rec.data)
                first = rec.data.decode("utf-8", "replace").strip().split("\n", 1)[0].strip()
                headline = first[:200] or headline
            docid = make_docid(pos, search)
            doc = f"wais://{_authority(url)}/{percent_encode(url.database)}/{percent_encode(wtype)}/" \
                  f"{percent_encode(docid)}"
            # name: the record's wpath (the URL's last segment), as for every scheme; headline: title
            entries.append(Entry(name=docid, url=doc, kind="file", size=size, title=headline,
                                 meta={"rank": pos, "wtype": wtype,
                                       "syntax": rec.syntax if rec is not None else None}))
        meta: dict[str, Any] = {"database": url.database, "search": search, "count": result.count,
                                "returned": len(entries)}
        if headline_note:
            meta["headline_diagnostic"] = headline_note
        return _attach(Body.from_bytes(url, render_entries(entries), content_type="text/plain", charset="utf-8",
                                       entries=entries, meta=meta), session)

    async def _document(self, url: WAISURL, opts: WAISOptions, offset: int, req: Request) -> Body:
        wtype = url.wtype or ""
        syntax = opts.record_syntax or WTYPES.get(wtype.upper())
        if syntax is None and wtype and all(p.isdigit() for p in wtype.split(".")):
            syntax = wtype  # a record syntax OID
        if syntax is None:
            raise NotRetrievable(f"WAIS type {wtype!r} names no record syntax this client knows "
                                 f"({', '.join(WTYPES)} or a record-syntax OID)", url=url)
        docid = parse_docid(url.wpath or "")
        if docid is None:
            raise NotRetrievable("this document id was not issued by anyurl: Z39.50-1995 has no WAIS "
                                 "document ids, so only ids of the form z1:<position>:<search> are understood",
                                 url=url)
        position, search = docid
        session, _init = await self._connect(url, opts, req)
        try:
            result = await self._run_search(session, url, opts, search)
            if result.diagnostics:
                _raise_diagnostic(url, result.diagnostics[0], f"search {search!r}")
            if position > result.count:
                raise ResourceNotFound(f"the search {search!r} now has {result.count} hits, "
                                       f"not {position}", url=url)
            try:
                apdu = z3950.encode_present(position, 1, record_syntax=syntax, element_set=None)
            except z3950.Z3950Error as exc:
                raise NotRetrievable(str(exc), url=url) from exc
            present = await session.call(apdu, f"presentRequest start={position} count=1 syntax={syntax}")
        finally:
            await session.close()
        if not isinstance(present, z3950.PresentResult):
            raise ProtocolError("the target did not answer the Present request", url=url)
        if present.diagnostics:
            _raise_diagnostic(url, present.diagnostics[0], f"record {position} as {syntax}")
        if not present.records:
            raise ResourceNotFound(f"the target returned no record {position}", url=url)
        record = present.records[0]
        if record.diagnostic is not None:
            _raise_diagnostic(url, record.diagnostic, f"record {position} as {syntax}")
        data = record.data
        content_type = _CONTENT_TYPES.get(record.syntax, "application/octet-stream")
        as_sent = (data, content_type)
        charset = "utf-8" if content_type.startswith("text/") or content_type.endswith("xml") else None
        meta: dict[str, Any] = {"syntax": record.syntax, "database": record.database or url.database,
                                "position": position, "search": search}
        if record.syntax == "USMARC" and opts.readable_marc:
            try:
                data = z3950.render_marc(data).encode("utf-8")
            except z3950.Z3950Error as exc:
                raise ProtocolError(str(exc), url=url) from exc
            content_type, charset = "text/plain", "utf-8"
        if offset:
            data = data[offset:]
        return _attach(Body.from_bytes(url, data, content_type=content_type, charset=charset, meta=meta,
                                       offset=offset), session, as_sent)


#: a capture's body when it is the APDUs themselves (a search, a database's description)
APDU_TYPE = "application/x-z39.50-apdu; encoding=ber"


def _attach(body: Body, session: _Session, record: tuple[bytes, str] | None = None) -> Body:
    """*body* with the session's capture: a document's record as received (before a MARC
    rendering or an offset) with every APDU in ``raw``; else the APDUs received are the body."""
    cap = session.capture
    if cap is None:
        return body
    apdus = b"".join(session.received)
    if record is not None:
        cap.body, cap.body_type, cap.raw = record[0], record[1], apdus
    else:
        cap.body, cap.body_type = apdus, APDU_TYPE
    cap.kept_by_driver = True
    body.capture = cap
    return body


def _authority(url: WAISURL) -> str:
    host = f"[{url.host}]" if ":" in url.host else url.host
    return f"{host}:{url.port}" if url.port and url.port != 210 else host

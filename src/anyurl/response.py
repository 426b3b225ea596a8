"""Response, Entry and the streaming Body that every handler returns."""

from __future__ import annotations

import codecs
import io
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ._record import Record
from .errors import (
    AnyURLError,
    NotSupported,
    TransferError,
    translate,
)
from .spool import Spool, SpoolReader

if TYPE_CHECKING:
    from datetime import datetime

__all__ = ["ENTRY_KINDS", "ENTRY_RELS", "HTML_TYPES", "Body", "Capture", "Entry", "Response", "Stat", "entry_line",
           "guess_content_type", "is_html", "mask_command", "translate_errors", "utc_now"]


# media types whose links ``fetch``/``Client.ls`` read as entries (anyurl.protocols.html)
HTML_TYPES: frozenset[str] = frozenset({"text/html", "application/xhtml+xml"})


def is_html(content_type: str | None) -> bool:
    """True for an HTML media type (parameters such as ``; charset=`` ignored)."""
    return bool(content_type) and str(content_type).split(";", 1)[0].strip().lower() in HTML_TYPES


def guess_content_type(name: str, default: str = "application/octet-stream") -> str:
    """Guess a MIME type from a file name's suffix."""
    import mimetypes  # here: it loads urllib.parse and ipaddress, which http and ls need not

    ctype, _ = mimetypes.guess_type(name, strict=False)
    return ctype or default


# The closed set of Entry.kind values (and Stat.kind): each means one thing in every scheme.
ENTRY_KINDS: frozenset[str] = frozenset({
    "file",       # a document or binary to retrieve (FTP/file/prospero file, gopher 0/4/5/6/9/g/I/s/d..., WAIS record)
    "directory",  # a listing: FTP/file/prospero directory, gopher menu (1), HTTP autoindex sub-directory
    "symlink",    # an FTP/file symbolic link whose target's kind is not known from the listing (meta["target"])
    "page",       # a hyperlink whose kind is unknown until fetched: an HTML <a href>, a gopher "h" item
    "search",     # a query point: gopher 7, a WAIS database
    "article",    # one news article (url nntp://... or news:<message-id>)
    "group",      # one news group
    "session",    # an interactive session: gopher 8/T (telnet, tn3270)
    "info",       # text in a listing with no resource: gopher "i", a listing's notice
    "error",      # an error line inside a listing: gopher "3"
})

# Entry.rel values: how an entry relates to the listing it is in.
ENTRY_RELS: frozenset[str] = frozenset({"parent", "self"})

# ANYURL_CHECK_ENTRIES=1 (the test suite sets it): every Entry built checks its kind and rel,
# so a producer inventing a kind fails loudly in tests, never silently in a crawler.
_CHECK_ENTRIES = os.environ.get("ANYURL_CHECK_ENTRIES") == "1"


class Entry(Record):
    """One item of a directory-like resource (FTP directory, gopher menu, news group, HTML page...).

    ``name`` is always the name a local file would get: the last path segment of
    the resource (decoded), an FTP/file name, a gopher selector's last segment,
    a news article's number or message-id, a group's name.
    ``url`` is absolute and correctly percent-encoded, so a crawler can follow it
    (None for "info"/"error" lines).
    ``kind`` is one of :data:`ENTRY_KINDS`.
    ``title`` is the human display string where the listing has one (gopher
    display string, news Subject, HTML link text), else None.
    ``key`` is a canonical identity for de-duplication: the message-id for an
    article, the resolved directory URL for a symlinked directory; it defaults
    to ``url``.
    ``rel`` is "parent" for a link back up the tree (gopher ``..`` menus, FTP
    ``..``) and "self" for a link to the listing itself; ``walk`` never follows
    either. ``meta`` holds scheme details (gopher type, article number, Gopher+
    flag, symlink target...).
    """

    name: str
    url: str | None
    kind: str
    size: int | None
    description: str | None  # deprecated spelling of ``title``, kept while handlers move over
    modified: datetime | None
    meta: dict[str, Any]
    title: str | None
    rel: str | None
    key: str | None
    _not_compared = frozenset({"meta"})
    _factories = {"meta": dict}  # None in __init__: a new dict

    def __init__(self, name: str, url: str | None, kind: str = "file", size: int | None = None,
                 description: str | None = None, modified: datetime | None = None,
                 meta: dict[str, Any] | None = None, title: str | None = None, rel: str | None = None,
                 key: str | None = None) -> None:
        if _CHECK_ENTRIES and (kind not in ENTRY_KINDS or (rel is not None and rel not in ENTRY_RELS)):
            raise ValueError(f"Entry {name!r}: kind {kind!r} / rel {rel!r} outside ENTRY_KINDS/ENTRY_RELS")
        if title is None and description is not None:  # the deprecated spelling
            title = description
        if key is None and url is not None:
            key = url
        self.__dict__.update(name=name, url=url, kind=kind, size=size, description=description,
                             modified=modified, meta={} if meta is None else meta, title=title, rel=rel, key=key)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict."""
        return {
            "name": self.name,
            "url": self.url,
            "kind": self.kind,
            "size": self.size,
            "modified": self.modified.isoformat() if self.modified else None,
            "title": self.title,
            **({"rel": self.rel} if self.rel else {}),
            **({"key": self.key} if self.key is not None and self.key != self.url else {}),
            **({"meta": self.meta} if self.meta else {}),
        }


class Stat(Record):
    """A resource's metadata, learnt without transferring its body (``Client.stat``).

    ``kind`` uses the values of :attr:`Entry.kind` ("file", "directory", ...).
    ``size`` is in bytes, ``modified`` timezone-aware UTC where the server says
    so. ``meta`` holds scheme facts (HTTP headers such as ETag, Gopher+
    attributes, the NNTP article number...). Unknown values are None.
    """

    url: str
    kind: str
    size: int | None
    modified: datetime | None
    content_type: str | None
    meta: dict[str, Any]
    _not_compared = frozenset({"meta"})
    _factories = {"meta": dict}  # None in __init__: a new dict

    def __init__(self, url: str, kind: str = "file", size: int | None = None, modified: datetime | None = None,
                 content_type: str | None = None, meta: dict[str, Any] | None = None) -> None:
        self.__dict__.update(url=url, kind=kind, size=size, modified=modified, content_type=content_type,
                             meta={} if meta is None else meta)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict."""
        return {
            "url": self.url,
            "kind": self.kind,
            "size": self.size,
            "modified": self.modified.isoformat() if self.modified else None,
            "content_type": self.content_type,
            "meta": {k: v if isinstance(v, (str, int, float, bool, type(None), list, dict)) else str(v)
                     for k, v in self.meta.items()},
        }


def entry_line(e: Entry) -> str:
    """One line of a rendered listing (what ``get`` shows for a directory), without its LF."""
    size = "" if e.size is None else str(e.size)
    title = f"  {e.title}" if e.title and e.title != e.name else ""
    return f"{e.kind:<9} {size:>12}  {e.name}" + (f"  {e.url}" if e.url else "") + title


class Capture(Record, frozen=False):
    """What crossed the wire for one retrieval, kept when asked (``capture=True``).

    The same fields for every scheme; what a field holds per scheme is in docs/warc.md.

    ``protocol``: ``"HTTP/1.1"``, ``"HTTP/1.0"``, ``"HTTP/2"``, ``"FTP"``, ``"gopher"``, ``"NNTP"``...
    ``url``: the URL the body came from (after redirects).
    ``status``/``status_line``: the HTTP status and its line as received (an HTTP/2 one
    written in HTTP/1.1 form); for a command protocol the reply that ended the transfer.
    ``headers``: the response's header fields as received: order, case and repeats kept.
    ``method``, ``target``, ``request_headers``: the request as sent (HTTP); for HTTP/2 the
    pseudo-header fields (``:authority``...) are in ``request_headers`` first.
    ``exchange``: a command protocol's dialogue, ``(">", line)`` sent and ``("<", line)``
    received, in order, passwords masked.
    ``peer``: the (address, port) connected to; ``tls_version``/``tls_cipher`` where TLS
    was used. ``started``/``ended``: UTC times of the request and of the body's end.
    ``body``: the payload exactly as the server sent it: before content decoding (gzip) and
    before a listing is parsed (a gopher menu's or FTP listing's own bytes), after only the
    transport's framing is removed (HTTP chunking, NNTP dot-stuffing). Filled when the body
    has been read whole (``fetch``); None before.
    ``complete``: every byte of the resource arrived; False when a limit (``length``) cut it.
    ``body_type``: the media type the body has as sent (a gopher menu:
    ``application/gopher-menu``; a listing: ``text/plain``), when it differs from the
    response's own ``content_type``.
    ``truncated``: why an incomplete body ends early, as WARC-Truncated says it: ``"length"``
    (a byte range, ``max_size``), ``"time"`` (a timeout); None when complete.
    ``raw``: the protocol's own units as received, when ``body`` was taken out of them
    (Z39.50: every APDU's BER bytes, in order); None for the others.
    ``previous``: the exchanges that led to this one, each a Capture of its own, in order
    (each redirect's 3xx response; the Prospero request that named the URL followed).

    A body of more than :data:`anyurl.spool.THRESHOLD` bytes (1 MiB) is kept in a temporary
    file, not in memory: ``body`` reads it back whole; :meth:`body_reader` streams it.
    """

    protocol: str
    url: str
    status: int | None
    status_line: str | None
    headers: list[tuple[str, str]]
    method: str | None
    target: str | None
    request_headers: list[tuple[str, str]]
    exchange: list[tuple[str, str]]
    peer: tuple[str, int] | None
    tls_version: str | None
    tls_cipher: str | None
    started: datetime | None
    ended: datetime | None
    complete: bool
    body_type: str | None
    truncated: str | None
    raw: bytes | None
    previous: list[Capture]
    _not_compared = frozenset({"started", "ended"})
    _factories = {"headers": list, "request_headers": list, "exchange": list, "previous": list}

    def __init__(self, protocol: str, url: str, status: int | None = None, status_line: str | None = None,
                 headers: list[tuple[str, str]] | None = None, method: str | None = None,
                 target: str | None = None, request_headers: list[tuple[str, str]] | None = None,
                 exchange: list[tuple[str, str]] | None = None, peer: tuple[str, int] | None = None,
                 tls_version: str | None = None, tls_cipher: str | None = None,
                 started: datetime | None = None, ended: datetime | None = None, body: bytes | None = None,
                 complete: bool = True, body_type: str | None = None, truncated: str | None = None,
                 raw: bytes | None = None, previous: list[Capture] | None = None) -> None:
        self.protocol = protocol
        self.url = url
        self.status = status
        self.status_line = status_line
        self.headers = [] if headers is None else headers
        self.method = method
        self.target = target
        self.request_headers = [] if request_headers is None else request_headers
        self.exchange = [] if exchange is None else exchange
        self.peer = peer
        self.tls_version = tls_version
        self.tls_cipher = tls_cipher
        self.started = started if started is not None else utc_now()
        self.ended = ended
        self._body: bytes | Spool | None = body
        self.complete = complete
        self.body_type = body_type
        self.truncated = truncated
        self.raw = raw
        self.previous = [] if previous is None else previous
        self._parts: Spool | None = None
        #: the driver keeps the body's pieces itself (before decoding) or sets ``body``
        self.kept_by_driver = False
        self._watcher: tuple[Callable[[Capture, Any], None], Any] | None = None

    def watch(self, callback: Callable[[Capture, Any], None], body: Any) -> None:
        """Call ``callback(capture, body)`` once, when the body has arrived whole (an archive
        written as transfers end: ``Client(on_capture=...)``)."""
        self._watcher = (callback, body)

    def sent(self, line: str | bytes) -> None:
        """Note a command line sent (a password in it masked)."""
        text = line.decode("utf-8", "surrogateescape") if isinstance(line, bytes) else line
        self.exchange.append((">", mask_command(text.rstrip("\r\n"))))

    def received(self, line: str | bytes) -> None:
        """Note a reply line received."""
        text = line.decode("utf-8", "surrogateescape") if isinstance(line, bytes) else line
        self.exchange.append(("<", text.rstrip("\r\n")))

    @property
    def body(self) -> bytes | None:
        """The body's bytes (read back from its temporary file when it was spooled)."""
        b = self._body
        return b.getvalue() if isinstance(b, Spool) else b

    @body.setter
    def body(self, value: bytes | None) -> None:
        self._body = value

    @property
    def body_size(self) -> int | None:
        """The body's length in bytes, None before it ended."""
        b = self._body
        return None if b is None else b.size if isinstance(b, Spool) else len(b)

    def body_reader(self, prefix: bytes = b"", suffix: bytes = b"") -> SpoolReader:
        """A seekable stream of *prefix*, the body, *suffix*, read from memory or from the
        temporary file: a large body is never held in memory whole."""
        b = self._body
        if isinstance(b, Spool):
            return b.reader(prefix, suffix)
        spool = Spool(threshold=1 << 62)  # stays in memory
        spool.append(b or b"")  # (no copy: the reader slices the bytes)
        return spool.reader(prefix, suffix)

    def keeping(self) -> Spool:
        """Where a driver appends the body's pieces as they arrive (before any decoding): a
        :class:`~anyurl.spool.Spool`, in memory, then in a temporary file past 1 MiB.
        :meth:`finish` then takes the body from it."""
        if self._parts is None:
            self._parts = Spool()
        return self._parts

    def finish(self, body: bytes | None = None, *, complete: bool | None = None) -> None:
        """The body ended. Its bytes are the pieces the driver kept (:meth:`keeping`), else
        *body* (a driver whose pieces are the bytes as sent), unless the driver set ``body``."""
        parts, self._parts = self._parts, None
        if self._body is None:
            self._body = body if parts is None else parts if parts.spooled else parts.getvalue()
        elif parts is not None:
            parts.close()
        if self.status_line is None:  # a command protocol's: the last reply line
            self.status_line = next((line for way, line in reversed(self.exchange) if way == "<"), None)
        if complete is not None:
            self.complete = complete
        if self.ended is None:
            self.ended = utc_now()
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher[0](self, watcher[1])

    def cut(self, why: str) -> None:
        """A limit ended the body early (*why*: ``"length"`` or ``"time"``, as WARC-Truncated
        says it): finish with what arrived, marked incomplete. Nothing once finished."""
        if self.ended is not None:
            return
        self.truncated = why
        self.finish(complete=False)

    def ended_by(self, exc: BaseException) -> bool:
        """The transfer stopped on *exc* before the body's end: a limit's cut (a size limit,
        a timeout) finishes the capture marked truncated (True); any other failure leaves it
        unfinished, never archived (logged when an archive watches it: ``on_capture``)."""
        if self.ended is not None:
            return False
        why = limit_of(exc)
        parts = self._parts
        if why is not None and (parts is not None and parts.size or self._body):
            self.cut(why)
            return True
        self.abandon(exc)  # a failure, or a limit before any byte of the body: nothing to keep
        return False

    def abandon(self, why: object) -> None:
        """The body will never arrive whole: forget its pieces; an archive watching it logs why."""
        parts, self._parts = self._parts, None
        if parts is not None:
            parts.close()
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            import logging  # here: only a failed archived transfer logs

            logging.getLogger("anyurl.warc").warning("not archived: %s: %s", self.url, why)


    def peer_of(self, transport: Any) -> None:
        """Fill ``peer`` and the TLS fields from an asyncio transport (or a socket)."""
        if transport is None:
            return
        get = getattr(transport, "get_extra_info", None)
        try:
            peer = get("peername") if get is not None else transport.getpeername()
        except OSError:
            peer = None
        if isinstance(peer, tuple) and len(peer) >= 2:
            self.peer = (str(peer[0]), int(peer[1]))
        tls = get("ssl_object") if get is not None else None
        if tls is not None:
            self.tls_version = tls.version()
            cipher = tls.cipher()
            self.tls_cipher = cipher[0] if cipher else None


def limit_of(exc: BaseException) -> str | None:
    """WARC-Truncated's word for a transfer ended by *exc* when a limit ended it: ``"time"``
    for a timeout (not a wait for a free connection), ``"length"`` for a size limit; else None."""
    from .errors import FetchTimeout, PoolTimeout  # (errors is imported already: no cost)

    if isinstance(exc, (FetchTimeout, TimeoutError)) and not isinstance(exc, PoolTimeout):
        return "time"
    if type(exc) is TransferError and "larger than" in str(exc):  # max_size, --max-size
        return "length"
    return None


def utc_now() -> datetime:
    """The time now, in UTC (a capture's clock)."""
    from datetime import UTC, datetime  # here: only a capture needs the clock as a date

    return datetime.now(UTC)


_SECRET_COMMANDS = ("PASS ", "AUTHINFO PASS ", "ACCT ")


def mask_command(line: str) -> str:
    """*line* with the secret of a password command replaced by ``****``."""
    upper = line.upper()
    for cmd in _SECRET_COMMANDS:
        if upper.startswith(cmd):
            return line[:len(cmd)] + "****"
    return line


# Rendered listing text is handed out in pieces of about this size.
_RENDER_CHUNK = 64 * 1024


def translate_errors(exc: BaseException, url: object) -> AnyURLError:
    """Map a foreign exception to the anyurl tree (the safety net at the public boundary):
    :func:`anyurl.errors.translate`, the one table, with no network step named."""
    return translate(exc, url)


class Body:
    """A streaming resource body: ``async for chunk in body``.

    Handlers build one from an async iterator of byte chunks. Memory stays
    bounded: nothing is buffered beyond the chunk in hand.

    **Listings.** A directory-like resource (FTP directory, gopher menu, news
    group or group list) is a *listing*: ``entries`` is not None. Read it
    entry by entry with :meth:`aiter_entries`, so a listing of any size costs
    memory only for what the caller keeps::

        async with client.open("gopher://host/1/big") as body:
            async for entry in body.aiter_entries():
                ...

    Its byte chunks are the same entries rendered as text (one
    :func:`entry_line` each). A body is read once: either its entries or its
    bytes. :meth:`read` (what ``fetch`` uses) also collects every entry into
    ``entries``, so ``Response.entries`` holds the whole listing; the handler
    bounds it (``Limits.max_entries``).

    A handler that streams a listing builds the body with
    :meth:`Body.listing` from an async iterator of :class:`Entry`; one that
    already holds the whole list passes ``entries=[...]`` (then
    :meth:`aiter_entries` replays that list). For a streamed listing
    ``entries`` stays ``[]`` until :meth:`read` collects it.

    ``content_type`` may be given as a function of no arguments: it is called
    when the type is first asked for (a guess from a name loads mimetypes).
    """

    #: True for a body that hands out another body's chunks (the client's guard around a
    #: body it may reopen): the capture is the inner body's, kept once, there
    relay = False

    def __init__(
        self,
        url: object,
        chunks: AsyncIterator[bytes],
        *,
        content_type: str | Callable[[], str] = "application/octet-stream",
        size: int | None = None,
        entries: list[Entry] | None = None,
        meta: dict[str, Any] | None = None,
        offset: int = 0,
        on_close: Callable[[], Awaitable[None]] | None = None,
        charset: str | None = None,
        resumable: bool = False,
    ) -> None:
        self.url = url
        self._chunks = chunks
        # content_type may be a function, called when the type is first asked for: a guess from
        # a file name reads the system's mimetypes tables (~3 ms), which a download never needs
        self._type_guess = content_type if callable(content_type) else None
        self._content_type: str = "" if callable(content_type) else content_type
        self.size = size  # total bytes of the body from offset, when known
        self.entries = entries
        self.meta: dict[str, Any] = meta if meta is not None else {}
        self.offset = offset
        self.charset = charset
        # True when the handler can reopen the resource at any offset (FTP REST,
        # HTTP Range, file seek): a retry may then resume instead of failing.
        self.resumable = resumable
        self.bytes_read = 0
        self._on_close = on_close
        self._closed = False
        self._exhausted = False
        # A streamed listing: its entries, and the renderer that turns them into chunks.
        self._entry_stream: AsyncIterator[Entry] | None = None
        self._rendered: AsyncIterator[bytes] | None = None
        self._collect = False
        #: what crossed the wire, when the request asked for it (``capture=True``), else None
        self.capture: Capture | None = None

    @property
    def content_type(self) -> str:
        """The body's media type ("application/octet-stream" when unknown)."""
        guess = self._type_guess
        if guess is not None:
            self._type_guess = None
            self._content_type = guess()
        return self._content_type

    @content_type.setter
    def content_type(self, value: str) -> None:
        self._type_guess = None
        self._content_type = value

    @classmethod
    def listing(cls, url: object, entries: AsyncIterator[Entry], **kwargs: Any) -> Body:
        """A listing whose entries arrive one at a time from *entries*.

        The iterator should release its connection when closed or exhausted
        (the body closes it on :meth:`aclose`). Keyword arguments are those of
        the constructor (``meta``, ``on_close``...); the content type defaults
        to text/plain, UTF-8.
        """
        kwargs.setdefault("content_type", "text/plain")
        kwargs.setdefault("charset", "utf-8")
        body = cls(url, _nothing(), entries=[], **kwargs)
        body._entry_stream = entries
        body._chunks = body._rendered = body._render(entries)
        return body

    @property
    def streams_entries(self) -> bool:
        """True for a listing whose entries are still to come from the handler.

        False once something replaced the rendered chunks (a byte range cut by
        ``apply_length``): such a body is read as bytes only.
        """
        return self._entry_stream is not None and self._chunks is self._rendered

    async def _render(self, source: AsyncIterator[Entry]) -> AsyncIterator[bytes]:
        lines: list[str] = []
        pending = 0
        async for entry in source:
            if self._collect and self.entries is not None:
                self.entries.append(entry)
            line = entry_line(entry)
            lines.append(line)
            pending += len(line) + 1
            if pending >= _RENDER_CHUNK:
                yield ("\n".join(lines) + "\n").encode("utf-8", "surrogateescape")
                lines, pending = [], 0
        if lines:
            yield ("\n".join(lines) + "\n").encode("utf-8", "surrogateescape")

    async def aiter_entries(self) -> AsyncIterator[Entry]:
        """The entries of a listing, one at a time, as the server sends them.

        Nothing is kept: memory is what the caller keeps. Raises
        :class:`~anyurl.errors.NotSupported` if the body is not a listing.
        Consumes the body (its byte chunks are these entries rendered).
        """
        if self.entries is None:
            raise NotSupported("not a directory-like resource: it has no entries", url=self.url)
        source = self._entry_stream
        if source is None:
            for entry in list(self.entries):
                yield entry
            self._exhausted = True
            if self.capture is not None:
                self.capture.finish()
            return
        try:
            async for entry in source:
                yield entry
        except AnyURLError:
            raise
        except Exception as exc:  # the boundary: nothing foreign escapes
            raise translate_errors(exc, self.url) from exc
        self._exhausted = True
        if self.capture is not None:
            self.capture.finish()

    @classmethod
    def from_bytes(cls, url: object, data: bytes, **kwargs: Any) -> Body:
        """A body whose content is already in memory (listings, small replies)."""

        async def one() -> AsyncIterator[bytes]:
            if data:
                yield data

        kwargs.setdefault("size", len(data))
        return cls(url, one(), **kwargs)

    def _check_open(self) -> None:
        if self._exhausted:  # a second read would return nothing, silently: say so instead
            raise TransferError(f"the body was already read to its end ({self.bytes_read} bytes); "
                                "a body is read once: keep what the first read returned", url=self.url)
        if self._closed:  # a closed stream ends early: never short bytes
            raise TransferError(f"the body was closed after {self.bytes_read} bytes, before its end; "
                                "read it inside `async with client.open(...)`", url=self.url)

    def __aiter__(self) -> AsyncIterator[bytes]:
        if self._closed or self._exhausted:
            self._check_open()
        bind = getattr(self._chunks, "bind_body", None)
        if bind is not None:
            # the handler's iterator keeps bytes_read and complete itself and lets no foreign
            # error out (HTTP's): no _Chunks around each chunk. ``bind_body(body)`` returns
            # that iterator; its ``read_all(max_size)`` is what read uses.
            it: AsyncIterator[bytes] = bind(self)
            return it
        return _Chunks(self, self._chunks, self._tee())

    def _tee(self) -> Spool | None:
        """Where a capture keeps the pieces read, when its driver does not keep them itself
        (they are then the bytes as sent: a file's); None without a capture, or for a listing."""
        cap = self.capture
        if cap is None or self.entries is not None or cap.kept_by_driver or self.relay:
            return None
        return cap.keeping()

    async def read(self, max_size: int | None = None) -> bytes:
        """Read the rest of the body into memory (bounded by *max_size* when given).

        For a streamed listing this also collects its entries into ``entries``. A body
        is read once: reading it again after its end raises
        :class:`~anyurl.errors.TransferError`, as reading a closed one does.
        """
        if self._closed or self._exhausted:
            self._check_open()
        if self._entry_stream is not None:
            self._collect = True
        else:
            bind = getattr(self._chunks, "bind_body", None)
            if bind is not None:
                # the handler's own whole-body read (HTTP): no chunk iteration around it
                try:
                    data: bytes = await bind(self).read_all(max_size)
                except AnyURLError:
                    raise
                except Exception as exc:  # the boundary: nothing foreign escapes
                    raise translate_errors(exc, self.url) from exc
                return data
        # BytesIO grows one buffer in place and getvalue() hands it over without a copy:
        # the body costs its size once (a list of chunks and a join held it twice)
        gathered = io.BytesIO()
        total = 0
        async for chunk in self:
            total += len(chunk)
            if max_size is not None and total > max_size:
                raise TransferError(f"resource larger than max_size={max_size} bytes", url=self.url)
            gathered.write(chunk)
        return gathered.getvalue()

    async def aclose(self) -> None:
        """Release the connection (returning it to its pool when the handler allows)."""
        if self._closed:
            return
        self._closed = True
        cap = self.capture
        if cap is not None and cap.ended is None and not self._exhausted:
            cap.abandon(f"closed after {self.bytes_read} bytes, before the body's end")
        # chunks read to their end (not a listing's) have nothing to close: no coroutine for them
        aclose = None if self._exhausted and self.entries is None else getattr(self._chunks, "aclose", None)
        # a listing's entry iterator holds the connection even if the renderer never started
        close_entries = getattr(self._entry_stream, "aclose", None)
        try:
            if aclose is not None:
                await aclose()
            if close_entries is not None:
                await close_entries()
        finally:
            if self._on_close is not None:
                await self._on_close()

    @property
    def complete(self) -> bool:
        """True once every chunk was delivered."""
        return self._exhausted

    def mark_complete(self) -> None:
        """Every chunk was delivered: said by the iterator that delivered them (the one
        ``bind_body`` returns, for a handler whose chunks keep the count themselves)."""
        self._exhausted = True
        if self.capture is not None:
            self.capture.finish()

    def pace(self, rate: int) -> Body:
        """Hand out at most *rate* bytes a second on average (each chunk waits its turn; the
        CLI's ``--limit-rate``). While the reader waits, the bytes stay in the socket, so TCP
        slows the sender too. Not for a listing's entries. Returns the body."""
        import asyncio  # (only when asked: response.py is imported at start-up)

        inner = self._chunks

        async def paced() -> AsyncIterator[bytes]:
            loop = asyncio.get_running_loop()
            start = loop.time()
            done = 0
            try:
                async for chunk in inner:
                    ahead = done / rate - (loop.time() - start)
                    if ahead > 0:
                        await asyncio.sleep(ahead)
                    done += len(chunk)
                    yield chunk
            finally:
                close = getattr(inner, "aclose", None)
                if close is not None:
                    await close()

        self._chunks = paced()
        return self

    def cut_after(self, length: int) -> Body:
        """Stop the body after *length* bytes, for a ranged read the server cannot end itself
        (it starts at the offset natively: REST, Range, seek); closing the body stops the
        transfer. Returns the body."""
        inner = self._chunks

        async def limited() -> AsyncIterator[bytes]:
            left = length
            if left <= 0:
                return
            async for chunk in inner:
                if len(chunk) >= left:
                    yield chunk[:left]
                    return
                left -= len(chunk)
                yield chunk

        self._chunks = limited()
        self.size = length if self.size is None else min(self.size, length)
        if self.capture is not None:
            self.capture.complete = False  # a part of the resource only
        return self

    async def __aenter__(self) -> Body:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        exc = exc_info[1] if len(exc_info) > 1 else None
        if isinstance(exc, BaseException) and self.capture is not None:
            self.capture.ended_by(exc)  # a limit's cut is archived marked truncated
        await self.aclose()


class _Chunks:
    """An iteration over a :class:`Body`'s chunks: counts them, and translates foreign
    errors (the boundary: nothing foreign escapes). A class, not an async generator:
    per small body, a generator's setup and finalizer bookkeeping cost more than this."""

    __slots__ = ("_body", "_it", "_over", "_tee")

    def __init__(self, body: Body, chunks: AsyncIterator[bytes], tee: Spool | None = None) -> None:
        self._body = body
        self._it = chunks
        self._over = False
        self._tee = tee  # a capture's pieces (Body._tee)

    def __aiter__(self) -> _Chunks:
        return self

    async def __anext__(self) -> bytes:
        if self._over:
            raise StopAsyncIteration
        body = self._body
        try:
            chunk = await self._it.__anext__()
        except StopAsyncIteration:
            self._over = True
            body.mark_complete()
            raise
        except AnyURLError:
            self._over = True
            raise
        except Exception as exc:
            self._over = True
            raise translate_errors(exc, body.url) from exc
        body.bytes_read += len(chunk)
        if self._tee is not None:
            self._tee.append(chunk)
        return chunk


async def _nothing() -> AsyncIterator[bytes]:
    return
    yield b""  # pragma: no cover - makes this an async generator


class Response(Record, frozen=False):
    """A fully read resource, as ``fetch`` returns it."""

    url: str
    content: bytes
    content_type: str
    size: int | None
    entries: list[Entry] | None
    meta: dict[str, Any]
    charset: str | None
    capture: Capture | None
    _factories = {"meta": dict}  # None in __init__: a new dict

    def __init__(self, url: str, content: bytes, content_type: str = "application/octet-stream",
                 size: int | None = None, entries: list[Entry] | None = None,
                 meta: dict[str, Any] | None = None, charset: str | None = None,
                 capture: Capture | None = None) -> None:
        # plain assignments: a subclass may make a field a property
        self.url = url
        self.content = content
        self.content_type = content_type
        self.size = size
        self.entries = entries
        self.meta = {} if meta is None else meta
        self.charset = charset
        #: what crossed the wire (``fetch(..., capture=True)``): see :class:`Capture`
        self.capture = capture

    def text(self, encoding: str | None = None, errors: str = "replace") -> str:
        """The content decoded as text (charset from the protocol, else UTF-8)."""
        enc = encoding or self.charset or "utf-8"
        try:
            codecs.lookup(enc)
        except LookupError:
            enc = "utf-8"
        return self.content.decode(enc, errors)

    def __repr__(self) -> str:
        n = len(self.entries) if self.entries is not None else None
        return (f"<Response {self.url} {self.content_type} {len(self.content)} bytes"
                + (f", {n} entries" if n is not None else "") + ">")

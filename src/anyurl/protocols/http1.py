"""HTTP/1.1 client framing without I/O: the request head and the response's framing rules.

:func:`request_head` builds the bytes of one request (request line, ``Host``,
headers), refusing CR, LF or NUL in anything that would reach the wire.

:class:`ResponseReader` takes the bytes of one response as they arrive and
hands back body pieces. The head is parsed by httptools (the llhttp C parser
from the uvloop authors); the rules around it are here:

* interim ``1xx`` responses are skipped; a ``HEAD`` reply and ``204``/``304``
  have no body;
* the body is framed by ``Transfer-Encoding: chunked`` (decoded by the
  parser), else ``Content-Length``, else the end of the connection; a
  ``Content-Length`` body is sliced here without the parser, so each piece
  handed out is the very bytes object the transport received;
* bytes after the end of the response are an :class:`OverlongTransfer`; the
  end of the connection before the end of a framed body a
  :class:`TruncatedTransfer`;
* the connection may be reused when the response was complete, the server
  did not ask to close, the body was framed and nothing followed it (for a
  ``HEAD`` reply: the data ended exactly with its head).

Everything a server controls is bounded: the head's bytes (all interim heads
included), the number of header fields, and the framing bytes between two
pieces of a chunked body (a chunk-size line or trailer that never ends).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import httptools

from ..errors import OverlongTransfer, ProtocolError, TruncatedTransfer, UnsafeURL
from .lines import refuse_controls

__all__ = ["Headers", "RawResponseReader", "ResponseReader", "header_block", "request_head", "request_start", "request_tail"]

#: header fields one response may have (interim responses' not counted)
MAX_HEADERS = 256



def _refuse(what: str, value: str, url: object) -> None:
    refuse_controls(url, what, value, decoded=False)


def header_block(headers: Iterable[tuple[str, str]], url: object = None) -> tuple[str | None, str]:
    """The checked header lines of a request (the caller's own ``Host`` apart: returned first,
    None when absent), to reuse for requests with the same headers. ``UnsafeURL`` if CR, LF
    or NUL appears, or a name is not one."""
    host: str | None = None
    fields: list[str] = []
    for name, value in headers:
        _refuse(f"header {name}", name + value, url)
        if not name or ":" in name or " " in name or "\t" in name:
            raise UnsafeURL(f"invalid header name {name!r}", url=url)
        if name.lower() == "host":
            host = value
            continue
        fields.append(f"{name}: {value}\r\n")
    return host, "".join(fields)


def request_start(method: str, target: str, url: object = None) -> bytes:
    """The first bytes of a request head, ``METHOD target``; ``UnsafeURL`` when *target* (as it
    goes on the wire, already escaped) is empty or holds a space, CR, LF or NUL."""
    if not target or " " in target or "\r" in target or "\n" in target or "\0" in target:
        _refuse("request target", target, url)
        raise UnsafeURL(f"invalid request target {target!r}", url=url)
    return f"{method} {target}".encode("utf-8", "surrogateescape")


def request_tail(host: str, block: tuple[str | None, str], url: object = None) -> bytes:
    """The rest of a request head after the target: the version, ``Host`` (*host*, or the
    caller's own from *block*, a :func:`header_block`) and the header lines. The same for
    every request to one host with the same headers: a caller may keep it."""
    own_host, fields = block
    if own_host is not None:
        host = own_host
    _refuse("host", host, url)
    return f" HTTP/1.1\r\nHost: {host}\r\n{fields}\r\n".encode("utf-8", "surrogateescape")


def request_head(method: str, target: str, host: str, headers: Iterable[tuple[str, str]],
                 url: object = None, block: tuple[str | None, str] | None = None) -> bytes:
    """The bytes of an HTTP/1.1 request head without a body.

    *target* is the request target as it goes on the wire (already escaped),
    *host* the ``Host`` value (``host[:port]``). A caller's own ``Host`` header
    replaces the default one. ``UnsafeURL`` if CR, LF or NUL appears anywhere.
    *block*: :func:`header_block` of *headers*, when the caller kept it.
    """
    start = request_start(method, target, url)
    return start + request_tail(host, header_block(headers, url) if block is None else block, url)


class Headers(dict[str, str]):
    """Response headers as sent (names as the server spelled them), repeated fields joined
    with ", " (RFC 9110 5.3); lookups ignore case (``h["etag"]`` finds ``ETag``)."""

    __slots__ = ("_lower",)

    def __init__(self) -> None:
        self._lower: dict[str, str] = {}  # (dict.__new__ made the empty dict)

    def add(self, name: str, value: str) -> None:
        key = name.lower()
        have = self._lower.get(key)
        if have is None:
            self._lower[key] = name
            self[name] = value  # dict's own __setitem__ (not overridden): no call through dict.
        else:
            self[have] = f"{dict.__getitem__(self, have)}, {value}"

    @classmethod
    def from_fields(cls, fields: Iterable[tuple[bytes, bytes]]) -> Headers:
        """Headers from the (name, value) bytes of a head, decoded as Latin-1 (values stripped)."""
        h = cls()
        lower = h._lower
        for n, v in fields:  # (add, inline: a head has ~10 fields, each a call less)
            name = n.decode("latin-1")
            value = v.decode("latin-1").strip()
            key = name.lower()
            have = lower.get(key)
            if have is None:
                lower[key] = name
                h[name] = value
            else:
                h[have] = f"{dict.__getitem__(h, have)}, {value}"
        return h

    def __getitem__(self, name: str) -> str:
        try:
            return dict.__getitem__(self, name)
        except KeyError:
            return dict.__getitem__(self, self._lower[name.lower()])

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._lower

    def get(self, name: str, default: Any = None) -> Any:  # noqa: D102 - dict's
        key = self._lower.get(name.lower())
        return default if key is None else dict.__getitem__(self, key)


_NO_HEADERS = Headers()  # a reader's headers before its head arrived


class _Stop(Exception):
    """Raised from a parser callback to stop it (a HEAD reply's end, bytes after the end)."""


class ResponseReader:
    """The framing of one response to *method*; :meth:`feed` it bytes, :meth:`eof` at the end.

    After the head: ``status``, ``reason``, ``headers``, ``content_length``
    (None when chunked or absent). ``complete`` once the body ended;
    ``reusable`` then says whether the connection may carry another request.
    Errors are anyurl errors naming *url*.
    """

    __slots__ = ("method", "url", "max_head", "max_framing", "status", "reason", "headers",
                 "content_length", "head_done", "complete", "keep_alive", "received", "_parser",
                 "_head_bytes", "_fields", "_nfields", "_interim", "_direct", "_left", "_pieces", "_error",
                 "_stall", "_chunked", "_after_end", "next", "_fwd", "_to", "rest", "version")

    def __init__(self, method: str, url: object = None, *, max_head: int = 1 << 17,
                 max_framing: int = 1 << 16) -> None:
        self.method = method
        self.url = url
        self.max_head = max_head
        self.max_framing = max_framing
        self.status = 0
        self.reason = ""
        self.headers = _NO_HEADERS  # (replaced by the head's own, never changed)
        self.content_length: int | None = None
        self.head_done = False
        self.complete = False
        self.keep_alive = False
        self.received = 0  # body bytes handed out
        self._parser: Any = httptools.HttpResponseParser(self)
        self._head_bytes = 0
        self._fields: Headers | None = None  # this head's, decoded as the parser gives them
        self._nfields = 0
        self._interim = False
        self._direct = False  # slicing the body here, without the parser
        self._left: int | None = None  # Content-Length bytes still to come (direct)
        self._pieces: list[bytes] = []
        self._error: BaseException | None = None
        self._stall = 0
        self._chunked = False
        self._after_end = False
        #: pipelining: the reader of the response that follows this one on the connection;
        #: bytes after this response's end go to it instead of being an error
        self.next: ResponseReader | None = None
        self._fwd: ResponseReader | None = None  # the next one, once it took over this parser
        # the reader this one's parser callbacks go to now (None: this one); the last of the
        # _fwd chain, kept here so a callback is one call, not a walk down the chain (a deep
        # pipeline of chunked responses would cost its depth squared)
        self._to: ResponseReader | None = None
        self.rest = b""  # bytes after a Content-Length body's end, for ``next`` (feed's caller)
        self.version = ""  # "1.1", "1.0" after the head

    # -- httptools callbacks ---------------------------------------------------------

    def on_message_begin(self) -> None:
        cur = self._to or self
        if cur.complete:
            self._to = cur.hand_on()

    def hand_on(self) -> ResponseReader:
        """A response begins after this whole one in the bytes its parser is given: a pipelined
        one, whose reader goes on with this parser (httptools cannot say where one ended), or
        bytes nobody asked for (stops the parser)."""
        n = self.next
        if n is None:
            self._after_end = True
            raise _Stop
        n.take_parser(self._parser)
        self._fwd = n
        return n

    def on_status(self, reason: bytes) -> None:
        f = self._to
        if f is not None:
            f.on_status(reason)
            return
        self.reason = reason.decode("latin-1").strip()

    def on_header(self, name: bytes, value: bytes) -> None:
        f = self._to
        if f is not None:
            f.on_header(name, value)
            return
        n = self._nfields
        if n >= MAX_HEADERS:
            self._error = ProtocolError(f"response has more than {MAX_HEADERS} header fields", url=self.url)
            raise _Stop
        self._nfields = n + 1
        h = self._fields
        if h is None:
            h = self._fields = Headers()
        # (Headers.add, inline: a head has ~10 fields, each a call less)
        text = name.decode("latin-1")
        key = text.lower()
        have = h._lower.get(key)
        if have is None:
            h._lower[key] = text
            h[text] = value.decode("latin-1").strip()
        else:
            h[have] = f"{dict.__getitem__(h, have)}, {value.decode('latin-1').strip()}"

    def on_headers_complete(self) -> None:
        f = self._to
        if f is not None:
            f.on_headers_complete()
            return
        status = self._parser.get_status_code()
        if 100 <= status < 200:
            if status == 101:
                self._error = ProtocolError("server switched protocols (101) unasked", url=self.url)
                raise _Stop
            self._interim = True  # 100 Continue, 103 Early Hints...: the real reply follows
            return
        self.status = status
        self.head_done = True
        self.keep_alive = bool(self._parser.should_keep_alive())
        self.version = self._parser.get_http_version()
        h = self._fields
        self.headers = h = Headers() if h is None else h
        lower = h._lower
        te = lower.get("transfer-encoding")
        if te is not None:
            te = dict.__getitem__(h, te)
        cl = lower.get("content-length")
        if cl is not None:
            cl = dict.__getitem__(h, cl)
        if cl is not None and te is None:
            try:
                self.content_length = int(cl.split(",")[0].strip())
            except ValueError:
                self._error = ProtocolError(f"bad Content-Length {cl!r}", url=self.url)
                raise _Stop from None
        no_body = self.method == "HEAD" or status in (204, 304)
        if no_body:
            if self.method == "HEAD":
                # the parser cannot be told the request was HEAD: stop it here (feed decides
                # whether anything followed the head)
                self.complete = True
                raise _Stop
            return
        if te is not None:
            self._chunked = te.rsplit(",", 1)[-1].strip().lower() == "chunked"
            if not self._chunked:
                self.keep_alive = False  # delimited by the end of the connection
        elif self.content_length is not None:
            self._direct = True  # later bytes are sliced here, not parsed
            self._left = self.content_length
        else:
            self._direct = True
            self.keep_alive = False

    def on_body(self, body: bytes) -> None:
        f = self._to
        if f is not None:
            f.on_body(body)
            return
        self._pieces.append(body)

    def on_message_complete(self) -> None:
        f = self._to
        if f is not None:
            f.on_message_complete()
            return
        if self._interim:
            self._interim = False
            self._fields = None
            self._nfields = 0
            self.headers = _NO_HEADERS
            self.reason = ""
            return
        self.complete = True

    # -- the driver's side ------------------------------------------------------------

    def feed(self, data: bytes) -> list[bytes]:
        """The body pieces in *data* (often the same bytes object, never copied when framed
        by Content-Length); raises the anyurl error for a broken or overlong reply."""
        if self._direct and self.head_done and not self.complete:
            left = self._left
            if left is None:  # to the end of the connection
                self.received += len(data)
                return [data]
            n = len(data)
            if n <= left:
                self._left = left - n
                self.received += n
                if n == left:
                    self.complete = True
                return [data]
            self._left = 0
            self.received += left
            self.complete = True
            if self.next is not None:  # pipelined: the rest is the next response's
                self.rest = data[left:]
                self._parser = None
                return [data[:left]] if left else []
            self._after_end = True
            raise OverlongTransfer(
                f"server sent more than the response announced (more than its Content-Length "
                f"{self.content_length})", url=self.url)
        if self.complete:
            if data:
                self._after_end = True
                self.keep_alive = False
                raise OverlongTransfer("server sent more than the response announced "
                                       "(data after the end of the body)", url=self.url)
            return []
        head = not self.head_done
        try:
            self._parser.feed_data(data)
        except _Stop:  # pragma: no cover - httptools wraps callback errors
            pass
        except httptools.HttpParserUpgrade:
            raise ProtocolError("server switched protocols unasked", url=self.url) from None
        except httptools.HttpParserError as exc:
            if self._fwd is not None:
                # the error is in a pipelined response after this one: it is that one's (its
                # ``error``, for the caller to raise once this one's pieces are taken)
                self.forwarded()[-1].note_error(exc)
            elif self._error is not None:
                raise self._error from None
            elif self.complete:
                # bytes after a whole response (a HEAD reply's end is ours, see above)
                self._after_end = self._after_end or self.method != "HEAD"
            else:
                where = "head" if not self.head_done else "body framing"
                raise ProtocolError(f"invalid HTTP response {where}: {exc}", url=self.url) from None
        if self._after_end:
            self.keep_alive = False
            self._pieces = []
            raise OverlongTransfer("server sent more than the response announced "
                                   "(data after the end of the body)", url=self.url)
        if head and self.complete and self.method == "HEAD":
            # reusable only if this head ended exactly where the data did (nothing else came)
            self.keep_alive = self.keep_alive and data.endswith(b"\r\n\r\n") and data.count(b"\r\n\r\n") == 1
        if head:
            self._head_bytes += len(data)
            if not self.head_done and self._head_bytes > self.max_head:
                raise ProtocolError(f"response head longer than {self.max_head} bytes", url=self.url)
        pieces = self._pieces  # what the parser handed out, counted
        if pieces:
            self._pieces = []
            self.received += sum(map(len, pieces))
        if self.head_done and not self.complete and self._chunked:
            # progress is body bytes: framing alone (a chunk-size line, chunk extensions,
            # trailers) may not go on for ever
            if pieces:
                self._stall = 0
            else:
                self._stall += len(data)
                if self._stall > self.max_framing:
                    raise ProtocolError(f"chunked framing (chunk-size line or trailer) longer than "
                                        f"{self.max_framing} bytes", url=self.url)
        if self._direct and self._left is not None and not self.complete:
            self._left -= sum(map(len, pieces))
            if self._left <= 0:  # cannot be < 0: the parser stopped at Content-Length
                self.complete = True
        if self.complete or (self._direct and self.head_done):
            # the parser is done with (what follows is sliced or refused here): dropping it
            # ends the reader <-> parser cycle, so the reader is freed without the cyclic GC
            self._parser = None
        return pieces

    def forwarded(self) -> list[ResponseReader]:
        """The readers this one's parser went on to (pipelined responses that began in the
        bytes it was fed), in order; each holds its body pieces until :meth:`take` is called."""
        out = []
        f = self._fwd
        while f is not None:
            out.append(f)
            f = f.forwarded_to
        return out

    @property
    def forwarded_to(self) -> ResponseReader | None:
        """The next reader, once this one's parser went on to its response."""
        return self._fwd

    def take_parser(self, parser: Any) -> None:
        """Parse with *parser* (the previous response's, which went on into this one)."""
        self._parser = parser

    def note_error(self, exc: Exception) -> None:
        """The parser failed in this (forwarded) response: its :attr:`error` from now on."""
        if self._error is None:
            self._error = (OverlongTransfer("server sent more responses than were asked for", url=self.url)
                           if self._after_end else ProtocolError(f"invalid HTTP response: {exc}", url=self.url))

    @property
    def error(self) -> BaseException | None:
        """A forwarded reader's error (raised by no :meth:`feed` of its own)."""
        return self._error

    def take(self) -> list[bytes]:
        """The body pieces a shared parser handed this (forwarded) reader, counted as
        :meth:`feed` counts its own."""
        pieces = self._pieces
        if pieces:
            self._pieces = []
            n = sum(map(len, pieces))
            self.received += n
            if self._direct and self._left is not None and not self.complete:
                self._left -= n
                if self._left <= 0:
                    self.complete = True
        return pieces

    def eof(self) -> None:
        """The server closed the connection: completes a body delimited by it, else raises
        (TruncatedTransfer mid-body, ProtocolError before a whole head)."""
        if self.complete:
            return
        if not self.head_done:
            what = "before answering" if not self._head_bytes else "in the middle of the response head"
            raise ProtocolError(f"server closed the connection {what}", url=self.url)
        if self._chunked or (self._direct and self._left is not None):
            total = f" of {self.content_length}" if self.content_length is not None else ""
            raise TruncatedTransfer(f"connection closed after {self.received}{total} bytes", url=self.url)
        self.keep_alive = False
        self.complete = True

    @property
    def started(self) -> bool:
        """Some byte of the response arrived."""
        return self.head_done or self._head_bytes > 0

    @property
    def reusable(self) -> bool:
        """The response ended cleanly and the connection may carry the next request."""
        return self.complete and self.keep_alive and not self._after_end


class RawResponseReader(ResponseReader):
    """A :class:`ResponseReader` that also keeps what a capture needs: the head's fields as
    received (order, case and repeats; ``raw_fields``) and the request head it answers
    (``request_head``). Only requests that ask for a capture use it."""

    __slots__ = ("raw_fields", "request_head")

    def __init__(self, method: str, url: object = None, *, max_head: int = 1 << 17,
                 max_framing: int = 1 << 16, request_head: bytes = b"") -> None:
        super().__init__(method, url, max_head=max_head, max_framing=max_framing)
        self.raw_fields: list[tuple[bytes, bytes]] = []
        self.request_head = request_head

    def on_header(self, name: bytes, value: bytes) -> None:
        if self._to is None:  # (else a later response's, on a pipelined connection)
            self.raw_fields.append((name, value))
        super().on_header(name, value)

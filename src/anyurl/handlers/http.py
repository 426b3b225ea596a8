"""The http: and https: schemes: a lean HTTP/1.1 path, and aiohttp for the rest.

Each request (each redirect hop) goes one of two ways, chosen per hop:

* **the lean path** (:mod:`anyurl.handlers.http1`, :mod:`anyurl.protocols.http1`):
  plain ``http://`` and ``https://`` requests straight to the origin server.
  Keep-alive connections on the shared :class:`~anyurl.net.pool.Pool`
  (``Limits.per_host``, ``Limits.max_idle``, one fresh try when a reused
  connection turns out stale), httptools to parse, no aiohttp import; the TLS
  context is built on the first https request only.
* **aiohttp**, one ``aiohttp.ClientSession`` per handler (so per Client),
  created on first use: a request through a proxy (CONNECT tunnels, proxy
  credentials, ftp through an HTTP proxy), and every request when
  ``HTTPOptions(lean=False)``. Used through its public API only: its own
  connection pool (``limit_per_host`` = ``Limits.per_host``, counted per origin,
  and per proxy when proxied), its ``TraceConfig`` hooks to time the wait for a
  free connection (``Timeouts.pool``, then PoolTimeout) and a new one
  (``Timeouts.connect``). The two paths keep separate counts: a Client mixing
  them may hold ``per_host`` connections of each to one host.

Everything else is this module's, the same for both: redirects, Basic
credentials and the answer to a Basic challenge, ranges, decoding, status
errors, Retry-After, stat, the ``anyurl.http`` log (request line and status
at DEBUG; the lean path also logs its connections).

Redirects are followed here, not by aiohttp, so the policy can be enforced
on every hop: at most ``limits.max_redirects``, never into ``file:``, never
into another scheme (unless ``Policy.allow_cross_scheme_redirects``) and never from https to
http (unless ``Policy.allow_https_downgrade``). Credentials are only sent
to the origin they were given for.

The request line carries the URL's path and search exactly as written
(they stay percent-encoded in :class:`~anyurl.urls.HTTPURL`); decoded
CR, LF or NUL anywhere in host, user, password, path or search is refused
before connecting.

Proxies: each hop asks ``Client.proxy_for`` (``Client(proxy=, no_proxy=,
trust_env=)`` and the ``*_proxy`` variables); https goes through a CONNECT
tunnel. An ftp URL whose scheme has a proxy is served here too, as curl and
Lynx do: the proxy gets ``GET ftp://host/path`` and the body is the file.

Bodies are checked against what the server announced: a 206 must carry the
range that was asked for (and is refused when none was), and a body longer
or shorter than its Content-Length or Content-Range is an error. Only a
compression anyurl asked for (``Accept-Encoding: gzip, deflate``) is undone,
and not when Content-Encoding describes the stored file (``x.tar.gz``
labelled gzip by Apache's ``AddEncoding``): those bytes are kept.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import io
import itertools
import logging
import re
import ssl
import zlib
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import unquote, unquote_to_bytes, urljoin, urlsplit

from ..errors import (
    AccessDenied,
    AnyURLError,
    ConfigurationError,
    ConnectError,
    FetchTimeout,
    NotSupported,
    OverlongTransfer,
    PoolTimeout,
    ProtocolError,
    ResourceNotFound,
    TemporaryFailure,
    TransferError,
    TruncatedTransfer,
    UnsafeURL,
    translate,
)
from ..net.tls import client_context
from ..protocols.http1 import Headers
from ..protocols.mime import SNIFF_BYTES, content_type_of, looks_like_html
from ..response import Body, Capture, Stat, utc_now
from ..schemes import DEFAULT_PORTS
from ..settings import HTTPOptions
from ..urls import FTPURL, HTTPURL, URL
from .base import Context, Handler, Request, apply_length, prime_allocator, refuse_controls

if TYPE_CHECKING:
    from datetime import datetime

    import aiohttp

    from ..net.pool import Pool
    from ..protocols.http3 import AltSvcCache
    from .http1 import H1Client
    from .http2 import H2Client
    from .http3 import H3Client

_log = logging.getLogger("anyurl.http")

__all__ = ["HTTPHandler", "HTTPOptions"]

_REDIRECTS = frozenset({301, 302, 303, 307, 308})
# request headers that are credentials: sent to the request's own origin only, never after a
# redirect to another scheme, host or port
_CREDENTIAL_HEADERS = frozenset({"authorization", "cookie"})
_CONTENT_RANGE = re.compile(r"bytes\s+(\d+)-(\d+)/(\d+|\*)", re.I)
_UNSATISFIED_RANGE = re.compile(r"bytes\s+\*/(\d+)", re.I)
# the codings anyurl asks for, and so the only ones it undoes
_ACCEPT_ENCODING = "gzip, deflate"
_DECODABLE = frozenset({"gzip", "x-gzip", "deflate"})
# a file name ending so is stored compressed: its Content-Encoding describes the file
_CODING_SUFFIXES = {
    "gzip": (".gz", ".tgz", ".taz", ".svgz", ".emz"), "x-gzip": (".gz", ".tgz", ".taz", ".svgz", ".emz"),
    "deflate": (".zz", ".deflate"), "compress": (".z", ".taz"), "x-compress": (".z", ".taz"),
    "br": (".br",), "zstd": (".zst",), "bzip2": (".bz2", ".tbz", ".tbz2"), "x-bzip2": (".bz2", ".tbz", ".tbz2"),
}
# types that are compressed files themselves (served with the matching Content-Encoding by some servers)
_COMPRESSED_TYPES = frozenset({
    "application/gzip", "application/x-gzip", "application/x-gunzip", "application/gzipped",
    "application/gzip-compressed", "application/x-compress", "application/x-compressed",
    "application/x-tar", "application/x-gtar", "application/x-compressed-tar", "application/x-bzip2",
    "application/zstd", "application/x-xz", "application/zip", "application/x-brotli",
})
# bytes that may appear literally in a request target; anything else
# (space, controls, non-ASCII, "<>\"^`{|}") is percent-encoded before sending
_WIRE_SAFE_TEXT = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=:@/?%[]"
_WIRE_SAFE = frozenset(_WIRE_SAFE_TEXT.encode())
_WIRE_UNSAFE = re.compile(f"[^{re.escape(_WIRE_SAFE_TEXT)}]")  # the same set, to search text


def _decoded(value: str | None) -> str | None:
    return None if value is None else unquote_to_bytes(value).decode("latin-1")


def _wire(text: str) -> str:
    """*text* with every byte that may not appear literally in a request target escaped.

    Existing %XX escapes are kept as written, so the server sees the URL's own encoding.
    """
    if _WIRE_UNSAFE.search(text) is None:  # the usual case: nothing to escape
        return text
    raw = text.encode("utf-8", "surrogateescape")
    return "".join(chr(b) if b in _WIRE_SAFE else f"%{b:02X}" for b in raw)


def _status_error(status: int, reason: str, url: object,
                  headers: Mapping[str, str] | None = None) -> AnyURLError:
    """The anyurl error for an HTTP error status (Retry-After kept on a 503/429)."""
    reply = f"{status} {reason}".strip()
    if status in (404, 410):
        return ResourceNotFound("not found", url=url, reply=reply)
    if status in (401, 403):
        return AccessDenied("access denied", url=url, reply=reply)
    if status in (503, 429):
        return TemporaryFailure("server temporarily unavailable", url=url, reply=reply,
                                retry_after=_retry_after(headers))
    if status >= 500:
        return ProtocolError("server error", url=url, reply=reply)
    return ProtocolError("request refused", url=url, reply=reply)


def _headers_dict(headers: Mapping[str, str]) -> Headers:
    """Response headers as a dict (lookups ignore case); repeated fields joined with ", "
    (RFC 9110 5.3)."""
    if isinstance(headers, Headers):
        return headers
    out = Headers()
    for k, v in headers.items():
        out.add(k, v)
    return out


def _translate(exc: BaseException, url: object, stage: str) -> AnyURLError:
    """An aiohttp/asyncio/OS exception as an anyurl error (the one table: anyurl.errors.translate)."""
    return translate(exc, url, doing=stage)


def _basic(user: str, password: str) -> str:
    """An ``Authorization: Basic`` value (RFC 7617, UTF-8)."""
    return "Basic " + base64.b64encode(f"{user}:{password}".encode("utf-8", "surrogateescape")).decode()


def _widen_reads(resp: aiohttp.ClientResponse, chunk_size: int) -> None:
    """Let the socket transport read up to a chunk per recv() for this body.

    asyncio's selector transport reads at most 256 KiB per recv(), each into a
    fresh bytes object; for a large body, reading ~1 MiB at a time cut the
    client's CPU time per byte by about a fifth in bench/suites/http.py (with
    the allocator primed, see _prime_allocator; without it, larger reads
    cause more page faults, not fewer).
    ``max_size`` is an attribute of asyncio's own transport only (uvloop and
    TLS transports have none), so anything else is left alone.
    """
    if resp.content_length is not None and resp.content_length < 4 * (256 << 10):
        return  # small bodies gain nothing
    transport = resp.connection.transport if resp.connection is not None else None
    if transport is not None and isinstance(getattr(transport, "max_size", None), int):
        try:
            transport.max_size = max(256 << 10, min(chunk_size, 1 << 20))  # type: ignore[attr-defined]
        except (AttributeError, TypeError):
            pass


# what sends a URL down the careful path in HTTPHandler._target: CR, LF, NUL, literal or
# %-encoded (%00, %0A, %0D); a "?" in the path; a host other than a lower-case name or IPv4 address
_UNSAFE_TEXT = re.compile(r"[\r\n\0]|%0[0aAdD]")
_PLAIN_HOST = re.compile(r"[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?")
_plain_hosts: set[str] = set()  # hosts _PLAIN_HOST matched: a batch asks one host again and again


def _is_plain_host(host: str) -> bool:
    if host in _plain_hosts:
        return True
    if _PLAIN_HOST.fullmatch(host) is None:
        return False
    if len(_plain_hosts) >= 256:  # bounded: a crawl meets many hosts
        _plain_hosts.clear()
    _plain_hosts.add(host)
    return True


class _Target:
    """A URL as it goes on the wire (path and query escaped as written); never changed once
    made. What each request needs of it (port, ``Host`` value, request target, the text) is
    worked out once here, not per use."""

    __slots__ = ("scheme", "host", "explicit_port", "path", "query", "port", "hostport", "request_target",
                 "text")

    def __init__(self, scheme: str, host: str, explicit_port: int | None, path: str, query: str | None) -> None:
        self.scheme = scheme
        self.host = host  # lower case, no brackets
        self.explicit_port = explicit_port
        self.path = path  # escaped, starting with "/"
        self.query = query
        default = DEFAULT_PORTS.get(scheme)
        self.port: int = explicit_port or default or 80
        bracketed = f"[{host}]" if ":" in host else host
        self.hostport = (bracketed if explicit_port is None or explicit_port == default
                         else f"{bracketed}:{explicit_port}")
        self.request_target = path if query is None else f"{path}?{query}"
        self.text = f"{scheme}://{self.hostport}{self.request_target}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Target) and self.text == other.text

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return f"_Target({self.text!r})"

    @classmethod
    def parse(cls, text: str) -> _Target:
        """Split an absolute URL (ValueError when it is not usable); userinfo and fragment dropped."""
        s = urlsplit(text)
        port = s.port  # ValueError when out of range
        return cls(s.scheme.lower(), s.hostname or "", port, s.path or "/",
                   s.query if "?" in text.split("#", 1)[0] else None)

    @property
    def decoded_path(self) -> str:
        return unquote(self.path, errors="replace")

    def __str__(self) -> str:
        return self.text

    def human(self) -> str:
        return unquote(str(self), errors="replace")

    def join(self, location: str) -> _Target:
        return _Target.parse(urljoin(str(self), location))

    def yurl(self) -> Any:
        from yarl import URL as YURL

        return YURL(str(self), encoded=True)


def _origin(u: _Target) -> tuple[str, str, int]:
    return (u.scheme, u.host, u.port)


class _Response(Protocol):
    """What this module needs of a response on either path."""

    status: int
    reason: str
    content_length: int | None
    content_type: str  # the type to believe (protocols.mime), "" when none is usable
    charset: str | None

    @property
    def http_version(self) -> str:
        """"HTTP/1.1", "HTTP/2", "HTTP/3" (what ``Response.meta["http_version"]`` says)."""

    @property
    def buffered_body(self) -> Callable[[], list[bytes] | None] | None:
        """What gives the whole body at once when all of it arrived (the lean path's), else None."""

    @property
    def headers(self) -> Mapping[str, str]:
        """The response headers (lookups ignore case)."""

    async def read_chunk(self, size: int) -> bytes:
        """The next piece of the body (at most *size* bytes), b"" at its end."""

    def widen(self, chunk_size: int) -> None:
        """A hint that a large body follows."""

    async def release(self) -> None:
        """Done: the connection may be reused if the body was read to its end."""

    def release_now(self) -> bool:
        """:meth:`release` when it needs no wait (the lean path's kept connection); False: call it."""

    async def close(self) -> None:
        """Done, unread data left: the connection is closed."""


class _AioResponse:
    """An aiohttp response seen through :class:`_Response`."""

    buffered_body: Callable[[], list[bytes] | None] | None = None

    def __init__(self, resp: aiohttp.ClientResponse) -> None:
        self.resp = resp
        self.status = resp.status
        self.reason = resp.reason or ""
        v = resp.version
        self.http_version = "HTTP/1.1" if v is None else f"HTTP/{v.major}.{v.minor}"
        self.headers: Mapping[str, str] = resp.headers
        self.content_length = resp.content_length
        # every Content-Type field, read as the lean path does (the last valid one)
        found = content_type_of(", ".join(resp.headers.getall("Content-Type", ())))
        self.content_type, self.charset = found or ("", None)

    async def read_chunk(self, size: int) -> bytes:
        return await self.resp.content.read(size)

    def widen(self, chunk_size: int) -> None:
        _widen_reads(self.resp, chunk_size)

    def release_now(self) -> bool:
        return False

    async def release(self) -> None:
        self.resp.release()  # back to aiohttp's pool, which hands it to a request waiting for it

    async def close(self) -> None:
        self.resp.close()


class _Waits:
    """The waits of one request on the aiohttp path, timed by anyurl's rules: a free
    connection (``Timeouts.pool``: then PoolTimeout, the server never asked) and a new one
    (``Timeouts.connect``: the proxy's CONNECT and the TLS handshake included). aiohttp's
    public ``TraceConfig`` hooks tell which wait is on; they reschedule one timer (``timer``,
    an ``asyncio.timeout`` around the request)."""

    __slots__ = ("timer", "pool", "connect", "phase", "pool_until")

    def __init__(self, timer: asyncio.Timeout, pool: float | None, connect: float | None) -> None:
        self.timer = timer
        self.pool = pool
        self.connect = connect
        self.phase = ""  # "pool" or "connect" while that wait is on
        self.pool_until: float | None = None  # the end of the wait for a free connection, once begun

    def start(self, phase: str) -> None:
        self.phase = phase
        now = asyncio.get_running_loop().time()
        if phase == "pool":  # (aiohttp may queue a request again after a wake-up: one wait in all)
            if self.pool_until is None and self.pool is not None:
                self.pool_until = now + self.pool
            self.timer.reschedule(self.pool_until)
        else:
            self.timer.reschedule(None if self.connect is None else now + self.connect)

    def end(self) -> None:
        self.phase = ""
        self.timer.reschedule(None)


def _trace_config() -> aiohttp.TraceConfig:
    """The hooks that drive :class:`_Waits` (a request's ``trace_request_ctx``)."""
    import aiohttp

    def hook(action: Callable[[_Waits], None]) -> Callable[..., Any]:
        async def on_event(session: object, ctx: Any, params: object) -> None:
            waits = ctx.trace_request_ctx
            if isinstance(waits, _Waits):
                action(waits)
        return on_event

    config = aiohttp.TraceConfig()
    config.on_connection_queued_start.append(hook(lambda w: w.start("pool")))
    config.on_connection_queued_end.append(hook(_Waits.end))
    config.on_connection_create_start.append(hook(lambda w: w.start("connect")))
    config.on_connection_create_end.append(hook(_Waits.end))
    return config


class HTTPHandler(Handler):
    """Retrieves http and https URLs with aiohttp, following redirects under the policy."""

    options_name = "http"

    def __init__(self, context: Context) -> None:
        super().__init__(context)
        self.http_options = context.options_for("http", HTTPOptions)
        self._session: aiohttp.ClientSession | None = None
        self._h1: H1Client | None = None
        self._h2: H2Client | None = None
        self._h3: H3Client | None = None
        self._alt: AltSvcCache | None = None  # origins' Alt-Svc: h3, made on the first one seen
        # (User-Agent, headers, their lean-path list) of a request with no headers of its own
        self._plain: tuple[str, dict[str, str], list[tuple[str, str]]] | None = None

    def _lean(self) -> H1Client:
        if self._h1 is None:
            from .http1 import H1Client

            prime_allocator(self.context.limits.chunk_size)
            self._h1 = H1Client(self._tls, self.http_options.pipeline)
        return self._h1

    def _tls(self) -> ssl.SSLContext:
        o = self.http_options
        return client_context(o.verify, o.cafile, o.ssl_context)

    def _tls_h2(self) -> ssl.SSLContext:
        """The context that offers h2 by ALPN (the caller's own ssl_context as it is)."""
        o = self.http_options
        return client_context(o.verify, o.cafile, o.ssl_context, alpn=("h2", "http/1.1"))

    def _http2(self) -> H2Client:
        if self._h2 is None:
            from .http1 import FreshH1Connection
            from .http2 import H2Client  # (h2 loads here: on the first https request only)

            self._h2 = H2Client(self._lean().pool, self._tls_h2, FreshH1Connection)
        return self._h2

    def _http3(self) -> H3Client:
        if self._h3 is None:
            from .http3 import H3Client  # (qh3 itself loads on the first QUIC connection)

            o = self.http_options
            self._h3 = H3Client((o.verify, o.cafile), self.context.limits.chunk_size)
        return self._h3

    def multiplexed(self, url: URL) -> bool:
        """True when a request for *url* would be a stream of an HTTP/2 connection open now, or
        a GET pipelined on a plain-http connection (many requests share it: a caller may run
        more at once than ``Limits.per_host``)."""
        if type(url) is not HTTPURL:
            return False
        if url.scheme == "http":  # HTTP/1.1 pipelining: several GETs on a connection
            h1 = self._h1
            return h1 is not None and h1.pipelines(("http", url.host, url.port or 80))
        if url.scheme != "https":
            return False
        h3 = self._h3
        if h3 is not None and h3.multiplexed((url.host, url.port or 443)):
            return True
        h2 = self._h2
        return h2 is not None and h2.multiplexed(("https", url.host, url.port or 443))

    def pipeline_depth(self, url: URL) -> int:
        """The pipeline's bound on a plain-http connection (``HTTPOptions.pipeline``)."""
        return self.http_options.pipeline if url.scheme == "http" else 0

    def pools(self) -> tuple[Pool[Any], ...]:
        """The HTTP/1.1 client's pool (its HTTP/2 connections are kept there too)."""
        return () if self._h1 is None else (self._h1.pool,)

    async def negotiated(self, url: URL) -> bool:
        """:meth:`multiplexed`, after waiting for an HTTP/2 connection being opened to *url*'s
        origin (if any) to pick its protocol, or an HTTP/3 one to finish its handshake."""
        if type(url) is not HTTPURL or url.scheme != "https":
            return False
        h3 = self._h3
        if h3 is not None and await h3.negotiated((url.host, url.port or 443)):
            return True
        h2 = self._h2
        return h2 is not None and await h2.negotiated(("https", url.host, url.port or 443))

    def _get_session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            import aiohttp

            c = self.context
            prime_allocator(c.limits.chunk_size)
            bufsize = self.http_options.read_bufsize or max(1 << 16, min(c.limits.chunk_size, 1 << 20))
            # aiohttp counts its own connections: per_host of them per origin (per proxy and
            # origin when proxied), apart from the lean path's pool (docs/http.md)
            connector = aiohttp.TCPConnector(limit=0, limit_per_host=c.limits.per_host,
                                             keepalive_timeout=c.limits.max_idle, ssl=self._tls())
            self._session = aiohttp.ClientSession(
                connector=connector,
                # the waits for a connection are _Waits' (TraceConfig hooks); sock_connect and
                # sock_read are the request's own (_timeouts)
                timeout=aiohttp.ClientTimeout(total=None, connect=None, sock_connect=c.timeouts.connect,
                                              sock_read=c.timeouts.read),
                trace_configs=[_trace_config()],
                auto_decompress=self.http_options.decompress,
                read_bufsize=bufsize,
                cookie_jar=aiohttp.DummyCookieJar(),
                max_line_size=c.limits.max_line,
                max_field_size=c.limits.max_line,
            )
        return self._session

    async def aclose(self) -> None:
        """Close the session and every pooled connection."""
        session, self._session = self._session, None
        h1, self._h1 = self._h1, None
        h2, self._h2 = self._h2, None
        h3, self._h3 = self._h3, None
        if h3 is not None:
            await h3.aclose()
        if h2 is not None:
            await h2.aclose()
        if h1 is not None:
            await h1.aclose()
        if session is not None:
            await session.close()

    # -- request building ---------------------------------------------------

    def _target(self, url: HTTPURL | FTPURL) -> _Target:
        """The URL sent on the wire; refuses decoded CR/LF/NUL first."""
        if isinstance(url, FTPURL):
            for what, value in (("host", url.host), ("user", url.user), ("password", url.password),
                                *(("path", seg) for seg in (*url.cwd, url.name))):
                refuse_controls(url, what, value)
            if not url.host:
                raise UnsafeURL("ftp URL without a host", url=url)
            # the proxy gets the ftp URL without its userinfo (sent as Basic credentials instead)
            text = f"ftp://{url.hostport}{_wire(url._path())}"
        else:
            fast = self._fast_target(url)
            if fast is not None:
                return fast
            for what, value in (("host", url.host), ("user", url.user), ("password", url.password),
                                ("path", _decoded(url.path)), ("search", _decoded(url.search))):
                refuse_controls(url, what, value)
            if not url.host:
                raise UnsafeURL("http URL without a host", url=url)
            # HTTPURL.path has no leading "/" and is still encoded: send it as written
            path = "/" + _wire(url.path)
            search = "" if url.search is None else "?" + _wire(url.search)
            text = f"{url.scheme}://{url.hostport}{path}{search}"
        try:
            target = _Target.parse(text)
        except (ValueError, TypeError) as exc:
            raise UnsafeURL(f"not a usable {url.scheme} URL: {exc}", url=url) from exc
        if not target.host:
            raise UnsafeURL(f"not a usable {url.scheme} URL: no host", url=url)
        return target

    @staticmethod
    def _fast_target(url: HTTPURL) -> _Target | None:
        """The target of a plain http(s) URL built from its parsed fields (no re-splitting),
        or None when anything needs the careful path: a CR/LF/NUL (also %-encoded) in the
        path, search or userinfo, or a host that is not a plain name or IPv4 address."""
        path = url.path
        search = url.search
        host = url.host
        # (str's own "in" for the path, not the pattern: a scan per character costs more)
        if ((("%0" in path or "\r" in path or "\n" in path or "\0" in path) and _UNSAFE_TEXT.search(path))
                or "?" in path or (search is not None and _UNSAFE_TEXT.search(search))
                or (host not in _plain_hosts and not _is_plain_host(host))
                or (url.user is not None and _UNSAFE_TEXT.search(url.user))
                or (url.password is not None and _UNSAFE_TEXT.search(url.password))):
            return None
        scheme = url.scheme
        port = url.port
        if _WIRE_UNSAFE.search(path) is not None:  # (_wire's own first look, inline: the usual case)
            path = _wire(path)
        return _Target(scheme, host, None if port == DEFAULT_PORTS.get(scheme) else port,
                       "/" + path, None if search is None else _wire(search))

    def _headers(self, url: HTTPURL | FTPURL, opts: HTTPOptions, rng: tuple[int, int | None] | None,
                 extra: Mapping[str, str] | None) -> dict[str, str]:
        plain = rng is None and not extra and not opts.headers
        if plain:
            # the same headers for every plain request: built and checked once (never mutated)
            ua = self.context.user_agent
            cached = self._plain
            if cached is not None and cached[0] == ua:
                return cached[1]
        headers = {"User-Agent": self.context.user_agent, **opts.headers}
        if rng is not None:
            first, last = rng
            headers["Range"] = f"bytes={first}-{'' if last is None else last}"
            # byte offsets count the stored representation: ask for it uncompressed
            headers["Accept-Encoding"] = "identity"
        elif not any(k.lower() == "accept-encoding" for k in headers):
            # said here, not left to aiohttp, so anyurl knows which codings it asked for
            headers["Accept-Encoding"] = _ACCEPT_ENCODING
        if extra:
            headers.update(extra)
        for k, v in headers.items():
            refuse_controls(url, f"header {k}", k + v)
        if plain:
            self._plain = (self.context.user_agent, headers, _wire_headers(headers))
        return headers

    def _proxy(self, url: object, target: _Target) -> tuple[str | None, str | None]:
        """The proxy for *target* (Client.proxy_for), without its credentials, and the
        ``Proxy-Authorization`` value they make (None when it has none)."""
        proxy = self.context.proxy_for(target.scheme, target.host, target.port)
        if proxy is None:
            return None, None
        from yarl import URL as YURL

        refuse_controls(url, "proxy", proxy)
        purl = YURL(proxy)
        if purl.user is None:
            return proxy, None
        return str(purl.with_user(None)), _basic(purl.user, purl.password or "")

    def _timeouts(self, req: Request) -> aiohttp.ClientTimeout:
        """This request's socket timeouts, never past its deadline (``Timeouts.total``); the
        waits for a connection are :class:`_Waits`'."""
        import aiohttp

        return aiohttp.ClientTimeout(total=None, connect=None, sock_connect=req.connect_timeout,
                                     sock_read=req.read_timeout)

    # -- the request loop -----------------------------------------------------

    async def _exchange(self, req: Request, method: str, headers: dict[str, str],
                        opts: HTTPOptions | None = None) -> _Reply | _Elsewhere:
        """Send *method* for ``req.url``, following redirects under the policy.

        Returns the final response, or the anyurl URL another handler must
        serve (a redirect into another scheme that the policy allows, or an
        ftp URL no proxy serves).
        """
        url = req.url
        assert isinstance(url, (HTTPURL, FTPURL))
        target = (self._fast_target(url) if type(url) is HTTPURL else None) or self._target(url)
        start = _origin(target)
        foreign: dict[str, str] | None = None  # *headers* without the caller's credentials
        first_origin: tuple[str, str, int] | None = None
        auth: str | None = None
        if url.user is not None:
            auth = _basic(url.user, url.password or "")
            first_origin = _origin(target)
        opts = opts or self._request_options(req)
        lean = opts.lean
        http2 = opts.http2 and self.http_options.http2
        history: list[str] = []
        tried_credentials = auth is not None or isinstance(url, FTPURL)
        hops = 0
        proxy_for = self.context.proxy_for
        hop_captures: list[Capture] | None = [] if req.capture else None  # each redirect as received
        started: datetime | None = None
        while True:
            if hop_captures is not None:
                started = utc_now()
            headers_now = headers
            if hops and _origin(target) != start:
                # the caller's Authorization and Cookie headers were meant for the first
                # origin only (curl's CVE-2018-1000007, CVE-2022-27776)
                if foreign is None:
                    foreign = {k: v for k, v in headers.items() if k.lower() not in _CREDENTIAL_HEADERS}
                headers_now = foreign
            if auth is not None and _origin(target) == first_origin:
                headers_now = {**headers_now, "Authorization": auth}
            proxy: str | None = None
            proxy_auth: str | None = None
            if proxy_for(target.scheme, target.host, target.port) is not None:
                proxy, proxy_auth = self._proxy(url, target)
            if target.scheme == "ftp" and proxy is None:  # a redirect to an ftp host no proxy serves
                return _Elsewhere(self.context.parse(str(target)), history, hop_captures)
            resp: _Response
            try:
                if lean and proxy is None:
                    plain = self._plain
                    wire = plain[2] if plain is not None and plain[1] is headers_now else _wire_headers(headers_now)
                    if target.scheme == "https":
                        resp = await self._send_https(req, method, target, wire, url, opts, http2)
                    else:
                        resp = await (self._h1 or self._lean()).request(
                            req, method, "http", target.host, target.port, target.request_target,
                            target.hostport, wire, url)
                else:
                    resp = await self._aio_request(req, method, target, headers_now, proxy, proxy_auth)
            except AnyURLError:
                raise  # already ours, with its own cause ("from exc" would make it its own cause)
            except Exception as exc:
                via = f" through proxy {_masked(proxy)}" if proxy else ""
                raise _translate(exc, url, f"requesting {target.human()}{via}") from exc
            if resp.status in _REDIRECTS and "Location" in resp.headers:
                location = resp.headers["Location"]
                if hop_captures is not None:
                    from .http_capture import capture_hop  # here: only a capture needs it

                    hop_captures.append(await capture_hop(resp, method, target, headers_now, started, proxy))
                await resp.release()
                hops += 1
                if hops > req.limits.max_redirects:
                    raise ProtocolError(
                        f"too many redirects (more than {req.limits.max_redirects})",
                        url=url, reply=f"{resp.status} {resp.reason}")
                new = self._redirect(url, target, location)
                history.append(str(target))
                if isinstance(new, URL):
                    return _Elsewhere(new, history, hop_captures)
                target = new
                continue
            if (resp.status == 401 and not tried_credentials
                    and "basic" in resp.headers.get("WWW-Authenticate", "").lower()):
                tried_credentials = True
                cred = self.context.credentials_for(target.host or "", target.port)
                if cred is not None:
                    await resp.release()
                    auth = _basic(cred[0], cred[1])
                    first_origin = _origin(target)
                    continue
            reply = _Reply(resp, target, history, proxy)
            if hop_captures is not None:
                reply.sent, reply.started, reply.previous = headers_now, started, hop_captures
            return reply

    def _h3_port(self, target: _Target, opts: HTTPOptions, http2: bool) -> int | None:
        """The UDP port to try HTTP/3 on for *target*'s origin, None for TCP: HTTPOptions.http3
        True (the origin's Alt-Svc port, else its own), or None and an Alt-Svc: h3 from the
        origin not yet expired; never where QUIC failed lately or with the caller's own
        ssl_context."""
        want = opts.http3 if opts.http3 is not None else self.http_options.http3
        alt = self._alt
        if want is False or (want is None and (alt is None or not http2)) or opts.ssl_context is not None:
            return None
        origin = (target.host, target.port)
        now = asyncio.get_running_loop().time()
        if alt is not None:
            port = alt.h3_port(origin, now)
            if port is not None or alt.broken(origin, now):
                return port
        return target.port if want else None

    async def _send_https(self, req: Request, method: str, target: _Target, wire: list[tuple[str, str]],
                          url: object, opts: HTTPOptions, http2: bool) -> _Response:
        """The one place an https request's HTTP version is chosen (the lean path, no proxy):
        HTTP/3 where :meth:`_h3_port` says so, falling back to TCP when QUIC cannot reach the
        origin (refused, no answer before ``HTTPOptions.http3_timeout``, a failed handshake);
        over TCP, HTTP/2 where the server picks it by ALPN (``http2``), else HTTP/1.1. The three
        drivers import none of each other. An ``Alt-Svc`` on a response over TCP is remembered
        for the origin's later requests."""
        udp = self._h3_port(target, opts, http2)
        quic_failed: AnyURLError | None = None
        if udp is not None:
            from .http3 import H3Unavailable

            wait = req.bound(min(opts.http3_timeout, req.timeouts.connect or opts.http3_timeout))
            try:
                return await (self._h3 or self._http3()).request(
                    req, method, target.host, target.port, udp, wait, target.request_target,
                    target.hostport, wire, url)
            except H3Unavailable as exc:
                quic_failed = exc
                if self._alt is None:
                    from ..protocols.http3 import AltSvcCache

                    self._alt = AltSvcCache()
                self._alt.mark_broken((target.host, target.port), asyncio.get_running_loop().time())
                _log.debug("%s:%s HTTP/3 unavailable (%s): over TCP", target.host, target.port, exc.message)
        try:
            # HTTP/2 where the server picks it by ALPN; None: it picked HTTP/1.1 (that connection
            # waits idle in the pool for the HTTP/1.1 client), or picked it before
            resp: _Response | None = None
            if http2:
                resp = await (self._h2 or self._http2()).request(
                    req, method, "https", target.host, target.port, target.request_target, target.hostport, wire, url)
            if resp is None:
                resp = await (self._h1 or self._lean()).request(
                    req, method, "https", target.host, target.port, target.request_target, target.hostport, wire, url)
        except (ConnectError, FetchTimeout) as exc:
            if quic_failed is None or type(exc) not in (ConnectError, FetchTimeout):
                raise
            # both ways failed: the error says why QUIC did too
            raise type(exc)(f"{quic_failed.message}; over TCP: {exc.message}", url=url) from exc
        want = opts.http3 if opts.http3 is not None else self.http_options.http3
        if want is not False:
            alt_svc = resp.headers.get("alt-svc")
            if alt_svc is not None:
                if self._alt is None:
                    from ..protocols.http3 import AltSvcCache

                    self._alt = AltSvcCache()
                self._alt.seen((target.host, target.port), alt_svc, asyncio.get_running_loop().time())
        return resp

    async def _aio_request(self, req: Request, method: str, target: _Target, headers: dict[str, str],
                           proxy: str | None, proxy_auth: str | None) -> _Response:
        """One request through aiohttp (proxies, and HTTPOptions(lean=False)). *proxy_auth*: the
        proxy's ``Proxy-Authorization``: on the CONNECT for https, else on the request itself
        (which goes to the proxy)."""
        session = self._get_session()
        if target.scheme == "ftp":
            _allow_ftp_through_proxy(session)
        proxy_headers: dict[str, str] | None = None
        if proxy_auth is not None:
            if target.scheme == "https":
                proxy_headers = {"Proxy-Authorization": proxy_auth}
            else:
                headers = {**headers, "Proxy-Authorization": proxy_auth}
        via = f" (through proxy {_masked(proxy)})" if proxy else ""
        _log.debug("%s:%s > %s %s%s", target.host, target.port, method, target.request_target, via)
        pool = req.bound(req.timeouts.pool)
        timer = asyncio.timeout(None)  # (its TimeoutError comes out of the "async with")
        waits = _Waits(timer, pool, req.connect_timeout)
        try:
            async with timer:
                resp = await session.request(
                    method, target.yurl(), headers=headers, allow_redirects=False, proxy=proxy,
                    proxy_headers=proxy_headers, timeout=self._timeouts(req), auto_decompress=False,
                    trace_request_ctx=waits)
        except TimeoutError:
            if not timer.expired():
                raise  # aiohttp's own (sock_connect, sock_read)
            if waits.phase == "pool":
                raise PoolTimeout(
                    f"waited {pool:.3g} s for a free connection to {target.host}:{target.port}{via} "
                    f"(Limits.per_host={self.context.limits.per_host}, all busy)", url=req.url) from None
            raise FetchTimeout(f"connecting to {target.host}:{target.port}{via} timed out", url=req.url) from None
        _log.debug("%s:%s < %s %s", target.host, target.port, resp.status, resp.reason or "")
        return _AioResponse(resp)

    def _redirect(self, url: HTTPURL | FTPURL, current: _Target, location: str) -> _Target | URL:
        """Check a Location against the policy: the next target, or an anyurl URL for another handler."""
        refuse_controls(url, "redirect Location", location)
        try:
            new = current.join(_wire(location))
        except (ValueError, TypeError) as exc:
            raise ProtocolError(f"unusable redirect Location {location!r}: {exc}", url=url) from exc
        policy = self.context.policy
        scheme = new.scheme
        if scheme == current.scheme == "ftp":  # the proxy's own redirect (a directory's "/")
            return new
        if scheme not in ("http", "https"):
            if scheme == "file":  # a remote server never leads to local files, whatever the policy
                raise UnsafeURL(f"redirect from {current.scheme} to file scheme refused (Location: {location}): "
                                "a remote server never leads to local files, whatever the policy", url=url)
            if not policy.allow_cross_scheme_redirects:
                raise UnsafeURL(
                    f"redirect from {current.scheme} to {scheme or 'an unknown'} scheme refused "
                    f"(Location: {location}); Policy.allow_cross_scheme_redirects permits it", url=url)
            return self.context.parse(str(new))
        if current.scheme == "https" and scheme == "http" and not policy.allow_https_downgrade:
            raise UnsafeURL(f"redirect from https to http refused (Location: {location}); "
                            "Policy.allow_https_downgrade permits it", url=url)
        if not new.host:
            raise ProtocolError(f"unusable redirect Location {location!r}: no host", url=url)
        return new

    def _check_url(self, req: Request) -> HTTPURL | FTPURL:
        url = req.url
        if not isinstance(url, (HTTPURL, FTPURL)):
            raise ConfigurationError(f"HTTPHandler cannot open a {type(url).__name__}", url=url)
        return url

    async def open(self, req: Request) -> Body:
        """GET the URL (bytes ``req.offset`` to ``req.offset + req.length`` with a Range request),
        following redirects. An ftp URL here goes through an HTTP proxy.

        Per request, ``options=HTTPOptions(headers=...)`` adds headers to the Client's.
        """
        url = req.url
        if type(url) is HTTPURL and req.options is None:  # the common case of the two below, inline
            opts = self.http_options
        else:
            url = self._check_url(req)
            opts = self._request_options(req)
        extra = req.options.headers if isinstance(req.options, HTTPOptions) else None
        rng: tuple[int, int | None] | None = None
        if req.offset or req.length is not None:
            if req.length == 0:
                rng = None if not req.offset else (req.offset, None)
            else:
                rng = (req.offset, None if req.length is None else req.offset + req.length - 1)
        plain = self._plain
        if rng is None and not extra and plain is not None and plain[0] == self.context.user_agent \
                and opts is self.http_options and not opts.headers:  # (_headers' cached answer, inline)
            headers = plain[1]
        else:
            headers = self._headers(url, opts, rng, extra)
        reply = await self._exchange(req, "GET", headers, opts)
        if type(reply) is _Elsewhere:
            # allowed: the new URL's own handler (no offset: a different resource)
            body = await self.context.handler(reply.url).open(req.replace(url=reply.url, offset=0, options=None))
            body.meta.setdefault("redirects", reply.history)
            if reply.previous and body.capture is not None:
                body.capture.previous[:0] = reply.previous
            return body
        assert type(reply) is _Reply
        if reply.resp.status == 416 and req.offset:
            return await self._past_end(req, url, reply, headers)
        cap = None
        if req.capture:
            from .http_capture import KeptResponse, capture_reply  # here: only a capture needs it

            t = reply.target
            cap = capture_reply(reply.resp, t.text, "GET", t.request_target, t.hostport, t.scheme,
                                reply.sent, reply.started, reply.proxy)
            cap.previous = reply.previous or []
            reply.resp = KeptResponse(reply.resp, cap)
        body = await self._body(url, reply, opts, req.offset, rng, headers, cut=req.length is not None)
        body.capture = cap
        return body if req.length is None else apply_length(body, req.length)

    async def _past_end(self, req: Request, url: HTTPURL | FTPURL, reply: _Reply,
                        sent: Mapping[str, str]) -> Body:
        """A 416 to ``Range: bytes=offset-``: an empty body when the offset is the size (resuming
        a complete file), else ProtocolError. The size is the 416's ``Content-Range: bytes */N``
        (nginx) or, when it has none (lighttpd, Apache 2.4), the Content-Length of a HEAD."""
        resp = reply.resp
        meta = self._meta(resp, reply)
        offset = req.offset
        m = _UNSATISFIED_RANGE.match(resp.headers.get("Content-Range", "").strip())
        await resp.release()
        size = int(m.group(1)) if m else await self._stored_size(req, sent)
        if size == offset:  # nothing left from there
            return Body.from_bytes(url, b"", meta=meta, offset=offset, size=0)
        has = "" if size is None else f" (it has {size} bytes)"
        raise ProtocolError(f"server cannot serve from offset {offset}{has}", url=url,
                            reply=f"416 {resp.reason}")

    async def _stored_size(self, req: Request, sent: Mapping[str, str]) -> int | None:
        """The Content-Length of a HEAD of ``req.url`` (the stored size), None when not told."""
        headers = {k: v for k, v in sent.items() if k.lower() not in ("range", "accept-encoding")}
        headers["Accept-Encoding"] = "identity"
        reply = await self._exchange(req, "HEAD", headers)
        if not isinstance(reply, _Reply):
            return None
        resp = reply.resp
        await resp.release()
        encoding = resp.headers.get("Content-Encoding", "").strip().lower()
        if resp.status != 200 or encoding not in ("", "identity"):
            return None
        return resp.content_length

    def _request_options(self, req: Request) -> HTTPOptions:
        if req.options is None or isinstance(req.url, FTPURL):  # the FTP options mean nothing to an HTTP proxy
            return self.http_options
        return self.options(req, HTTPOptions)

    async def stat(self, req: Request) -> Stat:
        """HEAD the URL (following redirects): size, Last-Modified, type; headers and ETag in meta.

        A server that refuses HEAD (405, 501) is asked for ``Range: bytes=0-0`` instead.
        """
        url = self._check_url(req)
        opts = self._request_options(req)
        extra = req.options.headers if isinstance(req.options, HTTPOptions) else None
        # the stored size, not a compressed one
        headers = {**self._headers(url, opts, None, extra), "Accept-Encoding": "identity"}
        reply = await self._exchange(req, "HEAD", headers)
        if isinstance(reply, _Elsewhere):
            return await self.context.handler(reply.url).stat(req.replace(url=reply.url, options=None))
        resp = reply.resp
        await resp.release()
        size: int | None = None
        if resp.status in (405, 501):
            reply = await self._exchange(req, "GET", {**headers, "Range": "bytes=0-0"})
            if isinstance(reply, _Elsewhere):
                return await self.context.handler(reply.url).stat(req.replace(url=reply.url, options=None))
            resp = reply.resp
            await resp.close()  # one byte at most is pending: do not read it
            m = _CONTENT_RANGE.fullmatch(resp.headers.get("Content-Range", "").strip())
            if resp.status == 206 and m and m.group(3) != "*":
                size = int(m.group(3))
        if resp.status >= 300:
            raise _status_error(resp.status, resp.reason or "", url, resp.headers)
        encoding = resp.headers.get("Content-Encoding", "").strip().lower()
        if size is None and resp.status == 200 and encoding in ("", "identity"):
            size = resp.content_length
        meta = self._meta(resp, reply)
        for key, header in (("etag", "ETag"), ("accept_ranges", "Accept-Ranges"),
                            ("content_encoding", "Content-Encoding")):
            if header in resp.headers:
                meta[key] = resp.headers[header]
        kind = "directory" if isinstance(url, FTPURL) and (url.typecode == "d" or not url.name) else "file"
        return Stat(url=str(url), kind=kind, size=size, modified=_http_date(resp.headers.get("Last-Modified")),
                    content_type=resp.content_type or None, meta=meta)

    def _meta(self, resp: _Response, reply: _Reply) -> dict[str, Any]:
        headers = resp.headers
        meta: dict[str, Any] = {"status": resp.status, "reason": resp.reason,
                                "headers": headers if type(headers) is Headers else _headers_dict(headers),
                                "url": reply.target.text, "redirects": reply.history,
                                "http_version": resp.http_version}
        if reply.proxy is not None:
            meta["proxy"] = _masked(reply.proxy)
        return meta

    async def upload(self, req: Request, source: Any) -> None:
        """Refused: anyurl only retrieves through an HTTP proxy."""
        if isinstance(req.url, FTPURL):
            raise NotSupported("uploading an ftp URL through an HTTP proxy is not supported "
                               "(list the host in no_proxy to upload directly)", url=req.url)
        await super().upload(req, source)

    async def _body(self, url: HTTPURL | FTPURL, reply: _Reply, opts: HTTPOptions, offset: int,
              rng: tuple[int, int | None] | None, sent: Mapping[str, str], *, cut: bool = False) -> Body:
        """Check the final response and wrap its payload as a streaming Body. *cut*: the body
        will be cut short (``apply_length`` wraps its chunks): closing it must end the response
        itself (``on_close``); otherwise closing the chunks does."""
        resp = reply.resp
        status = resp.status
        meta = self._meta(resp, reply)
        if status >= 300:
            await resp.release()
            raise _status_error(status, resp.reason or "", url, resp.headers)
        length = resp.content_length
        skip = 0
        expected = length
        resumable = False
        if status == 206:
            expected, skip = await self._check_range(url, resp, rng)
            meta["content_range"] = resp.headers.get("Content-Range")
            if skip or (rng is not None and rng[1] is not None and expected > rng[1] - rng[0] + 1):
                meta["range_cut"] = True  # a wider range than asked for (BusyBox): the slice is taken
            resumable = True
        elif offset:
            # the server ignored Range: skip the first bytes ourselves
            skip = offset
            meta["range_ignored"] = True
        elif status == 200:
            resumable = "bytes" in resp.headers.get("Accept-Ranges", "").lower()
        coding = resp.headers.get("Content-Encoding", "").strip().lower()
        decoder: _Decoder | None = None
        if coding not in ("", "identity"):
            asked = _codings(sent.get("Accept-Encoding") or _header(sent, "Accept-Encoding"))
            if (opts.decompress and coding in asked and coding in _DECODABLE
                    and not _stored_encoding(coding, resp.content_type, reply.target.path
                                             if "%" not in reply.target.path else reply.target.decoded_path)):
                decoder = _Decoder(coding, url, self.context.limits.chunk_size)
                meta["decoded"] = coding
            else:
                # the encoding describes the file (a .tar.gz served with Content-Encoding: gzip),
                # or was not asked for: keep the bytes as the server stores them
                meta["content_encoding"] = coding
        size = None if decoder is not None or expected is None else max(expected - skip, 0)
        chunk_size = self.context.limits.chunk_size
        resp.widen(chunk_size)
        chunks = _BodyChunks(resp, url, chunk_size, expected, skip, offset, decoder)
        content_type = resp.content_type
        if content_type:
            return Body(url, chunks, content_type=content_type, size=size, meta=meta, offset=offset,
                        on_close=chunks.finish if cut else None, charset=resp.charset, resumable=resumable)
        # no usable Content-Type (BusyBox index.cgi pages): sniff HTML at the start of the body
        pieces: AsyncIterator[bytes] = chunks
        content_type = "application/octet-stream"
        if not offset:
            content_type, pieces = await _sniffed(chunks)
            meta["content_type_sniffed"] = content_type
        return Body(url, pieces, content_type=content_type, size=size, meta=meta, offset=offset,
                    on_close=chunks.finish if cut else None, charset=resp.charset, resumable=resumable)

    async def _check_range(self, url: object, resp: _Response,
                           rng: tuple[int, int | None] | None) -> tuple[int, int]:
        """The body length a 206 must have and the bytes to skip at its start; ProtocolError
        unless it covers the range asked for. A reply wider than asked (BusyBox answers
        ``bytes=0-0`` with ``0-99999/100000``) is cut to the range: skipped up to its first
        byte here, cut after its last by ``apply_length``."""
        cr = resp.headers.get("Content-Range", "")
        if rng is None:
            await resp.close()
            raise ProtocolError(f"server sent 206 Partial Content (Content-Range {cr!r}) to a request "
                                "for the whole resource", url=url, reply=f"206 {resp.reason}")
        first, last = rng
        asked = f"bytes {first}-{'' if last is None else last}"
        m = _CONTENT_RANGE.fullmatch(cr.strip())
        ok = m is not None
        if m is not None:
            a, b = int(m.group(1)), int(m.group(2))
            total = None if m.group(3) == "*" else int(m.group(3))
            want_last = last
            if total is not None and (want_last is None or want_last >= total):
                want_last = total - 1
            ok = (a <= first and b >= a and (total is None or b < total)
                  and (want_last is None or b >= want_last))
        if not ok or m is None:
            await resp.close()
            raise ProtocolError(f"asked for {asked}, server sent Content-Range {cr!r}", url=url,
                                reply=f"206 {resp.reason}")
        span = int(m.group(2)) - int(m.group(1)) + 1
        if resp.content_length is not None and resp.content_length != span:
            await resp.close()
            raise ProtocolError(f"Content-Length {resp.content_length} disagrees with Content-Range {cr!r}",
                                url=url, reply=f"206 {resp.reason}")
        return span, first - int(m.group(1))


async def _sniffed(chunks: _BodyChunks) -> tuple[str, AsyncIterator[bytes]]:
    """The type sniffed from the first piece of *chunks* (text/html or
    application/octet-stream) and the body's pieces again, that one first. An error reading
    it is raised at the body's first read, as it would have been without the sniffing
    (so a retry can still resume the stream)."""
    first = b""
    failed: AnyURLError | None = None
    try:
        first = await chunks.__anext__()
    except StopAsyncIteration:
        pass
    except AnyURLError as exc:
        failed = exc
    ctype = "text/html" if looks_like_html(first[:SNIFF_BYTES]) else "application/octet-stream"
    return ctype, _Prepended(first, chunks, failed)


class _Prepended:
    """*first* (or the error *failed*), then the rest of *chunks*; closing closes them (a
    class: an async generator never started would not run its cleanup on ``aclose``)."""

    def __init__(self, first: bytes, chunks: _BodyChunks, failed: AnyURLError | None) -> None:
        self._first: bytes | None = first
        self._chunks = chunks
        self._failed = failed

    def __aiter__(self) -> _Prepended:
        return self

    async def __anext__(self) -> bytes:
        first, self._first = self._first, None
        if first:
            return first
        failed, self._failed = self._failed, None
        if failed is not None:
            raise failed
        return await self._chunks.__anext__()

    async def aclose(self) -> None:
        await self._chunks.aclose()


class _BodyChunks:
    """A response's body pieces, checked against the length announced and decoded when
    asked; the response is released (connection kept) after its last piece, closed on an
    error or when dropped unread (:meth:`aclose`). A class rather than an async generator:
    per small body, a generator's setup and finalizer bookkeeping cost more than this."""

    __slots__ = ("_resp", "_url", "_size", "_expected", "_skip", "_offset", "_decoder", "_pending",
                 "_received", "_over", "_done", "_body", "_first")

    def __init__(self, resp: _Response, url: object, chunk_size: int, expected: int | None, skip: int,
                 offset: int, decoder: _Decoder | None) -> None:
        self._resp = resp
        self._url = url
        self._size = chunk_size
        self._expected = expected
        self._skip = skip
        self._offset = offset
        self._decoder = decoder
        self._pending: Iterator[bytes] | None = None  # decoded pieces of the last chunk
        self._received = 0
        self._over = False
        self._done = False  # every piece arrived and passed the checks
        self._body: Body | None = None  # the body counting what is read (bind_body)
        self._first = True  # no piece asked for yet

    def __aiter__(self) -> _BodyChunks:
        return self

    async def __anext__(self) -> bytes:
        if self._over:
            raise StopAsyncIteration
        try:
            if self._first:
                self._first = False
                buffered = self._resp.buffered_body
                if buffered is not None and not self._skip:
                    pieces = buffered()
                    if pieces is not None:  # all of it arrived already (a small body)
                        return await self._first_whole(pieces)
            # (_next's loop, inline: one coroutine less per piece)
            decoder = self._decoder
            while True:
                if self._pending is not None:
                    piece = next(self._pending, None)
                    if piece is not None:
                        if self._body is not None:
                            self._body.bytes_read += len(piece)
                        return piece
                    self._pending = None
                data = await self._resp.read_chunk(self._size)
                expected = self._expected
                if not data:
                    if expected is not None and self._received < expected:
                        raise TruncatedTransfer(
                            f"connection closed after {self._received} of {expected} bytes", url=self._url)
                    if decoder is not None:
                        decoder.finish(self._received)
                    if self._skip:
                        raise TruncatedTransfer(f"resource shorter than offset {self._offset}", url=self._url)
                    raise StopAsyncIteration
                self._received += len(data)
                if expected is not None and self._received > expected:
                    raise OverlongTransfer(f"server sent more than the {expected} bytes it announced "
                                           f"({_announced(self._resp)})", url=self._url)
                if decoder is not None:
                    self._pending = decoder.feed(data)
                    continue
                if self._skip:
                    if len(data) <= self._skip:
                        self._skip -= len(data)
                        continue
                    data = data[self._skip:]
                    self._skip = 0
                if self._body is not None:
                    self._body.bytes_read += len(data)
                return data
        except StopAsyncIteration:
            if not self._done:  # (else released already: an empty body taken whole)
                await self._ended(0)
            raise
        except BaseException as exc:
            err = await self._failed(exc)
            if err is exc:
                raise
            raise err from exc

    async def _ended(self, last: int) -> None:
        """The whole body arrived (*last* bytes of it handed out just now): the body told, and
        the response released (the connection may be reused)."""
        self._over = self._done = True
        body = self._body
        if body is not None:
            body.bytes_read += last
            body.mark_complete()  # (a capture ends here: the body passed its checks)
            self._body = None  # (no body <-> chunks cycle left for the cyclic GC)
        if not self._resp.release_now():  # (the kept connection's case without a coroutine)
            await self._resp.release()

    async def _failed(self, exc: BaseException) -> BaseException:
        """The response closed after *exc* broke a read; what to raise (a dependency's error as
        the anyurl error naming the URL)."""
        self._over = True
        self._body = None
        await self._resp.close()
        if isinstance(exc, Exception) and not isinstance(exc, AnyURLError):
            return _translate(exc, self._url, "reading the body")
        return exc

    def _check_whole(self, received: int) -> None:
        """A body that arrived whole (*received* bytes) against the length announced."""
        expected = self._expected
        if expected is not None and received != expected:
            if received > expected:
                raise OverlongTransfer(f"server sent more than the {expected} bytes it announced "
                                       f"({_announced(self._resp)})", url=self._url)
            raise TruncatedTransfer(f"connection closed after {received} of {expected} bytes", url=self._url)

    async def _first_whole(self, pieces: list[bytes]) -> bytes:
        """:meth:`__anext__`'s answer when the whole body is in *pieces* (nothing read yet): one
        piece for all of it, checked once, and the response released at once, so the next
        call ends the iteration with no read through the response. Decoded output still comes
        in pieces of at most the chunk size (a second one left for the next calls)."""
        received = self._received = sum(map(len, pieces))
        self._check_whole(received)
        data = pieces[0] if len(pieces) == 1 else b"".join(pieces)
        decoder = self._decoder
        if decoder is not None:
            it = decoder.feed(data) if data else iter(())
            first = next(it, None)
            if first is not None:
                second = next(it, None)
                if second is not None:  # more than one piece: the rest from the loop
                    self._pending = itertools.chain((second,), it)
                    if self._body is not None:
                        self._body.bytes_read += len(first)
                    return first
            decoder.finish(received)
            data = b"" if first is None else first
        await self._ended(len(data))  # the end of the body: released now
        if not data:
            raise StopAsyncIteration
        return data

    def bind_body(self, body: Body) -> _BodyChunks:
        """Iterate for *body* (``Body.__aiter__``/``read``): its ``bytes_read`` and ``complete``
        are kept here, so no wrapper goes around each piece (errors are anyurl's already)."""
        self._body = body
        return self

    async def read_all(self, max_size: int | None) -> bytes:
        """The rest of the body at once (``Body.read``'s fast path: no chunk iteration
        around each piece), at most *max_size* bytes (TransferError past it)."""
        buffered = self._resp.buffered_body
        if buffered is not None and self._first and not self._over and not self._skip:
            self._first = False
            pieces = buffered()
            if pieces is not None:  # all of it arrived already (a small body): no loop
                return await self._whole(pieces, max_size)
        gathered = io.BytesIO()  # grown in place, handed over without a copy: the body held once
        total = 0
        step = self.__anext__
        while True:
            try:
                piece = await step()
            except StopAsyncIteration:
                return gathered.getvalue()
            total += len(piece)
            if max_size is not None and total > max_size:
                raise TransferError(f"resource larger than max_size={max_size} bytes", url=self._url)
            gathered.write(piece)

    async def _whole(self, pieces: list[bytes], max_size: int | None) -> bytes:
        """:meth:`read_all` of a body whose every piece is in *pieces*: the checks of
        :meth:`__anext__` made once for the lot."""
        try:
            received = sum(map(len, pieces))
            self._check_whole(received)
            self._received = received
            data = pieces[0] if len(pieces) == 1 else b"".join(pieces)
            decoder = self._decoder
            if decoder is not None:
                out: list[bytes] = []
                total = 0
                for piece in decoder.feed(data) if data else ():
                    total += len(piece)
                    if max_size is not None and total > max_size:  # checked as it expands
                        raise TransferError(f"resource larger than max_size={max_size} bytes", url=self._url)
                    out.append(piece)
                decoder.finish(received)
                data = out[0] if len(out) == 1 else b"".join(out)
            elif max_size is not None and len(data) > max_size:
                raise TransferError(f"resource larger than max_size={max_size} bytes", url=self._url)
        except BaseException as exc:
            err = await self._failed(exc)
            if err is exc:
                raise
            raise err from exc
        await self._ended(len(data))
        return data

    async def aclose(self) -> None:
        """Stop reading: the response is closed unless it ended already."""
        self._body = None
        if not self._over:
            self._over = True
            await self._resp.close()

    async def finish(self) -> None:
        """The body's ``on_close``: the response released when whole, else closed."""
        if self._done:
            await self._resp.release()
        else:
            await self._resp.close()  # unread data: the connection cannot be reused


class _Elsewhere:
    """A redirect another handler serves: its URL and the hops before it."""

    __slots__ = ("url", "history", "previous")

    def __init__(self, url: URL, history: list[str], previous: list[Capture] | None = None) -> None:
        self.url = url
        self.history = history
        self.previous = previous  # the redirects' captures (a capture's)


class _Reply:
    """The final response of an exchange, the URL it came from and the redirects before it.
    (Plain classes, not dataclasses: one per request, and ~1 ms less at import.)"""

    __slots__ = ("resp", "target", "history", "proxy", "sent", "started", "previous")

    def __init__(self, resp: _Response, target: _Target, history: list[str], proxy: str | None) -> None:
        self.resp = resp
        self.target = target
        self.history = history
        self.proxy = proxy
        # a capture's: the request's header fields, when it was sent, the redirects before it
        self.sent: Mapping[str, str] | None = None
        self.started: datetime | None = None
        self.previous: list[Capture] | None = None


def _allow_ftp_through_proxy(session: aiohttp.ClientSession) -> None:
    """Let the session send ftp:// URLs (only ever to an HTTP proxy, which fetches them)."""
    connector = session.connector
    if connector is not None and "ftp" not in connector.allowed_protocol_schema_set:
        connector.allowed_protocol_schema_set = connector.allowed_protocol_schema_set | {"ftp"}


def _header(headers: Mapping[str, str], name: str) -> str:
    for k, v in headers.items():
        if k.lower() == name.lower():
            return v
    return ""


def _masked(proxy: str | None) -> str:
    """A proxy URL without its credentials."""
    from yarl import URL as YURL

    return str(YURL(proxy or "").with_user(None))


def _wire_headers(headers: Mapping[str, str]) -> list[tuple[str, str]]:
    """Request headers for the lean path, with aiohttp's default Accept (the same requests either way)."""
    out = list(headers.items())
    if not any(k.lower() == "accept" for k in headers):
        out.append(("Accept", "*/*"))
    return out


def _announced(resp: _Response) -> str:
    parts = [f"{h}: {resp.headers[h]}" for h in ("Content-Length", "Content-Range") if h in resp.headers]
    return ", ".join(parts) or "no length"


def _http_date(value: str | None) -> datetime | None:
    if not value:
        return None
    import email.utils  # here: 6-8 ms at import with datetime, which a GET never needs (stat does)
    from datetime import UTC

    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC)


def _retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date), or None."""
    value = (headers or {}).get("Retry-After", "").strip()
    if not value:
        return None
    if value.isdigit():
        return float(int(value))
    when = _http_date(value)
    if when is None:
        return None
    from datetime import UTC, datetime

    return max(0.0, (when - datetime.now(UTC)).total_seconds())


@functools.lru_cache(maxsize=64)
def _codings(accept_encoding: str) -> frozenset[str]:
    """The codings an Accept-Encoding value names (the same few values every request)."""
    return frozenset(t.split(";")[0].strip().lower() for t in accept_encoding.split(","))


def _stored_encoding(coding: str, content_type: str, path: str) -> bool:
    """True when Content-Encoding describes the stored file, not a compression for the transfer.

    Apache's ``AddEncoding gzip .gz`` labels ``x.tar.gz`` "Content-Encoding: gzip"; curl and
    browsers save such files as they are. A name ending in the coding's suffix, or a type
    that is itself compressed, says the server stores those bytes.
    """
    if path.rsplit("/", 1)[-1].lower().endswith(_CODING_SUFFIXES.get(coding, ())):
        return True
    return content_type.lower() in _COMPRESSED_TYPES


class _Decoder:
    """gzip/deflate decoding whose every output piece is at most *out_max* bytes
    (a small compressed body can expand a thousandfold)."""

    def __init__(self, coding: str, url: object, out_max: int) -> None:
        self.coding = "deflate" if coding == "deflate" else "gzip"
        self.url = url
        self.out_max = out_max
        self._z: Any = zlib.decompressobj(31) if self.coding == "gzip" else None
        self._head = b""

    def feed(self, data: bytes) -> Iterator[bytes]:
        """The decoded pieces of *data* (each at most ``out_max`` bytes)."""
        z = self._z
        if z is not None and data and not z.eof:
            # the common case, without a generator: all of *data* decoded in one call
            try:
                out = z.decompress(data, self.out_max)
            except zlib.error as exc:
                raise ProtocolError(f"bad {self.coding} data from the server: {exc}", url=self.url) from exc
            if len(out) < self.out_max and not z.unconsumed_tail and not z.unused_data:
                return iter((out,) if out else ())
            return self._pieces(b"", out)
        return self._pieces(data, None)

    def _pieces(self, data: bytes, out: bytes | None) -> Iterator[bytes]:
        """:meth:`feed`'s pieces; *out*: what feed's own first decompress of the data gave."""
        if self._z is None:
            # RFC 9110 deflate is zlib-wrapped; some servers send raw deflate: tell by the header
            self._head += data
            if len(self._head) < 2:
                return
            data, self._head = self._head, b""
            wrapped = data[0] & 0x0F == 8 and ((data[0] << 8) | data[1]) % 31 == 0
            self._z = zlib.decompressobj(15 if wrapped else -15)
        try:
            while data or out is not None:
                z = self._z
                if out is None:
                    if z.eof:
                        data = self._after_end(data)
                        continue
                    out = z.decompress(data, self.out_max)
                if out:
                    yield out
                data = z.unconsumed_tail
                while len(out) == self.out_max and not data and not z.eof:
                    out = z.decompress(b"", self.out_max)  # output still held inside zlib
                    if out:
                        yield out
                    data = z.unconsumed_tail
                if z.eof and z.unused_data:
                    data = z.unused_data + data
                out = None
        except zlib.error as exc:
            raise ProtocolError(f"bad {self.coding} data from the server: {exc}", url=self.url) from exc

    def _after_end(self, data: bytes) -> bytes:
        """Bytes after the end of a compressed stream: another gzip member, or padding."""
        if self.coding == "gzip" and data[:2] == b"\x1f\x8b":
            self._z = zlib.decompressobj(31)
            return data
        if data.strip(b"\0"):
            raise ProtocolError(f"data after the end of the {self.coding} stream", url=self.url)
        return b""

    def finish(self, received: int) -> None:
        """Raise unless the stream was complete (an empty body is allowed)."""
        if received and (self._z is None or not self._z.eof):
            raise TruncatedTransfer(f"the {self.coding} stream ended before its end", url=self.url)

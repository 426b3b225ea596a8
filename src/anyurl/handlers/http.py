"""The http: and https: schemes, through aiohttp.

One ``aiohttp.ClientSession`` per handler (so per Client), created on first
use and closed by ``aclose``; its connector pools connections with
``limit_per_host = client.limits.per_host``.

Redirects are followed here, not by aiohttp, so the policy can be enforced
on every hop: at most ``limits.max_redirects``, never into another scheme
(unless ``Policy.allow_cross_scheme_redirects``) and never from https to
http (unless ``Policy.allow_https_downgrade``). Credentials are only sent
to the origin they were given for.

The request line carries the URL's path and search exactly as written
(they stay percent-encoded in :class:`~anyurl.urls.HTTPURL`); decoded
CR, LF or NUL anywhere in host, user, password, path or search is refused
before connecting.
"""

from __future__ import annotations

import asyncio
import base64
import re
import ssl
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote_to_bytes

import aiohttp
from multidict import CIMultiDictProxy
from yarl import URL as YURL

from ..errors import (
    AccessDenied,
    AnyURLError,
    ConfigurationError,
    ConnectError,
    FetchTimeout,
    ProtocolError,
    ResourceNotFound,
    TemporaryFailure,
    TruncatedTransfer,
    UnsafeURL,
)
from ..response import Body
from ..urls import HTTPURL
from .base import Handler, Request, apply_length, prime_allocator, refuse_controls

if TYPE_CHECKING:
    from ..client import Client

__all__ = ["HTTPHandler", "HTTPOptions"]

_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_CONTENT_RANGE = re.compile(r"bytes\s+(\d+)-(\d+)/(\d+|\*)", re.I)
_UNSATISFIED_RANGE = re.compile(r"bytes\s+\*/(\d+)", re.I)
# bytes that may appear literally in a request target; anything else
# (space, controls, non-ASCII, "<>\"^`{|}") is percent-encoded before sending
_WIRE_SAFE = frozenset(
    b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=:@/?%[]"
)


@dataclass(frozen=True)
class HTTPOptions:
    """Options for http/https URLs: ``Client(http=HTTPOptions(...))``.

    ``decompress``: undo gzip/deflate Content-Encoding (default on).
    ``headers``: extra request headers sent with every request.
    ``verify``: check TLS certificates (default on).
    ``ssl_context``: the TLS context to use (for a private CA); overrides ``verify``.
    ``read_bufsize``: aiohttp's per-connection read buffer (bytes); None uses
    ``min(client.limits.chunk_size, 1 MiB)``.
    """

    decompress: bool = True
    headers: Mapping[str, str] = field(default_factory=dict)
    verify: bool = True
    ssl_context: ssl.SSLContext | None = None
    read_bufsize: int | None = None


def _decoded(value: str | None) -> str | None:
    return None if value is None else unquote_to_bytes(value).decode("latin-1")


def _wire(text: str) -> str:
    """*text* with every byte that may not appear literally in a request target escaped.

    Existing %XX escapes are kept as written, so the server sees the URL's own encoding.
    """
    raw = text.encode("utf-8", "surrogateescape")
    if all(b in _WIRE_SAFE for b in raw):
        return text
    return "".join(chr(b) if b in _WIRE_SAFE else f"%{b:02X}" for b in raw)


def _status_error(status: int, reason: str, url: object) -> AnyURLError:
    """The anyurl error for an HTTP error status."""
    reply = f"{status} {reason}".strip()
    if status in (404, 410):
        return ResourceNotFound("not found", url=url, reply=reply)
    if status in (401, 403):
        return AccessDenied("access denied", url=url, reply=reply)
    if status in (503, 429):
        return TemporaryFailure("server temporarily unavailable", url=url, reply=reply)
    if status >= 500:
        return ProtocolError("server error", url=url, reply=reply)
    return ProtocolError("request refused", url=url, reply=reply)


def _headers_dict(headers: CIMultiDictProxy[str]) -> dict[str, str]:
    """Response headers as a plain dict; repeated fields joined with ", " (RFC 9110 5.3)."""
    out: dict[str, str] = {}
    for k, v in headers.items():
        out[k] = f"{out[k]}, {v}" if k in out else v
    return out


def _translate(exc: BaseException, url: object, stage: str) -> AnyURLError:
    """An aiohttp/asyncio/OS exception as an anyurl error."""
    if isinstance(exc, AnyURLError):
        return exc
    if isinstance(exc, (TimeoutError, asyncio.TimeoutError)):
        return FetchTimeout(f"timed out while {stage}", url=url)
    if isinstance(exc, aiohttp.ClientPayloadError):
        return TruncatedTransfer(f"transfer broken while {stage}: {exc}", url=url)
    if isinstance(exc, aiohttp.InvalidURL):
        return UnsafeURL(f"aiohttp refused the URL: {exc}", url=url)
    if isinstance(exc, (aiohttp.ClientConnectionError, OSError)):
        return ConnectError(f"connection failed while {stage}: {exc}", url=url)
    return ProtocolError(f"HTTP error while {stage}: {type(exc).__name__}: {exc}", url=url)


def _basic(user: str, password: str) -> str:
    """An ``Authorization: Basic`` value (RFC 7617, UTF-8)."""
    return "Basic " + base64.b64encode(f"{user}:{password}".encode("utf-8", "surrogateescape")).decode()


def _widen_reads(resp: aiohttp.ClientResponse, chunk_size: int) -> None:
    """Let the socket transport read up to a chunk per recv() for this body.

    asyncio's selector transport reads at most 256 KiB per recv(), each into a
    fresh bytes object; for a large body, reading ~1 MiB at a time cut the
    client's CPU time per byte by about a fifth in bench/bench_http.py (with
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


def _origin(u: YURL) -> tuple[str | None, str | None, int | None]:
    return (u.scheme, u.host, u.port)


class HTTPHandler(Handler):
    """Retrieves http and https URLs with aiohttp, following redirects under the policy."""

    options_name = "http"

    def __init__(self, client: Client) -> None:
        super().__init__(client)
        self.http_options = client.options_for("http", HTTPOptions)
        self._session: aiohttp.ClientSession | None = None

    def _get_session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            c = self.client
            prime_allocator(c.limits.chunk_size)
            bufsize = self.http_options.read_bufsize or max(1 << 16, min(c.limits.chunk_size, 1 << 20))
            connector = aiohttp.TCPConnector(  # the same Limits as every other scheme's pool
                limit=0, limit_per_host=c.limits.per_host, keepalive_timeout=c.limits.max_idle,
                ssl=self.http_options.ssl_context or self.http_options.verify,
            )
            self._session = aiohttp.ClientSession(
                connector=connector,
                timeout=aiohttp.ClientTimeout(total=None, connect=c.timeouts.connect,
                                              sock_connect=c.timeouts.connect,
                                              sock_read=c.timeouts.read),
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
        if session is not None:
            await session.close()

    # -- request building ---------------------------------------------------

    def _target(self, url: HTTPURL) -> YURL:
        """The yarl URL sent on the wire; refuses decoded CR/LF/NUL first."""
        for what, value in (("host", url.host), ("user", url.user), ("password", url.password),
                            ("path", _decoded(url.path)), ("search", _decoded(url.search))):
            refuse_controls(url, what, value)
        if not url.host:
            raise UnsafeURL("http URL without a host", url=url)
        # HTTPURL.path has no leading "/" and is still encoded: send it as written
        path = "/" + _wire(url.path)
        search = "" if url.search is None else "?" + _wire(url.search)
        try:
            return YURL(f"{url.scheme}://{url.hostport}{path}{search}", encoded=True)
        except (ValueError, TypeError) as exc:
            raise UnsafeURL(f"not a usable http URL: {exc}", url=url) from exc

    def _headers(self, url: HTTPURL, offset: int, extra: Mapping[str, str] | None) -> dict[str, str]:
        headers = {"User-Agent": self.client.user_agent, **self.http_options.headers}
        if offset:
            headers["Range"] = f"bytes={offset}-"
            # byte offsets count the stored representation: ask for it uncompressed
            headers["Accept-Encoding"] = "identity"
        if extra:
            headers.update(extra)
        for k, v in headers.items():
            refuse_controls(url, f"header {k}", k + v)
        return headers

    # -- the request loop -----------------------------------------------------

    async def open(self, req: Request) -> Body:
        """GET the URL (from byte ``req.offset`` with a Range request), following redirects.

        Per request, ``options=HTTPOptions(headers=...)`` adds headers to the Client's.
        """
        url, offset = req.url, req.offset
        headers = req.options.headers if isinstance(req.options, HTTPOptions) else None
        self.options(req, HTTPOptions)  # a wrong options type is refused here
        if not isinstance(url, HTTPURL):
            raise ConfigurationError(f"HTTPHandler cannot open a {type(url).__name__}", url=url)
        target = self._target(url)
        first_origin = _origin(target)
        auth: str | None = None
        if url.user is not None:
            auth = _basic(url.user, url.password or "")
        req_headers = self._headers(url, offset, headers)
        session = self._get_session()
        history: list[str] = []
        tried_credentials = auth is not None
        hops = 0
        while True:
            headers_now = req_headers
            if auth is not None and _origin(target) == first_origin:
                headers_now = {**req_headers, "Authorization": auth}
            try:
                resp = await session.get(target, headers=headers_now, allow_redirects=False)
            except Exception as exc:
                raise _translate(exc, url, f"requesting {target.human_repr()}") from exc
            if resp.status in _REDIRECTS and "Location" in resp.headers:
                location = resp.headers["Location"]
                resp.release()
                hops += 1
                if hops > self.client.limits.max_redirects:
                    raise ProtocolError(
                        f"too many redirects (more than {self.client.limits.max_redirects})",
                        url=url, reply=f"{resp.status} {resp.reason}")
                new = await self._redirect(req, url, target, location)
                if isinstance(new, Body):
                    new.meta.setdefault("redirects", history + [str(target)])
                    return new
                history.append(str(target))
                target = new
                continue
            if (resp.status == 401 and not tried_credentials
                    and "basic" in resp.headers.get("WWW-Authenticate", "").lower()):
                tried_credentials = True
                cred = self.client.credentials_for(target.host or "", target.port)
                if cred is not None:
                    resp.release()
                    auth = _basic(cred[0], cred[1])
                    first_origin = _origin(target)
                    continue
            return apply_length(self._body(url, target, resp, offset, history), req.length)

    async def _redirect(self, req: Request, url: HTTPURL, current: YURL, location: str) -> YURL | Body:
        """Check a Location against the policy: the next yarl URL, or a Body from another handler."""
        refuse_controls(url, "redirect Location", location)
        try:
            new = current.join(YURL(_wire(location), encoded=True))
        except (ValueError, TypeError) as exc:
            raise ProtocolError(f"unusable redirect Location {location!r}: {exc}", url=url) from exc
        policy = self.client.policy
        scheme = (new.scheme or "").lower()
        if scheme not in ("http", "https"):
            if not policy.allow_cross_scheme_redirects:
                raise UnsafeURL(
                    f"redirect from {current.scheme} to {scheme or 'an unknown'} scheme refused "
                    f"(Location: {location}); Policy.allow_cross_scheme_redirects permits it", url=url)
            # allowed: hand the new URL to its own handler (no offset: a different resource)
            target = self.client.parse(str(new))
            return await self.client.handler(target).open(req.replace(url=target, offset=0, options=None))
        if current.scheme == "https" and scheme == "http" and not policy.allow_https_downgrade:
            raise UnsafeURL(f"redirect from https to http refused (Location: {location}); "
                            "Policy.allow_https_downgrade permits it", url=url)
        return new

    def _body(self, url: HTTPURL, target: YURL, resp: aiohttp.ClientResponse, offset: int,
              history: list[str]) -> Body:
        """Check the final response and wrap its payload as a streaming Body."""
        status = resp.status
        headers = _headers_dict(resp.headers)
        meta: dict[str, Any] = {"status": status, "reason": resp.reason, "headers": headers,
                                "url": str(resp.url), "redirects": history}
        if status == 416 and offset:
            m = _UNSATISFIED_RANGE.match(resp.headers.get("Content-Range", ""))
            resp.release()
            if m and int(m.group(1)) == offset:  # resuming a complete file: nothing left
                return Body.from_bytes(url, b"", meta=meta, offset=offset, size=0)
            raise ProtocolError(f"server cannot serve from offset {offset}", url=url,
                                reply=f"{status} {resp.reason}")
        if status >= 300:
            resp.release()
            raise _status_error(status, resp.reason or "", url)
        encoded = "Content-Encoding" in resp.headers and self.http_options.decompress \
            and resp.headers["Content-Encoding"].lower() not in ("identity", "")
        length = resp.content_length
        skip = 0
        if offset and status == 206:
            m = _CONTENT_RANGE.match(resp.headers.get("Content-Range", ""))
            if not m or int(m.group(1)) != offset:
                resp.close()
                raise ProtocolError(f"asked for bytes from {offset}, server sent "
                                    f"Content-Range {resp.headers.get('Content-Range')!r}", url=url)
        elif offset:
            # the server ignored Range: skip the first bytes ourselves
            skip = offset
            meta["range_ignored"] = True
        size = None if encoded or length is None else max(length - skip, 0)
        expected = None if encoded else length
        chunk_size = self.client.limits.chunk_size
        _widen_reads(resp, chunk_size)
        state = {"done": False}

        async def chunks() -> AsyncIterator[bytes]:
            received = 0
            to_skip = skip
            stream = resp.content
            try:
                while True:
                    data = await stream.read(chunk_size)
                    if not data:
                        break
                    received += len(data)
                    if to_skip:
                        if len(data) <= to_skip:
                            to_skip -= len(data)
                            continue
                        data = data[to_skip:]
                        to_skip = 0
                    yield data
                if expected is not None and received < expected:
                    raise TruncatedTransfer(
                        f"connection closed after {received} of {expected} bytes", url=url)
                if to_skip:
                    raise TruncatedTransfer(f"resource shorter than offset {offset}", url=url)
                state["done"] = True
            except AnyURLError:
                raise
            except Exception as exc:
                raise _translate(exc, url, "reading the body") from exc
            finally:
                if state["done"]:
                    resp.release()
                else:
                    resp.close()

        async def on_close() -> None:
            if state["done"]:
                resp.release()
            else:
                resp.close()  # unread data: the connection cannot be reused

        return Body(url, chunks(), content_type=resp.content_type or "application/octet-stream",
                    size=size, meta=meta, offset=offset, on_close=on_close, charset=resp.charset)

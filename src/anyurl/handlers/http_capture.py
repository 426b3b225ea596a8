"""What an HTTP exchange put on the wire, for ``capture=True`` (see :class:`anyurl.response.Capture`).

Only requests that ask for a capture come here: the HTTP driver's own paths stay as they are.
The lean HTTP/1.1 client reads a capture's response with a reader that keeps the head's fields
as received (order, case, repeats) and the request head it sent; aiohttp (through a proxy)
keeps them too (``raw_headers``); HTTP/2 keeps its head's fields as the frames carried them, and so does HTTP/3.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..response import Capture

__all__ = ["KeptResponse", "capture_hop", "capture_reply"]

#: the most of a redirect's body kept (a 3xx body is a short note; past this it is truncated)
HOP_BODY_MAX = 1 << 20

# fields HTTP/2 does not carry (RFC 9113 8.2.2); the driver leaves them out of its requests
_HOP_BY_HOP = frozenset({"connection", "host", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"})


_SECRET = frozenset({"authorization", "proxy-authorization"})


def _text(value: bytes | str) -> str:
    return value.decode("latin-1") if isinstance(value, bytes) else value


def capture_reply(resp: Any, url: str, method: str, target: str, hostport: str, scheme: str,
                  sent: Any, started: Any, proxy: str | None = None) -> Capture:
    """The capture of the final response *resp* (the driver's response object, any path) to
    *method* *target*; *sent*: the header fields the driver handed its client; *proxy*: the
    proxy it went through (the peer, when aiohttp already gave the connection back)."""
    status = resp.status
    reason = resp.reason or ""
    cap = Capture("HTTP/1.1", url, status=status, method=method, target=target, started=started)
    aio = getattr(resp, "resp", None)
    stream = getattr(resp, "stream", None)
    transport: Any = None
    if aio is not None:  # aiohttp: the head as received, the request as it sent it
        v = aio.version
        cap.protocol = f"HTTP/{v.major}.{v.minor}" if v is not None else "HTTP/1.1"
        cap.headers = [(_text(k), _text(v)) for k, v in aio.raw_headers]
        cap.request_headers = [(str(k), str(v)) for k, v in aio.request_info.headers.items()]
        conn = aio.connection
        transport = conn.transport if conn is not None else None
    elif stream is not None:  # HTTP/2 and HTTP/3: the fields as the HEADERS frames carried them
        cap.protocol = resp.http_version
        cap.headers = [(_text(k), _text(v)) for k, v in stream.fields or () if not k.startswith(b":")]
        cap.request_headers = [(":method", method), (":scheme", scheme), (":authority", hostport),
                               (":path", target)]
        cap.request_headers += [(str(k).lower(), str(v)) for k, v in _pairs(sent)
                                if str(k).lower() not in _HOP_BY_HOP]
        transport = stream.conn.transport
    else:  # the lean HTTP/1.1 client: its reader kept the head as received, and the head sent
        reader = resp.reader
        cap.protocol = f"HTTP/{reader.version or '1.1'}"
        raw = getattr(reader, "raw_fields", None)
        if raw is not None:
            cap.headers = [(_text(k), _text(v)) for k, v in raw]
            cap.method, cap.target, cap.request_headers = _request_of(reader.request_head)
        else:  # (a reader made without a capture: repeated fields come joined)
            cap.headers = list(resp.headers.items())
            cap.request_headers = [("Host", hostport), *_pairs(sent)]
        transport = resp.conn.transport
    # credentials are never archived (as passwords in a command exchange)
    cap.request_headers = [(k, "****" if k.lower() in _SECRET else v) for k, v in cap.request_headers]
    cap.status_line = f"{cap.protocol} {status}" + (f" {reason}" if reason and cap.protocol not in ("HTTP/2", "HTTP/3") else "")
    cap.peer_of(transport)
    if cap.peer is None and proxy is not None:  # a body that came whole with its head: released
        from urllib.parse import urlsplit

        p = urlsplit(proxy)
        if p.hostname:
            cap.peer = (p.hostname, p.port or 80)
    cap.kept_by_driver = True
    return cap


async def capture_hop(resp: Any, method: str, target: Any, sent: Any, started: Any,
                      proxy: str | None) -> Capture:
    """The capture of a redirect *resp* to *method* on *target*: its head and its body as
    received (read here, at most :data:`HOP_BODY_MAX` bytes), so an archive replays the hop."""
    cap = capture_reply(resp, target.text, method, target.request_target, target.hostport, target.scheme,
                        sent, started, proxy)
    kept = cap.keeping()
    while piece := await resp.read_chunk(65536):
        if kept.size + len(piece) > HOP_BODY_MAX:
            cap.truncated = "length"
            cap.finish(complete=False)
            return cap
        kept.append(piece)
    cap.finish()
    return cap


def _request_of(head: bytes) -> tuple[str | None, str | None, list[tuple[str, str]]]:
    """Method, target and header fields of an HTTP/1.1 request head as sent."""
    lines = head.decode("latin-1").split("\r\n")
    method, _, rest = lines[0].partition(" ")
    target = rest.rpartition(" ")[0] or rest
    fields = []
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(":")
            fields.append((name, value.strip()))
    return (method or None), (target or None), fields


def _pairs(sent: Any) -> list[tuple[str, str]]:
    if sent is None:
        return []
    items = sent.items() if hasattr(sent, "items") else sent
    return [(str(k), str(v)) for k, v in items]


class KeptResponse:
    """A driver response whose body pieces are also kept, as they arrive (before any
    decoding), in a capture; everything else is the response's own. The capture ends when
    the body passed its checks (``Body.mark_complete``), never at a short end."""

    def __init__(self, resp: Any, cap: Capture) -> None:
        self._resp = resp
        self._parts = cap.keeping()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._resp, name)

    @property
    def buffered_body(self) -> Callable[[], list[bytes] | None] | None:
        inner = self._resp.buffered_body
        if inner is None:
            return None

        def taken() -> list[bytes] | None:
            pieces: list[bytes] | None = inner()
            if pieces is not None:
                self._parts.extend(pieces)
            return pieces

        return taken

    async def read_chunk(self, size: int = 0) -> bytes:
        data: bytes = await self._resp.read_chunk(size)
        if data:
            self._parts.append(data)
        return data

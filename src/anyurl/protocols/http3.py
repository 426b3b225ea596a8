"""HTTP/3's pure parts (no I/O, no asyncio): ``Alt-Svc`` (RFC 7838) and what anyurl remembers
of it per origin, and the checks of an HTTP/3 response head (RFC 9114 4.2, 4.3: HTTP/2's, from
:mod:`anyurl.protocols.http2`).

The QUIC and HTTP/3 framing themselves are qh3's (``anyurl[http3]``); the asyncio driver is
:mod:`anyurl.handlers.http3`.
"""

from __future__ import annotations

from .http2 import malformed_head  # (HTTP/3 heads obey HTTP/2's rules: RFC 9114 4.2)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeVar

    _V = TypeVar("_V")

__all__ = ["AltSvc", "AltSvcCache", "h3_port", "malformed_head", "parse_alt_svc"]

#: the ALPN id of HTTP/3 (RFC 9114 3.1); drafts' ids (h3-29...) are not spoken
H3_ALPN = "h3"
#: an Alt-Svc entry's lifetime when it gives no ``ma`` (RFC 7838 3.1: 24 hours)
DEFAULT_MAX_AGE = 86400
#: the most origins an :class:`AltSvcCache` holds (a crawl meets many hosts)
MAX_ORIGINS = 512
#: how long an origin whose HTTP/3 failed is sent over TCP before QUIC is tried again
BROKEN_FOR = 300.0
_TCHAR = frozenset(b"!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


class AltSvc:
    """One alternative of an ``Alt-Svc`` value: protocol id, host ("" for the origin's own),
    port and max-age in seconds."""

    __slots__ = ("protocol", "host", "port", "max_age")

    def __init__(self, protocol: str, host: str, port: int, max_age: float) -> None:
        self.protocol = protocol
        self.host = host
        self.port = port
        self.max_age = max_age

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AltSvc) and (self.protocol, self.host, self.port, self.max_age) == (
            other.protocol, other.host, other.port, other.max_age)

    def __hash__(self) -> int:
        return hash((self.protocol, self.host, self.port, self.max_age))

    def __repr__(self) -> str:
        return f"AltSvc({self.protocol!r}, {self.host!r}, {self.port}, {self.max_age})"


def _split_outside_quotes(text: str, sep: str) -> list[str]:
    parts: list[str] = []
    quoted = False
    start = 0
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and quoted:
            i += 2
            continue
        if c == '"':
            quoted = not quoted
        elif c == sep and not quoted:
            parts.append(text[start:i])
            start = i + 1
        i += 1
    parts.append(text[start:])
    return parts


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        out = []
        i = 1
        while i < len(value) - 1:
            if value[i] == "\\" and i + 1 < len(value) - 1:
                i += 1
            out.append(value[i])
            i += 1
        return "".join(out)
    return value


def parse_alt_svc(value: str) -> list[AltSvc] | None:
    """The alternatives of an ``Alt-Svc`` field value, in order; None for ``clear`` (forget the
    origin's alternatives). Entries that do not parse are skipped (RFC 7838 3: a client ignores
    what it does not understand), as are ports outside 1-65535."""
    if value.strip() == "clear":
        return None
    out: list[AltSvc] = []
    for entry in _split_outside_quotes(value[:4096], ","):
        params = _split_outside_quotes(entry, ";")
        first, eq, authority = params[0].strip().partition("=")
        if not eq or not first or not all(b in _TCHAR or b == 0x25 for b in first.encode("ascii", "replace")):
            continue
        protocol = _percent_decoded(first)
        authority = _unquote(authority)
        host, colon, port_text = authority.rpartition(":")
        if not colon or not port_text.isdigit() or not 0 < int(port_text) < 65536:
            continue
        max_age: float = DEFAULT_MAX_AGE
        for p in params[1:]:
            name, eq, v = p.strip().partition("=")
            if name.strip().lower() == "ma":
                v = _unquote(v)
                if v.isdigit():
                    max_age = float(v)
        out.append(AltSvc(protocol, host.strip("[]").lower(), int(port_text), max_age))
    return out


def _percent_decoded(token: str) -> str:
    if "%" not in token:
        return token
    from urllib.parse import unquote

    return unquote(token)


def h3_port(value: str, host: str) -> tuple[int, float] | None:
    """The first ``h3`` alternative of *value* on the origin's own host (*host*, or none named):
    (UDP port, max-age); None when it offers none. An alternative on another host is left
    alone: anyurl would have to trust that host for the origin's name."""
    entries = parse_alt_svc(value)
    for alt in entries or ():
        if alt.protocol == H3_ALPN and alt.host in ("", host.lower()) and alt.max_age > 0:
            return alt.port, alt.max_age
    return None


class AltSvcCache:
    """What anyurl remembers of origins' HTTP/3: per origin ``(host, port)``, the UDP port an
    ``Alt-Svc: h3`` named and until when (its max-age), and the origins whose HTTP/3 failed
    lately (sent over TCP for :data:`BROKEN_FOR` seconds). Times are the caller's clock
    (``now``); at most :data:`MAX_ORIGINS` origins each (the oldest entry goes first)."""

    __slots__ = ("_alt", "_broken", "max_origins")

    def __init__(self, max_origins: int = MAX_ORIGINS) -> None:
        self._alt: dict[tuple[str, int], tuple[int, float]] = {}
        self._broken: dict[tuple[str, int], float] = {}
        self.max_origins = max_origins

    def __len__(self) -> int:
        return len(self._alt)

    def seen(self, origin: tuple[str, int], value: str, now: float) -> None:
        """An ``Alt-Svc`` field *value* on a response from *origin* (over TCP)."""
        host = origin[0]
        if value.strip() == "clear":
            self._alt.pop(origin, None)
            return
        found = h3_port(value, host)
        if found is None:
            return
        port, max_age = found
        self._put(self._alt, origin, (port, now + max_age))

    def _put(self, table: dict[tuple[str, int], _V], key: tuple[str, int], value: _V) -> None:
        table.pop(key, None)
        if len(table) >= self.max_origins:
            del table[next(iter(table))]
        table[key] = value

    def h3_port(self, origin: tuple[str, int], now: float) -> int | None:
        """The UDP port to try HTTP/3 on for *origin*, None when none is known (or it expired,
        or HTTP/3 failed there lately)."""
        if self._broken and self.broken(origin, now):
            return None
        entry = self._alt.get(origin)
        if entry is None:
            return None
        if entry[1] <= now:
            del self._alt[origin]
            return None
        return entry[0]

    def mark_broken(self, origin: tuple[str, int], now: float, seconds: float = BROKEN_FOR) -> None:
        self._put(self._broken, origin, now + seconds)

    def broken(self, origin: tuple[str, int], now: float) -> bool:
        until = self._broken.get(origin)
        if until is None:
            return False
        if until <= now:
            del self._broken[origin]
            return False
        return True

"""URL values, one frozen class per scheme, and the RFC 1738 parser (pure, no I/O).

SKELETON: the class shapes below are the contract other modules code against.
The parser, serializer, extract_urls and join are being written (see issue 2).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import URLSyntaxError

DEFAULT_PORTS: dict[str, int] = {
    "ftp": 21, "ftps": 990, "http": 80, "https": 443, "gopher": 70, "nntp": 119,
    "nntps": 563, "telnet": 23, "wais": 210, "prospero": 1525,
}


@dataclass(frozen=True)
class URL:
    """Base of every URL value. ``scheme`` is lower case."""

    scheme: str


@dataclass(frozen=True)
class GenericURL(URL):
    """``scheme:schemepart`` for a scheme RFC 1738 does not define."""

    schemepart: str = ""


@dataclass(frozen=True)
class ServerURL(URL):
    """A URL of the common Internet scheme syntax (section 3.1)."""

    host: str = ""
    port: int = 0
    user: str | None = None
    password: str | None = None


@dataclass(frozen=True)
class FTPURL(ServerURL):
    cwd: tuple[str, ...] = ()
    name: str = ""
    typecode: str | None = None


@dataclass(frozen=True)
class HTTPURL(ServerURL):
    path: str = ""
    search: str | None = None


@dataclass(frozen=True)
class GopherURL(ServerURL):
    gophertype: str = "1"
    selector: str = ""
    search: str | None = None
    gopher_plus: str | None = None


@dataclass(frozen=True)
class MailtoURL(URL):
    address: str = ""
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class NewsURL(URL):
    group: str | None = None
    message_id: str | None = None


@dataclass(frozen=True)
class NNTPURL(ServerURL):
    group: str = ""
    article: int | None = None


@dataclass(frozen=True)
class TelnetURL(ServerURL):
    pass


@dataclass(frozen=True)
class WAISURL(ServerURL):
    database: str = ""
    search: str | None = None
    wtype: str | None = None
    wpath: str | None = None


@dataclass(frozen=True)
class FileURL(URL):
    host: str = ""
    path: str = ""


@dataclass(frozen=True)
class ProsperoURL(ServerURL):
    hsoname: str = ""
    fields: tuple[tuple[str, str], ...] = field(default=())


def parse(text: str, *, strict: bool = False) -> URL:
    """Parse *text* into the URL value of its scheme."""
    raise URLSyntaxError("parser not written yet", url=text)

"""Every scheme anyurl knows, one record each: the one place a scheme's facts live.

The registry (which handler), the URL parser (default ports, the schemes found in free
text), the proxy choice, the CLI's early connect, walk (which schemes are one family),
the Client (which ``Client(<name>=...)`` options a scheme reads) and the adapters (which
schemes fsspec and urllib get from us) all read this table; none keeps a list of its own.

This module imports nothing: ``anyurl parse`` and ``--version`` load it at start-up.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: importing typing costs start-up time
if TYPE_CHECKING:
    from typing import Protocol

    class _Located(Protocol):  # a URL with a host (anyurl.urls' classes)
        @property
        def scheme(self) -> str: ...
        @property
        def port(self) -> int | None: ...

__all__ = ["CWD_STRATEGIES", "DEFAULT_PORTS", "DEFAULT_TEXT_SUFFIXES", "EARLY_CONNECT", "OPTIONS_CLASSES", "PROXIED", "SCHEMES",
           "Scheme", "family", "fsspec_schemes", "port_of"]


class Scheme:
    """The facts of one scheme.

    ``handler``: the driver, as "module:Class" (imported on first use); ``options``: the
    ``Client(<name>=...)`` keyword whose options it reads; ``family``: the scheme whose tree
    it shares (https is http's, nntps news's), for walk's "same site" rule; ``default_port``;
    ``proxied``: an HTTP proxy may carry it; ``early_connect``: the CLI may start its TCP
    connect before asyncio is imported (plain TCP straight to the URL's host); ``tls``:
    implicit TLS; ``fsspec``: "direct" (served under its own name: fsspec has none),
    "aliased" (only as "anyurl+<scheme>": fsspec serves it itself) or None.
    """

    __slots__ = ("default_port", "early_connect", "family", "fsspec", "handler", "name", "options", "proxied",
                 "tls")

    def __init__(self, name: str, handler: str, *, options: str | None = None, family: str | None = None,
                 default_port: int | None = None, proxied: bool = False, early_connect: bool = False,
                 tls: bool = False, fsspec: str | None = None) -> None:
        self.name = name
        self.handler = handler
        self.options = options
        self.family = family or name
        self.default_port = default_port
        self.proxied = proxied
        self.early_connect = early_connect
        self.tls = tls
        self.fsspec = fsspec

    def __repr__(self) -> str:
        return f"Scheme({self.name!r})"


_H = "anyurl.handlers."

SCHEMES: dict[str, Scheme] = {s.name: s for s in (
    Scheme("file", _H + "file:FileHandler", fsspec="aliased"),
    Scheme("http", _H + "http:HTTPHandler", options="http", default_port=80, proxied=True, early_connect=True,
           fsspec="aliased"),
    Scheme("https", _H + "http:HTTPHandler", options="http", family="http", default_port=443, proxied=True,
           early_connect=True, tls=True, fsspec="aliased"),
    Scheme("ftp", _H + "ftp:FTPHandler", options="ftp", default_port=21, proxied=True, early_connect=True,
           fsspec="aliased"),
    Scheme("ftps", _H + "ftp:FTPHandler", options="ftp", family="ftp", default_port=990, tls=True,
           fsspec="aliased"),
    Scheme("gopher", _H + "gopher:GopherHandler", options="gopher", default_port=70, early_connect=True,
           fsspec="direct"),
    Scheme("news", _H + "news:NewsHandler", options="news", fsspec="direct"),
    Scheme("nntp", _H + "news:NewsHandler", options="news", family="news", default_port=119, early_connect=True,
           fsspec="direct"),
    Scheme("nntps", _H + "news:NewsHandler", options="news", family="news", default_port=563, tls=True,
           fsspec="direct"),
    Scheme("mailto", _H + "mailto:MailtoHandler", options="smtp"),
    Scheme("telnet", _H + "telnet:TelnetHandler", default_port=23),
    Scheme("wais", _H + "wais:WAISHandler", options="wais", default_port=210, fsspec="direct"),
    Scheme("prospero", _H + "prospero:ProsperoHandler", options="prospero", default_port=1525, fsspec="direct"),
)}

#: ``Client(<keyword>=...)`` -> the name of the options class it takes (each defined in anyurl.settings)
OPTIONS_CLASSES: dict[str, str] = {
    "ftp": "FTPOptions", "http": "HTTPOptions", "gopher": "GopherOptions", "news": "NewsOptions",
    "wais": "WAISOptions", "prospero": "ProsperoOptions", "smtp": "SMTPSettings",
}

DEFAULT_PORTS: dict[str, int] = {n: s.default_port for n, s in SCHEMES.items() if s.default_port is not None}
PROXIED: frozenset[str] = frozenset(n for n, s in SCHEMES.items() if s.proxied)
EARLY_CONNECT: frozenset[str] = frozenset(n for n, s in SCHEMES.items() if s.early_connect)


def family(scheme: str) -> str:
    """The scheme whose tree *scheme* shares (https -> http); an unknown scheme is its own."""
    s = SCHEMES.get(scheme)
    return s.family if s is not None else scheme


def fsspec_schemes(kind: str) -> tuple[str, ...]:
    """The schemes the fsspec adapter serves as *kind* ("direct" or "aliased"), in table order."""
    return tuple(n for n, s in SCHEMES.items() if s.fsspec == kind)


def port_of(url: _Located) -> int:
    """The port a URL connects to: its own, else its scheme's default."""
    port = url.port
    return port if port is not None else SCHEMES[url.scheme].default_port or 0


#: FTPOptions.cwd_strategy's values (what each does: its docstring, docs/ftp.md)
CWD_STRATEGIES: tuple[str, ...] = ("auto", "multicwd", "singlecwd", "nocwd")

# Section 3.2.3 lets a client guess the type without a typecode; with FTPOptions(guess_type=True)
# these suffixes are text (TYPE A). The default is binary: a mirror must be byte-exact.
DEFAULT_TEXT_SUFFIXES: tuple[str, ...] = (
    ".txt", ".text", ".asc", ".htm", ".html", ".css", ".csv", ".md", ".rst", ".xml",
    ".json", ".c", ".h", ".py", ".sh", ".pl", ".tex", ".ini", ".conf", ".log", ".diff",
    ".patch", ".readme",
)

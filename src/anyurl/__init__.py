"""anyurl: retrieve a resource from any RFC 1738 URL.

>>> import anyurl
>>> url = anyurl.parse("ftp://ftp.example.org/pub/README;type=a")
>>> url.cwd, url.name, url.typecode
(('pub',), 'README', 'a')
"""

from __future__ import annotations

from .errors import (
    AccessDenied,
    AnyURLError,
    ConfigurationError,
    ConnectError,
    FetchTimeout,
    NotRetrievable,
    NotSupported,
    OverlongTransfer,
    PoolTimeout,
    ProtocolError,
    ResourceNotFound,
    TemporaryFailure,
    TransferError,
    TruncatedTransfer,
    UnsafeURL,
    UnsupportedScheme,
    URLSyntaxError,
)
from .version import __version__

TYPE_CHECKING = False  # not typing's: importing typing costs start-up time (mypy knows this idiom)
if TYPE_CHECKING:
    from .client import Client, connect, fetch, fetch_sync, open
    from .response import Body, Entry, Response, Stat
    from .settings import (
        FTPOptions,
        GopherOptions,
        HTTPOptions,
        Limits,
        NewsOptions,
        Policy,
        ProsperoOptions,
        Retry,
        SMTPSettings,
        Timeouts,
        WAISOptions,
    )
    from .urls import URL, extract_urls, parse
del TYPE_CHECKING

# The rest loads on first use: the client pulls in asyncio (~50 ms), which
# `anyurl --version`, `anyurl parse` and a program that only parses URLs never need.
_LAZY = {
    "Client": "client", "connect": "client", "fetch": "client", "fetch_sync": "client", "open": "client",
    "Limits": "settings", "Policy": "settings", "Retry": "settings", "Timeouts": "settings",
    # each scheme's options (Client(ftp=FTPOptions(...))), beside the values every scheme reads
    "FTPOptions": "settings", "GopherOptions": "settings", "HTTPOptions": "settings", "NewsOptions": "settings",
    "ProsperoOptions": "settings", "SMTPSettings": "settings", "WAISOptions": "settings",
    "Body": "response", "Entry": "response", "Response": "response", "Stat": "response",
    "URL": "urls", "extract_urls": "urls", "parse": "urls",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib  # here: `anyurl --version` needs no importlib (nor the warnings it loads)

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "URL",
    "AccessDenied",
    "AnyURLError",
    "Body",
    "Client",
    "ConfigurationError",
    "ConnectError",
    "Entry",
    "FTPOptions",
    "FetchTimeout",
    "GopherOptions",
    "HTTPOptions",
    "Limits",
    "NewsOptions",
    "NotRetrievable",
    "NotSupported",
    "OverlongTransfer",
    "Policy",
    "PoolTimeout",
    "ProsperoOptions",
    "ProtocolError",
    "ResourceNotFound",
    "Response",
    "Retry",
    "SMTPSettings",
    "Stat",
    "TemporaryFailure",
    "Timeouts",
    "TransferError",
    "TruncatedTransfer",
    "URLSyntaxError",
    "UnsafeURL",
    "UnsupportedScheme",
    "WAISOptions",
    "__version__",
    "connect",
    "extract_urls",
    "fetch",
    "fetch_sync",
    "open",
    "parse",
]

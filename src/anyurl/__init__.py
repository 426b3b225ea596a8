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
    from .settings import Limits, Policy, Retry, Timeouts
    from .urls import URL, extract_urls, parse
del TYPE_CHECKING

# The rest loads on first use: the client pulls in asyncio (~50 ms), which
# `anyurl --version`, `anyurl parse` and a program that only parses URLs never need.
_LAZY = {
    "Client": "client", "connect": "client", "fetch": "client", "fetch_sync": "client", "open": "client",
    "Limits": "settings", "Policy": "settings", "Retry": "settings", "Timeouts": "settings",
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
    "FetchTimeout",
    "Limits",
    "NotRetrievable",
    "NotSupported",
    "OverlongTransfer",
    "Policy",
    "PoolTimeout",
    "ProtocolError",
    "ResourceNotFound",
    "Response",
    "Retry",
    "Stat",
    "TemporaryFailure",
    "Timeouts",
    "TransferError",
    "TruncatedTransfer",
    "URLSyntaxError",
    "UnsafeURL",
    "UnsupportedScheme",
    "__version__",
    "connect",
    "extract_urls",
    "fetch",
    "fetch_sync",
    "open",
    "parse",
]

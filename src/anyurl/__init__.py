"""anyurl: retrieve a resource from any RFC 1738 URL.

>>> import anyurl
>>> url = anyurl.parse("ftp://ftp.example.org/pub/README;type=a")
>>> url.cwd, url.name, url.typecode
(('pub',), 'README', 'a')
"""

from __future__ import annotations

__version__ = "0.1.0"

from .client import Client, connect, fetch, fetch_sync, open
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
from .response import Body, Entry, Response, Stat
from .settings import Limits, Policy, Retry, Timeouts
from .urls import URL, parse

try:
    from .urls import extract_urls
except ImportError:  # pragma: no cover - while the parser is being written
    pass

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

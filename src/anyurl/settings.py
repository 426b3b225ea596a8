"""Configuration values: frozen, validated, and the per-request view handlers read.

A :class:`Client` holds one of each of :class:`Timeouts`, :class:`Limits`,
:class:`Policy` and :class:`Retry`. A call may override ``timeouts``,
``limits`` and ``retry`` for itself; the handler then sees one
:class:`Request` carrying the values in force for that call, its byte range,
its per-request scheme options and the deadline that ``Timeouts.total`` sets.
"""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .errors import (
    ConfigurationError,
    ConnectError,
    FetchTimeout,
    TemporaryFailure,
    TransferError,
    TruncatedTransfer,
)

if TYPE_CHECKING:
    from .urls import URL

__all__ = ["Limits", "Policy", "Request", "Retry", "Timeouts"]


def _check_positive(owner: object, **values: float | None) -> None:
    for name, value in values.items():
        if value is not None and not value > 0:
            raise ConfigurationError(f"{type(owner).__name__}.{name} must be > 0 (got {value!r})")


@dataclass(frozen=True, slots=True)
class Timeouts:
    """Seconds. ``connect``: to open a connection; ``read``: idle time waiting for
    data or a reply; ``pool``: waiting for a free connection slot to a host;
    ``total``: a whole ``fetch``, ``stat`` or ``open`` stream, retries included
    (None: no limit). No wait is ever re-armed past ``total``."""

    connect: float = 30.0
    read: float = 60.0
    total: float | None = None
    pool: float | None = 60.0

    def __post_init__(self) -> None:
        _check_positive(self, connect=self.connect, read=self.read, total=self.total, pool=self.pool)


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds that keep memory and connections in check."""

    max_size: int | None = None  # bytes fetch() will hold in memory (None: no limit)
    max_line: int = 64 * 1024  # one protocol reply line
    max_entries: int = 1_000_000  # entries of one listing
    max_reply_lines: int = 10_000  # lines of one multi-line control reply
    per_host: int = 8  # concurrent connections to one server, every scheme
    max_idle: float = 60.0  # seconds an idle pooled connection is kept
    max_redirects: int = 10
    chunk_size: int = 1 << 20  # largest read size for data streams

    def __post_init__(self) -> None:
        _check_positive(self, max_line=self.max_line, max_entries=self.max_entries,
                        max_reply_lines=self.max_reply_lines, per_host=self.per_host,
                        chunk_size=self.chunk_size, max_size=self.max_size, max_idle=self.max_idle)
        if self.max_redirects < 0:
            raise ConfigurationError("Limits.max_redirects must be >= 0")


@dataclass(frozen=True, slots=True)
class Policy:
    """Security policy. The defaults refuse what PEERS.md lists as attacks."""

    allow_cross_scheme_redirects: bool = False  # http -> ftp/file/gopher
    allow_https_downgrade: bool = False  # https -> http redirect
    allow_gopher_to_service_ports: bool = False  # gopher://host:25/ etc. (RFC 1738 s. 6)
    allow_file_urls: bool = True


@dataclass(frozen=True, slots=True)
class Retry:
    """When and how often a failed request is tried again (urllib3-style value).

    ``attempts`` counts every try, the first included (1: no retry). The delay
    before try *n* (n >= 2) is ``backoff * 2 ** (n - 2)``, capped at
    ``backoff_max``; a server's own delay (HTTP ``Retry-After``) wins when it
    is longer, still capped. Only errors of the classes in ``on`` are retried.
    A body is never restarted once bytes were handed to the caller, unless the
    scheme resumes from the offset reached (FTP REST, HTTP Range, file seek).
    """

    attempts: int = 1
    backoff: float = 0.5
    backoff_max: float = 30.0
    on: tuple[type[BaseException], ...] = (TemporaryFailure, ConnectError, FetchTimeout, TruncatedTransfer)

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ConfigurationError("Retry.attempts must be >= 1")
        if self.backoff < 0 or self.backoff_max < 0:
            raise ConfigurationError("Retry.backoff and backoff_max must be >= 0")
        if not all(isinstance(c, type) and issubclass(c, BaseException) for c in self.on):
            raise ConfigurationError("Retry.on must hold exception classes")

    def retries(self, exc: BaseException) -> bool:
        """True when *exc* is of a class this policy retries."""
        return isinstance(exc, self.on) and isinstance(exc, TransferError)

    def delay(self, attempt: int, exc: BaseException | None = None) -> float:
        """Seconds to wait before try number *attempt* (2 for the first retry)."""
        base = self.backoff * (2 ** max(0, attempt - 2))
        asked: object = getattr(exc, "retry_after", None)
        if isinstance(asked, (int, float)) and asked > base:
            base = float(asked)
        return float(min(base, self.backoff_max))


@dataclass(frozen=True, slots=True)
class Request:
    """What a handler needs to carry out one call: the URL and the values in force.

    ``offset``/``length`` select a byte range (``length`` None: to the end).
    ``options`` is a per-request scheme options object (for example
    ``FTPOptions``) that replaces the Client's for this call; handlers read it
    through :meth:`anyurl.handlers.base.Handler.options`. ``deadline`` is the
    event-loop time by which the call must end (from ``Timeouts.total``).
    """

    url: URL
    timeouts: Timeouts = field(default_factory=Timeouts)
    limits: Limits = field(default_factory=Limits)
    retry: Retry = field(default_factory=Retry)
    offset: int = 0
    length: int | None = None
    options: object | None = None
    deadline: float | None = None

    def __post_init__(self) -> None:
        if self.offset < 0:
            raise ConfigurationError(f"offset must be >= 0 (got {self.offset})", url=self.url)
        if self.length is not None and self.length < 0:
            raise ConfigurationError(f"length must be >= 0 (got {self.length})", url=self.url)

    def remaining(self) -> float | None:
        """Seconds left before the deadline (None: no deadline); never negative."""
        if self.deadline is None:
            return None
        return max(0.0, self.deadline - asyncio.get_running_loop().time())

    def bound(self, timeout: float | None) -> float | None:
        """*timeout* shortened so that no wait reaches past the deadline."""
        left = self.remaining()
        if left is None:
            return timeout
        return left if timeout is None else min(timeout, left)

    @property
    def read_timeout(self) -> float | None:
        """The idle read timeout, never past the deadline."""
        return self.bound(self.timeouts.read)

    @property
    def connect_timeout(self) -> float | None:
        """The connect timeout, never past the deadline."""
        return self.bound(self.timeouts.connect)

    def replace(self, **changes: object) -> Request:
        """A copy with *changes* (for example a new ``url`` after a redirect)."""
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]

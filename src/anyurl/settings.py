"""Configuration values: frozen, validated, and the per-request view handlers read.

A :class:`Client` holds one of each of :class:`Timeouts`, :class:`Limits`,
:class:`Policy` and :class:`Retry`. A call may override ``timeouts``,
``limits`` and ``retry`` for itself; the handler then sees one
:class:`Request` carrying the values in force for that call, its byte range,
its per-request scheme options and the deadline that ``Timeouts.total`` sets.

These classes act as frozen dataclasses (``dataclasses.replace()`` and
``fields()`` work on them) without the cost of making dataclasses at start-up:
see :mod:`anyurl._record`.
"""

from __future__ import annotations

import asyncio
import socket

from ._record import Record
from .errors import (
    AnyURLError,
    Attempt,
    ConfigurationError,
    ConnectError,
    FetchTimeout,
    TemporaryFailure,
    TransferError,
    TruncatedTransfer,
)

TYPE_CHECKING = False  # not typing's: importing typing costs start-up time (mypy knows this idiom)
if TYPE_CHECKING:
    from .urls import URL

__all__ = ["Attempt", "Limits", "Policy", "Request", "Retry", "Timeouts"]


_set = object.__setattr__  # how a frozen value's __init__ sets its fields


def _check_type(owner: object, whole: tuple[str, ...], **values: object) -> None:
    """TypeError naming the field for a value of the wrong type (``Timeouts(read="5")``,
    ``Limits(per_host=2.5)``): the comparisons below would fail on it with no name."""
    for name, value in values.items():
        if value is None:
            continue
        ok = (int,) if name in whole else (int, float)
        if isinstance(value, bool) or not isinstance(value, ok):
            want = "an int" if name in whole else "a number"
            raise TypeError(f"{type(owner).__name__}.{name} must be {want}, not {type(value).__name__}")


def _check_positive(owner: object, **values: float | None) -> None:
    for name, value in values.items():
        if value is not None and not value > 0:
            raise ConfigurationError(f"{type(owner).__name__}.{name} must be > 0 (got {value!r})")


class Timeouts(Record):
    """Seconds. ``connect``: to open a connection; ``read``: idle time waiting for
    data or a reply; ``pool``: waiting for a free connection slot to a host, with none
    coming free meanwhile; ``total``: a whole ``fetch``, ``stat`` or ``open`` stream, retries included
    (None: no limit). No wait is ever re-armed past ``total``."""

    __slots__ = ("connect", "read", "total", "pool")
    connect: float
    read: float
    total: float | None
    pool: float | None

    def __init__(self, connect: float = 30.0, read: float = 60.0, total: float | None = None,
                 pool: float | None = 60.0) -> None:
        _set(self, "connect", connect)
        _set(self, "read", read)
        _set(self, "total", total)
        _set(self, "pool", pool)
        _check_type(self, (), connect=connect, read=read, total=total, pool=pool)
        _check_positive(self, connect=connect, read=read, total=total, pool=pool)


class Limits(Record):
    """Bounds that keep memory and connections in check."""

    __slots__ = ("max_size", "max_line", "max_entries", "max_reply_lines", "per_host", "max_idle",
                 "max_redirects", "chunk_size", "per_host_requests", "max_entries_bytes")
    max_size: int | None  # bytes fetch() will hold in memory (None: no limit)
    max_line: int  # one protocol reply line
    max_entries: int  # entries of one listing
    max_reply_lines: int  # lines of one multi-line control reply
    per_host: int  # concurrent connections to one server, every scheme
    max_idle: float  # seconds an idle pooled connection is kept
    max_redirects: int
    chunk_size: int  # largest read size for data streams
    # requests in flight to one server at once (HTTP/2 streams, which share connections)
    per_host_requests: int
    # memory the entries of one HTML page's links may take, estimated (~560 bytes an entry
    # plus its URL, name and text): a count alone let 1,000,000 links cost 0.6 GB
    max_entries_bytes: int

    def __init__(self, max_size: int | None = None, max_line: int = 64 * 1024, max_entries: int = 1_000_000,
                 max_reply_lines: int = 10_000, per_host: int = 8, max_idle: float = 60.0,
                 max_redirects: int = 10, chunk_size: int = 1 << 20, per_host_requests: int = 64,
                 max_entries_bytes: int = 128 * 1024 * 1024) -> None:
        _set(self, "max_size", max_size)
        _set(self, "max_line", max_line)
        _set(self, "max_entries", max_entries)
        _set(self, "max_reply_lines", max_reply_lines)
        _set(self, "per_host", per_host)
        _set(self, "max_idle", max_idle)
        _set(self, "max_redirects", max_redirects)
        _set(self, "chunk_size", chunk_size)
        _set(self, "per_host_requests", per_host_requests)
        _set(self, "max_entries_bytes", max_entries_bytes)
        _check_type(self, ("max_size", "max_line", "max_entries", "max_reply_lines", "per_host", "max_redirects",
                           "chunk_size", "per_host_requests", "max_entries_bytes"), max_size=max_size,
                    max_line=max_line, max_entries=max_entries, max_reply_lines=max_reply_lines, per_host=per_host,
                    max_idle=max_idle, max_redirects=max_redirects, chunk_size=chunk_size,
                    per_host_requests=per_host_requests, max_entries_bytes=max_entries_bytes)
        _check_positive(self, max_line=max_line, max_entries=max_entries, max_reply_lines=max_reply_lines,
                        per_host=per_host, chunk_size=chunk_size, max_size=max_size, max_idle=max_idle,
                        per_host_requests=per_host_requests, max_entries_bytes=max_entries_bytes)
        if max_redirects < 0:
            raise ConfigurationError("Limits.max_redirects must be >= 0")


class Policy(Record):
    """Security policy. The defaults refuse what PEERS.md lists as attacks."""

    __slots__ = ("allow_cross_scheme_redirects", "allow_https_downgrade", "allow_gopher_to_service_ports",
                 "allow_file_urls")
    allow_cross_scheme_redirects: bool  # http -> ftp/gopher (never file: a remote server never leads there)
    allow_https_downgrade: bool  # https -> http redirect
    allow_gopher_to_service_ports: bool  # gopher://host:25/ etc. (RFC 1738 s. 6)
    allow_file_urls: bool

    def __init__(self, allow_cross_scheme_redirects: bool = False, allow_https_downgrade: bool = False,
                 allow_gopher_to_service_ports: bool = False, allow_file_urls: bool = True) -> None:
        _set(self, "allow_cross_scheme_redirects", allow_cross_scheme_redirects)
        _set(self, "allow_https_downgrade", allow_https_downgrade)
        _set(self, "allow_gopher_to_service_ports", allow_gopher_to_service_ports)
        _set(self, "allow_file_urls", allow_file_urls)


class Retry(Record):
    """When and how often a failed request is tried again (urllib3-style value).

    ``attempts`` counts every try, the first included (1: no retry). The delay
    before try *n* (n >= 2) is ``backoff * 2 ** (n - 2)``, capped at
    ``backoff_max``; a server's own delay (HTTP ``Retry-After``) wins when it
    is longer, still capped. Only errors of the classes in ``on`` are retried.
    A body is never restarted once bytes were handed to the caller, unless the
    scheme resumes from the offset reached (FTP REST, HTTP Range, file seek).

    ``history`` holds the tries made so far (one :class:`Attempt` each): the
    Client's value has none; :meth:`increment` returns a new value with one more,
    and says in it whether and when the next try comes. The error that ends a call
    carries the history as ``error.history``; its message is left as it was.
    """

    __slots__ = ("attempts", "backoff", "backoff_max", "on", "history")
    attempts: int
    backoff: float
    backoff_max: float
    on: tuple[type[BaseException], ...]
    history: tuple[Attempt, ...]

    def __init__(self, attempts: int = 1, backoff: float = 0.5, backoff_max: float = 30.0,
                 on: tuple[type[BaseException], ...] = (TemporaryFailure, ConnectError, FetchTimeout,
                                                        TruncatedTransfer),
                 history: tuple[Attempt, ...] = ()) -> None:
        _set(self, "attempts", attempts)
        _set(self, "backoff", backoff)
        _set(self, "backoff_max", backoff_max)
        _set(self, "on", on)
        _set(self, "history", history)
        _check_type(self, ("attempts",), attempts=attempts, backoff=backoff, backoff_max=backoff_max)
        if attempts < 1:
            raise ConfigurationError("Retry.attempts must be >= 1")
        if backoff < 0 or backoff_max < 0:
            raise ConfigurationError("Retry.backoff and backoff_max must be >= 0")
        if not all(isinstance(c, type) and issubclass(c, BaseException) for c in on):
            raise ConfigurationError("Retry.on must hold exception classes")
        if not isinstance(history, tuple) or not all(type(a) is Attempt for a in history):
            raise ConfigurationError("Retry.history must be a tuple of Attempt")

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

    def increment(self, error: AnyURLError, *, remaining: float | None = None,
                  repeatable: bool = True) -> Retry:
        """This policy after one more try, which failed with *error*: the same value with
        that try's :class:`Attempt` added to ``history``. The attempt's ``delay`` is the wait
        before the next try, or None when *error* ends the call: the attempts are used up;
        its class is not in ``on``; the resolver said the host name does not exist (asking
        again gets the same answer; "try again later", ``EAI_AGAIN``, is retried); the wait
        would not end before the deadline (*remaining*: seconds left, None: no deadline); or
        the try cannot be made again (*repeatable* False: bytes of a body that cannot resume
        reached the caller). The one rule for whether and when a call is tried again."""
        tries = len(self.history) + 1
        delay: float | None = None
        if repeatable and tries < self.attempts and self.retries(error) and not _name_unknown(error):
            wait = self.delay(tries + 1, error)
            if remaining is None or wait < remaining:
                delay = wait
        return self.__replace__(history=(*self.history, Attempt(error, delay)))

    @property
    def next_delay(self) -> float | None:
        """Seconds to wait before the next try (None: none is due, see :meth:`increment`)."""
        return self.history[-1].delay if self.history else None


# getaddrinfo's final answers: the name does not exist, or has no address. Asking again
# gets the same answer (EAI_AGAIN, "try again later", is retried).
_NAME_UNKNOWN = frozenset(getattr(socket, n) for n in ("EAI_NONAME", "EAI_NODATA") if hasattr(socket, n))


def _name_unknown(exc: BaseException) -> bool:
    """True when a resolver's final "no such name" is under *exc* (its causes and contexts
    followed: a translation may leave the resolver's error in the context only)."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo and len(seen) < 32:
        cause = todo.pop()
        if cause is None or id(cause) in seen:
            continue
        seen.add(id(cause))
        if isinstance(cause, socket.gaierror):
            return cause.errno in _NAME_UNKNOWN
        todo += (cause.__context__, cause.__cause__)
    return False


class Request(Record):
    """What a handler needs to carry out one call: the URL and the values in force.

    ``offset``/``length`` select a byte range (``length`` None: to the end).
    ``options`` is a per-request scheme options object (for example
    ``FTPOptions``) that replaces the Client's for this call; handlers read it
    through :meth:`anyurl.handlers.base.Handler.options`. ``deadline`` is the
    event-loop time by which the call must end (from ``Timeouts.total``).
    ``max_size``: the caller refuses a body of more bytes (``fetch``'s limit, the CLI's
    ``--max-size``); a handler that learns the size before the transfer starts (FTP
    SIZE) fails then, with the caller's :class:`~anyurl.errors.TransferError`.
    ``capture``: the driver keeps what crosses the wire in ``Body.capture``
    (:class:`~anyurl.response.Capture`); off by default, so no request pays for it.
    """

    __slots__ = ("url", "timeouts", "limits", "retry", "offset", "length", "options", "deadline", "max_size",
                 "capture")
    _factories = {"timeouts": Timeouts, "limits": Limits, "retry": Retry}  # None in __init__: a fresh default
    url: URL
    timeouts: Timeouts
    limits: Limits
    retry: Retry
    offset: int
    length: int | None
    options: object | None
    deadline: float | None
    max_size: int | None
    capture: bool

    def __init__(self, url: URL, timeouts: Timeouts | None = None, limits: Limits | None = None,
                 retry: Retry | None = None, offset: int = 0, length: int | None = None,
                 options: object | None = None, deadline: float | None = None,
                 max_size: int | None = None, capture: bool = False) -> None:
        _set(self, "url", url)
        _set(self, "timeouts", Timeouts() if timeouts is None else timeouts)
        _set(self, "limits", Limits() if limits is None else limits)
        _set(self, "retry", Retry() if retry is None else retry)
        _set(self, "offset", offset)
        _set(self, "length", length)
        _set(self, "options", options)
        _set(self, "deadline", deadline)
        _set(self, "max_size", max_size)
        _set(self, "capture", capture)
        if offset < 0:
            raise ConfigurationError(f"offset must be >= 0 (got {offset})", url=url)
        if length is not None and length < 0:
            raise ConfigurationError(f"length must be >= 0 (got {length})", url=url)

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
        return self.__replace__(**changes)

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
from .schemes import CWD_STRATEGIES, DEFAULT_TEXT_SUFFIXES

TYPE_CHECKING = False  # not typing's: importing typing costs start-up time (mypy knows this idiom)
if TYPE_CHECKING:
    import ssl
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

    from .urls import URL

__all__ = ["Attempt", "FTPOptions", "GopherOptions", "HTTPOptions", "Limits", "NewsOptions", "Policy",
           "ProsperoOptions", "Request", "Retry", "SMTPSettings", "Timeouts", "WAISOptions"]


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


# ---------------------------------------------------------------------------
# Per-scheme options: ``Client(ftp=FTPOptions(...))`` or per call ``fetch(url, options=...)``.
# They live here, below the drivers, so that every configuration value is importable from
# one place (``from anyurl.settings import FTPOptions``) without loading a driver.
# ---------------------------------------------------------------------------


def renamed_option(owner: str, old: str, new: str) -> None:
    """Warn that ``owner(old=...)`` is the old spelling of ``owner(new=...)`` (called from
    the options' ``__init__``: the warning points at the caller's line)."""
    import warnings

    warnings.warn(f"{owner}({old}=...) is deprecated: use {owner}({new}=...), the spelling every "
                  "scheme's options share", DeprecationWarning, stacklevel=3)


class FTPOptions(Record):
    """FTP settings, passed as ``Client(ftp=FTPOptions(...))``.

    cwd_strategy: how the URL's directory segments (section 3.2.2) become CWD commands.
        "auto" (the default): the RFC's effect in fewer round trips: one CWD per segment,
        except that on a server with Unix paths (PWD gave "/...") and plain segment names,
        one CWD to the absolute path (login directory + segments) stands for two or more of
        them: on a connection's first RETR (with ``pipeline``) and when a reused connection
        goes to another directory (``ftp://h/pub/sub/f`` sends ``CWD /pub/sub``); where the
        server refuses that CWD, the per-segment sequence runs. "multicwd": the RFC's
        sequence to the letter, exactly one CWD per segment (``CWD pub``, ``CWD sub``),
        never joined, whatever ``pipeline`` says; a reused connection first goes back with
        a CWD to its login directory (only the segments left are sent when it already
        stands on the way). "singlecwd": one CWD with the joined path (``CWD pub/sub``).
        "nocwd": no CWD, the full path to RETR/LIST.
    passive: EPSV then PASV (True) or active EPRT then PORT (False).
    epsv: try EPSV before PASV.
    guess_type: without a typecode, transfer names ending in one of text_suffixes as
        TYPE A (the old guess; the default is TYPE I, byte-exact like curl, wget and lftp).
    use_size: send SIZE before a binary RETR (size for progress and truncation checks).
    use_mlsd: use MLSD for listings when FEAT offers it.
    tls: explicit FTPS (AUTH TLS) for ftp:// URLs; ftps:// is always implicit TLS.
    verify, cafile, ssl_context: how the server's certificate is checked, spelled as for
        every scheme (anyurl.net.tls); ``tls_context`` is the old name of ``ssl_context``.
    atomic_upload: STOR to a temporary name, then RNFR/RNTO.
    reuse: keep idle control connections for the next URL on the same server.
    pipeline: send the login (USER, PASS, PWD) in one write when the password is known,
        a file's CWD (under "auto", one to the absolute path for a chain) and TYPE in one
        write, and,
        once EPSV worked on a connection, [SIZE,] EPSV and RETR of the next file (one round
        trip less per file; plain connections only). A server answering out of step is
        not pipelined to again (logged on "anyurl.ftp").
    """

    __slots__ = ("cwd_strategy", "passive", "epsv", "text_suffixes", "guess_type", "use_size", "use_mlsd", "tls",
                 "tls_context", "atomic_upload", "reuse", "pipeline", "verify", "cafile", "ssl_context")
    cwd_strategy: str
    passive: bool
    epsv: bool
    text_suffixes: tuple[str, ...]
    guess_type: bool
    use_size: bool
    use_mlsd: bool
    tls: bool
    tls_context: ssl.SSLContext | None
    atomic_upload: bool
    reuse: bool
    pipeline: bool
    verify: bool
    cafile: str | None
    ssl_context: ssl.SSLContext | None

    def __init__(self, cwd_strategy: str = "auto", passive: bool = True, epsv: bool = True,
                 text_suffixes: tuple[str, ...] = DEFAULT_TEXT_SUFFIXES, guess_type: bool = False,
                 use_size: bool = True, use_mlsd: bool = True, tls: bool = False,
                 tls_context: ssl.SSLContext | None = None, atomic_upload: bool = True, reuse: bool = True,
                 pipeline: bool = True, verify: bool = True, cafile: str | None = None,
                 ssl_context: ssl.SSLContext | None = None) -> None:
        if tls_context is not None:
            renamed_option("FTPOptions", "tls_context", "ssl_context")
            ssl_context = ssl_context or tls_context
        _set(self, "cwd_strategy", cwd_strategy)
        _set(self, "passive", passive)
        _set(self, "epsv", epsv)
        _set(self, "text_suffixes", text_suffixes)
        _set(self, "guess_type", guess_type)
        _set(self, "use_size", use_size)
        _set(self, "use_mlsd", use_mlsd)
        _set(self, "tls", tls)
        _set(self, "tls_context", tls_context)
        _set(self, "atomic_upload", atomic_upload)
        _set(self, "reuse", reuse)
        _set(self, "pipeline", pipeline)
        _set(self, "verify", verify)
        _set(self, "cafile", cafile)
        _set(self, "ssl_context", ssl_context)
        if cwd_strategy not in CWD_STRATEGIES:
            raise ConfigurationError(f"FTPOptions.cwd_strategy must be one of {', '.join(CWD_STRATEGIES)} "
                                     f"(got {cwd_strategy!r})")


class HTTPOptions(Record):
    """Options for http/https URLs: ``Client(http=HTTPOptions(...))``.

    ``decompress``: undo the gzip/deflate transfer compression anyurl asks for
    (default on); a stored ``.gz`` file's bytes are kept either way.
    ``headers``: extra request headers sent with every request.
    ``verify``: check TLS certificates (default on); ``cafile``: a PEM bundle of CAs to
    trust; ``ssl_context``: the TLS context to use, overriding both (anyurl.net.tls).
    ``read_bufsize``: aiohttp's per-connection read buffer (bytes; the aiohttp path only);
    None uses ``min(client.limits.chunk_size, 1 MiB)``.
    ``lean``: send plain requests (no proxy) on anyurl's own connections
    (default); False sends every request through aiohttp (HTTP/1.1 only).
    ``http2``: on the lean path, offer HTTP/2 to https servers (ALPN) and use it where the
    server picks it (default); False: HTTP/1.1 only (the CLI's ``--http1.1``). With your own
    ``ssl_context``, HTTP/2 is offered only if its ALPN protocols name ``h2``.
    ``pipeline``: on the lean path, the most GETs in flight on one plain-http connection
    (HTTP/1.1 pipelining, when every connection to the server is busy; docs/http.md); 0 or 1:
    one at a time (the CLI's ``--pipeline N``).
    ``http3``: HTTP/3 over QUIC for https (needs ``anyurl[http3]``): None (default) uses it where
    an earlier response from the origin said ``Alt-Svc: h3`` (and ``http2`` is on); True tries it
    first for every https origin (the CLI's ``--http3``); False never. Either way a request goes
    over TCP (HTTP/2 or HTTP/1.1) when QUIC fails. ``http3_timeout``: the most seconds the QUIC
    handshake may take before that fallback (never past ``Timeouts.connect``). With your own
    ``ssl_context`` HTTP/3 is not used (qh3 cannot take an ``ssl.SSLContext``).
    """

    __slots__ = ("decompress", "headers", "verify", "ssl_context", "cafile", "read_bufsize", "lean", "http2",
                 "pipeline", "http3", "http3_timeout")
    _factories = {"headers": dict}  # None in __init__: a new dict
    decompress: bool
    headers: Mapping[str, str]
    verify: bool
    ssl_context: ssl.SSLContext | None
    cafile: str | None
    read_bufsize: int | None
    lean: bool
    http2: bool
    pipeline: int
    http3: bool | None
    http3_timeout: float

    def __init__(self, decompress: bool = True, headers: Mapping[str, str] | None = None, verify: bool = True,
                 ssl_context: ssl.SSLContext | None = None, cafile: str | None = None,
                 read_bufsize: int | None = None, lean: bool = True, http2: bool = True,
                 pipeline: int = 32, http3: bool | None = None, http3_timeout: float = 3.0) -> None:
        _set(self, "decompress", decompress)
        _set(self, "headers", {} if headers is None else headers)
        _set(self, "verify", verify)
        _set(self, "ssl_context", ssl_context)
        _set(self, "cafile", cafile)
        _set(self, "read_bufsize", read_bufsize)
        _set(self, "lean", lean)
        _set(self, "http2", http2)
        _set(self, "pipeline", pipeline)
        _set(self, "http3", http3)
        _check_positive(self, http3_timeout=http3_timeout)
        _set(self, "http3_timeout", http3_timeout)


class GopherOptions(Record):
    """Gopher settings, passed as ``Client(gopher=GopherOptions(...))``.

    ``max_menu_bytes``: the most bytes of a menu or attribute reply held in
    memory (menus are parsed whole). ``hold_limit``: how much text may be held
    back while deciding whether a server dot-stuffs (see
    :class:`~anyurl.protocols.gopher.TextUnstuffer`). ``on_send``: called with
    the exact bytes of every request sent (for logging and tests).
    ``form_answers``: answers for an ASK form, instead of asking
    ``Client.form_callback``. Per call: ``fetch(url, options=GopherOptions(...))``.
    """

    __slots__ = ("max_menu_bytes", "hold_limit", "on_send", "form_answers")
    max_menu_bytes: int
    hold_limit: int
    on_send: Callable[[bytes], Any] | None
    form_answers: Sequence[str] | None

    def __init__(self, max_menu_bytes: int = 64 << 20, hold_limit: int = 1 << 20,
                 on_send: Callable[[bytes], Any] | None = None, form_answers: Sequence[str] | None = None) -> None:
        _set(self, "max_menu_bytes", max_menu_bytes)
        _set(self, "hold_limit", hold_limit)
        _set(self, "on_send", on_send)
        _set(self, "form_answers", form_answers)


class NewsOptions(Record):
    """Options for news/nntp/nntps, passed as ``Client(news=NewsOptions(...))``.

    ``listing_limit``: a group listing shows at most this many of the newest
    articles. ``starttls``: upgrade a plain connection with STARTTLS (and
    fail if the server does not offer it). ``verify``, ``cafile``, ``ssl_context``: how
    nntps and STARTTLS check the server (default: the system's trusted CAs, hostname
    checked), spelled as for every scheme (anyurl.net.tls).
    ``trace``: called with ("send", line) for every command line (passwords
    masked) and ("recv", line) for every status line, to log or test.
    ``max_head``: the largest article head read before the body streams.
    ``body_in_meta``: articles up to this size also get ``meta["body"]``.
    ``max_descriptions``: bytes of group descriptions (LIST NEWSGROUPS) held
    while a group list streams; groups beyond it are listed without one.
    ``pipeline``: article commands (ARTICLE, HEAD, STAT) in flight on one connection
    (RFC 3977 section 3.5): overlapping requests for one server join a connection's
    window before another connection is opened. 1: one command at a time.
    """

    __slots__ = ("listing_limit", "starttls", "ssl_context", "trace", "max_head", "body_in_meta",
                 "max_descriptions", "verify", "cafile", "pipeline")
    listing_limit: int
    starttls: bool
    ssl_context: ssl.SSLContext | None
    trace: Callable[[str, str], None] | None
    max_head: int
    body_in_meta: int
    max_descriptions: int
    verify: bool
    cafile: str | None
    pipeline: int

    def __init__(self, listing_limit: int = 1000, starttls: bool = False, ssl_context: ssl.SSLContext | None = None,
                 trace: Callable[[str, str], None] | None = None, max_head: int = 256 * 1024,
                 body_in_meta: int = 4 * 1024 * 1024, max_descriptions: int = 16 * 1024 * 1024,
                 verify: bool = True, cafile: str | None = None, pipeline: int = 100) -> None:
        _set(self, "listing_limit", listing_limit)
        _set(self, "starttls", starttls)
        _set(self, "ssl_context", ssl_context)
        _set(self, "trace", trace)
        _set(self, "max_head", max_head)
        _set(self, "body_in_meta", body_in_meta)
        _set(self, "max_descriptions", max_descriptions)
        _set(self, "verify", verify)
        _set(self, "cafile", cafile)
        _set(self, "pipeline", pipeline)


class WAISOptions(Record):
    """Options for wais: URLs, passed as ``Client(wais=WAISOptions(...))``.

    ``count_term``: the term searched to describe a database (Z39.50 has no
    standard match-all query; None skips the search). ``max_results``: hits
    listed by a search. ``headline_syntax``: the syntax presented to make
    each hit's headline (the record's first line). ``use_attribute``: the
    Bib-1 Use attribute for search terms (None: the target's default).
    ``readable_marc``: render USMARC documents as text instead of raw ISO 2709.
    ``max_apdu``: the largest APDU accepted, in bytes. ``record_syntax``:
    the syntax to ask documents in, overriding the URL's wtype mapping.
    Per call: ``fetch(url, options=WAISOptions(...))``.
    """

    __slots__ = ("count_term", "max_results", "headline_syntax", "use_attribute", "readable_marc", "max_apdu",
                 "record_syntax")
    count_term: str | None
    max_results: int
    headline_syntax: str
    use_attribute: int | None
    readable_marc: bool
    max_apdu: int
    record_syntax: str | None

    def __init__(self, count_term: str | None = "*", max_results: int = 50, headline_syntax: str = "SUTRS",
                 use_attribute: int | None = None, readable_marc: bool = False, max_apdu: int = 16 * 1024 * 1024,
                 record_syntax: str | None = None) -> None:
        _set(self, "count_term", count_term)
        _set(self, "max_results", max_results)
        _set(self, "headline_syntax", headline_syntax)
        _set(self, "use_attribute", use_attribute)
        _set(self, "readable_marc", readable_marc)
        _set(self, "max_apdu", max_apdu)
        _set(self, "record_syntax", record_syntax)


class ProsperoOptions(Record):
    """Options for prospero: URLs, passed as ``Client(prospero=ProsperoOptions(...))``.

    ``timeout``: seconds before the first retransmission; each further one
    waits ``backoff`` times longer, up to ``retries`` retransmissions
    without progress. ``follow``: fetch an object through its access method.
    ``allow_file_targets``: kept for compatibility, no effect: a server's
    LOCAL access method never opens a ``file:`` URL. ``user``: the name sent with UNAUTHENTICATED.
    ``max_reply``: the largest reply accepted, in bytes.
    """

    __slots__ = ("timeout", "retries", "backoff", "follow", "allow_file_targets", "user", "max_reply")
    timeout: float
    retries: int
    backoff: float
    follow: bool
    allow_file_targets: bool
    user: str
    max_reply: int

    def __init__(self, timeout: float = 2.0, retries: int = 4, backoff: float = 2.0, follow: bool = True,
                 allow_file_targets: bool = False, user: str = "anonymous", max_reply: int = 16 * 1024 * 1024) -> None:
        _set(self, "timeout", timeout)
        _set(self, "retries", retries)
        _set(self, "backoff", backoff)
        _set(self, "follow", follow)
        _set(self, "allow_file_targets", allow_file_targets)
        _set(self, "user", user)
        _set(self, "max_reply", max_reply)


class SMTPSettings(Record):
    """Where and how to submit mail (``mailto:``), passed as ``Client(smtp=SMTPSettings(...))``.

    ``starttls``: True requires STARTTLS, False never uses it, None (default)
    upgrades when the server offers it. ``tls``: implicit TLS (SMTPS, port
    465). ``verify=False``, ``cafile`` (a PEM bundle) or ``ssl_context``, spelled as for
    every scheme (anyurl.net.tls; ``validate_certs`` is the old name of ``verify``), for
    self-signed relays. ``sender``: the default From address.
    """

    __slots__ = ("host", "port", "starttls", "tls", "username", "password", "validate_certs", "cafile", "sender",
                 "local_hostname", "verify", "ssl_context")
    _secret = frozenset({"password"})
    host: str | None
    port: int | None
    starttls: bool | None
    tls: bool
    username: str | None
    password: str | None
    validate_certs: bool
    cafile: str | None
    sender: str | None
    local_hostname: str | None
    verify: bool
    ssl_context: ssl.SSLContext | None

    def __init__(self, host: str | None = None, port: int | None = None, starttls: bool | None = None,
                 tls: bool = False, username: str | None = None, password: str | None = None,
                 validate_certs: bool = True, cafile: str | None = None, sender: str | None = None,
                 local_hostname: str | None = None, verify: bool = True,
                 ssl_context: ssl.SSLContext | None = None) -> None:
        _set(self, "host", host)
        _set(self, "port", port)
        _set(self, "starttls", starttls)
        _set(self, "tls", tls)
        _set(self, "username", username)
        _set(self, "password", password)
        _set(self, "validate_certs", validate_certs)
        _set(self, "cafile", cafile)
        _set(self, "sender", sender)
        _set(self, "local_hostname", local_hostname)
        _set(self, "verify", verify)
        _set(self, "ssl_context", ssl_context)
        if not validate_certs:
            renamed_option("SMTPSettings", "validate_certs", "verify")

    @property
    def effective_port(self) -> int:
        """The port to use: ``port``, else 465 with implicit TLS, else 25."""
        return self.port or (465 if self.tls else 25)

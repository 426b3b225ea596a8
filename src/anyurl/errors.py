"""The one exception tree of anyurl.

Every error a public call raises is an :class:`AnyURLError`. Each also
inherits the built-in exception a caller would naturally catch::

    AnyURLError(Exception)
    ├── URLSyntaxError(ValueError)        the text is not a valid URL
    ├── UnsupportedScheme(ValueError)     no handler for the scheme
    ├── UnsafeURL(ValueError)             decoded bytes that would inject commands,
    │                                     or a target the policy refuses
    ├── NotRetrievable                    the URL designates no data object
    │                                     (mailto, telnet): use another call
    ├── ConfigurationError                a needed setting is missing
    ├── NotSupported                      the scheme has no way to do what was asked
    │                                     (stat of a telnet URL, a byte range of a menu)
    └── TransferError                     something went wrong talking to a server
        ├── ResourceNotFound(FileNotFoundError)
        ├── AccessDenied(PermissionError)
        ├── ConnectError(ConnectionError)
        ├── FetchTimeout(TimeoutError)
        │   └── PoolTimeout               no free connection to the host in time
        ├── ProtocolError                 the server said something unexpected
        │   └── TemporaryFailure          a 4xx-style reply: retrying may help
        ├── TruncatedTransfer             fewer bytes arrived than the server promised
        └── OverlongTransfer              more bytes arrived than the server announced

Foreign exceptions (aiohttp, asyncio, ssl, OSError) are translated at
the boundary with ``raise ... from exc``; none escapes a public call.

Each error carries ``url`` (the URL text with any password masked), an
optional ``reply`` (the server's code and text) and the CLI ``exit_code``.
The error that ends a call made under a :class:`~anyurl.settings.Retry` of more
than one attempt also carries ``history``: one :class:`Attempt` per try.
"""

from __future__ import annotations

__all__ = [
    "AccessDenied",
    "AnyURLError",
    "ConfigurationError",
    "ConnectError",
    "FetchTimeout",
    "NotRetrievable",
    "NotSupported",
    "OverlongTransfer",
    "PoolTimeout",
    "ProtocolError",
    "ResourceNotFound",
    "TemporaryFailure",
    "TransferError",
    "TruncatedTransfer",
    "URLSyntaxError",
    "UnsafeURL",
    "UnsupportedScheme",
    "mask_password",
]

_SCHEME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+.-")


def mask_password(url: str) -> str:
    """Return *url* with the password of its authority replaced by ``****``.

    The authority is ``scheme://user:password@``, the user without ``/@:``,
    the password without ``/@``. String methods, not ``re``: `anyurl
    --version` and the error path need no regex engine (~7 ms of start-up).
    """
    scheme, sep, rest = url.partition("://")
    if not sep or not scheme or not scheme[0].isascii() or not scheme[0].isalpha() \
            or not _SCHEME_CHARS.issuperset(scheme):
        return url
    at = rest.find("@")
    colon = rest.find(":", 0, at)
    if at < 0 or colon < 0 or "/" in rest[:at]:
        return url
    return f"{scheme}://{rest[:colon]}:****{rest[at:]}"


class Attempt:
    """One failed try of a call under a :class:`~anyurl.settings.Retry` policy: its
    ``error`` and the ``delay`` in seconds waited before the next try (None: there was
    no next try, this error ended the call). Immutable. (Here, not in settings.py, so
    that :attr:`AnyURLError.history` has its type; ``anyurl.settings`` re-exports it.)
    """

    __slots__ = ("delay", "error")
    error: AnyURLError
    delay: float | None

    def __init__(self, error: AnyURLError, delay: float | None = None) -> None:
        object.__setattr__(self, "error", error)
        object.__setattr__(self, "delay", delay)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Attempt is immutable (cannot set {name!r})")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Attempt is immutable (cannot delete {name!r})")

    def __eq__(self, other: object) -> bool:
        if type(other) is not Attempt:
            return NotImplemented
        return self.error is other.error and self.delay == other.delay

    def __hash__(self) -> int:
        return hash((id(self.error), self.delay))

    def __reduce__(self) -> tuple[type[Attempt], tuple[AnyURLError, float | None]]:
        return Attempt, (self.error, self.delay)

    def __repr__(self) -> str:
        return f"Attempt(error={self.error!r}, delay={self.delay!r})"


class AnyURLError(Exception):
    """Root of every error anyurl raises."""

    exit_code = 1
    #: the tries of the call this error ended, in order, this error's the last (with delay
    #: None); empty when the call had no retries to make (``Retry.attempts`` 1). The
    #: message never changes with them: say "after N tries" from ``len(history)``.
    history: tuple[Attempt, ...] = ()
    #: a fetch with ``capture=True`` that a limit cut (a size limit, a timeout): what arrived,
    #: its ``truncated`` saying which limit (:class:`anyurl.response.Capture`); else None
    capture: object = None

    def __init__(self, message: str, *, url: object = None, reply: str | None = None) -> None:
        self.message = message
        self.url = mask_password(str(url)) if url is not None else None
        self.reply = reply
        super().__init__(message)

    def __str__(self) -> str:
        text = self.message
        if self.reply and self.reply not in text:
            text = f"{text} (server said: {self.reply})"
        if self.url:
            text = f"{self.url}: {text}"
        return text


class URLSyntaxError(AnyURLError, ValueError):
    """The text is not a valid URL. ``position`` is the 0-based offset, ``rule`` the BNF rule broken."""

    exit_code = 2

    def __init__(self, message: str, *, url: object = None, position: int | None = None,
                 rule: str | None = None) -> None:
        self.position = position
        self.rule = rule
        where = []
        if position is not None:
            where.append(f"at position {position}")
        if rule:
            where.append(f"rule <{rule}>")
        if where:
            message = f"{message} ({', '.join(where)})"
        super().__init__(message, url=url)


class UnsupportedScheme(AnyURLError, ValueError):
    """No handler is registered for the URL's scheme."""

    exit_code = 3


class UnsafeURL(AnyURLError, ValueError):
    """The URL would put control bytes on a command line, or targets something the policy refuses."""

    exit_code = 4


class NotRetrievable(AnyURLError):
    """The URL designates no data object (mailto, telnet); the message names what to use instead."""

    exit_code = 5


class ConfigurationError(AnyURLError):
    """A setting the request needs is missing or invalid (for example no news server)."""

    exit_code = 6


class NotSupported(AnyURLError):
    """The scheme has no way to do what was asked (for example ``stat`` of a telnet URL)."""

    exit_code = 7


class TransferError(AnyURLError):
    """Base of the errors that happen while talking to a server or reading a file."""

    exit_code = 10


class ResourceNotFound(TransferError, FileNotFoundError):
    """The server (or file system) says the resource does not exist."""

    exit_code = 11


class AccessDenied(TransferError, PermissionError):
    """Login failed or the resource may not be read."""

    exit_code = 12


class ConnectError(TransferError, ConnectionError):
    """The connection could not be made or was lost before a reply."""

    exit_code = 13


class FetchTimeout(TransferError, TimeoutError):
    """A connect, read or total timeout expired."""

    exit_code = 14


class PoolTimeout(FetchTimeout):
    """Every connection to the host stayed busy for the whole acquire timeout.

    Distinct from a connect timeout: the server was never asked. Raise
    ``Limits.per_host`` or ``Timeouts.pool`` when this happens under load.
    """

    exit_code = 18


class ProtocolError(TransferError):
    """The server replied with an error or with something the protocol does not allow."""

    exit_code = 15


class TemporaryFailure(ProtocolError):
    """A transient server error (FTP 4xx, NNTP 400, HTTP 503...): a retry may succeed.

    ``retry_after`` is the delay in seconds the server asked for (HTTP ``Retry-After``), if any.
    """

    exit_code = 16

    def __init__(self, message: str, *, url: object = None, reply: str | None = None,
                 retry_after: float | None = None) -> None:
        self.retry_after = retry_after
        super().__init__(message, url=url, reply=reply)


class TruncatedTransfer(TransferError):
    """The transfer ended before all the data arrived. Never reported as success."""

    exit_code = 17


class OverlongTransfer(TransferError):
    """More bytes arrived than the server announced (FTP SIZE): the data is not what was described."""

    exit_code = 19


# -- the one table of foreign exceptions ----------------------------------------------------


def os_reason(exc: OSError) -> str:
    """The system's words for *exc*: asyncio's own loop says "Connect call failed ('127.0.0.1', 1)"
    where uvloop says "Connection refused"; resolver errors (negative codes) keep their text."""
    import os  # here: start-up (errors load first, and most runs raise nothing)

    return os.strerror(exc.errno) if exc.errno and exc.errno > 0 else str(exc.strerror or exc)


def tls_reason(exc: BaseException) -> str:
    """ssl's words for a TLS failure, without the ``[SSL: CODE]`` prefix and the C source line
    (never ``os_reason``: an SSL error's errno is OpenSSL's, which ``os.strerror`` misreads as
    "Operation not permitted")."""
    verify = getattr(exc, "verify_message", None)  # ssl.SSLCertVerificationError
    if verify:
        return f"certificate verify failed: {verify}"
    args = exc.args
    text = str(args[1] if len(args) > 1 and isinstance(args[1], str) else exc)
    if text.startswith("[") and "] " in text:
        text = text.split("] ", 1)[1]
    cut = text.rfind(" (_ssl.c:")
    return (text[:cut] if cut >= 0 else text) or type(exc).__name__


def is_tls_error(exc: BaseException) -> bool:
    """Whether *exc* is an ssl.SSLError (ssl is only looked at when it is loaded)."""
    import sys

    ssl = sys.modules.get("ssl")
    return ssl is not None and isinstance(exc, ssl.SSLError)


def translate(exc: BaseException, url: object, *, doing: str | None = None) -> AnyURLError:
    """The anyurl error for a foreign exception (OS, asyncio, ssl, aiohttp): the one table.

    *doing* names the network step it broke ("requesting ...", "reading the body"): an
    OSError then is a lost connection, where without one it is local I/O. A connect's errors
    are worded by :mod:`anyurl.net.connect`, around the connect. aiohttp's classes are only
    looked at when that module is loaded: nothing is imported here.
    """
    import sys

    if isinstance(exc, AnyURLError):
        return exc
    where = f" while {doing}" if doing else ""
    if isinstance(exc, TimeoutError):  # asyncio.TimeoutError is TimeoutError
        return FetchTimeout(f"timed out{where}", url=url)
    aiohttp = sys.modules.get("aiohttp")
    if aiohttp is not None and isinstance(exc, aiohttp.ClientError):
        return _from_aiohttp(exc, url, where, aiohttp)
    if isinstance(exc, ConnectionError) or (doing and isinstance(exc, OSError)):
        return ConnectError(f"connection failed{where}: {exc}", url=url)
    if isinstance(exc, OSError):
        return TransferError(f"I/O error: {exc.strerror or exc}", url=url)
    if doing:
        return ProtocolError(f"error{where}: {type(exc).__name__}: {exc}", url=url)
    return ProtocolError(f"unexpected error: {type(exc).__name__}: {exc}", url=url)


def _from_aiohttp(exc: BaseException, url: object, where: str, aiohttp: object) -> AnyURLError:
    a = aiohttp
    if isinstance(exc, a.ClientPayloadError):  # type: ignore[attr-defined]
        return TruncatedTransfer(f"transfer broken{where}: {exc}", url=url)
    if isinstance(exc, a.ClientResponseError) and exc.status == 400:  # type: ignore[attr-defined]
        # aiohttp's parser refused the reply; bytes after a complete body (more than its
        # Content-Length, with Connection: close) also end up here, as the next "response"
        detail = " ".join(line.strip() for line in str(exc.message).splitlines()[:2]).rstrip(":")
        if detail.startswith("Data after"):
            return OverlongTransfer(f"server sent more than the response announced{where} "
                                    f"(data after the end of the body)", url=url)
        return ProtocolError(f"invalid HTTP from the server{where}: {detail} "
                             "(or more data than the previous body announced)", url=url)
    if isinstance(exc, a.InvalidURL):  # type: ignore[attr-defined]
        return UnsafeURL(f"aiohttp refused the URL: {exc}", url=url)
    if isinstance(exc, a.ClientConnectorError):  # type: ignore[attr-defined]
        # not aiohttp's "Cannot connect to host ... ssl:default"
        what = "proxy " if isinstance(exc, a.ClientProxyConnectionError) else ""  # type: ignore[attr-defined]
        os_error = exc.os_error
        if is_tls_error(os_error):
            return ConnectError(f"TLS handshake with {what}{exc.host}:{exc.port} failed: {tls_reason(os_error)}",
                                url=url)
        reason = os_reason(os_error) if isinstance(os_error, OSError) and os_error.errno else str(os_error)
        return ConnectError(f"cannot connect to {what}{exc.host}:{exc.port}: {reason}", url=url)
    if isinstance(exc, a.ClientConnectionError):  # type: ignore[attr-defined]
        return ConnectError(f"connection failed{where}: {exc}", url=url)
    return ProtocolError(f"HTTP error{where}: {type(exc).__name__}: {exc}", url=url)

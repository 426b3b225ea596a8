"""The interface every scheme handler implements, and helpers they share."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

from ..errors import (
    ConfigurationError,
    NotRetrievable,
    NotSupported,
)
from ..net.bulk import prime_allocator
from ..protocols.lines import refuse_controls
from ..response import Body, Entry, Stat, entry_line
from ..settings import Request

if TYPE_CHECKING:
    from collections.abc import Callable
    from os import PathLike
    from typing import BinaryIO

    from ..net.pool import Pool
    from ..settings import Limits, Policy, Retry, Timeouts
    from ..urls import URL

__all__ = ["Context", "Handler", "Request", "apply_length", "prime_allocator", "refuse_controls",
           "refuse_range", "render_entries"]

T = TypeVar("T")


class Context(Protocol):
    """What a driver may ask of the Client that owns it, and nothing more.

    :class:`anyurl.Client` provides it; a test double (tests/doubles.py) can too. Settings are
    read-only here: a driver never changes its Client.
    """

    @property
    def timeouts(self) -> Timeouts: ...
    @property
    def limits(self) -> Limits: ...
    @property
    def policy(self) -> Policy: ...
    @property
    def user_agent(self) -> str: ...
    @property
    def anonymous_email(self) -> str: ...
    @property
    def news_server(self) -> str | None: ...
    @property
    def form_callback(self) -> Callable[..., Any] | None: ...

    def options_for(self, name: str, cls: type[T]) -> T:
        """The scheme options given to the Client as ``name=``, or ``cls()``."""
        ...

    def credentials_for(self, host: str, port: int | None = None,
                        user: str | None = None) -> tuple[str, str] | None:
        """(user, password) for a server from the Client's credentials or ~/.netrc."""
        ...

    async def ask_password(self, user: str, host: str) -> str | None:
        """The password callback's answer, else a stored password."""
        ...

    def proxy_for(self, scheme: str, host: str, port: int | None = None) -> str | None:
        """The proxy URL for a target, or None for a direct connection."""
        ...

    def parse(self, url: str | URL) -> URL:
        """*url* as a URL value."""
        ...

    def handler(self, url: URL) -> Handler:
        """The driver of *url*'s scheme: how a driver follows a URL a server gave it."""
        ...

    def request(self, url: str | URL, *, timeouts: Timeouts | None = None, limits: Limits | None = None,
                retry: Retry | None = None, offset: int = 0, length: int | None = None,
                options: object | None = None, max_size: int | None = None) -> Request:
        """The Request a call with these arguments would hand its driver."""
        ...


class Handler:
    """A scheme driver. One instance per Client, so it may keep connection pools.

    Each call gets a :class:`~anyurl.settings.Request`: the URL, the timeouts
    and limits in force for that call, its byte range and per-request scheme
    options. ``open`` returns a streaming :class:`Body`; a directory-like
    resource sets ``Body.entries``. ``stat`` returns metadata without the body.
    """

    #: the options class read from ``Client(<name>=...)`` and ``options=`` per request
    options_name: ClassVar[str | None] = None
    #: the driver's connection pool, when it keeps one (:meth:`pools` lists every pool it has)
    pool: Pool[Any] | None = None

    def __init__(self, context: Context) -> None:
        self.context = context

    def options(self, req: Request, cls: type[T]) -> T:
        """The per-request options object when given, else the Client's, else ``cls()``."""
        if req.options is not None:
            if not isinstance(req.options, cls):
                raise ConfigurationError(
                    f"options= for a {req.url.scheme} URL must be a {cls.__name__}, "
                    f"not {type(req.options).__name__}", url=req.url)
            return req.options
        return self.context.options_for(self.options_name or req.url.scheme, cls)

    async def open(self, req: Request) -> Body:
        """Open ``req.url`` for streaming from byte ``req.offset`` (``req.length`` bytes)."""
        raise NotRetrievable(f"{req.url.scheme} URLs designate no data object", url=req.url)

    async def stat(self, req: Request) -> Stat:
        """Metadata of ``req.url`` with the fewest round trips, without the body."""
        raise NotSupported(f"{req.url.scheme} URLs have no way to ask for metadata", url=req.url)

    async def upload(self, req: Request, source: bytes | str | PathLike[str] | BinaryIO) -> None:
        """Store *source* (bytes, a local path or a binary file object) at ``req.url``."""
        raise NotRetrievable(f"{req.url.scheme} URLs cannot be written to", url=req.url)

    async def connect(self, req: Request, **session_options: Any) -> Any:
        """Open an interactive session (telnet)."""
        raise NotRetrievable(f"{req.url.scheme} URLs do not designate a session", url=req.url)

    async def send_mail(self, req: Request, **fields: Any) -> Any:  # each scheme names its fields
        """Send a message (mailto)."""
        raise NotRetrievable(f"{req.url.scheme} URLs do not designate a mailbox", url=req.url)

    async def aclose(self) -> None:
        """Close pooled connections."""

    # -- what a batch (anyurl.transfer.batch) or the Client may ask a driver --------------
    # Each has a default, so a driver answers only what applies to it; callers never probe
    # a driver's attributes.

    def multiplexed(self, url: URL) -> bool:
        """True when a request for *url* would share a connection open now with others (an
        HTTP/2 stream, a pipelined GET or news window, an FTP command queued behind a
        transfer): a batch may then run more requests at once than ``Limits.per_host``."""
        return False

    async def negotiated(self, url: URL) -> bool:
        """:meth:`multiplexed`, after waiting for a connection being opened to *url*'s origin to
        pick its protocol (TLS ALPN), when that is under way: a batch's streams start at the
        handshake rather than after a first response."""
        return False

    def pipeline_depth(self, url: URL) -> int:
        """How many requests one connection to *url*'s origin may carry at once when it
        pipelines (0: no bound of its own; the batch's stream workers apply)."""
        return 0

    def pools(self) -> tuple[Pool[Any], ...]:
        """The connection pools this driver keeps (its parts' too), each once."""
        return () if self.pool is None else (self.pool,)

    def abort_idle(self) -> None:
        """Close every idle pooled socket now, with no event loop (the loop was closed)."""
        for pool in self.pools():
            pool.abort_idle()


def refuse_range(req: Request) -> None:
    """Raise NotSupported when a byte range was asked of a scheme that cannot honour it."""
    if req.offset or req.length is not None:
        raise NotSupported(f"{req.url.scheme} URLs do not support byte ranges (offset/length)", url=req.url)


def render_entries(entries: list[Entry]) -> bytes:
    """A plain-text listing of *entries*, one per line, for ``get`` on a directory."""
    lines = [entry_line(e) for e in entries]
    return ("\n".join(lines) + "\n").encode("utf-8", "surrogateescape") if lines else b""


def apply_length(body: Body, length: int | None) -> Body:
    """Cut *body* after *length* bytes (a ranged read); closing it stops the transfer.

    Used by handlers that start at an offset natively (REST, Range, seek) but
    have no way to tell the server where to stop.
    """
    return body if length is None else body.cut_after(length)

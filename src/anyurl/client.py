"""Client: configuration values, registry lookup, per-handler pools, policy."""

from __future__ import annotations

import asyncio
import inspect
import netrc
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from .errors import AnyURLError, ConfigurationError, FetchTimeout
from .handlers.base import Handler
from .registry import handler_class
from .response import Body, Response, translate_errors
from .urls import URL, parse

__all__ = ["Client", "Limits", "Policy", "Timeouts", "connect", "fetch", "fetch_sync", "open"]

T = TypeVar("T")
PasswordCallback = Callable[[str, str], "str | None | Awaitable[str | None]"]


@dataclass(frozen=True)
class Timeouts:
    """Seconds. ``connect``: to open a connection; ``read``: idle time waiting for
    data or a reply; ``total``: a whole ``fetch`` (None: no limit)."""

    connect: float = 30.0
    read: float = 60.0
    total: float | None = None


@dataclass(frozen=True)
class Limits:
    """Bounds that keep memory and connections in check."""

    max_size: int | None = None  # bytes fetch() will hold in memory (None: no limit)
    max_line: int = 64 * 1024  # one protocol reply line
    max_entries: int = 1_000_000  # entries of one listing
    max_reply_lines: int = 10_000  # lines of one multi-line control reply
    per_host: int = 8  # concurrent connections to one server
    max_redirects: int = 10
    chunk_size: int = 1 << 20  # read size for data streams


@dataclass(frozen=True)
class Policy:
    """Security policy. The defaults refuse what PEERS.md lists as attacks."""

    allow_cross_scheme_redirects: bool = False  # http -> ftp/file/gopher
    allow_https_downgrade: bool = False  # https -> http redirect
    allow_gopher_to_service_ports: bool = False  # gopher://host:25/ etc. (RFC 1738 s. 6)
    allow_file_urls: bool = True


def _default_email() -> str:
    user = os.environ.get("USER") or os.environ.get("LOGNAME") or "anonymous"
    return f"{user}@localhost"


class Client:
    """Holds configuration and connection pools; fetch, open, upload URLs.

    Use ``async with Client() as client:`` so pooled connections are closed.
    Scheme-specific options are passed as keyword arguments named after the
    scheme's handler (``Client(ftp=FTPOptions(...))``) and read back by the
    handler with :meth:`options_for`.
    """

    def __init__(
        self,
        *,
        timeouts: Timeouts | None = None,
        limits: Limits | None = None,
        policy: Policy | None = None,
        anonymous_email: str | None = None,
        credentials: Mapping[str, tuple[str, str]] | None = None,
        password_callback: PasswordCallback | None = None,
        form_callback: Callable[..., Any] | None = None,
        use_netrc: bool = True,
        news_server: str | None = None,
        user_agent: str | None = None,
        **scheme_options: Any,
    ) -> None:
        from . import __version__

        self.timeouts = timeouts or Timeouts()
        self.limits = limits or Limits()
        self.policy = policy or Policy()
        self.anonymous_email = anonymous_email or os.environ.get("ANYURL_EMAIL") or _default_email()
        self.credentials = dict(credentials or {})
        self.password_callback = password_callback
        self.form_callback = form_callback
        self.use_netrc = use_netrc
        self.news_server = news_server
        self.user_agent = user_agent or f"anyurl/{__version__}"
        self.scheme_options = scheme_options
        self._handlers: dict[type[Handler], Handler] = {}
        self._closed = False

    # -- configuration helpers handlers use ---------------------------------

    def options_for(self, name: str, cls: type[T]) -> T:
        """The options object passed as ``Client(name=...)``, or ``cls()``."""
        value = self.scheme_options.get(name)
        if value is None:
            return cls()
        if not isinstance(value, cls):
            raise ConfigurationError(f"Client option {name!r} must be a {cls.__name__}")
        return value

    def credentials_for(self, host: str, port: int | None = None,
                        user: str | None = None) -> tuple[str, str] | None:
        """(user, password) for a server: Client ``credentials`` (keyed "host:port" or
        "host"), then ~/.netrc. With *user* given, only a matching login counts."""
        for key in ((f"{host}:{port}",) if port else ()) + (host,):
            cred = self.credentials.get(key)
            if cred and (user is None or cred[0] == user):
                return cred
        if self.use_netrc:
            try:
                auth = netrc.netrc().authenticators(host)
            except (FileNotFoundError, netrc.NetrcParseError, OSError):
                auth = None
            if auth and auth[2] is not None and (user is None or auth[0] == user):
                return (auth[0] or (user or ""), auth[2])
        return None

    async def ask_password(self, user: str, host: str) -> str | None:
        """Ask the password callback, then look in credentials/~/.netrc."""
        if self.password_callback is not None:
            answer = self.password_callback(user, host)
            if inspect.isawaitable(answer):
                answer = await answer
            if answer is not None:
                return str(answer)
        cred = self.credentials_for(host, user=user)
        return cred[1] if cred else None

    # -- dispatch -------------------------------------------------------------

    def parse(self, url: str | URL) -> URL:
        """Parse *url* if it is text."""
        return url if isinstance(url, URL) else parse(url)

    def handler(self, url: URL) -> Handler:
        """The (per-Client) handler instance for *url*'s scheme."""
        if self._closed:
            raise ConfigurationError("this Client is closed", url=url)
        cls = handler_class(url.scheme, url)
        inst = self._handlers.get(cls)
        if inst is None:
            inst = self._handlers[cls] = cls(self)
        return inst

    async def _call(self, url: URL, coro: Awaitable[T]) -> T:
        try:
            return await coro
        except AnyURLError:
            raise
        except Exception as exc:
            raise translate_errors(exc, url) from exc

    @asynccontextmanager
    async def open(self, url: str | URL, *, offset: int = 0, **options: Any) -> AsyncIterator[Body]:
        """Stream a resource: ``async with client.open(url) as body: async for chunk in body``."""
        u = self.parse(url)
        body = await self._call(u, self.handler(u).open(u, offset=offset, **options))
        try:
            yield body
        finally:
            await body.aclose()

    async def fetch(self, url: str | URL, *, offset: int = 0, max_size: int | None = None,
                    **options: Any) -> Response:
        """Retrieve a whole resource into memory."""
        u = self.parse(url)
        limit = max_size if max_size is not None else self.limits.max_size
        try:
            async with asyncio.timeout(self.timeouts.total):
                async with self.open(u, offset=offset, **options) as body:
                    content = await body.read(limit)
        except TimeoutError as exc:
            if isinstance(exc, AnyURLError):
                raise
            raise FetchTimeout(f"fetch took longer than {self.timeouts.total} s", url=u) from exc
        return Response(url=str(u), content=content, content_type=body.content_type,
                        size=len(content), entries=body.entries, meta=body.meta,
                        charset=body.charset)

    async def upload(self, url: str | URL, source: bytes | str | os.PathLike[str], **options: Any) -> None:
        """Store *source* (bytes, or a local file path) at *url* (FTP STOR)."""
        u = self.parse(url)
        await self._call(u, self.handler(u).upload(u, source, **options))

    async def connect(self, url: str | URL, **options: Any) -> Any:
        """Open an interactive session for a telnet URL."""
        u = self.parse(url)
        return await self._call(u, self.handler(u).connect(u, **options))

    async def send_mail(self, url: str | URL, **options: Any) -> Any:
        """Compose and send a message to a mailto URL."""
        u = self.parse(url)
        return await self._call(u, self.handler(u).send_mail(u, **options))

    async def aclose(self) -> None:
        """Close every pooled connection."""
        self._closed = True
        handlers, self._handlers = list(self._handlers.values()), {}
        for h in handlers:
            try:
                await h.aclose()
            except Exception:  # closing must not hide the caller's own error
                pass

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


# -- module-level conveniences: one short-lived Client per call ----------------


async def fetch(url: str | URL, **options: Any) -> Response:
    """Retrieve *url* with a default Client. See :meth:`Client.fetch`."""
    async with Client() as client:
        return await client.fetch(url, **options)


@asynccontextmanager
async def open(url: str | URL, **options: Any) -> AsyncIterator[Body]:  # noqa: A001
    """Stream *url* with a default Client. See :meth:`Client.open`."""
    async with Client() as client, client.open(url, **options) as body:
        yield body


def fetch_sync(url: str | URL, **options: Any) -> Response:
    """Blocking :func:`fetch` for scripts (runs its own event loop)."""
    return asyncio.run(fetch(url, **options))


@asynccontextmanager
async def connect(url: str | URL, **options: Any) -> AsyncIterator[Any]:
    """``async with anyurl.connect("telnet://host") as session:``"""
    async with Client() as client:
        session = await client.connect(url, **options)
        try:
            yield session
        finally:
            close = getattr(session, "close", None)
            if close is not None:
                res = close()
                if inspect.isawaitable(res):
                    await res

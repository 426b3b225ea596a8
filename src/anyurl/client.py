"""Client: configuration values, registry lookup, per-handler pools, policy."""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager, suppress
from typing import TYPE_CHECKING, Any, BinaryIO, NoReturn, TypeVar

from . import settings as _settings
from .errors import AnyURLError, ConfigurationError, FetchTimeout, NotSupported
from .handlers.base import Handler
from .links import (
    THREAD_PARSE_BYTES,
    PageMeta,
    PageResponse,
    body_entries,
    page_base_url,
    parse_page_in_thread,
)
from .registry import handler_class, resolved_classes
from .response import Body, Capture, Entry, Response, Stat, is_html, translate_errors
from .schemes import OPTIONS_CLASSES
from .settings import (
    FTPOptions,
    GopherOptions,
    HTTPOptions,
    Limits,
    NewsOptions,
    Policy,
    ProsperoOptions,
    Request,
    Retry,
    SMTPSettings,
    Timeouts,
    WAISOptions,
)
from .urls import URL, parse

if TYPE_CHECKING:
    from .transfer.walk import Found

__all__ = ["Client", "Limits", "Policy", "Retry", "Timeouts", "connect", "fetch", "fetch_sync", "open"]

log = logging.getLogger("anyurl")

# Client(<name>=...) scheme options: the class each must be (checked by name here,
# so that building a Client imports no handler; handlers check the class itself).
# every variable protocols.proxy.select_proxy may read (HTTP_PROXY never is: "httpoxy")
_PROXY_VARIABLES = ("http_proxy", "https_proxy", "HTTPS_PROXY", "ftp_proxy", "FTP_PROXY",
                    "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY")

T = TypeVar("T")
E = TypeVar("E", bound=AnyURLError)
PasswordCallback = Callable[[str, str], "str | None | Awaitable[str | None]"]


def _default_email() -> str:
    user = os.environ.get("USER") or os.environ.get("LOGNAME") or "anonymous"
    return f"{user}@localhost"


class Client:
    """Holds configuration and connection pools; fetch, open, upload URLs.

    Use ``async with Client() as client:`` so pooled connections are closed.
    Scheme options are passed by the scheme's name (``Client(ftp=FTPOptions(...))``)
    and read back by the handler with :meth:`options_for`; a third-party
    handler's options go in ``scheme_options={"name": obj}``. An unknown keyword
    raises ``TypeError`` like any Python function.
    """

    def __init__(
        self,
        *,
        timeouts: Timeouts | None = None,
        limits: Limits | None = None,
        policy: Policy | None = None,
        retry: Retry | None = None,
        anonymous_email: str | None = None,
        credentials: Mapping[str, tuple[str, str]] | None = None,
        password_callback: PasswordCallback | None = None,
        form_callback: Callable[..., Any] | None = None,
        use_netrc: bool = True,
        news_server: str | None = None,
        user_agent: str | None = None,
        proxy: str | None = None,
        no_proxy: str | None = None,
        trust_env: bool = True,
        ftp: FTPOptions | None = None,
        http: HTTPOptions | None = None,
        gopher: GopherOptions | None = None,
        news: NewsOptions | None = None,
        wais: WAISOptions | None = None,
        prospero: ProsperoOptions | None = None,
        smtp: SMTPSettings | None = None,
        scheme_options: Mapping[str, object] | None = None,
        capture: bool = False,
        on_capture: Callable[[Capture, Body], None] | None = None,
    ) -> None:
        from .version import __version__

        self.timeouts = _typed("timeouts", timeouts, Timeouts) or Timeouts()
        self.limits = _typed("limits", limits, Limits) or Limits()
        self.policy = _typed("policy", policy, Policy) or Policy()
        self.retry = _typed("retry", retry, Retry) or Retry()
        # proxy: used for every proxied scheme; None: from the environment when trust_env
        self.proxy = proxy
        self.no_proxy = no_proxy
        self.trust_env = trust_env
        self.anonymous_email = anonymous_email or os.environ.get("ANYURL_EMAIL") or _default_email()
        self.credentials = dict(credentials or {})
        self.password_callback = password_callback
        self.form_callback = form_callback
        self.use_netrc = use_netrc
        self.news_server = news_server
        self.user_agent = user_agent or f"anyurl/{__version__}"
        # every request keeps what crossed the wire (Response.capture): for archiving (anyurl.warc);
        # on_capture(capture, body) is called as each body captured arrives whole (a WARC writer's
        # ``captured``), whether it was fetched, opened, listed or walked
        self.capture = capture or on_capture is not None
        self.on_capture = on_capture
        named = {"ftp": ftp, "http": http, "gopher": gopher, "news": news, "wais": wais,
                 "prospero": prospero, "smtp": smtp}
        self.scheme_options: dict[str, object] = dict(scheme_options or {})
        for name, value in named.items():
            if value is None:
                continue
            want = OPTIONS_CLASSES[name]
            if not isinstance(value, getattr(_settings, want)):
                raise ConfigurationError(f"Client({name}=...) must be a {want}, not {type(value).__name__}")
            self.scheme_options[name] = value
        self._handlers: dict[type[Handler], Handler] = {}
        # scheme -> (handler class, its instance), once looked up
        self._by_scheme: dict[str, tuple[type[Handler], Handler]] = {}
        self._closed = False
        self._loop: asyncio.AbstractEventLoop | None = None  # the loop its connections belong to
        self._loop_end: AsyncGenerator[None, None] | None = None  # closed by the loop's shutdown
        self._proxy_settings: tuple[str | None, str | None, bool] | None = None
        self._proxy_env: dict[str, str] | None = None
        self._proxy_answers: dict[tuple[str, str, int | None], str | None] = {}

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
            import netrc  # here: it (and shlex) load only when a login is looked up

            try:
                auth = netrc.netrc().authenticators(host)
            except (FileNotFoundError, netrc.NetrcParseError, OSError):
                auth = None
            if auth and auth[2] is not None and (user is None or auth[0] == user):
                return (auth[0] or (user or ""), auth[2])
        return None

    def proxy_for(self, scheme: str, host: str, port: int | None = None) -> str | None:
        """The proxy URL a *scheme* request to *host*:*port* goes through, or None (direct).

        ``Client(proxy=...)`` for every proxied scheme (http, https, ftp; "" for none),
        else with ``trust_env`` the ``<scheme>_proxy`` variables; ``no_proxy`` (the
        Client's, else the environment's) lists the hosts reached directly. The
        environment is read once, at the first call (the Client's first request).
        See :mod:`anyurl.protocols.proxy`.
        """
        settings = (self.proxy, self.no_proxy, self.trust_env)
        if settings != self._proxy_settings:
            # the environment is read once (at the first request), the answer kept per host
            self._proxy_settings = settings
            self._proxy_env = {name: value for name in _PROXY_VARIABLES
                               if (value := os.environ.get(name)) is not None} if self.trust_env else None
            self._proxy_answers = {}
        key = (scheme, host, port)
        try:
            return self._proxy_answers[key]
        except KeyError:
            pass
        from .protocols.proxy import select_proxy  # here: ipaddress, which file and gopher never need

        try:
            answer = select_proxy(scheme, host, port, proxy=self.proxy, no_proxy=self.no_proxy,
                                  env=self._proxy_env)
        except ValueError as exc:
            raise ConfigurationError(str(exc)) from None
        if len(self._proxy_answers) >= 4096:  # bounded: a crawl meets many hosts
            self._proxy_answers.clear()
        self._proxy_answers[key] = answer
        return answer

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

    @property
    def started(self) -> bool:
        """True once this Client has made a driver (it may hold connections): a batch begins
        early connections only for a Client that has not (:mod:`anyurl.transfer.batch`)."""
        return bool(self._handlers)

    def handler(self, url: URL) -> Handler:
        """The (per-Client) handler instance for *url*'s scheme."""
        if self._closed:
            raise ConfigurationError("this Client is closed", url=url)
        scheme = url.scheme
        if scheme != "ftp":  # (ftp may go through an HTTP proxy: decided per URL below)
            cached = self._by_scheme.get(scheme)
            if cached is not None and resolved_classes.get(scheme) is cached[0]:  # (not re-registered)
                return cached[1]
        cls = handler_class(scheme, url)
        if url.scheme == "ftp" and self.proxy_for("ftp", getattr(url, "host", ""), getattr(url, "port", None)):
            cls = handler_class("http", url)  # ftp through an HTTP proxy, as curl and Lynx do
        inst = self._handlers.get(cls)
        if inst is None:
            inst = self._handlers[cls] = cls(self)
        if scheme != "ftp":
            self._by_scheme[scheme] = (cls, inst)
        return inst

    async def _call(self, url: URL, coro: Awaitable[T]) -> T:
        try:
            return await coro
        except AnyURLError:
            raise
        except Exception as exc:
            raise translate_errors(exc, url) from exc

    def request(self, url: str | URL, *, timeouts: Timeouts | None = None, limits: Limits | None = None,
                retry: Retry | None = None, offset: int = 0, length: int | None = None,
                options: object | None = None, max_size: int | None = None,
                capture: bool | None = None) -> Request:
        """The :class:`Request` a call with these arguments hands its handler (*max_size*:
        the caller refuses a larger body, see :class:`Request`; *capture*: None for the
        Client's ``capture``)."""
        u = url if isinstance(url, URL) else parse(url)
        t = self.timeouts if timeouts is None else _typed("timeouts", timeouts, Timeouts) or self.timeouts
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            self._bind(loop, u)
        deadline = None
        if t.total is not None:
            deadline = loop.time() + t.total
        return Request(u, t, self.limits if limits is None else _typed("limits", limits, Limits) or self.limits,
                       self.retry if retry is None else _typed("retry", retry, Retry) or self.retry,
                       offset, length, options, deadline, max_size,
                       self.capture if capture is None else capture)

    def _bind(self, loop: asyncio.AbstractEventLoop, url: URL) -> None:
        """Tie the Client to *loop*. After ``asyncio.run`` ended the previous loop, its pooled
        connections are dead (their transports cannot even be closed there): drop them and
        start afresh. A Client whose loop still runs cannot serve a second one."""
        old = self._loop
        if old is not None and old.is_running():
            raise ConfigurationError(
                "this Client is in use on another event loop; a Client serves one loop at a time "
                "(make one Client per loop)", url=url)
        if old is not None:
            log.debug("Client moved to a new event loop: dropping the connections of the old one")
            self._handlers = {}
            self._by_scheme = {}
        self._loop = loop
        # A parked async generator: asyncio.run (and uvloop) close every open one before
        # closing the loop, so its ``finally`` closes the pooled connections politely while
        # the loop still runs, also for a Client nobody closed.
        agen = self._until_loop_end(loop)
        try:
            agen.asend(None).send(None)
        except StopIteration:
            self._loop_end = agen
            _close_at_exit(self)

    def _close_on_stopped_loop(self) -> None:
        """At interpreter exit: a loop stopped but never closed (nor shut down) never ends
        the parked generator, and its connections were left to the garbage collector
        ("unclosed transport"). Run that loop once more to close them politely; on a loop
        closed already, close their sockets without it."""
        loop, agen = self._loop, self._loop_end
        if loop is None or agen is None or loop.is_running():
            return
        if loop.is_closed():  # (closed with no shutdown_asyncgens): it can run no goodbye
            self._loop_end = None
            for handler in self._handlers.values():
                with suppress(Exception):
                    handler.abort_idle()
            return

        async def end() -> None:
            with suppress(Exception):
                async with asyncio.timeout(_EXIT_CLOSE_SECONDS):
                    await agen.aclose()

        task = loop.create_task(end())
        for _ in range(2):  # a loop.stop() asked before ends the first run after one pass
            with suppress(Exception):
                loop.run_until_complete(task)
            if task.done():
                break

    async def _until_loop_end(self, loop: asyncio.AbstractEventLoop) -> AsyncGenerator[None, None]:
        try:
            yield
        finally:
            # (not after aclose(), nor once the Client moved on to another loop)
            if self._loop is loop and self._loop_end is not None:
                self._loop_end = None
                await self._close_handlers()

    async def _open(self, req: Request, tries: _Tries | None = None) -> Body:
        """Open ``req`` with retries; the body resumes or retries mid-stream where allowed.
        *tries*: the call's retry loop, when the caller made it (to end it with its own error)."""
        scheme = req.url.scheme
        cached = self._by_scheme.get(scheme)
        if cached is not None and not self._closed and resolved_classes.get(scheme) is cached[0]:
            handler = cached[1]  # (handler()'s cached answer, inline)
        else:
            handler = self.handler(req.url)
        if req.retry.attempts <= 1 and req.deadline is None:  # the plain case: no retry, no guard
            try:  # (_call, inline: a coroutine less per request)
                opened = await handler.open(req)
            except AnyURLError:
                raise
            except Exception as exc:
                raise translate_errors(exc, req.url) from exc
            if req.capture:
                self._watch(opened)
            return opened
        if tries is None:
            tries = _Tries(self, req.retry)
        if req.deadline is None:
            body = await tries.run(req, handler.open)
        else:
            # the head is part of the stream: Timeouts.total bounds the open too, every scheme.
            # A handler whose own waits end at the deadline raises first, with its own words
            # (what it was waiting for): this guard catches the others, _OPEN_GRACE later.
            try:
                async with asyncio.timeout_at(req.deadline + _OPEN_GRACE):
                    body = await tries.run(req, handler.open)
            except TimeoutError as exc:
                _raise_past_total(req, exc, "opening", tries)
        if req.capture:
            self._watch(body)
        return _GuardedBody(tries, handler, req, body, self._watch if req.capture else None).outer

    def _watch(self, body: Body) -> None:
        """*body*'s capture goes to ``on_capture`` once it arrived whole."""
        if self.on_capture is not None:
            if body.capture is None:  # a driver that keeps none: the plainest, from its bytes
                body.capture = Capture(body.url.scheme if isinstance(body.url, URL) else "", str(body.url))
            body.capture.watch(self.on_capture, body)

    def open(self, url: str | URL, *, timeouts: Timeouts | None = None, limits: Limits | None = None,
             retry: Retry | None = None, offset: int = 0, length: int | None = None,
             options: object | None = None) -> AbstractAsyncContextManager[Body]:
        """Stream a resource: ``async with client.open(url) as body: async for chunk in body``.

        ``offset``/``length`` read a byte range where the scheme allows
        (others raise :class:`NotSupported`). ``Timeouts.total`` bounds the
        whole stream. ``options`` is a scheme options object for this call.
        """
        return _Opening(self, (url, timeouts, limits, retry, offset, length, options))

    async def fetch(self, url: str | URL, *, timeouts: Timeouts | None = None, limits: Limits | None = None,
                    retry: Retry | None = None, offset: int = 0, length: int | None = None,
                    options: object | None = None, max_size: int | None = None,
                    capture: bool | None = None) -> Response:
        """Retrieve a whole resource into memory (at most ``max_size`` or ``Limits.max_size`` bytes).

        ``capture=True`` (or ``Client(capture=True)``) keeps what crossed the wire in
        ``Response.capture`` (:class:`~anyurl.response.Capture`): the body as sent, the
        headers as received, the request, the peer, the times (for a WARC file)."""
        limit = max_size
        if limit is None:
            limit = (self.limits if limits is None else _typed("limits", limits, Limits) or self.limits).max_size
        req = self.request(url, timeouts=timeouts, limits=limits, retry=retry, offset=offset,
                           length=length, options=options, max_size=limit, capture=capture)
        tries = None if req.retry.attempts <= 1 else _Tries(self, req.retry)
        cut: Capture | None = None  # what arrived of a body a limit cut (a capture's)
        try:
            async with asyncio.timeout_at(req.deadline):
                body = await self._open(req, tries)
                try:
                    content = await body.read(limit)
                except BaseException as exc:
                    if body.capture is not None and _cut(req, body.capture, exc):
                        cut = body.capture
                    raise
                finally:
                    await body.aclose()
        except TimeoutError as exc:
            try:
                _raise_past_total(req, exc, "fetch", tries)
            except AnyURLError as err:
                err.capture = cut
                raise
        except AnyURLError as exc:
            exc.capture = cut
            raise
        cap = body.capture
        if req.capture:
            cap = _captured(req, body, content)
        if body.entries is None and req.url.scheme in ("http", "https") and not offset and length is None \
                and is_html(body.content_type):
            page = PageResponse(url=str(req.url), content=content, content_type=body.content_type,
                                size=len(content), meta=PageMeta(body.meta), charset=body.charset,
                                links=(page_base_url(body), req.limits.max_entries, req.limits.max_size,
                                       req.limits.max_entries_bytes),
                                capture=cap)
            if len(content) > THREAD_PARSE_BYTES:  # a long parse runs off the event loop, now
                await parse_page_in_thread(page, req.deadline, req.timeouts.read)
            return page
        return Response(url=str(req.url), content=content, content_type=body.content_type,
                        size=len(content), entries=body.entries, meta=body.meta, charset=body.charset,
                        capture=cap)

    async def ls(self, url: str | URL, *, timeouts: Timeouts | None = None, limits: Limits | None = None,
                 retry: Retry | None = None, options: object | None = None) -> AsyncIterator[Entry]:
        """The entries of a listing, or the links of an HTML page, one at a time:
        ``async for entry in client.ls(url)``.

        A page is parsed as it streams in (at most ``Limits.max_size`` bytes, or
        256 MiB, and ``Limits.max_entries`` links); nothing is kept. Raises
        :class:`NotSupported` for a resource that is neither.
        """
        req = self.request(url, timeouts=timeouts, limits=limits, retry=retry, options=options)
        body = await self._open(req)
        try:
            entries = body_entries(body, req.limits)
            if entries is None:
                raise NotSupported("neither a directory-like resource nor an HTML page: it has no entries",
                                   url=req.url)
            async for entry in entries:
                yield entry
        finally:
            await body.aclose()

    async def stat(self, url: str | URL, *, timeouts: Timeouts | None = None, retry: Retry | None = None,
                   options: object | None = None) -> Stat:
        """Size, date, type and scheme facts of a resource, without its body.

        Uses the fewest round trips the scheme has (HTTP HEAD, FTP SIZE+MDTM,
        file stat, Gopher+ attributes, NNTP STAT/HEAD); raises
        :class:`NotSupported` where the scheme has no way.
        """
        req = self.request(url, timeouts=timeouts, retry=retry, options=options)
        handler = self.handler(req.url)
        if req.retry.attempts <= 1 and req.deadline is None:  # no retry, no deadline: the call alone
            return await self._call(req.url, handler.stat(req))
        tries = _Tries(self, req.retry)
        try:
            async with asyncio.timeout_at(req.deadline):
                return await tries.run(req, handler.stat)
        except TimeoutError as exc:
            _raise_past_total(req, exc, "stat", tries)

    def walk(self, url: str | URL, **kwargs: Any) -> AsyncIterator[Found]:
        """Every resource reachable from *url*, breadth-first, deduplicated and polite:
        ``async for found in client.walk(url, max_depth=3): ...`` (see :func:`anyurl.transfer.walk.walk`
        for the keywords: max_depth, follow, same_host, cross_scheme, per_host, delay, robots)."""
        from .transfer.walk import walk

        return walk(self, url, **kwargs)

    async def upload(self, url: str | URL, source: bytes | str | os.PathLike[str] | BinaryIO, *,
                     timeouts: Timeouts | None = None, options: object | None = None) -> None:
        """Store *source* (bytes, a local file path or a binary file object) at *url* (FTP STOR).
        A URL ending in "/" stores it under the source's base name (a path's, or a file's ``.name``)."""
        req = self.request(url, timeouts=timeouts, options=options)
        await self._call(req.url, self.handler(req.url).upload(req, source))

    async def connect(self, url: str | URL, *, timeouts: Timeouts | None = None,
                      terminal_type: str | None = "xterm", window_size: tuple[int, int] | None = (80, 24),
                      binary: bool = False) -> Any:
        """Open an interactive session for a telnet URL (see ``TelnetHandler.connect``)."""
        req = self.request(url, timeouts=timeouts)
        return await self._call(req.url, self.handler(req.url).connect(
            req, terminal_type=terminal_type, window_size=window_size, binary=binary))

    async def send_mail(self, url: str | URL, *, subject: str | None = None, body: str | None = "",
                        sender: str | None = None, attachments: Sequence[Any] = (), cc: Iterable[str] = (),
                        bcc: Iterable[str] = (), timeouts: Timeouts | None = None) -> Any:
        """Compose and send a message to a mailto URL (see ``MailtoHandler.send_mail``)."""
        req = self.request(url, timeouts=timeouts)
        return await self._call(req.url, self.handler(req.url).send_mail(
            req, subject=subject, body=body, sender=sender, attachments=attachments, cc=cc, bcc=bcc))

    async def aclose(self) -> None:
        """Close every pooled connection."""
        self._closed = True
        agen, self._loop_end = self._loop_end, None
        if agen is not None:
            await agen.aclose()
        await self._close_handlers()

    def close(self, timeout: float = 10.0) -> None:
        """Blocking :meth:`aclose` for code that runs outside an event loop (scripts, the
        fsspec and urllib adapters' callers, ``__del__``-free cleanup).

        The connections are closed on the loop they belong to: in its own thread when that
        loop runs elsewhere (fsspec's I/O thread; waits at most *timeout* seconds), else on
        that loop run once more. Inside a running event loop it raises
        :class:`ConfigurationError` (blocking there would stall the loop): ``await
        client.aclose()`` instead. Calling it again, or after ``aclose``, does nothing.
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            raise ConfigurationError("Client.close() cannot run inside a running event loop: "
                                     "use `await client.aclose()` there")
        loop = self._loop
        if loop is None or loop.is_closed():
            self._close_on_stopped_loop()  # a closed loop's sockets: closed without it
            self._closed = True
            self._loop_end = None
            self._handlers, self._by_scheme = {}, {}
            return
        if loop.is_running():  # another thread's loop
            try:
                asyncio.run_coroutine_threadsafe(self.aclose(), loop).result(timeout)
            except TimeoutError:
                raise FetchTimeout(f"Client.close(): its event loop did not close the connections "
                                   f"within {timeout} s (they are still being closed there)") from None
            return
        loop.run_until_complete(self.aclose())

    async def _close_handlers(self) -> None:
        handlers, self._handlers = list(self._handlers.values()), {}
        self._by_scheme = {}
        for h in handlers:
            try:
                await h.aclose()
            except Exception:  # closing must not hide the caller's own error
                pass

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


_EXIT_CLOSE_SECONDS = 2.0  # the most interpreter exit waits for a Client's polite goodbyes
_bound: Any = None  # weakref.WeakSet of Clients tied to a loop, made on first use


def _close_at_exit(client: Client) -> None:
    global _bound
    if _bound is None:
        import atexit
        import weakref

        _bound = weakref.WeakSet()
        atexit.register(_close_left_open)
    _bound.add(client)


def _close_left_open() -> None:
    for client in list(_bound or ()):
        client._close_on_stopped_loop()


# -- module-level conveniences: one short-lived Client per call ----------------


async def fetch(url: str | URL, *, timeouts: Timeouts | None = None, limits: Limits | None = None,
                retry: Retry | None = None, offset: int = 0, length: int | None = None,
                options: object | None = None, max_size: int | None = None,
                capture: bool = False) -> Response:
    """Retrieve *url* with a default Client. See :meth:`Client.fetch`."""
    async with Client() as client:
        return await client.fetch(url, timeouts=timeouts, limits=limits, retry=retry, offset=offset,
                                  length=length, options=options, max_size=max_size, capture=capture)


@asynccontextmanager
async def open(url: str | URL, *, timeouts: Timeouts | None = None, limits: Limits | None = None,  # noqa: A001
               retry: Retry | None = None, offset: int = 0, length: int | None = None,
               options: object | None = None) -> AsyncIterator[Body]:
    """Stream *url* with a default Client. See :meth:`Client.open`."""
    async with Client() as client, client.open(url, timeouts=timeouts, limits=limits, retry=retry,
                                               offset=offset, length=length, options=options) as body:
        yield body


def fetch_sync(url: str | URL, *, timeouts: Timeouts | None = None, limits: Limits | None = None,
               retry: Retry | None = None, offset: int = 0, length: int | None = None,
               options: object | None = None, max_size: int | None = None) -> Response:
    """Blocking :func:`fetch` for scripts (runs its own event loop; inside a running one,
    a :class:`ConfigurationError` says to ``await anyurl.fetch(url)`` instead)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # none running: the usual case
        pass
    else:  # asyncio.run would refuse, after making the coroutine
        raise ConfigurationError("fetch_sync() cannot run inside a running event loop: "
                                 "use `await anyurl.fetch(url)` there", url=url)
    return asyncio.run(fetch(url, timeouts=timeouts, limits=limits, retry=retry, offset=offset,
                             length=length, options=options, max_size=max_size))


@asynccontextmanager
async def connect(url: str | URL, *, timeouts: Timeouts | None = None, terminal_type: str | None = "xterm",
                  window_size: tuple[int, int] | None = (80, 24), binary: bool = False) -> AsyncIterator[Any]:
    """``async with anyurl.connect("telnet://host") as session:``"""
    async with Client() as client:
        session = await client.connect(url, timeouts=timeouts, terminal_type=terminal_type,
                                       window_size=window_size, binary=binary)
        try:
            yield session
        finally:
            close = getattr(session, "close", None)
            if close is not None:
                res = close()
                if inspect.isawaitable(res):
                    await res


class _Opening:
    """What :meth:`Client.open` returns: entering opens the body, leaving closes it (a class,
    not ``asynccontextmanager``: per small transfer a generator around it costs more)."""

    __slots__ = ("_args", "_body", "_client")

    def __init__(self, client: Client, args: tuple[Any, ...]) -> None:
        self._client = client
        self._args = args
        self._body: Body | None = None

    async def __aenter__(self) -> Body:
        if self._body is not None:
            raise RuntimeError("Client.open(...) can be entered once")
        url, timeouts, limits, retry, offset, length, options = self._args
        client = self._client
        body = self._body = await client._open(client.request(
            url, timeouts=timeouts, limits=limits, retry=retry, offset=offset, length=length, options=options))
        return body

    async def __aexit__(self, *exc_info: object) -> None:
        if self._body is not None:
            await self._body.__aexit__(*exc_info)  # (a limit's cut is archived marked truncated)


class _Tries:
    """The one retry loop of a call (fetch, open, stat, ls, a download): ``retry`` is the
    call's :class:`Retry` with the history of its tries so far, and :meth:`Retry.increment`
    decides whether and when the next one comes. An open and the reopenings of its body
    mid-stream share one, so ``Retry.attempts`` counts every try of the call. The error
    that ends the call carries the history (``error.history``); its message is untouched."""

    __slots__ = ("client", "retry")

    def __init__(self, client: Client, retry: Retry) -> None:
        self.client = client
        self.retry = retry

    async def run(self, req: Request, op: Callable[[Request], Awaitable[T]]) -> T:
        """``op(req)``, tried again while the policy says so."""
        call = self.client._call
        if self.retry.attempts <= 1:  # no retry: nothing to count
            return await call(req.url, op(req))
        while True:
            try:
                return await call(req.url, op(req))
            except AnyURLError as exc:
                if not await self.again(req, exc):
                    raise

    async def again(self, req: Request, exc: AnyURLError, *, repeatable: bool = True) -> bool:
        """A try failed with *exc*: wait the back-off and return True, or return False when
        *exc* ends the call (then it carries the history). *repeatable*: see :meth:`Retry.increment`."""
        if self.retry.attempts <= 1:  # no retry: nothing to count
            return False
        retry = self.retry = self.retry.increment(exc, remaining=req.remaining(), repeatable=repeatable)
        delay = retry.next_delay
        if delay is None:
            exc.history = retry.history
            return False
        log.info("retrying %s in %.2f s (try %d of %d) after: %s",
                 exc.url, delay, len(retry.history) + 1, retry.attempts, exc.message)
        await asyncio.sleep(delay)
        return True

    def end(self, exc: E) -> E:
        """*exc*, raised by the caller outside the loop (a deadline), ends the call: it
        carries the history, itself the last try."""
        if self.retry.attempts <= 1:
            return exc
        self.retry = self.retry.increment(exc, repeatable=False)
        exc.history = self.retry.history
        return exc


def _cut(req: Request, cap: Capture, exc: BaseException) -> bool:
    """A fetch's read stopped on *exc*: a limit's cut finishes the capture marked truncated
    (True; the total timeout strikes as a cancellation), anything else abandons it."""
    if isinstance(exc, asyncio.CancelledError) and req.deadline is not None \
            and asyncio.get_running_loop().time() >= req.deadline:
        exc = TimeoutError()
    return cap.ended_by(exc)


def _captured(req: Request, body: Body, content: bytes) -> Capture:
    """The capture of a fetch, finished with the body just read (*content*). A driver that
    keeps none (a third-party one) gets the plainest: its scheme and the bytes it gave."""
    cap = body.capture
    if cap is None:
        cap = body.capture = Capture(req.url.scheme, str(req.url))
    cap.finish(content if body.entries is None else None,
               complete=cap.complete and not req.offset and req.length is None)
    return cap


def _typed(name: str, value: T | None, cls: type[T]) -> T | None:
    if value is not None and not isinstance(value, cls):
        raise TypeError(f"{name}= must be a {cls.__name__}, not {type(value).__name__}")
    return value


def _raise_past_total(req: Request, exc: BaseException, what: str, tries: _Tries | None = None) -> NoReturn:
    """Raise the error of *what* (opening, fetch, stat, transfer, listing) when a wait bounded
    by ``Timeouts.total`` raised *exc*: the total's own, naming the URL, when the client's guard
    struck or a handler's plain timeout struck at the deadline (its waits are cut to what is
    left of the total: its timer and the guard end at the same moment, the loop running either
    first); else the handler's *exc* itself (a read or connect timeout of its own ended sooner,
    a PoolTimeout, or already the total's words). *tries*: the call's loop, which the total ends."""
    if isinstance(exc, AnyURLError):
        if (type(exc) is not FetchTimeout or req.deadline is None or "total timeout" in exc.message
                or asyncio.get_running_loop().time() < req.deadline - _DEADLINE_SLACK):
            raise exc
    total = FetchTimeout(f"{what} took longer than the total timeout {req.timeouts.total} s", url=req.url)
    if isinstance(exc, AnyURLError):
        total.history = exc.history  # (its tries ended already)
    elif tries is not None:
        total = tries.end(total)
    raise total from exc  # (a handler's words: what it was waiting for)


# a timer due at the deadline may run this much before it (the loop runs what is due within its clock's resolution)
_DEADLINE_SLACK = 0.001

# seconds past Timeouts.total at which Client.open's guard cuts a handler that did not stop
# itself at the deadline (docs/limits.md)
_OPEN_GRACE = 0.05


class _GuardedBody:
    """A body bounded by the request's deadline that retries mid-stream where it may.

    Each wait for a chunk ends at ``Timeouts.total``. When a retried error
    interrupts the stream, it is reopened from the byte reached if the scheme
    can resume (``Body.resumable``), or from the start while no byte was handed
    to the caller yet; otherwise the error stands.
    """

    def __init__(self, tries: _Tries, handler: Handler, req: Request, body: Body,
                 watch: Callable[[Body], None] | None = None) -> None:
        self.tries = tries
        self.watch = watch  # the client's on_capture hook, for each reopening's capture
        self.handler = handler
        self.req = req
        self.current = body
        self.loop = asyncio.get_running_loop()
        self.outer = Body(body.url, self._chunks(), content_type=body.content_type, size=body.size,
                          entries=body.entries, meta=body.meta, offset=body.offset,
                          on_close=self._close, charset=body.charset, resumable=body.resumable)
        if body.streams_entries:  # a listing: guard its entries (the bytes are rendered from them)
            self.outer = Body.listing(body.url, self._entries(), content_type=body.content_type,
                                      meta=body.meta, offset=body.offset, on_close=self._close,
                                      charset=body.charset)
        self.outer.relay = True
        self.outer.capture = body.capture  # the attempt's (a reopening's replaces it)

    async def _reopen(self, req: Request) -> None:
        """Open the body again (after a retried error): its capture is now the outer one's, and
        what ``on_capture`` writes; the failed attempt's is never archived."""
        with suppress(Exception):
            await self.current.aclose()
        self.current = await self.tries.run(req, self.handler.open)
        self.outer.capture = self.current.capture
        if self.watch is not None:
            self.watch(self.current)

    async def _close(self) -> None:
        await self.current.aclose()

    async def _next(self, it: AsyncIterator[T], what: str) -> T | None:
        """The next entry or chunk of *it* (None at its end), waiting no later than the deadline."""
        deadline = self.req.deadline
        # data already buffered is handed out without a wait, so the timeout below never
        # fires for a consumer slower than the server: check the clock itself
        if deadline is not None and self.loop.time() >= deadline:
            raise FetchTimeout(f"{what} took longer than the total timeout {self.req.timeouts.total} s",
                               url=self.req.url)
        try:
            async with asyncio.timeout_at(deadline):
                return await anext(it, None)
        except TimeoutError as exc:
            _raise_past_total(self.req, exc, what)

    async def _entries(self) -> AsyncIterator[Entry]:
        """A listing's entries, each wait bounded by the deadline; reopened on a retried
        error only while no entry was handed out (a listing cannot resume)."""
        req, handed = self.req, 0
        while True:
            it = aiter(self.current.aiter_entries())
            try:
                while True:
                    entry = await self._next(it, "listing")
                    if entry is None:
                        return
                    handed += 1
                    yield entry
            except AnyURLError as exc:
                if not await self.tries.again(req, exc, repeatable=not handed):
                    raise
                await self._reopen(req)

    async def _chunks(self) -> AsyncIterator[bytes]:
        req, handed, skip = self.req, 0, 0
        while True:
            it = aiter(self.current)
            try:
                while True:
                    chunk = await self._next(it, "transfer")
                    if chunk is None:
                        return
                    if skip:  # a capture's attempt started again: the bytes handed out already
                        if len(chunk) <= skip:
                            skip -= len(chunk)
                            continue
                        chunk, skip = chunk[skip:], 0
                    handed += len(chunk)
                    yield chunk
            except AnyURLError as exc:
                # a capture is of one whole attempt: it never resumes mid-body (the rest alone
                # would be archived as the resource); it starts again and skips what was handed out
                captured = self.outer.capture is not None
                resumable = self.current.resumable and not captured
                if not await self.tries.again(req, exc, repeatable=not handed or resumable or captured):
                    raise
                if captured:
                    skip = handed
                    await self._reopen(req)
                    continue
                length = None if req.length is None else req.length - handed
                await self._reopen(req.replace(offset=req.offset + handed, length=length))

"""urllib.request handlers over anyurl: ``urlopen("gopher://...")``, and so ``pandas.read_csv``.

urllib knows the names gopher, news, nntp, wais and prospero (``urllib.parse``
parses them, and pandas sends every URL of such a scheme to
``urllib.request.urlopen``) but has no opener for any of them. This module
supplies one::

    import anyurl.urllib, pandas
    anyurl.urllib.install()                # opt-in: replaces urllib's global opener
    df = pandas.read_csv("gopher://127.0.0.1:7070/0/table.csv")
    anyurl.urllib.uninstall()              # puts the previous opener back, closes the Client

``install()`` changes process-wide state (``urllib.request.install_opener``),
which is why nothing happens on import. Without touching the global opener,
use ``anyurl.urllib.build_opener().open(url)``.

ftp and file stay urllib's own unless asked for (``extra_schemes=("ftp",)``);
http(s) stays urllib's.

The handler runs its :class:`~anyurl.Client` on an event loop of its own in a
background thread, so it works the same from plain synchronous code and from
code already inside a running event loop (which it blocks, like any
synchronous I/O, but never deadlocks). The response is a file object that
streams: each read takes the next chunk from the server, so memory holds at
most one chunk (``Limits.chunk_size``) plus the reader's buffer. Every anyurl
error becomes a :class:`urllib.error.URLError` whose reason names the URL and
the problem; the anyurl error is its ``__cause__``.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.message
import io
import threading
import urllib.error
import urllib.request
import urllib.response
import weakref
from collections.abc import Coroutine, Iterable
from contextlib import AsyncExitStack
from typing import Any, TypeVar

from ..client import Client
from ..errors import AnyURLError
from ..response import Body
from ..schemes import fsspec_schemes
from ..settings import Retry, Timeouts

__all__ = ["DEFAULT_SCHEMES", "EXTRA_SCHEMES", "AnyURLHandler", "AnyURLOpener", "build_opener", "install", "uninstall"]

T = TypeVar("T")

# urllib knows these names but cannot open them.
DEFAULT_SCHEMES = fsspec_schemes("direct")  # the same set: named by Python, opened by nobody
# urllib opens these itself; ours only when asked for.
EXTRA_SCHEMES = ("ftp", "ftps", "file")
# beyond the Client's own timeouts: a wait for the loop thread that should never be reached
_SLACK = 10.0


def _watchdog(timeouts: Timeouts, retry: Retry) -> float:
    """The longest a blocking call may wait for the loop thread: what the Client's timeouts
    allow for every try (they end the call themselves first), plus slack."""
    one_try = timeouts.connect + timeouts.read + (timeouts.pool or 0.0)
    longest = one_try * retry.attempts + retry.backoff_max * (retry.attempts - 1)
    if timeouts.total is not None:
        longest = min(longest, timeouts.total)
    return longest + _SLACK


class _LoopThread:
    """An event loop running in a daemon thread; blocking calls hand it coroutines."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self.stopped = False

    @property
    def running(self) -> bool:
        return self._loop is not None

    def _started(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self.stopped:  # never a second thread for a closed handler
                raise RuntimeError("anyurl.urllib: this opener is closed")
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="anyurl-urllib", daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def on_loop_thread(self) -> bool:
        return self._thread is not None and threading.current_thread() is self._thread

    def call(self, coro: Coroutine[Any, Any, T], wait: float) -> T:
        """Run *coro* on the loop and block until it is done (at most *wait* seconds)."""
        if self.on_loop_thread():
            coro.close()
            raise RuntimeError("anyurl.urllib: a blocking call from its own event loop thread")
        try:
            loop = self._started()
        except RuntimeError:
            coro.close()
            raise
        fut = asyncio.run_coroutine_threadsafe(coro, loop)
        try:
            return fut.result(wait)
        except BaseException:  # timeout, KeyboardInterrupt: stop the work on the loop too
            fut.cancel()
            raise

    def stop(self, wait: float) -> None:
        with self._lock:
            self.stopped = True
            loop, thread, self._loop, self._thread = self._loop, self._thread, None, None
        if loop is None or thread is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        thread.join(wait)
        if not thread.is_alive():
            loop.close()


class _Shared:
    """What a handler and its open responses share: the loop thread and the Client it runs.
    Closed by the handler's ``close()``, or once the handler and every response are gone."""

    def __init__(self, client_kwargs: dict[str, Any]) -> None:
        self.runner = _LoopThread()
        # made here so bad keywords fail in the caller's thread; it binds to no loop until used
        self.client = Client(**client_kwargs)
        self.open_bodies: set[AsyncExitStack] = set()  # closed before the Client on shutdown
        self.close = weakref.finalize(self, _shutdown, self.runner, self.client, self.open_bodies)


async def _aclose_all(client: Client, bodies: set[AsyncExitStack]) -> None:
    for stack in list(bodies):
        with contextlib.suppress(Exception):
            await stack.aclose()
    bodies.clear()
    await client.aclose()


def _shutdown(runner: _LoopThread, client: Client, bodies: set[AsyncExitStack]) -> None:
    if runner.on_loop_thread():  # collected on the loop itself: cannot block here
        return
    if runner.running:  # a Client never used holds no connection
        with contextlib.suppress(Exception):
            runner.call(_aclose_all(client, bodies), _SLACK)
    runner.stop(_SLACK)


class _BodyStream(io.RawIOBase):
    """A blocking raw reader over an anyurl :class:`Body` open on the loop thread."""

    def __init__(self, shared: _Shared, url: str, stack: AsyncExitStack, body: Body, wait: float) -> None:
        super().__init__()
        self._shared = shared
        self._url = url
        self._stack = stack
        shared.open_bodies.add(stack)
        self._chunks = aiter(body)
        self._wait = wait
        self._pending = memoryview(b"")
        self._eof = False

    def readable(self) -> bool:
        return True

    async def _next(self) -> bytes | None:
        try:
            return await anext(self._chunks)
        except StopAsyncIteration:
            return None

    def _fill(self) -> bool:
        """Take the next chunk from the server; False at the end of the body."""
        while not self._pending:
            if self._eof:
                return False
            chunk = _call(self._shared, self._url, self._next(), self._wait)
            if chunk is None:
                self._eof = True
                return False
            self._pending = memoryview(chunk)
        return True

    def readinto(self, buffer: Any) -> int:
        if self.closed:
            raise ValueError("I/O operation on closed file")
        if not self._fill():
            return 0
        view = memoryview(buffer).cast("B")
        n = min(len(view), len(self._pending))
        view[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n

    def readall(self) -> bytes:
        parts = [bytes(self._pending)]
        self._pending = memoryview(b"")
        while self._fill():
            parts.append(bytes(self._pending))
            self._pending = memoryview(b"")
        return b"".join(parts)

    def close(self) -> None:
        if self.closed:
            return
        super().close()
        self._pending = memoryview(b"")
        self._shared.open_bodies.discard(self._stack)
        if not self._shared.runner.running:  # the opener closed it already
            return
        if self._shared.runner.on_loop_thread():  # garbage collected on the loop: schedule
            with contextlib.suppress(RuntimeError):
                asyncio.get_running_loop().create_task(self._stack.aclose())
            return
        with contextlib.suppress(Exception):  # closing never hides what the caller is handling
            self._shared.runner.call(self._stack.aclose(), _SLACK)


def _call(shared: _Shared, url: str, coro: Coroutine[Any, Any, T], wait: float) -> T:
    """Run *coro* on the handler's loop; every failure as a URLError naming *url*."""
    try:
        return shared.runner.call(coro, wait)
    except AnyURLError as exc:
        raise urllib.error.URLError(str(exc)) from exc
    except TimeoutError as exc:  # the watchdog: the Client's own timeouts did not end the call
        raise urllib.error.URLError(f"{url}: no answer from anyurl within {wait:.0f} s") from exc
    except RuntimeError as exc:
        raise urllib.error.URLError(f"{url}: {exc}") from exc


class AnyURLHandler(urllib.request.BaseHandler):
    """Opens gopher, news, nntp(s), wais and prospero URLs (and, when asked, ftp, ftps and
    file) through an anyurl :class:`~anyurl.Client` made with ``client_kwargs``.

    urllib's ``timeout`` argument, when given, becomes the connect and read timeouts of
    that request. ``close()`` (or ``OpenerDirector.close()``) closes the Client and stops
    the loop thread; so does garbage collection and interpreter exit.
    """

    handler_order = 400  # before urllib's FTPHandler/FileHandler where we serve those too

    def __init__(self, client_kwargs: dict[str, Any] | None = None, *,
                 extra_schemes: Iterable[str] = ()) -> None:
        self._shared = _Shared(dict(client_kwargs or {}))
        for scheme in extra_schemes:
            if scheme not in EXTRA_SCHEMES:
                raise ValueError(f"extra_schemes: {scheme!r} is not one of {', '.join(EXTRA_SCHEMES)}")
            # OpenerDirector.add_handler finds "<scheme>_open" with dir(), which sees this too
            setattr(self, f"{scheme}_open", self.anyurl_open)

    def gopher_open(self, req: urllib.request.Request) -> urllib.response.addinfourl:
        return self.anyurl_open(req)

    news_open = nntp_open = nntps_open = wais_open = prospero_open = gopher_open

    def anyurl_open(self, req: urllib.request.Request) -> urllib.response.addinfourl:
        """Open *req* through anyurl: a streaming response (``code`` None, as urllib's ftp)."""
        url = req.full_url
        if req.data is not None:
            raise urllib.error.URLError(f"{url}: anyurl's urllib handler only retrieves (the request "
                                        f"has a body)")
        shared = self._shared
        client = shared.client
        timeouts = client.timeouts
        given = getattr(req, "timeout", None)  # urlopen(..., timeout=): a number, else a sentinel
        if isinstance(given, (int, float)) and given > 0:
            timeouts = Timeouts(connect=given, read=given, total=timeouts.total, pool=timeouts.pool)
        wait = _watchdog(timeouts, client.retry)

        async def start() -> tuple[AsyncExitStack, Body]:
            async with AsyncExitStack() as stack:
                body = await stack.enter_async_context(client.open(url, timeouts=timeouts))
                return stack.pop_all(), body
            raise AssertionError("unreachable")  # pragma: no cover - mypy wants a return

        stack, body = _call(shared, url, start(), wait)
        headers = email.message.Message()
        ctype = body.content_type
        if body.charset and "charset=" not in ctype:
            ctype = f"{ctype}; charset={body.charset}"
        headers["Content-Type"] = ctype
        if body.size is not None:
            headers["Content-Length"] = str(body.size)
        raw = _BodyStream(shared, url, stack, body, wait)
        return urllib.response.addinfourl(io.BufferedReader(raw), headers, url)

    def close(self) -> None:
        self._shared.close()


class AnyURLOpener(urllib.request.OpenerDirector):
    """An ``OpenerDirector`` whose ``close()`` closes its handlers (urllib's does nothing),
    and so anyurl's Client and loop thread. Also a context manager."""

    def close(self) -> None:
        for handler in getattr(self, "handlers", ()):  # urllib keeps them there (untyped)
            handler.close()

    def __enter__(self) -> AnyURLOpener:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def build_opener(*handlers: urllib.request.BaseHandler | type[urllib.request.BaseHandler],
                 client_kwargs: dict[str, Any] | None = None,
                 extra_schemes: Iterable[str] = ()) -> AnyURLOpener:
    """``urllib.request.build_opener`` with an :class:`AnyURLHandler` added; global state untouched.

    ``with anyurl.urllib.build_opener() as opener: opener.open(url)``: leaving the block
    (or ``opener.close()``) closes the Client and stops the loop thread.
    """
    built = urllib.request.build_opener(AnyURLHandler(client_kwargs, extra_schemes=extra_schemes), *handlers)
    opener = AnyURLOpener()
    opener.addheaders = built.addheaders
    for handler in getattr(built, "handlers", ()):
        opener.add_handler(handler)
    return opener


_installed: list[tuple[AnyURLOpener, urllib.request.OpenerDirector | None]] = []
_install_lock = threading.Lock()


def install(client_kwargs: dict[str, Any] | None = None, *,
            extra_schemes: Iterable[str] = ()) -> AnyURLOpener:
    """Make ``urllib.request.urlopen`` (and so pandas) open anyurl's schemes, process-wide.

    Global state, opt-in: replaces the opener installed before (kept, and put back by
    :func:`uninstall`). Installing again replaces the previous anyurl opener.
    """
    opener = build_opener(client_kwargs=client_kwargs, extra_schemes=extra_schemes)
    with _install_lock:
        previous: urllib.request.OpenerDirector | None = getattr(urllib.request, "_opener", None)
        if _installed:  # ours already: close it, keep the one from before it
            mine, previous = _installed.pop()
            mine.close()
        _installed.append((opener, previous))
        urllib.request.install_opener(opener)
    return opener


def uninstall() -> None:
    """Undo :func:`install`: the previous global opener back, anyurl's Client closed."""
    with _install_lock:
        if not _installed:
            return
        mine, previous = _installed.pop()
        urllib.request.install_opener(previous)
    mine.close()

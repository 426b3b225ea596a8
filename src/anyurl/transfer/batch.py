"""Batches: many URLs fetched at once, with the per-origin scheduling ``anyurl get`` uses.

A program hands :class:`Batch` an iterable or an async iterable of URLs (read lazily, as the
workers need them: a generator of millions costs no more memory than one of ten) and a
:class:`Sink` that says where each resource goes: :class:`Memory` (a :class:`Response` per
URL), :class:`Directory` (a file per URL, written atomically), or a sink of its own (a WARC
writer, a database). Every URL gives one :class:`Result`, in the order the transfers end: the
response or the file written, or the error. A failed URL is a result, never an exception
that stops the batch.

Two ways to take the results::

    async with Batch(client, urls) as results:      # as they complete
        async for r in results:
            ...

    await Batch(client, urls, Directory("out"), on_result=report).run()

The scheduling (what ``anyurl get --parallel N`` does): *parallel* plain turns, one per
connection a server is given; a transfer that would share a connection open now (an HTTP/2
stream, a pipelined http GET or news window, an FTP RETR queued behind a transfer: the
driver's :meth:`~anyurl.handlers.base.Handler.multiplexed`) runs beside them, up to *streams*
in all, so one connection to a pipelining origin carries many requests at once. Transfers
waiting for a turn whose origin turns out to multiplex are let go at once; an https transfer
waits for a connection being opened to its origin to pick HTTP/2 before taking a turn.

Bounds: the workers (*streams* at most) hold one URL each; the input is read a URL (or a
list of them, :class:`Chunks`) at a time when every URL read is taken; a result waits for the
consumer in a window of *window* results, and the workers wait while it is full.
:class:`Directory` keeps the names it gave (unique names need them).
"""

from __future__ import annotations

import asyncio
import collections
import gc
import itertools
import os
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import AnyURLError, ConfigurationError, TransferError, mask_password
from ..net import handoff
from ..net.early import Early, target, turned_off
from ..urls import URL
from . import download
from .download import DirNames, name_for_url

if TYPE_CHECKING:
    import socket

    from ..client import Client
    from ..handlers.base import Handler
    from ..response import Body, Response
    from .download import Progress

__all__ = ["GC_THRESHOLD", "Batch", "Chunks", "Directory", "Feed", "Item", "Memory", "Result", "Sink", "stream_workers"]

#: workers per plain turn once a multiplexed origin is met: transfers beyond the N turns run
#: only as HTTP/2 streams, pipelined GETs or news windows (16 x 8: 128 in flight, nginx's
#: default stream limit; at 8 x 8, 200 small files at 50 ms took 4 round trips of requests
#: instead of 2)
STREAM_WORKERS = 16
#: ...and at least this many in all, so that one connection (parallel=1, the strictest
#: politeness) still fills a pipelined window (Limits.per_host_requests' default)
MIN_STREAM_WORKERS = 64


#: whether the objects alive when a batch first loads a driver have been moved out of the
#: cyclic collector's reach (once per process: see Batch.freeze_gc)
_frozen = False


#: the collector's first threshold while a batch runs: a collection every 7,000 allocations
#: instead of 700 (fewer walks over the transfers in flight: 3.5% of the instructions per URL
#: of 4 KiB files over http at 32 in flight); the caller's threshold comes back at the end
GC_THRESHOLD = 7000
_running = 0  # batches running in this process (they share the raised threshold)
_saved_threshold: tuple[int, int, int] | None = None


def _gc_raise() -> None:
    global _running, _saved_threshold
    _running += 1
    if _running == 1:
        now = gc.get_threshold()
        if 0 < now[0] < GC_THRESHOLD:  # (0: the caller turned collections off)
            _saved_threshold = now
            gc.set_threshold(GC_THRESHOLD, now[1], now[2])


def _gc_restore() -> None:
    global _running, _saved_threshold
    _running -= 1
    if _running == 0 and _saved_threshold is not None:
        if gc.get_threshold()[0] == GC_THRESHOLD:  # (unless someone set another meanwhile)
            gc.set_threshold(*_saved_threshold)
        _saved_threshold = None


def _freeze_once() -> None:
    global _frozen
    _frozen = True
    if gc.isenabled():
        gc.freeze()


def stream_workers(turns: int) -> int:
    """A batch's workers in all once a multiplexed origin is met, for *turns* plain turns."""
    return max(MIN_STREAM_WORKERS, turns * STREAM_WORKERS)


class Item:
    """One URL of a batch as a sink sees it: its place in the input, the URL as given and
    parsed, and where the sink decided to put it (:meth:`Sink.place`)."""

    __slots__ = ("dest", "given", "index", "name", "note", "url")

    def __init__(self, index: int, given: str | URL, url: URL) -> None:
        self.index = index  # 0 for the first URL of the input
        self.given = given
        self.url = url
        self.dest: str | None = None  # the path a file-writing sink chose
        self.name: str | None = None  # its file name (a progress label)
        self.note: str | None = None  # something the sink wants said once the URL succeeded

    def __repr__(self) -> str:
        return f"Item({self.index}, {mask_password(str(self.url))!r})"


class Result:
    """What became of one URL: ``error`` is None on success; then ``response`` holds what
    :class:`Memory` (or a sink of your own) returned and ``dest`` the file a
    :class:`Directory` wrote. ``url`` is None when the text given did not parse."""

    __slots__ = ("dest", "error", "given", "index", "note", "response", "url")

    def __init__(self, index: int, given: str | URL, url: URL | None, *, error: AnyURLError | None = None,
                 response: Response | None = None, dest: str | None = None, note: str | None = None) -> None:
        self.index = index
        self.given = given
        self.url = url
        self.error = error
        self.response = response
        self.dest = dest
        self.note = note

    @property
    def ok(self) -> bool:
        return self.error is None

    def __repr__(self) -> str:
        what = f"error={self.error!r}" if self.error is not None else (
            f"dest={self.dest!r}" if self.dest is not None else "ok")
        return f"Result({self.index}, {mask_password(str(self.given))!r}, {what})"


class Sink:
    """Where a batch puts each resource. Subclass it to plug in: :meth:`place` runs in input
    order as the batch takes a URL (before it waits for a turn); :meth:`transfer` fetches it.
    An :class:`~anyurl.errors.AnyURLError` raised by either becomes that URL's result; any
    other exception is a bug and stops the batch."""

    def place(self, item: Item) -> None:
        """Decide where *item* goes (``item.dest``, ``item.name``); nothing by default."""

    async def transfer(self, client: Client, item: Item) -> Response | None:
        """Fetch ``item.url`` and keep it; the value returned is the result's ``response``."""
        raise NotImplementedError


class Memory(Sink):
    """Each resource read whole into a :class:`Response` (at most *max_size* bytes, else
    ``Limits.max_size``); the result holds it until the program drops it."""

    def __init__(self, max_size: int | None = None) -> None:
        self.max_size = max_size

    async def transfer(self, client: Client, item: Item) -> Response:
        return await client.fetch(item.url, max_size=self.max_size)


class Directory(Sink):
    """Each resource saved in *directory* under the name its URL gives (``name.1``, ``name.2``
    ... when URLs share a name), in input order, atomically: a failed transfer leaves no
    file under its name (:func:`anyurl.download`). *resume* continues part files of an
    earlier run; *overwrite* replaces files with other content (else that URL fails with
    :class:`~anyurl.transfer.download.WouldOverwrite`); *max_size* refuses larger resources.
    The directory is made when missing. A directory listing is saved as its text."""

    #: write through a symlink or into a device at the destination (only for a path a user named)
    follow = False

    def __init__(self, directory: str | os.PathLike[str], *, resume: bool = False, overwrite: bool = False,
                 max_size: int | None = None) -> None:
        self.directory = os.fspath(directory)
        self.resume = resume
        self.overwrite = overwrite
        self.max_size = max_size
        try:
            os.makedirs(self.directory or ".", exist_ok=True)
        except FileExistsError as exc:  # (makedirs' "File exists" did not say what was wrong)
            raise TransferError(f"{self.directory}: exists and is not a directory") from exc
        except OSError as exc:
            raise TransferError(f"cannot create directory {self.directory}: {exc.strerror or exc}") from exc
        # one listing instead of two failing lookups per file (see DirNames), taken when the
        # first name is given (a subclass that names its own paths never lists the directory)
        self.listed: DirNames | None = None
        self.scan = not resume
        d = self.directory
        # (a directory path once, not os.path.join's per file: the names are safe, without "/")
        self.prefix = d if not d or d.endswith("/") else d + "/"
        self.taken: set[str] = set()
        self.last: dict[str, int] = {}  # the last suffix given per name: no rescan from .1 each time
        self._plain_open = type(self).opened is Directory.opened
        if type(self).transfer is Directory.transfer:
            self.transfer = self.save  # type: ignore[method-assign]  # (a coroutine frame less per file)

    def unique(self, name: str) -> str:
        """*name*, or ``name.N`` with the first N no URL of this batch has taken."""
        if name not in self.taken:
            self.taken.add(name)
            return name
        n = self.last.get(name, 0)
        while True:
            n += 1
            candidate = f"{name}.{n}"
            if candidate not in self.taken:
                break
        self.last[name] = n
        self.taken.add(candidate)
        return candidate

    def place(self, item: Item) -> None:
        if self.scan:
            self.scan = False
            self.listed = DirNames(self.directory)
        name = name_for_url(item.url)
        unique = self.unique(name)
        item.name = unique
        item.dest = self.prefix + unique
        if unique != name:  # several URLs of one name: each keeps its own file
            item.note = f"{mask_password(str(item.url))} saved as {item.dest} ({name} is taken by another URL)"

    def opened(self, item: Item, body: Body) -> None:
        """Called once *item*'s transfer starts; may refuse it by raising."""

    async def transfer(self, client: Client, item: Item) -> None:
        await self.save(client, item)

    async def save(self, client: Client, item: Item, progress: Progress | None = None) -> None:
        """Write *item* to ``item.dest`` (*progress* as :func:`anyurl.download`'s)."""
        dest, name = item.dest, item.name
        assert dest is not None and name is not None
        listed = self.listed
        # (no call per file when opened is not overridden)
        on_open = None if self._plain_open else (lambda body: self.opened(item, body))
        # (looked up on the module: a test may stand in for it)
        await download.download_file(client, item.url, dest, self.resume, progress, self.max_size, on_open,
                                     self.overwrite, _NO_OPTIONS, listed is not None and listed.new(name),
                                     follow=self.follow)


_NO_OPTIONS: dict[str, Any] = {}


class Chunks:
    """An async iterable of *lists* of URLs given to :class:`Batch` (the CLI's URL list, read
    a block at a time): the workers take a list's URLs one by one with no await."""

    __slots__ = ("source",)

    def __init__(self, source: AsyncIterable[Sequence[str | URL]]) -> None:
        self.source = source


class Feed:
    """An async iterable of URLs that grows while a batch runs: a crawler :meth:`put` s the
    URLs it finds as results come back, and :meth:`close` s it once none will come (the
    batch ends when it is closed and empty). Unbounded: the putter keeps its own bound."""

    def __init__(self, urls: Iterable[str | URL] = ()) -> None:
        self._urls: collections.deque[str | URL] = collections.deque(urls)
        self._closed = False
        self._wake = asyncio.Event()

    def put(self, url: str | URL) -> None:
        if self._closed:
            raise ConfigurationError("put() on a closed Feed")
        self._urls.append(url)
        self._wake.set()

    def close(self) -> None:
        self._closed = True
        self._wake.set()

    def __len__(self) -> int:
        return len(self._urls)

    def __aiter__(self) -> Feed:
        return self

    async def __anext__(self) -> str | URL:
        while not self._urls:
            if self._closed:
                raise StopAsyncIteration
            self._wake.clear()
            await self._wake.wait()
        return self._urls.popleft()


_END: Any = object()
OnResult = Callable[[Result], "Awaitable[None] | None"]


class Batch:
    """Fetch every URL of *urls* into *sink* (:class:`Memory` by default) with *client*.

    *urls*: an iterable or async iterable of URLs (``str`` or :class:`~anyurl.URL`), a
    :class:`Feed`, or :class:`Chunks`. *parallel*: the plain turns, as ``get --parallel``
    (default: the Client's ``Limits.per_host``); *streams*: the workers in all once an origin
    multiplexes (:func:`stream_workers`). Give the Client ``Limits(per_host=parallel,
    per_host_requests=streams)`` to let every worker run (``anyurl get`` does).
    *on_result* is called (and awaited when it returns an awaitable) with each
    :class:`Result` as its transfer ends. *window*: results waiting for an ``async for``.

    ``taken`` counts the URLs read from *urls*; ``succeeded`` and ``failed`` the results.

    The first batch of a process, once it has loaded its first driver, moves every object
    alive then out of the cyclic garbage collector's reach (:func:`gc.freeze`): the modules,
    the Client and the program's own settings live to the end anyway, and each collection a
    batch's transfers trigger would walk them all (12% of the instructions of 200 small
    files); while batches run, the collector's first threshold is :data:`GC_THRESHOLD` (the
    caller's comes back after). Set ``Batch.freeze_gc = False`` first to leave the collector
    as it is.
    """

    #: see the class's text (the ``anyurl`` command freezes at the end of its start-up too)
    freeze_gc = True
    #: begin the first origin's connections before its driver is loaded (:meth:`_connect_early`)
    early_connect = True

    def __init__(self, client: Client, urls: Iterable[str | URL] | AsyncIterable[str | URL] | Chunks,
                 sink: Sink | None = None, *, parallel: int | None = None, streams: int | None = None,
                 on_result: OnResult | None = None, window: int = 256) -> None:
        if isinstance(urls, (str, bytes, URL)):
            raise ConfigurationError("Batch takes an iterable of URLs, not one URL (put it in a list)")
        self.client = client
        self.sink = Memory() if sink is None else sink
        self.parallel = max(1, client.limits.per_host if parallel is None else parallel)
        self.streams = stream_workers(self.parallel) if streams is None else streams
        self.on_result = on_result
        self.window = max(1, window)
        self.taken = 0
        self.succeeded = 0
        self.failed = 0
        self._held: collections.deque[str | URL] = collections.deque()  # read, not yet taken
        self._iter: Iterator[str | URL] | None = None
        self._aiter: AsyncIterator[Any] | None = None
        self._chunked = isinstance(urls, Chunks)
        if isinstance(urls, Chunks):
            self._aiter = aiter(urls.source)
        elif isinstance(urls, AsyncIterable):
            self._aiter = aiter(urls)
        else:
            self._iter = iter(urls)
        self._turn = asyncio.Lock()  # one worker at a time reads on
        # the scheduling: plain turns handed on first come, first served
        self._busy = 0
        self._queue: collections.deque[tuple[asyncio.Future[bool], URL]] = collections.deque()
        self._released: set[tuple[str, Any, Any]] = set()  # origins whose waiting transfers were let go
        self._group: asyncio.TaskGroup | None = None
        # stream workers alive: one that had to take a plain turn (its origin no longer
        # multiplexes: pipelining found the round trip short after all) ends after it, so the
        # plain ones are not queued behind hundreds of them
        self._extras = 0
        self._drivers: dict[str, Handler | None] = {}  # per scheme (not ftp: its driver depends on a proxy)
        self._workers_for: dict[str, int] = {}  # per scheme: the workers its multiplexed origins want
        self._negotiating: dict[type[Handler], bool] = {}  # per driver class: see _negotiates
        # results for `async for`
        self._ready: collections.deque[Result] = collections.deque()
        self._room: asyncio.Semaphore | None = None
        self._wake: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._finished = False

    # -- running -----------------------------------------------------------------------

    async def run(self) -> None:
        """Run the batch to its end, each result to the sink and *on_result*. An exception
        that is not a URL's result (from *urls*, *on_result* or a bug) ends it and is raised."""
        early = None
        raised = self.freeze_gc
        if raised:
            _gc_raise()
        try:
            early = await self._connect_early()
            async with asyncio.TaskGroup() as group:
                self._group = group
                for _ in range(self.parallel):
                    group.create_task(self._worker())
        except BaseExceptionGroup as eg:  # the error itself, not a group
            raise eg.exceptions[0] from None
        finally:
            self._group = None
            if raised:
                _gc_restore()
            if early is not None:
                early()

    async def _connect_early(self) -> Callable[[], None] | None:
        """Begin the connections to the first URL's origin now, before its driver is loaded, so
        that the handshakes overlap the loading (:mod:`anyurl.net.early`): for a Client that has
        loaded no driver yet, when nothing else (the CLI) hands sockets over. As many as the
        driver opens at once: one per turn among the first URLs for plain http (a connection
        each), else one. ``ANYURL_EARLY_CONNECT=0`` turns it off. Returns what ends it."""
        if not self.early_connect or self.client.started or handoff.taker() is not None or turned_off():
            return None
        held = self._held
        if not held:  # (the first URLs are read now instead of by the first workers)
            if self._iter is not None:
                held.extend(itertools.islice(self._iter, self.parallel))
            elif not await self._more():
                return None
        first: list[URL] = []
        for given in itertools.islice(held, self.parallel):
            try:
                first.append(self._parse(given))
            except AnyURLError:
                break
        if not first:
            return None
        key = target(first[0], held[0] if isinstance(held[0], str) else "")
        if key is None:
            return None
        scheme, host, port = key
        try:
            if self.client.proxy_for(scheme, host, port) is not None:
                return None
        except AnyURLError:
            return None  # a bad proxy setting: the transfer reports it
        count = 1
        if scheme == "http":  # (no more than the pool opens to one host)
            same = sum(1 for w in first if w.scheme == scheme and getattr(w, "host", None) == host
                       and getattr(w, "port", None) == port)
            count = max(1, min(self.client.limits.per_host, same))
        early = Early((scheme, host, port), count)

        def take(scheme: str, host: str, port: int) -> socket.socket | None:
            sock, more = early.take(scheme, host, port)
            if not more:
                end()
            return sock

        def end() -> None:
            if handoff.taker() is take:
                handoff.set_taker(None)
            early.close()

        early.start()
        handoff.set_taker(take)
        return end

    async def __aenter__(self) -> Batch:
        self._room = asyncio.Semaphore(self.window)
        self._wake = asyncio.Event()
        self._task = asyncio.create_task(self._run_for_iteration())
        return self

    async def __aexit__(self, *exc: object) -> None:
        task = self._task
        if task is not None and not task.done():
            task.cancel()
        if task is not None:
            try:
                await task
            except asyncio.CancelledError:
                if not task.cancelled():
                    raise
            except Exception:
                if exc[0] is None:
                    raise

    async def _run_for_iteration(self) -> None:
        try:
            await self.run()
        finally:
            self._finished = True
            assert self._wake is not None
            self._wake.set()

    def __aiter__(self) -> Batch:
        return self

    async def __anext__(self) -> Result:
        if self._task is None:
            raise ConfigurationError("iterate a Batch inside `async with Batch(...) as results:`")
        wake = self._wake
        assert wake is not None and self._room is not None
        while not self._ready:
            if self._finished:
                self._task.result()  # the error that ended it, if one did
                raise StopAsyncIteration
            wake.clear()
            await wake.wait()
        self._room.release()
        return self._ready.popleft()

    def _count(self, result: Result) -> Awaitable[None] | None:
        """Count *result* and hand it to *on_result*: what is left to await (an async
        on_result, or a window to wait for), or None (the usual case: no coroutine per result)."""
        if result.error is None:
            self.succeeded += 1
        else:
            self.failed += 1
        done = self.on_result(result) if self.on_result is not None else None
        if done is None and self._room is None:
            return None
        return self._handed(result, done)

    async def _handed(self, result: Result, done: Awaitable[None] | None) -> None:
        if done is not None:
            await done
        if self._room is not None:
            await self._room.acquire()  # the consumer is a window behind: wait
            self._ready.append(result)
            assert self._wake is not None
            self._wake.set()

    # -- the input -----------------------------------------------------------------------

    def _take(self) -> Item | Result | None:
        """The next URL read so far (or from a plain iterable) as an Item, a Result for one
        that failed at once (a bad URL), or None when every URL read is taken."""
        held = self._held
        if held:
            given = held.popleft()
        elif self._iter is not None:
            given = next(self._iter, _END)
            if given is _END:
                self._iter = None
                return None
        else:
            return None
        index = self.taken
        self.taken += 1
        url = None
        try:
            url = self._parse(given)
            item = Item(index, given, url)
            self.sink.place(item)
        except AnyURLError as exc:
            return Result(index, given, url, error=exc)
        return item

    def _parse(self, given: str | URL) -> URL:
        # (a listed URL as plain text: urls.parse's fast path takes exact str only)
        return self.client.parse(str.__str__(given) if given.__class__ is not str and isinstance(given, str)
                                 else given)

    async def _more(self) -> bool:
        """The next URLs of an async input into the held ones; False at the end of them."""
        while self._aiter is not None:
            got = await anext(self._aiter, _END)
            if got is _END:
                self._aiter = None
            elif not self._chunked:
                self._held.append(got)
                return True
            elif got:
                self._held.extend(got)
                return True
        return False

    async def _next(self) -> Item | Result | None:
        """The next job, reading on when every URL read so far is taken; None at the end."""
        job = self._take()
        while job is None:
            async with self._turn:
                job = self._take()  # (another worker may have read on meanwhile)
                if job is None:
                    if not await self._more():
                        return None
                    job = self._take()
        return job

    # -- the scheduling ------------------------------------------------------------------

    def _driver(self, u: URL) -> Handler | None:
        scheme = u.scheme
        if scheme in self._drivers:
            return self._drivers[scheme]
        try:
            driver: Handler | None = self.client.handler(u)
        except AnyURLError:  # no driver for its scheme: the transfer itself says so
            driver = None
        if not _frozen and self.freeze_gc:  # (after the driver's modules are loaded: them too)
            _freeze_once()
        if scheme != "ftp":  # (an ftp URL's driver depends on its host: a proxy or not)
            self._drivers[scheme] = driver
        return driver

    def _multiplexed(self, u: URL) -> bool:
        # (https: HTTP/2 streams; http: pipelined GETs; news: pipelined windows; ftp: queued RETRs)
        driver = self._driver(u)
        return driver is not None and driver.multiplexed(u)

    def _stream_workers(self, u: URL) -> None:
        # a multiplexed origin (again): the stream workers; a pipelining origin may want more
        # (as many per turn as a pipeline's bound: a batch fills them at once)
        total = self._workers_for.get(u.scheme)
        if total is None:  # (once per scheme: this runs for every multiplexed transfer)
            driver = self._driver(u)
            depth = driver.pipeline_depth(u) if driver is not None else 0
            total = max(self.streams, self.parallel * depth)
            self._workers_for[u.scheme] = total
        more = total - self.parallel - self._extras
        group = self._group
        if group is not None and more > 0:
            self._extras += more
            for _ in range(more):
                group.create_task(self._worker(True))

    async def _admit(self, u: URL, driver: Handler | None) -> bool:
        """Wait for a turn for *u* (none is free now, or its origin may be picking HTTP/2):
        True when it holds one of the plain turns (see :meth:`_worker`'s fast path)."""
        # a connection to its origin may be picking HTTP/2 now (when a turn is taken): its
        # streams start at the handshake, not after a first response
        if driver is not None and self._busy and await driver.negotiated(u):
            self._stream_workers(u)
            return False
        if self._busy < self.parallel:
            self._busy += 1
            return True
        fut: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._queue.append((fut, u))
        try:
            return await fut
        except BaseException:
            if fut.done() and not fut.cancelled() and fut.result():
                self._leave(True, u)  # a turn handed over just now: on to the next
            raise

    def _leave(self, held: bool, u: URL) -> None:
        queue = self._queue
        if held:
            while queue:  # the turn goes to the first still waiting
                fut, _ = queue.popleft()
                if not fut.done():
                    fut.set_result(True)
                    break
            else:
                self._busy -= 1
        if not queue:
            # nobody waits: nothing to let go (a newly multiplexed origin starts the stream
            # workers at its next admit)
            return
        where = (u.scheme, getattr(u, "host", None), getattr(u, "port", None))
        if where not in self._released and self._multiplexed(u):
            self._released.add(where)  # (once per origin: not a scan per transfer)
            for fut, w in list(queue):
                if not fut.done() and self._multiplexed(w):
                    queue.remove((fut, w))
                    fut.set_result(False)
            self._stream_workers(u)

    async def _worker(self, extra: bool = False) -> None:
        # the workers pull from one input: memory stays flat however long it is
        client, sink, drivers = self.client, self.sink, self._drivers
        negotiates = self._negotiates
        while True:
            job = self._take()  # (without an await while URLs are held)
            if job is None:
                job = await self._next()
                if job is None:
                    return
            if isinstance(job, Result):
                handing = self._count(job)
                if handing is not None:
                    await handing
                continue
            u = job.url
            scheme = u.scheme
            driver = drivers[scheme] if scheme in drivers else self._driver(u)
            # the usual turn without a coroutine: a multiplexed origin's, or a free plain one
            if driver is not None and driver.multiplexed(u):
                self._stream_workers(u)
                held = False
            elif self._busy < self.parallel and not (self._busy and driver is not None and negotiates(driver)):
                self._busy += 1
                held = True
            else:
                held = await self._admit(u, driver)
            try:
                response = await sink.transfer(client, job)
                result = Result(job.index, job.given, u, response=response, dest=job.dest, note=job.note)
            except AnyURLError as exc:
                result = Result(job.index, job.given, u, error=exc)
            finally:
                self._leave(held, u)
            handing = self._count(result)
            if handing is not None:
                await handing
            if extra and held:
                self._extras -= 1
                return

    def _negotiates(self, driver: Handler) -> bool:
        """Whether *driver* may pick a protocol while connecting (it has its own
        :meth:`~anyurl.handlers.base.Handler.negotiated`): else there is nothing to wait for."""
        cls = driver.__class__
        known = self._negotiating.get(cls)
        if known is None:
            from ..handlers.base import Handler

            known = self._negotiating[cls] = cls.negotiated is not Handler.negotiated
        return known

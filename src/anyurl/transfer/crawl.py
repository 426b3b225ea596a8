"""Crawl from many seeds: open every URL once, save what it holds, follow what it lists.

``await crawl(client, seeds, dest="DIR", state="crawl.sqlite")`` takes every seed (ftp,
http(s), gopher, news/nntp, file...), and for each URL it meets, once:

* a listing (FTP or file: directory, gopher menu, news group) gives its entries;
* any other resource is streamed to the *sink* (:class:`DirectorySink` for *dest*: the
  file ``DIR/host/path``), and an HTML page is parsed for its links as the bytes go by:
  the page is never fetched a second time to be saved.

Scope, per seed (each URL keeps the seed it was reached from): the seed's host (and
port) unless ``same_host=False``; its scheme family unless ``cross_scheme=True``
(http/https, ftp/ftps, news/nntp count as one); below the seed's directory unless
``under_seed=False`` (a page's images, stylesheets and scripts wherever on its host they
live); a remote resource never leads into ``file:``. One seen-set for all seeds: a URL two
seeds reach is fetched once. robots.txt is obeyed on http(s) (its Crawl-delay too).

Everything the crawl knows is in its frontier (:mod:`anyurl.transfer.frontier`, SQLite;
``state=`` names the file, else a temporary one): each fetch is marked done in the same
transaction that admits the URLs it led to, so a crawl killed at any point and started
again with the same state fetches only what it had not finished (those in flight at the
kill again), and memory does not grow with the frontier.

Politeness: at most ``per_host`` fetches of one host at once, started ``delay`` seconds
apart (or the robots.txt Crawl-delay, up to 30 s); ``parallel`` fetches in all. The fetches
go through the batch engine (:class:`~anyurl.transfer.batch.Batch`): an origin that
multiplexes (HTTP/2 streams, pipelined GETs, FTP transfers queued on a connection, news
windows) carries up to ``per_host`` x its pipeline depth of the ``parallel`` fetches at once
on its connections, when the Client holds every server to ``per_host`` connections
(``Limits.per_host``, as ``anyurl crawl`` sets it) and there is no delay.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import re
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import AnyURLError, TransferError, TruncatedTransfer
from ..links import is_css
from ..response import Body, Entry, is_html, translate_errors
from ..schemes import family
from ..urls import FTPURL, HTTPURL, NNTPURL, URL, GopherURL, NewsURL, parse, percent_decode
from .batch import STREAM_WORKERS, Batch, Chunks
from .batch import Item as BatchItem
from .batch import Result as BatchResult
from .batch import Sink as BatchSink
from .download import refuse_symlink
from .frontier import DONE, FAILED, SKIPPED, Frontier, HostState, Item, New, Outcome, SQLiteFrontier, Totals
from .names import PART_SUFFIX, local_name, name_for_url
from .output import save_part
from .walk import CRAWL_DELAY_MAX, scope_rules

if TYPE_CHECKING:
    from ..client import Client

__all__ = ["CrawlEvent", "CrawlResult", "DirectorySink", "FastScope", "Sink", "by_host", "crawl", "crawl_sync", "local_path"]

log = logging.getLogger("anyurl.crawl")

_ROBOTS_MAX = 512 * 1024
_ROBOTS_CACHE = 1024  # parsed robots.txt kept in memory (the text is in the state)
_DIRECTORY_KINDS = frozenset({"directory", "group"})
_RECENT = 50_000  # links remembered as admitted (~150 bytes each): the rest is the frontier's seen-set


class Sink(Protocol):
    """Where a crawl puts what it fetched. ``save`` gets the resource (its frontier
    :class:`~anyurl.transfer.frontier.Item`), the open :class:`~anyurl.Body` (type, size,
    meta) and its chunks, which it should read to the end (the crawl parses a page's links
    from them as they pass); it returns the bytes kept. It raises to fail the resource."""

    async def save(self, item: Item, body: Body, chunks: AsyncIterator[bytes]) -> int: ...

    # Optional: ``async def ahead(self, item: Item) -> int | None``, asked before a resource that is
    # no listing is opened: the bytes kept when the sink dealt with it itself (found it up to date,
    # left it out, resumed it), recorded as fetched; None: the crawl opens it and calls save.


def _host_dir(u: URL) -> str:
    host = str(getattr(u, "host", "") or "")
    port = getattr(u, "port", 0)
    if not host:
        return local_name(u.scheme)
    return local_name(f"{host}:{port}" if port else host)


def local_path(url: str | URL) -> list[str]:
    """The names of the local path a crawl saves *url* under (below DIR): its host
    (``host:port`` when the URL names a port), then its path's segments, decoded once and
    made safe (:func:`anyurl.transfer.names.local_name`); a page at a directory URL is
    ``index.html``, a query is kept in the last name (``page?x=1``)."""
    u = parse(url) if isinstance(url, str) else url
    top = _host_dir(u)
    if isinstance(u, HTTPURL):
        segs = [percent_decode(s) for s in u.path.lstrip("/").split("/")]
        if u.search is not None:
            segs[-1] += "?" + percent_decode(u.search)
        return [top, *[local_name(s) if s else "index.html" for s in segs[:-1] if s],
                local_name(segs[-1]) if segs[-1] else "index.html"]
    if isinstance(u, FTPURL):
        return [top, *[local_name(s) for s in u.cwd if s], local_name(u.name or "index")]
    if isinstance(u, GopherURL):
        segs = [s for s in u.selector.split("/") if s] or ["index"]
        if u.search is not None:
            segs[-1] += "?" + u.search
        return [top, *[local_name(s) for s in segs]]
    if isinstance(u, (NewsURL, NNTPURL)):
        group = getattr(u, "group", None) or "news"
        return [top, local_name(group), name_for_url(u)]
    path = str(getattr(u, "path", "") or "")
    segs = [s for s in path.split("/") if s] or ["index"]
    return [top, *[local_name(s) for s in segs]]


def _base_names(base: URL) -> list[str]:
    """The local names of *base*'s directory (what :func:`local_path` gives the URLs below it)."""
    names = local_path(base)
    if isinstance(base, HTTPURL) or (isinstance(base, FTPURL) and not base.name) or (
            isinstance(base, GopherURL) and base.gophertype not in ("1", "")):
        return names[:-1]  # a page or a file: its directory
    return names


class DirectorySink:
    """Each resource into ``DIR/`` :func:`local_path`: through a part file, moved into place
    when whole (a failed or interrupted fetch leaves no file under the final name), never
    through a symlink. A second crawl replaces a file with what the server sends now.

    *base* (a mirror's start URL): what lies below its directory is saved relative to DIR
    (``DIR/sub/file`` as ``anyurl mirror`` names it), anything else as ``DIR/host/path``."""

    def __init__(self, dest: str | os.PathLike[str], base: URL | None = None) -> None:
        self.dest = os.fspath(dest)
        os.makedirs(self.dest, exist_ok=True)
        self._made: set[str] = set()
        self._base = _base_names(base) if base is not None else None

    def names(self, url: str) -> list[str]:
        """The local names of *url* below DIR (its file's last)."""
        names = local_path(url)
        base = self._base
        if base is not None and len(names) > len(base) and names[:len(base)] == base:
            return names[len(base):]
        return names

    def folder(self, names: list[str], url: str) -> str:
        """DIR/names..., made where missing (never through a symlink)."""
        return self._folder(names, url)

    def _folder(self, names: list[str], url: str) -> str:
        folder = self.dest
        for name in names:
            folder = os.path.join(folder, name)
            if folder in self._made:
                continue
            try:
                os.mkdir(folder)
            except FileExistsError:
                if not os.path.isdir(folder) or os.path.islink(folder):
                    raise TransferError(f"cannot save under {folder}: a file of that name is there "
                                        "(another URL's)", url=url) from None
            except OSError as exc:
                raise TransferError(f"cannot create directory {folder}: {exc.strerror or exc}", url=url) from exc
            if len(self._made) < 100_000:
                self._made.add(folder)
        return folder

    def place(self, url: str) -> tuple[str, str]:
        """The local path of *url* and its part file, its directories made."""
        names = self.names(url)
        folder = self._folder(names[:-1], url)
        path = os.path.join(folder, names[-1])
        if os.path.isdir(path) and not os.path.islink(path):
            raise TransferError(f"cannot save as {path}: a directory of that name is there", url=url)
        refuse_symlink(path, url)
        return path, os.path.join(folder, f".{names[-1]}{PART_SUFFIX}")

    async def save(self, item: Item, body: Body, chunks: AsyncIterator[bytes]) -> int:
        path, part = self.place(item.url)
        done, _ = await save_part(part, path, chunks, item.url, below=self.dest, place=_replace)
        return done


def _replace(part: str, path: str) -> bool:
    os.replace(part, path)
    return True


class _NullSink:
    async def save(self, item: Item, body: Body, chunks: AsyncIterator[bytes]) -> int:
        n = 0
        async for chunk in chunks:
            n += len(chunk)
        return n


# the rest of an http URL after its origin that str(parse(url)) leaves as it is
_PLAIN_REST = re.compile(r"(?:[A-Za-z0-9\-._~!$&'()*+,;=@/:]|%[0-9A-Fa-f]{2})*"
                         r"(\?(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2})*)?\Z")


class FastScope:
    """:class:`~anyurl.transfer.walk.ScopeRules` with a fast path for a page's links to its
    seed's own http(s) origin (most of a web crawl's): the rules are read off the URL's text
    against what was worked out once per seed (its origin, host, directory), with no parse.
    Every other entry goes to the rules themselves; both give the same answers (tested)."""

    def __init__(self, seeds: Sequence[URL], *, same_host: bool = True, cross_scheme: bool = False,
                 under_seed: bool = False) -> None:
        self.rules = scope_rules(seeds, same_host=same_host, cross_scheme=cross_scheme, under_seed=under_seed)
        # per seed: (origin "scheme://hostport/", host queue, (family, host, port), directory or None)
        self.fast: list[tuple[str, str, tuple[str, str, int], str | None] | None] = []
        for seed in seeds:
            if isinstance(seed, HTTPURL) and seed.user is None:
                origin = f"{seed.scheme}://{seed.hostport}/"
                under = seed.path[: seed.path.rfind("/") + 1] if under_seed else None
                self.fast.append((origin, seed.host.lower(), (family(seed.scheme), seed.host.lower(), seed.port),
                                  under))
            else:
                self.fast.append(None)
        self._listed: URL | None = None
        self._listed_where: tuple[tuple[str, str, int], str] | None = None

    def new(self, url: str, entry: Entry | None, seed: int, depth: int, kind: str) -> New:
        return self.rules.new(url, entry, seed, depth, kind)

    def _where(self, listed: URL) -> tuple[tuple[str, str, int], str] | None:
        """(origin, path) of the listing a link was found in, for the link-back-up test."""
        if listed is not self._listed:
            self._listed = listed
            self._listed_where = None
            if isinstance(listed, HTTPURL) and listed.search is None:
                self._listed_where = ((family(listed.scheme), str(listed.host).lower(), listed.port),
                                      listed.path.strip("/"))
        return self._listed_where

    def child(self, entry: Entry, listed: URL, seed: int, depth: int) -> New | None:
        """The frontier record of *entry* (see ScopeRules.child)."""
        fast = self.fast[seed]
        url = entry.url
        if fast is None or url is None or not url.startswith(fast[0]) or entry.kind not in ("page", "file") \
                or (entry.key is not None and entry.key != url) or listed.scheme == "file":
            return self.rules.child(entry, listed, seed, depth)
        if entry.rel is not None:
            return None
        origin, host, where, under = fast
        m = _PLAIN_REST.match(url, len(origin))
        if m is None:
            return self.rules.child(entry, listed, seed, depth)
        query = m.group(1)
        path = url[len(origin): m.start(1)] if query is not None else url[len(origin):]
        if under is not None and not path.startswith(under) and "requisite" not in entry.meta:
            return None
        key = url.rstrip("/") or url
        if query is None:  # a link back up to a directory above (or to the page itself)
            here = self._where(listed)
            if here is not None and here[0] == where:
                c = path.strip("/")
                if c == here[1] or not c or here[1].startswith(c + "/"):
                    return None
        return New(url, key, host, seed, depth, entry.kind, entry.name)


@dataclass(frozen=True, slots=True)
class CrawlEvent:
    """One resource done: ``kind`` "fetched", "listed", "error" or "skipped" (robots.txt)."""

    kind: str
    url: str
    scheme: str
    depth: int
    seed: int
    size: int = 0
    found: int = 0  # new URLs it led to
    error: str | None = None
    exit_code: int = 0  # the CLI's exit code for the error


@dataclass
class CrawlResult:
    """Counts of this run (``totals``: of every run on the same state, at the end)."""

    fetched: int = 0
    listed: int = 0
    errors: int = 0
    skipped: int = 0
    bytes: int = 0
    admitted: int = 0
    pending: int = 0
    seconds: float = 0.0
    by_scheme: dict[str, dict[str, int]] = field(default_factory=dict)
    first_errors: list[tuple[str, str]] = field(default_factory=list)  # the first 100
    first_exit_codes: list[int] = field(default_factory=list)  # the CLI's exit code of each of those
    totals: Totals | None = None
    interrupted: bool = False

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def rate(self) -> float:
        """Resources finished a second, this run."""
        n = self.fetched + self.listed + self.errors + self.skipped
        return n / self.seconds if self.seconds > 0 else 0.0

    def count(self, event: CrawlEvent) -> None:
        row = self.by_scheme.setdefault(event.scheme, {"fetched": 0, "listed": 0, "errors": 0, "skipped": 0,
                                                       "bytes": 0})
        key = {"fetched": "fetched", "listed": "listed", "error": "errors", "skipped": "skipped"}[event.kind]
        setattr(self, key, getattr(self, key) + 1)
        row[key] += 1
        row["bytes"] += event.size
        self.bytes += event.size
        self.admitted += event.found
        self.pending += event.found - 1
        if event.kind == "error" and len(self.first_errors) < 100:
            self.first_errors.append((event.url, event.error or ""))
            self.first_exit_codes.append(event.exit_code or 1)


class _Job(str):
    """A frontier item's URL as the batch engine takes it (the item rides along)."""

    item: Item
    visited: bool

    def __new__(cls, item: Item) -> _Job:
        job = super().__new__(cls, item.url)
        job.item = item
        job.visited = False
        return job


class _Takes:
    """What the crawl took from the frontier, as the batch engine reads it (:class:`Chunks`):
    a list at a time, so its workers take the URLs of one list with no await between them."""

    def __init__(self) -> None:
        self._lists: collections.deque[list[_Job]] = collections.deque()
        self._closed = False
        self._wake = asyncio.Event()

    def put(self, jobs: list[_Job]) -> None:
        self._lists.append(jobs)
        self._wake.set()

    def close(self) -> None:
        self._closed = True
        self._wake.set()

    def __aiter__(self) -> _Takes:
        return self

    async def __anext__(self) -> list[_Job]:
        while not self._lists:
            if self._closed:
                raise StopAsyncIteration
            self._wake.clear()
            await self._wake.wait()
        return self._lists.popleft()


class _Visits(BatchSink):
    """The batch engine's sink for a crawl: each URL visited (robots.txt, politeness, the
    fetch, the links, the record) once the engine gives it a turn."""

    def __init__(self, crawler: _Crawler) -> None:
        self.crawler = crawler

    async def transfer(self, client: Client, item: BatchItem) -> None:
        job = item.given
        assert isinstance(job, _Job)
        job.visited = True
        await self.crawler.visit(job.item, item.url)


class _Crawler:
    def __init__(self, client: Client, seeds: Sequence[URL], frontier: Frontier, sink: Sink, *,
                 max_depth: int | None, same_host: bool, cross_scheme: bool, under_seed: bool,
                 per_host: int, parallel: int, delay: float, robots: bool, requisites: bool,
                 follow: Callable[[Entry], bool] | None, on_event: Callable[[CrawlEvent], None] | None) -> None:
        self.client = client
        self.seeds = list(seeds)
        self.frontier = frontier
        self.sink = sink
        self.ahead: Callable[[Item], Awaitable[int | None]] | None = getattr(sink, "ahead", None)
        self.max_depth = max_depth
        self.scope = FastScope(self.seeds, same_host=same_host, cross_scheme=cross_scheme, under_seed=under_seed)
        self.per_host = max(1, per_host)
        self.parallel = max(1, parallel)
        self.delay = max(0.0, delay)
        self.robots = robots
        self.requisites = requisites
        self.follow = follow
        self.on_event = on_event
        self.result = CrawlResult()
        self.next_start: dict[str, float] = {}
        self.rules: OrderedDict[str, tuple[Any, float]] = OrderedDict()
        self.robot_locks: dict[str, asyncio.Lock] = {}
        self.recording: set[asyncio.Future[None]] = set()  # records of ended fetches, committing
        self.recent: dict[tuple[int, str | None, str], None] = {}  # links admitted lately (insertion order)
        self.running: dict[str, int] = {}  # per host: fetches handed to the batch, not ended
        self.in_flight = 0
        self.mux: dict[str, int] = {}  # hosts whose origin multiplexes now: its pipeline depth
        self.drivers: dict[str, Any] = {}
        self.wake: asyncio.Future[None] | None = None  # set when a fetch ends (the loop waits on it)
        # several requests at once to a multiplexing origin only where its connections stay per_host
        self.may_mux = self.delay <= 0 and client.limits.per_host <= self.per_host

    # -- the loop ---------------------------------------------------------------------

    async def run(self) -> CrawlResult:
        started = time.monotonic()
        opener = getattr(self.frontier, "open", None)
        if opener is not None:
            await opener()
        first = await self.frontier.totals()
        self.result.pending = first.pending
        seeds = [self.scope.new(str(s), None, i, 0, "page") for i, s in enumerate(self.seeds)]
        added = await self.frontier.add(seeds)
        self.result.pending += added
        self.result.admitted += added
        # the fetches go through the batch engine (per-origin scheduling: plain turns, HTTP/2
        # streams, pipelined GETs, queued FTP transfers); the crawl feeds it what the frontier
        # gives, at most per_host per host (more on a multiplexed origin: charged)
        feed = _Takes()
        engine = Batch(self.client, Chunks(feed), _Visits(self), parallel=self.parallel, on_result=self.ended)
        runner: asyncio.Future[Any] = asyncio.ensure_future(engine.run())
        loop = asyncio.get_running_loop()
        try:
            while True:
                jobs = await self.take()
                if jobs:
                    self.in_flight += len(jobs)
                    feed.put(jobs)
                if not self.in_flight and not self.recording:
                    break
                # a fetch ends its host's turn; its record commits meanwhile (and may admit more)
                # (a plain future that ended() sets: no task, no extra turns of the loop per fetch)
                wake = self.wake = loop.create_future()
                waits: set[asyncio.Future[Any]] = {runner, wake, *self.recording}
                done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
                self.wake = None
                if runner in done:
                    runner.result()  # a bug ends the crawl, never hangs it
                    raise TransferError("the crawl's fetches ended early")
                for task in done & self.recording:
                    self.recording.discard(task)
                    task.result()
        except asyncio.CancelledError:
            self.result.interrupted = True
            raise
        finally:
            feed.close()
            if not runner.done():
                runner.cancel()
            with contextlib.suppress(BaseException):
                await runner
            for record in list(self.recording):  # fetches that ended: their records commit
                with contextlib.suppress(BaseException):
                    await asyncio.shield(record)
            self.result.seconds = time.monotonic() - started
            with contextlib.suppress(Exception):
                self.result.totals = await asyncio.shield(self.frontier.totals())
                self.result.pending = self.result.totals.pending
        return self.result

    async def take(self) -> list[_Job]:
        """What the frontier gives now, within the crawl's bounds: *parallel* fetches in all
        (a kill loses no more) and each host's share (charged)."""
        jobs: list[_Job] = []
        while True:
            free = self.parallel - self.in_flight - len(jobs)
            if free <= 0:
                return jobs
            items = await self.frontier.take(free, self.charged(), self.per_host)
            for item in items:
                self.running[item.host] = self.running.get(item.host, 0) + 1
                jobs.append(_Job(item))
            if not items or not self.mux:
                return jobs  # (a multiplexed host's share may grow with every take: take again)

    def charged(self) -> dict[str, int]:
        """Each host's fetches in flight as the frontier counts them against per_host: on an
        origin that multiplexes (its driver says so: HTTP/2, pipelined GETs, queued FTP
        transfers), per_host connections carry up to per_host x its pipeline depth."""
        if not self.mux:
            return self.running
        out = dict(self.running)
        for host, depth in self.mux.items():
            if host in out:
                out[host] = max(0, out[host] - self.per_host * (depth - 1))
        return out

    def ended(self, result: BatchResult) -> None:
        """A fetch through the batch ended (recorded by the visit, or here if it never ran)."""
        job = result.given
        assert isinstance(job, _Job)
        item = job.item
        if result.error is not None or not job.visited:  # refused before the visit (a URL this Client refuses)
            err = result.error or TransferError("not fetched", url=item.url)
            self.record(item, "error", Outcome(FAILED, item.url.split(":", 1)[0], error=str(err)), [],
                        error=str(err), exit_code=err.exit_code)
        host = item.host
        self.running[host] -= 1
        if not self.running[host]:
            del self.running[host]
        self.in_flight -= 1
        if self.may_mux and result.url is not None:
            self.learn(host, result.url)
        if self.wake is not None and not self.wake.done():
            self.wake.set_result(None)

    def learn(self, host: str, u: URL) -> None:
        """Whether *host*'s origin multiplexes now (and how deep), from its driver."""
        driver = self.drivers.get(u.scheme, False)
        if driver is False:
            try:
                driver = self.client.handler(u)
            except AnyURLError:
                driver = None
            if u.scheme != "ftp":  # (an ftp URL's driver depends on its host: a proxy or not)
                self.drivers[u.scheme] = driver
        if driver is not None and driver.multiplexed(u):
            if len(self.mux) >= 10_000:  # bounded: only the hosts in flight matter
                self.mux = {h: d for h, d in self.mux.items() if h in self.running}
            self.mux[host] = max(2, driver.pipeline_depth(u) or STREAM_WORKERS)
        else:
            self.mux.pop(host, None)

    async def pace(self, host: str, delay: float) -> None:
        if delay <= 0:
            return
        loop = asyncio.get_running_loop()
        now = loop.time()
        at = max(now, self.next_start.get(host, now))
        self.next_start[host] = at + delay
        if len(self.next_start) > 10_000:  # only hosts being fetched matter
            self.next_start = {h: t for h, t in self.next_start.items() if t > now}
        if at > now:
            await asyncio.sleep(at - now)

    # -- one URL ------------------------------------------------------------------------

    async def visit(self, item: Item, u: URL | None = None) -> None:
        if u is None:
            u = parse(item.url)
        scheme = u.scheme
        delay = self.delay
        if self.robots and isinstance(u, HTTPURL):
            rules, crawl_delay = await self.robot_rules(u)
            if rules is not None and not rules.can_fetch(item.url, self.client.user_agent):
                self.record(item, "skipped", Outcome(SKIPPED, scheme), [])
                return
            delay = max(delay, crawl_delay)
        await self.pace(item.host, delay)
        entries: list[Entry] = []
        size = 0
        listed = False
        try:
            try:
                kept = None
                if self.ahead is not None and item.kind not in _DIRECTORY_KINDS and item.kind != "symlink":
                    kept = await self.ahead(item)
                listed, size = (False, kept) if kept is not None else await self.open(
                    item, self.target(item, u), entries)
            except AnyURLError:
                if not (isinstance(u, FTPURL) and item.kind == "symlink"):
                    raise
                entries.clear()  # an FTP symlink that is no directory: fetch it as a file
                kept = None if self.ahead is None else await self.ahead(item)
                listed, size = (False, kept) if kept is not None else await self.open(item, _binary(u), entries)
        except Exception as exc:
            err = exc if isinstance(exc, AnyURLError) else translate_errors(exc, u)
            self.record(item, "error", Outcome(FAILED, scheme, error=str(err)), [], error=str(err),
                            exit_code=err.exit_code)
            return
        found = self.children(item, u, entries)
        self.record(item, "listed" if listed else "fetched", Outcome(DONE, scheme, size), found)

    @staticmethod
    def target(item: Item, u: URL) -> URL:
        if isinstance(u, FTPURL):
            if item.kind in _DIRECTORY_KINDS or item.kind == "symlink" or item.depth == 0 and not u.name:
                return _directory(u)
            if item.depth == 0 and u.typecode is None:
                return u  # a seed: the server says whether it is a directory (CWD) or a file
            return _binary(u)
        return u

    async def open(self, item: Item, target: URL, entries: list[Entry]) -> tuple[bool, int]:
        """Open *target*; a listing's entries, or the body saved (and a page's links parsed
        as it passes). (listed, bytes saved)."""
        async with self.client.open(target) as body:
            if body.entries is not None:
                async for entry in body.aiter_entries():
                    entries.append(entry)
                return True, 0
            # a style sheet's url() and @import are requisites too (wget -p reads them)
            sheet = self.requisites and is_css(body.content_type)
            parser = self.page_parser(body, sheet) if sheet or is_html(body.content_type) else None
            got = 0

            async def chunks() -> AsyncIterator[bytes]:
                nonlocal parser, got
                async for chunk in body:
                    got += len(chunk)
                    if parser is not None:
                        try:
                            entries.extend(parser.feed(chunk))
                        except AnyURLError as exc:  # past the parse limits: saved, links not all read
                            log.info("%s", exc)
                            parser = None
                    yield chunk

            stream = chunks()
            size = await self.sink.save(item, body, stream)
            async for _ in stream:  # whatever the sink left: read for the links
                pass
            if body.size is not None and got < body.size:
                raise TruncatedTransfer(f"got {got} of {body.size} bytes", url=target)
            if parser is not None:
                with contextlib.suppress(AnyURLError):
                    entries.extend(parser.close())
            return False, size

    def page_parser(self, body: Body, stylesheet: bool = False) -> Any:
        from ..protocols.html import MAX_PAGE_BYTES, PageLinks

        final = body.meta.get("url")
        base = final if isinstance(final, str) and final else str(body.url)
        limits = self.client.limits
        try:
            return PageLinks(base, charset=body.charset, max_bytes=limits.max_size or MAX_PAGE_BYTES,
                             max_entries=limits.max_entries, requisites=self.requisites, stylesheet=stylesheet)
        except AnyURLError:
            return None

    def children(self, item: Item, listed: URL, entries: list[Entry]) -> list[New]:
        if self.max_depth is not None and item.depth + 1 > self.max_depth:
            return []
        out = []
        recent = self.recent
        for entry in entries:
            if self.follow is not None and entry.url and not self.follow(entry):
                continue
            # a link admitted moments ago from this seed (every page's stylesheet, its menu) is in
            # the seen-set already: not parsed, scoped and offered to the frontier again. (What
            # was refused is judged again: a link back up from one page may be new from another.)
            mark = (item.seed, entry.url, entry.kind)
            if mark in recent:
                continue
            new = self.scope.child(entry, listed, item.seed, item.depth + 1)
            if new is not None:
                out.append(new)
                recent[mark] = None
                if len(recent) > _RECENT:
                    del recent[next(iter(recent))]
        return out

    def record(self, item: Item, kind: str, outcome: Outcome, found: list[New], error: str | None = None,
               exit_code: int = 0) -> None:
        """Hand the outcome of *item* to the frontier; the fetch's turn ends now, the record
        commits (grouped with others) while the next fetches start."""
        self.recording.add(asyncio.ensure_future(self.done(item, kind, outcome, found, error, exit_code)))

    async def done(self, item: Item, kind: str, outcome: Outcome, found: list[New], error: str | None = None,
                   exit_code: int = 0) -> None:
        added = await self.frontier.finish(item, outcome, found)
        event = CrawlEvent(kind, item.url, outcome.scheme, item.depth, item.seed, outcome.size, added, error,
                           exit_code)
        self.result.count(event)
        if self.on_event is not None:
            self.on_event(event)

    # -- robots.txt ---------------------------------------------------------------------

    async def robot_rules(self, u: HTTPURL) -> tuple[Any, float]:
        origin = f"{u.scheme}://{u.hostport}"
        if origin in self.rules:
            self.rules.move_to_end(origin)
            return self.rules[origin]
        lock = self.robot_locks.setdefault(origin, asyncio.Lock())
        async with lock:
            if origin not in self.rules:
                state = await self.frontier.host(origin)
                if not state.robots_known:  # asked once per crawl, even across restarts
                    state = await self.fetch_robots(origin)
                    await self.frontier.set_host(origin, state)
                self.rules[origin] = (_parse_robots(state.robots), state.delay)
                while len(self.rules) > _ROBOTS_CACHE:
                    self.rules.popitem(last=False)
        self.robot_locks.pop(origin, None)
        return self.rules[origin]

    async def fetch_robots(self, origin: str) -> HostState:
        t = self.client.timeouts
        deadline = t.read if t.total is None else min(t.read, t.total)
        try:
            async with asyncio.timeout(deadline):
                resp = await self.client.fetch(origin + "/robots.txt", max_size=_ROBOTS_MAX)
        except (TimeoutError, AnyURLError):
            return HostState(None, True, 0.0)
        text = resp.text()
        delay = 0.0
        rules = _parse_robots(text)
        if rules is not None:
            with contextlib.suppress(Exception):
                value = float(rules.crawl_delay(self.client.user_agent) or 0.0)
                if value > 0:  # NaN fails this too
                    delay = min(value, CRAWL_DELAY_MAX)
        return HostState(text, True, delay)


def _parse_robots(text: str | None) -> Any:
    if not text:
        return None
    from protego import Protego

    try:
        return Protego.parse(text)
    except Exception:  # one protego cannot read: allow, as crawlers do
        return None


def _binary(u: FTPURL) -> FTPURL:
    """An FTP file fetched byte-exact (``;type=i``)."""
    if not u.name:
        return u
    return FTPURL(u.scheme, u.host, u.port, u.user, u.password, u.cwd, u.name, "i")


def _directory(u: FTPURL) -> FTPURL:
    """An FTP URL opened as a directory (CWD into it): a file there fails at once."""
    if u.name:
        return FTPURL(u.scheme, u.host, u.port, u.user, u.password, (*u.cwd, u.name), "", None)
    return u


async def crawl(client: Client, seeds: str | URL | Sequence[str | URL], *, dest: str | os.PathLike[str] | None = None,
                sink: Sink | None = None, state: str | os.PathLike[str] | Frontier | None = None,
                max_depth: int | None = None, same_host: bool = True, cross_scheme: bool = False,
                under_seed: bool = True, per_host: int = 2, parallel: int = 8, delay: float = 0.0,
                robots: bool = True, requisites: bool = True, follow: Callable[[Entry], bool] | None = None,
                on_event: Callable[[CrawlEvent], None] | None = None,
                live: Callable[[CrawlResult], None] | None = None) -> CrawlResult:
    """Crawl from *seeds* (see the module docstring); the counts of this run.

    *dest* saves each resource under that directory (:class:`DirectorySink`), or *sink*
    takes them (neither: they are read and counted, not kept). *state*: the crawl state,
    a SQLite file path (created, or continued) or any :class:`~anyurl.transfer.frontier.Frontier`;
    None: a temporary file, removed at the end. *max_depth*: links followed from a seed
    (0: the seeds only). *on_event* is called after each resource is done (and recorded);
    *live* once at the start with the :class:`CrawlResult` the crawl keeps counting in.
    Errors are counted and reported in the result (``first_errors``; the state has all),
    never raised; a cancelled crawl (Ctrl-C) leaves the state consistent.
    """
    seed_list = [seeds] if isinstance(seeds, (str, URL)) else list(seeds)
    if not seed_list:
        raise ValueError("crawl needs at least one seed URL")
    parsed = [client.parse(s) for s in seed_list]
    if sink is None:
        sink = DirectorySink(dest) if dest is not None else _NullSink()
    elif dest is not None:
        raise ValueError("give dest or sink, not both")
    own = not hasattr(state, "take")
    frontier: Frontier = SQLiteFrontier(state) if own else state  # type: ignore[arg-type,assignment]
    crawler = _Crawler(client, parsed, frontier, sink, max_depth=max_depth, same_host=same_host,
                       cross_scheme=cross_scheme, under_seed=under_seed, per_host=per_host, parallel=parallel,
                       delay=delay, robots=robots, requisites=requisites, follow=follow, on_event=on_event)
    if live is not None:
        live(crawler.result)
    try:
        return await crawler.run()
    finally:
        if own:
            await asyncio.shield(frontier.close())


# -- beyond one machine ------------------------------------------------------------------


def by_host(seeds: Sequence[str | URL], parts: int) -> list[list[str]]:
    """*seeds* in *parts* groups, every seed of one host in the same group (a stable hash of the
    host: the same seeds give the same groups in every run, so each group's state continues).
    Crawled with ``same_host=True`` (the default), each group's crawl stays on its own hosts: a
    host is crawled by one process only, and its politeness (``per_host``, delays, robots.txt)
    holds across the whole cluster. See docs/crawl.md."""
    import zlib

    out: list[list[str]] = [[] for _ in range(max(1, parts))]
    for seed in seeds:
        u = parse(seed) if isinstance(seed, str) else seed
        host = str(getattr(u, "host", "") or u.scheme).lower()
        out[zlib.crc32(host.encode("utf-8", "surrogateescape")) % len(out)].append(str(u))
    return out


def crawl_sync(seeds: Sequence[str], *, client_kwargs: dict[str, Any] | None = None,
               **options: Any) -> dict[str, Any]:
    """:func:`crawl` in a new event loop with a Client of its own (*client_kwargs*), for a
    worker process (a Dask task): a summary dict (counts, bytes, seconds, the first errors,
    the process id) that pickles. *options* are :func:`crawl`'s (``dest``, ``state``...)."""
    from ..client import Client

    async def run() -> CrawlResult:
        async with Client(**(client_kwargs or {})) as client:
            return await crawl(client, list(seeds), **options)

    r = asyncio.run(run())
    return {"seeds": list(seeds), "fetched": r.fetched, "listed": r.listed, "errors": r.errors,
            "skipped": r.skipped, "bytes": r.bytes, "pending": r.pending, "seconds": r.seconds,
            "by_scheme": r.by_scheme, "first_errors": r.first_errors, "pid": os.getpid()}

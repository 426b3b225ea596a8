"""Walk every resource reachable from a URL: breadth-first, deduplicated, in scope, polite.

``async for found in client.walk(url): ...`` lists the start URL, then every
directory-like entry it finds (FTP and file: directories, gopher menus, news
groups, prospero directories, links that turn out to be directories) level by
level, and yields one :class:`Found` per resource. Files are yielded, never
opened: a walk costs one listing per directory.

Rules, in the order they apply to each entry:

* no URL, info/error lines and parent/self links (``Entry.rel``) are dropped;
* scope: a remote resource never leads into ``file:``; other schemes only
  with ``cross_scheme=True`` (http/https, ftp/ftps and news/nntp count as one);
  other hosts only with ``same_host=False``; an ancestor of the directory
  being listed (a ``..`` menu item) is never walked into;
* ``follow(entry)`` (when given) must return True;
* dedup by ``Entry.key`` (the URL unless the listing knows better: the
  message-id of an article, so a cross-posted article is found once); a
  symlink (``kind="symlink"``) whose target is known (FTP ``LIST`` shows
  ``-> target``, file: asks the OS) is keyed by the target, so a symlinked
  directory is not walked twice, and a link back to an ancestor never loops;
  without a target (MLSD shows a symlinked directory as a plain one), a listing
  identical to one of its ancestors' (names, kinds, sizes, dates) is taken for
  a loop and not walked;
* robots.txt (http/https, parsed with protego) for the Client's User-Agent;
  its Crawl-delay raises the host's minimum delay, up to ``CRAWL_DELAY_MAX``
  seconds (a server cannot make a walk sleep for years). The robots.txt fetch
  is bounded like any other: at most ``_ROBOTS_MAX`` bytes, and it must end
  within ``Timeouts.read`` (the idle timeout, ``--timeout``; ``total`` when
  shorter): a robots.txt trickled byte by byte counts as none.

Several seeds: ``walk(client, [url1, url2, ...])`` walks them all with one seen-set,
each entry judged by the scope of the seed it was reached from (``Found.seed`` says
which); a resource two seeds reach is yielded once. ``under_seed=True`` also keeps an
http(s) walk below each seed's directory (wget's --no-parent; a page's requisites are
fetched wherever on the host they live).

Fetched once: a walk opens a web page (or a link that may be a directory) to learn
what it is. With ``keep=True`` the bytes it read are handed on in ``Found.content``
(:class:`Content`: in memory up to 64 KiB, then a temporary file), so whatever saves
the resource never fetches it again (mirror does this).

Politeness: each host has its own queue (ordered by depth) and at most
``per_host`` listings at once, started at least ``delay`` seconds apart, so
a slow host (a tarpit) only holds its own workers and never stalls the
walk of the others. Memory is bounded by ``max_items`` (resources met) and
``max_pending`` (directories found and not yet listed: ~1 KB each), and by the
listings being worked on (``per_host`` a host), each held whole because
``Found.entries`` hands it over and the loop check fingerprints it: at most
``Limits.max_entries`` entries, ~0.6 KB each (docs/limits.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import heapq
import itertools
import logging
import os
import tempfile
import weakref
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import AnyURLError, TransferError, TruncatedTransfer
from ..handlers.file import file_url_for
from ..links import body_entries
from ..protocols.ftp import directory_text, entry_text
from ..response import Body, Entry, Response, translate_errors
from ..schemes import family
from ..settings import Limits, Timeouts
from ..urls import FTPURL, HTTPURL, URL, FileURL, GopherURL, parse, percent_encode

if TYPE_CHECKING:
    from .frontier import New

__all__ = ["SKIP_KINDS", "Content", "Found", "ScopeRules", "Source", "child_key", "listed_dir", "looks_like_page", "scope_rules", "walk"]


class Source(Protocol):
    """What a walk asks of the :class:`anyurl.Client` it runs on."""

    @property
    def limits(self) -> Limits: ...
    @property
    def user_agent(self) -> str: ...
    @property
    def timeouts(self) -> Timeouts: ...

    def parse(self, url: str | URL) -> URL: ...

    def open(self, url: str | URL) -> AbstractAsyncContextManager[Body]: ...

    async def fetch(self, url: str | URL, *, max_size: int | None = None) -> Response: ...

log = logging.getLogger("anyurl.walk")

# kinds that are listed when met; a symlink or a page is opened to learn what it is
_DIRECTORY_KINDS = frozenset({"directory", "group"})
_PROBE_KINDS = frozenset({"symlink", "page"})
SKIP_KINDS = frozenset({"info", "error", "session"})
_PAGE_SUFFIXES = (".html", ".htm", ".xhtml", ".shtml", ".php", ".asp", ".aspx", ".jsp", ".cgi")
_ROBOTS_MAX = 512 * 1024
CRAWL_DELAY_MAX = 30.0  # seconds: the largest robots.txt Crawl-delay honoured
_SPOOL = 64 * 1024  # Content kept in memory up to this, then in a temporary file


class Content:
    """The bytes of a resource a walk opened to see what it is, kept so that it is
    never fetched twice: in memory up to 64 KiB, then in an unnamed temporary file (many
    pages wait in the walk's queue: memory stays bounded). ``size`` bytes; ``chunks()``
    reads them from the start; ``close()`` frees them (garbage collection does too)."""

    __slots__ = ("__weakref__", "_closer", "_fd", "_mem", "size")

    def __init__(self) -> None:
        self._mem = bytearray()
        self._fd: int | None = None
        self._closer: weakref.finalize[Any, Any] | None = None
        self.size = 0

    def write(self, data: bytes) -> None:
        self.size += len(data)
        if self._fd is None:
            if len(self._mem) + len(data) <= _SPOOL:
                self._mem += data
                return
            fd, name = tempfile.mkstemp(prefix="anyurl-page-")
            os.unlink(name)  # unnamed: gone with its descriptor
            self._fd = fd
            self._closer = weakref.finalize(self, os.close, fd)
            data, self._mem = bytes(self._mem) + data, bytearray()
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view):]

    def chunks(self, size: int = 256 * 1024) -> Iterator[bytes]:
        if self._fd is None:
            if self._mem:
                yield bytes(self._mem)
            return
        at = 0
        while chunk := os.pread(self._fd, size, at):
            at += len(chunk)
            yield chunk

    def read(self) -> bytes:
        return b"".join(self.chunks())

    def close(self) -> None:
        self._mem = bytearray()
        if self._closer is not None:
            self._closer()

    def tee(self, body: Body) -> AsyncIterator[bytes]:
        """*body*'s chunks, each also written here."""

        async def chunks() -> AsyncIterator[bytes]:
            async for chunk in body:
                self.write(chunk)
                yield chunk

        return chunks()


@dataclass(frozen=True)
class Found:
    """One resource a walk reached.

    ``entry`` is how its parent listed it (None for the start URL); ``path``
    the entry names leading to it from the start (``()`` for the start);
    ``depth`` ``len(path)``. ``directory`` is True when it is directory-like
    (it was, or would be below ``max_depth``, listed). ``error`` is set when
    listing it failed (the walk goes on). ``same_as`` names the directory an
    alias (a symlinked directory) stands for when that one is walked instead;
    for a file, the resource it is one with: a symlink to a file found already
    (by its ``Entry.key``, the link's target), or a file a symlink found before
    it led to. Such a file is yielded once more under its own name, marked, so a
    crawler fetches it once and a mirror still has both names.
    ``entries`` is a listed directory's listing, in the listing's order (a
    mirror names its children by it, whichever of them is found first).
    ``seed`` is the index of the seed it was reached from; ``content`` (``keep=True``)
    the bytes of a file the walk read whole to learn what it was (a web page), else None.
    """

    url: str
    entry: Entry | None
    depth: int
    path: tuple[str, ...]
    directory: bool
    parent: str | None = None
    error: AnyURLError | None = None
    same_as: str | None = None
    entries: list[Entry] | None = field(default=None, repr=False, compare=False)
    seed: int = 0
    content: Content | None = field(default=None, repr=False, compare=False)

    @property
    def name(self) -> str:
        """The last name of ``path`` ("" for the start URL)."""
        return self.path[-1] if self.path else ""


@dataclass(order=True, slots=True)  # slots: one per pending directory
class _Job:
    depth: int
    seq: int
    url: str = field(compare=False)
    entry: Entry | None = field(compare=False)
    path: tuple[str, ...] = field(compare=False)
    parent: str | None = field(compare=False)
    probe: bool = field(compare=False)  # a link: it may be a file
    via_link: bool = field(compare=False)
    ancestors: tuple[str, ...] = field(compare=False)  # canonical URLs of the directories above
    prints: tuple[int, ...] = field(compare=False)  # listing fingerprints of those directories
    alias: str | None = field(compare=False, default=None)  # a symlink's resolved target
    seed: int = field(compare=False, default=0)


def _canonical(u: URL) -> str:
    text = str(u)
    if u.scheme in ("ftp", "ftps") and getattr(u, "typecode", None) == "d":
        text = text[: -len(";type=d")]
    return text.rstrip("/") or text


def _host_of(u: URL) -> str:
    host = getattr(u, "host", None)
    if host:
        return str(host).lower()
    return u.scheme + ":"  # news:, file: and generic URLs: one queue per scheme


def _family(scheme: str) -> str:
    return family(scheme)


def _where(u: URL) -> tuple[str, str, int, str] | None:
    """(scheme, host, port, path) of a URL whose path is a "/" hierarchy, else None."""
    if isinstance(u, FTPURL):
        path = "/".join((*u.cwd, u.name))
    elif isinstance(u, GopherURL):
        if u.search is not None or u.gopher_plus is not None:
            return None
        path = u.selector
    elif isinstance(u, (HTTPURL, FileURL)):
        if getattr(u, "search", None) is not None:
            return None
        path = u.path
    else:
        return None
    return (_family(u.scheme), _host_of(u), getattr(u, "port", 0), path.strip("/"))


def _is_ancestor(candidate: URL, here: URL, of: Iterable[str], key: str | None = None) -> bool:
    """*candidate* (canonical *key*) is a directory listed above (or is) *here*, or its path
    is a prefix of *here*'s (a ".." parent link or a link back to the top)."""
    if key is None:
        key = _canonical(candidate)
    if key in of:
        return True
    c, h = _where(candidate), _where(here)
    if c is None or h is None or c[:3] != h[:3]:
        return False
    return c[3] == h[3] or c[3] == "" or h[3].startswith(c[3] + "/")


def _origin(u: URL) -> tuple[str, str, int]:
    return (_family(u.scheme), _host_of(u), getattr(u, "port", 0))


def _base_of(seed: URL) -> tuple[tuple[str, str, int], str] | None:
    """An http(s) seed's origin and directory ("a/b/" for "a/b/" and "a/b/page.html")."""
    if not isinstance(seed, HTTPURL):
        return None
    return _origin(seed), seed.path[: seed.path.rfind("/") + 1]


def _fingerprint(entries: list[Entry]) -> int:
    # parent/self links name where the listing is, not what it holds (an autoindex's "../")
    return hash(frozenset((e.name, e.kind, e.size, e.modified) for e in entries if not e.rel))


def looks_like_page(u: URL) -> bool:
    path = str(getattr(u, "path", "") or "")
    last = path.rsplit("/", 1)[-1]
    return not last or "." not in last or last.lower().endswith(_PAGE_SUFFIXES)


def _worth_probing(entry: Entry, u: URL) -> bool:
    """A symlink, an HTTP page, or a link to another scheme's resource may be a directory."""
    if entry.kind == "symlink":
        return True
    if u.scheme in ("http", "https"):  # an autoindex "file" is never opened to check
        # a page's style sheet is opened for its own url() and @import (requisites)
        return entry.kind != "file" and (looks_like_page(u) or "stylesheet" in entry.meta)
    if isinstance(u, GopherURL):  # the URL says what it is: only a menu lists
        return entry.kind == "page" and u.gophertype in ("1", "")
    return entry.kind == "page"


def listed_dir(listed: URL) -> FTPURL | None:
    """FTP: the directory a listing URL lists, as a URL with no password, name or typecode."""
    if not isinstance(listed, FTPURL) or listed.typecode not in (None, "d"):
        return None
    cwd = (*listed.cwd, listed.name) if listed.name else listed.cwd
    return FTPURL(listed.scheme, listed.host, listed.port, listed.user, None, cwd)


def _child_prefix(listed: URL) -> str | None:
    """FTP: the serialized URL of the listed directory, ending in "/". An entry whose URL is
    this plus its encoded name is a direct child (see child_key)."""
    d = listed_dir(listed)
    return None if d is None else directory_text(d, d.cwd)


def child_key(url: str, name: str, prefix: str) -> str | None:
    """The canonical key of *url* when it is exactly what the serializer writes for *name*
    in the directory *prefix* (as FTP listings do), else None (parse it). Such a URL has the
    listed directory's origin and one more segment, so it is in scope like the directory,
    and no ancestor of it by path: nothing to parse, nothing decoded."""
    if not name or "/" in name or name in (".", ".."):
        return None
    key = entry_text(prefix, name)
    if url == key or url == key + "/":  # a file, or a directory (the serializer's trailing "/")
        return key
    return None


def _as_directory(u: URL) -> URL:
    """FTP: probe a link as a directory (CWD into it): a file link then fails at once
    instead of starting a transfer."""
    if isinstance(u, FTPURL) and u.name:
        return dataclasses.replace(u, cwd=(*u.cwd, u.name), name="", typecode=None)
    return u


class _Walker:
    def __init__(self, client: Source, starts: Sequence[URL], *, max_depth: int | None,
                 follow: Callable[[Entry], bool] | None, same_host: bool, cross_scheme: bool,
                 per_host: int, delay: float, robots: bool, max_items: int, requisites: bool = False,
                 max_pending: int = 100_000, keep: bool = False, under_seed: bool = False) -> None:
        self.client = client
        self.requisites = requisites
        self.starts = list(starts)
        self.start = self.starts[0]
        self.keep = keep
        self.bases = [_base_of(s) if under_seed else None for s in self.starts]
        self.max_depth = max_depth
        self.follow = follow
        self.same_host = same_host
        self.cross_scheme = cross_scheme
        self.per_host = max(1, per_host)
        self.delay = max(0.0, delay)
        self.robots = robots
        self.max_items = max_items
        self.max_pending = max_pending
        self.seen: set[str] = set()
        self.dir_keys: set[str] = set()  # keys (and symlink targets) known to be directories
        self.walked_aliases: set[str] = set()  # symlink targets walked under a link's name
        self.linked_files: dict[str, str] = {}  # a file symlink's target (not met yet) -> the link's URL
        self.queues: dict[str, list[_Job]] = {}
        self.workers: dict[str, int] = {}
        self.next_start: dict[str, float] = {}
        self.host_delay: dict[str, float] = {}
        self.robot_rules: dict[str, Any] = {}
        self.robot_locks: dict[str, asyncio.Lock] = {}
        self.out: asyncio.Queue[Found | BaseException | None] = asyncio.Queue(maxsize=1024)
        self.pending = 0
        self.seq = itertools.count()
        self.tasks: set[asyncio.Task[None]] = set()

    # -- scheduling -------------------------------------------------------------

    def enqueue(self, job: _Job) -> None:
        host = _host_of(parse(job.url))
        heapq.heappush(self.queues.setdefault(host, []), job)
        self.pending += 1
        if self.workers.get(host, 0) < self.per_host:
            self.workers[host] = self.workers.get(host, 0) + 1
            task = asyncio.create_task(self.worker(host))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    async def worker(self, host: str) -> None:
        try:
            queue = self.queues[host]
            while queue:
                job = heapq.heappop(queue)
                await self.pace(host)
                try:
                    await self.list(job)
                except asyncio.CancelledError:
                    raise
                except BaseException as exc:  # a bug must end the walk, not hang it
                    await self.out.put(exc)
                finally:
                    self.pending -= 1
                    if self.pending == 0:
                        await self.out.put(None)
        finally:
            self.workers[host] -= 1

    async def pace(self, host: str) -> None:
        """Keep listings of one host at least the host's delay apart."""
        delay = max(self.delay, self.host_delay.get(host, 0.0))
        if delay <= 0:
            return
        loop = asyncio.get_running_loop()
        now = loop.time()
        at = max(now, self.next_start.get(host, now))
        self.next_start[host] = at + delay
        if at > now:
            await asyncio.sleep(at - now)

    # -- one directory ------------------------------------------------------------

    async def list(self, job: _Job) -> None:
        u = parse(job.url)
        target = _as_directory(u) if job.probe else u
        entries: list[Entry] | None
        content: Content | None = None
        try:
            async with self.client.open(target) as body:
                src = body
                if self.keep and body.entries is None:  # a file: its bytes are kept as they are read
                    content = Content()
                    src = Body(body.url, content.tee(body), content_type=body.content_type, size=body.size,
                               meta=body.meta, charset=body.charset)
                # a listing's entries, or an HTML page's links (streamed, bounded by the Limits)
                stream = body_entries(src, self.client.limits, requisites=self.requisites)
                entries = None if stream is None else [e async for e in stream]
                # an ordinary web page is a file whose links are followed; an autoindex page a directory
                page = body.entries is None and entries is not None and all(e.kind == "page" for e in entries)
                if content is not None and not src.complete:  # a body read to its end cannot be read again
                    async for _ in src:  # the rest of the file (all of it when it is no page)
                        pass
                    if body.size is not None and content.size < body.size:
                        raise TruncatedTransfer(f"got {content.size} of {body.size} bytes", url=u)
        except AnyURLError as exc:
            if content is not None:
                content.close()
                content = None
            if job.probe:  # a link that is no directory: a file (or a dangling link)
                await self.emit(Found(job.url, job.entry, job.depth, job.path, False, job.parent,
                                      error=None if target is not u else exc,
                                      same_as=self.file_alias(job) if target is not u else None, seed=job.seed))
                return
            await self.emit(Found(job.url, job.entry, job.depth, job.path, True, job.parent, error=exc,
                                  seed=job.seed))
            return
        except Exception as exc:
            if content is not None:
                content.close()
            await self.emit(Found(job.url, job.entry, job.depth, job.path, True, job.parent,
                                  error=translate_errors(exc, u), seed=job.seed))
            return
        if content is not None and not (entries is None or page):
            content.close()  # a directory's listing page: not a file anyone saves
            content = None
        if entries is None or (page and not entries):
            await self.emit(Found(job.url, job.entry, job.depth, job.path, False, job.parent,
                                  same_as=self.file_alias(job), seed=job.seed, content=content))
            return
        if job.alias is not None:  # a symlink that is a directory: walk its target once
            if job.alias in self.dir_keys:
                await self.emit(Found(job.url, job.entry, job.depth, job.path, True, job.parent,
                                      same_as=job.alias, seed=job.seed))
                return
            self.dir_keys.add(job.alias)
            self.walked_aliases.add(job.alias)
        elif job.depth and _canonical(target) in self.walked_aliases:
            # a directory already walked through a symlink met before it: not twice
            await self.emit(Found(job.url, job.entry, job.depth, job.path, True, job.parent,
                                  same_as=_canonical(target), seed=job.seed))
            return
        fp = _fingerprint(entries)
        if not page and fp in job.prints and (job.via_link or len(entries) > 1):
            # the very listing of a directory above (a symlink the server shows as a
            # plain directory, as MLSD does): a loop
            await self.emit(Found(job.url, job.entry, job.depth, job.path, True, job.parent,
                                  same_as=job.parent, seed=job.seed))
            return
        await self.emit(Found(job.url, job.entry, job.depth, job.path, not page, job.parent, entries=entries,
                              seed=job.seed, content=content))
        here = _canonical(target)
        ancestors = (*job.ancestors, here)
        prints = (*job.prints, fp)
        prefix = _child_prefix(target)
        for entry in entries:
            await self.consider(entry, job, target, ancestors, prints, prefix)

    def file_alias(self, job: _Job) -> str | None:
        """For a symlink that turned out to be a file: the URL of its target when that was met
        already (one resource, two names), else None (and the target, met later, is marked)."""
        if job.alias is None or job.alias in self.dir_keys:
            return None
        if job.alias in self.seen:
            return job.alias
        self.linked_files.setdefault(job.alias, job.url)
        return None

    async def consider(self, entry: Entry, job: _Job, listed: URL, ancestors: tuple[str, ...],
                       prints: tuple[int, ...], prefix: str | None = None) -> None:
        url = entry.url
        if url is None or entry.kind in SKIP_KINDS or entry.rel is not None:
            return  # nothing to fetch, or a link back up (rel "parent") or to this listing ("self")
        key = None
        if prefix is not None and entry.kind != "symlink" and entry.key == url:
            key = child_key(url, entry.name, prefix)  # an FTP child: no parse, no serialize
        u: URL | None = None
        if key is None:
            try:
                u = parse(url)
            except AnyURLError:
                return
            if not self.in_scope(listed, u, job.seed, entry):
                return
            key = self.key_of(entry, u)
            same = entry.kind == "symlink" or not entry.key or entry.key == url  # key is _canonical(u)
            if _is_ancestor(u, listed, ancestors, key if same else None):
                return
        elif key in ancestors:
            return
        if self.max_depth is not None and job.depth + 1 > self.max_depth:
            return
        if self.follow is not None and not self.follow(entry):
            return
        if key in self.seen:
            return
        alias = self.link_target(entry, listed)
        if alias is not None and (alias in self.dir_keys or alias in ancestors):
            self.seen.add(key)
            await self.emit(Found(url, entry, job.depth + 1, (*job.path, entry.name), True,
                                  job.url, same_as=alias, seed=job.seed))
            return
        if len(self.seen) >= self.max_items:
            raise TransferError(f"walk stopped: more than {self.max_items} resources (max_items)",
                                url=self.start)
        self.seen.add(key)
        if u is not None and u.scheme in ("http", "https") and not await self.allowed(u):
            log.info("robots.txt disallows %s", u)
            return
        depth = job.depth + 1
        path = (*job.path, entry.name)
        walkable = entry.kind in _DIRECTORY_KINDS
        # an FTP child (u None) is probed only when listed as a "page"
        probe = not walkable and (entry.kind == "page" if u is None else _worth_probing(entry, u))
        if (walkable or probe) and (self.max_depth is None or depth < self.max_depth):
            if self.pending >= self.max_pending:  # the frontier is what grows on an endless tree
                raise TransferError(f"walk stopped: more than {self.max_pending} directories waiting"
                                    " to be listed (max_pending)", url=self.start)
            if walkable:
                self.dir_keys.add(key)
            self.enqueue(_Job(depth, next(self.seq), url, entry, path, job.url, probe,
                              job.via_link or entry.kind in _PROBE_KINDS, ancestors, prints, alias, job.seed))
            return
        # a file, or a directory at max_depth: yielded, not opened; a file a symlink met
        # before it led to is the same resource (same_as: the link)
        await self.emit(Found(url, entry, depth, path, walkable, job.url,
                              same_as=None if walkable or not self.linked_files else self.linked_files.get(key),
                              seed=job.seed))

    async def emit(self, found: Found) -> None:
        await self.out.put(found)

    # -- rules ----------------------------------------------------------------------

    def in_scope(self, here: URL, u: URL, seed: int = 0, entry: Entry | None = None) -> bool:
        """The rules of the seed *u* was reached from."""
        start = self.starts[seed]
        if u.scheme == "file" and here.scheme != "file":
            return False  # a remote listing never leads to local files
        if _family(u.scheme) != _family(start.scheme) and not self.cross_scheme:
            return False
        if self.same_host and _family(u.scheme) == _family(start.scheme):
            if _host_of(u) != _host_of(start) or getattr(u, "port", None) != getattr(start, "port", None):
                return False
        base = self.bases[seed]
        if base is not None and isinstance(u, HTTPURL) and _origin(u) == base[0] and not (
                entry is not None and "requisite" in entry.meta):
            return u.path.startswith(base[1])
        return True

    @staticmethod
    def key_of(entry: Entry, u: URL) -> str:
        """The dedup key: Entry.key made canonical (a symlink is seen under its own URL;
        its target is its alias, see link_target)."""
        key = entry.key if entry.kind != "symlink" else None
        if key and key != entry.url:
            try:
                return _canonical(parse(key))
            except AnyURLError:
                return key
        return _canonical(u)

    @staticmethod
    def link_target(entry: Entry, listed: URL) -> str | None:
        """The canonical URL a symlink leads to: its Entry.key where the listing resolved it
        (FTP "-> target", file:), else its meta["target"] resolved against its directory."""
        if entry.kind != "symlink":
            return None
        if entry.key and entry.key != entry.url:
            try:
                return _canonical(parse(entry.key))
            except AnyURLError:
                pass
        target = entry.meta.get("target")
        if not target and isinstance(listed, FileURL) and entry.url:
            local = parse(entry.url)
            if isinstance(local, FileURL):  # a local link: the OS knows where it leads
                real = os.path.realpath("/" + local.path)
                return _canonical(parse(file_url_for(real)))
        if not target or listed.scheme not in ("ftp", "ftps", "file"):
            return None
        try:
            base = parse(str(listed).rstrip("/") + "/")
            return _canonical(base.join(percent_encode(str(target), "/-._~!$&'()*+,=:@")))
        except AnyURLError:
            return None

    async def allowed(self, u: URL) -> bool:
        if not self.robots:
            return True
        origin = f"{u.scheme}://{getattr(u, 'hostport', '')}"
        lock = self.robot_locks.setdefault(origin, asyncio.Lock())
        async with lock:
            if origin not in self.robot_rules:
                self.robot_rules[origin] = await self.fetch_robots(origin, _host_of(u))
        rules = self.robot_rules[origin]
        return rules is None or bool(rules.can_fetch(str(u), self.client.user_agent))

    async def fetch_robots(self, origin: str, host: str) -> Any:
        t = self.client.timeouts
        deadline = t.read if t.total is None else min(t.read, t.total)
        try:
            async with asyncio.timeout(deadline):  # a small file: a trickle must not hold the walk
                resp = await self.client.fetch(origin + "/robots.txt", max_size=_ROBOTS_MAX)
        except TimeoutError:
            log.warning("robots.txt of %s took longer than %g s: ignored", origin, deadline)
            return None
        except AnyURLError:
            return None  # no robots.txt (or none readable): everything is allowed
        from protego import Protego

        try:
            rules = Protego.parse(resp.text())
        except Exception:  # a robots.txt protego cannot read: allow, as crawlers do
            return None
        with contextlib.suppress(Exception):
            crawl_delay = float(rules.crawl_delay(self.client.user_agent) or 0.0)
            if crawl_delay > 0:  # NaN fails this too
                crawl_delay = min(crawl_delay, CRAWL_DELAY_MAX)
                self.host_delay[host] = max(self.host_delay.get(host, 0.0), crawl_delay)
        return rules

    # -- the iterator -----------------------------------------------------------------

    async def run(self) -> AsyncIterator[Found]:
        for i, seed in enumerate(self.starts):
            key = _canonical(seed)
            if key in self.seen:
                continue  # a seed given twice (or reached as another's entry first: not here, all
                # seeds are queued before any listing ends)
            self.seen.add(key)
            self.dir_keys.add(key)
            self.enqueue(_Job(0, next(self.seq), str(seed), None, (), None, False, False, (), (), seed=i))
        try:
            while True:
                item = await self.out.get()
                if item is None:
                    if self.pending == 0 and self.out.empty():
                        return
                    continue
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            tasks = list(self.tasks)
            for t in tasks:
                t.cancel()
            for t in tasks:
                with contextlib.suppress(BaseException):
                    await t


class ScopeRules:
    """A walk's scope and dedup keys as plain rules, for a crawl whose frontier lives elsewhere
    (:mod:`anyurl.transfer.crawl`): which entries of a listing or page are followed from a
    seed, and under which key and host queue. What needs the walk's memory (the ancestors'
    listings, symlink targets met) is left out: a symlink is keyed by its own URL, and one
    that leads back to a directory above is not followed."""

    def __init__(self, seeds: Sequence[URL], *, same_host: bool = True, cross_scheme: bool = False,
                 under_seed: bool = False) -> None:
        from .frontier import New  # here, not at the top: a walk or a mirror needs no sqlite3

        self.record = New
        self.rules = _Walker(_NO_SOURCE, seeds, max_depth=None, follow=None, same_host=same_host,
                             cross_scheme=cross_scheme, per_host=1, delay=0.0, robots=False, max_items=0,
                             under_seed=under_seed)

    def new(self, url: str, entry: Entry | None, seed: int, depth: int, kind: str) -> New:
        u = parse(url)
        return self.record(str(u), _canonical(u), _host_of(u), seed, depth, kind, entry.name if entry else "")

    def child(self, entry: Entry, listed: URL, seed: int, depth: int) -> New | None:
        """The frontier record of *entry* (listed by *listed*, reached from *seed*), or None when
        it is out of scope, a link back up, or nothing to fetch."""
        url = entry.url
        if url is None or entry.kind in SKIP_KINDS or entry.rel is not None:
            return None
        try:
            u = parse(url)
        except AnyURLError:
            return None
        if not self.rules.in_scope(listed, u, seed, entry):
            return None
        key = _canonical(u) if entry.kind == "symlink" else self.rules.key_of(entry, u)
        if _is_ancestor(u, listed, (), key if key == _canonical(u) else None):
            return None
        alias = self.rules.link_target(entry, listed)
        if alias is not None:
            with contextlib.suppress(AnyURLError):
                if _is_ancestor(parse(alias), listed, ()):
                    return None  # a link back to a directory above: a loop
        return self.record(url, key, _host_of(u), seed, depth, entry.kind, entry.name)


def scope_rules(seeds: Sequence[URL], *, same_host: bool = True, cross_scheme: bool = False,
                under_seed: bool = False) -> ScopeRules:
    """The :class:`ScopeRules` of a crawl from *seeds*."""
    return ScopeRules(seeds, same_host=same_host, cross_scheme=cross_scheme, under_seed=under_seed)


_NO_SOURCE: Any = None


async def walk(client: Source, url: str | URL | Sequence[str | URL], *, max_depth: int | None = None,
               follow: Callable[[Entry], bool] | None = None, same_host: bool = True,
               cross_scheme: bool = False, per_host: int = 2, delay: float = 0.0,
               robots: bool = True, max_items: int = 1_000_000, requisites: bool = False,
               max_pending: int = 100_000, keep: bool = False, under_seed: bool = False
               ) -> AsyncIterator[Found]:
    """Every resource reachable from *url* (or from each of several seeds, with one
    seen-set), breadth-first (see the module docstring).

    *max_depth* 0 yields only the start; 1 also its entries (directories among
    them are yielded, not listed); None: no limit.
    *follow* filters the entries visited; *per_host* and *delay* (seconds
    between listings of one host) set the politeness. *requisites*: what an HTML page
    loads is an entry too (``meta["requisite"]``: images and srcsets, style sheets,
    scripts, media, icons, CSS ``url()``; see :mod:`anyurl.protocols.html`), not only its
    ``<a>/<area>/<frame>/<iframe>`` links (wget -p); a style sheet is opened for its own.
    *max_items* bounds the resources met, *max_pending* the directories found
    and not yet listed (each ~1 KB); past either the walk stops with a TransferError.
    *keep*: the bytes of the files the walk opened (web pages) in ``Found.content``;
    *under_seed*: http(s) links only below each seed's directory (requisites anywhere).
    """
    seeds = [url] if isinstance(url, (str, URL)) else list(url)
    if not seeds:
        raise ValueError("walk needs at least one seed URL")
    walker = _Walker(client, [client.parse(s) for s in seeds], max_depth=max_depth, follow=follow,
                     same_host=same_host, cross_scheme=cross_scheme, per_host=per_host, delay=delay,
                     robots=robots, max_items=max_items, requisites=requisites, max_pending=max_pending,
                     keep=keep, under_seed=under_seed)
    async for found in walker.run():
        yield found

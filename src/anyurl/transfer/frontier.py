"""A crawl's frontier: every URL it has met (the seen-set), what is still to fetch, what was
fetched, and per host the politeness and robots.txt decisions, kept in a SQLite file
(standard library, embedded) so that a crawl killed at any point continues where it was.

:class:`Frontier` is the interface a crawl asks (:mod:`anyurl.transfer.crawl`); the
SQLite one, :class:`SQLiteFrontier`, is the default. Another store (a database server
shared by several crawl processes) implements the same few methods: see docs/crawl.md.

Every change is one transaction: a resource is marked fetched in the same transaction that
admits the URLs found in it, so a crash loses at most the fetches in flight, and those
are taken again (a taken URL is "leased"; opening the state returns leases to pending).
Memory stays bounded whatever the frontier's size: the URLs live in the file (SQLite's
own page cache is capped), and the crawl holds only those in flight.

A small transaction (a few fetches finished, a few URLs taken) runs in the event loop's
thread: handing it to a thread costs more (the GIL's hand-offs slow every socket call of
the loop). A large one (thousands of URLs admitted from one listing), opening and closing
run in one worker thread of their own, so they do not stall the loop; one call at a time.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import tempfile
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from ..errors import ConfigurationError

__all__ = ["SCHEMA_VERSION", "Frontier", "HostState", "Item", "New", "Outcome", "SQLiteFrontier", "Totals"]

SCHEMA_VERSION = 1
# a group commit waits this long (seconds) for more finishes, unless it has GROUP_MAX already
GROUP_WAIT = 0.002
GROUP_MAX = 64
# transactions of at most this many rows run in the event loop's thread (see SQLiteFrontier._call)
INLINE_ROWS = 2000
T = TypeVar("T")

# states of a URL
PENDING, LEASED, DONE, FAILED, SKIPPED = 0, 1, 2, 3, 4
_COUNTED = {DONE: 0, FAILED: 1, SKIPPED: 2}  # the totals' column of a finished state


@dataclass(frozen=True, slots=True)
class New:
    """A URL to admit: *key* is its dedup key (canonical URL, or an article's message-id),
    *host* its politeness queue, *kind* how to open it ("directory", "file", "page"...)."""

    url: str
    key: str
    host: str
    seed: int
    depth: int
    kind: str
    name: str = ""  # the name its listing gave it (a file name), "" when none


@dataclass(frozen=True, slots=True)
class Item:
    """A URL taken from the frontier (leased until finished)."""

    id: int
    url: str
    key: str
    host: str
    seed: int
    depth: int
    kind: str
    name: str = ""


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a fetch ended: ``state`` DONE, FAILED or SKIPPED; ``size`` bytes saved; ``error``
    a message; ``scheme`` for the per-scheme totals."""

    state: int
    scheme: str
    size: int = 0
    error: str | None = None


@dataclass(frozen=True, slots=True)
class HostState:
    """What is known of a host: its robots.txt (text, or None when it has none, or
    ``robots_known`` False when not asked yet) and the crawl delay it asked for."""

    robots: str | None = None
    robots_known: bool = False
    delay: float = 0.0


@dataclass
class Totals:
    """Counts of a crawl so far (this run and the runs before it on the same state)."""

    fetched: int = 0
    errors: int = 0
    skipped: int = 0
    bytes: int = 0
    pending: int = 0
    seen: int = 0
    by_scheme: dict[str, dict[str, int]] = field(default_factory=dict)


class Frontier(Protocol):
    """What a crawl asks of its frontier. Every method is atomic (a transaction)."""

    async def add(self, items: Sequence[New]) -> int:
        """Admit the URLs not met before (by key); how many were new."""
        ...

    async def take(self, n: int, running: Mapping[str, int], per_host: int) -> list[Item]:
        """Lease up to *n* pending URLs, at most *per_host* in flight per host counting *running*
        (the hosts' URLs in flight now), hosts served in turn, each host's breadth-first."""
        ...

    async def finish(self, item: Item, outcome: Outcome, found: Sequence[New] = ()) -> int:
        """Mark *item* done (or failed, skipped) and admit what it led to, at once; how many new."""
        ...

    async def host(self, host: str) -> HostState:
        """What is known of *host* (robots.txt, crawl delay)."""
        ...

    async def set_host(self, host: str, state: HostState) -> None:
        """Remember *host*'s robots.txt and crawl delay."""
        ...

    async def totals(self) -> Totals:
        """The counts so far."""
        ...

    async def close(self) -> None:
        """Commit and release (leased URLs go back to pending when the state is opened again)."""
        ...


_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS urls(
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    url TEXT,                 -- NULL when it is the key itself (most URLs): the file stays small
    host TEXT NOT NULL,
    seed INTEGER NOT NULL,
    depth INTEGER NOT NULL,
    kind TEXT NOT NULL,
    name TEXT,
    state INTEGER NOT NULL DEFAULT 0,   -- 0 pending, 1 leased, 2 fetched, 3 failed, 4 skipped
    size INTEGER,
    error TEXT
);
CREATE INDEX IF NOT EXISTS urls_pending ON urls(host, depth, id) WHERE state = 0;
CREATE TABLE IF NOT EXISTS hosts(
    host TEXT PRIMARY KEY,
    pending INTEGER NOT NULL DEFAULT 0,   -- URLs pending or leased
    served INTEGER NOT NULL DEFAULT 0,    -- times taken from: hosts are served in turn
    robots TEXT,
    robots_known INTEGER NOT NULL DEFAULT 0,
    delay REAL NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS hosts_ready ON hosts(served) WHERE pending > 0;
CREATE TABLE IF NOT EXISTS totals(
    scheme TEXT PRIMARY KEY,
    fetched INTEGER NOT NULL DEFAULT 0,
    errors INTEGER NOT NULL DEFAULT 0,
    skipped INTEGER NOT NULL DEFAULT 0,
    bytes INTEGER NOT NULL DEFAULT 0
);
"""


class StateError(ConfigurationError):
    """The state file is not a crawl state this version can use (or another crawl holds it)."""


class SQLiteFrontier:
    """The frontier in a SQLite file (*path*; None: a temporary file removed at close).

    WAL journal with ``synchronous=NORMAL``: a commit survives the process being killed
    (it is in the OS's hands), which is what a crawl's resume needs; ``synchronous=FULL``
    (*durable* True) also survives a power cut, at one fsync per transaction.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, durable: bool = False,
                 cache_kib: int = 32 * 1024) -> None:
        self._temp = path is None
        if path is None:
            fd, name = tempfile.mkstemp(prefix="anyurl-frontier-", suffix=".sqlite")
            os.close(fd)
            path = name
        self.path = os.fspath(path)
        self._durable = durable
        self._cache_kib = cache_kib
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="anyurl-frontier")
        self._lock = asyncio.Lock()
        self._db: sqlite3.Connection | None = None
        self._finishing: list[tuple[Item, Outcome, Sequence[New], asyncio.Future[int]]] = []
        self._flusher: asyncio.Future[None] | None = None

    # -- the thread ------------------------------------------------------------------

    async def _call(self, fn: Callable[..., T], *args: Any, rows: int = INLINE_ROWS + 1) -> T:
        """Run *fn* on the connection, one call at a time: in the loop's thread when it is small
        (*rows* written at most INLINE_ROWS: a few statements take less than handing them to a
        thread, whose GIL hand-offs cost every socket call of the loop), else in the worker
        thread, so a large transaction (a listing of thousands) does not stall the loop."""
        async with self._lock:
            if rows <= INLINE_ROWS and self._db is not None:
                return fn(*args)
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(self._pool, fn, *args)

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            self._db = self._open()
        return self._db

    def _open(self) -> sqlite3.Connection:
        try:
            db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=1.0)
        except sqlite3.Error as exc:
            raise StateError(f"{self.path}: cannot open the crawl state ({exc})") from exc
        try:
            db.execute("PRAGMA locking_mode=EXCLUSIVE")  # one crawl per state: a second one is refused
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(f"PRAGMA synchronous={'FULL' if self._durable else 'NORMAL'}")
            db.execute(f"PRAGMA cache_size=-{int(self._cache_kib)}")  # KiB: bounds the memory it takes
            db.execute("PRAGMA temp_store=FILE")
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if tables and "meta" not in tables:
                raise StateError(f"{self.path} is a SQLite file but not an anyurl crawl state")
            db.executescript("BEGIN IMMEDIATE;" + _SCHEMA + "COMMIT;")
            db.execute("BEGIN IMMEDIATE")
            row = db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if row is None:
                db.execute("INSERT INTO meta VALUES('schema', ?)", (str(SCHEMA_VERSION),))
            elif int(row[0]) != SCHEMA_VERSION:
                raise StateError(f"{self.path}: crawl state schema {row[0]}, this anyurl reads {SCHEMA_VERSION}")
            # URLs in flight when the last run ended (killed, or stopped): pending again
            db.execute("UPDATE urls SET state=0 WHERE state=1")
            db.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            db.close()
            if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
                raise StateError(f"{self.path} is in use by another crawl") from exc
            raise StateError(f"{self.path}: not a crawl state ({exc})") from exc
        except BaseException:
            db.close()
            raise
        return db

    async def open(self) -> None:
        """Open (or create) the state now: errors show here rather than at the first fetch."""
        await self._call(self._conn)

    # -- admitting -------------------------------------------------------------------

    @staticmethod
    def _admit(db: sqlite3.Connection, offers: Sequence[Sequence[New]], pending: dict[str, int]) -> list[int]:
        """Admit the URLs of each offer not met before, in one statement; how many of each offer
        were new (a key offered twice counts for the first offer), the hosts' *pending* counts
        raised (the caller writes them: _pending)."""
        rows = [(n.key, None if n.url == n.key else n.url, n.host, n.seed, n.depth, n.kind, n.name or None)
                for found in offers for n in found]
        added = [0] * len(offers)
        if not rows:
            return added
        last = db.execute("SELECT coalesce(max(id), 0) FROM urls").fetchone()[0]
        if not db.executemany("INSERT OR IGNORE INTO urls(key, url, host, seed, depth, kind, name) "
                              "VALUES(?,?,?,?,?,?,?)", rows).rowcount:
            return added
        # the new rows have ids above the last one, in the order offered: match them to the offers
        new = db.execute("SELECT key, host FROM urls WHERE id > ? ORDER BY id", (last,)).fetchall()
        k = 0
        for index, found in enumerate(offers):
            for n in found:
                if k < len(new) and n.key == new[k][0]:
                    host = new[k][1]
                    pending[host] = pending.get(host, 0) + 1
                    added[index] += 1
                    k += 1
        return added

    @staticmethod
    def _pending(db: sqlite3.Connection, pending: dict[str, int]) -> None:
        rows = [(host, n) for host, n in pending.items() if n]
        if rows:
            db.executemany("INSERT INTO hosts(host, pending) VALUES(?, ?) ON CONFLICT(host) "
                           "DO UPDATE SET pending = pending + excluded.pending", rows)

    def _add(self, items: Sequence[New]) -> int:
        db = self._conn()
        db.execute("BEGIN IMMEDIATE")
        try:
            pending: dict[str, int] = {}
            added = self._admit(db, [items], pending)[0]
            self._pending(db, pending)
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        return added

    async def add(self, items: Sequence[New]) -> int:
        return await self._call(self._add, items, rows=len(items))

    # -- taking ----------------------------------------------------------------------

    def _take(self, n: int, running: Mapping[str, int], per_host: int) -> list[Item]:
        db = self._conn()
        out: list[Item] = []
        db.execute("BEGIN IMMEDIATE")
        try:
            hosts = [r[0] for r in db.execute(
                "SELECT host FROM hosts WHERE pending > 0 ORDER BY served LIMIT ?", (n + len(running),))]
            for host in hosts:
                room = min(per_host - running.get(host, 0), n - len(out))
                if room <= 0:
                    continue
                rows = db.execute("SELECT id, coalesce(url, key), key, seed, depth, kind, coalesce(name, '') "
                                  "FROM urls WHERE host=? AND state=0 ORDER BY depth, id LIMIT ?",
                                  (host, room)).fetchall()
                if not rows:
                    continue
                db.executemany("UPDATE urls SET state=1 WHERE id=?", [(r[0],) for r in rows])
                db.execute("UPDATE hosts SET served = served + 1 WHERE host=?", (host,))
                out += [Item(r[0], r[1], r[2], host, r[3], r[4], r[5], r[6]) for r in rows]
                if len(out) >= n:
                    break
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        return out

    async def take(self, n: int, running: Mapping[str, int], per_host: int) -> list[Item]:
        return await self._call(self._take, n, dict(running), per_host, rows=n)

    # -- finishing -------------------------------------------------------------------

    def _finish(self, batch: list[tuple[Item, Outcome, Sequence[New]]]) -> list[int]:
        """Finish every item of *batch* in one transaction (a group commit: the finishes that
        arrived while the last transaction ran), a few statements for all of them. Each item's
        record is still atomic with what it found: they commit together or not at all."""
        db = self._conn()
        db.execute("BEGIN IMMEDIATE")
        try:
            leased: set[int] = set()
            ids = [item.id for item, _, _ in batch]
            for k in range(0, len(ids), 500):  # (SQLite's bound on a statement's parameters)
                part = ids[k:k + 500]
                leased.update(r[0] for r in db.execute(
                    f"SELECT id FROM urls WHERE state=1 AND id IN ({','.join('?' * len(part))})", part))
            marks = []
            pending: dict[str, int] = {}
            totals: dict[str, list[int]] = {}
            for item, outcome, _ in batch:
                if item.id not in leased:
                    continue  # not in flight (finished already): its record stands
                leased.discard(item.id)
                marks.append((outcome.state, outcome.size, outcome.error, item.id))
                pending[item.host] = pending.get(item.host, 0) - 1
                row = totals.setdefault(outcome.scheme, [0, 0, 0, 0])
                row[_COUNTED[outcome.state]] += 1
                row[3] += outcome.size
            db.executemany("UPDATE urls SET state=?, size=?, error=? WHERE id=?", marks)
            db.executemany("INSERT INTO totals(scheme, fetched, errors, skipped, bytes) VALUES(?,?,?,?,?) "
                           "ON CONFLICT(scheme) DO UPDATE SET fetched = fetched + excluded.fetched, "
                           "errors = errors + excluded.errors, skipped = skipped + excluded.skipped, "
                           "bytes = bytes + excluded.bytes", [(scheme, *row) for scheme, row in totals.items()])
            out = self._admit(db, [found for _, _, found in batch], pending)
            self._pending(db, pending)
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        return out

    async def finish(self, item: Item, outcome: Outcome, found: Sequence[New] = ()) -> int:
        fut: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._finishing.append((item, outcome, found, fut))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.ensure_future(self._flush())
        return await asyncio.shield(fut)  # a cancelled caller: its record still commits

    async def _flush(self) -> None:
        while self._finishing:
            if len(self._finishing) < GROUP_MAX:
                # let the fetches ending now join this transaction: a few statements for a batch
                # instead of a few for each (nothing waits on a record but its event)
                await asyncio.sleep(GROUP_WAIT)
            batch, self._finishing = self._finishing, []
            try:
                added = await self._call(self._finish, [(i, o, f) for i, o, f, _ in batch],
                                         rows=sum(len(f) + 1 for _, _, f, _ in batch))
            except BaseException as exc:
                for *_, fut in batch:
                    if not fut.done():
                        fut.set_exception(exc)
                if isinstance(exc, asyncio.CancelledError):
                    raise
                continue
            for (*_, fut), n in zip(batch, added, strict=True):
                if not fut.done():
                    fut.set_result(n)

    # -- hosts -----------------------------------------------------------------------

    def _host(self, host: str) -> HostState:
        row = self._conn().execute("SELECT robots, robots_known, delay FROM hosts WHERE host=?", (host,)).fetchone()
        if row is None:
            return HostState()
        return HostState(row[0], bool(row[1]), float(row[2]))

    async def host(self, host: str) -> HostState:
        return await self._call(self._host, host, rows=1)

    def _set_host(self, host: str, state: HostState) -> None:
        db = self._conn()
        db.execute("INSERT INTO hosts(host, robots, robots_known, delay) VALUES(?,?,?,?) ON CONFLICT(host) DO "
                   "UPDATE SET robots=excluded.robots, robots_known=excluded.robots_known, delay=excluded.delay",
                   (host, state.robots, int(state.robots_known), state.delay))

    async def set_host(self, host: str, state: HostState) -> None:
        await self._call(self._set_host, host, state, rows=1)

    # -- counts ----------------------------------------------------------------------

    def _totals(self) -> Totals:
        db = self._conn()
        t = Totals()
        for scheme, fetched, errors, skipped, size in db.execute(
                "SELECT scheme, fetched, errors, skipped, bytes FROM totals ORDER BY scheme"):
            t.by_scheme[scheme] = {"fetched": fetched, "errors": errors, "skipped": skipped, "bytes": size}
            t.fetched += fetched
            t.errors += errors
            t.skipped += skipped
            t.bytes += size
        t.pending = int(db.execute("SELECT coalesce(sum(pending), 0) FROM hosts").fetchone()[0])
        t.seen = int(db.execute("SELECT coalesce(max(id), 0) FROM urls").fetchone()[0])
        return t

    async def totals(self) -> Totals:
        return await self._call(self._totals)

    def done_urls(self) -> list[tuple[str, int, int | None]]:
        """(url, state, size) of every URL finished (tests and tools; not for a huge state)."""
        return [(r[0], r[1], r[2]) for r in self._conn().execute(
            "SELECT coalesce(url, key), state, size FROM urls WHERE state >= 2 ORDER BY id")]

    # -- closing ---------------------------------------------------------------------

    def _close(self) -> None:
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                # a crawl stopped (Ctrl-C) gives back what it had in flight: the state holds no lease
                self._db.execute("UPDATE urls SET state=0 WHERE state=1")
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._db.close()
            self._db = None

    async def close(self) -> None:
        if self._flusher is not None and not self._flusher.done():
            with contextlib.suppress(Exception):
                await self._flusher  # finishes already handed over are recorded
        try:
            await self._call(self._close)
        finally:
            self._pool.shutdown(wait=True)
            if self._temp:
                for suffix in ("", "-wal", "-shm"):
                    with contextlib.suppress(OSError):
                        os.unlink(self.path + suffix)

    def close_sync(self) -> None:
        """Close from outside the loop (after it ended)."""
        self._pool.submit(self._close).result()
        self._pool.shutdown(wait=True)

"""The connection layer under every handler: per-host slots, idle connections, one stale-connection rule.

A handler owns one :class:`Pool` (named for its scheme) and asks it for
connections; it never keeps its own lists or semaphores. The split follows
httpcore's: a *connection* knows its own state (:class:`Connection`), the
*pool* decides who may open one, which idle one to hand out, and when a
failure on a reused connection earns one fresh try.

``Limits.per_host`` is the same bound for every scheme: the connections open
to one ``host:port`` (busy and idle together) never exceed it. A request that
finds every slot taken waits at most ``Timeouts.pool`` (never past the total
deadline) and then fails with :class:`~anyurl.errors.PoolTimeout`, which says
the server was never asked. Idle connections older than ``Limits.max_idle``
are closed instead of reused. Schemes whose connections cannot be reused
(gopher, WAIS, telnet, Prospero) hold a slot with :meth:`Pool.slot`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable
from typing import Any, Generic, Protocol, TypeVar

from ..errors import AnyURLError, ConnectError, PoolTimeout
from ..settings import Limits, Request

__all__ = ["Connection", "Lease", "Pool", "logger"]

#: The root logger of anyurl; each scheme logs to a child (``anyurl.ftp``...).
logger = logging.getLogger("anyurl")


class Connection(Protocol):
    """What the pool needs of a connection."""

    @property
    def key(self) -> Hashable:
        """Connections with equal keys are interchangeable (same server, user, TLS mode...)."""

    def is_reusable(self) -> bool:
        """True when the connection is open and holds no unread or unfinished reply."""

    async def reset_for(self, target: Any) -> bool:
        """Prepare an idle connection for a request for *target*; False if it cannot be."""

    async def aclose(self) -> None:
        """Close politely (QUIT where the protocol has one); never raises."""

    def abort(self) -> None:
        """Close at once, without a word to the server."""


#: the least time between two probes above a lowered cap (see :meth:`Pool.acquire`), whatever
#: ``Limits.max_idle`` says: a server that still refuses sees at most one try a second
_PROBE_MIN_SECONDS = 1.0

C = TypeVar("C", bound=Connection)
T = TypeVar("T")


class _Idle(Generic[C]):
    """An idle connection and when it became idle. (Plain classes here, not dataclasses:
    one per request, and ~1 ms less at import.)"""

    __slots__ = ("conn", "since")

    def __init__(self, conn: C, since: float) -> None:
        self.conn = conn
        self.since = since


class _Host(Generic[C]):
    """The connections to one host:port."""

    __slots__ = ("busy", "cap", "capped", "idle", "waiters", "requests", "request_waiters")

    def __init__(self) -> None:
        self.busy = 0
        self.requests = 0  # requests in flight (enter_request), for Limits.per_host_requests
        self.request_waiters: deque[asyncio.Future[None]] = deque()
        self.cap: int | None = None  # lowered from per_host once the server refused a new connection
        self.capped = 0.0  # when the cap last moved (time.monotonic()): a refusal or a probe
        self.idle: list[_Idle[C]] = []  # oldest first
        self.waiters: deque[asyncio.Future[None]] = deque()

    def wake(self) -> None:
        # Every waiter checks again: the few that fit go on, the others wait again.
        for fut in self.waiters:
            if not fut.done():
                fut.set_result(None)


class Lease(Generic[C]):
    """One connection lent by the pool. ``release`` gives it back exactly once."""

    def __init__(self, pool: Pool[C], host: _Host[C], address: tuple[str, int], conn: C | None,
                 reused: bool) -> None:
        self.pool = pool
        self._host = host
        self.address = address
        self._conn = conn
        self.reused = reused
        self.released = False

    @property
    def conn(self) -> C:
        assert self._conn is not None, "the lease holds no connection (a slot only)"
        return self._conn

    async def release(self, reusable: bool, *, keep: bool = True) -> None:
        """Give the connection back: kept idle when *reusable* and *keep* (and the
        connection says it is clean), else closed politely when *reusable*, else
        aborted (its state is unknown after an error)."""
        if self.released:
            return
        self.released = True
        if self._conn is not None:
            self.pool._lent.pop(id(self._conn), None)
        await self.pool._release(self._host, self.address, self._conn, reusable, keep)

    def hand_over(self) -> Lease[C]:
        """The same connection and slot under a new lease, this one counted as released: for
        a request that queued its commands behind this one's on the connection (FTP), which
        now owns it. Whoever still holds this lease can no longer release the connection."""
        assert not self.released and self._conn is not None
        self.released = True
        return self.pool.relend(Lease(self.pool, self._host, self.address, self._conn, True))

    def keep_idle(self) -> bool:
        """The common case of ``release(True)`` without a coroutine: a clean connection goes
        back to the idle list at once (True). False when it cannot be kept (the pool is
        closing, the connection is not clean, a slot-only lease): call :meth:`release`."""
        conn = self._conn
        if self.released or conn is None or self.pool.closed or not conn.is_reusable():
            return False
        self.released = True
        pool = self.pool
        pool._lent.pop(id(conn), None)
        if pool.debug:
            pool.log.debug("keeping connection to %s:%s for reuse", *self.address)
        pool._keep(self._host, conn)
        return True

    def forget(self) -> None:
        """The connection closed by itself (its socket is gone): its slot is given back at once,
        without a coroutine (from a protocol callback)."""
        if not self.released:
            self.released = True
            if self._conn is not None:
                self.pool._lent.pop(id(self._conn), None)
            self.pool._give_back(self._host)


class Pool(Generic[C]):
    """Slots and idle connections per host:port for one scheme's handler.

    *closing_replies*: reply codes with which a server says it is closing the
    session (FTP "421", NNTP "400"); on a reused connection they count as stale.
    """

    def __init__(self, scheme: str, *, closing_replies: tuple[str, ...] = ()) -> None:
        self.scheme = scheme
        self.log = logger.getChild(scheme)
        self.closing_replies = closing_replies
        self._hosts: dict[tuple[str, int], _Host[C]] = {}
        self._lent: dict[int, Lease[C]] = {}  # id(conn) -> its lease, for release(conn)
        self.closed = False
        #: called with host:port before a request waits for a slot there: each closes idle
        #: connections that hold slots the pool cannot close itself (HTTP/2 ones without streams)
        self.room_makers: list[Callable[[tuple[str, int]], None]] = []
        #: log at DEBUG on the hot path (:meth:`lend_idle`, :meth:`Lease.keep_idle`); refreshed
        #: by :meth:`lend_idle` from the logger (one check per request, not one per message)
        self.debug = False

    # -- slots -----------------------------------------------------------------

    def _host(self, address: tuple[str, int]) -> _Host[C]:
        h = self._hosts.get(address)
        if h is None:
            h = self._hosts[address] = _Host()
        return h

    def has_room(self, host: str, port: int, limits: Limits) -> bool:
        """True when :meth:`acquire` for host:port would not wait now: a connection is idle,
        or a slot is free (under ``Limits.per_host`` and the server's lowered cap)."""
        h = self._hosts.get((host, port))
        if h is None or h.idle:
            return True
        cap = h.cap
        return h.busy < (limits.per_host if cap is None else min(cap, limits.per_host))

    def open_count(self, host: str, port: int) -> int:
        """Connections open to host:port now, busy and idle."""
        h = self._hosts.get((host, port))
        return 0 if h is None else h.busy + len(h.idle)

    @staticmethod
    def _try_take(h: _Host[C], key: Hashable | None, fresh: bool, limits: Limits, now: float,
                  discard: list[C]) -> tuple[bool, C | None]:
        """One look at the host without waiting: (got a slot, the idle connection of *key*)."""
        if h.idle:
            max_idle = limits.max_idle
            idle = h.idle
            while idle and now - idle[0].since > max_idle:  # oldest first: the expired are in front
                discard.append(idle.pop(0).conn)
            if key is not None and not fresh:
                for i in range(len(idle) - 1, -1, -1):  # the most recently used first
                    item = idle[i]
                    if item.conn.key != key:
                        continue
                    del idle[i]
                    if item.conn.is_reusable():
                        h.busy += 1
                        return True, item.conn
                    discard.append(item.conn)  # dropped by the server while idle
        cap = h.cap
        if cap is not None and now - h.capped > max(limits.max_idle, _PROBE_MIN_SECONDS):
            # quiet for max_idle since the last refusal or probe: the server's limit may
            # have been passing (other clients left): allow one more as a probe
            h.cap = cap = cap + 1 if cap + 1 < limits.per_host else None
            h.capped = now
        if h.busy + len(h.idle) < (limits.per_host if cap is None else min(cap, limits.per_host)):
            h.busy += 1
            return True, None
        if h.idle:  # full, but some are idle for another key: make room
            discard.append(h.idle.pop(0).conn)
            h.busy += 1
            return True, None
        return False, None

    async def _take(self, req: Request, h: _Host[C], address: tuple[str, int], key: Hashable | None,
                    fresh: bool, until: float | None = None) -> tuple[C | None, list[C]]:
        """Wait for a slot: (an idle connection of *key* or None, connections to close).
        *until*: the loop time the wait ends at, instead of ``Timeouts.pool`` from now."""
        # idle ages on time.monotonic(): the loop's clock would cost a getpid() per call
        # (asyncio.get_running_loop checks the pid) for the same time
        discard: list[C] = []
        got, conn = self._try_take(h, key, fresh, req.limits, time.monotonic(), discard)
        if got:  # the common case: no timer armed, no waiting
            return conn, discard
        loop = asyncio.get_running_loop()
        limit = req.limits.per_host if h.cap is None else min(h.cap, req.limits.per_host)
        timeout = req.bound(req.timeouts.pool if until is None else max(0.0, until - loop.time()))
        try:
            while True:
                for make_room in self.room_makers:
                    make_room(address)
                fut = loop.create_future()
                h.waiters.append(fut)
                try:
                    async with asyncio.timeout(timeout):
                        await fut
                finally:
                    h.waiters.remove(fut)
                got, conn = self._try_take(h, key, fresh, req.limits, time.monotonic(), discard)
                if got:
                    return conn, discard
                if until is None:
                    # a connection came free and went to another: the host is busy, not stuck
                    # (a batch of large files), so Timeouts.pool counts again, never past the deadline
                    timeout = req.bound(req.timeouts.pool)
        except TimeoutError:
            await self._close_all(discard, address)
            if timeout is not None and timeout < (req.timeouts.pool or float("inf")):
                why = f"waited {timeout:.3g} s (the rest of the total timeout)"
            else:
                why = f"waited {timeout:.3g} s"
            held = f"Limits.per_host={limit}" if h.cap is None else f"at most {limit}: the server refused more"
            raise PoolTimeout(f"{why} for a free connection to {address[0]}:{address[1]} "
                              f"({held}, all busy)", url=req.url) from None
        except BaseException:
            await self._close_all(discard, address)
            raise

    @staticmethod
    def _give_back(h: _Host[C]) -> None:
        h.busy -= 1
        h.wake()

    @classmethod
    def _keep(cls, h: _Host[C], conn: C) -> None:
        """*conn*, clean, back on *h*'s idle list and its slot given back."""
        h.idle.append(_Idle(conn, time.monotonic()))
        cls._give_back(h)

    async def _close_all(self, conns: list[C], address: tuple[str, int]) -> None:
        for conn in conns:
            self.log.debug("closing idle connection to %s:%s (expired, dropped by the server, "
                           "or making room)", *address)
            await conn.aclose()

    # -- connections -----------------------------------------------------------

    async def acquire(self, req: Request, host: str, port: int, key: Hashable,
                      connect: Callable[[], Awaitable[C]], target: Any = None, *,
                      fresh: bool = False) -> Lease[C]:
        """A connection to host:port for *key*: an idle one reset for *target*, else a new
        one from *connect*. Waits for a slot (PoolTimeout after ``Timeouts.pool`` with no
        connection to the host coming free meanwhile: each one that does starts the count again).

        A new connection the server refuses with a closing reply ("421 too many connections"
        at an FTP login) while others to the host are open (or opening) meets the server's
        own limit: the host's cap comes down to those, and the request waits for one of them
        (at most ``Timeouts.pool`` in all) instead of failing. With none open the error stands.
        The cap is not for ever: each ``Limits.max_idle`` without a refusal lets it rise by one
        (a probe), back to ``per_host``; a new refusal lowers it again."""
        until: float | None = None  # once refused: when the wait for a free connection ends
        while True:
            try:
                return await self._acquire(req, host, port, key, connect, target, fresh, until)
            except AnyURLError as exc:
                h = self._host((host, port))
                others = h.busy + len(h.idle)  # (this request's slot is given back already)
                if not (others and self._refused(exc)):
                    raise
                h.cap = others if h.cap is None else min(h.cap, others)
                h.capped = time.monotonic()
                self.log.info("%s:%s refused a new connection (%s) with %d open: at most %d for now",
                              host, port, exc.reply, others, h.cap)
                if until is None:
                    wait = req.bound(req.timeouts.pool)
                    until = None if wait is None else asyncio.get_running_loop().time() + wait

    async def _acquire(self, req: Request, host: str, port: int, key: Hashable,
                       connect: Callable[[], Awaitable[C]], target: Any, fresh: bool,
                       until: float | None) -> Lease[C]:
        address = (host, port)
        h = self._host(address)
        conn, discard = await self._take(req, h, address, key, fresh, until)
        try:
            if discard:
                await self._close_all(discard, address)
            if conn is not None:
                if await conn.reset_for(target):
                    self.log.debug("reusing idle connection to %s:%s", host, port)
                    return self._lend(Lease(self, h, address, conn, True))
                self.log.debug("idle connection to %s:%s cannot be reset; closing it", host, port)
                conn.abort()
                conn = None
            conn = await connect()
            self.log.debug("opened connection to %s:%s", host, port)
            return self._lend(Lease(self, h, address, conn, False))
        except BaseException:
            if conn is not None:
                conn.abort()
            self._give_back(h)
            raise

    def lend_idle(self, req: Request, host: str, port: int, key: Hashable) -> Lease[C] | None:
        """The common case of :meth:`acquire` without a coroutine: the most recently used idle
        connection of *key* to host:port, when it is fresh enough and clean. None otherwise
        (nothing idle, the newest idle one is for another key, expired or dropped): then
        :meth:`acquire`. No ``reset_for`` here: for connections that need no reset (HTTP)."""
        self.debug = debug = self.log.isEnabledFor(logging.DEBUG)
        h = self._hosts.get((host, port))
        if h is None or not h.idle or h.waiters:
            return None
        idle = h.idle
        item = idle[-1]
        conn = item.conn
        if conn.key != key or time.monotonic() - item.since > req.limits.max_idle or not conn.is_reusable():
            return None
        idle.pop()
        h.busy += 1
        if debug:
            self.log.debug("reusing idle connection to %s:%s", host, port)
        lease = Lease(self, h, (host, port), conn, True)
        self._lent[id(conn)] = lease
        return lease

    def relend(self, lease: Lease[C]) -> Lease[C]:
        """Record *lease* as the one that releases its connection now (:meth:`Lease.hand_over`)."""
        return self._lend(lease)

    def _lend(self, lease: Lease[C]) -> Lease[C]:
        self._lent[id(lease.conn)] = lease
        return lease

    async def release(self, conn: C, reusable: bool, *, keep: bool = True) -> None:
        """Give back a connection from :meth:`acquire` (see :meth:`Lease.release`)."""
        lease = self._lent.get(id(conn))
        if lease is not None and lease.conn is conn:
            await lease.release(reusable, keep=keep)

    @contextlib.asynccontextmanager
    async def slot(self, req: Request, host: str, port: int) -> AsyncIterator[None]:
        """Hold one of host:port's ``per_host`` slots (for connections never pooled)."""
        address = (host, port)
        h = self._host(address)
        _, discard = await self._take(req, h, address, None, True)
        try:
            await self._close_all(discard, address)
            yield
        finally:
            self._give_back(h)

    async def lend_slot(self, req: Request, host: str, port: int) -> Lease[C]:
        """A slot held until the returned lease is released (a connection that outlives a call)."""
        address = (host, port)
        h = self._host(address)
        _, discard = await self._take(req, h, address, None, True)
        try:
            await self._close_all(discard, address)
        except BaseException:
            self._give_back(h)
            raise
        return Lease(self, h, address, None, False)

    async def _release(self, h: _Host[C], address: tuple[str, int], conn: C | None, reusable: bool,
                       keep: bool) -> None:
        if conn is None:
            self._give_back(h)
            return
        if keep and reusable and not self.closed and conn.is_reusable():
            self.log.debug("keeping connection to %s:%s for reuse", *address)
            self._keep(h, conn)
            return
        self._give_back(h)
        if reusable:
            # The caller was done, but the connection holds something unasked (or the pool
            # is closing): say goodbye, never reuse it.
            self.log.debug("closing connection to %s:%s", *address)
            await conn.aclose()
        else:
            self.log.debug("aborting connection to %s:%s", *address)
            conn.abort()

    # -- requests in flight ------------------------------------------------------

    async def enter_request(self, req: Request, host: str, port: int) -> None:
        """Count one request in flight to host:port, first waiting while ``Limits.per_host_requests``
        are (at most ``Timeouts.pool``, never past the total deadline: then PoolTimeout). For
        connections that carry many requests at once (HTTP/2 streams): where each request
        holds a connection, ``per_host`` bounds them already. :meth:`exit_request` ends it."""
        h = self._host((host, port))
        limit = req.limits.per_host_requests
        if h.requests < limit:
            h.requests += 1
            return
        loop = asyncio.get_running_loop()
        timeout = req.bound(req.timeouts.pool)
        try:
            async with asyncio.timeout(timeout):
                while h.requests >= limit:
                    fut = loop.create_future()
                    h.request_waiters.append(fut)
                    try:
                        await fut
                    finally:
                        h.request_waiters.remove(fut)
        except TimeoutError:
            raise PoolTimeout(f"waited {timeout:.3g} s for a request slot to {host}:{port} "
                              f"(Limits.per_host_requests={limit}, all in flight)", url=req.url) from None
        h.requests += 1

    def exit_request(self, host: str, port: int) -> None:
        """A request counted by :meth:`enter_request` ended: the first waiter may go on."""
        h = self._hosts.get((host, port))
        if h is None:
            return
        h.requests -= 1
        for fut in h.request_waiters:  # all look again: one goes on, the others wait again
            if not fut.done():
                fut.set_result(None)

    # -- the one stale-connection rule (the caller's Retry is the Client's) ------------

    def _refused(self, exc: BaseException) -> bool:
        """A server's "closing" reply (*closing_replies*) to a new connection: FTP 421 at login."""
        reply = exc.reply if isinstance(exc, AnyURLError) else None
        return bool(reply) and any(str(reply).startswith(code) for code in self.closing_replies)

    def is_stale(self, exc: BaseException) -> bool:
        """An error that, on a reused connection, means the server dropped it while idle."""
        return isinstance(exc, ConnectError) or self._refused(exc)

    async def run(self, acquire: Callable[[bool], Awaitable[Lease[C]]],
                  step: Callable[[Lease[C]], Awaitable[T]], *, keep_on_error: bool = False,
                  fresh: bool = False, lease: Lease[C] | None = None) -> T:
        """Run *step* on a connection from ``acquire(fresh)`` and return its result.

        Once *step* returns, it owns the lease (it released it, or handed it to a
        body that will). If it fails on a reused connection with a stale error (the
        server closed the connection while it sat idle, or said it is closing),
        the connection is dropped and *step* runs once more on a fresh one
        (``acquire(True)`` skips idle connections); this is safe because nothing
        reached the caller yet. On other errors the lease is released, kept for
        reuse only if *keep_on_error* and the connection says it is clean. *fresh*: start
        on a new connection, no retry. *lease*: the first try's connection, lent already
        without a coroutine (:meth:`lend_idle`, the common case of a kept-alive one); the
        same rule holds for it.

        This is the only stale-connection retry, and it is not the caller's
        :class:`~anyurl.settings.Retry`: it spends none of its attempts and leaves no
        history (a connection found dead, not a failed try of the request).
        """
        while True:
            if lease is None:
                lease = await acquire(fresh)
            try:
                return await step(lease)
            except BaseException as exc:
                if not await self.after_error(lease, exc, keep_on_error=keep_on_error, fresh=fresh):
                    raise
                fresh, lease = True, None

    async def after_error(self, lease: Lease[C], exc: BaseException, *, keep_on_error: bool = False,
                     fresh: bool = False) -> bool:
        """The rule of :meth:`run` after a try on *lease* raised *exc*: the lease is released
        (kept for reuse only if *keep_on_error*, the error is not stale and the connection
        says it is clean), and the answer is True when one more try on a new connection is
        due (a stale error on a reused connection, *fresh* False), else False: re-raise.
        For a caller that runs its first try inline (a coroutine level less than ``run``,
        the HTTP/1.1 client's hot path) and then calls ``run(..., fresh=True)`` on True."""
        if not isinstance(exc, AnyURLError):  # cancelled, or a bug: the connection's state is unknown
            await lease.release(False)
            return False
        stale = self.is_stale(exc)
        await lease.release(keep_on_error and not stale)
        if not (stale and lease.reused and not fresh):
            return False
        self.log.debug("reused connection to %s:%s was stale (%s); retrying on a new one",
                       *lease.address, exc.message)
        return True

    def abort_idle(self) -> None:
        """Close every idle connection's socket now, with no event loop (its loop was closed:
        no goodbye can be said, but nothing is left for the collector to warn about)."""
        self.closed = True
        hosts, self._hosts = self._hosts, {}
        for h in hosts.values():
            idle, h.idle = h.idle, []
            for item in idle:
                _abort_without_loop(item.conn)

    async def aclose(self) -> None:
        """Close every idle connection; busy ones close when released."""
        self.closed = True
        hosts, self._hosts = self._hosts, {}
        for address, h in hosts.items():
            idle, h.idle = h.idle, []
            await self._close_all([i.conn for i in idle], address)
            h.wake()


def _abort_without_loop(conn: Connection) -> None:
    with contextlib.suppress(Exception):
        conn.abort()  # marks its transport closing; a closed loop refuses the rest (RuntimeError)
    transport = getattr(conn, "transport", None) or getattr(getattr(conn, "writer", None), "transport", None)
    # asyncio's selector transports: run the step abort() asked the closed loop for (it closes
    # the socket). (uvloop closed its sockets in loop.close() already.)
    lost = getattr(transport, "_call_connection_lost", None)
    if lost is not None and getattr(transport, "_sock", None) is not None:
        with contextlib.suppress(Exception):
            lost(None)

"""Pipelined article commands on NNTP connections (RFC 3977 section 3.5): the windows of
commands in flight on one connection, per server, and who may join one.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from ..errors import AnyURLError, FetchTimeout, PoolTimeout
from ..net.pool import Pool
from ..protocols import nntp
from ..protocols.nntp import Reply
from ..settings import NewsOptions, Request
from ..urls import URL
from .news_conn import NewsConnection, Server

__all__ = ["MAX_PIPELINE", "PIPELINE_READ_AHEAD", "AskAgain", "Slot", "Window", "Windows", "answers"]

Start = Callable[[Request, Server, NewsOptions, Callable[[NewsConnection], Awaitable[Any]]],
                 Awaitable[tuple[NewsConnection, Any]]]


#: the most bytes of one article read ahead into memory on a pipelined connection, so the
#: commands behind it go on without waiting for its reader; a longer article streams, and
#: holds the commands behind it until it is read
PIPELINE_READ_AHEAD = 1 << 20
#: the most commands in flight on one connection, whatever NewsOptions.pipeline says
MAX_PIPELINE = 256


class AskAgain(Exception):
    """A pipelined request must be asked again on a connection of its own: its window broke
    (an unexpected reply, the connection closed or failed) before its reply was handed out."""


class Slot:
    """One request's commands in a window: the turn is its to read once it is at the head."""

    __slots__ = ("lines", "ref", "turn")

    def __init__(self, lines: list[tuple[bytes, frozenset[int]]], ref: int | str) -> None:
        self.lines = lines
        self.ref = ref
        self.turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()


class Window:
    """The article commands in flight on one connection, answered in order (RFC 3977 3.5).

    The first request opens the connection (the pool's slot is the window's until the
    last request in it is done); requests for the same server (and group, when they
    name one) join while there is room: their commands are written at once and they
    wait for their turn to read. Whoever meets a reply that is not the one expected
    breaks the window: the connection is dropped and every request still waiting is
    asked again on a connection of its own.
    """

    def __init__(self, server: Server, group: str | None, depth: int) -> None:
        self.server = server
        self.group = group  # the group every command in the window is read in
        self.depth = depth
        self.slots: deque[Slot] = deque()
        self.conn: NewsConnection | None = None  # None while the first request connects
        self.broken = False
        self.sealed = False  # no one joins any more: the head sends commands of its own

    def alone(self) -> bool:
        """The head is the only request in the window: it may send a command of its own once
        the window is sealed (a login, an OVER), since no reply is queued behind it."""
        return len(self.slots) == 1 and not self.broken

    def has_room(self, group: str | None) -> bool:
        return (not self.broken and not self.sealed and len(self.slots) < self.depth
                and (group is None or group == self.group))

    def add(self, lines: list[tuple[bytes, frozenset[int]]], ref: int | str) -> Slot:
        slot = Slot(lines, ref)
        self.slots.append(slot)
        if len(self.slots) == 1:
            slot.turn.set_result(None)
        return slot

    async def wait_turn(self, slot: Slot, req: Request) -> NewsConnection:
        """Wait until *slot* is at the head; the wait ends when the head stops moving for the
        read timeout (its reader stalled): then the window breaks (FetchTimeout)."""
        while not slot.turn.done():
            conn = self.conn
            before = conn.reads if conn is not None else -1
            try:
                async with asyncio.timeout(req.read_timeout):
                    await asyncio.shield(slot.turn)
            except TimeoutError:
                conn = self.conn
                if slot.turn.done() or (conn is not None and conn.reads != before):
                    continue
                raise FetchTimeout("waited for an earlier article on a pipelined news connection "
                                   "that nobody read") from None
        slot.turn.result()  # AskAgain when the window broke
        assert self.conn is not None
        return self.conn


class Windows:
    """The pipelined windows of one handler, per server (see :class:`Window`). *start* runs a
    request's first commands on a pooled connection (the handler's, with its login)."""

    def __init__(self, pool: Pool[NewsConnection], start: Start) -> None:
        self.pool = pool
        self._start = start
        self._windows: dict[Server, list[Window]] = {}
        self._room: dict[Server, asyncio.Future[None]] = {}  # woken when a window or slot frees
        self._reserved: dict[Server, object] = {}  # the request the next free connection is for
        # servers whose replies matched a pipelined window: a batch may overlap its requests to
        # them from the start, before any window is open (one transfer at a time never opens one)
        self.proved: set[Server] = set()

    @staticmethod
    def depth(opts: NewsOptions) -> int:
        return max(1, min(opts.pipeline, MAX_PIPELINE))

    def multiplexed(self, url: URL) -> bool:
        """True when a request for *url* would join a pipelined window open (or opening) now, or
        its server has answered in a window before: many requests share its connection, so a
        caller may run more at once than ``Limits.per_host`` (the CLI's batch does).
        news: URLs name no server: any window."""
        host = getattr(url, "host", None)
        port = getattr(url, "port", 0)

        def mine(server: Server) -> bool:
            return host is None or (server.host == host and (not port or server.port == port))

        if any(mine(server) for server in self.proved):
            return True
        for server, windows in self._windows.items():
            if mine(server) and any(w.depth > 1 and not w.broken and not w.sealed for w in windows):
                return True
        return False

    async def join(self, req: Request, server: Server, opts: NewsOptions, group: str | None,
                    lines: list[tuple[bytes, frozenset[int]]], ref: int | str) -> tuple[Window, Slot]:
        """A place for *lines* in a window: one with room (the least busy), else a new window
        on a connection from the pool while it has a free slot, else wait for room: at most
        ``Timeouts.pool`` with no request on the server's connections ending (each one that
        ends starts the count again). *group*: the group the commands are read in (None: any)."""
        wait = req.bound(req.timeouts.pool)
        until = None if wait is None else asyncio.get_running_loop().time() + wait
        me = object()
        try:
            return await self._join_or_wait(req, server, opts, group, lines, ref, me, until, wait)
        finally:
            if self._reserved.get(server) is me:
                del self._reserved[server]

    async def _join_or_wait(self, req: Request, server: Server, opts: NewsOptions, group: str | None,
                            lines: list[tuple[bytes, frozenset[int]]], ref: int | str,
                            me: object, until: float | None, wait: float | None) -> tuple[Window, Slot]:
        url = req.url
        loop = asyncio.get_running_loop()
        while True:
            windows = self._windows.get(server, [])
            best = min((w for w in windows if w.has_room(group)), key=lambda w: len(w.slots), default=None)
            if best is not None:
                slot = best.add(lines, ref)
                if best.conn is not None:
                    # a failed write shows when the reply is read (the window breaks then)
                    with contextlib.suppress(AnyURLError):
                        await best.conn.send_many(lines)
                return best, slot
            reserved = self._reserved.get(server)
            if ((not windows or self.pool.open_count(server.host, server.port) < req.limits.per_host)
                    and reserved in (None, me)):
                self._reserved.pop(server, None)
                return await self._open_window(req, server, opts, group, lines, ref)
            if (reserved is None and group is not None and not any(w.sealed for w in windows)
                    and all(w.group != group for w in windows)):
                # every connection is busy with other groups: the least busy window takes no
                # one more, and its connection is this request's next (else a steady stream
                # for one group would keep the others waiting)
                min(windows, key=lambda w: len(w.slots)).sealed = True
                self._reserved[server] = me
            room = self._room.get(server)
            if room is None or room.done():
                room = self._room[server] = loop.create_future()
            left = None if until is None else until - loop.time()
            try:
                if left is not None and left <= 0:
                    raise TimeoutError
                async with asyncio.timeout(left):
                    await asyncio.shield(room)
            except TimeoutError:
                raise PoolTimeout(f"waited {wait:.3g} s for room on a connection to {server.host}:"
                                  f"{server.port} with no request on its connections ending meanwhile "
                                  f"(Limits.per_host={req.limits.per_host}, "
                                  f"NewsOptions.pipeline={self.depth(opts)}, all full)", url=url) from None
            # a request ahead ended: the connections are busy, not stuck (a batch of large articles
            # in other groups), so Timeouts.pool counts again from here, never past the deadline
            wait = req.bound(req.timeouts.pool)
            until = None if wait is None else loop.time() + wait

    async def _open_window(self, req: Request, server: Server, opts: NewsOptions, group: str | None,
                           lines: list[tuple[bytes, frozenset[int]]], ref: int | str) -> tuple[Window, Slot]:
        window = Window(server, group, self.depth(opts))
        self._windows.setdefault(server, []).append(window)
        slot = window.add(lines, ref)

        try:
            conn, _ = await self._start(req, server, opts, lambda conn: conn.run(conn.session.enter(group)))
        except BaseException:
            await self.drop(window)  # the requests that joined it ask again on their own
            raise
        if window.broken:  # dropped while connecting (a request in it was cancelled): ask again
            await self.pool.release(conn, True)
            raise AskAgain
        # every command queued while connecting, in one write
        queued = [line for s in window.slots for line in s.lines]
        window.conn = conn
        window.group = conn.session.group
        with contextlib.suppress(AnyURLError):
            await conn.send_many(queued)
        return window, slot

    def _unregister(self, window: Window) -> None:
        windows = self._windows.get(window.server)
        if windows is not None and window in windows:
            windows.remove(window)
            if not windows:
                del self._windows[window.server]
        room = self._room.pop(window.server, None)
        if room is not None and not room.done():
            room.set_result(None)

    async def finish(self, window: Window, slot: Slot, reusable: bool) -> None:
        """*slot* is done with the connection: the next request in the window reads on; the
        last gives the connection back to the pool. Not *reusable*: the window breaks."""
        if window.broken:
            return
        if not reusable or not window.slots or window.slots[0] is not slot:
            await self.drop(window)
            return
        window.slots.popleft()
        if window.slots:
            window.slots[0].turn.set_result(None)
            room = self._room.pop(window.server, None)
            if room is not None and not room.done():
                room.set_result(None)
            return
        self._unregister(window)
        if window.conn is not None:
            await self.pool.release(window.conn, True)

    async def drop(self, window: Window) -> None:
        """Drop the window's connection; every request still waiting in it asks again."""
        if window.broken:
            return
        window.broken = True
        self._unregister(window)
        for s in window.slots:
            if not s.turn.done():
                s.turn.set_exception(AskAgain())
                s.turn.exception()  # (read here: a waiter that was cancelled never reads it)
        window.slots.clear()
        if window.conn is not None:
            await self.pool.release(window.conn, False)


def answers(code: int, ref: int | str, reply: Reply) -> bool:
    """Whether *reply* can be the answer to ARTICLE (220), HEAD (221) or STAT (223) of *ref*
    on a pipelined connection: a "no such article" reply, or the success reply naming the
    article asked for (its number, or its message-id)."""
    if reply.code in (412, 420, 423, 430):
        return True
    if reply.code != code:
        return False
    number, mid = nntp.parse_stat_reply(reply)
    return number == ref if isinstance(ref, int) else mid == ref

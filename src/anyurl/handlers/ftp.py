"""FTP and FTPS: the asyncio driver for :mod:`anyurl.protocols.ftpsession`.

The control connection is our own small asyncio-streams client rather than
aioftp's: aioftp inserts commands of its own (TYPE at login, stat calls before
downloads) so the exact RFC 1738 command sequence could not be guaranteed, and
its data path copies through 8 KiB reads. What to send and what each reply
means (login, CWDs, TYPE, EPSV/PASV, RETR and its fallbacks, listings, stat,
upload) is the sans-I/O session's (:mod:`anyurl.protocols.ftpsession`); the
parsers are in :mod:`anyurl.protocols.ftp`. The driver moves bytes:

* this module: :class:`FTPHandler` (open, stat, upload, the streaming body) and
  :class:`FTPOptions`;
* :mod:`anyurl.handlers.ftp_control`: the control connection (lines, timeouts,
  the loop that runs the session's ops);
* :mod:`anyurl.handlers.ftp_data`: data connections, read by the shared
  :class:`~anyurl.net.bulk.BulkReader`.

Control connections are pooled by :class:`~anyurl.net.pool.Pool` (per-host
slots, idle reuse, the stale retry); commands and replies are logged at DEBUG to
``anyurl.ftp`` (passwords masked).
"""

from __future__ import annotations

import asyncio
import functools
import io
import logging
import os
import ssl
from collections.abc import AsyncIterator, Callable
from typing import Any, BinaryIO

from ..errors import (
    AnyURLError,
    ConfigurationError,
    FetchTimeout,
    OverlongTransfer,
    ProtocolError,
    TruncatedTransfer,
    mask_password,
)
from ..net.connect import open_stream
from ..net.pool import Lease, Pool
from ..net.tls import client_context
from ..protocols import ftp as proto
from ..protocols import ftpsession as fs
from ..protocols.ftp import Plan
from ..response import Body, Capture, Entry, Stat, guess_content_type, utc_now
from ..settings import FTPOptions
from ..urls import FTPURL, URL
from .base import (
    Context,
    Handler,
    Request,
    apply_length,
    render_entries,
)
from .ftp_control import Control, PoolKey, waited
from .ftp_data import AnyReader

__all__ = ["FTPHandler", "FTPOptions"]

log = logging.getLogger("anyurl.ftp")
_set = object.__setattr__  # how a frozen Record's __init__ sets its fields


# ---------------------------------------------------------------------------
# The handler
# ---------------------------------------------------------------------------


def _content_type(name: str) -> str:
    """guess_content_type(name), looked up once per suffix pair (what mimetypes looks at:
    the type's suffix and one compression suffix) instead of once per file."""
    if ":" in name:  # mimetypes reads "scheme:" prefixes ("data:"): ask it directly
        return guess_content_type(name)
    # a suffix counts only after a stem that is not all dots (as posixpath.splitext)
    last = name.rfind(".")
    if last <= 0 or not name[:last].lstrip("."):
        return _suffix_type("")
    before = name.rfind(".", 0, last)
    return _suffix_type(name[before if before > 0 and name[:before].lstrip(".") else last:])


@functools.lru_cache(maxsize=512)
def _suffix_type(suffixes: str) -> str:
    return guess_content_type("x" + suffixes)


def _source_name(source: Any, url: URL) -> str:
    """The base name an upload to a directory URL stores *source* under: a path's, or a file
    object's ``.name`` (not a descriptor number nor a pseudo name like ``<stdin>``)."""
    name = source if isinstance(source, (str, os.PathLike)) else getattr(source, "name", None)
    if isinstance(name, (str, bytes, os.PathLike)):
        base = os.path.basename(os.fsdecode(name))
        if base not in ("", ".", "..") and not (base.startswith("<") and base.endswith(">")):
            return base
    raise ConfigurationError("the upload URL ends in '/' and the source has no file name to store "
                             "it under: put the name in the URL", url=url)


class FTPHandler(Handler):
    """ftp:// (RFC 1738 section 3.2) and ftps:// (implicit TLS); explicit TLS via FTPOptions."""

    options_name = "ftp"

    def __init__(self, context: Context) -> None:
        super().__init__(context)
        # 421: the server is closing the control connection (often an idle timeout)
        self.pool: Pool[Control] = Pool("ftp", closing_replies=("421",))
        # (host, port) of servers that answered pipelined commands out of step: not pipelined again
        self.in_step_only: set[tuple[str, int]] = set()
        # the connections lent now, per (host, port): where a RETR may queue behind a transfer
        self._busy: dict[tuple[str, int], set[Control]] = {}
        # requests waiting for a transfer to queue behind, or for room in the pool (_open_once)
        self._waiters: dict[tuple[str, int], list[asyncio.Future[None]]] = {}
        self._opening: dict[tuple[str, int], int] = {}  # logins under way: their servers not yet known
        # (host, port) where a transfer with a request queued behind it failed: nothing queued there again
        self.no_queue: set[tuple[str, int]] = set()
        # (host, port) whose last connection given back could take a request behind its transfer:
        # a batch may overlap its requests there before any is in flight (one at a time never would)
        self._queueing: set[tuple[str, int]] = set()

    def _plan(self, url: URL, opts: FTPOptions) -> tuple[FTPURL, Plan]:
        if not isinstance(url, FTPURL):
            raise ConfigurationError(f"not an FTP URL: {url}", url=url)
        try:
            plan = proto.plan(url, anonymous_email=self.context.anonymous_email,
                              cwd_strategy=opts.cwd_strategy, text_suffixes=opts.text_suffixes,
                              guess_type=opts.guess_type)
        except ValueError as exc:
            if isinstance(exc, AnyURLError):
                raise
            raise ConfigurationError(str(exc), url=url) from exc
        return url, plan

    # -- pool ------------------------------------------------------------------

    def _tls_context(self, opts: FTPOptions) -> ssl.SSLContext:
        return client_context(opts.verify, opts.cafile, opts.ssl_context)

    async def _acquire(self, url: FTPURL, plan: Plan, opts: FTPOptions, req: Request | None = None,
                       *, fresh: bool = False) -> Control:
        """An idle connection reset for *plan*, or a new one (waits for a per-host slot)."""
        req = req if req is not None else self.context.request(url)
        implicit = url.scheme == "ftps"
        mode = "implicit" if implicit else ("explicit" if opts.tls else "plain")
        key: PoolKey = (url.host, url.port, plan.user, plan.password, mode)
        lease = await self.pool.acquire(req, url.host, url.port, key,
                                        lambda: self._login_counted(url, plan, opts, key, mode, req),
                                        (req, plan.cwds, plan.joinable), fresh=fresh)
        conn = lease.conn
        conn.lease = lease
        conn.on_awaiting = self._awaiting
        self._take(conn, req, url, lease.reused)
        self._busy.setdefault((url.host, url.port), set()).add(conn)
        return conn

    def _wake(self, address: tuple[str, int], everyone: bool = True) -> None:
        """The requests waiting to queue on host:port look again (_queue): all of them (a login
        ended: the server is known), or the first still waiting (a transfer one request may
        queue behind, room for one in the pool): with a thousand files, waking every waiter
        for each transfer cost more CPU than the files themselves."""
        waiters = self._waiters.get(address)
        if waiters:
            for fut in waiters:
                if not fut.done():
                    fut.set_result(None)
                    if not everyone:
                        return

    @staticmethod
    def _take(conn: Control, req: Request, url: FTPURL, reused: bool) -> None:
        """*conn* now serves *req*: its timeouts and limits apply."""
        conn.req = req
        conn.url = url
        conn.reused = reused
        limits = req.limits
        conn.session.listing_limits = (limits.max_line, limits.max_entries)

    async def _release(self, conn: Control, reusable: bool, opts: FTPOptions) -> None:
        """The request on *conn* is done with it: to the request queued behind it (if any and
        the connection is in step), else back to the pool (kept when *reusable*)."""
        lease = conn.lease
        assert lease is not None
        session = conn.session
        session.refused = None  # holds a traceback: not kept past the request
        session.awaiting_end = False
        conn.capture = None
        conn.lone = False
        follower, conn.follower = conn.follower, None
        if follower is not None:
            if (reusable and not follower.done() and not session.broken
                    and not conn.writer.transport.is_closing()):
                conn.lease = lease.hand_over()  # the queued request reads its replies next
                session.handed_over()
                follower.set_result(True)
                self._wake(lease.address, everyone=False)  # one may queue behind it now
                return
            if not follower.done():
                follower.set_result(False)  # it goes to another connection
            orphan, conn.orphan = conn.orphan, None
            if orphan is not None and reusable and not session.broken:
                # its request gave up waiting: the server will still answer what it queued (vsftpd
                # would wait for the data connection, its session held up to accept_timeout)
                session.handed_over()
                conn.lone = True
                reusable = await self._drain(conn, orphan)
            else:
                if orphan is not None:
                    orphan.close()
                reusable = False  # commands queued that nobody will answer for: never reused
        busy = self._busy.get(lease.address)
        if busy is not None:
            busy.discard(conn)
        if reusable and self._may_open(conn):
            self._queueing.add(lease.address)
        else:
            self._queueing.discard(lease.address)
        self._wake(lease.address, everyone=False)  # room in the pool (for one)
        await lease.release(reusable, keep=opts.reuse)

    async def _login(self, url: FTPURL, plan: Plan, opts: FTPOptions, key: PoolKey, mode: str,
                     req: Request) -> Control:
        host, port = url.host, url.port
        started = utc_now() if req.capture else None
        ctx = self._tls_context(opts) if mode != "plain" else None
        reader, writer = await open_stream(url, url.scheme, host, port, timeout=req.connect_timeout,
                                           limit=req.limits.max_line, tls=ctx if mode == "implicit" else None)
        conn = Control(self.context, self.pool.log, key, url, host, port, reader, writer, ctx, req)
        if req.capture:  # the greeting and the login are this request's exchange
            conn.capture = Capture("FTP", str(url), started=started)
        try:
            await conn.run(conn.session.login(plan, host, port, mode, pipeline=opts.pipeline))
        except BaseException:
            conn.abort()
            raise
        return conn

    async def _login_counted(self, url: FTPURL, plan: Plan, opts: FTPOptions, key: PoolKey, mode: str,
                             req: Request) -> Control:
        """:meth:`_login`, counted in ``_opening`` meanwhile: requests that find every slot taken
        wait to queue (_queue) until the server is known (its greeting)."""
        address = (url.host, url.port)
        self._opening[address] = self._opening.get(address, 0) + 1
        try:
            return await self._login(url, plan, opts, key, mode, req)
        finally:
            left = self._opening[address] - 1
            if left:
                self._opening[address] = left
            else:
                del self._opening[address]
            self._wake(address)

    async def aclose(self) -> None:
        await self.pool.aclose()

    async def _run_on_lease(self, req: Request, opts: FTPOptions, furl: FTPURL, plan: Plan,
                            step: Callable[[Control], Any]) -> Any:
        async def acquire(fresh: bool) -> Lease[Control]:
            conn = await self._acquire(furl, plan, opts, req, fresh=fresh)
            assert conn.lease is not None
            return conn.lease

        async def on(lease: Lease[Control]) -> Any:
            return await step(lease.conn)

        # A reused connection the server dropped (or closed with 421) while idle: one fresh try.
        return await self.pool.run(acquire, on)

    # -- open ------------------------------------------------------------------

    async def open(self, req: Request) -> Body:
        """Retrieve a file (streaming) or a directory listing (``Body.entries``)."""
        opts = self.options(req, FTPOptions)
        furl, plan = self._plan(req.url, opts)  # UnsafeURL here, before any connection
        if opts.pipeline and self.in_step_only and (furl.host, furl.port) in self.in_step_only:
            opts = opts.__replace__(pipeline=False)
        try:
            body = await self._open_once(req, furl, plan, opts)
        except ProtocolError:
            if not opts.pipeline or (furl.host, furl.port) not in self.in_step_only:
                raise
            # the server answered pipelined commands out of step (the connection is gone):
            # once more, one command at a time, as for every later request to it
            opts = opts.__replace__(pipeline=False)
            body = await self._open_once(req, furl, plan, opts)
        return body

    async def _open_once(self, req: Request, furl: FTPURL, plan: Plan, opts: FTPOptions) -> Body:
        """One try of :meth:`open`: behind a transfer in progress (:meth:`_follow`) when the
        server queues commands and every connection is busy, else on a connection of its own."""
        try:
            # (a capture's exchange is its own: it queues behind no transfer, and none behind it)
            if opts.pipeline and plan.action == "RETR" and (self._busy or self._opening) and not req.capture:
                body = await self._queue(req, furl, plan, opts)
                if body is not None:
                    return body
                if (furl.host, furl.port) in self.in_step_only:  # found out of step while it waited
                    opts = opts.__replace__(pipeline=False)
            return await self._run_on_lease(req, opts, furl, plan,  # type: ignore[no-any-return]
                                            lambda conn: self._open_on(conn, req, furl, plan, opts))
        except fs.Behind:
            # its RETR failed and it needs more commands (the 550 fallback), but another request's
            # were queued behind it: that request has the connection; this one is made again
            return await self._run_on_lease(req, opts, furl, plan,  # type: ignore[no-any-return]
                                            lambda conn: self._open_on(conn, req, furl, plan, opts, lone=True))

    def multiplexed(self, url: URL) -> bool:
        """True when a RETR for *url* could be queued now behind a transfer in progress (the server
        queues commands, :meth:`_follow`), or could be once one starts (the last connection given
        back to it could take one): a caller may run more requests at once than
        ``Limits.per_host`` (the CLI's batch does; each queued request waits for its turn)."""
        address = (getattr(url, "host", ""), getattr(url, "port", 0))
        if address in self.no_queue or address in self.in_step_only:
            return False
        busy = self._busy.get(address)
        if not busy:  # nothing in flight: what the last connection given back showed
            return address in self._queueing
        return any(self._may_open(conn) for conn in busy)

    @staticmethod
    def _may_open(conn: Control) -> bool:
        """True when *conn* serves a server that queues commands and its transfers are small:
        a request may soon queue behind one (its own transfer, or the next)."""
        session = conn.session
        expected = session.expected
        return (session.queues and not session.broken and not conn.lone and expected is not None
                and expected <= fs.FOLLOW_MAX)

    def _awaiting(self, conn: Control) -> None:
        """*conn*'s request sent its last command (Control.run): wake the requests waiting to queue."""
        if conn.follower is None and conn.session.open_to_follow():
            self._wake((conn.host, conn.port), everyone=False)

    async def _queue(self, req: Request, furl: FTPURL, plan: Plan, opts: FTPOptions) -> Body | None:
        """:meth:`_follow` when it can; while every connection to a server that queues commands
        is busy, wait for a transfer to queue behind or for room in the pool, as the pool's own
        wait does: ``Timeouts.pool`` counted again each time something happens there (a
        transfer to queue behind, a connection free), never past the total deadline. None: the
        usual way (a connection of its own, :meth:`Pool.acquire`, which then has room, or waits
        as always and says PoolTimeout)."""
        address = (furl.host, furl.port)
        loop = asyncio.get_running_loop()
        while True:
            body = await self._follow(req, furl, plan, opts)
            if body is not None:
                return body
            busy = self._busy.get(address) or ()
            if (self.pool.has_room(furl.host, furl.port, req.limits) or address in self.in_step_only
                    or address in self.no_queue or not (address in self._opening or any(c.session.queues and not c.session.broken
                                                            for c in busy))):
                return None
            fut: asyncio.Future[None] = loop.create_future()
            waiters = self._waiters.setdefault(address, [])
            waiters.append(fut)
            try:
                async with asyncio.timeout(req.bound(req.timeouts.pool)):
                    await fut
            except TimeoutError:
                return None  # the pool's own wait says PoolTimeout if it must
            finally:
                waiters.remove(fut)
                if not waiters:
                    del self._waiters[address]

    async def _follow(self, req: Request, furl: FTPURL, plan: Plan, opts: FTPOptions) -> Body | None:
        """Queue the RETR behind a transfer in progress on a busy connection to the same server
        and login, when the pool has no room now and the server reads commands only between
        transfers (:meth:`Session.follow`): the transfer's 226 and this request's 229 come
        back to back, a round trip saved. None when no connection can take it, or the one
        it queued on was lost (its commands are never answered): then the usual way."""
        address = (furl.host, furl.port)
        busy = self._busy.get(address)
        if (not busy or address in self.in_step_only or address in self.no_queue or req.offset
                or req.max_size is not None):
            return None
        if self.pool.has_room(furl.host, furl.port, req.limits):
            return None  # a connection of its own now (idle, or a free slot)
        mode = "implicit" if furl.scheme == "ftps" else ("explicit" if opts.tls else "plain")
        key: PoolKey = (furl.host, furl.port, plan.user, plan.password, mode)
        for conn in busy:
            if (conn.key == key and conn.follower is None and not conn.lone and conn.req.length is None
                    and conn.session.can_follow(plan, opts)):
                break
        else:
            return None
        op = conn.session.follow(plan, furl, opts)
        batch = op.send(None)
        assert type(batch) is fs.Send
        try:
            conn.write_now(batch)
        except AnyURLError:
            op.close()
            return None  # the transfer in progress fails on the lost connection too
        assert op.send(None) is fs.TURN
        turn: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        conn.follower = turn
        wait = req.bound(req.timeouts.pool)
        try:
            async with asyncio.timeout(wait):
                handed = await asyncio.shield(turn)
        except BaseException as exc:
            if turn.done() and turn.result():  # handed over as the wait ended: answer it and give it back
                conn.lone = True
                await self._release(conn, await self._drain(conn, op), opts)
            else:
                turn.cancel()  # the transfer ahead ends alone; then _release reads what was queued
                conn.orphan = op
            if isinstance(exc, TimeoutError):  # a transfer longer than expected: the usual way
                log.debug("%s:%s: gave up waiting %.3g s behind a transfer; asking the pool",
                          furl.host, furl.port, wait)
                return None
            raise
        if not handed:
            op.close()
            return None
        self._take(conn, req, furl, True)
        return await self._open_on(conn, req, furl, plan, opts, op=op)

    async def _open_on(self, conn: Control, req: Request, furl: FTPURL, plan: Plan, opts: FTPOptions,
                       op: fs.Op[fs.Started | fs.Listed] | None = None, lone: bool = False) -> Body:
        conn.lone = lone
        if req.capture:
            self._capture(conn, furl)
        try:
            if op is None:
                op = conn.session.open(plan, furl, opts, offset=req.offset, length=req.length, limit=req.max_size)
            result = await conn.run(op)
            if type(result) is fs.Started:  # the body's stream releases the connection when done
                return self._retr_body(conn, req, furl, plan, opts, result)
            assert type(result) is fs.Listed
            body = self._listing_body(furl, result, conn.session.login_dir)
            if conn.capture is not None:
                body.capture, conn.capture = conn.capture, None
                body.capture.body_type = "text/plain"  # the listing as the server sent it
            body = apply_length(body, req.length)
        except BaseException as exc:  # a refusal (550...) leaves the connection in step: keep it
            self._check_step(conn, furl, opts, exc)
            self._failed_with_queue(conn, furl, exc)
            await self._release(conn, conn.in_step_after(exc) or isinstance(exc, fs.Behind), opts)
            raise
        await self._release(conn, True, opts)
        return body

    @staticmethod
    def _capture(conn: Control, furl: FTPURL) -> None:
        """*conn* notes this request's exchange (begun at its login when it is new)."""
        cap = conn.capture
        if cap is None or conn.reused:
            cap = conn.capture = Capture("FTP", str(furl))
        cap.url = str(furl)
        cap.kept_by_driver = True
        cap.peer_of(conn.writer)
        conn.lone = True  # nothing queues behind it: every line on the connection is its own

    def _failed_with_queue(self, conn: Control, furl: FTPURL, exc: BaseException) -> None:
        """A transfer with a request queued behind it failed (*exc*), the connection out of step
        or lost: perhaps the server acted on the queued commands at once after all (a closed
        data connection, a missing 226). Nothing is queued behind transfers there again."""
        if (conn.follower is None or not isinstance(exc, AnyURLError) or conn.in_step_after(exc)
                or isinstance(exc, fs.Behind)):
            return
        address = (furl.host, furl.port)
        if address not in self.no_queue:
            self.no_queue.add(address)
            if conn.session.out_of_step:
                return  # said already (_check_step), and nothing is pipelined there any more
            log.warning("%s:%s: a transfer with a request queued behind it failed (%s): requests are no "
                        "longer queued behind transfers there", furl.host, furl.port, exc.message)

    @staticmethod
    async def _drain(conn: Control, op: fs.Op[fs.Started | fs.Listed]) -> bool:
        """Read the replies to a queued RETR whose request gave up (its op, at its TURN): the
        transfer is aborted as soon as it starts (ABOR). True when the connection is in step."""
        try:
            async with asyncio.timeout(5.0):
                result = await conn.run(op)
                if type(result) is fs.Started:
                    return await conn.abort_transfer(conn.take_data())
        except (AnyURLError, TimeoutError, fs.Behind):
            return False
        return True

    def _check_step(self, conn: Control, furl: FTPURL, opts: FTPOptions, exc: BaseException) -> None:
        """After *exc*: a server that answered pipelined commands out of step gets none again."""
        if conn.session.out_of_step and opts.pipeline:
            self.in_step_only.add((furl.host, furl.port))
            log.warning("%s:%s answered pipelined commands out of step (%s): commands go one at a "
                        "time to it from now on", furl.host, furl.port, getattr(exc, "message", exc))

    # -- stat ------------------------------------------------------------------

    async def stat(self, req: Request) -> Stat:
        """Size, time and kind without a transfer: MLST when FEAT offers it, else
        TYPE I + SIZE + MDTM; a name SIZE does not know that CWD accepts is a directory."""
        opts = self.options(req, FTPOptions)
        furl, plan = self._plan(req.url, opts)

        async def step(conn: Control) -> Stat:
            try:
                facts = await conn.run(conn.session.stat(plan, furl, opts))
            except BaseException as exc:
                await self._release(conn, conn.in_step_after(exc), opts)
                raise
            await self._release(conn, True, opts)
            return self._stat_result(furl, facts)

        # as in open(): a reused connection the server dropped while idle gets one fresh try
        result: Stat = await self._run_on_lease(req, opts, furl, plan, step)
        return result

    @staticmethod
    def _stat_result(url: FTPURL, facts: fs.StatFacts) -> Stat:
        item = facts.item
        if item is None:
            if facts.kind == "file":
                return Stat(str(url), kind="file", size=facts.size, modified=facts.modified,
                            content_type=guess_content_type(url.name), meta={"ftp_reply": facts.reply})
            return Stat(str(url), kind=facts.kind, meta={"ftp_reply": facts.reply} if facts.reply else None)
        return Stat(str(url), kind=item.kind if item.known else facts.kind,
                    size=item.size if item.kind != "directory" else None, modified=item.modified,
                    content_type=guess_content_type(url.name) if item.kind == "file" else None,
                    meta={"ftp_facts": dict(item.facts)})

    # -- retrieval ---------------------------------------------------------------

    def _retr_body(self, conn: Control, req: Request, url: FTPURL, plan: Plan, opts: FTPOptions,
                   started: fs.Started) -> Body:
        """The streaming Body of a RETR whose data connection is open."""
        reader = conn.take_data()
        offset, length = req.offset, req.length
        total = started.total
        # Under TYPE A the server's byte count is not what arrives after CRLF -> "\n".
        size = max(total - offset, 0) if total is not None and plan.type == "I" else None
        if length is not None and size is not None and length >= size:
            length = None  # the range reaches the end: let the transfer finish with its 226
        ran: list[bool] = []
        skip = started.skip  # no REST on this server: the file comes from its start
        chunks = self._stream(conn, req, url, reader, opts, plan.type == "A", size, length, ran, skip)

        async def on_close() -> None:
            # A generator closed before its first step never runs its finally: release here.
            if not ran:
                await self._release(conn, await conn.abort_transfer(reader), opts)
        body_size = size if length is None else (length if size is None else min(size, length))
        # the type is guessed only when asked for: a download never asks, and a process that
        # never guesses does not load mimetypes and its tables (as the file and gopher handlers)
        meta: dict[str, Any] = {"ftp_type": plan.type, "ftp_reply": started.reply.text}
        if skip:
            meta["range_ignored"] = True  # as HTTP's when a server ignores Range
        body = Body(url, chunks, content_type=functools.partial(_content_type, url.name), size=body_size,
                    offset=offset, meta=meta, on_close=on_close,
                    resumable=plan.type == "I" and conn.session.rest_ok)  # REST counts bytes only under TYPE I
        body.capture = conn.capture
        return body

    async def _stream(self, conn: Control, req: Request, url: FTPURL, reader: AnyReader, opts: FTPOptions,
                      ascii_mode: bool, expected: int | None, length: int | None,
                      started: list[bool], skip: int = 0) -> AsyncIterator[bytes]:
        """The data connection's bytes. *expected*: the announced size (more or fewer
        bytes are errors); *length*: stop after that many bytes and ABOR the rest;
        *skip*: drop that many bytes first (the server has no REST)."""
        started.append(True)
        ok = False
        received = 0
        left = length
        decoder = proto.CRLFDecoder() if ascii_mode else None
        timeout = req.read_timeout
        cap = conn.capture
        kept = None if cap is None else cap.keeping()
        try:
            if left is not None and left <= 0:
                ok = await conn.abort_transfer(reader)
                return
            while True:
                try:
                    chunk = await reader.next_chunk(timeout)
                except TimeoutError as exc:
                    raise FetchTimeout(waited(req, "data"), url=url) from exc
                except OSError as exc:  # ssl.SSLError too
                    raise TruncatedTransfer(f"data connection failed after {received} bytes: {exc}",
                                            url=url) from exc
                if chunk is None:
                    break
                if kept is not None:
                    kept.append(chunk)  # as the server sent it (before a TYPE A line-end decoding)
                if skip:
                    if len(chunk) <= skip:
                        skip -= len(chunk)
                        continue
                    chunk = chunk[skip:]
                    skip = 0
                received += len(chunk)
                if expected is not None and received > expected:
                    # Never report success for a body that does not match its SIZE, long or short.
                    if (keep := expected - (received - len(chunk))) > 0 and left is None:
                        yield chunk[:keep]
                    raise OverlongTransfer(f"the server sent more bytes than announced: over {received} "
                                           f"bytes where SIZE said {expected}", url=url)
                if decoder is not None:
                    chunk = decoder.feed(chunk)
                    if not chunk:
                        continue
                if left is not None and len(chunk) >= left:
                    # The range is complete: stop the transfer before handing over its last bytes,
                    # so the connection is back in the pool when the caller sees the end.
                    ok = await conn.abort_transfer(reader)
                    yield chunk[:left]
                    return
                if left is not None:
                    left -= len(chunk)
                yield chunk
            if decoder is not None and (tail := decoder.flush()):
                yield tail
            reader.close()
            try:
                await conn.run(conn.session.end_of_retr(url, received, expected))
            except AnyURLError as exc:
                self._check_step(conn, url, opts, exc)
                raise
            if cap is not None:
                cap.finish()
            ok = True
        except GeneratorExit:
            # The caller stopped reading (closed the body early): ABOR, keep the connection if in step.
            if conn.session.behind and expected is not None and received == expected and left is None:
                # every byte came (a caller that stops at the announced size), but no ABOR can go
                # with a request queued behind: the 226 is due, read it
                reader.close()
                try:
                    async with asyncio.timeout(req.bound(min(req.read_timeout or 5.0, 5.0))):
                        await conn.run(conn.session.end_of_retr(url, received, expected))
                    ok = True
                except (AnyURLError, TimeoutError):
                    pass
            else:
                ok = await conn.abort_transfer(reader)
            raise
        except AnyURLError as exc:
            self._failed_with_queue(conn, url, exc)
            raise
        finally:
            reader.close()
            await self._release(conn, ok, opts)

    def _listing_body(self, url: FTPURL, listed: fs.Listed, login_dir: str | None) -> Body:
        directory = listed.directory
        child = proto.child_urls(url, directory)  # the directory's URL text built once
        entries = [_entry(child, url, directory, i, login_dir) for i in listed.items]
        for note in listed.notes:
            log.warning("%s: %s", mask_password(str(url)), note)
        data = render_entries(entries)
        return Body.from_bytes(url, data, content_type="text/plain", entries=entries, charset="utf-8",
                               meta={"listing": listed.source})

    # -- upload ----------------------------------------------------------------

    async def upload(self, req: Request, source: Any) -> None:
        """STOR *source* (bytes, a local path or a binary file object) at ``req.url``: to a
        temporary name, then RNFR/RNTO. A URL ending in "/" stores the source's base name in
        that directory (as ``curl -T``); a source without a name is refused there.

        How it was stored is logged on the "anyurl.ftp" logger: "temp-dot" (``.name.XXXX.part``),
        "temp" (``name.XXXX.part``, when the server refuses dot names) at INFO, or "direct" (STOR
        of the name itself: no rename, or no temporary name allowed; not atomic) at WARNING.
        """
        url = req.url
        opts = self.options(req, FTPOptions)
        if isinstance(url, FTPURL) and not url.name and url.typecode is None:
            url = url.__replace__(name=_source_name(source, url))  # ftp://h/dir/: dir/<base name>
        furl, plan = self._plan(url, opts)
        if not furl.name or furl.typecode == "d":
            raise ConfigurationError("an upload URL needs a file name", url=url)
        path: str | BinaryIO | None = None
        data: bytes | None = None
        if isinstance(source, (bytes, bytearray, memoryview)):
            data = bytes(source)
        elif isinstance(source, (str, os.PathLike)):
            path = os.fsdecode(source)
            if not os.path.isfile(path):  # noqa: ASYNC240 - one stat
                raise ConfigurationError(f"no such file to upload: {path}", url=url)
        elif callable(getattr(source, "read", None)) and not isinstance(source, io.TextIOBase):
            path = source
        else:
            raise ConfigurationError("upload source must be bytes, a file path or a file object "
                                     "opened in binary mode", url=url)
        token = ""
        if opts.atomic_upload:
            import secrets  # uploads only: not at start-up

            token = secrets.token_hex(4)
        conn = await self._acquire(furl, plan, opts)
        # a file object is rewound after a failure: the next temporary name sends it all again
        start = path.tell() if not isinstance(path, str | None) and path.seekable() else None
        conn.upload = (data, path, start)
        conn.upload_req = req
        try:
            method = await conn.run(conn.session.upload(plan, furl, opts, atomic=opts.atomic_upload, token=token))
        except BaseException as exc:
            if start is not None:
                assert not isinstance(path, str | None)
                path.seek(start)
            conn.upload, conn.upload_req = (None, None, None), None
            await self._release(conn, conn.in_step_after(exc), opts)
            raise
        conn.upload, conn.upload_req = (None, None, None), None
        await self._release(conn, True, opts)
        if method == "direct" and opts.atomic_upload:
            log.warning("%s: stored directly (not atomic): the server refused the temporary names or "
                        "renaming", mask_password(str(furl)))
        else:
            log.info("%s: stored by %s", mask_password(str(furl)), method)


def _entry(child: Callable[[proto.ListItem], str], url: FTPURL, directory: tuple[str, ...], item: proto.ListItem,
           login_dir: str | None = "/") -> Entry:
    """The Entry of one listed name (*child*: its URL, from :func:`proto.child_urls`):
    a symlink keeps its target (meta) and is keyed by it
    (an absolute target resolved on the server's paths, see :func:`proto.symlink_key`).
    A line in no known format (kind "info") has no URL; its text is the title."""
    if item.kind == "info":
        meta = dict(item.meta)
        return Entry(name=item.name, url=None, kind="info", title=meta.pop("line", None), meta=meta)
    meta = dict(item.meta)
    key = None
    if item.target:
        meta["target"] = item.target
        key = proto.symlink_key(url, directory, item.target, login_dir)
    if not item.known:
        meta["kind_known"] = False  # NLST, or a type the listing does not call a file
    return Entry(name=item.name, url=child(item), kind=item.kind, size=item.size,
                 modified=item.modified, key=key, meta=meta)

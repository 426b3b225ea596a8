"""The shared connection pool (handlers/pool.py) with stand-in connections: slots,
idle reuse and expiry, PoolTimeout, and the one stale-retry rule (Pool.run)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from anyurl.errors import ConnectError, PoolTimeout, ResourceNotFound, TemporaryFailure
from anyurl.net.pool import Lease, Pool
from anyurl.settings import Limits, Request, Timeouts
from anyurl.urls import parse


class FakeConn:
    def __init__(self, key: str, n: int) -> None:
        self.key = key
        self.n = n
        self.clean = True
        self.resettable = True
        self.closed: str | None = None  # "polite" or "abort"

    def is_reusable(self) -> bool:
        return self.clean and self.closed is None

    async def reset_for(self, target: Any) -> bool:
        return self.resettable

    async def aclose(self) -> None:
        self.closed = "polite"

    def abort(self) -> None:
        self.closed = "abort"


class Opener:
    def __init__(self) -> None:
        self.made: list[FakeConn] = []

    def __call__(self, key: str = "k") -> Any:
        async def connect() -> FakeConn:
            conn = FakeConn(key, len(self.made))
            self.made.append(conn)
            return conn
        return connect


def req(per_host: int = 2, pool: float | None = 5.0, max_idle: float = 60.0) -> Request:
    return Request(url=parse("ftp://h/x"), timeouts=Timeouts(pool=pool),
                   limits=Limits(per_host=per_host, max_idle=max_idle))


async def test_idle_connection_is_reused_for_the_same_key_only() -> None:
    pool: Pool[FakeConn] = Pool("t")
    new = Opener()
    a = await pool.acquire(req(), "h", 1, "k", new())
    await a.release(True)
    b = await pool.acquire(req(), "h", 1, "k", new())
    assert b.reused and b.conn is a.conn and len(new.made) == 1
    c = await pool.acquire(req(), "h", 1, "other", new("other"))
    assert not c.reused and len(new.made) == 2
    assert pool.open_count("h", 1) == 2


async def test_per_host_counts_idle_connections_and_evicts_another_keys_idle_one() -> None:
    pool: Pool[FakeConn] = Pool("t")
    new = Opener()
    a = await pool.acquire(req(per_host=1), "h", 1, "k", new())
    await a.release(True)
    b = await pool.acquire(req(per_host=1), "h", 1, "other", new("other"))
    assert a.conn.closed == "polite"  # made room: per_host bounds open connections, idle included
    assert pool.open_count("h", 1) == 1
    await b.release(True)


async def test_full_host_waits_then_raises_pool_timeout_naming_host_and_wait() -> None:
    pool: Pool[FakeConn] = Pool("t")
    new = Opener()
    held = [await pool.acquire(req(), "h", 21, "k", new()) for _ in range(2)]
    with pytest.raises(PoolTimeout) as info:
        await pool.acquire(req(pool=0.05), "h", 21, "k", new())
    assert "waited 0.05 s for a free connection to h:21" in str(info.value)
    assert info.value.exit_code == 18 and isinstance(info.value, TimeoutError)
    assert len(new.made) == 2  # the server was never asked
    # Another host is not affected.
    other = await pool.acquire(req(), "g", 21, "k", new())
    await other.release(True)
    for lease in held:
        await lease.release(True)


async def test_waiter_gets_the_connection_released_meanwhile() -> None:
    pool: Pool[FakeConn] = Pool("t")
    new = Opener()
    a = await pool.acquire(req(per_host=1), "h", 1, "k", new())
    waiter = asyncio.create_task(pool.acquire(req(per_host=1), "h", 1, "k", new()))
    await asyncio.sleep(0.01)
    assert not waiter.done()
    await a.release(True)
    b = await asyncio.wait_for(waiter, 1)
    assert b.reused and b.conn is a.conn
    await b.release(True)


async def test_idle_connections_expire_after_max_idle() -> None:
    pool: Pool[FakeConn] = Pool("t")
    new = Opener()
    a = await pool.acquire(req(max_idle=0.02), "h", 1, "k", new())
    await a.release(True)
    await asyncio.sleep(0.05)
    b = await pool.acquire(req(max_idle=0.02), "h", 1, "k", new())
    assert not b.reused and a.conn.closed == "polite"


async def test_unclean_connection_is_never_kept_or_lent() -> None:
    pool: Pool[FakeConn] = Pool("t")
    new = Opener()
    a = await pool.acquire(req(), "h", 1, "k", new())
    a.conn.clean = False  # e.g. bytes after the reply that nobody asked for
    await a.release(True)
    assert a.conn.closed == "polite"
    b = await pool.acquire(req(), "h", 1, "k", new())
    await b.release(True)
    b.conn.clean = False  # went bad while idle
    c = await pool.acquire(req(), "h", 1, "k", new())
    assert not c.reused and b.conn.closed == "polite"
    c.conn.resettable = False
    await c.release(True)
    d = await pool.acquire(req(), "h", 1, "k", new())
    assert not d.reused and c.conn.closed == "abort"
    await d.release(False)
    assert d.conn.closed == "abort" and pool.open_count("h", 1) == 0


async def test_stale_reused_connection_is_retried_once_on_a_fresh_one() -> None:
    pool: Pool[FakeConn] = Pool("t", closing_replies=("421",))
    new = Opener()
    first = await pool.acquire(req(), "h", 1, "k", new())
    await first.release(True)
    tries: list[tuple[int, bool]] = []

    async def acquire(fresh: bool) -> Lease[FakeConn]:
        return await pool.acquire(req(), "h", 1, "k", new(), fresh=fresh)

    async def step(lease: Lease[FakeConn]) -> int:
        tries.append((lease.conn.n, lease.reused))
        if lease.reused:
            raise TemporaryFailure("closing", reply="421 Timeout")
        await lease.release(True)
        return lease.conn.n

    assert await pool.run(acquire, step) == 1
    assert tries == [(0, True), (1, False)]
    assert first.conn.closed == "abort"


async def test_no_retry_on_a_new_connection_or_a_real_error() -> None:
    pool: Pool[FakeConn] = Pool("t")
    new = Opener()
    calls = 0

    async def acquire(fresh: bool) -> Lease[FakeConn]:
        return await pool.acquire(req(), "h", 1, "k", new(), fresh=fresh)

    async def lost(lease: Lease[FakeConn]) -> None:
        nonlocal calls
        calls += 1
        raise ConnectError("lost")

    with pytest.raises(ConnectError):
        await pool.run(acquire, lost)
    assert calls == 1  # a new connection failing is not "stale"

    async def missing(lease: Lease[FakeConn]) -> None:
        nonlocal calls
        calls += 1
        raise ResourceNotFound("550")

    with pytest.raises(ResourceNotFound):
        await pool.run(acquire, missing, keep_on_error=True)
    assert calls == 2
    assert pool.open_count("h", 1) == 1  # the clean connection after a complete error reply is kept


async def test_a_lease_lent_without_a_coroutine_gets_the_same_stale_rule() -> None:
    # the HTTP/1.1 client's common case: lend_idle, then Pool.run on that lease
    pool: Pool[FakeConn] = Pool("t")
    new = Opener()
    first = await pool.acquire(req(), "h", 1, "k", new())
    await first.release(True)
    tries: list[tuple[int, bool]] = []

    async def acquire(fresh: bool) -> Lease[FakeConn]:
        tries.append((-1, fresh))
        return await pool.acquire(req(), "h", 1, "k", new(), fresh=fresh)

    async def step(lease: Lease[FakeConn]) -> int:
        tries.append((lease.conn.n, lease.reused))
        if lease.reused:
            raise ConnectError("server closed the connection before answering")
        assert lease.keep_idle()
        return lease.conn.n

    lent = pool.lend_idle(req(), "h", 1, "k")
    assert lent is not None and lent.reused
    assert await pool.run(acquire, step, lease=lent) == 1
    assert tries == [(0, True), (-1, True), (1, False)]  # one fresh try, asked for as fresh
    assert first.conn.closed == "abort" and pool.open_count("h", 1) == 1

    lent = pool.lend_idle(req(), "h", 1, "k")  # the fresh one, now idle: a real error stands
    assert lent is not None

    async def missing(lease: Lease[FakeConn]) -> None:
        raise ResourceNotFound("404")

    with pytest.raises(ResourceNotFound):
        await pool.run(acquire, missing, lease=lent)
    assert lent.released and lent.conn.closed == "abort" and pool.open_count("h", 1) == 0

    async def cancelled(lease: Lease[FakeConn]) -> None:
        raise asyncio.CancelledError

    lent = await pool.acquire(req(), "h", 1, "k", new())
    with pytest.raises(asyncio.CancelledError):
        await pool.run(acquire, cancelled, lease=lent)
    assert lent.released and pool.open_count("h", 1) == 0


async def test_after_error_is_the_rule_for_a_first_try_run_inline() -> None:
    # what a hot path that tries its lend_idle lease itself asks the pool, then run(fresh=True)
    pool: Pool[FakeConn] = Pool("t", closing_replies=("421",))
    new = Opener()
    first = await pool.acquire(req(), "h", 1, "k", new())
    await first.release(True)
    lent = pool.lend_idle(req(), "h", 1, "k")
    assert lent is not None and lent.reused
    assert await pool.after_error(lent, TemporaryFailure("closing", reply="421 Timeout"))  # stale: try again
    assert lent.released and lent.conn.closed == "abort" and pool.open_count("h", 1) == 0

    fresh = await pool.acquire(req(), "h", 1, "k", new(), fresh=True)
    assert not await pool.after_error(fresh, ConnectError("lost"))  # on a new connection: stands
    assert fresh.conn.closed == "abort"
    again = await pool.acquire(req(), "h", 1, "k", new())
    await again.release(True)
    lent = pool.lend_idle(req(), "h", 1, "k")
    assert lent is not None
    assert not await pool.after_error(lent, ConnectError("lost"), fresh=True)  # the fresh try had its turn
    kept = await pool.acquire(req(), "h", 1, "k", new())
    assert not await pool.after_error(kept, ResourceNotFound("550"), keep_on_error=True)
    assert kept.conn.closed is None and pool.open_count("h", 1) == 1  # a clean refusal: kept idle
    lent = pool.lend_idle(req(), "h", 1, "k")
    assert lent is not None
    assert not await pool.after_error(lent, asyncio.CancelledError(), keep_on_error=True)
    assert lent.conn.closed == "abort"  # not anyurl's error: the state is unknown


async def test_slot_bounds_unpooled_connections() -> None:
    pool: Pool[FakeConn] = Pool("t")
    inside = 0
    most = 0

    async def use() -> None:
        nonlocal inside, most
        async with pool.slot(req(per_host=3), "h", 70):
            inside += 1
            most = max(most, inside)
            await asyncio.sleep(0.01)
            inside -= 1

    await asyncio.gather(*(use() for _ in range(10)))
    assert most == 3 and pool.open_count("h", 70) == 0


async def test_aclose_closes_idle_connections() -> None:
    pool: Pool[FakeConn] = Pool("t")
    new = Opener()
    a = await pool.acquire(req(), "h", 1, "k", new())
    await a.release(True)
    await pool.aclose()
    assert a.conn.closed == "polite"


async def test_a_cap_lowered_by_a_refusal_rises_by_one_probe_per_quiet_period(monkeypatch: pytest.MonkeyPatch) -> None:
    import anyurl.net.pool as pool_module

    monkeypatch.setattr(pool_module, "_PROBE_MIN_SECONDS", 0.05)
    pool: Pool[FakeConn] = Pool("t", closing_replies=("421",))
    server_limit = 1  # what the server takes from us: someone else holds its other sessions
    made: list[FakeConn] = []
    refused = 0

    async def connect() -> FakeConn:
        nonlocal refused
        if sum(c.closed is None for c in made) >= server_limit:
            refused += 1
            raise TemporaryFailure("too many", reply="421 There are too many connections")
        made.append(FakeConn("k", len(made)))
        return made[-1]

    r = req(per_host=4, max_idle=0.5)
    a = await pool.acquire(r, "h", 1, "k", connect)
    waiting = asyncio.create_task(pool.acquire(r, "h", 1, "k", connect))
    await asyncio.sleep(0.02)
    assert refused == 1 and not waiting.done()  # refused with one open: waits for it
    await a.release(True)
    b = await asyncio.wait_for(waiting, 5)
    assert b.conn is made[0]
    # within the quiet period the cap holds: no new login is tried
    with pytest.raises(PoolTimeout, match="at most 1: the server refused more"):
        await pool.acquire(req(per_host=4, max_idle=0.5, pool=0.05), "h", 1, "k", connect)
    assert refused == 1 and len(made) == 1
    await asyncio.sleep(0.55)
    server_limit = 2  # the other client left
    c = await asyncio.wait_for(pool.acquire(r, "h", 1, "k", connect), 5)  # the probe: let in
    assert c.conn is made[1] and pool.open_count("h", 1) == 2 and refused == 1
    # the next probe, after another quiet period, is refused: back to two, and it waits
    await asyncio.sleep(0.55)
    with pytest.raises(PoolTimeout, match="at most 2: the server refused more"):
        await pool.acquire(req(per_host=4, max_idle=0.5, pool=0.1), "h", 1, "k", connect)
    assert refused == 2 and len(made) == 2
    await b.release(True)
    await c.release(True)
    await pool.aclose()


async def test_has_room_says_whether_acquire_would_wait() -> None:
    pool: Pool[FakeConn] = Pool("t")
    new = Opener()
    assert pool.has_room("h", 1, Limits(per_host=1))  # nothing open yet
    a = await pool.acquire(req(per_host=1), "h", 1, "k", new())
    assert not pool.has_room("h", 1, Limits(per_host=1)) and pool.has_room("h", 1, Limits(per_host=2))
    await a.release(True)
    assert pool.has_room("h", 1, Limits(per_host=1))  # idle: lent at once


async def test_a_lease_handed_over_keeps_the_slot_until_the_new_holder_releases() -> None:
    # FTP: the request queued behind a transfer takes its connection over (Lease.hand_over);
    # the first holder can no longer give it back
    pool: Pool[FakeConn] = Pool("t")
    new = Opener()
    first = await pool.acquire(req(per_host=1), "h", 1, "k", new())
    second = first.hand_over()
    assert first.released and not second.released and second.conn is first.conn
    await first.release(False)  # a no-op: the connection is not aborted
    assert first.conn.closed is None and not pool.has_room("h", 1, Limits(per_host=1))
    await pool.release(second.conn, True)  # found by its connection, as any lease
    assert pool.has_room("h", 1, Limits(per_host=1)) and second.released and first.conn.closed is None

"""The SQLite frontier: the seen-set, per-host taking, leases given back on reopening,
totals, the schema version, one crawl per state."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from anyurl.transfer.frontier import DONE, FAILED, New, Outcome, SQLiteFrontier, StateError


def new(url: str, host: str = "h", depth: int = 1) -> New:
    return New(url, url, host, 0, depth, "file")


async def test_seen_set_admits_each_key_once(tmp_path: Path) -> None:
    f = SQLiteFrontier(tmp_path / "s.db")
    try:
        assert await f.add([new("a"), new("b"), new("a")]) == 2
        assert await f.add([new("b"), new("c")]) == 1
        t = await f.totals()
        assert (t.pending, t.seen) == (3, 3)
    finally:
        await f.close()


async def test_take_keeps_per_host_bound_and_serves_hosts_in_turn(tmp_path: Path) -> None:
    f = SQLiteFrontier(tmp_path / "s.db")
    try:
        await f.add([new(f"x{i}", "x", depth=i % 3) for i in range(10)] + [new(f"y{i}", "y") for i in range(10)])
        got = await f.take(10, {}, 2)
        by_host = [i.host for i in got]
        assert by_host.count("x") == 2 and by_host.count("y") == 2
        assert [i.url for i in got if i.host == "x"] == ["x0", "x3"]  # breadth-first within a host
        # hosts already at their bound get nothing more
        assert await f.take(10, {"x": 2, "y": 2}, 2) == []
        more = await f.take(1, {"x": 2, "y": 1}, 2)
        assert [i.host for i in more] == ["y"]
    finally:
        await f.close()


async def test_finish_is_atomic_with_what_it_found_and_leases_come_back(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    f = SQLiteFrontier(path)
    await f.add([new("root")])
    [root] = await f.take(1, {}, 2)
    assert await f.finish(root, Outcome(DONE, "http", 10), [new("c1"), new("c2"), new("root")]) == 2
    taken = await f.take(5, {}, 2)
    assert {i.url for i in taken} == {"c1", "c2"}
    await f.finish(taken[0], Outcome(FAILED, "http", error="boom"))
    await f.close()  # c2 still leased: "in flight" when the process ended
    f = SQLiteFrontier(path)
    try:
        again = await f.take(5, {}, 2)
        assert [i.url for i in again] == [taken[1].url]
        t = await f.totals()
        assert (t.fetched, t.errors, t.bytes, t.pending) == (1, 1, 10, 1)
        assert t.by_scheme == {"http": {"fetched": 1, "errors": 1, "skipped": 0, "bytes": 10}}
    finally:
        await f.close()


async def test_a_foreign_or_newer_state_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE t(x)")
    db.commit()
    db.close()
    with pytest.raises(StateError, match="not an anyurl crawl state"):
        await SQLiteFrontier(other).open()
    newer = tmp_path / "newer.db"
    f = SQLiteFrontier(newer)
    await f.open()
    await f.close()
    db = sqlite3.connect(newer)
    db.execute("UPDATE meta SET value='99' WHERE key='schema'")
    db.commit()
    db.close()
    with pytest.raises(StateError, match="schema 99"):
        await SQLiteFrontier(newer).open()


async def test_one_crawl_per_state(tmp_path: Path) -> None:
    first = SQLiteFrontier(tmp_path / "s.db")
    await first.add([new("a")])
    try:
        with pytest.raises(StateError, match="in use"):
            await SQLiteFrontier(tmp_path / "s.db").open()
    finally:
        await first.close()


def test_memory_does_not_grow_with_the_frontier() -> None:
    # The frontier spills to its file: 150,000 pending URLs cost no more memory than 20,000
    # (a walk's in-memory queue: ~1.1 KB each, 140 MB more). SQLite's page cache is capped
    # (4 MiB here), so what grows is the file.
    import json
    import subprocess
    import sys

    from tests.procs import spawn

    root = Path(__file__).resolve().parents[3]
    env = {"PYTHONPATH": f"{root / 'src'}:{root}", "PATH": "/usr/bin:/bin"}
    got = []
    for n in (20_000, 150_000):
        with spawn([sys.executable, "-m", "bench.probes.frontier", str(n), "--hosts", "100", "--cache-kib", "4096",
                    "--takes", "1000"], stdout=subprocess.PIPE, env=env, cwd=root) as proc:
            out, _ = proc.communicate(timeout=300)
        got.append(json.loads(out))
    small, large = got
    assert 150_000 - 1100 < large["pending"] <= 150_000 - 1000 and large["state_mib"] > 5 * small["state_mib"]
    assert large["peak_rss_mib"] - small["peak_rss_mib"] < 12, got


async def test_a_state_that_cannot_be_opened_is_a_configuration_error(tmp_path: Path) -> None:
    # was: sqlite3.OperationalError escaping as an internal error (exit 70)
    from anyurl.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="cannot open the crawl state"):
        await SQLiteFrontier(tmp_path / "no" / "such" / "dir.sqlite").open()

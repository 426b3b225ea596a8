"""Issue 24.4: a pipelined NNTP window that breaks (an unexpected reply in the middle of
the window, the connection closed with commands outstanding, an unrequested reply) drops
the connection and asks again for what was outstanding: every caller gets its own article."""

from __future__ import annotations

import asyncio

import pytest
from tests.hostile.fakes.nntp_pipeline import COUNT, GROUP, PipelineFaultServer
from tests.procs import arun

import anyurl
from anyurl.handlers.news import NewsOptions
from anyurl.settings import Limits


@pytest.mark.parametrize("fault", ["skip", "close", "extra"])
async def test_broken_window_retries_what_was_outstanding(fault: str) -> None:
    async with PipelineFaultServer(fault) as server:
        async with anyurl.Client(limits=Limits(per_host=2)) as client:
            urls = [f"nntp://127.0.0.1:{server.port}/{GROUP}/{n}" for n in range(1, COUNT + 1)]
            async with asyncio.timeout(60):
                results = await asyncio.gather(*(client.fetch(u) for u in urls))
    for n, r in enumerate(results, 1):
        assert r.meta["number"] == n
        assert r.meta["body"] == f"real body of article {n}\r\n".encode()
    first = server.sessions[0]
    # the first connection had the whole batch in flight (pipelined) ...
    assert server.ahead[0] >= 2 + COUNT - 1
    assert [c for c in first if c.startswith("ARTICLE")] == [f"ARTICLE {n}" for n in range(1, COUNT + 1)]
    # ... and what it did not answer in step was asked again on other connections
    asked_later = [c for s in server.sessions[1:] for c in s if c.startswith("ARTICLE")]
    assert asked_later, "nothing was retried"
    assert "ARTICLE 1" not in asked_later and "ARTICLE 2" not in asked_later


async def test_unpipelined_sends_one_command_at_a_time() -> None:
    async with PipelineFaultServer("none") as server:
        async with anyurl.Client(news=NewsOptions(pipeline=1), limits=Limits(per_host=1)) as client:
            urls = [f"nntp://127.0.0.1:{server.port}/{GROUP}/{n}" for n in range(1, 5)]
            results = await asyncio.gather(*(client.fetch(u) for u in urls))
    assert [r.meta["number"] for r in results] == [1, 2, 3, 4]
    assert server.ahead == [3]  # CAPABILITIES, GROUP, ARTICLE 1: nothing more before the reply


async def test_a_stalled_reader_does_not_hold_the_window_for_ever() -> None:
    """Article 1 (2 MiB, more than is read ahead) is opened and not read; article 2, queued
    behind it, is asked again on a connection of its own after Timeouts.read."""
    async with PipelineFaultServer("big") as server:
        url = f"nntp://127.0.0.1:{server.port}/{GROUP}/"
        async with anyurl.Client(timeouts=anyurl.Timeouts(read=1.0)) as client:
            async with client.open(url + "1") as body:
                async with asyncio.timeout(30):
                    second = await client.fetch(url + "2")
            assert second.meta["body"] == b"real body of article 2\r\n"
    assert len(server.sessions) == 2
    assert server.sessions[0].count("ARTICLE 2") == 1 and server.sessions[1].count("ARTICLE 2") == 1
    del body


async def test_a_cancelled_request_in_a_window_leaves_the_others_their_articles() -> None:
    async with PipelineFaultServer("none") as server:
        url = f"nntp://127.0.0.1:{server.port}/{GROUP}/"
        async with anyurl.Client(timeouts=anyurl.Timeouts(read=20)) as client:
            tasks = [asyncio.create_task(client.fetch(url + str(n))) for n in range(1, 7)]
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            tasks[2].cancel()  # while it waits its turn in a window still connecting
            # (the window's first request once waited for a reply to a command never sent)
            async with asyncio.timeout(8):
                done = await asyncio.gather(*tasks, return_exceptions=True)
    assert isinstance(done[2], asyncio.CancelledError)
    for n, r in enumerate(done, 1):
        if n != 3:
            assert not isinstance(r, BaseException), r
            assert r.meta["body"] == f"real body of article {n}\r\n".encode()


async def test_a_request_for_another_group_is_not_kept_waiting_behind_a_stream() -> None:
    """One connection (per_host=1), a window of 2 busy with one group: a request for another
    group gets the connection once the window's queued requests are done, not after all."""
    async with PipelineFaultServer("none") as server:
        base = f"nntp://127.0.0.1:{server.port}/"
        async with anyurl.Client(news=NewsOptions(pipeline=2), limits=Limits(per_host=1)) as client:
            tasks = [asyncio.create_task(client.fetch(f"{base}{GROUP}/{n}")) for n in range(1, 21)]
            await asyncio.sleep(0)
            other = asyncio.create_task(client.fetch(f"{base}other.test/5"))
            async with asyncio.timeout(30):
                await asyncio.gather(*tasks, other)
    commands = [c for c in server.sessions[0] if c.startswith(("GROUP", "ARTICLE"))]
    assert commands.index("GROUP other.test") < commands.index("ARTICLE 10")


async def test_a_wait_for_room_with_no_request_ending_ends_at_timeouts_pool() -> None:
    """Each request that ends on the server's connections starts Timeouts.pool again for those
    waiting for room (tests/integration/test_cli_news_groups_batch.py); a connection on which
    nothing ends (article 1 opened and never read) still ends the wait at Timeouts.pool."""
    async with PipelineFaultServer("big") as server:
        base = f"nntp://127.0.0.1:{server.port}/"
        async with anyurl.Client(timeouts=anyurl.Timeouts(read=30, pool=1.0), limits=Limits(per_host=1)) as client:
            async with client.open(f"{base}{GROUP}/1"):
                loop = asyncio.get_running_loop()
                t0 = loop.time()
                with pytest.raises(anyurl.PoolTimeout, match="waited 1 s for room") as info:
                    async with asyncio.timeout(30):
                        await client.fetch(f"{base}other.test/5")
                assert 0.9 < loop.time() - t0 < 10
    assert info.value.url == f"{base}other.test/5"


async def test_cli_get_fills_the_window_beyond_its_parallel_turns(tmp_path: object) -> None:
    """`get --parallel 2` of a group's articles: once the first window is open, more
    transfers than the 2 turns join it (as HTTP/2 streams do), so the server sees the
    batch pipelined before its first article, not 2 at a time."""
    import os
    import sys
    from pathlib import Path

    out = Path(str(tmp_path))
    async with PipelineFaultServer("none") as server:
        urls = [f"nntp://127.0.0.1:{server.port}/{GROUP}/{n}" for n in range(1, COUNT + 1)]
        rc, _, err = await arun([sys.executable, "-m", "anyurl", "get", "-q", "--parallel", "2", "-d", str(out), *urls],
                                within=60, env=os.environ.copy(), stdout=None)
    assert rc == 0, err
    assert len(os.listdir(out)) == COUNT
    # CAPABILITIES, GROUP and more ARTICLEs than the 2 turns before the first reply (4 before)
    assert server.ahead[0] > 4, server.ahead

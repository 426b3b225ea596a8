"""Issue 24.4: a pipelined NNTP window that breaks (an unexpected reply in the middle of
the window, the connection closed with commands outstanding, an unrequested reply) drops
the connection and asks again for what was outstanding: every caller gets its own article."""

from __future__ import annotations

import asyncio

import pytest
from tests.hostile.nntp_pipeline import COUNT, GROUP, PipelineFaultServer

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

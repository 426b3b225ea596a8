"""Issue 11.4: a server that appends an unrequested 220 after article 1 must not
make the next fetch through the same Client return the forged article."""

from __future__ import annotations

import asyncio

import pytest
from tests.hostile.fakes.nntp_desync import FORGED, DesyncServer

import anyurl


@pytest.mark.parametrize("delay", [None, 0.05], ids=["same-write", "while-idle"])
async def test_unrequested_reply_is_not_read_as_the_next_article(delay: float | None) -> None:
    async with DesyncServer(delay=delay) as server:
        async with anyurl.Client() as client:
            first = await client.fetch(f"nntp://127.0.0.1:{server.port}/desync.test/1")
            assert b"real body of article 1" in first.content
            if delay is not None:
                await asyncio.sleep(delay + 0.2)  # the forged reply arrives while the connection is idle
            second = await client.fetch(f"nntp://127.0.0.1:{server.port}/desync.test/2")
        assert FORGED not in second.content
        assert b"real body of article 2" in second.content
        # The tainted connection was dropped: article 2 was asked for on a new one.
        assert server.connections == 2
        assert server.commands.count("ARTICLE 2") == 1

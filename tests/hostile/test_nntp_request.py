"""The news driver reads the timeouts of the call it serves from the Request it was
handed (issue 23 step 3: no ContextVar side channel). Before, ``stat`` fell back on
the Client's own timeouts, so a per-call ``read`` timeout was ignored."""

from __future__ import annotations

import time

import pytest
from tests.hostile.fakes.nntp_silent import SilentNewsServer

import anyurl
from anyurl import FetchTimeout, Retry, Timeouts

# the Client's read timeout is long; the call's is short: the call's must apply
CLIENT = Timeouts(read=60)
CALL = Timeouts(read=0.5, total=20)


@pytest.mark.parametrize("path", ["silent.test/1", "silent.test"], ids=["article", "group"])
async def test_stat_uses_the_calls_read_timeout(path: str) -> None:
    async with SilentNewsServer() as server:
        async with anyurl.Client(timeouts=CLIENT, retry=Retry(attempts=1)) as client:
            started = time.monotonic()
            with pytest.raises(FetchTimeout) as caught:
                await client.stat(f"nntp://127.0.0.1:{server.port}/{path}", timeouts=CALL)
            took = time.monotonic() - started
        assert "waiting for the news server" in str(caught.value)  # the read timeout, not `total`
        assert took < 15
        assert any(c.startswith(("STAT", "GROUP")) for c in server.commands)


async def test_fetch_uses_the_calls_read_timeout() -> None:
    async with SilentNewsServer() as server:
        async with anyurl.Client(timeouts=CLIENT, retry=Retry(attempts=1)) as client:
            started = time.monotonic()
            with pytest.raises(FetchTimeout) as caught:
                await client.fetch(f"nntp://127.0.0.1:{server.port}/silent.test/1", timeouts=CALL)
            took = time.monotonic() - started
        assert "waiting for the news server" in str(caught.value)
        assert took < 15

"""prospero: a server that says "wait" forever, and one whose reply is enormous
(issue 11, items 5 and 6), run through the CLI as a user would."""

from __future__ import annotations

import time

import pytest
from tests.hostile.fakes.child import run_child
from tests.hostile.fakes.servers import ProsperoHugeReply, ProsperoWaitForever

from anyurl import Client, Limits, Timeouts
from anyurl.errors import FetchTimeout, ProtocolError

MAX_RSS_MB = 200


def test_wait_notices_do_not_outlast_the_read_timeout() -> None:
    # each notice asked for 30 more seconds; --timeout 3 kept the CLI alive past 125 s
    with ProsperoWaitForever(wait=30, every=0.5, max_seconds=40) as server:
        result = run_child(["-m", "anyurl", "get", "--timeout", "3",
                            f"prospero://127.0.0.1:{server.port}/pub/slow"], deadline=20)
        notices = server.notices
    assert not result.killed, result.describe()
    assert result.returncode == FetchTimeout.exit_code, result.describe()
    assert "Timeouts.read" in result.stderr and "prospero://127.0.0.1" in result.stderr, result.describe()
    assert 2.5 <= result.elapsed <= 3 + 4, result.describe()
    assert notices >= 4, f"only {notices} wait notices were sent"
    assert result.peak_rss_mb < MAX_RSS_MB, result.describe()


async def test_wait_notices_bounded_through_the_api() -> None:
    with ProsperoWaitForever(wait=60, every=0.2, max_seconds=30) as server:
        async with Client(timeouts=Timeouts(read=1.5)) as client:
            t0 = time.monotonic()
            try:
                await client.fetch(f"prospero://127.0.0.1:{server.port}/x")
            except FetchTimeout as exc:
                assert "1.5 s without progress (Timeouts.read)" in str(exc)
            else:
                raise AssertionError("no FetchTimeout")
            assert 1.4 <= time.monotonic() - t0 < 3.5


def test_hundred_thousand_attribute_lines_fail_fast_under_max_time() -> None:
    # 100,000 ATTRIBUTE lines on one link: 52 s of parsing on the event loop, and exit 0
    # after 95 s under --max-time 10. Now: more than Limits.max_reply_lines attributes.
    with ProsperoHugeReply(attributes=100_000, max_seconds=60) as server:
        result = run_child(["-m", "anyurl", "ls", "--max-time", "10",
                            f"prospero://127.0.0.1:{server.port}/pub"], deadline=30)
    assert not result.killed, result.describe()
    assert result.returncode == ProtocolError.exit_code, result.describe()
    assert "more than 10000 attributes" in result.stderr, result.describe()
    assert result.elapsed <= 10, result.describe()
    assert result.peak_rss_mb < MAX_RSS_MB, result.describe()


async def test_hundred_thousand_attributes_parse_in_linear_time_when_allowed() -> None:
    # with the limit raised, the same reply is received and parsed in seconds, not minutes
    with ProsperoHugeReply(attributes=100_000, max_seconds=60) as server:
        async with Client(limits=Limits(max_reply_lines=200_000)) as client:
            t0 = time.monotonic()
            res = await client.fetch(f"prospero://127.0.0.1:{server.port}/pub")
            elapsed = time.monotonic() - t0
    assert res.entries is not None and [e.name for e in res.entries] == ["big"]
    assert elapsed < 15, elapsed


def test_a_port_without_a_server_is_a_connect_error_that_says_so() -> None:
    # was "prospero://127.0.0.1:P/x: 127.0.0.1:P: Connection refused" (no word of what failed)
    import asyncio
    import socket

    import anyurl

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: the kernel answers port unreachable
    url = f"prospero://127.0.0.1:{port}/x"
    with pytest.raises(anyurl.ConnectError) as info:
        asyncio.run(anyurl.fetch(url, timeouts=anyurl.Timeouts(total=10)))
    assert str(info.value) == f"{url}: no Prospero server at 127.0.0.1:{port}: Connection refused"

"""telnet: a server that negotiates without end (issue 11, item 1).

The flood drove the process to 4.9 GB before the read timeout: every
(command, option) went into ``received``/``sent`` for good, and ``read_some``
re-armed its timeout on every chunk of negotiation, so it never fired.
"""

from __future__ import annotations

import pytest
from tests.hostile.fakes.child import run_child
from tests.hostile.fakes.servers import TelnetDeaf, TelnetNegotiationFlood

from anyurl.errors import FetchTimeout

READ_TIMEOUT = 5.0
MAX_RSS_MB = 64  # a healthy run peaks near 40 MB; the unbounded logs passed 80 MB in 5 s (2 loaded cores)

SCRIPT = f"""
import asyncio, sys
from anyurl import Client, FetchTimeout, Timeouts

async def main(url, how):
    async with Client(timeouts=Timeouts(read={READ_TIMEOUT})) as client:
        session = await client.connect(url)
        try:
            if how == "expect":
                await session.expect([rb"never sent"])
            else:
                await session.read_some()
        except FetchTimeout as exc:
            p = session.protocol
            print("FetchTimeout", len(p.received), len(p.sent), len(p.subnegotiations), exc)
            sys.exit(exc.exit_code)
        finally:
            await session.close()
    print("no error")

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


@pytest.mark.parametrize("how", ["expect", "read_some"])
def test_negotiation_flood_is_bounded_in_memory_and_time(how: str) -> None:
    with TelnetNegotiationFlood(max_seconds=30) as server:
        result = run_child(["-c", SCRIPT, f"telnet://127.0.0.1:{server.port}/", how], deadline=20)
        flooded = server.bytes_sent
    assert not result.killed, result.describe()
    assert result.returncode == FetchTimeout.exit_code, result.describe()
    assert result.stdout.startswith("FetchTimeout"), result.describe()
    assert READ_TIMEOUT - 0.5 <= result.elapsed <= READ_TIMEOUT + 4, result.describe()
    assert result.peak_rss_mb < MAX_RSS_MB, result.describe()
    # the logs hold the latest entries only (Limits.max_reply_lines), though far more arrived
    _word, received, sent, subneg, *_ = result.stdout.split()
    assert int(received) == 10_000 and int(sent) == 10_000 and 0 < int(subneg) <= 10_000
    assert flooded > 1_000_000, f"the flood was too small to prove anything: {flooded} bytes"


DEAF_SCRIPT = f"""
import asyncio, sys, time
from anyurl import Client, FetchTimeout, Timeouts

async def main(url):
    async with Client(timeouts=Timeouts(read={READ_TIMEOUT})) as client:
        session = await client.connect(url)
        await session.read_until("login: ")
        t0 = time.monotonic()
        try:
            for _ in range(1000):  # 64 MB in all, far past every socket buffer
                await session.write(b"x" * 65536)
        except FetchTimeout as exc:
            print("FetchTimeout", exc)
            await session.close()  # must not wait for the server to read either
            sys.exit(exc.exit_code)
    print("no error")

asyncio.run(main(sys.argv[1]))
"""


def test_server_that_never_reads_cannot_hold_writes_forever() -> None:
    with TelnetDeaf(max_seconds=30) as server:
        result = run_child(["-c", DEAF_SCRIPT, f"telnet://127.0.0.1:{server.port}/"], deadline=20)
    assert not result.killed, result.describe()
    assert result.returncode == FetchTimeout.exit_code, result.describe()
    assert "read nothing" in result.stdout, result.describe()
    assert READ_TIMEOUT - 0.5 <= result.elapsed <= 2 * READ_TIMEOUT + 4, result.describe()
    assert result.peak_rss_mb < MAX_RSS_MB, result.describe()

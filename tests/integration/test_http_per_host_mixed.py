"""``Limits.per_host`` on both HTTP paths: the lean HTTP/1.1 connections (anyurl's pool) and
aiohttp's (``HTTPOptions(lean=False)``; proxied requests take the same path, see
test_proxy.py), each counting its own connections.

Real nginx behind the counting relay of test_per_host.py, which sees every connection the
client opens. Each path alone never holds more than ``per_host`` to the host and makes a
request wait (then PoolTimeout) when all are busy; the two paths do not share one count (a
Client mixing them may hold ``per_host`` of each: docs/http.md says so); the aiohttp path
keeps its connections alive and hands a released one to a waiting request.
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from pathlib import Path

import pytest
from fixtures.launcher import Endpoint, Launcher
from tests.integration.test_per_host import relay

from anyurl import Client, Limits, PoolTimeout, Timeouts
from anyurl.handlers.http import HTTPOptions

AIO = HTTPOptions(lean=False)
LEAN = HTTPOptions()
BIG = os.urandom(1 << 20) * 8  # 8 MiB: more than the socket buffers hold for an unread body


@pytest.fixture(scope="module")
def nginx(servers: Launcher) -> Endpoint:
    return servers.get("nginx")


@pytest.fixture(scope="module")
def files(nginx: Endpoint) -> tuple[str, str]:
    """(path of the 8 MiB file, path of a small one) in nginx's web root."""
    d = Path(nginx.info["www"]) / f"mixed-{uuid.uuid4().hex[:8]}"
    d.mkdir()
    d.chmod(0o755)
    (d / "big.bin").write_bytes(BIG)
    (d / "small.txt").write_bytes(b"small\n")
    for f in d.iterdir():
        f.chmod(0o644)
    return f"/{d.name}/big.bin", f"/{d.name}/small.txt"


async def read_all(stream: object) -> bytes:
    return b"".join([c async for c in stream])  # type: ignore[attr-defined]


@pytest.mark.parametrize("options", [LEAN, AIO], ids=["lean", "aiohttp"])
async def test_each_path_holds_at_most_per_host_then_pool_timeout(nginx: Endpoint, files: tuple[str, str],
                                                                  options: HTTPOptions) -> None:
    big, _ = files
    async with relay(nginx) as r, Client(limits=Limits(per_host=2), timeouts=Timeouts(pool=0.5)) as c:
        url = f"http://127.0.0.1:{r.port}{big}"
        async with c.open(url, options=options) as a, c.open(url, options=options) as b:
            # both connections are busy (bodies unread): a third request waits Timeouts.pool
            start = time.monotonic()
            with pytest.raises(PoolTimeout, match=rf"waited 0.5 s for a free connection to 127.0.0.1:{r.port} "
                                                  r"\(Limits.per_host=2, all busy\)"):
                await c.fetch(url, options=options)
            assert time.monotonic() - start < 5
            assert await read_all(a) == BIG and await read_all(b) == BIG
        again = await asyncio.gather(*(c.fetch(url, options=options) for _ in range(3)))
        assert [x.content == BIG for x in again] == [True] * 3
    assert r.most == 2, f"{r.most} connections open at once with per_host=2"


async def test_many_aiohttp_requests_stay_within_per_host(nginx: Endpoint, files: tuple[str, str]) -> None:
    big, small = files
    async with relay(nginx) as r, Client(limits=Limits(per_host=2)) as c:
        urls = [f"http://127.0.0.1:{r.port}{p}" for p in (big, small)]
        results = await asyncio.gather(*(c.fetch(urls[i % 2], options=AIO) for i in range(12)))
    assert all(x.content == (BIG if i % 2 == 0 else b"small\n") for i, x in enumerate(results))
    assert 1 <= r.most <= 2, f"{r.most} connections open at once with per_host=2"


async def test_the_two_paths_count_apart(nginx: Endpoint, files: tuple[str, str]) -> None:
    # what is true now (docs/http.md, "Two engines"): aiohttp keeps its own count, so a
    # request of one path does not wait for a connection of the other
    big, small = files
    async with relay(nginx) as r, Client(limits=Limits(per_host=1), timeouts=Timeouts(pool=0.5)) as c:
        url = f"http://127.0.0.1:{r.port}"
        async with c.open(url + big, options=LEAN) as a:
            assert (await c.fetch(url + small, options=AIO)).content == b"small\n"
            assert await read_all(a) == BIG
    assert r.most == 2


async def test_the_aiohttp_path_keeps_its_connections_alive(nginx: Endpoint, files: tuple[str, str]) -> None:
    _, small = files
    async with relay(nginx) as r, Client(limits=Limits(per_host=1)) as c:
        url = f"http://127.0.0.1:{r.port}{small}"
        for _ in range(3):
            assert (await c.fetch(url, options=AIO)).content == b"small\n"
    assert r.opened == 1


async def test_a_waiting_request_gets_the_connection_when_an_aiohttp_body_ends(
        nginx: Endpoint, files: tuple[str, str]) -> None:
    big, small = files
    async with relay(nginx) as r, Client(limits=Limits(per_host=1), timeouts=Timeouts(pool=10)) as c:
        url = f"http://127.0.0.1:{r.port}"
        async with c.open(url + big, options=AIO) as body:
            waiting = asyncio.create_task(c.fetch(url + small, options=AIO))
            await asyncio.sleep(0.2)
            assert not waiting.done()  # the one connection is the body's
            assert await read_all(body) == BIG
        # the body was read: its connection goes to the waiting request now, not after Timeouts.pool
        start = time.monotonic()
        async with asyncio.timeout(5):
            got = await waiting
        assert got.content == b"small\n" and time.monotonic() - start < 2
    assert r.most == 1 and r.opened == 1

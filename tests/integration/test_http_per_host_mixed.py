"""One ``Limits.per_host`` count for both HTTP paths: the lean HTTP/1.1 connections and
aiohttp's (``HTTPOptions(lean=False)``; proxies and non-ASCII hosts take the same path).

Real nginx behind the counting relay of test_per_host.py, which sees every connection the
client opens. A Client mixing both paths must never hold more than ``per_host`` to the
host; an idle connection of one path gives its slot up to a request of the other; the
aiohttp path still keeps its connections alive.
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


@pytest.mark.parametrize("third", [LEAN, AIO], ids=["third-lean", "third-aiohttp"])
async def test_open_streams_of_both_paths_share_per_host(nginx: Endpoint, files: tuple[str, str],
                                                         third: HTTPOptions) -> None:
    big, _ = files
    async with relay(nginx) as r, Client(limits=Limits(per_host=2), timeouts=Timeouts(pool=0.5)) as c:
        url = f"http://127.0.0.1:{r.port}{big}"
        async with c.open(url, options=LEAN) as a, c.open(url, options=AIO) as b:
            # both connections are busy (bodies unread): a third request of either path waits
            with pytest.raises(PoolTimeout, match=rf"127.0.0.1:{r.port} \(Limits.per_host=2, all busy\)"):
                await c.fetch(url, options=third)
            assert await read_all(a) == BIG and await read_all(b) == BIG
        again = await asyncio.gather(c.fetch(url, options=LEAN), c.fetch(url, options=AIO))
        assert [x.content == BIG for x in again] == [True, True]
    assert r.most == 2, f"{r.most} connections open at once with per_host=2"


async def test_many_mixed_requests_stay_within_per_host(nginx: Endpoint, files: tuple[str, str]) -> None:
    big, small = files
    async with relay(nginx) as r, Client(limits=Limits(per_host=2)) as c:
        urls = [f"http://127.0.0.1:{r.port}{p}" for p in (big, small)]
        jobs = [c.fetch(urls[i % 2], options=AIO if i % 3 else LEAN) for i in range(18)]
        results = await asyncio.gather(*jobs)
    assert all(x.content == (BIG if i % 2 == 0 else b"small\n") for i, x in enumerate(results))
    assert 1 <= r.most <= 2, f"{r.most} connections open at once with per_host=2"


@pytest.mark.parametrize("first, then", [(AIO, LEAN), (LEAN, AIO)], ids=["aiohttp-then-lean", "lean-then-aiohttp"])
async def test_an_idle_connection_of_one_path_makes_room_for_the_other(
        nginx: Endpoint, files: tuple[str, str], first: HTTPOptions, then: HTTPOptions) -> None:
    _, small = files
    async with relay(nginx) as r, Client(limits=Limits(per_host=1), timeouts=Timeouts(pool=5)) as c:
        url = f"http://127.0.0.1:{r.port}{small}"
        assert (await c.fetch(url, options=first)).content == b"small\n"  # its connection stays idle
        start = time.monotonic()
        assert (await c.fetch(url, options=then)).content == b"small\n"
        assert time.monotonic() - start < 2  # the idle one was closed for it, not waited out
        assert (await c.fetch(url, options=then)).content == b"small\n"
    assert r.most == 1, f"{r.most} connections open at once with per_host=1"
    assert r.opened == 2  # the second request of the second path reused its connection


async def test_the_aiohttp_path_keeps_its_connections_alive(nginx: Endpoint, files: tuple[str, str]) -> None:
    _, small = files
    async with relay(nginx) as r, Client(limits=Limits(per_host=1)) as c:
        url = f"http://127.0.0.1:{r.port}{small}"
        for _ in range(3):
            assert (await c.fetch(url, options=AIO)).content == b"small\n"
    assert r.opened == 1


async def test_a_waiting_request_gets_the_slot_when_an_aiohttp_body_ends(
        nginx: Endpoint, files: tuple[str, str]) -> None:
    big, small = files
    async with relay(nginx) as r, Client(limits=Limits(per_host=1), timeouts=Timeouts(pool=10)) as c:
        url = f"http://127.0.0.1:{r.port}"
        async with c.open(url + big, options=AIO) as body:
            waiting = asyncio.create_task(c.fetch(url + small, options=LEAN))
            await asyncio.sleep(0.2)
            assert not waiting.done()  # the one slot is the aiohttp body's
            assert await read_all(body) == BIG
        # aiohttp keeps the connection idle once the body is read: the waiting request
        # must get its slot now, not after Timeouts.pool
        start = time.monotonic()
        async with asyncio.timeout(5):
            got = await waiting
        assert got.content == b"small\n" and time.monotonic() - start < 2
    assert r.most == 1

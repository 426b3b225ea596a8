"""The lean HTTP/1.1 path against nginx: it is the one used, it keeps connections alive,
it leaves aiohttp unloaded, and 128 concurrent 16 MiB streams stay in bounded memory.

(The behaviour it shares with the aiohttp path is tested in test_http.py, which
runs on the lean path now; hostile servers in tests/hostile/test_hostile_http_lean.py.)
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from fixtures.launcher import Endpoint, Launcher
from tests.hostile.fakes.child import run_child
from tests.integration.test_http import AccessLog, www

import anyurl
from anyurl import Client, Limits
from anyurl.handlers.http import HTTPOptions

MIB = 1 << 20


@pytest.fixture(scope="module")
def nginx(servers: Launcher) -> Endpoint:
    return servers.get("nginx")


@pytest.fixture
def log(nginx: Endpoint) -> AccessLog:
    return AccessLog(nginx.info["access_log"])


def _child(code: str) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": f"{Path(anyurl.__file__).parent.parent}{os.pathsep}{Path.cwd()}"}
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=60, env=env)
    assert proc.returncode == 0, proc.stderr
    result: dict[str, object] = json.loads(proc.stdout.splitlines()[-1])
    return result


def test_cli_get_of_an_http_url_never_imports_aiohttp(nginx: Endpoint, tmp_path: Path) -> None:
    url = f"http://{nginx.host}:{nginx.port}/hello.txt"
    out = tmp_path / "hello.txt"
    result = _child(f"""
        import json, sys, anyurl.cli.commands
        rc = anyurl.cli.commands.main(['get', '-q', '-o', {str(out)!r}, {url!r}])
        print(json.dumps({{'rc': rc, 'aiohttp': 'aiohttp' in sys.modules, 'yarl': 'yarl' in sys.modules}}))
    """)
    assert result == {"rc": 0, "aiohttp": False, "yarl": False}
    assert out.read_bytes() == www(nginx, "hello.txt")


def test_library_redirect_stat_and_range_never_import_aiohttp(nginx: Endpoint) -> None:
    base = f"http://{nginx.host}:{nginx.port}"
    result = _child(f"""
        import asyncio, json, sys
        from anyurl import Client
        async def main():
            async with Client() as c:
                r = await c.fetch({base + '/redirect'!r})
                st = await c.stat({base + '/dir/blob.bin'!r})
                part = await c.fetch({base + '/dir/blob.bin'!r}, offset=100, length=10)
                big = await c.fetch({base + '/big.txt'!r})
                return [r.content.decode(), st.size, part.content.hex(), big.meta.get('decoded')]
        got = asyncio.run(main())
        print(json.dumps({{'got': got, 'aiohttp': 'aiohttp' in sys.modules}}))
    """)
    assert result == {"got": ["hello over http\n", 5120, bytes(range(100, 110)).hex(), "gzip"],
                      "aiohttp": False}


async def test_sequential_requests_share_one_connection(nginx: Endpoint, log: AccessLog,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="anyurl.http")
    names = [f"/many/f{i:04d}.txt" for i in range(20)]
    async with Client() as c:
        for n in names:
            r = await c.fetch(f"http://{nginx.host}:{nginx.port}{n}")
            assert r.content == www(nginx, n.lstrip("/"))
    lines = await log.lines(20)
    assert [x["request"] for x in lines] == [f"GET {n} HTTP/1.1" for n in names]
    assert len({x["conn"] for x in lines}) == 1  # nginx's $connection: one socket for all 20
    messages = [r.getMessage() for r in caplog.records if r.name == "anyurl.http"]
    assert sum("opened connection" in m for m in messages) == 1
    assert sum("reusing idle connection" in m for m in messages) == 19



async def test_a_body_dropped_unread_closes_its_connection_a_whole_one_keeps_it(
        nginx: Endpoint, log: AccessLog) -> None:
    base = f"http://{nginx.host}:{nginx.port}"
    async with Client(http=HTTPOptions(headers={"Accept-Encoding": "identity"})) as c:
        async with c.open(f"{base}/big.txt") as body:  # 800 kB: more than one piece
            first = await anext(aiter(body))
            assert first and not body.complete  # dropped here, unread
        async with c.open(f"{base}/many/f0001.txt") as body:
            assert await body.read() == www(nginx, "many/f0001.txt") and body.complete
        async with c.open(f"{base}/many/f0002.txt") as body:
            assert await body.read() == www(nginx, "many/f0002.txt")
    conn = {x["request"].split()[1]: x["conn"] for x in await log.lines(3)}  # (logged in any order)
    # never reused after unread data; reused after a whole body
    assert conn["/big.txt"] != conn["/many/f0001.txt"] == conn["/many/f0002.txt"]

async def test_a_small_body_comes_as_one_piece_and_frees_its_connection_with_it(
        nginx: Endpoint, log: AccessLog) -> None:
    # one connection per host: the second request gets it only if the first body gave it back
    # with its one piece (before the iteration ended); gzip (nginx compresses .txt) and identity
    base = f"http://{nginx.host}:{nginx.port}"
    for i, headers in enumerate(({}, {"Accept-Encoding": "identity"})):
        async with Client(limits=Limits(per_host=1), timeouts=anyurl.Timeouts(pool=5),
                          http=HTTPOptions(headers=headers)) as c:
            async with c.open(f"{base}/many/f0003.txt") as body:
                it = aiter(body)
                first = await anext(it)
                assert first == www(nginx, "many/f0003.txt") and body.complete
                other = await asyncio.wait_for(c.fetch(f"{base}/many/f0004.txt"), 5)
                assert other.content == www(nginx, "many/f0004.txt")
                with pytest.raises(StopAsyncIteration):
                    await anext(it)
        lines = (await log.lines(2 * i + 2))[2 * i:]
        assert [x["request"].split()[1] for x in lines] == ["/many/f0003.txt", "/many/f0004.txt"]
        assert len({x["conn"] for x in lines}) == 1


async def test_aiohttp_path_on_request_serves_the_same_bytes(nginx: Endpoint, log: AccessLog) -> None:
    url = f"http://{nginx.host}:{nginx.port}/big.txt"
    async with Client() as lean, Client(http=HTTPOptions(lean=False)) as aio:
        a = await lean.fetch(url)
        b = await aio.fetch(url)
        sa, sb = await lean.stat(url), await aio.stat(url)
    assert a.content == b.content == www(nginx, "big.txt")
    assert a.meta["decoded"] == b.meta["decoded"] == "gzip"
    assert {k: v for k, v in a.meta.items() if k != "headers"} == {k: v for k, v in b.meta.items() if k != "headers"}
    assert a.meta["headers"]["etag"] == b.meta["headers"]["ETag"]  # lookups ignore case on both
    assert (sa.size, sa.modified, sa.content_type) == (sb.size, sb.modified, sb.content_type)
    lines = await log.lines(4)
    assert [(x["request"], x["agent"], x["encoding"]) for x in lines][0::2] == \
        [(x["request"], x["agent"], x["encoding"]) for x in lines][1::2]


async def test_many_concurrent_small_files_reuse_per_host_connections(nginx: Endpoint, log: AccessLog) -> None:
    names = [f"/many/f{i:04d}.txt" for i in range(200)]
    async with Client(limits=Limits(per_host=8)) as c:
        results = await asyncio.gather(*(c.fetch(f"http://{nginx.host}:{nginx.port}{n}") for n in names))
    assert all(r.content == www(nginx, n.lstrip("/")) for n, r in zip(names, results, strict=True))
    lines = await log.lines(200)
    assert len(lines) == 200 and len({x["conn"] for x in lines}) <= 8


STREAM_CODE = """
import asyncio, os, sys
from anyurl import Client, Limits

async def main(urls, size):
    fd = os.open(os.devnull, os.O_WRONLY)
    async with Client(limits=Limits(per_host=len(urls))) as client:
        async def one(url):
            got = 0
            async with client.open(url) as body:
                async for chunk in body:
                    got += os.write(fd, chunk)
            assert got == size, (url, got)
        await asyncio.gather(*(one(u) for u in urls))
    print("ok", "aiohttp" in sys.modules)

asyncio.run(main(sys.argv[2:], int(sys.argv[1])))
"""


def test_128_concurrent_16_mib_streams_stay_in_bounded_memory(nginx: Endpoint) -> None:
    path = Path(nginx.info["www"]) / "lean-16m.bin"
    block = os.urandom(MIB)
    with open(path, "wb") as f:
        for i in range(16):
            f.write(i.to_bytes(4, "big") + block[4:])
    path.chmod(0o644)
    try:
        urls = [f"http://{nginx.host}:{nginx.port}/lean-16m.bin?n={i}" for i in range(128)]
        result = run_child(["-c", STREAM_CODE, str(16 * MIB), *urls], deadline=120)
    finally:
        path.unlink()
    assert result.returncode == 0, result.describe()
    assert result.stdout.split() == ["ok", "False"]
    assert result.peak_rss_mb <= 64, result.describe()


async def test_head_requests_keep_the_connection_too(nginx: Endpoint, log: AccessLog) -> None:
    base = f"http://{nginx.host}:{nginx.port}"
    async with Client() as c:
        sizes = [(await c.stat(f"{base}/dir/blob.bin")).size for _ in range(3)]
        r = await c.fetch(f"{base}/hello.txt")
    assert sizes == [5120] * 3 and r.content == www(nginx, "hello.txt")
    lines = await log.lines(4)
    assert [x["request"].split(" ")[0] for x in lines] == ["HEAD", "HEAD", "HEAD", "GET"]
    assert len({x["conn"] for x in lines}) == 1


def test_uvloop_reads_grow_past_its_own_250_kb_buffer(nginx: Endpoint) -> None:
    # uvloop reads at most 256,000 bytes per data_received; the lean path reads into its own
    # buffer there (get_buffer), which grows for a fast stream: pieces larger than that prove it
    uvloop = pytest.importorskip("uvloop")
    from anyurl.handlers import http1
    from anyurl.handlers.http1 import H1BufferedConnection

    path = Path(nginx.info["www"]) / "lean-32m.bin"
    path.write_bytes(os.urandom(MIB) * 32)
    path.chmod(0o644)
    seen: list[int] = []
    kinds: set[str] = set()

    async def main() -> None:
        async with Client() as client, client.open(f"http://{nginx.host}:{nginx.port}/lean-32m.bin") as body:
            async for chunk in body:
                seen.append(len(chunk))
            h1 = client.handler(client.parse(f"http://{nginx.host}/")).__dict__["_h1"]
            for h in h1.pool._hosts.values():
                kinds.update(type(i.conn).__name__ for i in h.idle)

    try:
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            runner.run(main())
    finally:
        path.unlink()
    assert sum(seen) == 32 * MIB
    assert kinds == {H1BufferedConnection.__name__}
    assert max(seen) > 256_000, f"largest piece {max(seen)} bytes ({http1._streams} streams counted)"

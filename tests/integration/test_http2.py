"""HTTP/2 against nginx's https listener (``listen ... ssl http2``): it is used (nginx logs
"HTTP/2.0"), many requests share one connection, bytes arrive exactly, flow control
carries large bodies, and --http1.1 / HTTPOptions(http2=False) turn it off.

(The behaviour shared with HTTP/1.1 runs as test_http.py with ANYURL_HTTP_TESTS=h2;
faults nginx will not make are in tests/hostile/test_hostile_http2.py.)
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import ssl
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures.launcher import Endpoint, Launcher
from tests.integration.test_http import AccessLog, www

from anyurl import Client, Limits
from anyurl.handlers.http import HTTPOptions


@pytest.fixture(scope="module")
def nginx(servers: Launcher) -> Endpoint:
    return servers.get("nginx")


@pytest.fixture
def log(nginx: Endpoint) -> AccessLog:
    return AccessLog(nginx.info["access_log"])


@pytest.fixture
def tls(nginx: Endpoint) -> HTTPOptions:
    """anyurl makes the context (so it offers h2), trusting the fixture's certificate."""
    return HTTPOptions(cafile=nginx.info["ca"])


def base(nginx: Endpoint) -> str:
    return f"https://{nginx.host}:{nginx.info['tls_port']}"


async def test_http2_is_used_and_a_batch_shares_one_connection(nginx: Endpoint, log: AccessLog,
                                                                tls: HTTPOptions) -> None:
    names = [f"/many/f{i:04d}.txt" for i in range(200)]
    async with Client(http=tls) as c:
        rs = await asyncio.gather(*(c.fetch(base(nginx) + n) for n in names))
    for n, r in zip(names, rs, strict=True):
        assert r.content == www(nginx, n.lstrip("/")) and len(r.content) == 4096
    lines = await log.lines(200)
    assert sorted(x["request"] for x in lines) == sorted(f"GET {n} HTTP/2.0" for n in names)
    assert len({x["conn"] for x in lines}) == 1  # every request a stream of one connection


async def test_large_bodies_arrive_exactly_through_flow_control(nginx: Endpoint, log: AccessLog,
                                                                tls: HTTPOptions, tmp_path: Path) -> None:
    data = os.urandom(9 << 20)  # many times the stream window (1 MiB)
    (Path(nginx.info["www"]) / "h2big.bin").write_bytes(data)
    try:
        async with Client(http=tls, limits=Limits(chunk_size=256 << 10)) as c:
            results = await asyncio.gather(*(c.fetch(base(nginx) + "/h2big.bin") for _ in range(3)),
                                           c.fetch(base(nginx) + "/big.txt"))
            async with c.open(base(nginx) + "/h2big.bin", offset=5_000_000, length=1000) as body:
                part = await body.read()
    finally:
        (Path(nginx.info["www"]) / "h2big.bin").unlink()
    for r in results[:3]:
        assert hashlib.sha256(r.content).digest() == hashlib.sha256(data).digest()
    assert results[3].content == www(nginx, "big.txt") and results[3].meta["decoded"] == "gzip"
    assert part == data[5_000_000:5_001_000]
    lines = await log.lines(5)
    assert {x["request"].rsplit(" ", 1)[1] for x in lines} == {"HTTP/2.0"}


async def test_a_body_dropped_unread_leaves_the_connection_in_use(nginx: Endpoint, log: AccessLog,
                                                                 tls: HTTPOptions) -> None:
    async with Client(http=tls) as c:
        async with c.open(base(nginx) + "/big.txt") as body:
            async for _ in body:
                break  # the stream is reset (CANCEL), the connection stays
        r = await c.fetch(base(nginx) + "/hello.txt")
        assert r.content == www(nginx, "hello.txt")
    lines = await log.lines(2)
    assert len({x["conn"] for x in lines}) == 1


async def test_http2_off_speaks_http1(nginx: Endpoint, log: AccessLog, tls: HTTPOptions) -> None:
    async with Client(http=HTTPOptions(cafile=nginx.info["ca"], http2=False)) as c:
        r = await c.fetch(base(nginx) + "/hello.txt")
    assert r.content == www(nginx, "hello.txt")
    assert [x["request"] for x in await log.lines(1)] == ["GET /hello.txt HTTP/1.1"]


async def test_a_context_of_ones_own_offers_h2_when_its_alpn_says_so(nginx: Endpoint, log: AccessLog) -> None:
    plain = ssl.create_default_context(cafile=nginx.info["ca"])
    alpn = ssl.create_default_context(cafile=nginx.info["ca"])
    alpn.set_alpn_protocols(["h2", "http/1.1"])
    for ctx in (plain, alpn):
        async with Client(http=HTTPOptions(ssl_context=ctx)) as c:
            await c.fetch(base(nginx) + "/hello.txt")
    assert [x["request"] for x in await log.lines(2)] == ["GET /hello.txt HTTP/1.1", "GET /hello.txt HTTP/2.0"]


@pytest.mark.parametrize("flag, version", [([], "HTTP/2.0"), (["--http1.1"], "HTTP/1.1")])
def test_cli_get_parallel_over_http2_and_with_http1_1(nginx: Endpoint, tmp_path: Path, flag: list[str],
                                                      version: str) -> None:
    log = AccessLog(nginx.info["access_log"])
    names = [f"many/f{i:04d}.txt" for i in range(40)]
    env = {**os.environ, "SSL_CERT_FILE": nginx.info["ca"]}
    proc = subprocess.run([sys.executable, "-m", "anyurl", "get", "-q", *flag, "--parallel", "8",
                           "-d", str(tmp_path), *(f"{base(nginx)}/{n}" for n in names)],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    for n in names:
        assert (tmp_path / n.rsplit("/", 1)[1]).read_bytes() == www(nginx, n)
    lines = asyncio.run(log.lines(40))
    assert {x["request"].rsplit(" ", 1)[1] for x in lines} == {version}
    conns = {x["conn"] for x in lines}
    assert len(conns) == 1 if version == "HTTP/2.0" else 1 < len(conns) <= 8


async def test_per_host_counts_the_http2_connection_and_an_idle_one_makes_room(
        nginx: Endpoint, log: AccessLog, tls: HTTPOptions) -> None:
    from anyurl import Timeouts

    async with Client(http=tls, limits=Limits(per_host=1), timeouts=Timeouts(pool=10)) as c:
        assert (await c.fetch(base(nginx) + "/hello.txt")).content == www(nginx, "hello.txt")
        # the HTTP/2 connection (idle now) holds the one slot: an HTTP/1.1 request waits for
        # it, and the idle connection gives it up (closed) rather than keep it for max_idle
        r = await c.fetch(base(nginx) + "/dir/blob.bin", options=HTTPOptions(cafile=nginx.info["ca"], http2=False))
        assert r.content == www(nginx, "dir/blob.bin")
        assert (await c.fetch(base(nginx) + "/hello.txt")).content == www(nginx, "hello.txt")
    lines = await log.lines(3)
    assert [x["request"].rsplit(" ", 1)[1] for x in lines] == ["HTTP/2.0", "HTTP/1.1", "HTTP/2.0"]
    assert len({x["conn"] for x in lines}) == 3

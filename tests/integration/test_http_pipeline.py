"""HTTP/1.1 pipelining on the lean path against the suite's real servers (docs/http.md).

Proof that requests went several to a connection before the first answer came: through a
latency relay (bench/relay.py, 100 ms round trip), 24 GETs on one connection take about a
round trip each unpipelined (>= 2.4 s) and a few round trips pipelined; nginx's access log
shows they all went on that one connection. The bytes are checked file by file, for bodies
framed by Content-Length (.bin) and by chunked gzip (nginx compresses .txt).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from fixtures.launcher import Endpoint, Launcher
from tests.integration.test_http import AccessLog
from tests.procs import spawn

from anyurl import Client, Limits
from anyurl.handlers import http1
from anyurl.handlers.http import HTTPOptions

ROOT = Path(__file__).resolve().parents[2]
RTT = 0.1
N = 24


@pytest.fixture(scope="module")
def nginx(servers: Launcher) -> Endpoint:
    return servers.get("nginx")


def _seed(ep: Endpoint) -> dict[str, bytes]:
    """Small files of distinct content: .bin (Content-Length) and .txt (gzip, so chunked)."""
    root = Path(ep.info["www"]) / "pipe"
    root.mkdir(exist_ok=True)
    out: dict[str, bytes] = {}
    for i in range(N):
        name = f"f{i}.bin" if i % 2 else f"f{i}.txt"
        data = (os.urandom(3000 + 97 * i) if i % 2
                else (f"line of file {i}\n" * (40 + 11 * i)).encode())
        (root / name).write_bytes(data)
        out[name] = data
    return out


@pytest.fixture(scope="module")
def files(nginx: Endpoint) -> Iterator[dict[str, bytes]]:
    yield _seed(nginx)
    _unseed(nginx)


def _unseed(ep: Endpoint) -> None:
    # the servers' trees are shared by the session: other modules mirror them whole
    shutil.rmtree(Path(ep.info["www"]) / "pipe", ignore_errors=True)


@contextmanager
def _relay(ep: Endpoint) -> Iterator[str]:
    """The origin to fetch from: *ep* RTT away, through bench/relay.py (its own process, always reaped)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with spawn([sys.executable, "-m", "bench.relay", "--rtt", str(RTT * 1000), f"127.0.0.1:{port}={ep.host}:{ep.port}"],
               stdout=subprocess.PIPE, text=True, cwd=ROOT) as proc:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        yield f"http://127.0.0.1:{port}"


@pytest.fixture
def relayed(nginx: Endpoint) -> Iterator[str]:
    """nginx RTT away: the origin to fetch from."""
    with _relay(nginx) as origin:
        yield origin


async def _batch(origin: str, files: dict[str, bytes], pipeline: int) -> tuple[float, dict[str, bytes]]:
    async with Client(limits=Limits(per_host=1), http=HTTPOptions(pipeline=pipeline)) as client:
        first = await client.fetch(f"{origin}/pipe/f0.txt")  # proves the connection (keep-alive)
        assert first.content == files["f0.txt"]
        t0 = time.monotonic()
        names = sorted(files)
        bodies = await asyncio.gather(*(client.fetch(f"{origin}/pipe/{n}") for n in names))
        took = time.monotonic() - t0
        return took, {n: b.content for n, b in zip(names, bodies, strict=True)}


async def test_nginx_answers_pipelined_gets_on_one_connection(nginx: Endpoint, files: dict[str, bytes],
                                                              relayed: str) -> None:
    log = AccessLog(nginx.info["access_log"])
    took, bodies = await _batch(relayed, files, 8)
    assert bodies == files
    lines = await log.lines(N + 1)
    assert len(lines) == N + 1
    assert len(Counter(line["conn"] for line in lines)) == 1  # one connection carried them all
    # one at a time, N requests cost N round trips; 8 deep, about N / 8 (and a few more while
    # the depth grows): well under half
    assert took < N * RTT / 2, took


def _bursts(lines: list[dict[str, str]]) -> dict[str, list[int]]:
    """Per nginx connection, how many requests each burst held: requests that nginx began
    within half a round trip of the one before (its start: the log's end time less its
    duration)."""
    starts: dict[str, list[float]] = {}
    for line in lines:
        starts.setdefault(line["conn"], []).append(float(line["end"]) - float(line["took"]))
    out: dict[str, list[int]] = {}
    for conn, ts in starts.items():
        ts.sort()
        bursts = out[conn] = [1]
        for before, t in zip(ts, ts[1:], strict=False):
            if t - before > RTT / 2:
                bursts.append(0)
            bursts[-1] += 1
    return out


async def test_the_batch_goes_at_once_behind_the_first_answer(nginx: Endpoint, files: dict[str, bytes],
                                                              relayed: str) -> None:
    # the default depth (32) takes the batch of 24 at once: no probation round trip (one
    # request behind one first) and no depth growing 2, 3, 4...: one round trip for all
    log = AccessLog(nginx.info["access_log"])
    async with Client(limits=Limits(per_host=1)) as client:
        first = await client.fetch(f"{relayed}/pipe/f0.txt")  # proves the connection (keep-alive)
        assert first.content == files["f0.txt"]
        names = sorted(files)
        bodies = await asyncio.gather(*(client.fetch(f"{relayed}/pipe/{n}") for n in names))
    assert [b.content for b in bodies] == [files[n] for n in names]
    lines = await log.lines(N + 1)
    assert len(lines) == N + 1
    assert list(_bursts(lines).values()) == [[1, N]]


def test_the_cli_fills_every_connection_s_pipeline_at_once(nginx: Endpoint, relayed: str, tmp_path: Path) -> None:
    # get --parallel 8 of 200 files: the 8 connections begun during start-up (their first
    # requests reach nginx together), then the other 192 in one burst on each (enough workers
    # for the pipelines' depth: 8 x 32, not 8 x 16)
    root = Path(nginx.info["www"]) / "pipecli"
    root.mkdir(exist_ok=True)
    try:
        for i in range(200):
            (root / f"g{i:03d}.bin").write_bytes(b"%d " % i * 300)
        log = AccessLog(nginx.info["access_log"])
        urls = [f"{relayed}/pipecli/g{i:03d}.bin" for i in range(200)]
        proc = subprocess.run([sys.executable, "-m", "anyurl", "get", "-q", "--parallel", "8", "-d",
                               str(tmp_path), *urls], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert sorted(p.name for p in tmp_path.iterdir()) == [f"g{i:03d}.bin" for i in range(200)]
        assert (tmp_path / "g107.bin").read_bytes() == b"107 " * 300
        lines = asyncio.run(log.lines(200))
        assert len(lines) == 200
        bursts = _bursts(lines)
        # (a connection proven a moment before the others may take 32 and leave one nothing more)
        assert len(bursts) == 8 and all(len(b) <= 2 and b[0] == 1 for b in bursts.values()), sorted(bursts.values())
        firsts = sorted(min(float(x["end"]) - float(x["took"]) for x in lines if x["conn"] == c) for c in bursts)
        assert firsts[-1] - firsts[0] < RTT / 2, firsts
    finally:
        shutil.rmtree(root, ignore_errors=True)


async def test_without_pipelining_each_request_waits_for_the_last(files: dict[str, bytes], relayed: str) -> None:
    # the same batch, the switch off: the test above is a test of pipelining
    took, bodies = await _batch(relayed, files, 0)
    assert bodies == files
    assert took >= N * RTT


async def test_no_pipelining_where_there_is_no_round_trip_to_hide(nginx: Endpoint, files: dict[str, bytes]) -> None:
    # nginx on loopback answers within a millisecond or two: one request at a time costs nothing
    # there, and the pipeline's bookkeeping would (docs/http.md, PIPE_MIN_RTT)
    origin = f"http://{nginx.host}:{nginx.port}"
    async with Client(limits=Limits(per_host=2), http=HTTPOptions(pipeline=8)) as client:
        for _ in range(10):  # the quickest of ten answers: a loaded machine's slowest moments pass
            await client.fetch(f"{origin}/pipe/f1.bin")
        names = sorted(files)
        bodies = await asyncio.gather(*(client.fetch(f"{origin}/pipe/{n}") for n in names))
        assert [b.content for b in bodies] == [files[n] for n in names]
        url = client.parse(f"{origin}/pipe/f0.txt")
        assert not client.handler(url).multiplexed(url)


async def test_no_pipelining_where_the_connections_keep_up(files: dict[str, bytes], relayed: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # a round trip is only worth hiding when it is longer than the connections at hand take to
    # keep the client busy (per_host x its CPU per request, http1.pipe_floor): priced so that
    # one connection keeps up with a 100 ms origin, the batch goes one request at a time
    monkeypatch.setattr(http1, "PIPE_REQUEST_COST", 4 * RTT)
    assert http1.pipe_floor(1) == 4 * RTT
    took, bodies = await _batch(relayed, files, 8)
    assert bodies == files
    assert took >= N * RTT


async def test_a_quicker_answer_in_a_burst_turns_pipelining_off(monkeypatch: pytest.MonkeyPatch) -> None:
    # a fake server (a fault no real one makes on demand): each connection's first answer comes
    # late, the rest at once. The late first answer judges pipelining on; the answer to the
    # first request of the next burst is quick, and that one counts too: pipelining goes off
    # (else a loaded machine's late first answers would pipeline on loopback for good)
    monkeypatch.setattr(http1, "PIPE_REQUEST_COST", 0.4)  # one connection: pipelining above 0.4 s
    seen: list[int] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        answered = 0
        buf = b""
        while True:
            data = await reader.read(65536)
            if not data:
                break
            buf += data
            while b"\r\n\r\n" in buf:
                _, buf = buf.split(b"\r\n\r\n", 1)
                if not answered:
                    await asyncio.sleep(1.0)
                answered += 1
                seen.append(answered)
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok")
                await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    origin = f"http://127.0.0.1:{port}"
    try:
        async with Client(limits=Limits(per_host=1), http=HTTPOptions(pipeline=8)) as client:
            url = client.parse(f"{origin}/a")
            assert (await client.fetch(f"{origin}/a")).content == b"ok"
            assert client.handler(url).multiplexed(url)  # 1 s: judged worth pipelining
            bodies = await asyncio.gather(*(client.fetch(f"{origin}/f{i}") for i in range(8)))
            assert [b.content for b in bodies] == [b"ok"] * 8
            assert not client.handler(url).multiplexed(url)
    finally:
        server.close()
        await server.wait_closed()
    assert len(seen) == 9


# the suite's other HTTP servers: Apache and lighttpd keep connections alive and answer pipelined
# requests; busybox httpd closes each connection after one answer (nothing to pipeline on)
@pytest.mark.parametrize(("server", "pipelines"), [("apache", True), ("lighttpd", True), ("busybox_httpd", False)])
async def test_other_servers(servers: Launcher, server: str, pipelines: bool) -> None:
    ep = servers.get(server)
    files = _seed(ep)
    try:
        with _relay(ep) as origin:
            took, bodies = await _batch(origin, files, 8)
    finally:
        _unseed(ep)
    assert bodies == files
    if pipelines:
        assert took < N * RTT / 2, took
    else:
        assert took >= N * RTT, took

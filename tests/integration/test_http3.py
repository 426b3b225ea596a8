"""HTTP/3 over QUIC against a real HTTP/3 server: hypercorn with its QUIC listener
(fixtures/servers/hypercorn_h3.py), whose access log says which HTTP version and which client
address:port (on QUIC, one per connection) served each request.

What a user checks: the bytes that arrive, that HTTP/3 was used (the server's log,
``Response.meta["http_version"]``, a capture's protocol), that one QUIC connection carries many
requests, that ``Alt-Svc: h3`` moves an origin's next request to HTTP/3, that a closed or silent
UDP port falls back to TCP within the deadline, and the error when neither way works.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import re
import socket
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest
from fixtures.launcher import Endpoint, Launcher

from anyurl import Client, ConnectError, FetchTimeout
from anyurl.settings import HTTPOptions, Timeouts

pytest.importorskip("qh3")

_LINE = re.compile(r'(\S+) "(\S+) (\S+) (\S+)" (\d+) (\S+)$')


@pytest.fixture(scope="module")
def h3(servers: Launcher) -> Endpoint:
    return servers.get("hypercorn_h3")


class Log:
    """hypercorn's access log: (client address:port, method, path, version, status) per line."""

    def __init__(self, path: str) -> None:
        self.path = Path(path)
        self.start = self.path.stat().st_size if self.path.exists() else 0

    async def lines(self, n: int, timeout: float = 60.0) -> list[tuple[str, str, str, str, int]]:  # noqa: ASYNC109
        """The first *n* lines written since this was made (waiting for them: the log is written
        after the response)."""
        deadline = time.monotonic() + timeout
        while True:
            text = self.path.read_bytes()[self.start:].decode()
            out = []
            for line in text.splitlines():
                m = _LINE.search(line)
                if m:
                    out.append((m.group(1), m.group(2), m.group(3), m.group(4), int(m.group(5))))
            if len(out) >= n or time.monotonic() > deadline:
                return out[:n] if len(out) >= n else out
            await asyncio.sleep(0.05)


def origin(h3: Endpoint) -> str:
    return f"https://{h3.host}:{h3.port}"


def www(h3: Endpoint, name: str) -> bytes:
    return (Path(h3.info["www"]) / name).read_bytes()


def options(h3: Endpoint, **kw: object) -> HTTPOptions:
    return HTTPOptions(cafile=h3.info["ca"], **kw)  # type: ignore[arg-type]


async def test_bytes_arrive_over_http3_and_many_requests_share_one_connection(h3: Endpoint) -> None:
    log = Log(h3.info["access_log"])
    names = [f"many/f{i:04d}.txt" for i in range(200)]
    async with Client(http=options(h3, http3=True)) as c:
        first = await c.fetch(origin(h3) + "/hello.txt")
        rs = await asyncio.gather(*(c.fetch(f"{origin(h3)}/{n}") for n in names))
    assert first.content == www(h3, "hello.txt") == b"hello over QUIC\n"
    assert first.meta["http_version"] == "HTTP/3"
    for n, r in zip(names, rs, strict=True):
        assert r.content == www(h3, n) and len(r.content) == 4096
    lines = await log.lines(201)
    assert len(lines) == 201
    assert {ln[3] for ln in lines} == {"3"}  # every request over HTTP/3 (the server's own word)
    assert sorted(ln[2] for ln in lines) == sorted(["/hello.txt"] + [f"/{n}" for n in names])
    assert len({ln[0] for ln in lines}) == 1  # one client address:port: one QUIC connection


async def test_a_large_file_streams_over_http3_byte_exact_in_bounded_memory(h3: Endpoint) -> None:
    want = hashlib.sha256(www(h3, "big.bin")).hexdigest()
    size = len(www(h3, "big.bin"))
    got = hashlib.sha256()
    n = 0
    tracemalloc.start()
    try:
        async with Client(http=options(h3, http3=True)) as c:
            async with c.open(origin(h3) + "/big.bin") as body:
                assert body.meta["http_version"] == "HTTP/3"
                first = True
                async for piece in body:
                    got.update(piece)
                    n += len(piece)
                    if first:  # a slow reader: the server could send the whole file meanwhile
                        first = False  # (unbounded, 14 MiB had arrived after 6 s here; 8 MiB bounded)
                        await asyncio.sleep(10)
                        held, _ = tracemalloc.get_traced_memory()
                        assert held < size // 2, f"{held} bytes held while the reader waited"
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert n == size and got.hexdigest() == want
    assert peak < size // 2, f"peak {peak} bytes for a {size}-byte body"


async def test_alt_svc_moves_the_next_request_to_http3(h3: Endpoint) -> None:
    log = Log(h3.info["access_log"])
    async with Client(http=options(h3)) as c:  # http3 not asked for: only Alt-Svc leads there
        r1 = await c.fetch(origin(h3) + "/many/f0001.txt")
        r2 = await c.fetch(origin(h3) + "/many/f0002.txt")
    assert r1.content == www(h3, "many/f0001.txt") and r2.content == www(h3, "many/f0002.txt")
    assert r1.meta["headers"]["alt-svc"].startswith(f'h3=":{h3.port}"')
    assert (r1.meta["http_version"], r2.meta["http_version"]) == ("HTTP/2", "HTTP/3")
    lines = await log.lines(2)
    assert [(ln[2], ln[3]) for ln in lines] == [("/many/f0001.txt", "2"), ("/many/f0002.txt", "3")]


async def test_http3_false_keeps_an_alt_svc_origin_on_tcp(h3: Endpoint) -> None:
    async with Client(http=options(h3, http3=False)) as c:
        rs = [await c.fetch(origin(h3) + "/hello.txt") for _ in range(2)]
    assert [r.meta["http_version"] for r in rs] == ["HTTP/2", "HTTP/2"]


async def test_a_capture_records_http3(h3: Endpoint) -> None:
    async with Client(http=options(h3, http3=True)) as c:
        r = await c.fetch(origin(h3) + "/hello.txt", capture=True)
    cap = r.capture
    assert cap is not None and cap.protocol == "HTTP/3"
    assert cap.status_line == "HTTP/3 200"
    assert (":path", "/hello.txt") in cap.request_headers
    assert ("content-length", "16") in cap.headers
    assert cap.peer == (h3.host, h3.port)


# -- fallback to TCP ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def nginx(servers: Launcher) -> Endpoint:
    return servers.get("nginx")


async def test_a_closed_udp_port_falls_back_to_tcp_at_once(nginx: Endpoint,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    """nginx listens on TCP only: the QUIC Initial meets ICMP port unreachable, and the request
    goes over TCP (HTTP/2) without waiting for the handshake's deadline."""
    url = f"https://{nginx.host}:{nginx.info['tls_port']}/hello.txt"
    started = time.monotonic()
    with caplog.at_level(logging.DEBUG, logger="anyurl.http"):
        async with Client(http=HTTPOptions(cafile=nginx.info["ca"], http3=True, http3_timeout=60)) as c:
            r = await c.fetch(url)
    took = time.monotonic() - started
    said = [rec.getMessage() for rec in caplog.records if "HTTP/3 unavailable" in rec.getMessage()]
    assert len(said) == 1 and "refused" in said[0], said  # QUIC was tried, and refused
    assert r.content == (Path(nginx.info["www"]) / "hello.txt").read_bytes()
    assert r.meta["http_version"] == "HTTP/2"
    assert took < 30, f"{took:.1f} s: it waited for the QUIC deadline instead of the refusal"


@pytest.fixture
def black_hole(nginx: Endpoint) -> socket.socket:
    """A UDP socket on nginx's https port that reads nothing and answers nothing."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((nginx.host, nginx.info["tls_port"]))
    yield s
    s.close()


async def test_a_silent_udp_port_falls_back_to_tcp_after_the_deadline(nginx: Endpoint,
                                                                      black_hole: socket.socket) -> None:
    url = f"https://{nginx.host}:{nginx.info['tls_port']}/hello.txt"
    started = time.monotonic()
    async with Client(http=HTTPOptions(cafile=nginx.info["ca"], http3=True, http3_timeout=2.0)) as c:
        r = await c.fetch(url)
        took = time.monotonic() - started
        again = time.monotonic()
        r2 = await c.fetch(url)  # the origin is remembered as having no working QUIC: no new wait
        took2 = time.monotonic() - again
    assert r.content == r2.content == (Path(nginx.info["www"]) / "hello.txt").read_bytes()
    assert r.meta["http_version"] == r2.meta["http_version"] == "HTTP/2"
    assert 2.0 <= took < 30, took  # the deadline, then TCP
    assert took2 < 2.0, took2  # (a new QUIC attempt would wait the deadline again)


def _tcp_closed_udp_silent() -> tuple[socket.socket, int]:
    """A port with nothing on TCP and a silent socket on UDP."""
    for _ in range(50):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        with socket.socket() as t:
            if t.connect_ex(("127.0.0.1", port)) != 0:
                return s, port
        s.close()
    raise RuntimeError("no port closed on TCP")


async def test_when_neither_quic_nor_tcp_works_the_error_names_the_url_and_both() -> None:
    hole, port = _tcp_closed_udp_silent()
    url = f"https://127.0.0.1:{port}/x.txt"
    try:
        async with Client(http=HTTPOptions(http3=True, http3_timeout=0.5),
                          timeouts=Timeouts(connect=20)) as c:
            with pytest.raises((ConnectError, FetchTimeout)) as info:
                await c.fetch(url)
    finally:
        hole.close()
    text = str(info.value)
    assert url in text
    assert "QUIC handshake with 127.0.0.1" in text and "timed out" in text and "over TCP" in text


def _anyurl(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "anyurl", *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "ANYURL_TEST": "1"})


def test_cli_get_http3(h3: Endpoint, tmp_path: Path) -> None:
    out = tmp_path / "f.txt"
    log_before = Path(h3.info["access_log"]).stat().st_size
    res = _anyurl("get", "--http3", "-k", "-q", "-o", str(out), origin(h3) + "/many/f0007.txt")
    assert res.returncode == 0, res.stderr
    assert out.read_bytes() == www(h3, "many/f0007.txt")
    with open(h3.info["access_log"], "rb") as f:
        f.seek(log_before)
        new = f.read().decode()
    assert '"GET /many/f0007.txt 3" 200' in new


def test_cli_get_http3_error_when_no_way_works() -> None:
    hole, port = _tcp_closed_udp_silent()
    url = f"https://127.0.0.1:{port}/x.txt"
    try:
        res = _anyurl("get", "--http3", "-k", "-q", "--connect-timeout", "5", "-o", os.devnull, url)
    finally:
        hole.close()
    assert res.returncode != 0
    assert url in res.stderr and "QUIC" in res.stderr and "over TCP" in res.stderr
    assert "Traceback" not in res.stderr


@pytest.mark.parametrize(("flag", "versions"), [(None, ["2", "3"]), ("--no-http3", ["2", "2"])])
def test_cli_get_follows_alt_svc_unless_told_not_to(h3: Endpoint, tmp_path: Path, flag: str | None,
                                                    versions: list[str]) -> None:
    log = Log(h3.info["access_log"])
    names = ["many/f0011.txt", "many/f0012.txt"]
    res = _anyurl("get", "-k", "-q", "--parallel", "1", "-d", str(tmp_path), *([flag] if flag else []),
                  *(f"{origin(h3)}/{n}" for n in names))
    assert res.returncode == 0, res.stderr
    for n in names:
        assert (tmp_path / Path(n).name).read_bytes() == www(h3, n)
    lines = asyncio.run(log.lines(2))
    assert [(ln[2], ln[3]) for ln in lines] == [(f"/{n}", v) for n, v in zip(names, versions, strict=True)]

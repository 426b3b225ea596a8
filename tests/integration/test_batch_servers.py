"""The library's batch engine (anyurl.batch) against real servers: nginx (http), vsftpd (ftp)
and INN (nntp). Each URL gives one result, byte for byte, and a failing URL is a result too;
with ``parallel=1`` the batch schedules as ``anyurl get --parallel 1`` does (the CLI's tests:
test_cli_ftp_queue.py, test_cli_news_pipeline.py): one connection, and the requests that can
share it written behind the one in progress.

A tap between the batch and the server (tests/taps.py: it forwards every byte and holds the
server's answers for a round trip) keeps what each side sent in the order it passed.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from fixtures.launcher import Endpoint, Launcher
from fixtures.servers import _ftp_seed as seed
from tests.integration.test_cli_ftp_queue import most_in_flight as retrs_in_flight
from tests.integration.test_cli_news_pipeline import most_in_flight as articles_in_flight
from tests.integration.test_http import AccessLog
from tests.taps import Tap

from anyurl import Client, Limits
from anyurl.batch import Batch, Directory, Memory, Result
from anyurl.errors import ConnectError, ResourceNotFound
from anyurl.handlers.http import HTTPOptions
from anyurl.net import handoff
from anyurl.transfer import batch as batch_module

DELAY = 0.25  # the tap's round trip
FTP_FILES = {"hello.txt": seed.HELLO, "crlf.txt": seed.CRLF_TEXT, "blob.bin": seed.blob(), **seed.SPECIAL_NAMES}


def one_connection() -> Client:
    # what anyurl get --parallel 1 makes: one connection, room for the stream workers
    return Client(limits=Limits(per_host=1, per_host_requests=64))


async def run(urls: list[str], sink: Memory | Directory) -> dict[str, Result]:
    got: dict[str, Result] = {}
    async with one_connection() as client, Batch(client, urls, sink, parallel=1) as results:
        async for r in results:
            assert str(r.given) not in got  # one result per URL
            got[str(r.given)] = r
    assert len(got) == len(urls)
    return got


@pytest.fixture
def web(servers: Launcher) -> Iterator[tuple[Endpoint, dict[str, bytes]]]:
    ep = servers.get("nginx")
    root = Path(ep.info["www"]) / "batchlib"
    root.mkdir(exist_ok=True)
    files = {}
    for i in range(30):  # text (nginx gzips it: chunked) and binary (Content-Length)
        name, data = ((f"f{i}.bin", os.urandom(2000 + 37 * i)) if i % 2
                      else (f"f{i}.txt", (f"line {i}\n" * (50 + i)).encode()))
        (root / name).write_bytes(data)
        files[name] = data
    yield ep, files
    shutil.rmtree(root, ignore_errors=True)  # the tree is shared by the session


def read_all(paths: dict[str, str | None]) -> dict[str, bytes]:
    return {k: Path(p or "").read_bytes() for k, p in paths.items()}


def gets_in_flight(events: list[tuple[str, bytes]]) -> tuple[int, int]:
    """(the most GETs sent and not yet answered at once, answers seen)."""
    sent = answered = most = 0
    for direction, line in events:
        if direction == "send" and line.startswith(b"GET "):
            sent += 1
            most = max(most, sent - answered)
        elif direction == "recv":  # (a status line may follow a body that ends in no newline)
            answered += line.count(b"HTTP/1.1 ")
    return most, answered


async def test_http_every_body_exact_pipelined_on_one_connection(web: tuple[Endpoint, dict[str, bytes]]) -> None:
    ep, files = web
    tap = Tap((ep.host, ep.port), DELAY)
    port = await tap.start()
    try:
        urls = [f"http://127.0.0.1:{port}/batchlib/{n}" for n in files]
        missing, refused = f"http://127.0.0.1:{port}/batchlib/none.txt", "http://127.0.0.1:1/x"
        got = await run([*urls, missing, refused], Memory())
    finally:
        await tap.close()
    for url, name in zip(urls, files, strict=True):
        r = got[url]
        assert r.ok and r.response is not None and r.response.content == files[name], r
    assert isinstance(got[missing].error, ResourceNotFound)
    assert isinstance(got[refused].error, ConnectError)
    assert tap.connections == 1  # parallel=1: one connection to nginx
    most, answered = gets_in_flight(tap.events)
    assert answered == len(files) + 1
    assert most > 1, f"at most {most} GET in flight: nothing was pipelined"


async def test_a_fresh_clients_first_connections_begin_before_its_driver_is_loaded(
        web: tuple[Endpoint, dict[str, bytes]], monkeypatch: pytest.MonkeyPatch) -> None:
    # what the CLI does while it imports, a program's batch does while the driver loads: the
    # connections to the first origin are begun at once (one per turn for plain http) and the
    # driver takes them over; a Client that has connected before begins none
    made: list[Any] = []

    class Recorded(batch_module.Early):
        def __init__(self, key: tuple[str, str, int], count: int = 1) -> None:
            super().__init__(key, count)
            self.given = 0
            made.append(self)

        def take(self, scheme: str, host: str, port: int) -> tuple[Any, bool]:
            sock, more = super().take(scheme, host, port)
            self.given += sock is not None
            return sock, more

    monkeypatch.setattr(batch_module, "Early", Recorded)
    monkeypatch.setattr(handoff, "_taker", None)  # (no CLI test's left behind)
    monkeypatch.delenv("ANYURL_EARLY_CONNECT", raising=False)
    ep, files = web
    tap = Tap((ep.host, ep.port), DELAY)
    port = await tap.start()
    try:
        urls = [f"http://127.0.0.1:{port}/batchlib/{n}" for n in files]
        async with Client(limits=Limits(per_host=4, per_host_requests=64)) as client:
            first = Batch(client, urls, Memory(), parallel=4)
            await first.run()
            again = Batch(client, urls[:3], Memory(), parallel=4)
            await again.run()
    finally:
        await tap.close()
    assert (first.succeeded, again.succeeded) == (len(urls), 3)
    assert [(e.key, e.count, e.given) for e in made] == [(("http", "127.0.0.1", port), 4, 4)]
    assert tap.connections == 4  # the four begun early, and no other
    assert handoff.taker() is None


async def test_https_the_transfers_run_as_streams_of_one_http2_connection(servers: Launcher, tmp_path: Path) -> None:
    # parallel=1: one connection; once it speaks HTTP/2 the transfers run on it as streams at
    # once (the batch's stream workers), not one round trip each (40 x DELAY = 10 s at least)
    ep = servers.get("nginx")
    log = AccessLog(ep.info["access_log"])
    tap = Tap((ep.host, ep.info["tls_port"]), DELAY)  # (TLS passes through it as bytes)
    port = await tap.start()
    names = [f"many/f{i:04d}.txt" for i in range(40)]
    try:
        async with Client(http=HTTPOptions(cafile=ep.info["ca"]), limits=Limits(per_host=1, per_host_requests=64)) as c:
            t0 = time.monotonic()
            batch = Batch(c, [f"https://{ep.host}:{port}/{n}" for n in names], Directory(tmp_path), parallel=1)
            await batch.run()
            took = time.monotonic() - t0
    finally:
        await tap.close()
    assert (batch.succeeded, batch.failed) == (40, 0)
    www = Path(ep.info["www"])
    assert read_all({n: str(tmp_path / n.rsplit("/", 1)[1]) for n in names}) == read_all(
        {n: str(www / n) for n in names})
    lines = await log.lines(40)
    assert {x["request"].rsplit(" ", 1)[1] for x in lines} == {"HTTP/2.0"}
    assert tap.connections == 1
    assert took < 0.6 * len(names) * DELAY, f"{took:.1f} s: the transfers did not share the connection"


async def test_ftp_one_connection_queues_the_next_file_behind_the_transfer(servers: Launcher,
                                                                           tmp_path: Path) -> None:
    ftp = servers.get("vsftpd")
    tap = Tap((ftp.host, ftp.port), DELAY)
    port = await tap.start()
    try:
        urls = [f"ftp://127.0.0.1:{port}/pub/{quote(name)}" for name in FTP_FILES]
        missing = f"ftp://127.0.0.1:{port}/pub/no-such-file"
        got = await run([*urls, missing], Directory(tmp_path / "out"))
    finally:
        await tap.close()
    saved = {url: r.dest for url, r in got.items() if r.ok}
    assert {Path(saved[url]).name for url in urls} == set(FTP_FILES)
    assert read_all(saved) == {url: FTP_FILES[name] for url, name in zip(urls, FTP_FILES, strict=True)}
    assert isinstance(got[missing].error, ResourceNotFound)
    assert sorted(os.listdir(tmp_path / "out")) == sorted(FTP_FILES)  # nothing for the missing one
    assert tap.connections == 1
    most, ended = retrs_in_flight(tap.events)
    assert ended >= len(FTP_FILES) + 1  # (the missing file: its RETR and the CWD of the fallback)
    assert most >= 2, [line for _, line in tap.events]  # a RETR written before the 226 ahead of it


async def test_news_one_connection_pipelines_the_articles(servers: Launcher) -> None:
    inn = servers.get("inn")
    many = inn.info["many_group"]
    n = 40
    tap = Tap((inn.host, inn.port), DELAY)
    port = await tap.start()
    try:
        urls = [f"nntp://127.0.0.1:{port}/{many}/{i}" for i in range(1, n + 1)]
        missing = f"nntp://127.0.0.1:{port}/{many}/99999"
        got = await run([*urls, missing], Memory())
    finally:
        await tap.close()
    for i, url in enumerate(urls, 1):
        r = got[url]
        assert r.ok and r.response is not None, r
        assert r.response.content.replace(b"\r\n", b"\n").split(b"\n\n", 1)[1] == f"body of many {i}\n".encode()
    assert isinstance(got[missing].error, ResourceNotFound)
    assert tap.connections == 1
    most, answered = articles_in_flight(tap.events)
    assert answered == n + 1
    # more than the 16 stream workers per turn: the one connection fills a window of its own
    assert most > 16, f"at most {most} ARTICLE commands in flight on the one connection"


@pytest.fixture(autouse=True)
def _news_server_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NNTPSERVER", raising=False)

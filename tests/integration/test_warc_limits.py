"""Nothing lost, nothing made up: a transfer a limit cut is archived marked ``WARC-Truncated``
(length, time), a retried fetch archives only the attempt that completed, a failed one nothing
(logged); and a large body's capture goes to a temporary file, not memory (peak RSS of
``anyurl get --warc``), its payload byte-exact in the WARC file."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import zlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from fixtures.launcher import Endpoint, Launcher
from tests.integration.test_warc import records, warcio_check

from anyurl import Client, FetchTimeout, Retry, Timeouts, TransferError, TruncatedTransfer
from anyurl.warc import WARCWriter


@pytest.fixture(scope="module")
def nginx(servers: Launcher) -> Endpoint:
    return servers.get("nginx")


def http(nginx: Endpoint, path: str) -> str:
    return f"http://{nginx.host}:{nginx.port}{path}"


@pytest.fixture(scope="module")
def large(nginx: Endpoint) -> tuple[str, Path]:
    """A 64 MiB file of random bytes (nothing compresses it) in nginx's root: its URL and path."""
    size = 64 << 20
    path = Path(nginx.info["www"]) / "warc-large.bin"
    if not path.exists() or path.stat().st_size != size:
        tmp = path.with_suffix(".part")
        with tmp.open("wb") as f:
            for _ in range(size >> 20):
                f.write(os.urandom(1 << 20))
        tmp.chmod(0o644)
        tmp.rename(path)
    return http(nginx, f"/{path.name}"), path


# -- limits ---------------------------------------------------------------------


async def test_a_body_cut_by_max_size_is_archived_truncated_length(nginx: Endpoint, tmp_path: Path) -> None:
    url = http(nginx, "/big.txt")  # 800,000 bytes of text, sent gzip and chunked: no size up front
    out = tmp_path / "max.warc.gz"
    with WARCWriter(out) as w:
        async with Client(on_capture=w.captured) as c:
            with pytest.raises(TransferError, match="larger than max_size") as info:
                await c.fetch(url, max_size=100_000)
    cap = info.value.capture
    assert cap is not None and cap.truncated == "length" and not cap.complete  # type: ignore[attr-defined]
    got = [(rec, data) for rec, data in records(out, raw=True) if rec.rec_type == "response"]
    assert len(got) == 1
    rec, data = got[0]
    assert rec.rec_headers.get_header("WARC-Truncated") == "length"
    assert rec.rec_headers.get_header("WARC-Target-URI") == url
    assert 0 < cap.body_size < 800_000  # type: ignore[attr-defined]  # what arrived: a part of the gzip
    assert cap.body in data  # type: ignore[attr-defined]
    warcio_check(out)


async def test_a_body_cut_by_a_timeout_is_archived_truncated_time(nginx: Endpoint, tmp_path: Path) -> None:
    url = http(nginx, "/stall")  # "first line", then 30 s of silence
    out = tmp_path / "time.warc.gz"
    with WARCWriter(out) as w:
        async with Client(on_capture=w.captured, timeouts=Timeouts(read=1.0)) as c:
            with pytest.raises(FetchTimeout) as info:
                await c.fetch(url)
    cap = info.value.capture
    assert cap is not None and cap.truncated == "time"  # type: ignore[attr-defined]
    got = [(rec, data) for rec, data in records(out) if rec.rec_type == "response"]
    assert len(got) == 1
    assert got[0][0].rec_headers.get_header("WARC-Truncated") == "time"
    assert got[0][1] == b"first line\n"  # what arrived, decoded by warcio as archives read it
    # the capture is the wire's: gzip, its stream cut after the first line
    assert zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(cap.body) == b"first line\n"  # type: ignore[attr-defined]
    warcio_check(out)


async def test_a_body_cut_by_the_total_timeout_is_archived_truncated_time(nginx: Endpoint, tmp_path: Path) -> None:
    out = tmp_path / "total.warc.gz"
    with WARCWriter(out) as w:
        async with Client(on_capture=w.captured, timeouts=Timeouts(total=1.5, read=30)) as c:
            with pytest.raises(FetchTimeout) as info:
                await c.fetch(http(nginx, "/stall"))
    cap = info.value.capture
    assert cap is not None and cap.truncated == "time"  # type: ignore[attr-defined]
    got = [(rec, data) for rec, data in records(out) if rec.rec_type == "response"]
    assert [(rec.rec_headers.get_header("WARC-Truncated"), data) for rec, data in got] == [("time", b"first line\n")]


async def test_the_archive_sink_writes_a_cut_body_truncated(nginx: Endpoint, tmp_path: Path,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    from anyurl.batch import Batch
    from anyurl.warc import Archive

    out = tmp_path / "sink.warc.gz"
    urls = [http(nginx, "/big.txt"), http(nginx, "/hello.txt")]
    async with Client() as c:
        with WARCWriter(out) as w:
            async with Batch(c, urls, Archive(w, max_size=100_000)) as results:
                got = {str(r.given): r async for r in results}
    assert got[urls[0]].error is not None and got[urls[1]].ok
    truncated = {rec.rec_headers.get_header("WARC-Target-URI"): rec.rec_headers.get_header("WARC-Truncated")
                 for rec, _ in records(out) if rec.rec_type == "response"}
    assert truncated == {urls[0]: "length", urls[1]: None}
    assert "archived as truncated (length)" in caplog.text
    warcio_check(out)


def test_get_archives_a_body_its_idle_timeout_cut_truncated_time(nginx: Endpoint, tmp_path: Path) -> None:
    out = tmp_path / "get.warc.gz"
    done = subprocess.run([sys.executable, "-m", "anyurl", "get", "-q", "-d", str(tmp_path / "d"),
                           "--timeout", "1", "--warc", str(out), http(nginx, "/stall")],
                          capture_output=True, timeout=120)
    assert done.returncode != 0 and b"timed out" in done.stderr, done.stderr
    got = [(rec, data) for rec, data in records(out) if rec.rec_type == "response"]
    assert [rec.rec_headers.get_header("WARC-Truncated") for rec, _ in got] == ["time"]
    assert got[0][1] == b"first line\n"
    assert not (tmp_path / "d" / "stall").exists()  # the download itself still fails whole
    info = records(out)[0][1].decode()  # the warcinfo names the options the archive was made with
    assert "software: anyurl/" in info and "--timeout 1 --warc" in info
    warcio_check(out)


async def test_a_stream_a_timeout_cut_is_archived_truncated_time(nginx: Endpoint, tmp_path: Path) -> None:
    out = tmp_path / "open.warc.gz"
    got = b""
    with WARCWriter(out) as w:
        async with Client(on_capture=w.captured, timeouts=Timeouts(read=1.0)) as c:
            with pytest.raises(FetchTimeout):
                async with c.open(http(nginx, "/stall")) as body:
                    async for chunk in body:
                        got += chunk
    assert got == b"first line\n"
    recs = [(rec, data) for rec, data in records(out) if rec.rec_type == "response"]
    assert [(rec.rec_headers.get_header("WARC-Truncated"), data) for rec, data in recs] == [("time", got)]


def test_get_to_stdout_archives_a_body_its_timeout_cut_truncated_time(nginx: Endpoint, tmp_path: Path) -> None:
    out = tmp_path / "stdout.warc.gz"
    done = subprocess.run([sys.executable, "-m", "anyurl", "get", "-q", "-o", "-", "--timeout", "1",
                           "--warc", str(out), http(nginx, "/stall")], capture_output=True, timeout=120)
    assert done.returncode != 0 and done.stdout == b"first line\n", done.stderr
    recs = [(rec, data) for rec, data in records(out) if rec.rec_type == "response"]
    assert [(rec.rec_headers.get_header("WARC-Truncated"), data) for rec, data in recs] == [("time", done.stdout)]
    warcio_check(out)


def test_get_refusing_a_size_up_front_archives_nothing(large: tuple[str, Path], tmp_path: Path) -> None:
    url, _path = large  # Content-Length 64 MiB: refused before any byte of the body
    out = tmp_path / "none.warc.gz"
    done = subprocess.run([sys.executable, "-m", "anyurl", "get", "-q", "-d", str(tmp_path / "d"),
                           "--max-size", "1000000", "--warc", str(out), url], capture_output=True, timeout=120)
    assert done.returncode != 0 and b"larger than" in done.stderr
    assert not out.exists() or not [rec for rec, _ in records(out) if rec.rec_type == "response"]


# -- retries and failures ---------------------------------------------------------


@pytest.fixture
async def flaky() -> AsyncIterator[tuple[int, list[int]]]:
    """An HTTP server whose first answer stops after 10 of 100 bytes; later ones are whole."""
    served: list[int] = []
    body = bytes(range(100))

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readuntil(b"\r\n\r\n")
            served.append(1)
            head = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\nContent-Type: application/octet-stream\r\n\r\n"
            writer.write(head + (body[:10] if len(served) == 1 else body))
            await writer.drain()
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1], served
    finally:
        server.close()
        await server.wait_closed()


async def test_a_retried_fetch_archives_only_the_attempt_that_completed(
        flaky: tuple[int, list[int]], tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    port, served = flaky
    out = tmp_path / "retry.warc.gz"
    with WARCWriter(out) as w:
        async with Client(on_capture=w.captured, retry=Retry(attempts=3, backoff=0.01)) as c:
            r = await c.fetch(f"http://127.0.0.1:{port}/x")
    assert len(served) == 2 and r.content == bytes(range(100))
    got = [(rec, data) for rec, data in records(out) if rec.rec_type == "response"]
    assert len(got) == 1 and got[0][1] == bytes(range(100))
    assert got[0][0].rec_headers.get_header("WARC-Truncated") is None
    assert r.capture is not None and r.capture.body == bytes(range(100)) and r.capture.complete
    warcio_check(out)


async def test_a_failed_transfer_is_logged_and_never_archived(
        flaky: tuple[int, list[int]], tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    port, _served = flaky
    out = tmp_path / "failed.warc.gz"
    with WARCWriter(out) as w:
        async with Client(on_capture=w.captured) as c:
            with pytest.raises(TruncatedTransfer) as info:
                await c.fetch(f"http://127.0.0.1:{port}/x")
    assert info.value.capture is None  # not a limit's cut: nothing to archive
    assert w.records == 0
    assert f"not archived: http://127.0.0.1:{port}/x" in caplog.text


# -- bounded memory ---------------------------------------------------------------

_PEAK = ("import resource, runpy, sys\n"
         "sys.argv = ['anyurl', *sys.argv[1:]]\n"
         "try:\n"
         "    runpy.run_module('anyurl', run_name='__main__')\n"
         "except SystemExit as exc:\n"
         "    code = exc.code\n"
         "else:\n"
         "    code = 0\n"
         "print('PEAK', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
         "sys.exit(code)\n")


def _peak_kib(*args: str) -> int:
    done = subprocess.run([sys.executable, "-c", _PEAK, *args], capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    line = next(x for x in done.stderr.decode().splitlines() if x.startswith("PEAK "))
    return int(line.split()[1])


def test_a_large_body_is_spooled_not_held_and_archived_byte_exact(large: tuple[str, Path], tmp_path: Path) -> None:
    url, path = large
    plain = _peak_kib("get", "-q", "-d", str(tmp_path / "a"), url)
    out = tmp_path / "large.warc.gz"
    archived = _peak_kib("get", "-q", "-d", str(tmp_path / "b"), "--warc", str(out), url)
    # held in memory, the capture alone would add 64 MiB; spooled, the two runs are alike
    assert archived - plain < 24 << 10, (plain, archived)
    got = [(rec, data) for rec, data in records(out) if rec.rec_type == "response"]
    assert len(got) == 1 and got[0][1] == path.read_bytes() == (tmp_path / "b" / path.name).read_bytes()
    warcio_check(out)

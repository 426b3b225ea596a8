"""What writing WARC files costs and how the writer keeps up (anyurl.transfer.warc): captured GETs
pipeline over a long round trip, the background writer (``background=True``, what ``--warc``
uses) writes what the synchronous one does, waits when its queue is full and hands its errors
back, the gzip level, and records that ``warcio check`` passes digest by digest."""

from __future__ import annotations

import asyncio
import gzip
import os
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixtures.launcher import Endpoint, Launcher
from tests.integration.test_http import AccessLog
from tests.integration.test_http_pipeline import _relay
from tests.integration.test_warc import records, warcio_check
from warcio.archiveiterator import ArchiveIterator

from anyurl import Client, ConfigurationError, Limits, Response
from anyurl.handlers.http import HTTPOptions
from anyurl.response import Capture
from anyurl.warc import WARCWriter

RTT = 0.1
N = 24


@pytest.fixture(scope="module")
def nginx(servers: Launcher) -> Endpoint:
    return servers.get("nginx")


@pytest.fixture(scope="module")
def files(nginx: Endpoint) -> Iterator[dict[str, bytes]]:
    """Distinct small files: .bin (Content-Length) and .txt (nginx gzips them: chunked)."""
    import shutil

    root = Path(nginx.info["www"]) / "warcpipe"
    root.mkdir(exist_ok=True)
    out: dict[str, bytes] = {}
    for i in range(N):
        name = f"f{i}.bin" if i % 2 else f"f{i}.txt"
        data = os.urandom(2000 + 89 * i) if i % 2 else (f"line {i} of a page\n" * (30 + 7 * i)).encode()
        (root / name).write_bytes(data)
        out[name] = data
    yield out
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def relayed(nginx: Endpoint) -> Iterator[str]:
    with _relay(nginx) as origin:
        yield origin


def responses(path: Path) -> dict[str, bytes]:
    """Each response record's target URI -> its payload as archives read it (decoded)."""
    return {rec.rec_headers.get_header("WARC-Target-URI"): data for rec, data in records(path)
            if rec.rec_type == "response"}


@pytest.mark.parametrize("background", [False, True])
async def test_captured_gets_pipeline_and_each_record_holds_its_body(
        nginx: Endpoint, files: dict[str, bytes], relayed: str, tmp_path: Path, background: bool) -> None:
    """One connection 100 ms away, pipelining 8 deep: 24 captured GETs take a few round trips,
    not one each (a capture used to leave the pipeline: 2.4 s and more)."""
    out = tmp_path / "pipe.warc.gz"
    log = AccessLog(nginx.info["access_log"])
    with WARCWriter(out, background=background) as w:
        async with Client(limits=Limits(per_host=1), http=HTTPOptions(pipeline=8), on_capture=w.captured) as c:
            first = await c.fetch(f"{relayed}/warcpipe/f0.txt")  # proves the connection (keep-alive)
            assert first.content == files["f0.txt"]
            t0 = time.monotonic()
            names = sorted(files)
            got = await asyncio.gather(*(c.fetch(f"{relayed}/warcpipe/{n}") for n in names))
            took = time.monotonic() - t0
    assert [r.content for r in got] == [files[n] for n in names]
    lines = await log.lines(N + 1)
    assert len(Counter(line["conn"] for line in lines)) == 1  # one connection carried them all
    assert took < N * RTT / 2, took
    stored = responses(out)
    assert {u.rsplit("/", 1)[1]: b for u, b in stored.items()} == files
    warcio_check(out)


def _gopher(i: int, body: bytes) -> Response:
    url = f"gopher://h/0/{i}"
    cap = Capture("gopher", url, body=body, peer=("127.0.0.1", 70))
    cap.sent(f"/{i}\r\n")
    return Response(url, body, "text/plain", capture=cap)


def _content(path: Path) -> list[tuple[str, str | None, bytes]]:
    with path.open("rb") as f:
        return [(r.rec_type, r.rec_headers.get_header("WARC-Target-URI"), r.content_stream().read())
                for r in ArchiveIterator(f)]


async def test_the_background_writer_writes_what_the_synchronous_one_does(nginx: Endpoint, tmp_path: Path) -> None:
    urls = [f"http://{nginx.host}:{nginx.port}{p}" for p in ("/big.txt", "/cookies", "/hello.txt", "/hello.txt")]
    async with Client(capture=True) as c:
        got = [await c.fetch(u) for u in urls]
    rs = [*got, *(_gopher(i, f"text {i}\r\n".encode() * 50) for i in range(3))]
    sync, bg = tmp_path / "sync.warc.gz", tmp_path / "bg.warc.gz"
    with WARCWriter(sync) as w:
        for r in rs:
            w.write(r)
    with WARCWriter(bg, background=True, queue_bytes=1) as w:
        for r in rs:
            w.write(r)
        w.flush()  # everything handed over is in the file now, before close
        assert _content(bg) == _content(sync) and w.records == 1 + 2 * len(rs)
    assert _content(bg) == _content(sync)
    assert [k for k, _, _ in _content(bg)].count("revisit") == 1  # /hello.txt the second time
    warcio_check(sync, bg)


def test_the_request_line_has_its_version(tmp_path: Path) -> None:
    cap = Capture("HTTP/1.1", "http://h/x?y", status=200, status_line="HTTP/1.1 200 OK",
                  headers=[("Content-Length", "2")], method="GET", target="/x?y",
                  request_headers=[("Host", "h")], body=b"ok")
    out = tmp_path / "r.warc.gz"
    with WARCWriter(out) as w:
        w.write(Response("http://h/x?y", b"ok", capture=cap))
    raw = gzip.decompress(out.read_bytes())
    assert b"\r\n\r\nGET /x?y HTTP/1.1\r\nHost: h\r\n\r\n" in raw
    warcio_check(out)


def test_a_full_queue_makes_the_caller_wait(tmp_path: Path) -> None:
    """The thread blocks on its output (a FIFO nobody reads yet): a capture beyond the queue's
    bytes waits for room, and goes once the output drains."""
    fifo = tmp_path / "out.warc"
    os.mkfifo(fifo)
    w = WARCWriter(fifo, background=True, queue_bytes=1000)
    w.write(_gopher(0, b"a" * 900))  # taken by the thread, which blocks opening the FIFO
    deadline = time.monotonic() + 30
    while not w._busy:  # (until the thread holds it: the queue is empty again)
        assert time.monotonic() < deadline
        time.sleep(0.01)
    w.write(_gopher(1, b"b" * 900))  # queued: 900 of 1000 bytes
    third = threading.Thread(target=w.write, args=(_gopher(2, b"c" * 900),))
    third.start()
    third.join(0.5)
    assert third.is_alive()  # 1800 > 1000: waits
    data = bytearray()

    def drain() -> None:
        with fifo.open("rb") as f:
            while chunk := f.read(65536):
                data.extend(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    third.join(60)
    assert not third.is_alive()
    w.close()
    reader.join(60)
    assert data.count(b"WARC-Type: resource") == 3


def test_an_error_of_the_thread_is_raised_by_the_next_call(tmp_path: Path) -> None:
    w = WARCWriter(tmp_path / "missing" / "x.warc.gz", background=True)
    w.write(_gopher(0, b"x"))  # the thread fails to open the file
    with pytest.raises(FileNotFoundError):
        w.flush()
    with pytest.raises(FileNotFoundError):
        w.write(_gopher(1, b"y"))
    with pytest.raises(FileNotFoundError):
        w.close()


def test_the_gzip_level_trades_size_for_cpu(tmp_path: Path) -> None:
    body = b"".join(f"<p>paragraph {i}: {'lorem ipsum ' * (i % 9)}</p>\n".encode() for i in range(3000))
    sizes = {}
    for level in (1, 6, 9):
        out = tmp_path / f"l{level}.warc.gz"
        with WARCWriter(out, level=level) as w:
            w.write(_gopher(level, body))
        sizes[level] = out.stat().st_size
        assert _content(out)[1][2] == body
        warcio_check(out)
    assert sizes[1] > sizes[6] >= sizes[9]
    with pytest.raises(ConfigurationError, match="level"):
        WARCWriter(tmp_path / "bad.warc.gz", level=10)


@pytest.mark.parametrize("background", [False, True])
async def test_a_large_body_is_written_from_its_spool_byte_exact(nginx: Endpoint, tmp_path: Path,
                                                                 background: bool) -> None:
    """Bodies past 1 MiB: kept in a temporary file by the capture, streamed into their gzip
    member by the writer (Content-Length framed, chunked gzip from nginx, and a gopher resource)."""
    root = Path(nginx.info["www"]) / "warclarge"
    root.mkdir(exist_ok=True)
    blob = os.urandom(3 << 20)
    text = b"".join(f"line {i} of a long text\n".encode() for i in range(150_000))
    (root / "large.bin").write_bytes(blob)
    (root / "large.txt").write_bytes(text)  # (nginx gzips it: a chunked reply)
    out = tmp_path / "large.warc.gz"
    urls = [f"http://{nginx.host}:{nginx.port}/warclarge/{n}" for n in ("large.bin", "large.txt")]
    with WARCWriter(out, background=background) as w:
        async with Client(on_capture=w.captured) as c:
            for u in urls:
                await c.fetch(u)
        w.write(_gopher(9, text))
    got = responses(out)
    assert got[urls[0]] == blob and got[urls[1]] == text
    raw = [r for r in records(out, raw=True) if r[0].rec_type == "response"][1][1]
    assert raw.endswith(b"\r\n0\r\n\r\n")  # the gzip payload as one chunk, as stored
    assert [data for rec, data in records(out) if rec.rec_type == "resource"] == [text]
    warcio_check(out)


# -- WACZ ------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
WACZ_VENV = ROOT / ".venv-wacz"


def _wacz_python() -> str:
    """py-wacz in a venv of its own (made here on first use, as pywb's is): its dependencies
    (frictionless...) stay out of the project's."""
    import shutil
    import subprocess
    import sys

    py = WACZ_VENV / "bin" / "python"
    stamp = WACZ_VENV / ".installed"  # written last: an install cut short is made again
    if not stamp.exists():
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(WACZ_VENV)], check=True, timeout=300, env=env)
        done = subprocess.run([str(py), "-m", "pip", "install", "-q", "wacz>=0.5"], capture_output=True, text=True,
                              timeout=1200, env=env)
        if done.returncode != 0:
            shutil.rmtree(WACZ_VENV, ignore_errors=True)
            pytest.fail(f"pip install wacz failed:\n{done.stderr[-2000:]}")
        stamp.touch()
    return str(py)


def _validate(py: str, path: Path) -> str:
    import subprocess

    done = subprocess.run([py, "-m", "wacz", "validate", "-f", str(path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


async def test_pack_wacz_packages_the_warc_files_with_their_index(nginx: Endpoint, tmp_path: Path) -> None:
    import zipfile

    from anyurl.warc import pack_wacz

    py = _wacz_python()
    urls = [f"http://{nginx.host}:{nginx.port}{p}" for p in ("/big.txt", "/cookies", "/hello.txt")]
    out = tmp_path / "site.warc.gz"
    with WARCWriter(out, max_size=2000) as w:  # (several parts: each goes in)
        async with Client(on_capture=w.captured) as c:
            for u in urls:
                await c.fetch(u)
    assert len(w.files) > 1
    pack = tmp_path / "site.wacz"
    pack_wacz(w.files, pack, python=py)
    assert "Validation succeeded" in _validate(py, pack)
    with zipfile.ZipFile(pack) as z:
        names = z.namelist()
        assert sorted(n for n in names if n.startswith("archive/")) == sorted(f"archive/{Path(f).name}" for f in w.files)
        index = gzip.decompress(z.read("indexes/index.cdx.gz")).decode()
    assert all(u.split("://", 1)[1].split("/", 1)[1] in index for u in urls)
    assert not (tmp_path / "site.wacz.part").exists()
    # a failed packing leaves nothing under the final name and says why
    from anyurl import AnyURLError

    with pytest.raises(AnyURLError, match="packing .*bad.wacz failed"):
        pack_wacz([tmp_path / "missing.warc.gz"], tmp_path / "bad.wacz", python=py)
    assert not (tmp_path / "bad.wacz").exists() and not (tmp_path / "bad.wacz.part").exists()


def test_get_wacz_packages_or_says_what_it_needs(nginx: Endpoint, tmp_path: Path) -> None:
    """``get --wacz`` alone: the package when py-wacz is installed beside anyurl, else a clear
    error; either way no temporary WARC file is left."""
    import importlib.util
    import subprocess
    import sys

    url = f"http://{nginx.host}:{nginx.port}/hello.txt"
    done = subprocess.run([sys.executable, "-m", "anyurl", "get", "-q", "-d", "out", "--wacz", "site.wacz", url],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert (tmp_path / "out" / "hello.txt").exists()
    assert not list(tmp_path.glob(".anyurl-*"))  # the WARC file made for the package: removed
    if importlib.util.find_spec("wacz") is None:
        assert done.returncode != 0 and "needs the wacz package" in done.stderr, done.stderr
        assert not (tmp_path / "site.wacz").exists()
    else:
        assert done.returncode == 0, done.stderr
        assert "Validation succeeded" in _validate(sys.executable, tmp_path / "site.wacz")

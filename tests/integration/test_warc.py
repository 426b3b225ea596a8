"""Capture (``capture=True``) and WARC files, against the real servers: what a Response keeps
of the wire, and WARC files read back by warcio's ArchiveIterator, ``warcio check`` and
cdxj-indexer (pywb's replay is in test_warc_replay.py)."""

from __future__ import annotations

import gzip
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest
from fixtures.launcher import Endpoint, Launcher
from tests.integration.test_http import www
from warcio.archiveiterator import ArchiveIterator

from anyurl import Client
from anyurl.handlers.http import HTTPOptions
from anyurl.warc import WARCWriter


@pytest.fixture(scope="module")
def nginx(servers: Launcher) -> Endpoint:
    return servers.get("nginx")


def http(nginx: Endpoint, path: str) -> str:
    return f"http://{nginx.host}:{nginx.port}{path}"


def https(nginx: Endpoint, path: str) -> str:
    return f"https://{nginx.host}:{nginx.info['tls_port']}{path}"


def records(path: Path, raw: bool = False) -> list[tuple[Any, bytes]]:
    """(record, its content as archives read it: de-chunked and decoded; *raw*: as stored)."""
    out = []
    with path.open("rb") as f:
        for rec in ArchiveIterator(f):
            out.append((rec, (rec.raw_stream if raw else rec.content_stream()).read()))
    return out


def warcio_check(*paths: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "warcio.cli", "check", "-v", *map(str, paths)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "digest pass" in done.stdout, done.stdout


def cdxj(path: Path) -> list[str]:
    done = subprocess.run([sys.executable, "-m", "cdxj_indexer.main", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return [line for line in done.stdout.splitlines() if line.strip()]


def parts(folder: Path) -> list[Path]:
    return sorted(folder.glob("part-*.warc.gz"))


# -- the capture --------------------------------------------------------------


async def test_http_capture_keeps_the_wire_body_headers_request_and_peer(nginx: Endpoint) -> None:
    url = http(nginx, "/big.txt")
    async with Client() as c:
        r = await c.fetch(url, capture=True)
        plain = await c.fetch(url)
    assert plain.capture is None  # off unless asked
    cap = r.capture
    assert cap is not None
    assert r.content == www(nginx, "big.txt")  # content decoded as always
    assert cap.body is not None and cap.body[:2] == b"\x1f\x8b"  # the body as sent: gzip
    assert gzip.decompress(cap.body) == r.content
    names = [k for k, _ in cap.headers]
    assert "Content-Encoding" in names and "Transfer-Encoding" in names  # case as nginx spells them
    assert cap.protocol == "HTTP/1.1" and cap.status == 200 and cap.status_line == "HTTP/1.1 200 OK"
    assert cap.method == "GET" and cap.target == "/big.txt"
    assert ("Host", f"{nginx.host}:{nginx.port}") in cap.request_headers
    assert any(k == "Accept-Encoding" for k, _ in cap.request_headers)
    assert cap.peer == (nginx.host, nginx.port)
    assert cap.tls_version is None
    assert cap.started is not None and cap.ended is not None and cap.started <= cap.ended
    assert cap.complete


async def test_http_capture_keeps_repeated_fields_apart(nginx: Endpoint) -> None:
    async with Client() as c:
        r = await c.fetch(http(nginx, "/cookies"), capture=True)
    assert r.capture is not None
    cookies = [v for k, v in r.capture.headers if k == "Set-Cookie"]
    assert cookies == ["a=1; Path=/", "b=2; Path=/"]
    assert r.meta["headers"]["Set-Cookie"] == "a=1; Path=/, b=2; Path=/"  # the merged view stays


async def test_http2_capture_names_its_protocol_and_tls(nginx: Endpoint) -> None:
    async with Client(http=HTTPOptions(cafile=nginx.info["ca"])) as c:
        r = await c.fetch(https(nginx, "/hello.txt"), capture=True)
    cap = r.capture
    assert cap is not None
    assert cap.protocol == "HTTP/2" and cap.status == 200
    assert cap.body == www(nginx, "hello.txt") == r.content
    assert cap.tls_version in ("TLSv1.2", "TLSv1.3") and cap.tls_cipher
    assert cap.peer == (nginx.host, nginx.info["tls_port"])
    assert cap.request_headers[:4] == [(":method", "GET"), (":scheme", "https"),
                                       (":authority", f"{nginx.host}:{nginx.info['tls_port']}"),
                                       (":path", "/hello.txt")]
    assert all(k == k.lower() for k, _ in cap.headers)  # as HTTP/2 carries them


async def test_a_ranged_capture_is_not_complete(nginx: Endpoint) -> None:
    async with Client() as c:
        r = await c.fetch(http(nginx, "/hello.txt"), length=5, capture=True)
    assert r.capture is not None and not r.capture.complete
    assert r.content == www(nginx, "hello.txt")[:5]


# -- the WARC file ------------------------------------------------------------


async def test_http_records_read_back_by_warcio_and_cdxj_indexer(nginx: Endpoint, tmp_path: Path) -> None:
    out = tmp_path / "http.warc.gz"
    urls = [http(nginx, "/big.txt"), http(nginx, "/cookies"), https(nginx, "/hello.txt")]
    async with Client(http=HTTPOptions(cafile=nginx.info["ca"]), capture=True) as c:
        with WARCWriter(out, info={"operator": "tests"}) as w:
            for u in urls:
                w.write(await c.fetch(u))
    recs = records(out)
    types = [(rec.rec_type, rec.rec_headers.get_header("WARC-Target-URI")) for rec, _ in recs]
    assert types[0] == ("warcinfo", None)
    assert types[1:] == [(t, u) for u in urls for t in ("response", "request")]
    info = recs[0][1].decode()
    assert "software: anyurl/" in info and "operator: tests" in info
    for rec, _ in recs:
        assert rec.rec_headers.protocol == "WARC/1.1"
        if rec.rec_type in ("response", "resource"):
            assert rec.rec_headers.get_header("WARC-Payload-Digest", "").startswith("sha1:")
    big, cookies, h2 = recs[1], recs[3], recs[5]
    # the stored body is what nginx sent: gzip, chunked (warcio reads both away)
    assert big[1] == www(nginx, "big.txt")
    stored = records(out, raw=True)[1][1]
    size, _, rest = stored.partition(b"\r\n")
    assert rest[:2] == b"\x1f\x8b" and zlib.decompress(rest[:int(size, 16)], 31) == big[1]
    assert big[0].http_headers.get_header("Content-Encoding") == "gzip"
    assert [v for k, v in cookies[0].http_headers.headers if k == "Set-Cookie"] == ["a=1; Path=/", "b=2; Path=/"]
    assert h2[0].http_headers.protocol == "HTTP/1.1" and h2[0].http_headers.get_statuscode() == "200"
    assert "h2" in h2[0].rec_headers.get_header("WARC-Protocol")
    assert h2[0].rec_headers.get_header("WARC-Cipher-Suite")
    assert h2[1] == www(nginx, "hello.txt")
    request = recs[6][0]
    assert request.http_headers.protocol == "GET"
    assert request.rec_headers.get_header("WARC-Concurrent-To") == h2[0].rec_headers.get_header("WARC-Record-ID")
    assert big[0].rec_headers.get_header("WARC-IP-Address") == nginx.host
    warcio_check(out)
    index = cdxj(out)
    assert len(index) == 3
    assert all('"status": "200"' in line for line in index), index


async def test_a_payload_seen_before_is_a_revisit(nginx: Endpoint, tmp_path: Path) -> None:
    out = tmp_path / "again.warc.gz"
    async with Client(capture=True) as c:
        with WARCWriter(out) as w:
            w.write(await c.fetch(http(nginx, "/hello.txt")))
            w.write(await c.fetch(http(nginx, "/hello.txt")))
    kinds = [rec.rec_type for rec, _ in records(out)]
    assert kinds == ["warcinfo", "response", "request", "revisit", "request"]
    revisit = records(out)[3][0]
    assert revisit.rec_headers.get_header("WARC-Refers-To-Target-URI") == http(nginx, "/hello.txt")
    assert revisit.rec_headers.get_header("WARC-Profile").endswith("identical-payload-digest")
    warcio_check(out)


async def test_a_cut_transfer_is_marked_truncated(nginx: Endpoint, tmp_path: Path) -> None:
    out = tmp_path / "cut.warc.gz"
    async with Client(capture=True) as c:
        with WARCWriter(out) as w:
            w.write(await c.fetch(http(nginx, "/hello.txt"), length=5))
    rec = records(out)[1][0]
    assert rec.rec_headers.get_header("WARC-Truncated") == "length"


async def test_files_rotate_at_max_size_and_each_starts_with_warcinfo(nginx: Endpoint, tmp_path: Path) -> None:
    out = tmp_path / "part.warc.gz"
    async with Client(capture=True) as c:
        with WARCWriter(out, max_size=2000) as w:
            for i in range(6):
                w.write(await c.fetch(http(nginx, f"/many/f{i:04d}.txt")))
    files = parts(tmp_path)
    assert [f.name for f in files] == [Path(n).name for n in w.files] and len(files) > 1
    assert files[0].name == "part-00000.warc.gz"
    seen = []
    for f in files:
        recs = records(f)
        assert recs[0][0].rec_type == "warcinfo"
        seen += [rec.rec_headers.get_header("WARC-Target-URI") for rec, _ in recs if rec.rec_type == "response"]
    assert seen == [http(nginx, f"/many/f{i:04d}.txt") for i in range(6)]
    warcio_check(*files)


async def test_a_crash_leaves_every_written_record_readable(nginx: Endpoint, tmp_path: Path) -> None:
    out = tmp_path / "crash.warc.gz"
    async with Client(capture=True) as c:
        w = WARCWriter(out)
        w.write(await c.fetch(http(nginx, "/hello.txt")))
        w.write(await c.fetch(http(nginx, "/cookies")))
        # no close(): what another process reads now is what a crash would leave
        assert [rec.rec_type for rec, _ in records(out)] == ["warcinfo", "response", "request",
                                                            "response", "request"]
        w.close()


async def test_a_failed_fetch_is_logged_not_archived(nginx: Endpoint, tmp_path: Path,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    out = tmp_path / "fail.warc.gz"
    from anyurl import AnyURLError

    async with Client(capture=True) as c:
        with WARCWriter(out) as w:
            try:
                await c.fetch(http(nginx, "/status404"))
            except AnyURLError as exc:
                assert not w.add(http(nginx, "/status404"), exc)
            assert w.add(http(nginx, "/hello.txt"), await c.fetch(http(nginx, "/hello.txt")))
    uris = [rec.rec_headers.get_header("WARC-Target-URI") for rec, _ in records(out)]
    assert http(nginx, "/status404") not in uris and w.failures == 1
    assert "not archived" in caplog.text and "/status404" in caplog.text

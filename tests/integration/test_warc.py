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
from fixtures.servers import _ftp_seed as ftp_seed
from fixtures.servers import _gopher_seed as gopher_seed
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


async def test_capture_through_a_proxy_keeps_the_fields_as_received(nginx: Endpoint, servers: Launcher) -> None:
    squid = servers.get("squid")
    async with Client(proxy=f"http://{squid.host}:{squid.port}", trust_env=False) as c:
        r = await c.fetch(http(nginx, "/cookies"), capture=True)
    cap = r.capture
    assert cap is not None and cap.protocol == "HTTP/1.1" and cap.status == 200
    assert [v for k, v in cap.headers if k == "Set-Cookie"] == ["a=1; Path=/", "b=2; Path=/"]
    assert cap.peer == (squid.host, squid.port)  # the proxy is who answered
    assert cap.body == b"two cookies\n" == r.content


async def test_credentials_are_masked_in_the_request_captured(nginx: Endpoint) -> None:
    user, password = nginx.info["user"], nginx.info["password"]
    async with Client(use_netrc=False) as c:
        r = await c.fetch(f"http://{user}:{password}@{nginx.host}:{nginx.port}/private/hello.txt", capture=True)
    assert r.capture is not None and r.capture.status == 200
    assert ("Authorization", "****") in r.capture.request_headers
    assert all(password not in v for _, v in r.capture.request_headers)


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


# -- FTP and gopher ----------------------------------------------------------


@pytest.fixture(scope="module")
def vsftpd(servers: Launcher) -> Endpoint:
    return servers.get("vsftpd")


@pytest.fixture(scope="module")
def pygopherd(servers: Launcher) -> Endpoint:
    return servers.get("pygopherd")


async def test_ftp_capture_keeps_the_exchange_masked_and_the_listing_as_sent(vsftpd: Endpoint) -> None:
    base = f"ftp://{vsftpd.host}:{vsftpd.port}"
    async with Client(capture=True) as c:
        f = await c.fetch(base + "/pub/crlf.txt;type=a")
        d = await c.fetch(base + "/pub/")
    assert f.capture is not None and d.capture is not None
    assert f.capture.protocol == "FTP" and f.capture.peer == (vsftpd.host, vsftpd.port)
    # TYPE A: the content has its line ends made local, the capture has the server's bytes
    assert f.content == ftp_seed.CRLF_TEXT.replace(b"\r\n", b"\n")
    assert f.capture.body == ftp_seed.CRLF_TEXT
    sent = [line for way, line in f.capture.exchange if way == ">"]
    assert sent[:2] == ["USER anonymous", "PASS ****"]  # a new connection: its login is in the exchange
    assert any(line.startswith("RETR ") for line in sent)
    assert all("@" not in line for line in sent[1:2])  # the anonymous password (an e-mail) masked
    received = [line for way, line in f.capture.exchange if way == "<"]
    assert received[0].startswith("220") and received[-1].startswith("226")
    assert f.capture.status_line is not None and f.capture.status_line.startswith("226")
    # the listing: entries as always, and the bytes the server sent (not anyurl's rendering)
    assert d.entries and {e.name for e in d.entries} >= {"hello.txt", "crlf.txt", "blob.bin"}
    raw = d.capture.body
    assert raw is not None and raw != d.content and b"hello.txt" in raw and raw.endswith(b"\r\n")
    assert d.capture.body_type == "text/plain"
    assert any(line.startswith(("LIST", "MLSD", "NLST")) for way, line in d.capture.exchange if way == ">")


async def test_gopher_menu_capture_is_the_menu_as_sent(pygopherd: Endpoint) -> None:
    url = f"gopher://{pygopherd.host}:{pygopherd.port}/1/"
    async with Client() as c:
        r = await c.fetch(url, capture=True)
        text = await c.fetch(f"gopher://{pygopherd.host}:{pygopherd.port}/0/hello.txt", capture=True)
    cap = r.capture
    assert cap is not None and r.entries
    assert cap.protocol == "gopher" and cap.body_type == "application/gopher-menu"
    assert cap.body is not None and cap.body != r.content
    lines = cap.body.split(b"\r\n")
    assert any(b"\t" in line and line[:1] == b"0" for line in lines)  # menu lines, type, tabs
    assert [way for way, _ in cap.exchange] == [">"] and cap.peer == (pygopherd.host, pygopherd.port)
    assert text.capture is not None and text.capture.body is not None
    assert text.capture.body.startswith(gopher_seed.HELLO.split(b"\n")[0])


async def test_ftp_and_gopher_records_read_back(vsftpd: Endpoint, pygopherd: Endpoint, tmp_path: Path) -> None:
    out = tmp_path / "old.warc.gz"
    ftp_file = f"ftp://{vsftpd.host}:{vsftpd.port}/pub/blob.bin"
    ftp_dir = f"ftp://{vsftpd.host}:{vsftpd.port}/pub/"
    menu = f"gopher://{pygopherd.host}:{pygopherd.port}/1/"
    async with Client(capture=True) as c:
        with WARCWriter(out) as w:
            for u in (ftp_file, ftp_dir, menu):
                w.write(await c.fetch(u))
    recs = records(out)
    kinds = [(rec.rec_type, rec.rec_headers.get_header("WARC-Target-URI")) for rec, _ in recs[1:]]
    assert kinds == [(t, u) for u in (ftp_file, ftp_dir, menu) for t in ("resource", "metadata")]
    blob, listing, gmenu = recs[1], recs[3], recs[5]
    assert blob[1] == ftp_seed.blob()
    assert listing[0].rec_headers.get_header("Content-Type") == "text/plain"
    assert b"blob.bin" in listing[1]
    assert gmenu[0].rec_headers.get_header("Content-Type") == "application/gopher-menu"
    meta = recs[2][1].decode()
    assert "protocol: FTP" in meta and "command: PASS ****" in meta and "reply: 226" in meta
    assert recs[2][0].rec_headers.get_header("WARC-Concurrent-To") == blob[0].rec_headers.get_header("WARC-Record-ID")
    warcio_check(out)
    assert len(cdxj(out)) >= 3


# -- NNTP ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def inn(servers: Launcher) -> Endpoint:
    return servers.get("inn")


def inn_article(inn: Endpoint, name: str) -> dict[str, Any]:
    return next(a for a in inn.info["articles"] if a["message_id"].startswith(f"<{name}."))


async def test_news_capture_and_records(inn: Endpoint, tmp_path: Path) -> None:
    a = inn_article(inn, "dots")
    url = f"nntp://{inn.host}:{inn.port}/{inn.info['group']}/{a['number']}"
    group = f"nntp://{inn.host}:{inn.port}/{inn.info['group']}"
    out = tmp_path / "news.warc.gz"
    async with Client(capture=True, use_netrc=False) as c:
        art = await c.fetch(url)
        listing = await c.fetch(group)
        with WARCWriter(out) as w:
            w.write(art)
            w.write(listing)
    cap = art.capture
    assert cap is not None and cap.protocol == "NNTP" and cap.peer == (inn.host, inn.port)
    assert cap.body == art.content and cap.body.endswith(crlf_dots())  # the article, dot-stuffing undone
    sent = [line for way, line in cap.exchange if way == ">"]
    assert sent[0] == "CAPABILITIES" and sent[-1] == f"ARTICLE {a['number']}"
    assert cap.exchange[0][0] == "<" and cap.exchange[0][1].startswith(("200", "201"))  # the greeting
    assert cap.status_line is not None and cap.status_line.startswith("220")
    lc = listing.capture
    assert lc is not None and listing.entries and lc.body is not None
    assert lc.body.split(b"\t")[0] == str(listing.entries[0].meta["number"]).encode()  # OVER lines as sent
    assert [way for way, line in lc.exchange if line.startswith("GROUP")] == [">"]
    recs = records(out)
    assert [r.rec_type for r, _ in recs] == ["warcinfo", "resource", "metadata", "resource", "metadata"]
    assert recs[1][0].rec_headers.get_header("Content-Type") == "message/rfc822"
    assert recs[1][1] == art.content
    assert f"command: ARTICLE {a['number']}" in recs[2][1].decode()
    warcio_check(out)


def crlf_dots() -> bytes:
    from fixtures.servers.inn import DOT_BODY

    return DOT_BODY.replace("\n", "\r\n").encode()


# -- the command line ----------------------------------------------------------

ANYURL = str(Path(sys.executable).parent / "anyurl")


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([ANYURL, *args], cwd=cwd, capture_output=True, timeout=120)


def test_get_warc_writes_what_it_saved(nginx: Endpoint, vsftpd: Endpoint, tmp_path: Path) -> None:
    urls = [http(nginx, "/big.txt"), http(nginx, "/cookies"), f"ftp://{vsftpd.host}:{vsftpd.port}/pub/blob.bin"]
    done = cli("get", "-q", "-d", "out", "--warc", "get.warc.gz", *urls, http(nginx, "/status404"), cwd=tmp_path)
    assert done.returncode != 0 and b"404" in done.stderr  # the failure reported, the rest archived
    assert (tmp_path / "out" / "blob.bin").read_bytes() == ftp_seed.blob()
    recs = records(tmp_path / "get.warc.gz")
    assert recs[0][0].rec_type == "warcinfo" and b"anyurl get" in recs[0][1]
    archived = {rec.rec_headers.get_header("WARC-Target-URI"): (rec, data) for rec, data in recs
                if rec.rec_type in ("response", "resource")}
    assert set(archived) == set(urls)  # not the 404
    assert archived[urls[0]][1] == www(nginx, "big.txt")
    assert archived[urls[2]][1] == ftp_seed.blob()
    warcio_check(tmp_path / "get.warc.gz")


def test_get_warc_to_stdout_and_rotation(nginx: Endpoint, tmp_path: Path) -> None:
    done = cli("get", http(nginx, "/hello.txt"), "--warc", "one.warc.gz", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout == www(nginx, "hello.txt")
    assert [r.rec_type for r, _ in records(tmp_path / "one.warc.gz")] == ["warcinfo", "response", "request"]
    urls = [http(nginx, f"/many/f{i:04d}.txt") for i in range(8)]
    done = cli("get", "-q", "-d", "many", "--parallel", "1", "--warc", "rot.warc.gz", "--warc-max-size", "3k",
               *urls, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    files = sorted(tmp_path.glob("rot-*.warc.gz"))
    assert len(files) > 1
    seen = [rec.rec_headers.get_header("WARC-Target-URI") for f in files for rec, _ in records(f)
            if rec.rec_type in ("response", "revisit")]
    assert sorted(seen) == sorted(urls)
    warcio_check(*files)


def test_mirror_warc_archives_the_tree_and_its_listings(vsftpd: Endpoint, pygopherd: Endpoint,
                                                        tmp_path: Path) -> None:
    base = f"ftp://{vsftpd.host}:{vsftpd.port}/pub/sub/"
    done = cli("mirror", "-q", base, "tree", "--warc", "ftp.warc.gz", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    kinds = {(rec.rec_type, rec.rec_headers.get_header("WARC-Target-URI")) for rec, _ in
             records(tmp_path / "ftp.warc.gz")}
    assert ("resource", base) in kinds  # the listing, as the server sent it
    files = {u.removesuffix(";type=i") for t, u in kinds if t == "resource"}  # (the URL as fetched)
    assert {base + "deep.txt", base + "subsub/deeper.txt"} <= files
    menu = f"gopher://{pygopherd.host}:{pygopherd.port}/1/"
    done = cli("mirror", "-q", "--max-depth", "0", menu, "hole", "--warc", "gopher.warc.gz", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    recs = records(tmp_path / "gopher.warc.gz")
    menus = [rec for rec, _ in recs if rec.rec_headers.get_header("Content-Type") == "application/gopher-menu"]
    assert [m.rec_headers.get_header("WARC-Target-URI") for m in menus][:1] == [menu]
    warcio_check(tmp_path / "ftp.warc.gz", tmp_path / "gopher.warc.gz")


def test_crawl_warc_archives_each_resource_once(nginx: Endpoint, tmp_path: Path) -> None:
    seed = http(nginx, "/dir/")
    done = cli("crawl", seed, "-d", "site", "--warc", "crawl.warc.gz", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    recs = records(tmp_path / "crawl.warc.gz")
    responses = [rec.rec_headers.get_header("WARC-Target-URI") for rec, _ in recs if rec.rec_type == "response"]
    assert seed in responses and http(nginx, "/dir/sub/deep.txt") in responses
    assert len(responses) == len(set(responses))  # fetched once, archived once
    body = next(data for rec, data in recs if rec.rec_headers.get_header("WARC-Target-URI")
                == http(nginx, "/dir/sub/deep.txt") and rec.rec_type == "response")
    assert body == www(nginx, "dir/sub/deep.txt")
    warcio_check(tmp_path / "crawl.warc.gz")


def test_a_killed_get_leaves_every_record_written_readable(nginx: Endpoint, tmp_path: Path) -> None:
    import signal
    import time

    from tests.procs import spawn

    urls = [http(nginx, "/big.txt"), http(nginx, "/cookies"), http(nginx, "/stall")]  # /stall never ends
    out = tmp_path / "killed.warc.gz"
    with spawn([ANYURL, "get", "-q", "-d", "out", "--parallel", "1", "--warc", str(out), *urls], cwd=tmp_path,
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as proc:
        deadline = time.monotonic() + 60
        while True:  # until both finished transfers are in the file (each record flushed whole)
            try:
                uris = [r.rec_headers.get_header("WARC-Target-URI") for r, _ in records(out)
                        if r.rec_type == "request"]
            except Exception:  # noqa: BLE001 - a record being written: look again
                uris = []
            if len(uris) == 2:
                break
            assert proc.poll() is None and time.monotonic() < deadline, uris
            time.sleep(0.1)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    assert [r.rec_type for r, _ in records(out)] == ["warcinfo", "response", "request", "response", "request"]
    warcio_check(out)


async def test_a_short_http_body_is_never_archived(tmp_path: Path) -> None:
    """A server that announces 100 bytes and closes after 10: the fetch fails, nothing is written."""
    import asyncio

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\nContent-Type: text/plain\r\n\r\n0123456789")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    out = tmp_path / "short.warc.gz"
    from anyurl import TruncatedTransfer

    try:
        with WARCWriter(out) as w:
            async with Client(on_capture=w.captured) as c:
                with pytest.raises(TruncatedTransfer):
                    await c.fetch(f"http://127.0.0.1:{port}/x")
                async with c.open(f"http://127.0.0.1:{port}/y") as body:
                    with pytest.raises(TruncatedTransfer):
                        async for _ in body:
                            pass
    finally:
        server.close()
        await server.wait_closed()
    assert w.records == 0


async def test_a_batch_archives_through_the_archive_sink(nginx: Endpoint, tmp_path: Path) -> None:
    from anyurl.batch import Batch
    from anyurl.warc import Archive

    urls = [http(nginx, "/hello.txt"), http(nginx, "/status404"), http(nginx, "/cookies")]
    out = tmp_path / "batch.warc.gz"
    async with Client() as c:
        with WARCWriter(out) as w:
            async with Batch(c, urls, Archive(w)) as results:
                got = {str(r.given): r async for r in results}
    assert got[urls[1]].error is not None and got[urls[0]].ok and got[urls[2]].ok
    assert got[urls[0]].response is None  # nothing kept in memory
    assert sorted(rec.rec_headers.get_header("WARC-Target-URI") for rec, _ in records(out)
                  if rec.rec_type == "response") == sorted([urls[0], urls[2]])
    assert w.failures == 1
    warcio_check(out)


# -- redirects ------------------------------------------------------------------


async def test_each_redirect_hop_is_captured_and_written_as_received(nginx: Endpoint, tmp_path: Path) -> None:
    start, final = http(nginx, "/redirect"), http(nginx, "/hello.txt")
    out = tmp_path / "redirect.warc.gz"
    async with Client() as c:
        r = await c.fetch(start, capture=True)
    cap = r.capture
    assert cap is not None and cap.url == final and cap.status == 200
    assert len(cap.previous) == 1
    hop = cap.previous[0]
    assert hop.url == start and hop.status == 301 and hop.status_line == "HTTP/1.1 301 Moved Permanently"
    assert ("Location", f"http://{nginx.host}:{nginx.port}/hello.txt") in hop.headers or \
        ("Location", "/hello.txt") in hop.headers
    assert hop.method == "GET" and hop.target == "/redirect"
    assert hop.body is not None and b"301 Moved Permanently" in hop.body  # nginx's own note, as sent
    assert hop.complete and hop.started is not None and cap.started is not None and hop.started <= cap.started
    with WARCWriter(out) as w:
        w.write(r)
    got = records(out, raw=True)
    kinds = [(rec.rec_type, rec.rec_headers.get_header("WARC-Target-URI")) for rec, _ in got[1:]]
    assert kinds == [("response", start), ("request", start), ("response", final), ("request", final)]
    assert got[1][0].http_headers.get_statuscode() == "301"
    assert got[1][0].http_headers.get_header("Location") is not None
    warcio_check(out)
    index = [line for line in cdxj(out) if '"status": "301"' in line]
    assert len(index) == 1 and "/redirect" in index[0]


async def test_redirect_hops_to_another_handler_are_kept_before_it(nginx: Endpoint) -> None:
    # /to-other-scheme: http -> https on another port, each hop captured
    async with Client(http=HTTPOptions(cafile=nginx.info["ca"])) as c:
        r = await c.fetch(http(nginx, "/to-other-scheme"), capture=True)
    cap = r.capture
    assert cap is not None and cap.url == https(nginx, "/hello.txt") and cap.tls_version is not None
    assert [(p.url, p.status) for p in cap.previous] == [(http(nginx, "/to-other-scheme"), 302)]


async def test_redirect_hops_over_http2_and_through_a_proxy_are_captured(nginx: Endpoint, servers: Launcher,
                                                                         tmp_path: Path) -> None:
    squid = servers.get("squid")
    out = tmp_path / "hops.warc.gz"
    async with Client(http=HTTPOptions(cafile=nginx.info["ca"])) as c:
        h2 = await c.fetch(https(nginx, "/redirect"), capture=True)
    async with Client(proxy=f"http://{squid.host}:{squid.port}", trust_env=False) as c:
        proxied = await c.fetch(http(nginx, "/redirect"), capture=True)
    for r, protocol, peer in ((h2, "HTTP/2", (nginx.host, nginx.info["tls_port"])),
                              (proxied, "HTTP/1.1", (squid.host, squid.port))):
        cap = r.capture
        assert cap is not None and cap.status == 200 and r.content == b"hello over http\n"
        assert [(p.protocol, p.status, p.peer) for p in cap.previous] == [(protocol, 301, peer)]
        hop = cap.previous[0]
        assert hop.body is not None and b"301 Moved Permanently" in hop.body
        assert any(k.lower() == "location" for k, _ in hop.headers)
    with WARCWriter(out) as w:
        w.write(h2)
        w.write(proxied)
    statuses = [rec.http_headers.get_statuscode() for rec, _ in records(out) if rec.rec_type in ("response", "revisit")]
    assert statuses == ["301", "200", "301", "200"]
    warcio_check(out)

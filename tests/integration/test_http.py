"""http: and https: against a real nginx (fixtures/servers/nginx.py).

Each test asserts the bytes that arrived, what nginx logged (request line,
status, Range and Accept-Encoding headers, the connection) and the error
raised. The only faults not produced by nginx itself are a listening socket
that never answers (for the connect/read timeout) and a closed port.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import socket
import ssl
import sys
import time
import tracemalloc
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fixtures.launcher import Endpoint, Launcher
from fixtures.servers.nginx import ARCHIVE
from tests.hostile.fakes.http_faults import FaultServer, response
from tests.procs import arun

from anyurl import (
    AccessDenied,
    AnyURLError,
    Client,
    ConnectError,
    FetchTimeout,
    Limits,
    OverlongTransfer,
    Policy,
    ProtocolError,
    ResourceNotFound,
    Retry,
    TemporaryFailure,
    Timeouts,
    TruncatedTransfer,
    UnsafeURL,
)
from anyurl.handlers.http import HTTPOptions
from anyurl.transfer.download import PART_SUFFIX, download

LOG_LINE = re.compile(
    r'(?P<addr>\S+) - (?P<user>\S+) \[[^\]]+\] "(?P<request>[^"]*)" (?P<status>\d+) (?P<bytes>\d+) '
    r'"(?P<range>[^"]*)" "(?P<agent>[^"]*)" "(?P<encoding>[^"]*)" c=(?P<conn>\d+)'
    r'(?: t=(?P<end>[\d.]+) d=(?P<took>[\d.]+))?')


# ANYURL_HTTP_TESTS=h2 runs this module against nginx's https listener, where anyurl speaks
# HTTP/2 (ALPN): the url fixture gives https URLs and every default TLS context trusts the
# fixture's certificate (SSL_CERT_FILE). The same tests, the same answers, another protocol.
H2 = os.environ.get("ANYURL_HTTP_TESTS") == "h2"
V = "HTTP/2.0" if H2 else "HTTP/1.1"  # the protocol nginx logs in the request line
only_plain = pytest.mark.skipif(H2, reason="about plain http or HTTP/1.1 framing (a FaultServer)")


@pytest.fixture(scope="module")
def nginx(servers: Launcher) -> Iterator[Endpoint]:
    ep = servers.get("nginx")
    if not H2:
        yield ep
        return
    before = os.environ.get("SSL_CERT_FILE")
    os.environ["SSL_CERT_FILE"] = ep.info["ca"]
    try:
        yield ep
    finally:
        if before is None:
            del os.environ["SSL_CERT_FILE"]
        else:
            os.environ["SSL_CERT_FILE"] = before


def _origin(nginx: Endpoint, userinfo: str = "") -> str:
    if H2:
        return f"https://{userinfo}{nginx.host}:{nginx.info['tls_port']}"
    return f"http://{userinfo}{nginx.host}:{nginx.port}"


def _read_from(path: Path, start: int) -> str:
    with open(path, "rb") as f:
        f.seek(start)
        return f.read().decode()


class AccessLog:
    """The lines nginx appended to its access log since this object was made."""

    def __init__(self, path: str) -> None:
        self.path = Path(path)
        self.start = self.path.stat().st_size if self.path.exists() else 0
        self.since = time.time()

    def _ours(self, line: dict[str, str]) -> bool:
        # nginx logs a request when it ends: a request an earlier test left running can be
        # logged in our window, so keep only requests that started after we began (ms clock)
        if line.get("end") is None:
            return True
        return float(line["end"]) - float(line["took"]) >= self.since - 0.002

    async def lines(self, expect: int = 0) -> list[dict[str, str]]:
        # nginx writes the line after the response is sent: allow it a moment
        for _ in range(100):
            text = _read_from(self.path, self.start)
            found = [d for d in (m.groupdict() for m in map(LOG_LINE.match, text.splitlines()) if m)
                     if self._ours(d)]
            if len(found) >= expect:
                return found
            await asyncio.sleep(0.02)
        return found


@pytest.fixture
def log(nginx: Endpoint) -> AccessLog:
    return AccessLog(nginx.info["access_log"])


@pytest.fixture
def url(nginx: Endpoint) -> Callable[[str], str]:
    return lambda path: _origin(nginx) + path


@pytest.fixture
def tls(nginx: Endpoint) -> HTTPOptions:
    return HTTPOptions(ssl_context=ssl.create_default_context(cafile=nginx.info["ca"]))


@pytest.fixture
async def client() -> AsyncIterator[Client]:
    async with Client(use_netrc=False) as c:
        yield c


def www(nginx: Endpoint, name: str) -> bytes:
    return (Path(nginx.info["www"]) / name).read_bytes()


# -- content ------------------------------------------------------------------


async def test_text_file_bytes_metadata_and_log(client: Client, url: Any, nginx: Endpoint,
                                                log: AccessLog) -> None:
    r = await client.fetch(url("/hello.txt"))
    assert r.content == b"hello over http\n" == www(nginx, "hello.txt")
    assert r.content_type == "text/plain"
    assert r.meta["status"] == 200 and r.meta["headers"]["Content-Length"] == "16"
    assert r.meta["redirects"] == [] and r.meta["url"] == url("/hello.txt")
    [line] = await log.lines(1)
    assert line["request"] == f"GET /hello.txt {V}" and line["status"] == "200"
    assert line["agent"] == client.user_agent and line["range"] == "-"


async def test_binary_file_and_size(client: Client, url: Any, nginx: Endpoint) -> None:
    async with client.open(url("/dir/blob.bin")) as body:
        assert body.size == 5120
        data = await body.read()
    assert data == bytes(range(256)) * 20 == www(nginx, "dir/blob.bin")


async def test_gzip_is_decompressed_by_default(client: Client, url: Any, nginx: Endpoint,
                                               log: AccessLog) -> None:
    r = await client.fetch(url("/big.txt"))
    assert r.content == www(nginx, "big.txt")
    assert r.meta["headers"]["Content-Encoding"] == "gzip"
    [line] = await log.lines(1)
    assert "gzip" in line["encoding"]
    assert int(line["bytes"]) < len(r.content) // 4  # what crossed the wire was compressed


async def test_decompress_off_gives_the_wire_bytes(url: Any, nginx: Endpoint) -> None:
    import gzip

    async with Client(http=HTTPOptions(decompress=False)) as c:
        r = await c.fetch(url("/big.txt"))
    assert r.content[:2] == b"\x1f\x8b"
    assert gzip.decompress(r.content) == www(nginx, "big.txt")


async def test_path_is_sent_exactly_as_written(client: Client, url: Any, nginx: Endpoint,
                                               log: AccessLog) -> None:
    a = await client.fetch(url("/with%20space.txt"))
    b = await client.fetch(url("/dir/%62lob.bin"))
    assert a.content == www(nginx, "with space.txt")
    assert b.content == www(nginx, "dir/blob.bin")
    lines = await log.lines(2)
    assert [x["request"] for x in lines] == [f"GET /with%20space.txt {V}", f"GET /dir/%62lob.bin {V}"]


async def test_directory_listing_is_the_server_page(client: Client, url: Any) -> None:
    r = await client.fetch(url("/dir/"))
    assert r.content_type == "text/html"
    assert b'<a href="blob.bin">' in r.content and b'<a href="sub/">' in r.content


# -- resume -------------------------------------------------------------------


async def test_offset_sends_range_and_gets_206(client: Client, url: Any, nginx: Endpoint,
                                               log: AccessLog) -> None:
    async with client.open(url("/dir/blob.bin"), offset=1000) as body:
        assert body.size == 5120 - 1000 and body.offset == 1000
        data = await body.read()
        assert body.meta["status"] == 206 and "range_ignored" not in body.meta
    assert data == www(nginx, "dir/blob.bin")[1000:]
    [line] = await log.lines(1)
    assert line["range"] == "bytes=1000-" and line["status"] == "206"
    assert line["encoding"] == "identity"  # offsets count stored bytes, not gzip bytes


async def test_server_ignoring_range_falls_back_to_skipping(client: Client, url: Any, nginx: Endpoint,
                                                            log: AccessLog) -> None:
    async with client.open(url("/norange/dir/blob.bin"), offset=3000) as body:
        assert body.size == 5120 - 3000
        data = await body.read()
        assert body.meta["status"] == 200 and body.meta["range_ignored"] is True
    assert data == www(nginx, "dir/blob.bin")[3000:]
    [line] = await log.lines(1)
    assert line["range"] == "bytes=3000-" and line["status"] == "200" and line["bytes"] == "5120"


async def test_offset_at_end_gives_empty_body(client: Client, url: Any, log: AccessLog) -> None:
    r = await client.fetch(url("/hello.txt"), offset=16)
    assert r.content == b""
    [line] = await log.lines(1)
    assert line["status"] == "416"


async def test_offset_past_end_is_an_error(client: Client, url: Any) -> None:
    with pytest.raises(ProtocolError, match="offset 99"):
        await client.fetch(url("/hello.txt"), offset=99)


# -- redirects ----------------------------------------------------------------


async def test_redirect_is_followed(client: Client, url: Any, log: AccessLog) -> None:
    r = await client.fetch(url("/redirect"))
    assert r.content == b"hello over http\n"
    assert r.meta["redirects"] == [url("/redirect")] and r.meta["url"] == url("/hello.txt")
    lines = await log.lines(2)
    assert [(x["request"], x["status"]) for x in lines] == [
        (f"GET /redirect {V}", "301"), (f"GET /hello.txt {V}", "200")]


async def test_relative_redirect(client: Client, url: Any) -> None:
    r = await client.fetch(url("/relative-redirect"))
    assert r.content == b"deep file\n" and r.meta["url"] == url("/dir/sub/deep.txt")


async def test_redirect_loop_is_bounded(url: Any, log: AccessLog) -> None:
    async with Client(limits=Limits(max_redirects=3)) as c:
        with pytest.raises(ProtocolError, match="too many redirects") as info:
            await c.fetch(url("/redirect-loop"))
    # (HTTP/2 has no reason phrase: anyurl gives the standard one)
    assert info.value.reply == ("302 Found" if H2 else "302 Moved Temporarily")
    assert len(await log.lines(4)) == 4  # the first request and 3 followed hops, no more


@pytest.mark.parametrize("path, scheme", [("/to-ftp", "ftp"), ("/to-file", "file"), ("/to-gopher", "gopher")])
async def test_cross_scheme_redirect_is_refused(client: Client, url: Any, path: str, scheme: str,
                                                log: AccessLog) -> None:
    with pytest.raises(UnsafeURL, match=f"redirect from {'https' if H2 else 'http'} to {scheme} scheme refused") as info:
        await client.fetch(url(path))
    assert info.value.url == url(path)
    assert [x["status"] for x in await log.lines(1)] == ["302"]


async def test_cross_scheme_redirect_allowed_by_policy_but_never_into_file(url: Any, log: AccessLog) -> None:
    # with the policy switch a redirect into gopher is followed (nothing listens on 127.0.0.1:70)...
    async with Client(policy=Policy(allow_cross_scheme_redirects=True)) as c:
        with pytest.raises(AnyURLError) as info:
            await c.fetch(url("/to-gopher"))
        assert not isinstance(info.value, UnsafeURL) and str(info.value.url).startswith("gopher://127.0.0.1/")
        # ...but /to-file (file:///etc/passwd) never reads the local file, whatever the policy
        for call in (c.fetch, c.stat):
            with pytest.raises(UnsafeURL, match="to file scheme refused .*never leads to local files"):
                await call(url("/to-file"))
        with pytest.raises(UnsafeURL, match="never leads to local files"):
            async with c.open(url("/to-file")):
                pass
    assert [x["status"] for x in await log.lines(4)] == ["302"] * 4


async def test_https_with_trusted_ca(nginx: Endpoint, tls: HTTPOptions, log: AccessLog) -> None:
    async with Client(http=tls) as c:
        r = await c.fetch(f"https://127.0.0.1:{nginx.info['tls_port']}/hello.txt")
    assert r.content == b"hello over http\n"
    assert (await log.lines(1))[0]["request"] == "GET /hello.txt HTTP/1.1"  # (its own context offers no h2)


@only_plain  # (in the h2 run every default context trusts the certificate)
async def test_https_untrusted_certificate_is_a_connect_error(client: Client, nginx: Endpoint) -> None:
    with pytest.raises(ConnectError, match="certificate"):
        await client.fetch(f"https://127.0.0.1:{nginx.info['tls_port']}/hello.txt")


async def test_https_to_http_redirect_refused(nginx: Endpoint, tls: HTTPOptions, log: AccessLog) -> None:
    async with Client(http=tls) as c:
        with pytest.raises(UnsafeURL, match="https to http"):
            await c.fetch(f"https://127.0.0.1:{nginx.info['tls_port']}/to-http")
    assert len(await log.lines(1)) == 1


async def test_https_downgrade_allowed_by_policy_drops_credentials(nginx: Endpoint, tls: HTTPOptions,
                                                                   log: AccessLog) -> None:
    async with Client(http=tls, policy=Policy(allow_https_downgrade=True)) as c:
        r = await c.fetch(f"https://urltest:urltest-pw@127.0.0.1:{nginx.info['tls_port']}/to-http")
    assert r.content == b"hello over http\n"
    first, second = await log.lines(2)
    assert first["user"] == "urltest"  # sent to the origin it was given for
    assert second["user"] == "-"  # ...and not to another origin


# -- status codes, auth -------------------------------------------------------


@pytest.mark.parametrize("status, exc, reply", [
    (404, ResourceNotFound, "404 Not Found"),
    (410, ResourceNotFound, "410 Gone"),
    (401, AccessDenied, "401 Unauthorized"),
    (403, AccessDenied, "403 Forbidden"),
    (500, ProtocolError, "500 Internal Server Error"),
    (503, TemporaryFailure, "503 Service " + ("Unavailable" if H2 else "Temporarily Unavailable")),
    (418, ProtocolError, "418"),
])
async def test_status_mapping(client: Client, url: Any, status: int, exc: type[Exception],
                              reply: str) -> None:
    with pytest.raises(exc) as info:
        await client.fetch(url(f"/status{status}"))
    assert info.value.reply.startswith(reply)  # type: ignore[attr-defined]
    if status == 500:
        assert not isinstance(info.value, TemporaryFailure)
    assert url(f"/status{status}") in str(info.value)


async def test_missing_file(client: Client, url: Any) -> None:
    with pytest.raises(FileNotFoundError):  # ResourceNotFound is one
        await client.fetch(url("/no/such/file"))


async def test_basic_auth_from_userinfo(client: Client, nginx: Endpoint, log: AccessLog) -> None:
    r = await client.fetch(_origin(nginx, "urltest:urltest-pw@") + "/private/hello.txt")
    assert r.content == b"hello over http\n"
    [line] = await log.lines(1)
    assert line["user"] == "urltest" and line["status"] == "200"


async def test_wrong_password_is_access_denied_and_masked(client: Client, nginx: Endpoint) -> None:
    with pytest.raises(AccessDenied) as info:
        await client.fetch(_origin(nginx, "urltest:wrong@") + "/private/hello.txt")
    assert "wrong" not in str(info.value) and "****" in str(info.value)


async def test_client_credentials_answer_a_basic_challenge(nginx: Endpoint, url: Any,
                                                           log: AccessLog) -> None:
    creds = {f"{nginx.host}:{nginx.info['tls_port'] if H2 else nginx.port}": ("urltest", "urltest-pw")}
    async with Client(credentials=creds, use_netrc=False) as c:
        r = await c.fetch(url("/private/hello.txt"))
    assert r.content == b"hello over http\n"
    assert [(x["user"], x["status"]) for x in await log.lines(2)] == [("-", "401"), ("urltest", "200")]


# -- refusals before any byte is sent ----------------------------------------


@pytest.mark.parametrize("rest", ["/a%0d%0aX-Injected:%201", "/hello.txt?q=%0aHost:%20evil", "/a%00b"])
async def test_control_bytes_refused_before_connecting(client: Client, url: Any, log: AccessLog,
                                                       rest: str) -> None:
    with pytest.raises(UnsafeURL, match="after decoding"):
        await client.fetch(url(rest))
    await asyncio.sleep(0.1)
    assert await log.lines(0) == []


async def test_control_bytes_in_extra_headers_refused(client: Client, url: Any, log: AccessLog) -> None:
    with pytest.raises(UnsafeURL, match="header X-Note"):
        await client.fetch(url("/hello.txt"), options=HTTPOptions(headers={"X-Note": "a\r\nX-Injected: 1"}))
    r = await client.fetch(url("/hello.txt"), options=HTTPOptions(headers={"X-Note": "fine"}))
    assert r.content == b"hello over http\n"
    assert len(await log.lines(1)) == 1  # only the second request reached nginx


# -- faults: timeouts, refused, truncated -------------------------------------


async def test_read_timeout_mid_body(url: Any) -> None:
    async with Client(timeouts=Timeouts(read=0.5)) as c:
        async with c.open(url("/stall")) as body:
            first = b""
            with pytest.raises(FetchTimeout):
                async for chunk in body:
                    first += chunk
    assert first == b"first line\n"


async def test_server_that_never_answers_times_out() -> None:
    with socket.socket() as hole:  # accepts into the backlog, never replies
        hole.bind(("127.0.0.1", 0))
        hole.listen(8)
        port = hole.getsockname()[1]
        async with Client(timeouts=Timeouts(connect=2, read=0.5)) as c:
            with pytest.raises(FetchTimeout, match="timed out"):
                await c.fetch(f"http://127.0.0.1:{port}/x")


async def test_connection_refused(client: Client) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ConnectError, match="127.0.0.1"):
        await client.fetch(f"http://127.0.0.1:{port}/x")


async def test_file_truncated_while_nginx_sends_it_is_truncated_transfer(client: Client, url: Any,
                                                                        nginx: Endpoint) -> None:
    path = Path(nginx.info["www"]) / "shrinking.bin"
    path.write_bytes(b"x" * (64 << 20))
    path.chmod(0o644)
    try:
        got = 0
        with pytest.raises(TruncatedTransfer):
            async with client.open(url("/shrinking.bin"), offset=0) as body:
                assert body.size == 64 << 20
                async for chunk in body:
                    if got == 0:
                        os.truncate(path, 1 << 20)  # nginx now hits EOF before Content-Length
                    got += len(chunk)
        assert got < 64 << 20
        nginx_out = (Path(nginx.info["workdir"]) / "process0.out").read_text(errors="replace")
        assert "was truncated" in nginx_out or H2  # (nginx says it so only on HTTP/1.1)
    finally:
        path.unlink()


# -- streaming, pooling -------------------------------------------------------


def _write_large(path: Path, mib: int) -> hashlib._Hash:
    """A *mib* MiB file whose every MiB differs (so order matters); its sha256."""
    block = bytes(range(256)) * 4096
    want = hashlib.sha256()
    with open(path, "wb") as f:
        for i in range(mib):
            piece = i.to_bytes(4, "big") + block[4:]
            f.write(piece)
            want.update(piece)
    path.chmod(0o644)
    return want


@pytest.mark.slow
async def test_large_file_streams_in_bounded_memory(url: Any, nginx: Endpoint) -> None:
    path = Path(nginx.info["www"]) / "large.bin"
    want = _write_large(path, 200)
    chunk_size = 1 << 20
    try:
        async with Client(limits=Limits(chunk_size=chunk_size), http=HTTPOptions(decompress=False)) as c:
            got = hashlib.sha256()
            total = biggest = 0
            tracemalloc.start()
            try:
                async with c.open(url("/large.bin")) as body:
                    assert body.size == 200 << 20
                    async for chunk in body:
                        biggest = max(biggest, len(chunk))
                        total += len(chunk)
                        got.update(chunk)
                _, peak = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
        assert total == 200 << 20 and got.digest() == want.digest()
        assert biggest <= chunk_size
        assert peak < 16 << 20, f"peak traced memory {peak / 2**20:.1f} MiB"
    finally:
        path.unlink()


async def test_pool_reuses_at_most_per_host_connections(url: Any, nginx: Endpoint, log: AccessLog) -> None:
    names = [f"/many/f{i:04d}.txt" for i in range(60)]
    async with Client(limits=Limits(per_host=4)) as c:
        results = await asyncio.gather(*(c.fetch(url(n)) for n in names))
    for n, r in zip(names, results, strict=True):
        assert r.content == www(nginx, n.lstrip("/"))
    lines = await log.lines(60)
    assert len(lines) == 60
    assert len({x["conn"] for x in lines}) <= 4


async def test_closing_an_unread_body_then_reusing_the_client(client: Client, url: Any) -> None:
    async with client.open(url("/big.txt")) as body:
        assert body.meta["status"] == 200  # nothing read
    r = await client.fetch(url("/hello.txt"))
    assert r.content == b"hello over http\n"


async def test_non_http_url_object_refused_by_handler(client: Client) -> None:
    from anyurl.handlers.http import HTTPHandler
    from anyurl.urls import FileURL

    with pytest.raises(Exception, match="cannot open"):
        await HTTPHandler(client).open(client.request(FileURL("file", "", "etc/passwd")))


# -- stat (HEAD) -----------------------------------------------------------------


async def test_stat_is_one_head_with_size_date_type_and_etag(client: Client, url: Any, nginx: Endpoint,
                                                              log: AccessLog) -> None:
    st = await client.stat(url("/dir/blob.bin"))
    path = Path(nginx.info["www"]) / "dir/blob.bin"
    assert st.size == 5120 == path.stat().st_size and st.kind == "file"
    assert st.modified is not None and int(st.modified.timestamp()) == int(path.stat().st_mtime)
    assert st.content_type == "application/octet-stream"
    assert st.meta["etag"] == st.meta["headers"]["Etag"] and st.meta["etag"].startswith('"')
    assert st.meta["accept_ranges"] == "bytes"
    [line] = await log.lines(1)
    assert line["request"] == f"HEAD /dir/blob.bin {V}" and line["status"] == "200"


async def test_stat_gives_the_stored_size_of_a_file_nginx_would_gzip(client: Client, url: Any, nginx: Endpoint,
                                                                     log: AccessLog) -> None:
    st = await client.stat(url("/big.txt"))
    assert st.size == len(www(nginx, "big.txt")) and "content_encoding" not in st.meta
    [line] = await log.lines(1)
    assert line["encoding"] == "identity"


async def test_stat_follows_redirects_and_maps_errors(client: Client, url: Any, log: AccessLog) -> None:
    st = await client.stat(url("/redirect"))
    assert st.size == 16 and st.meta["redirects"] == [url("/redirect")] and st.meta["url"] == url("/hello.txt")
    assert [x["request"] for x in await log.lines(2)] == [f"HEAD /redirect {V}", f"HEAD /hello.txt {V}"]
    with pytest.raises(ResourceNotFound):
        await client.stat(url("/nope"))
    with pytest.raises(UnsafeURL):
        await client.stat(url("/to-file"))


# -- ranges ------------------------------------------------------------------------


async def test_offset_and_length_send_a_closed_range(client: Client, url: Any, nginx: Endpoint,
                                                     log: AccessLog) -> None:
    async with client.open(url("/dir/blob.bin"), offset=1000, length=24) as body:
        assert body.size == 24 and body.resumable
        data = await body.read()
    assert data == www(nginx, "dir/blob.bin")[1000:1024]
    # a length past the end gets the rest
    tail = await client.fetch(url("/dir/blob.bin"), offset=5000, length=1000)
    assert tail.content == www(nginx, "dir/blob.bin")[5000:]
    lines = await log.lines(2)
    assert [(x["range"], x["status"], x["bytes"]) for x in lines] == [("bytes=1000-1023", "206", "24"),
                                                                      ("bytes=5000-5999", "206", "120")]


async def test_plain_get_is_resumable_when_the_server_takes_ranges(client: Client, url: Any) -> None:
    async with client.open(url("/dir/blob.bin")) as body:
        assert body.resumable
    async with client.open(url("/norange/dir/blob.bin")) as body:
        assert not body.resumable  # nginx "max_ranges 0" sends no Accept-Ranges


# -- what the server stores vs what crossed the wire compressed (issue 11) -----------


async def test_stored_tar_gz_labelled_content_encoding_keeps_its_bytes(client: Client, url: Any, nginx: Endpoint,
                                                                       tmp_path: Path) -> None:

    r = await client.fetch(url("/archives/data.tar.gz"))
    assert r.meta["headers"]["Content-Encoding"] == "gzip" and r.content_type == "application/x-tar"
    assert r.content == ARCHIVE == www(nginx, "archives/data.tar.gz") and r.meta["content_encoding"] == "gzip"
    dest = await download(client, url("/archives/data.tar.gz"), tmp_path / "data.tar.gz")
    assert dest.read_bytes() == ARCHIVE
    # the suffix says it: a text file stored gzipped stays gzipped
    notes = await client.fetch(url("/archives/text/notes.txt.gz"))
    assert notes.content == www(nginx, "archives/text/notes.txt.gz") and notes.content[:2] == b"\x1f\x8b"
    # no suffix, but the type is a gzip file
    dl = await client.fetch(url("/download"))
    assert dl.content == ARCHIVE and dl.content_type == "application/x-gzip"


async def test_transfer_gzip_is_decoded_only_when_anyurl_asked_for_it(client: Client, url: Any, nginx: Endpoint,
                                                                      log: AccessLog) -> None:
    r = await client.fetch(url("/big.txt"))
    assert r.content == www(nginx, "big.txt") and r.meta["decoded"] == "gzip"
    # a caller's own Accept-Encoding asking for br only: nginx sends identity here, and nothing is decoded
    own = await client.fetch(url("/big.txt"), options=HTTPOptions(headers={"Accept-Encoding": "br"}))
    assert own.content == www(nginx, "big.txt") and "decoded" not in own.meta
    lines = await log.lines(2)
    assert [x["encoding"] for x in lines] == ["gzip, deflate", "br"]


# -- a misbehaving server (tests/hostile/fakes/http_faults.py) -------------------------------


async def test_206_to_a_plain_get_is_an_error(client: Client, tmp_path: Path) -> None:

    short = response("206 Partial Content", {"Content-Range": "bytes 0-9/100", "Content-Length": "10"},
                     b"0123456789")
    async with FaultServer({"/f": short}) as srv:
        with pytest.raises(ProtocolError, match="206 Partial Content.*whole resource"):
            await client.fetch(srv.url("/f"))
        # the -c path: resuming a download that has no part file yet asks for the whole file
        with pytest.raises(ProtocolError, match="206"):
            await download(client, srv.url("/f"), tmp_path / "f", resume=True)
    assert "range" not in srv.headers_of(0) and "range" not in srv.headers_of(1)
    assert not (tmp_path / "f").exists()
    assert not (tmp_path / ("f" + PART_SUFFIX)).exists() or (tmp_path / ("f" + PART_SUFFIX)).stat().st_size == 0


async def test_cli_get_c_refuses_a_short_206(tmp_path: Path) -> None:


    short = response("206 Partial Content", {"Content-Range": "bytes 0-9/100", "Content-Length": "10"},
                     b"0123456789")
    async with FaultServer({"/f.bin": short}) as srv:
        rc, _, err = await arun([str(Path(sys.executable).parent / "anyurl"), "get", "-q", "-c", srv.url("/f.bin"),
                                 "-o", str(tmp_path / "f.bin")], within=60)
    assert rc != 0
    assert b"206" in err and b"Traceback" not in err
    assert not (tmp_path / "f.bin").exists()


async def test_206_with_another_range_than_asked_is_an_error(client: Client) -> None:

    # asked bytes=5- of a 100-byte file; the server sends only 5-9
    part = response("206 Partial Content", {"Content-Range": "bytes 5-9/100", "Content-Length": "5"}, b"56789")
    async with FaultServer({"/f": part}) as srv:
        with pytest.raises(ProtocolError, match="asked for bytes 5-, server sent Content-Range 'bytes 5-9/100'"):
            await client.fetch(srv.url("/f"), offset=5)
    assert srv.headers_of(0)["range"] == "bytes=5-"


async def test_body_longer_than_its_content_range_is_an_error(client: Client) -> None:

    # no Content-Length, the connection closes: 20 bytes where Content-Range announced 10
    long = response("206 Partial Content", {"Content-Range": "bytes 5-14/15", "Connection": "close"},
                    b"x" * 20)
    disagree = response("206 Partial Content", {"Content-Range": "bytes 5-14/15", "Content-Length": "12"},
                        b"x" * 12)
    async with FaultServer({"/long": long, "/disagree": disagree}) as srv:
        with pytest.raises(OverlongTransfer, match="more than the 10 bytes it announced"):
            await client.fetch(srv.url("/long"), offset=5)
        with pytest.raises(ProtocolError, match="Content-Length 12 disagrees with Content-Range"):
            await client.fetch(srv.url("/disagree"), offset=5)


async def test_body_longer_than_its_content_length_is_an_error(client: Client) -> None:

    long = response("200 OK", {"Content-Length": "10", "Connection": "close"}, b"0123456789ABCDEFGHIJ")
    async with FaultServer({"/long": long}) as srv:
        with pytest.raises(OverlongTransfer, match="more than the response announced"):
            await client.fetch(srv.url("/long"))


async def test_retry_after_is_kept_and_honoured(client: Client) -> None:

    answers = iter([
        response("503 Service Unavailable", {"Retry-After": "1", "Content-Length": "0", "Connection": "close"}),
        response("200 OK", {"Content-Length": "2", "Connection": "close"}, b"ok"),
    ])
    date = response("429 Too Many Requests", {"Retry-After": "Fri, 31 Dec 2100 23:59:59 GMT",
                                              "Content-Length": "0", "Connection": "close"})
    async with FaultServer({"/busy": lambda _: next(answers), "/later": date}) as srv:
        t0 = time.monotonic()
        r = await client.fetch(srv.url("/busy"), retry=Retry(attempts=2, backoff=0.01))
        assert r.content == b"ok" and time.monotonic() - t0 >= 0.9  # waited the server's second
        with pytest.raises(TemporaryFailure) as info:
            await client.fetch(srv.url("/later"))
    assert info.value.retry_after is not None and info.value.retry_after > 365 * 86400


async def test_interrupted_body_is_resumed_with_a_range(client: Client) -> None:

    data = bytes(range(100))
    answers = iter([
        response("200 OK", {"Content-Length": "100", "Accept-Ranges": "bytes", "Connection": "close"}, data[:40]),
        response("206 Partial Content", {"Content-Range": "bytes 40-99/100", "Content-Length": "60",
                                         "Connection": "close"}, data[40:]),
    ])
    async with FaultServer({"/f": lambda _: next(answers)}) as srv:
        r = await client.fetch(srv.url("/f"), retry=Retry(attempts=2, backoff=0))
    assert r.content == data
    assert "range" not in srv.headers_of(0) and srv.headers_of(1)["range"] == "bytes=40-"


async def test_stat_falls_back_to_a_one_byte_range_when_head_is_refused(client: Client) -> None:
    def answer(request: str) -> bytes:
        if request.startswith("HEAD "):
            return response("405 Method Not Allowed", {"Content-Length": "0", "Connection": "close"})
        return response("206 Partial Content", {"Content-Range": "bytes 0-0/1234", "Content-Length": "1",
                                                "Connection": "close"}, b"x")

    async with FaultServer({"/f": answer}) as srv:
        st = await client.stat(srv.url("/f"))
    assert st.size == 1234 and st.meta["status"] == 206
    assert [r.split(" ")[0] for r in srv.requests] == ["HEAD", "GET"] and srv.headers_of(1)["range"] == "bytes=0-0"

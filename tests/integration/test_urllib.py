"""anyurl.urllib against the real servers: ``urllib.request.urlopen`` and ``pandas.read_csv``
of gopher (pygopherd, gophernicus) and nntp/news (INN) URLs, after ``anyurl.adapters.urllib.install()``."""

from __future__ import annotations

import gc
import hashlib
import threading
import tracemalloc
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixtures.launcher import Endpoint, Launcher
from fixtures.servers import _ftp_seed as fseed
from fixtures.servers import _gopher_seed as gseed

import anyurl.urllib
from anyurl import AnyURLError, Limits, ResourceNotFound, Timeouts


@pytest.fixture(scope="module")
def gophers(servers: Launcher) -> tuple[Endpoint, Endpoint]:
    """pygopherd (Gopher+, no "." terminator) and gophernicus (RFC 1436, CRLF text)."""
    return servers.get("pygopherd"), servers.get("gophernicus")


@pytest.fixture
def installed() -> Iterator[anyurl.adapters.urllib.AnyURLOpener]:
    opener = anyurl.adapters.urllib.install({"timeouts": Timeouts(connect=10, read=20, total=60)})
    try:
        yield opener
    finally:
        anyurl.adapters.urllib.uninstall()


def g(ep: Endpoint, rest: str) -> str:
    return f"gopher://{ep.host}:{ep.port}{rest}"


def loop_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "anyurl-urllib"]


def test_pandas_read_csv_of_a_gopher_url(installed: object, gophers: tuple[Endpoint, Endpoint]) -> None:
    pd = pytest.importorskip("pandas")
    for ep in gophers:
        df = pd.read_csv(g(ep, "/0/data/table.csv"))
        assert list(df.columns) == ["name", "size"]
        assert list(df["name"]) == ["alpha", "beta", "gamma"] and list(df["size"]) == [1, 22, 333]
        spaced = pd.read_csv(g(ep, "/0/data/with%20space.csv"))
        assert spaced.to_dict("records") == [{"k": "space", "v": 1}]


def test_uninstall_puts_urllib_back(gophers: tuple[Endpoint, Endpoint]) -> None:
    pyg = gophers[0]
    before = getattr(urllib.request, "_opener", None)
    anyurl.adapters.urllib.install()
    with urllib.request.urlopen(g(pyg, "/0/hello.txt")) as resp:
        assert resp.read() == gseed.HELLO
    assert loop_threads()
    anyurl.adapters.urllib.uninstall()
    assert getattr(urllib.request, "_opener", None) is before
    assert not loop_threads()  # the Client closed and its loop thread ended
    with pytest.raises(urllib.error.URLError, match="unknown url type"):
        urllib.request.urlopen(g(pyg, "/0/hello.txt"))


def test_urlopen_nntp_and_news(servers: Launcher) -> None:
    inn = servers.get("inn")
    group = inn.info["group"]
    first = inn.info["articles"][0]
    with anyurl.adapters.urllib.build_opener(client_kwargs={"news_server": f"{inn.host}:{inn.port}"}) as opener:
        with opener.open(f"nntp://{inn.host}:{inn.port}/{group}/{first['number']}") as resp:
            article = resp.read()
            assert resp.url.endswith(f"/{group}/{first['number']}")
        assert f"Message-ID: {first['message_id']}".encode() in article
        assert f"Subject: {first['subject']}".encode() in article
        with opener.open(f"news:{first['message_id'].strip('<>')}") as resp:
            assert resp.read() == article
        with opener.open(f"news:{group}") as resp:  # a group: its listing, one line an article
            listing = resp.read().decode()
        assert resp.headers.get_content_type() == "text/plain"
        assert len(listing.splitlines()) == len(inn.info["articles"])


def test_response_streams_with_bounded_memory(gophers: tuple[Endpoint, Endpoint]) -> None:
    pyg = gophers[0]
    chunk = 64 << 10
    with anyurl.adapters.urllib.build_opener(client_kwargs={"limits": Limits(chunk_size=chunk)}) as opener:
        tracemalloc.start()
        try:
            digest = hashlib.sha256()
            with opener.open(g(pyg, "/9/longline.bin")) as resp:  # 3 MiB
                while block := resp.read(32 << 10):
                    digest.update(block)
            _now, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert digest.digest() == hashlib.sha256(gseed.LONG_LINE).digest()
    assert peak < 1 << 20, f"peak {peak} bytes while streaming {len(gseed.LONG_LINE)}"


def test_errors_are_urlerrors_naming_the_url(gophers: tuple[Endpoint, Endpoint]) -> None:
    pyg = gophers[0]
    with anyurl.adapters.urllib.build_opener(client_kwargs={"timeouts": Timeouts(connect=5, read=10)}) as opener:
        for ep in gophers:
            url = g(ep, "/0/no-such-file.txt")
            with pytest.raises(urllib.error.URLError) as info:
                opener.open(url).read()
            assert url in str(info.value.reason)
            assert isinstance(info.value.__cause__, AnyURLError)
        with pytest.raises(urllib.error.URLError) as info:  # no news server configured
            opener.open("news:local.test")
        assert "news:local.test" in str(info.value.reason) and "news server" in str(info.value.reason)
        with pytest.raises(urllib.error.URLError) as info:
            opener.open(urllib.request.Request(g(pyg, "/0/hello.txt"), data=b"x"))
        assert "only retrieves" in str(info.value.reason)


def test_ftp_through_anyurl_only_when_asked(servers: Launcher) -> None:
    ftp = servers.get("vsftpd")
    url = f"ftp://{ftp.host}:{ftp.port}/pub/hello.txt"
    with anyurl.adapters.urllib.build_opener(extra_schemes=("ftp",)) as opener:
        with opener.open(url) as resp:
            assert resp.read() == fseed.HELLO
        with pytest.raises(urllib.error.URLError) as info:
            opener.open(url.replace("hello", "missing"))
        assert isinstance(info.value.__cause__, ResourceNotFound)
    with anyurl.adapters.urllib.build_opener() as opener:  # not asked: ftp stays urllib's own
        ftp_handlers = [type(h) for h in getattr(opener, "handle_open", {})["ftp"]]
        assert ftp_handlers == [urllib.request.FTPHandler]
        assert [type(h) for h in getattr(opener, "handle_open", {})["gopher"]] == [anyurl.adapters.urllib.AnyURLHandler]


async def test_blocking_open_inside_a_running_loop(gophers: tuple[Endpoint, Endpoint]) -> None:
    """pandas is synchronous: called from a coroutine it blocks that loop, while anyurl's
    own loop thread does the I/O (no deadlock, no "loop already running")."""
    with anyurl.adapters.urllib.build_opener() as opener:
        with opener.open(g(gophers[0], "/0/hello.txt")) as resp:
            lines = list(resp)
        assert b"".join(lines) == gseed.HELLO and len(lines) == 5
        assert loop_threads()
    assert not loop_threads()


def test_closing_the_opener_closes_open_responses_and_the_thread(tmp_path: Path) -> None:
    data = bytes(range(256)) * 1000
    (tmp_path / "blob.bin").write_bytes(data)
    url = (tmp_path / "blob.bin").as_uri()
    opener = anyurl.adapters.urllib.build_opener(extra_schemes=("file",))
    resp = opener.open(url)
    assert resp.read(10) == data[:10] and resp.headers["Content-Length"] == str(len(data))
    kept = opener.open(url)
    opener.close()  # with two responses open: both bodies closed, then the Client
    assert not loop_threads()
    resp.close()  # a late close is harmless
    with pytest.raises(urllib.error.URLError, match="closed"):
        kept.read()
    with pytest.raises(urllib.error.URLError, match="closed"):
        opener.open(url)


def test_a_response_outlives_a_dropped_opener(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_bytes(b"a,b\n1,2\n")
    opener = anyurl.adapters.urllib.build_opener(extra_schemes=("file",))
    resp = opener.open((tmp_path / "t.csv").as_uri())
    del opener
    gc.collect()
    assert resp.read() == b"a,b\n1,2\n"  # the Client lives while a response needs it
    resp.close()
    del resp
    gc.collect()
    assert not loop_threads()

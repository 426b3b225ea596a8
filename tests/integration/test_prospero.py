"""prospero: URLs against the ARDP test double (tests/prospero_testserver.py), following
external links to the real nginx."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from fixtures.launcher import Endpoint
from tests.prospero_testserver import Faults, ProsperoTestServer, start

import anyurl
from anyurl.client import Client
from anyurl.errors import (
    ConnectError,
    FetchTimeout,
    NotRetrievable,
    ResourceNotFound,
    UnsafeURL,
    URLSyntaxError,
)
from anyurl.handlers.prospero import ProsperoOptions
from anyurl.urls import ProsperoURL

FAST = ProsperoOptions(timeout=0.15, retries=6)


@pytest.fixture(scope="module")
def nginx(servers: object) -> Endpoint:
    return servers.get("nginx")  # type: ignore[attr-defined, no-any-return]


@pytest.fixture
async def pserver(nginx: Endpoint, tmp_path: Path) -> AsyncIterator[tuple[ProsperoTestServer, int]]:
    local = tmp_path / "local.txt"
    local.write_bytes(b"a local file\n")
    transport, server, port = await start(http_base=f"http://{nginx.host}:{nginx.port}", file_path=str(local))
    try:
        yield server, port
    finally:
        transport.close()


def count_in_log(nginx: Endpoint, needle: str, want: int) -> int:
    """Occurrences of *needle* in nginx's access log, waiting (2 s at most) for *want*."""
    log = Path(nginx.info["access_log"])
    deadline = time.monotonic() + 2
    while True:
        n = log.read_text().count(needle) if log.exists() else 0
        if n >= want or time.monotonic() > deadline:
            return n
        time.sleep(0.02)


def purl(port: int, rest: str) -> str:
    return f"prospero://127.0.0.1:{port}/{rest}"


async def fetch(url: str | ProsperoURL, options: ProsperoOptions = FAST, *,
                follow: bool = True) -> anyurl.Response:
    async with Client(prospero=options) as client:
        return await client.fetch(url, options=dataclasses.replace(options, follow=follow))


async def test_directory_listing_and_link_resolution(pserver: tuple[ProsperoTestServer, int]) -> None:
    server, port = pserver
    res = await fetch(purl(port, "/pub"))
    assert res.entries is not None
    by_name = {e.name: e for e in res.entries}
    assert list(by_name) == ["many", "hello.txt", "rfc1738.txt", "gopher menu", "hello", "local"]
    assert by_name["many"].kind == "directory"
    assert by_name["many"].url == purl(port, "/pub/many")
    # External links are the URLs of their access method (RFC 1738 3.11).
    assert by_name["rfc1738.txt"].url == "ftp://ftp.example.org/pub/rfc/rfc1738.txt;type=i"
    assert by_name["gopher menu"].url == "gopher://gopher.example.org:7070/1/a%20dir"
    assert by_name["hello.txt"].url is not None and by_name["hello.txt"].url.endswith("/hello.txt")
    assert by_name["hello.txt"].meta["access_methods"][0]["method"] == "HTTP"
    assert by_name["hello"].url == purl(port, "/pub/hello;OBJECT-VERSION=2")
    assert server.log[:4] == ["VERSION 5 anyurl", "AUTHENTICATE '' UNAUTHENTICATED anonymous",
                              "DIRECTORY ASCII /pub", "LIST ATTRIBUTES COMPONENTS"]


async def test_fetch_follows_link_to_http(pserver: tuple[ProsperoTestServer, int], nginx: Endpoint) -> None:
    server, port = pserver
    before = count_in_log(nginx, "GET /hello.txt", 0)
    res = await fetch(purl(port, "/pub/hello"))
    assert res.content == b"hello over http\n"
    assert res.meta["prospero"]["resolved"] == [f"http://{nginx.host}:{nginx.port}/hello.txt"]
    assert "GET-OBJECT-INFO OBJECT-TYPE+ACCESS-METHOD ASCII /pub/hello" in server.log
    assert count_in_log(nginx, "GET /hello.txt", before + 1) == before + 1


async def test_object_version_field_is_sent(pserver: tuple[ProsperoTestServer, int]) -> None:
    server, port = pserver
    res = await fetch(purl(port, "/pub/hello;OBJECT-VERSION=1"))
    assert res.content == b"<html><body>index</body></html>\n"
    assert "GET-OBJECT-INFO OBJECT-TYPE+ACCESS-METHOD ASCII /pub/hello VERSION 1" in server.log


async def test_no_follow_describes_the_object(pserver: tuple[ProsperoTestServer, int]) -> None:
    _server, port = pserver
    res = await fetch(purl(port, "/pub/hello"), follow=False)
    # one entry per access method: the method is the title, the name the target's file name
    assert res.entries is not None and (res.entries[0].title, res.entries[0].name) == ("HTTP", "hello.txt")
    assert res.entries[0].kind == "page"
    assert res.entries[0].url is not None and res.entries[0].url.endswith("/hello.txt")
    assert res.meta["object_type"] == "FILE"


async def test_local_access_method_is_never_followed(pserver: tuple[ProsperoTestServer, int]) -> None:
    # a remote server never leads into file:, whatever the options (issue 25 item 10)
    _server, port = pserver
    for opts in (FAST, ProsperoOptions(timeout=0.15, allow_file_targets=True)):
        with pytest.raises(UnsafeURL, match="never leads to local files"):
            await fetch(purl(port, "/pub/local"), opts)


async def test_not_found_and_unfollowable(pserver: tuple[ProsperoTestServer, int]) -> None:
    _server, port = pserver
    with pytest.raises(ResourceNotFound, match="NOT-FOUND"):
        await fetch(purl(port, "/nope"))
    with pytest.raises(NotRetrievable, match="AFS"):
        await fetch(purl(port, "/pub/afs"))
    empty = await fetch(purl(port, "/pub/empty"))
    assert empty.entries == [] and empty.content == b""


async def test_multi_packet_listing_under_loss(pserver: tuple[ProsperoTestServer, int]) -> None:
    server, port = pserver
    server.faults = Faults(max_payload=400, drop_requests=1, drop_reply={1, 5, 9})
    res = await fetch(purl(port, "/pub/many"))
    assert res.entries is not None and len(res.entries) == 300
    assert res.entries[299].name == "file-0299 with a longish name"
    assert server.retransmitted >= 3 and server.acks >= 1


async def test_every_packet_lost_once(pserver: tuple[ProsperoTestServer, int]) -> None:
    server, port = pserver
    server.faults = Faults(max_payload=400, drop_every_first=True)
    res = await fetch(purl(port, "/pub/many"))
    assert res.entries is not None and len(res.entries) == 300


async def test_duplicates_reordering_and_garbage(pserver: tuple[ProsperoTestServer, int]) -> None:
    server, port = pserver
    server.faults = Faults(max_payload=300, duplicate=True, reorder=True, garbage=True)
    res = await fetch(purl(port, "/pub/many"))
    assert res.entries is not None
    assert [e.name for e in res.entries] == [f"file-{i:04d} with a longish name" for i in range(300)]


async def test_link_resolution_under_loss_and_reordering(pserver: tuple[ProsperoTestServer, int]) -> None:
    server, port = pserver
    server.faults = Faults(max_payload=60, drop_reply={2}, reorder=True, duplicate=True)
    res = await fetch(purl(port, "/pub/hello"))
    assert res.content == b"hello over http\n"


async def test_slow_reply_with_wait_notice(pserver: tuple[ProsperoTestServer, int]) -> None:
    server, port = pserver
    # The reply takes 1 s; the client retransmits after 0.15 s but for the wait notice.
    server.faults = Faults(slow=1.0)
    started = time.monotonic()
    res = await fetch(purl(port, "/pub"), ProsperoOptions(timeout=0.15, retries=2))
    assert res.entries is not None and len(res.entries) == 6
    assert time.monotonic() - started >= 1.0


async def test_silent_server_times_out(pserver: tuple[ProsperoTestServer, int]) -> None:
    server, port = pserver
    server.faults = Faults(never_answer=True)
    started = time.monotonic()
    with pytest.raises(FetchTimeout, match="retransmissions"):
        await fetch(purl(port, "/pub"), ProsperoOptions(timeout=0.05, retries=3, backoff=2.0))
    # 0.05 + 0.1 + 0.2 + 0.4 seconds of patience.
    assert 0.7 <= time.monotonic() - started < 5
    assert server.log.count("DIRECTORY ASCII /pub") == 1  # one request, retransmitted datagrams deduplicated
    assert server.datagrams == 4


@pytest.mark.parametrize("bad", ["prospero://127.0.0.1:9/%2Fpub%0D%0AVERSION", "prospero://127.0.0.1:9/x;F=a%0Ab",
                                 "prospero://127.0.0.1:9/x%00"])
async def test_control_characters_refused(bad: str) -> None:
    with pytest.raises(UnsafeURL):
        await fetch(bad)


async def test_user_in_url_is_a_syntax_error() -> None:
    with pytest.raises(URLSyntaxError):
        await fetch("prospero://joe@127.0.0.1:9/x")
    with pytest.raises(URLSyntaxError):
        await fetch(ProsperoURL("prospero", "127.0.0.1", 9, user="joe", hsoname="x"))


async def test_nobody_listening_is_a_connect_error() -> None:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # The ICMP port-unreachable reply surfaces as ConnectError (or, if filtered, a timeout).
    with pytest.raises((ConnectError, FetchTimeout)):
        await fetch(purl(port, "/pub"), ProsperoOptions(timeout=0.1, retries=1))

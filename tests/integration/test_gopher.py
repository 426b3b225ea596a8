"""gopher: URLs against two real servers: pygopherd (Gopher+) and gophernicus (RFC 1436, "." menus).

Neither server logs requests verbatim, so every test captures the exact bytes
the client sent (the handler's ``on_send`` hook) and checks what came back.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
from typing import Any

import pytest
from fixtures.launcher import Endpoint, Launcher
from fixtures.servers import _gopher_seed as seed

from anyurl.client import Client, Limits, Policy, Timeouts
from anyurl.errors import (
    AnyURLError,
    ConfigurationError,
    ConnectError,
    FetchTimeout,
    ProtocolError,
    ResourceNotFound,
    TransferError,
    TruncatedTransfer,
    UnsafeURL,
)
from anyurl.handlers.gopher import GopherOptions
from anyurl.response import Response
from anyurl.urls import GopherURL

SERVERS = ["pygopherd", "gophernicus"]


@pytest.fixture(scope="module", params=SERVERS)
def gs(request: pytest.FixtureRequest, servers: Launcher) -> Endpoint:
    """Each test using this runs once against each server."""
    return servers.get(request.param)


@pytest.fixture(scope="module")
def pyg(servers: Launcher) -> Endpoint:
    return servers.get("pygopherd")


@pytest.fixture(scope="module")
def nic(servers: Launcher) -> Endpoint:
    return servers.get("gophernicus")


def base(ep: Endpoint) -> str:
    return f"gopher://{ep.host}:{ep.port}"


async def get(url: str, client: Client | None = None, form_answers: list[str] | None = None,
              **kw: Any) -> tuple[Response, list[bytes]]:
    """Fetch *url*, returning the response and the request bytes that were sent."""
    sent: list[bytes] = []
    base_opts = client.options_for("gopher", GopherOptions) if client else GopherOptions()
    opts = dataclasses.replace(base_opts, on_send=sent.append, form_answers=form_answers)
    if client is None:
        async with Client() as c:
            return await c.fetch(url, options=opts, **kw), sent
    return await client.fetch(url, options=opts, **kw), sent


def read_log(path: str | None) -> str:
    """The server's access log (small; read synchronously); "" when it is not reachable
    (servers run by docker-compose)."""
    if path is None:
        return ""
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def text_as_served(ep: Endpoint, data: bytes) -> bytes:
    # gophernicus sends text with CRLF line ends; pygopherd sends the file verbatim.
    return data.replace(b"\n", b"\r\n") if ep.name == "gophernicus" else data


# -- menus -------------------------------------------------------------------------


async def test_menu_with_every_item_type(gs: Endpoint) -> None:
    r, sent = await get(base(gs) + "/1/types")
    assert sent == [b"/types\r\n"]
    assert r.entries is not None
    by_title = {e.title: e for e in r.entries}
    h = f"{gs.host}:{gs.port}"
    # (kind, url, name): name is the selector's last segment, the display string is the title
    expect = {
        "Hello text": ("file", f"gopher://{h}/0/hello.txt", "hello.txt"),
        "Sub directory": ("directory", f"gopher://{h}/1/sub", "sub"),
        "Search the archive": ("search", f"gopher://{h}/7{gs.info['search']}",
                               gs.info["search"].rstrip("/").rsplit("/", 1)[-1]),
        "Binary blob": ("file", f"gopher://{h}/9/sub/blob.bin", "blob.bin"),
        "A GIF pixel": ("file", f"gopher://{h}/g/sub/pixel.gif", "pixel.gif"),
        "A PNG image": ("file", f"gopher://{h}/I/sub/image.png", "image.png"),
        "A sound": ("file", f"gopher://{h}/s/sub/sound.wav", "sound.wav"),
        "A zip archive": ("file", f"gopher://{h}/5/sub/archive.zip", "archive.zip"),
        "Example web page": ("page", "http://www.example.org/page?a=1", "page"),
        "An item of an unknown type": ("file", f"gopher://{h}/Z/hello.txt", "hello.txt"),
        "Text with a space": ("file", f"gopher://{h}/0/with%20space.txt", "with space.txt"),
        "Every common item type": ("info", None, ""),
    }
    for title, (kind, url, name) in expect.items():
        e = by_title[title]
        assert (e.kind, e.url, e.name) == (kind, url, name), title
    assert {by_title[t].meta["type"] for t in ("Binary blob", "A GIF pixel", "A sound")} == {
        "binary", "image", "sound"}
    telnet = by_title["A telnet session"]
    assert telnet.kind == "session" and telnet.url is not None
    assert telnet.url.startswith("telnet://") and telnet.url.endswith("@telnet.example.org/")
    assert by_title["An item of an unknown type"].meta["unknown_type"] is True
    hello = by_title["Hello text"].meta
    assert (hello["gophertype"], hello["selector"], hello["host"], hello["port"]) == (
        "0", "/hello.txt", gs.host, gs.port)
    # pygopherd marks its items as Gopher+; gophernicus ends the menu with "."
    assert hello["plus"] == ("+" if gs.name == "pygopherd" else None)
    assert r.meta["terminated"] is (gs.name == "gophernicus")
    assert r.meta["broken_lines"] == []
    # the body is the rendered listing
    assert "Hello text" in r.text() and f"gopher://{h}/0/hello.txt" in r.text()
    assert r.content_type == "text/plain"


async def test_crawl_follows_entry_urls(gs: Endpoint) -> None:
    """Entry URLs are absolute: follow each text/binary entry of /types and check the bytes."""
    async with Client() as c:
        menu, _ = await get(base(gs) + "/1/types", c)
        assert menu.entries is not None
        urls = {e.title: e.url for e in menu.entries}
        hello, sent = await get(str(urls["Hello text"]), c)
        assert sent == [b"/hello.txt\r\n"]
        assert hello.content == text_as_served(gs, seed.HELLO)
        blob, sent = await get(str(urls["Binary blob"]), c)
        assert sent == [b"/sub/blob.bin\r\n"] and blob.content == seed.blob()
        sub, _ = await get(str(urls["Sub directory"]), c)
        assert sub.entries is not None
        assert any(e.url and e.url.endswith("/0/sub/nested.txt") for e in sub.entries)
        spaced, sent = await get(str(urls["Text with a space"]), c)
        assert sent == [b"/with space.txt\r\n"]
        assert spaced.content == text_as_served(gs, b"file with a space\n")


async def test_menu_streams_entries_and_total_timeout_keeps_them(gs: Endpoint) -> None:
    plain, _ = await get(base(gs) + "/1/types")
    # a total timeout wraps the body (Client's deadline guard): entries still come through
    bounded, _ = await get(base(gs) + "/1/types", timeouts=Timeouts(total=30))
    assert bounded.entries == plain.entries and bounded.content == plain.content
    assert plain.entries and len(plain.entries) > 10
    async with Client(timeouts=Timeouts(total=30)) as c, c.open(base(gs) + "/1/types") as body:
        streamed = [e async for e in body.aiter_entries()]
        assert body.entries == []  # streamed, not kept
    assert streamed == plain.entries


async def test_root_menu(gs: Endpoint) -> None:
    for url in (base(gs), base(gs) + "/", base(gs) + "/1"):
        r, sent = await get(url)
        assert sent == [b"\r\n"]
        assert r.entries is not None
        names = {e.name for e in r.entries if e.kind != "info"}
        assert {"sub", "types", "many"} <= names


async def test_parent_and_self_items_are_flagged_not_directories(gs: Endpoint) -> None:
    """A hand-written menu with ".." and "back to the top" items and a link to itself: those
    carry rel="parent"/"self" (a walk never enters them); the others are plain entries."""
    from pathlib import Path

    inner = Path(gs.info["root"]) / "updown" / "inner"
    (inner / "deeper").mkdir(parents=True, exist_ok=True)
    (inner / "f.txt").write_bytes(b"f\n")
    (inner / "gophermap").write_text(
        "1..\t/updown\n"
        "1Back to the top\t/\n"
        "1This menu\t/updown/inner\n"
        "1Deeper\t/updown/inner/deeper\n"
        "0A file\t/updown/inner/f.txt\n")
    for d in (inner.parent, inner, inner / "deeper"):
        d.chmod(0o755)
    for f in (inner / "f.txt", inner / "gophermap"):
        f.chmod(0o644)
    r, _ = await get(base(gs) + "/1/updown/inner")
    assert r.entries is not None
    got = {e.title: (e.kind, e.name, e.rel) for e in r.entries if e.kind != "info"}  # gophernicus adds a footer
    assert got == {
        "..": ("directory", "updown", "parent"),
        "Back to the top": ("directory", gs.host, "parent"),
        "This menu": ("directory", "inner", "self"),
        "Deeper": ("directory", "deeper", None),
        "A file": ("file", "f.txt", None),
    }
    async with Client() as c:
        found = [f async for f in c.walk(base(gs) + "/1/updown/inner")]
    assert sorted(f.name for f in found) == ["", "deeper", "f.txt"]


async def test_broken_menu_lines_are_reported_not_fatal(gs: Endpoint) -> None:
    r, sent = await get(base(gs) + "/1/broken.menu")
    assert sent == [b"/broken.menu\r\n"]
    assert r.entries is not None
    assert [(e.title, e.url) for e in r.entries] == [
        ("Good item", "gopher://example.org/0/hello.txt"),
        ("Good menu", "gopher://example.org:7070/1/sub"),
    ]
    broken = r.meta["broken_lines"]
    assert [(b["line"], b["text"]) for b in broken] == [
        (2, "a line without any tab"), (3, "0Bad port\t/x\texample.org\tseventy")]
    assert "TAB" in broken[0]["reason"] and "port" in broken[1]["reason"]


# -- text and binary -------------------------------------------------------------------


async def test_text_with_leading_dots_is_verbatim(gs: Endpoint) -> None:
    r, sent = await get(base(gs) + "/0/hello.txt")
    assert sent == [b"/hello.txt\r\n"]
    # neither server dot-stuffs or terminates text: ".." lines stay as they are
    assert r.content == text_as_served(gs, seed.HELLO)
    assert r.meta["terminated"] is False and r.meta["dot_stuffed"] is False
    assert r.content_type == "text/plain"


async def test_dot_stuffed_text_is_unstuffed(gs: Endpoint) -> None:
    r, sent = await get(base(gs) + "/0" + gs.info["stuffed"])
    assert sent == [gs.info["stuffed"].encode() + b"\r\n"]
    assert r.content == seed.STUFFED_PLAIN
    assert r.meta["terminated"] is True and r.meta["dot_stuffed"] is True


@pytest.mark.parametrize(("path", "data", "ctype"), [
    ("/9/sub/blob.bin", seed.blob(), "application/octet-stream"),
    ("/g/sub/pixel.gif", seed.GIF, "image/gif"),
    ("/I/sub/image.png", seed.PNG, "image/png"),
    ("/s/sub/sound.wav", seed.WAV, "audio/x-wav"),
    ("/5/sub/archive.zip", seed.ZIP, "application/zip"),
])
async def test_binary_items(gs: Endpoint, path: str, data: bytes, ctype: str) -> None:
    r, sent = await get(base(gs) + path)
    assert sent == [path[2:].encode() + b"\r\n"]
    assert r.content == data
    assert r.content_type == ctype


async def test_streaming_and_offset(gs: Endpoint) -> None:
    async with Client() as c:
        async with c.open(base(gs) + "/9/sub/blob.bin") as body:
            chunks = [chunk async for chunk in body]
            assert body.complete
        assert b"".join(chunks) == seed.blob()
        r = await c.fetch(base(gs) + "/9/sub/blob.bin", offset=1000)
        assert r.content == seed.blob()[1000:]


async def test_many_concurrent_requests(gs: Endpoint) -> None:
    async with Client() as c:
        rs = await asyncio.gather(*(c.fetch(f"{base(gs)}/0/many/t{i:04d}.txt") for i in range(40)))
    for i, r in enumerate(rs):
        assert r.content == text_as_served(gs, seed.small_text(i))


# -- search ------------------------------------------------------------------------------


async def test_search(gs: Endpoint) -> None:
    sel = gs.info["search"]
    r, sent = await get(f"{base(gs)}/7{sel}%09foo%20bar")
    assert sent == [sel.encode() + b"\tfoo bar\r\n"]
    assert r.entries is not None
    assert [(e.kind, e.title) for e in r.entries] == [
        ("info", "You searched for: foo bar"), ("file", "Result 1 for foo bar"),
        ("directory", "Result 2: the sub menu")]
    assert r.meta["terminated"] is True  # the script ends its menu with "."
    # the result's URL leads back to the real item
    follow, _ = await get(str(r.entries[1].url))
    assert follow.content == text_as_served(gs, seed.HELLO)


# -- errors --------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/0/nonexistent", "/1/nonexistent", "/9/nope.bin"])
async def test_missing_item(gs: Endpoint, path: str) -> None:
    with pytest.raises(ResourceNotFound) as info:
        await get(base(gs) + path)
    text = "does not exist" if gs.name == "pygopherd" else "File or directory not found"
    assert text in str(info.value)
    assert info.value.reply and text in info.value.reply
    assert isinstance(info.value, FileNotFoundError)


@pytest.mark.parametrize("url_tail", [
    "/0/hello.txt%0D%0AFLUSHALL",
    "/0/hello.txt%0AQUIT",
    "/7/search%09a%0D%0Ab",
    "/0/hello.txt%09%09+%0D%0AQUIT",
])
async def test_control_characters_are_refused_before_sending(nic: Endpoint, url_tail: str) -> None:
    before = read_log(nic.info.get("access_log"))
    with pytest.raises(UnsafeURL) as info:
        await get(base(nic) + url_tail)
    assert "refusing" in str(info.value) and base(nic) in str(info.value)
    await asyncio.sleep(0.2)
    new = read_log(nic.info.get("access_log"))[len(before):]
    # nothing reached the server (the launcher's readiness probe may log an empty request)
    assert not any(w in new for w in ("hello.txt", "search", "FLUSHALL", "QUIT")), new


async def test_tab_in_selector_is_refused(nic: Endpoint) -> None:
    # The parser keeps %09 as the separator, so only a URL built directly can carry one.
    url = GopherURL("gopher", nic.host, nic.port, None, None, "0", "/hello.txt\tx")
    sent: list[bytes] = []
    async with Client() as c:
        with pytest.raises(UnsafeURL, match="TAB"):
            await c.fetch(url, options=GopherOptions(on_send=sent.append))
    assert sent == []


@pytest.mark.parametrize(("port", "service"), [(6379, "Redis"), (25, "SMTP"), (11211, "memcached")])
async def test_service_ports_refused_by_default(port: int, service: str) -> None:
    sent: list[bytes] = []
    async with Client() as c:
        with pytest.raises(UnsafeURL) as info:
            await c.fetch(f"gopher://127.0.0.1:{port}/_FLUSHALL", options=GopherOptions(on_send=sent.append))
    assert sent == []
    msg = str(info.value)
    assert str(port) in msg and service in msg and "allow_gopher_to_service_ports" in msg


async def test_service_port_policy_allows() -> None:
    sent: list[bytes] = []
    async with Client(policy=Policy(allow_gopher_to_service_ports=True)) as c:
        try:
            await c.fetch("gopher://127.0.0.1:11211/_stats", options=GopherOptions(on_send=sent.append))
        except AnyURLError as exc:
            assert not isinstance(exc, UnsafeURL)  # got as far as connecting


async def test_reads_are_bounded(gs: Endpoint) -> None:
    # a 3 MiB line read as a menu: refused at max_line, not buffered
    with pytest.raises(ProtocolError, match="longer than"):
        await get(base(gs) + "/1/longline.bin")
    # a menu larger than the configured bound
    async with Client(gopher=GopherOptions(max_menu_bytes=4000)) as c:
        with pytest.raises(TransferError, match="larger than 4000"):
            await get(base(gs) + "/1/many", c)
    async with Client(limits=Limits(max_entries=50)) as c:
        with pytest.raises(TransferError, match="more than 50 entries"):
            await get(base(gs) + "/1/many", c)
    # max_size applies to items
    with pytest.raises(TransferError, match="max_size=1000"):
        await get(base(gs) + "/9/sub/blob.bin", max_size=1000)


async def test_gophernicus_access_log_shows_the_request(nic: Endpoint) -> None:
    await get(base(nic) + "/0/sub/nested.txt")
    for _ in range(60):  # gophernicus writes its log line as the connection ends
        if "/sub/nested.txt" in read_log(nic.info["access_log"]):
            break
        await asyncio.sleep(0.05)
    assert re.search(r'"GET 0/sub/nested\.txt HTTP/1\.0" 200 ', read_log(nic.info["access_log"]))


# -- Gopher+ (pygopherd) -------------------------------------------------------------------


async def test_plus_default_view(pyg: Endpoint) -> None:
    r, sent = await get(base(pyg) + "/0/hello.txt%09%09+")
    assert sent == [b"/hello.txt\t\t+\r\n"]
    assert r.content == seed.HELLO
    assert r.meta["gopher_plus"] is True and r.meta["plus_length"] == len(seed.HELLO)


async def test_plus_alternate_view(pyg: Endpoint) -> None:
    attrs, _ = await get(base(pyg) + "/I/sub/image.png%09%09!")
    (view,) = attrs.meta["views"]
    assert view["mime"] == "image/png"
    r, sent = await get(base(pyg) + "/I/sub/image.png%09%09+image/png%20En_US")
    assert sent == [b"/sub/image.png\t\t+image/png En_US\r\n"]
    assert r.content == seed.PNG and r.content_type == "image/png"
    r, _ = await get(base(pyg) + "/9/sub/blob.bin%09%09+application/x-test-view")
    assert r.content == seed.blob() and r.content_type == "application/x-test-view"


async def test_plus_menu(pyg: Endpoint) -> None:
    r, sent = await get(base(pyg) + "/1/sub%09%09+")
    assert sent == [b"/sub\t\t+\r\n"]
    assert r.entries is not None
    assert sorted(e.title or "" for e in r.entries) == ["archive", "blob", "image", "nested", "pixel", "sound"]
    assert "blob.bin" in {e.name for e in r.entries}
    assert all(e.meta["plus"] == "+" for e in r.entries)
    assert r.meta["plus_length"] == -2


async def test_plus_item_attributes(pyg: Endpoint) -> None:
    r, sent = await get(base(pyg) + "/0/hello.txt%09%09!")
    assert sent == [b"/hello.txt\t\t!\r\n"]
    attrs = r.meta["attributes"]
    assert attrs["INFO"] == f"0hello.txt\t/hello.txt\t{pyg.host}\t{pyg.port}\t+"
    assert attrs["ABSTRACT"] == seed.ABSTRACT
    assert attrs["ADMIN"].startswith("Admin: " + pyg.info["admin"])
    assert r.meta["views"] == [{"mime": "text/plain", "language": None, "size": "0k"}]
    assert r.content.startswith(b"+INFO: 0hello.txt\t/hello.txt")


async def test_plus_selected_attributes(pyg: Endpoint) -> None:
    r, sent = await get(base(pyg) + "/0/hello.txt%09%09!+ABSTRACT%20+SMELL")
    # pygopherd does not answer "!+NAME" as Gopher+: the client asks for "!" and keeps the names
    assert sent == [b"/hello.txt\t\t!+ABSTRACT +SMELL\r\n", b"/hello.txt\t\t!\r\n"]
    assert r.meta["attributes_fallback"] is True
    assert set(r.meta["attributes"]) == {"INFO", "ABSTRACT"}
    assert b"+ABSTRACT:\r\n " + seed.ABSTRACT.encode() in r.content and b"+ADMIN" not in r.content


async def test_plus_directory_attributes(pyg: Endpoint) -> None:
    r, sent = await get(base(pyg) + "/1/sub%09%09$")
    assert sent == [b"/sub\t\t$\r\n"]
    assert r.entries is not None
    by_title = {e.title: e for e in r.entries}
    assert set(by_title) == {"archive", "blob", "image", "nested", "pixel", "sound"}
    assert by_title["blob"].url == f"gopher://{pyg.host}:{pyg.port}/9/sub/blob.bin"
    assert by_title["image"].meta["attributes"]["VIEWS"] == "image/png: <0k>"
    # Gopher+ sizes and dates fill the entries (as stat() does): "<2k>" is approximate, "<0k>" unknown
    assert (by_title["blob"].size, by_title["blob"].meta["size_approximate"]) == (2048, True)
    assert by_title["image"].size is None and by_title["blob"].modified is not None
    assert len(r.meta["attributes"]) == 6


async def test_plus_error_reply(pyg: Endpoint) -> None:
    with pytest.raises(ResourceNotFound) as info:
        await get(base(pyg) + "/0/nonexistent%09%09+")
    assert "'/nonexistent' does not exist" in str(info.value)


async def test_gopher0_server_ignores_plus(nic: Endpoint) -> None:
    r, sent = await get(base(nic) + "/0/hello.txt%09%09+")
    assert sent == [b"/hello.txt\t\t+\r\n"]
    assert r.meta["gopher_plus"] is False
    assert r.content == text_as_served(nic, seed.HELLO)
    with pytest.raises(ProtocolError, match="Gopher\\+"):
        await get(base(nic) + "/0/hello.txt%09%09!")


# -- ASK forms -------------------------------------------------------------------------------

FORM_FIELDS = [("note", "Please tell us about yourself", None, []),
               ("ask", "Your name?", "Anonymous", []),
               ("askp", "Your password?", None, []),
               ("choose", "Favourite protocol", "gopher", ["gopher", "ftp", "wais"]),
               ("select", "Send me mail?:", "1", [])]


@pytest.mark.parametrize("use_async", [False, True])
async def test_ask_form(pyg: Endpoint, use_async: bool) -> None:
    seen: list[Any] = []

    def answer(fields: list[Any]) -> list[str]:
        seen.extend(fields)
        return ["Bob", "s3cret", "ftp", "0"]

    async def answer_async(fields: list[Any]) -> list[str]:
        await asyncio.sleep(0)
        return answer(fields)

    async with Client(form_callback=answer_async if use_async else answer) as c:
        r, sent = await get(base(pyg) + "/0/form.txt%09%09?", c)
    assert [(f.kind, f.prompt, f.default, f.choices) for f in seen] == FORM_FIELDS
    assert sent == [b"/form.txt\t\t!\r\n",
                    b"/form.txt\t\t+\t1\r\n+-1\r\nBob\r\ns3cret\r\nftp\r\n0\r\n.\r\n"]
    form_url = (f"gopher://{pyg.host}:{pyg.port}/0/form.txt%09%09+%091%0D%0A+-1%0D%0ABob%0D%0A"
                "s3cret%0D%0Aftp%0D%0A0%0D%0A.%0D%0A")
    assert r.meta["form_url"] == form_url
    # pygopherd serves the item (it reads only the request's first line, so it ignores the answers)
    assert r.content == seed.FORM_TEXT
    # the form URL designates the filled-out form: fetching it sends the same bytes again
    again, sent2 = await get(form_url)
    assert sent2 == [sent[1]] and again.content == seed.FORM_TEXT


async def test_ask_form_without_callback(pyg: Endpoint) -> None:
    with pytest.raises(ConfigurationError, match="form_callback"):
        await get(base(pyg) + "/0/form.txt%09%09?")
    r, sent = await get(base(pyg) + "/0/form.txt%09%09?", form_answers=["Al", "pw", "wais", "1"])
    assert sent[1] == b"/form.txt\t\t+\t1\r\n+-1\r\nAl\r\npw\r\nwais\r\n1\r\n.\r\n"
    with pytest.raises(ProtocolError, match="not one of the choices"):
        await get(base(pyg) + "/0/form.txt%09%09?", form_answers=["Al", "pw", "http", "1"])


async def test_ask_on_item_without_form(pyg: Endpoint) -> None:
    with pytest.raises(ProtocolError, match="no \\+ASK form"):
        await get(base(pyg) + "/0/hello.txt%09%09?", form_answers=[])


async def test_per_host_connection_limit(gs: Endpoint) -> None:
    url = base(gs) + "/9/sub/blob.bin"
    async with Client(limits=Limits(per_host=2)) as c:
        handler = c.handler(c.parse(url))
        first = await handler.open(c.request(url))
        second = await handler.open(c.request(url))
        third = asyncio.ensure_future(handler.open(c.request(url)))
        await asyncio.sleep(0.3)
        assert not third.done()  # waits for a free slot
        await first.aclose()
        body = await asyncio.wait_for(third, 10)
        assert await body.read() == seed.blob()
        await second.aclose()
        await body.aclose()


# -- injected faults (a scripted in-process server: what the real servers never do) ------------


async def _fault_server(reply: Any, linger: bool = False) -> tuple[asyncio.Server, int]:
    """A TCP server that reads the request line and runs *reply(writer)*, then closes
    (or with *linger*, waits for the client to close first)."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readline()
            await reply(writer)
            if linger:
                await reader.read()  # until the client gives up: no task outlives the test
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


async def test_fault_short_gopher_plus_reply_is_truncated() -> None:
    async def reply(w: asyncio.StreamWriter) -> None:
        w.write(b"+100\r\n" + b"x" * 60)
        await w.drain()

    server, port = await _fault_server(reply)
    async with server:
        with pytest.raises(TruncatedTransfer, match="announced 100 bytes"):
            await get(f"gopher://127.0.0.1:{port}/9/x%09%09+")


async def test_fault_endless_menu_is_bounded() -> None:
    async def reply(w: asyncio.StreamWriter) -> None:
        line = b"0An item\t/x\th\t70\r\n"
        for _ in range(100_000):  # 2 MB, more than the bound below
            w.write(line * 10)
            await w.drain()

    server, port = await _fault_server(reply)
    async with server, Client(gopher=GopherOptions(max_menu_bytes=200_000)) as c:
        with pytest.raises(TransferError, match="larger than 200000"):
            await get(f"gopher://127.0.0.1:{port}/1/", c)


async def test_fault_stalled_server_times_out() -> None:
    async def reply(w: asyncio.StreamWriter) -> None:
        w.write(b"partial")
        await w.drain()  # then nothing more: the client must give up

    server, port = await _fault_server(reply, linger=True)
    async with server, Client(timeouts=Timeouts(read=0.5)) as c:
        with pytest.raises(FetchTimeout):
            await get(f"gopher://127.0.0.1:{port}/0/x", c)


async def test_fault_stat_on_gopher0_reads_only_the_first_line() -> None:
    # a Gopher0 server answers "!" with the item itself, and this one never ends it: stat
    # must give up after the first line, not download (or wait for) the body
    async def reply(w: asyncio.StreamWriter) -> None:
        w.write(b"Plain text, not a Gopher+ header\r\n" + b"x" * 100_000)
        await w.drain()

    from anyurl.errors import NotSupported

    server, port = await _fault_server(reply, linger=True)
    async with server, Client(timeouts=Timeouts(read=20)) as c:
        started = asyncio.get_running_loop().time()
        with pytest.raises(NotSupported, match="Gopher0"):
            await c.stat(f"gopher://127.0.0.1:{port}/0/x")
        assert asyncio.get_running_loop().time() - started < 10


async def test_connection_refused() -> None:
    from fixtures.launcher import free_ports

    (port,) = free_ports(1)  # nothing listens there
    with pytest.raises(ConnectError, match=f"cannot connect to 127.0.0.1:{port}"):
        await get(f"gopher://127.0.0.1:{port}/0/x")


# -- stat ---------------------------------------------------------------------------------------


async def test_stat_from_gopher_plus_attributes(pyg: Endpoint) -> None:
    import os
    import time
    from datetime import UTC, datetime

    blob = os.path.join(pyg.info["root"], "sub", "blob.bin")
    os.utime(blob, (1_000_000_000, 1_000_000_000))
    sent: list[bytes] = []
    async with Client(gopher=GopherOptions(on_send=sent.append)) as c:
        st = await c.stat(base(pyg) + "/9/sub/blob.bin")
        menu = await c.stat(base(pyg) + "/1/sub")
        small = await c.stat(base(pyg) + "/0/hello.txt")
        with pytest.raises(ResourceNotFound, match="does not exist"):
            await c.stat(base(pyg) + "/0/nonexistent")
    # one attribute request each, nothing else (no body downloaded)
    assert sent == [b"/sub/blob.bin\t\t!\r\n", b"/sub\t\t!\r\n", b"/hello.txt\t\t!\r\n",
                    b"/nonexistent\t\t!\r\n"]
    # +VIEWS "application/octet-stream: <2k>": pygopherd floors to whole kilobytes
    assert (st.kind, st.size, st.content_type) == ("file", 2048, "application/octet-stream")
    assert len(seed.blob()) // 1024 == 2 and st.meta["size_text"] == "2k"
    assert st.meta["size_approximate"] is True and st.meta["gopher_plus"] is True
    # +ADMIN Mod-Date <YYYYMMDDhhmmss> is the server's local time, read as UTC
    assert st.modified == datetime(*time.localtime(1_000_000_000)[:6], tzinfo=UTC)
    assert st.meta["attributes"]["ADMIN"].startswith("Admin: " + pyg.info["admin"])
    assert (menu.kind, menu.size, menu.content_type) == ("directory", None, "application/gopher+-menu")
    assert small.kind == "file" and small.content_type == "text/plain"
    assert small.size is None and small.meta["size_text"] == "0k"  # under a kilobyte, not empty


async def test_stat_on_a_gopher0_server_is_not_supported(nic: Endpoint) -> None:
    from anyurl.errors import NotSupported

    sent: list[bytes] = []
    async with Client(gopher=GopherOptions(on_send=sent.append)) as c:
        for path in ("/9/sub/blob.bin", "/1/sub"):
            with pytest.raises(NotSupported, match="Gopher0 server") as info:
                await c.stat(base(nic) + path)
            assert str(info.value.url) == base(nic) + path
    assert sent == [b"/sub/blob.bin\t\t!\r\n", b"/sub\t\t!\r\n"]


async def test_ranges_are_cut_client_side(gs: Endpoint) -> None:
    # gopher has no ranges: the offset is skipped and the length cut on the client
    r = await get(base(gs) + "/9/sub/blob.bin", offset=1000, length=500)
    assert r[0].content == seed.blob()[1000:1500]
    assert r[1] == [b"/sub/blob.bin\r\n"]  # the whole item was asked for

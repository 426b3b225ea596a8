"""news:, nntp: and nntps: against a real INN 2 (innd + nnrpd readers).

The fixture (fixtures/servers/inn.py) creates per-session groups and injects
articles, so every assertion is relative to what it injected. Commands are
checked through the client's trace hook (INN logs only to syslog here).
"""

from __future__ import annotations

import asyncio
import os
import ssl
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fixtures.launcher import Endpoint, Launcher
from fixtures.servers.inn import DOT_BODY, UTF8_FROM, UTF8_SUBJECT, large_body

import anyurl
from anyurl.client import Limits
from anyurl.errors import (
    AccessDenied,
    ConfigurationError,
    ConnectError,
    ProtocolError,
    ResourceNotFound,
    TemporaryFailure,
    TruncatedTransfer,
    UnsafeURL,
)
from anyurl.handlers.news import NewsOptions
from anyurl.urls import NNTPURL, NewsURL


@pytest.fixture(scope="session")
def inn(servers: Launcher) -> Endpoint:
    return servers.get("inn")


class Trace:
    """Collects the command lines the client sends and the status lines it gets."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []

    def __call__(self, direction: str, line: str) -> None:
        self.lines.append((direction, line))

    @property
    def sent(self) -> list[str]:
        return [line for d, line in self.lines if d == "send"]

    @property
    def greetings(self) -> int:
        return sum(1 for d, line in self.lines if d == "recv" and line.startswith(("200 ", "201 ")))


def client(trace: Trace, **kw: Any) -> anyurl.Client:
    opts = kw.pop("news", None) or NewsOptions(trace=trace)
    return anyurl.Client(news=opts, use_netrc=kw.pop("use_netrc", False), **kw)


def art(inn: Endpoint, name: str) -> dict[str, Any]:
    return next(a for a in inn.info["articles"] if a["message_id"].startswith(f"<{name}."))


def crlf(text: str) -> bytes:
    return text.replace("\n", "\r\n").encode()


def nntp_url(inn: Endpoint, rest: str) -> str:
    return f"nntp://{inn.host}:{inn.port}/{rest}"


# -- articles ------------------------------------------------------------------------

async def test_article_by_number_keeps_dot_lines(inn: Endpoint) -> None:
    t = Trace()
    a = art(inn, "dots")
    async with client(t) as c:
        r = await c.fetch(nntp_url(inn, f"{inn.info['group']}/{a['number']}"))
    assert r.content_type == "message/rfc822"
    assert r.meta["body"] == crlf(DOT_BODY)
    assert r.content.endswith(b"\r\n\r\n" + crlf(DOT_BODY))
    assert f"Message-ID: {a['message_id']}\r\n".encode() in r.content
    assert r.meta["number"] == 1 and r.meta["message_id"] == a["message_id"]
    assert r.meta["headers"]["subject"] == "First test article"
    assert r.content[r.meta["body_offset"]:] == r.meta["body"]
    assert t.sent == ["CAPABILITIES", f"GROUP {inn.info['group']}", "ARTICLE 1"]


async def test_article_by_message_id(inn: Endpoint, monkeypatch: pytest.MonkeyPatch) -> None:
    t = Trace()
    a = art(inn, "reply")
    monkeypatch.setenv("NNTPSERVER", f"{inn.host}:{inn.port}")
    async with client(t) as c:
        r = await c.fetch("news:" + a["message_id"][1:-1])
    assert r.meta["body"] == b"Second article body.\r\n"
    assert r.meta["headers"]["references"] == art(inn, "dots")["message_id"]
    assert r.meta["message_id"] == a["message_id"]
    assert t.sent == ["CAPABILITIES", f"ARTICLE {a['message_id']}"]  # no GROUP needed


async def test_encoded_headers_decoded(inn: Endpoint) -> None:
    t = Trace()
    a = art(inn, "utf8")
    async with client(t, news_server=f"{inn.host}:{inn.port}") as c:
        r = await c.fetch("news:" + a["message_id"][1:-1])
    assert r.meta["headers"]["subject"] == UTF8_SUBJECT
    assert r.meta["headers"]["from"] == UTF8_FROM
    assert ("Subject", UTF8_SUBJECT) in r.meta["header_list"]
    assert b"Subject: =?UTF-8?B?" in r.content  # the raw article stays raw
    assert r.meta["body"].decode("utf-8") == "Grüße, Jörg\r\n"


async def test_large_article_streams(inn: Endpoint) -> None:
    t = Trace()
    a = art(inn, "large")
    url = nntp_url(inn, f"{inn.info['group']}/{a['number']}")
    async with client(t, limits=Limits(chunk_size=16384)) as c:
        chunks = []
        async with c.open(url) as body:
            assert body.meta["headers"]["subject"] == "A large article"  # known before the body
            async for chunk in body:
                chunks.append(chunk)
        data = b"".join(chunks)
        assert len(chunks) > 5
        assert data[body.meta["body_offset"]:] == crlf(large_body())
        # a byte offset skips into the article
        part = await c.fetch(url, offset=100_000)
        assert part.content == data[100_000:]
    assert len(data) > 500_000


async def test_missing_articles_and_groups(inn: Endpoint) -> None:
    t = Trace()
    g = inn.info["group"]
    async with client(t, news_server=f"{inn.host}:{inn.port}") as c:
        with pytest.raises(ResourceNotFound) as e1:
            await c.fetch(nntp_url(inn, f"{g}/99"))
        with pytest.raises(ResourceNotFound) as e2:
            await c.fetch(f"news:nothing.{inn.info['tag']}@anyurl.test")
        with pytest.raises(ResourceNotFound) as e3:
            await c.fetch(nntp_url(inn, f"no.such.group.{inn.info['tag']}/1"))
        with pytest.raises(ResourceNotFound):
            await c.fetch(f"news:no.such.group.{inn.info['tag']}")
        # the connection survives the errors and serves the next article
        r = await c.fetch(nntp_url(inn, f"{g}/2"))
    assert e1.value.reply is not None and e1.value.reply.startswith("423")
    assert e2.value.reply is not None and e2.value.reply.startswith("430")
    assert e3.value.reply is not None and e3.value.reply.startswith("411")
    assert str(e1.value).startswith(nntp_url(inn, f"{g}/99"))
    assert r.meta["number"] == 2
    assert t.greetings == 1


# -- listings ------------------------------------------------------------------------

async def test_group_listing(inn: Endpoint) -> None:
    t = Trace()
    g = inn.info["group"]
    async with client(t) as c:
        r = await c.fetch(nntp_url(inn, g))
    arts = inn.info["articles"]
    assert [e.meta["number"] for e in r.entries] == [a["number"] for a in arts]
    assert [e.meta["message_id"] for e in r.entries] == [a["message_id"] for a in arts]
    # name: the article number (its file name); the Subject is the title; key: the message-id
    assert [e.name for e in r.entries] == [str(a["number"]) for a in arts]
    assert [e.title for e in r.entries] == [a.get("decoded_subject", a["subject"]) for a in arts]
    assert [e.key for e in r.entries] == ["news:" + a["message_id"][1:-1] for a in arts]
    assert r.entries[2].meta["from"] == UTF8_FROM
    assert all(e.kind == "article" and e.size and e.modified for e in r.entries)
    assert r.entries[0].url == nntp_url(inn, f"{g}/1")
    assert r.entries[3].size is not None and r.entries[3].size > 500_000
    assert t.sent[-2:] == [f"GROUP {g}", "OVER 1-4"]
    assert UTF8_SUBJECT in r.text()


async def test_news_group_listing_links_message_ids(inn: Endpoint) -> None:
    t = Trace()
    async with client(t, news_server=f"{inn.host}:{inn.port}") as c:
        r = await c.fetch(f"news:{inn.info['group']}")
        first = r.entries[0]
        assert first.url == "news:" + art(inn, "dots")["message_id"][1:-1]
        again = await c.fetch(first.url)  # the entry's URL works
    assert again.meta["body"] == crlf(DOT_BODY)


async def test_listing_limit_keeps_newest_last(inn: Endpoint) -> None:
    t = Trace()
    many, n = inn.info["many_group"], inn.info["many_count"]
    async with client(t, news=NewsOptions(trace=t, listing_limit=10)) as c:
        r = await c.fetch(nntp_url(inn, many))
    assert [e.meta["number"] for e in r.entries] == list(range(n - 9, n + 1))
    assert r.entries[-1].title == f"Many article {n}" and r.entries[-1].name == str(n)
    assert r.meta["truncated"] is True and r.meta["count"] == n
    assert t.sent[-1] == f"OVER {n - 9}-{n}"


async def test_empty_group(inn: Endpoint) -> None:
    t = Trace()
    async with client(t) as c:
        r = await c.fetch(nntp_url(inn, inn.info["empty_group"]))
    assert r.entries == [] and r.content == b""
    assert not any(s.startswith("OVER") for s in t.sent)


async def test_news_star_lists_groups_with_descriptions(inn: Endpoint) -> None:
    t = Trace()
    async with client(t, news_server=f"{inn.host}:{inn.port}") as c:
        r = await c.fetch("news:*")
    by_name = {e.name: e for e in r.entries}
    g = inn.info["group"]
    assert by_name[g].url == f"news:{g}"
    assert by_name[g].title == "anyurl test group with assorted articles"
    assert by_name[g].meta["high"] == 4 and by_name[g].meta["low"] == 1
    assert by_name[inn.info["many_group"]].meta["high"] == inn.info["many_count"]
    assert inn.info["empty_group"] in by_name
    assert all(e.kind == "group" for e in r.entries)
    # descriptions first, so that LIST ACTIVE can stream entry by entry
    assert t.sent[-2:] == ["LIST NEWSGROUPS", "LIST ACTIVE"]


async def test_nntp_root_lists_groups_as_nntp_urls(inn: Endpoint) -> None:
    async with client(Trace()) as c:
        r = await c.fetch(f"nntp://{inn.host}:{inn.port}/")
    urls = {e.url for e in r.entries}
    assert nntp_url(inn, inn.info["group"]) in urls


async def test_listing_size_is_bounded(inn: Endpoint) -> None:
    async with client(Trace(), news_server=f"{inn.host}:{inn.port}", limits=Limits(max_entries=2)) as c:
        with pytest.raises(ProtocolError, match="longer than 2"):
            await c.fetch("news:*")


# -- configuration and unsafe input ------------------------------------------------

async def test_news_without_server_says_how_to_set_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NNTPSERVER", raising=False)
    t = Trace()
    async with client(t) as c:
        with pytest.raises(ConfigurationError, match="NNTPSERVER") as exc:
            await c.fetch("news:comp.lang.python")
    assert "news_server" in str(exc.value)
    assert t.lines == []


@pytest.mark.parametrize("url", [
    NNTPURL("nntp", "127.0.0.1", 0, None, None, "a\r\nQUIT", 1),
    NNTPURL("nntp", "127.0.0.1", 0, None, None, "a b", None),
    NewsURL("news", "misc.test\r\nLIST", None),
    NewsURL("news", None, "x\r\nQUIT@y"),
    NewsURL("news", None, "x y@z"),
    NewsURL("news", None, "x\0@z"),
])
async def test_unsafe_urls_refused_before_connecting(inn: Endpoint, url: Any) -> None:
    if isinstance(url, NNTPURL):
        url = NNTPURL(url.scheme, inn.host, inn.port, None, None, url.group, url.article)
    t = Trace()
    async with client(t, news_server=f"{inn.host}:{inn.port}") as c:
        with pytest.raises(UnsafeURL):
            await c.fetch(url)
    assert t.lines == []  # not even a connection


async def test_unsafe_parsed_message_id_refused(inn: Endpoint) -> None:
    t = Trace()
    async with client(t, news_server=f"{inn.host}:{inn.port}") as c:
        with pytest.raises(UnsafeURL, match="message-id"):
            await c.fetch("news:abc%0D%0AQUIT@example.com")
    assert t.lines == []


# -- connection reuse -----------------------------------------------------------------

async def test_one_connection_reused_across_urls(inn: Endpoint) -> None:
    t = Trace()
    g, many = inn.info["group"], inn.info["many_group"]
    async with client(t, news_server=f"{inn.host}:{inn.port}") as c:
        for n in (1, 2, 3):
            await c.fetch(nntp_url(inn, f"{g}/{n}"))
        await c.fetch(nntp_url(inn, f"{many}/5"))
        await c.fetch("news:" + art(inn, "utf8")["message_id"][1:-1])
        r = await c.fetch(nntp_url(inn, f"{g}/1"))
    assert r.meta["number"] == 1
    assert t.greetings == 1
    assert t.sent == ["CAPABILITIES", f"GROUP {g}", "ARTICLE 1", "ARTICLE 2", "ARTICLE 3",
                      f"GROUP {many}", "ARTICLE 5", f"ARTICLE {art(inn, 'utf8')['message_id']}",
                      f"GROUP {g}", "ARTICLE 1"]


async def test_overlapping_requests_use_separate_connections_unpipelined(inn: Endpoint) -> None:
    t = Trace()
    many = inn.info["many_group"]
    async with client(t, news=NewsOptions(trace=t, pipeline=1), limits=Limits(per_host=3)) as c:
        results = await asyncio.gather(*(c.fetch(nntp_url(inn, f"{many}/{n}")) for n in range(1, 13)))
        assert [r.meta["body"] for r in results] == [f"body of many {n}\r\n".encode() for n in range(1, 13)]
        first_round = t.greetings
        await asyncio.gather(*(c.fetch(nntp_url(inn, f"{many}/{n}")) for n in range(13, 19)))
    assert 1 < first_round <= 3
    assert t.greetings == first_round  # the second round reused the pooled connections


async def test_stream_abandoned_midway_does_not_poison_the_pool(inn: Endpoint) -> None:
    t = Trace()
    g = inn.info["group"]
    async with client(t, limits=Limits(chunk_size=4096)) as c:
        async with c.open(nntp_url(inn, f"{g}/4")) as body:
            async for _ in body:
                break
        r = await c.fetch(nntp_url(inn, f"{g}/1"))
    assert r.meta["body"] == crlf(DOT_BODY)
    assert t.greetings == 2  # the half-read connection was closed, not reused


# -- authentication and TLS ----------------------------------------------------------

def auth_url(inn: Endpoint, rest: str, port_key: str = "auth_port", scheme: str = "nntp") -> str:
    return f"{scheme}://{inn.host}:{inn.info[port_key]}/{rest}"


async def test_secret_group_needs_auth_without_credentials(inn: Endpoint) -> None:
    t = Trace()
    g, secret = inn.info["group"], inn.info["secret_group"]
    async with client(t) as c:
        open_article = await c.fetch(auth_url(inn, f"{g}/1"))  # the other groups need no login
        with pytest.raises(AccessDenied, match="credentials") as exc:
            await c.fetch(auth_url(inn, f"{secret}/1"))
    assert open_article.meta["body"] == crlf(DOT_BODY)
    assert exc.value.reply is not None and exc.value.reply.startswith("480")
    assert t.sent == ["CAPABILITIES", f"GROUP {g}", "ARTICLE 1", f"GROUP {secret}"]


async def test_auth_with_client_credentials_once_per_connection(inn: Endpoint) -> None:
    t = Trace()
    key = f"{inn.host}:{inn.info['auth_port']}"
    creds = {key: (inn.info["auth_user"], inn.info["auth_password"])}
    g, secret = inn.info["group"], inn.info["secret_group"]
    s1, s2 = inn.info["secret_articles"]
    async with client(t, credentials=creds) as c:
        r0 = await c.fetch(auth_url(inn, f"{g}/2"))
        r1 = await c.fetch(auth_url(inn, f"{secret}/1"))
        r2 = await c.fetch(auth_url(inn, f"{secret}/2"))
        listing = await c.fetch(auth_url(inn, secret))
    assert r0.meta["number"] == 2
    assert r1.meta["body"] == crlf(s1["body"]) and r2.meta["message_id"] == s2["message_id"]
    assert [e.meta["message_id"] for e in listing.entries] == [s1["message_id"], s2["message_id"]]
    assert t.sent == ["CAPABILITIES", f"GROUP {g}", "ARTICLE 2",
                      f"GROUP {secret}", f"AUTHINFO USER {inn.info['auth_user']}", "AUTHINFO PASS ****",
                      f"GROUP {secret}", "ARTICLE 1", "ARTICLE 2", f"GROUP {secret}", "OVER 1-2"]
    assert [line for d, line in t.lines if d == "recv" and line.startswith("281")]


async def test_auth_wrong_password(inn: Endpoint) -> None:
    t = Trace()
    creds = {inn.host: (inn.info["auth_user"], "wrong")}
    async with client(t, credentials=creds) as c:
        with pytest.raises(AccessDenied, match="rejected the login") as exc:
            await c.fetch(auth_url(inn, f"{inn.info['secret_group']}/1"))
    assert exc.value.reply is not None and exc.value.reply.startswith("481")


async def test_auth_from_netrc_for_a_message_id(inn: Endpoint, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    netrc = tmp_path / ".netrc"
    netrc.write_text(f"machine {inn.host} login {inn.info['auth_user']} password {inn.info['auth_password']}\n")
    os.chmod(netrc, 0o600)
    monkeypatch.setenv("HOME", str(tmp_path))
    t = Trace()
    mid = inn.info["secret_articles"][0]["message_id"]
    async with client(t, use_netrc=True, news_server=f"{inn.host}:{inn.info['auth_port']}") as c:
        r = await c.fetch("news:" + mid[1:-1])
    assert r.meta["body"] == crlf(inn.info["secret_articles"][0]["body"])
    assert t.sent == ["CAPABILITIES", f"ARTICLE {mid}", f"AUTHINFO USER {inn.info['auth_user']}",
                      "AUTHINFO PASS ****", f"ARTICLE {mid}"]


def tls_context(inn: Endpoint) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=inn.info["cafile"])


async def test_nntps(inn: Endpoint) -> None:
    t = Trace()
    g = inn.info["group"]
    async with client(t, news=NewsOptions(trace=t, ssl_context=tls_context(inn))) as c:
        r = await c.fetch(auth_url(inn, f"{g}/1", "tls_port", "nntps"))
        listing = await c.fetch(auth_url(inn, g, "tls_port", "nntps"))
    assert r.meta["body"] == crlf(DOT_BODY)
    assert listing.entries[0].url == auth_url(inn, f"{g}/1", "tls_port", "nntps")
    assert t.greetings == 1


async def test_nntps_untrusted_certificate(inn: Endpoint) -> None:
    async with client(Trace()) as c:
        with pytest.raises(ConnectError):
            await c.fetch(auth_url(inn, f"{inn.info['group']}/1", "tls_port", "nntps"))


async def test_starttls_then_auth(inn: Endpoint) -> None:
    t = Trace()
    creds = {inn.host: (inn.info["auth_user"], inn.info["auth_password"])}
    opts = NewsOptions(trace=t, starttls=True, ssl_context=tls_context(inn))
    secret = inn.info["secret_group"]
    async with client(t, news=opts, credentials=creds) as c:
        r = await c.fetch(auth_url(inn, f"{secret}/2"))
    assert r.meta["body"] == crlf(inn.info["secret_articles"][1]["body"])
    assert t.sent == ["CAPABILITIES", "STARTTLS", "CAPABILITIES", f"GROUP {secret}",
                      f"AUTHINFO USER {inn.info['auth_user']}", "AUTHINFO PASS ****", f"GROUP {secret}",
                      "ARTICLE 2"]


# -- faults the real server will not produce: a scripted peer ----------------------

async def scripted_server(script: Callable[[asyncio.StreamReader, asyncio.StreamWriter], Any]) -> Any:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await script(reader, writer)
        finally:
            writer.close()

    return await asyncio.start_server(handle, "127.0.0.1", 0)


async def test_connection_dropped_inside_article_is_truncation() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"200 fake ready\r\n")
        await reader.readline()  # CAPABILITIES
        writer.write(b"101 caps\r\nVERSION 2\r\nREADER\r\nOVER\r\n.\r\n")
        await reader.readline()  # GROUP
        writer.write(b"211 1 1 1 misc.test\r\n")
        await reader.readline()  # ARTICLE
        writer.write(b"220 1 <a@b> article\r\nSubject: cut\r\n\r\nfirst line\r\nsecond li")
        await writer.drain()

    server = await scripted_server(script)
    port = server.sockets[0].getsockname()[1]
    async with server, client(Trace()) as c:
        with pytest.raises(TruncatedTransfer):
            await c.fetch(f"nntp://127.0.0.1:{port}/misc.test/1")


@pytest.mark.parametrize(("greeting", "exc"), [(b"400 too busy\r\n", TemporaryFailure),
                                               (b"502 go away\r\n", ConnectError)])
async def test_refusing_greetings(greeting: bytes, exc: type[Exception]) -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(greeting)
        await writer.drain()

    server = await scripted_server(script)
    port = server.sockets[0].getsockname()[1]
    async with server, client(Trace()) as c:
        with pytest.raises(exc):
            await c.fetch(f"nntp://127.0.0.1:{port}/misc.test/1")


async def test_old_server_gets_mode_reader_and_xover() -> None:
    seen: list[bytes] = []

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"200 old server\r\n")
        while line := await reader.readline():
            seen.append(line)
            cmd = line.split()[0].upper()
            if cmd == b"CAPABILITIES":
                writer.write(b"500 What?\r\n")
            elif cmd == b"MODE":
                writer.write(b"200 reader\r\n")
            elif cmd == b"GROUP":
                writer.write(b"211 2 1 2 misc.old\r\n")
            elif cmd == b"XOVER":
                writer.write(b"224 data\r\n1\tOne\ta@b\t\t<1@b>\t\t10\t1\r\n"
                             b"2\tTwo\ta@b\t\t<2@b>\t\t20\t1\r\n.\r\n")
            else:
                writer.write(b"500 What?\r\n")
            await writer.drain()

    server = await scripted_server(script)
    port = server.sockets[0].getsockname()[1]
    async with server, client(Trace()) as c:
        r = await c.fetch(f"nntp://127.0.0.1:{port}/misc.old")
    assert [(e.name, e.title, e.key) for e in r.entries] == [("1", "One", "news:1@b"), ("2", "Two", "news:2@b")]
    assert seen[:4] == [b"CAPABILITIES\r\n", b"MODE READER\r\n", b"GROUP misc.old\r\n", b"XOVER 1-2\r\n"]


@pytest.mark.parametrize("goodbye", [b"", b"400 Idle timeout, closing\r\n"])
async def test_pooled_connection_closed_by_server_is_replaced(goodbye: bytes) -> None:
    connections = 0

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        writer.write(b"200 ready\r\n")
        while line := await reader.readline():
            cmd = line.split()[0].upper()
            if cmd == b"CAPABILITIES":
                writer.write(b"101 caps\r\nVERSION 2\r\nREADER\r\n.\r\n")
            elif cmd == b"GROUP":
                writer.write(b"211 1 1 1 misc.test\r\n")
            elif cmd == b"ARTICLE":
                writer.write(b"220 1 <a@b> article\r\nSubject: s\r\n\r\nbody\r\n.\r\n")
                await writer.drain()
                # then the server drops the connection, as after an idle timeout
                writer.write(goodbye)
                await writer.drain()
                return
            await writer.drain()

    server = await scripted_server(script)
    port = server.sockets[0].getsockname()[1]
    t = Trace()
    async with server, client(t) as c:
        first = await c.fetch(f"nntp://127.0.0.1:{port}/misc.test/1")
        await asyncio.sleep(0.05)
        second = await c.fetch(f"nntp://127.0.0.1:{port}/misc.test/1")
    assert first.meta["body"] == second.meta["body"] == b"body\r\n"
    assert connections == 2 and t.greetings == 2


async def test_starttls_injection_refused() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"200 ready\r\n")
        await reader.readline()
        writer.write(b"101 caps\r\nVERSION 2\r\nREADER\r\nSTARTTLS\r\n.\r\n")
        await reader.readline()
        # plaintext smuggled after 382: it must not be taken as a reply over TLS
        writer.write(b"382 go ahead\r\n211 1 1 1 misc.test\r\n")
        await writer.drain()
        await reader.read(100)

    server = await scripted_server(script)
    port = server.sockets[0].getsockname()[1]
    async with server, client(Trace(), news=NewsOptions(starttls=True)) as c:
        with pytest.raises(ProtocolError, match="before the TLS handshake"):
            await c.fetch(f"nntp://127.0.0.1:{port}/misc.test/1")


# -- stat ---------------------------------------------------------------------------------

async def test_stat_article_sends_stat_and_head_not_article(inn: Endpoint) -> None:
    from datetime import UTC
    from email.utils import parsedate_to_datetime

    t = Trace()
    g = inn.info["group"]
    a = art(inn, "dots")
    async with client(t) as c:
        st = await c.stat(nntp_url(inn, f"{g}/{a['number']}"))
        whole = await c.fetch(nntp_url(inn, f"{g}/{a['number']}"))
    # STAT (exists?), HEAD (headers), and OVER for :bytes as INN's heads carry no Bytes:
    n = a["number"]
    assert t.sent[-4:] == [f"STAT {n}", f"HEAD {n}", f"OVER {n}-{n}", f"ARTICLE {n}"]
    assert st.kind == "article" and st.content_type == "message/rfc822"
    assert st.meta["number"] == n and st.meta["message_id"] == a["message_id"]
    assert st.meta["subject"] == a["subject"] and st.meta["group"] == g
    assert st.meta["headers"]["message-id"] == a["message_id"]
    # :bytes is the article as the server stores it (CRLF lines, no dot-stuffing)
    assert st.size is not None and st.meta["size_from"] == ":bytes"
    assert abs(st.size - len(whole.content)) <= 4
    assert st.modified is not None and st.modified.tzinfo is UTC
    assert st.modified == parsedate_to_datetime(whole.meta["headers"]["date"])


async def test_stat_by_message_id_and_missing_article(inn: Endpoint) -> None:
    t = Trace()
    a = art(inn, "reply")
    async with client(t, news_server=f"{inn.host}:{inn.port}") as c:
        st = await c.stat("news:" + a["message_id"][1:-1])
        assert t.sent[-2:] == [f"STAT {a['message_id']}", f"HEAD {a['message_id']}"]
        with pytest.raises(ResourceNotFound):
            await c.stat(nntp_url(inn, f"{inn.info['group']}/999"))
        assert t.sent[-2:] == ["STAT 999", "HEAD 999"]  # sent together (pipelined)
    assert st.kind == "article" and st.meta["message_id"] == a["message_id"]
    assert st.meta["subject"] == a["subject"] and st.modified is not None


async def test_stat_group(inn: Endpoint) -> None:
    t = Trace()
    many, n = inn.info["many_group"], inn.info["many_count"]
    async with client(t, news_server=f"{inn.host}:{inn.port}") as c:
        st = await c.stat(nntp_url(inn, many))
        news = await c.stat(f"news:{inn.info['group']}")
        with pytest.raises(ResourceNotFound, match="no such newsgroup"):
            await c.stat(nntp_url(inn, "no.such.group"))
    assert [s for s in t.sent if not s.startswith("CAPABILITIES")] == [
        f"GROUP {many}", f"GROUP {inn.info['group']}", "GROUP no.such.group"]
    assert st.kind == "group" and (st.meta["count"], st.meta["low"], st.meta["high"]) == (n, 1, n)
    assert news.kind == "group" and news.meta["high"] == 4


@pytest.mark.parametrize("bytes_header", [True, False])
async def test_stat_size_from_bytes_header_or_over_msgid(bytes_header: bool) -> None:
    # INN adds no Bytes: header and offers no OVER MSGID: these paths need a scripted server
    seen: list[bytes] = []

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"200 ready\r\n")
        while line := await reader.readline():
            seen.append(line.rstrip(b"\r\n"))
            cmd = line.split()[0].upper()
            if cmd == b"CAPABILITIES":
                writer.write(b"101 caps\r\nVERSION 2\r\nREADER\r\nOVER MSGID\r\n.\r\n")
            elif cmd == b"STAT":
                writer.write(b"223 0 <a@b.example>\r\n")
            elif cmd == b"HEAD":
                writer.write(b"221 0 <a@b.example>\r\nSubject: s\r\nDate: Tue, 02 Jan 2024 03:04:05 GMT\r\n"
                             + (b"Bytes: 4321\r\n" if bytes_header else b"") + b".\r\n")
            elif cmd == b"OVER":
                writer.write(b"224 over\r\n0\ts\ta@b\tdate\t<a@b.example>\t\t987\t3\r\n.\r\n")
            else:
                writer.write(b"500 what?\r\n")
            await writer.drain()

    server = await scripted_server(script)
    port = server.sockets[0].getsockname()[1]
    async with server, client(Trace(), news_server=f"127.0.0.1:{port}") as c:
        st = await c.stat("news:a@b.example")
    seen = [s for s in seen if s != b"QUIT"]  # the pool may say goodbye before the server's log is read
    if bytes_header:
        assert seen[1:] == [b"STAT <a@b.example>", b"HEAD <a@b.example>"]
        assert (st.size, st.meta["size_from"]) == (4321, "Bytes:")
    else:
        assert seen[1:] == [b"STAT <a@b.example>", b"HEAD <a@b.example>", b"OVER <a@b.example>"]
        assert (st.size, st.meta["size_from"]) == (987, ":bytes")
    assert st.modified is not None and st.modified.isoformat() == "2024-01-02T03:04:05+00:00"


# -- pipelining (issue 24.4) -----------------------------------------------------------

async def test_overlapping_requests_share_one_pipelined_connection(inn: Endpoint) -> None:
    t = Trace()
    many = inn.info["many_group"]
    g = inn.info["group"]
    mid = art(inn, "utf8")["message_id"]
    async with client(t, limits=Limits(per_host=4), news_server=f"{inn.host}:{inn.port}") as c:
        urls = [nntp_url(inn, f"{many}/{n}") for n in range(1, 21)]
        results = await asyncio.gather(*(c.fetch(u) for u in urls), c.fetch("news:" + mid[1:-1]),
                                       c.stat(nntp_url(inn, f"{many}/7")))
        *articles, by_id, st = results
        assert [r.meta["number"] for r in articles] == list(range(1, 21))
        assert [r.content for r in articles] == [
            (r.content[: r.meta["body_offset"]] + f"body of many {n}\r\n".encode()) for n, r in enumerate(articles, 1)]
        assert [r.meta["body"] for r in articles] == [f"body of many {n}\r\n".encode() for n in range(1, 21)]
        assert by_id.meta["message_id"] == mid and st.meta["number"] == 7 and st.size
        # one connection carried them all: every command was written before the first reply was read
        assert t.greetings == 1
        first_reply = next(i for i, (d, line) in enumerate(t.lines) if d == "recv" and line.startswith("220 "))
        before = [line for d, line in t.lines[:first_reply] if d == "send"]
        assert before[-23:-2] == [f"ARTICLE {n}" for n in range(1, 21)] + [f"ARTICLE {mid}"]
        assert before[-2:] == ["STAT 7", "HEAD 7"]
        # the window is given back whole: the next batch reuses the connection, in another group
        again = await asyncio.gather(*(c.fetch(nntp_url(inn, f"{g}/{n}")) for n in (1, 2, 3)))
        assert [r.meta["number"] for r in again] == [1, 2, 3]
        assert t.greetings == 1


async def test_large_article_in_a_window(inn: Endpoint) -> None:
    t = Trace()
    a = art(inn, "large")
    g = inn.info["group"]
    async with client(t) as c:
        large = c.fetch(nntp_url(inn, f"{g}/{a['number']}"))
        small = [c.fetch(nntp_url(inn, f"{g}/{n}")) for n in (1, 2)]
        big, one, two = await asyncio.gather(large, *small)
        plain = await c.fetch(nntp_url(inn, f"{g}/{a['number']}"))
    assert big.content == plain.content and big.meta["body"] == crlf(large_body())
    assert one.meta["number"] == 1 and two.meta["number"] == 2
    assert t.greetings == 1

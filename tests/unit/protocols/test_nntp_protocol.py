"""The pure NNTP layer: reply reader, dot-unstuffing, parsers, safe commands."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anyurl.errors import (
    AccessDenied,
    ConnectError,
    ProtocolError,
    ResourceNotFound,
    TemporaryFailure,
    TruncatedTransfer,
    UnsafeURL,
)
from anyurl.protocols import nntp
from anyurl.protocols.nntp import NEED_DATA, Data, End, Reply, ReplyReader


def drain(reader: ReplyReader) -> list[object]:
    events: list[object] = []
    while (ev := reader.next_event()) is not NEED_DATA:
        events.append(ev)
    return events


def block_payload(events: list[object]) -> bytes:
    return b"".join(e.data for e in events if isinstance(e, Data))


# -- status lines ------------------------------------------------------------------

@pytest.mark.parametrize(("line", "code", "text"), [
    (b"200 news.example ready (posting ok)\r\n", 200, "news.example ready (posting ok)"),
    (b"211 4 1 4 misc.test\r\n", 211, "4 1 4 misc.test"),
    (b"480\r\n", 480, ""),
    (b"430 No such article\n", 430, "No such article"),
])
def test_parse_reply(line: bytes, code: int, text: str) -> None:
    reply = nntp.parse_reply(line)
    assert (reply.code, reply.text) == (code, text)


@pytest.mark.parametrize("line", [b"", b"OK\r\n", b"20\r\n", b"2000 x\r\n", b"abc def\r\n"])
def test_parse_reply_rejects_garbage(line: bytes) -> None:
    with pytest.raises(ProtocolError):
        nntp.parse_reply(line)


# -- the reader state machine ------------------------------------------------------

WIRE_ARTICLE = (b"220 1 <a@b> article\r\n"
                b"Subject: x\r\n\r\n"
                b"..A line starting with a dot.\r\n"
                b"...Two dots.\r\n"
                b"..\r\n"
                b"end\r\n"
                b".\r\n")
ARTICLE_PAYLOAD = (b"Subject: x\r\n\r\n"
                   b".A line starting with a dot.\r\n"
                   b"..Two dots.\r\n"
                   b".\r\n"
                   b"end\r\n")


def test_block_unstuffed_and_terminated() -> None:
    r = ReplyReader()
    r.expect(nntp.ARTICLE_CODES)
    r.feed(WIRE_ARTICLE + b"223 next\r\n")
    r.expect()
    events = drain(r)
    assert events[0] == Reply(220, "1 <a@b> article")
    assert isinstance(events[-2], End)
    assert events[-1] == Reply(223, "next")
    assert block_payload(events) == ARTICLE_PAYLOAD


def test_error_reply_has_no_block() -> None:
    r = ReplyReader()
    r.expect(nntp.ARTICLE_CODES)
    r.expect(nntp.ARTICLE_CODES)
    r.feed(b"423 No such article number 9\r\n220 2 <c@d> article\r\nbody\r\n.\r\n")
    events = drain(r)
    assert events == [Reply(423, "No such article number 9"), Reply(220, "2 <c@d> article"),
                      Data(b"body\r\n"), End()]


def test_empty_block() -> None:
    r = ReplyReader()
    r.expect(nntp.OVER_CODES)
    r.feed(b"224 Overview follows\r\n.\r\n")
    assert drain(r) == [Reply(224, "Overview follows"), End()]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=len(WIRE_ARTICLE)), max_size=12))
def test_any_split_gives_the_same_payload(cuts: list[int]) -> None:
    r = ReplyReader()
    r.expect(nntp.ARTICLE_CODES)
    events: list[object] = []
    prev = 0
    for cut in sorted(set(cuts)) + [len(WIRE_ARTICLE)]:
        r.feed(WIRE_ARTICLE[prev:cut])
        prev = cut
        events += drain(r)
    assert events[0] == Reply(220, "1 <a@b> article")
    assert events[-1] == End()
    assert block_payload(events) == ARTICLE_PAYLOAD


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(alphabet=". abc\t", max_size=12), max_size=15))
def test_stuffing_round_trip(lines: list[str]) -> None:
    # What a server sends after dot-stuffing arbitrary lines comes back unchanged.
    wire = b"".join((b"." + ln.encode() if ln.startswith(".") else ln.encode()) + b"\r\n" for ln in lines)
    r = ReplyReader()
    r.expect(nntp.ARTICLE_CODES)
    r.feed(b"220 0 <x@y>\r\n" + wire + b".\r\n")
    assert block_payload(drain(r)) == b"".join(ln.encode() + b"\r\n" for ln in lines)


def test_eof_inside_block_is_truncation() -> None:
    r = ReplyReader()
    r.expect(nntp.ARTICLE_CODES)
    r.feed(b"220 1 <a@b>\r\nline one\r\npartial")
    drain(r)
    r.feed_eof()
    with pytest.raises(TruncatedTransfer):
        drain(r)


def test_eof_before_reply_is_connect_error() -> None:
    r = ReplyReader()
    r.expect()
    r.feed_eof()
    with pytest.raises(ConnectError):
        r.next_event()


def test_line_length_bounded() -> None:
    r = ReplyReader(max_line=100)
    r.expect()
    r.feed(b"2" * 101)
    with pytest.raises(ProtocolError, match="longer than 100"):
        r.next_event()
    r = ReplyReader(max_line=100)
    r.expect(nntp.ARTICLE_CODES)
    r.feed(b"220 1 <a@b>\r\nok\r\n" + b"x" * 200)
    with pytest.raises(ProtocolError, match="longer than 100"):
        drain(r)


# -- errors ------------------------------------------------------------------------

@pytest.mark.parametrize(("code", "cls"), [
    (411, ResourceNotFound), (423, ResourceNotFound), (430, ResourceNotFound), (420, ResourceNotFound),
    (480, AccessDenied), (481, AccessDenied), (502, AccessDenied),
    (400, TemporaryFailure), (403, TemporaryFailure), (500, ProtocolError),
])
def test_error_for(code: int, cls: type[Exception]) -> None:
    err = nntp.error_for(Reply(code, "server text"), "X")
    assert type(err) is cls
    assert err.reply == f"{code} server text"


# -- commands ----------------------------------------------------------------------

def test_commands() -> None:
    assert nntp.group_cmd("comp.lang.python") == b"GROUP comp.lang.python\r\n"
    assert nntp.article_cmd(12) == b"ARTICLE 12\r\n"
    assert nntp.article_cmd("a.b@c.d") == b"ARTICLE <a.b@c.d>\r\n"
    assert nntp.article_cmd("<a.b@c.d>", "HEAD") == b"HEAD <a.b@c.d>\r\n"
    assert nntp.over_cmd(5, 9, "XOVER") == b"XOVER 5-9\r\n"
    assert nntp.simple_cmd("LIST", "ACTIVE") == b"LIST ACTIVE\r\n"
    assert nntp.authinfo_cmd("USER", "joe") == b"AUTHINFO USER joe\r\n"


@pytest.mark.parametrize("group", ["a\r\nQUIT", "a\nb", "a\0b", "a b", "a\tb", "", "gr\u00fcn", "\x7f"])
def test_unsafe_group_refused(group: str) -> None:
    with pytest.raises(UnsafeURL):
        nntp.group_cmd(group)


@pytest.mark.parametrize("mid", ["a\r\nQUIT@b", "a@b\n", "a\0@b", "a b@c", "a>@b", "<>", "noat",
                                 "x" * 300 + "@b"])
def test_unsafe_message_id_refused(mid: str) -> None:
    with pytest.raises(UnsafeURL):
        nntp.article_cmd(mid)


def test_authinfo_refuses_crlf() -> None:
    with pytest.raises(UnsafeURL):
        nntp.authinfo_cmd("PASS", "pw\r\nQUIT")


# -- parsers -------------------------------------------------------------------------

def test_group_reply() -> None:
    st_ = nntp.parse_group_reply(Reply(211, "4 1 4 misc.test"))
    assert (st_.count, st_.low, st_.high, st_.name) == (4, 1, 4, "misc.test")
    with pytest.raises(ProtocolError):
        nntp.parse_group_reply(Reply(211, "x y"))


def test_overview_line() -> None:
    line = (b"3\t=?UTF-8?B?R3LDvMOfZQ==?=\t=?ISO-8859-1?Q?J=F6rg?= <j@x>\tSun, 22 Nov 2026 10:00:00 +0000"
            b"\t<m3@x>\t<m1@x> <m2@x>\t442\t7\tXref: h g:3\r\n")
    o = nntp.parse_overview(line)
    assert o.number == 3 and o.subject == "Grüße" and o.sender == "Jörg <j@x>"
    assert o.message_id == "<m3@x>" and o.references == "<m1@x> <m2@x>"
    assert (o.size, o.lines) == (442, 7) and o.extra == ("Xref: h g:3",)
    assert o.date is not None and o.date.year == 2026
    with pytest.raises(ProtocolError):
        nntp.parse_overview(b"x\ty\r\n")


def test_overview_tolerates_bad_date_and_sizes() -> None:
    o = nntp.parse_overview(b"7\ts\tf\tnot a date\t<a@b>\t\t\t\r\n")
    assert o.date is None and o.size is None and o.lines is None


def test_active_and_newsgroups() -> None:
    a = nntp.parse_active(b"misc.test 0000000004 0000000001 y\r\n")
    assert (a.group, a.high, a.low, a.status) == ("misc.test", 4, 1, "y")
    with pytest.raises(ProtocolError):
        nntp.parse_active(b"misc.test x y\r\n")
    assert nntp.parse_newsgroups(b"misc.test\tTesting, =?UTF-8?Q?gr=C3=BCn?=\r\n") == ("misc.test", "Testing, grün")
    assert nntp.parse_newsgroups(b"alt.nodesc\r\n") == ("alt.nodesc", "")


def test_capabilities() -> None:
    caps = nntp.parse_capabilities(b"VERSION 2\r\nREADER\r\nLIST ACTIVE NEWSGROUPS\r\nover\r\n")
    assert caps == {"VERSION": ["2"], "READER": [], "LIST": ["ACTIVE", "NEWSGROUPS"], "OVER": []}


def test_article_head() -> None:
    raw = (b"From: =?ISO-8859-1?Q?J=F6rg_M=FCller?= <j@x>\r\n"
           b"Subject: =?UTF-8?B?R3LDvMOfZSBhdXMgS8O2bG4g4pyT?=\r\n"
           b"References: <a@x>\r\n <b@x>\r\n"
           b"X-Bad: =?bogus?Q?x?=\r\n\r\nbody\r\n")
    at = nntp.split_head(raw)
    assert raw[at:] == b"body\r\n"
    fields = nntp.parse_article_head(raw[:at])
    assert fields == [("From", "Jörg Müller <j@x>"), ("Subject", "Grüße aus Köln ✓"),
                      ("References", "<a@x> <b@x>"), ("X-Bad", "=?bogus?Q?x?=")]


@pytest.mark.parametrize(("raw", "at"), [
    (b"A: b\r\n\r\nbody", 8), (b"A: b\n\nbody", 6), (b"\r\nbody", 2), (b"A: b\r\n", -1),
])
def test_split_head(raw: bytes, at: int) -> None:
    assert nntp.split_head(raw) == at


# -- the news server setting (Client(news_server=...) / NNTPSERVER) ----------------------

@pytest.mark.parametrize(("spec", "expected"), [
    ("news.example.org", ("nntp", "news.example.org", 119)),
    ("News.Example.org:1119", ("nntp", "news.example.org", 1119)),
    ("[::1]:1119", ("nntp", "::1", 1119)),
    ("nntps://news.example.org", ("nntps", "news.example.org", 563)),
    ("nntp://127.0.0.1:1119/", ("nntp", "127.0.0.1", 1119)),
])
def test_news_server_setting(spec: str, expected: tuple[str, str, int]) -> None:
    from anyurl.handlers.news import NewsOptions, parse_server

    s = parse_server(spec, NewsOptions())
    assert (s.scheme, s.host, s.port) == expected


@pytest.mark.parametrize("spec", ["", "host:", "host:99999", "a b", "user@host", "host:12x", "http://h"])
def test_bad_news_server_setting(spec: str) -> None:
    from anyurl.errors import ConfigurationError
    from anyurl.handlers.news import NewsOptions, parse_server

    with pytest.raises(ConfigurationError):
        parse_server(spec, NewsOptions())


# -- hostile input: only our own errors, whatever the server sends ------------------------

@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300), st.sampled_from([nntp.NO_BLOCK, nntp.ARTICLE_CODES, nntp.OVER_CODES]))
def test_reader_never_raises_foreign_errors(data: bytes, block: frozenset[int]) -> None:
    from anyurl.errors import AnyURLError

    r = ReplyReader(max_line=128)
    r.expect(block)
    r.feed(data)
    r.feed_eof()
    try:
        for _ in range(1000):
            ev = r.next_event()
            if isinstance(ev, End):
                r.expect(block)
    except AnyURLError:
        pass


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_line_parsers_never_raise_foreign_errors(line: bytes) -> None:
    for parse in (nntp.parse_overview, nntp.parse_active, nntp.parse_newsgroups):
        try:
            parse(line)
        except ProtocolError:
            pass
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in nntp.parse_article_head(line))
    assert all(k == k.upper() for k in nntp.parse_capabilities(line))
    assert -1 <= nntp.split_head(line) <= len(line)


# -- listings and stat -------------------------------------------------------------

@pytest.mark.parametrize(("line", "number"), [
    (b"123\tSubject\tfrom\tdate\t<m@x>\t\t10\t1", 123),
    (b" 7 \tS", 7),
    (b"abc\tS", None),
    (b"", None),
    (b"-1\tS", None),
    (b"9" * 30 + b"\tS", None),  # absurdly long: not a number we keep
])
def test_overview_number(line: bytes, number: int | None) -> None:
    assert nntp.overview_number(line) == number


@pytest.mark.parametrize(("line", "expect"), [
    (b"223 5 <a@b> status", (5, "<a@b>")),
    (b"223 0 <a@b>", (0, "<a@b>")),  # by message-id outside a group
    (b"223 5", (5, None)),
    (b"223 x y", (None, None)),
])
def test_parse_stat_reply(line: bytes, expect: tuple[int | None, str | None]) -> None:
    assert nntp.parse_stat_reply(nntp.parse_reply(line)) == expect


def test_article_facts() -> None:
    from datetime import UTC, datetime

    fields = nntp.parse_article_head(
        b"Subject: =?UTF-8?B?R3LDvMOfZQ==?=\r\nDate: Mon, 01 Jan 2024 12:00:00 +0200\r\n"
        b"Message-ID: <a@b>\r\nBytes: 1234\r\nLines: 12\r\nBytes: 99\r\n")
    facts = nntp.article_facts(fields)
    assert facts.subject == "Grüße" and facts.message_id == "<a@b>"
    assert (facts.size, facts.lines) == (1234, 12)  # the first Bytes: wins
    assert facts.modified == datetime(2024, 1, 1, 10, 0, tzinfo=UTC)
    none = nntp.article_facts(nntp.parse_article_head(b"Date: someday\r\nBytes: -5\r\n"))
    assert (none.size, none.modified, none.subject, none.lines) == (None, None, None, None)

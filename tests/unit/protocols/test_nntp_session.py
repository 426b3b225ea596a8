"""The NNTP session (anyurl.protocols.nntpsession) played on bytes: what it sends for what
the server answers, with no network (the INN tests in tests/integration/test_news.py run
the same ops against a real server)."""

from __future__ import annotations

from typing import Any

import pytest

from anyurl.errors import AccessDenied, ConnectError, ProtocolError, ResourceNotFound, TemporaryFailure
from anyurl.protocols import nntpsession as ns
from anyurl.protocols.nntpsession import Session, play

CAPS_3977 = b"101 Capability list:\r\nVERSION 2\r\nREADER\r\nOVER MSGID\r\nSTARTTLS\r\n.\r\n"


def session() -> Session:
    return Session("news.example", 119)


def test_login_on_a_reader_server_asks_capabilities_only() -> None:
    s = session()
    sent, _ = play(s, s.login(False), b"200 ready\r\n" + CAPS_3977)
    assert sent == b"CAPABILITIES\r\n"
    assert s.over_verb == "OVER" and "READER" in s.caps and s.caps["OVER"] == ["MSGID"]


def test_an_rfc_977_server_gets_mode_reader_and_xover() -> None:
    s = session()
    sent, _ = play(s, s.login(False), b"201 no posting\r\n500 what?\r\n201 reader mode\r\n")
    assert sent == b"CAPABILITIES\r\nMODE READER\r\n"
    assert s.caps == {} and s.over_verb == "XOVER"


@pytest.mark.parametrize(("greeting", "error"), [
    (b"400 too busy\r\n", TemporaryFailure), (b"502 go away\r\n", ConnectError), (b"205 bye\r\n", ProtocolError)])
def test_a_refusing_greeting_is_its_error(greeting: bytes, error: type[Exception]) -> None:
    s = session()
    with pytest.raises(error) as info:
        play(s, s.login(False), greeting)
    assert getattr(info.value, "reply", None) == greeting.decode().strip()


def test_starttls_upgrades_then_asks_capabilities_again() -> None:
    s = session()
    events: list[Any] = []
    after = b"101 list\r\nVERSION 2\r\nREADER\r\nAUTHINFO USER\r\n.\r\n"
    sent, _ = play(s, s.login(True), b"200 ready\r\n" + CAPS_3977 + b"382 go ahead\r\n" + after,
                   answer=events.append)
    assert sent == b"CAPABILITIES\r\nSTARTTLS\r\nCAPABILITIES\r\n"
    assert events == [ns.START_TLS]
    assert "STARTTLS" not in s.caps and "AUTHINFO" in s.caps


def test_starttls_not_offered_fails_before_sending_it() -> None:
    s = session()
    with pytest.raises(ProtocolError, match="does not offer it"):
        play(s, s.login(True), b"200 ready\r\n101 list\r\nREADER\r\n.\r\n")


def test_a_480_logs_in_once_and_asks_again() -> None:
    s = session()
    asked: list[Any] = []

    def answer(event: Any) -> Any:
        asked.append(event)
        return ("joe", "secret")

    sent, reply = play(s, s.command(b"GROUP secret.group\r\n"),
                       b"480 auth required\r\n381 password\r\n281 ok\r\n211 3 1 3 secret.group\r\n", answer)
    assert sent == (b"GROUP secret.group\r\nAUTHINFO USER joe\r\nAUTHINFO PASS secret\r\n"
                    b"GROUP secret.group\r\n")
    assert reply.code == 211 and s.authenticated
    assert [(a.host, a.port, a.reply.code) for a in asked] == [("news.example", 119, 480)]


def test_a_480_without_a_login_names_where_to_put_one() -> None:
    s = session()
    with pytest.raises(AccessDenied, match=r"news.example:119 requires authentication.*netrc") as info:
        play(s, s.command(b"GROUP g\r\n"), b"480 auth required\r\n")
    assert info.value.reply == "480 auth required"


def test_a_rejected_login_is_access_denied() -> None:
    s = session()
    with pytest.raises(AccessDenied, match="rejected the login of 'joe'"):
        play(s, s.command(b"GROUP g\r\n"), b"480 auth\r\n381 pw\r\n481 no\r\n", lambda e: ("joe", "pw"))


def test_article_selects_its_group_once() -> None:
    s = session()
    sent, reply = play(s, s.article("misc.test", 3), b"211 3 1 3 misc.test\r\n220 3 <a@b> article\r\n")
    assert sent == b"GROUP misc.test\r\nARTICLE 3\r\n" and reply.code == 220 and s.group == "misc.test"
    sent, _ = play(s, s.article("misc.test", 2), b"220 2 <c@d> article\r\n")
    assert sent == b"ARTICLE 2\r\n"  # the group is selected already


def test_no_such_article_or_group() -> None:
    s = session()
    with pytest.raises(ResourceNotFound, match=r"no such article \(ARTICLE <x@y>\)"):
        play(s, s.article(None, "<x@y>"), b"430 no such article\r\n")
    with pytest.raises(ResourceNotFound, match="no such newsgroup"):
        play(s, s.select("no.such"), b"411 no such group\r\n")
    assert s.group is None


def test_stat_asks_the_overview_for_a_size_the_head_does_not_give() -> None:
    s = session()
    replies = (b"223 3 <a@b> status\r\n221 3 <a@b> head\r\nSubject: hi\r\nMessage-ID: <a@b>\r\n.\r\n"
               b"224 overview\r\n3\thi\tme\tdate\t<a@b>\t\t1234\t5\r\n.\r\n")
    sent, (number, mid, head, size) = play(s, s.stat(None, 3, 1 << 16), replies)
    assert sent == b"STAT 3\r\nHEAD 3\r\nOVER 3-3\r\n"
    assert (number, mid, size) == (3, "<a@b>", 1234) and head.startswith(b"Subject: hi\r\n")
    # a Bytes: header is the size: no OVER
    sent, (_, _, _, size) = play(s, s.stat(None, 3, 1 << 16),
                                 b"223 3 <a@b>\r\n221 3 <a@b>\r\nBytes: 99\r\n.\r\n")
    assert sent == b"STAT 3\r\nHEAD 3\r\n" and size is None


def test_a_head_larger_than_asked_is_refused() -> None:
    s = session()
    with pytest.raises(ProtocolError, match="larger than 10 bytes"):
        play(s, s.stat(None, 3, 10), b"223 3 <a@b>\r\n221 3 <a@b>\r\nSubject: a long subject\r\n.\r\n")


def test_overview_falls_back_to_xover_and_keeps_only_the_range_asked_for() -> None:
    s = session()
    replies = (b"211 5 1 5 g\r\n500 unknown command\r\n224 overview\r\n"
               b"3\tthree\r\n9\toutside\r\nnonsense\r\n5\tfive\r\n5\tfive again\r\n.\r\n")
    sent, (status, kept, ignored) = play(s, s.overview("g", 3), replies)
    assert sent == b"GROUP g\r\nOVER 3-5\r\nXOVER 3-5\r\n"
    assert (status.low, status.high) == (1, 5) and s.over_verb == "XOVER"
    assert kept == {3: b"3\tthree", 5: b"5\tfive again"} and ignored == 2


def test_an_empty_group_asks_no_overview() -> None:
    s = session()
    sent, (_, kept, _) = play(s, s.overview("g", 10), b"211 0 0 0 g\r\n")
    assert sent == b"GROUP g\r\n" and kept == {}


def test_groups_keep_descriptions_up_to_their_budget() -> None:
    s = session()
    replies = (b"215 descriptions\r\na.b\tAlpha\r\nc.d\tGamma\r\ne.f\tEpsilon\r\n.\r\n"
               b"215 active\r\n")
    sent, (descriptions, cut) = play(s, s.groups(140), replies)
    assert sent == b"LIST NEWSGROUPS\r\nLIST ACTIVE\r\n"
    assert descriptions == {"a.b": "Alpha", "c.d": "Gamma"} and cut  # 140 - 2 x (8 + 64) < 0 after the second
    _, (descriptions, cut) = play(s, s.groups(1 << 20), replies)
    assert len(descriptions) == 3 and not cut


def test_a_refused_group_list_is_its_error() -> None:
    s = session()
    with pytest.raises(AccessDenied):
        play(s, s.groups(100), b"503 no descriptions\r\n502 not for you\r\n")

"""The FTP session state machine on bytes: reply bytes in, the exact command bytes out.

Each test plays one conversation of :mod:`anyurl.protocols.ftpsession` with
:func:`~anyurl.protocols.ftpsession.play`: no sockets, no event loop.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from anyurl.errors import (
    AccessDenied,
    ConnectError,
    NotSupported,
    ProtocolError,
    ResourceNotFound,
    TemporaryFailure,
    TransferError,
    TruncatedTransfer,
)
from anyurl.protocols import ftp
from anyurl.protocols import ftpsession as fs
from anyurl.urls import FTPURL, parse


class Opts:
    """The FTPOptions fields a session reads, with FTPOptions' defaults."""

    def __init__(self, **kw: Any) -> None:
        self.cwd_strategy = "auto"
        self.passive = True
        self.epsv = True
        self.use_size = True
        self.use_mlsd = True
        self.pipeline = True
        self.__dict__.update(kw)


def u(text: str) -> FTPURL:
    url = parse(text)
    assert isinstance(url, FTPURL)
    return url


def plan(text: str, strategy: str = "auto") -> ftp.Plan:
    return ftp.plan(u(text), anonymous_email="me@example.org", cwd_strategy=strategy)


def answers(**by_kind: Any) -> Any:
    """An answer function for the data events, recording them in order."""
    seen: list[Any] = []

    def answer(event: Any) -> Any:
        seen.append(event)
        if isinstance(event, fs.Receive):
            event.listing.feed(by_kind.get("listing", b""))
            event.listing.flush()
            return None
        if isinstance(event, fs.DataListen):
            return by_kind.get("listen", (False, "127.0.0.1", 40000))
        if isinstance(event, fs.AskPassword):
            return by_kind.get("password")
        return None

    answer.seen = seen  # type: ignore[attr-defined]
    return answer


def play_writes(session: fs.Session, op: Any, replies: bytes) -> list[bytes]:
    """:func:`fs.play`, but the command bytes of each write (each Send) apart."""
    writes: list[bytes] = []
    real = op.send

    class Op:
        def send(self, value: Any) -> Any:
            event = real(value)
            if isinstance(event, fs.Send):
                writes.append(event.data())
            return event

        def throw(self, exc: BaseException) -> Any:
            return op.throw(exc)

    fs.play(session, Op(), replies)  # type: ignore[arg-type]
    return writes


def logged_in(url: str = "ftp://h/") -> fs.Session:
    s = fs.Session(u(url))
    s.login_dir = "/home/me"
    return s


def test_module_never_imports_asyncio() -> None:
    tree = ast.parse(Path(fs.__file__).read_text())
    names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not any("asyncio" in n for n in names)


# -- login (section 3.2.1) ----------------------------------------------------------


def test_login_user_pass_pwd() -> None:
    s = fs.Session(u("ftp://bob:secret@h/"))
    sent, _ = fs.play(s, s.login(plan("ftp://bob:secret@h/"), "h", 21, "plain"),
                      b"220 hello\r\n331 password\r\n230 in\r\n257 \"/home/bob\" is cwd\r\n")
    assert sent == b"USER bob\r\nPASS secret\r\nPWD\r\n"
    assert s.login_dir == "/home/bob" and not s.tls_data


def test_anonymous_login_sends_the_email_and_waits_out_120() -> None:
    s = fs.Session(u("ftp://h/"))
    sent, _ = fs.play(s, s.login(plan("ftp://h/"), "h", 21, "plain"),
                      b"120 in a minute\r\n220-multi\r\n220 line greeting\r\n331 pw\r\n230 ok\r\n257 \"/\"\r\n")
    assert sent == b"USER anonymous\r\nPASS me@example.org\r\nPWD\r\n"


def test_230_after_user_needs_no_password() -> None:  # Pure-FTPd's anonymous login
    s = fs.Session(u("ftp://h/"))
    sent, _ = fs.play(s, s.login(plan("ftp://h/"), "h", 21, "plain"),
                      b"220 hi\r\n230 anonymous ok\r\n257 \"/\"\r\n")
    assert sent == b"USER anonymous\r\nPWD\r\n"


def test_explicit_tls_login() -> None:
    s = fs.Session(u("ftp://h/"))
    answer = answers()
    sent, _ = fs.play(s, s.login(plan("ftp://h/"), "h", 21, "explicit"),
                      b"220 hi\r\n234 go\r\n331 pw\r\n230 ok\r\n200 pbsz\r\n200 prot\r\n257 \"/\"\r\n", answer)
    assert sent == b"AUTH TLS\r\nUSER anonymous\r\nPASS me@example.org\r\nPBSZ 0\r\nPROT P\r\nPWD\r\n"
    assert answer.seen == [fs.START_TLS] and s.tls_data


def test_password_asked_when_the_url_has_none() -> None:
    s = fs.Session(u("ftp://bob@h/"))
    answer = answers(password="pw")
    sent, _ = fs.play(s, s.login(plan("ftp://bob@h/"), "h", 21, "plain"),
                      b"220 hi\r\n331 pw\r\n230 ok\r\n257 \"/\"\r\n", answer)
    assert sent == b"USER bob\r\nPASS pw\r\nPWD\r\n"
    assert answer.seen == [fs.AskPassword("bob", "h")]


@pytest.mark.parametrize(("replies", "error", "sent"), [
    (b"421 too many users\r\n", TemporaryFailure, b""),
    (b"220 hi\r\n530 no anonymous\r\n", AccessDenied, b"USER anonymous\r\n"),
    (b"220 hi\r\n331 pw\r\n530 wrong\r\n", AccessDenied, b"USER anonymous\r\nPASS me@example.org\r\n"),
    (b"220 hi\r\n331 pw\r\n332 need account\r\n", AccessDenied, b"USER anonymous\r\nPASS me@example.org\r\n"),
    (b"220 hi\r\n331 pw\r\n421 bye\r\n", TemporaryFailure, b"USER anonymous\r\nPASS me@example.org\r\n"),
])
def test_login_failures(replies: bytes, error: type[Exception], sent: bytes) -> None:
    s = fs.Session(u("ftp://h/"))
    out = bytearray()
    op = s.login(plan("ftp://h/"), "h", 21, "plain")
    with pytest.raises(error) as info:
        _play_collecting(s, op, replies, out)
    assert bytes(out) == sent
    if b"332" in replies:
        assert "ACCT" in str(info.value)


def _play_collecting(s: fs.Session, op: Any, replies: bytes, out: bytearray, answer: Any = None) -> Any:
    """play(), keeping what was sent even when the op raises."""
    lines = replies.splitlines(keepends=True)
    value: Any = None
    while True:
        try:
            event = op.send(value)
        except StopIteration as stop:
            return stop.value
        value = None
        if isinstance(event, fs.Send):
            out += event.data()
        elif event is fs.READ:
            reply = None
            while reply is None:
                reply = s.receive_line(lines.pop(0))
            value = reply
        elif answer is not None:
            value = answer(event)


# -- retrieval (sections 3.2.2, 3.2.3) ------------------------------------------------


def test_retr_one_cwd_per_segment_type_size_epsv_retr() -> None:
    s = logged_in()
    answer = answers()
    sent, started = fs.play(
        s, s.open(plan("ftp://h/a/b%20c/f.bin"), u("ftp://h/a/b%20c/f.bin"), Opts(pipeline=False)),
        b"250 ok\r\n250 ok\r\n200 type\r\n213 1234\r\n229 Extended (|||40001|)\r\n150 here\r\n", answer)
    assert sent == (b"CWD a\r\nCWD b c\r\nTYPE I\r\nSIZE f.bin\r\nEPSV\r\nRETR f.bin\r\n")
    assert started == fs.Started(ftp.Reply(150, ("here",)), 1234)
    assert answer.seen == [fs.DataPort(40001, "retr"), fs.DataOpen(1234)]
    assert s.cwd_path == ("a", "b c") and s.type == "I" and s.epsv_seen


@pytest.mark.parametrize(("strategy", "writes"), [
    ("singlecwd", [b"CWD a/b\r\nTYPE I\r\n", b"SIZE f\r\n", b"EPSV\r\n", b"RETR f\r\n"]),
    ("nocwd", [b"TYPE I\r\n", b"SIZE a/b/f\r\n", b"EPSV\r\n", b"RETR a/b/f\r\n"]),
])
def test_retr_other_cwd_strategies(strategy: str, writes: list[bytes]) -> None:
    s = logged_in()
    replies = (b"250 ok\r\n" if strategy == "singlecwd" else b"") + \
        b"200 type\r\n213 3\r\n229 (|||40001|)\r\n150 go\r\n"
    assert play_writes(s, s.open(plan("ftp://h/a/b/f", strategy), u("ftp://h/a/b/f"),
                                 Opts(cwd_strategy=strategy)), replies) == writes


def test_typecode_a_sends_type_a_and_no_size() -> None:
    s = logged_in()
    sent, started = fs.play(s, s.open(plan("ftp://h/f.txt;type=a"), u("ftp://h/f.txt;type=a"), Opts()),
                            b"200 type\r\n229 (|||40001|)\r\n150 Opening (12 bytes)\r\n")
    assert sent == b"TYPE A\r\nEPSV\r\nRETR f.txt\r\n"
    assert started.total == 12 and not s.size_in_150  # a 150 size counts bytes of TYPE I only


def test_type_and_cwd_not_repeated_on_the_same_connection() -> None:
    s = logged_in()
    s.type, s.cwd_path, s.epsv_seen = "I", ("a",), False
    sent, _ = fs.play(s, s.open(plan("ftp://h/a/b/f"), u("ftp://h/a/b/f"), Opts(use_size=False)),
                      b"250 ok\r\n229 (|||40001|)\r\n150 go\r\n")
    assert sent == b"CWD b\r\nEPSV\r\nRETR f\r\n"  # already in a, already TYPE I


def test_rest_before_retr_for_an_offset() -> None:
    s = logged_in()
    sent, _ = fs.play(s, s.open(plan("ftp://h/f"), u("ftp://h/f"), Opts(use_size=False), offset=100),
                      b"200 type\r\n229 (|||40001|)\r\n350 restarting\r\n150 go\r\n")
    assert sent == b"TYPE I\r\nEPSV\r\nREST 100\r\nRETR f\r\n"


def test_size_over_the_limit_fails_before_retr_and_keeps_the_connection() -> None:
    s = logged_in()
    out = bytearray()
    with pytest.raises(TransferError) as info:
        _play_collecting(s, s.open(plan("ftp://h/f"), u("ftp://h/f"), Opts(), limit=10),
                         b"200 type\r\n213 5000\r\n", out)
    assert bytes(out) == b"TYPE I\r\nSIZE f\r\n"
    assert s.in_step_after(info.value)


def test_size_refused_once_is_not_asked_again() -> None:
    s = logged_in()
    fs.play(s, s.open(plan("ftp://h/f"), u("ftp://h/f"), Opts(pipeline=False)),
            b"200 type\r\n502 no SIZE\r\n229 (|||40001|)\r\n150 go\r\n")
    assert not s.size_ok
    sent, _ = fs.play(s, s.open(plan("ftp://h/g"), u("ftp://h/g"), Opts(pipeline=False)),
                      b"229 (|||40002|)\r\n150 go\r\n")
    assert sent == b"EPSV\r\nRETR g\r\n"


def test_nlst_for_typecode_d() -> None:
    s = logged_in()
    answer = answers(listing=b"a\r\nb\r\n")
    sent, listed = fs.play(s, s.open(plan("ftp://h/pub;type=d"), u("ftp://h/pub;type=d"), Opts()),
                           b"200 type\r\n229 (|||40001|)\r\n150 list\r\n226 done\r\n", answer)
    assert sent == b"TYPE A\r\nEPSV\r\nNLST pub\r\n"
    assert isinstance(listed, fs.Listed) and [i.name for i in listed.items] == ["a", "b"]
    assert listed.directory == ("pub",) and listed.source == "nlst"


def test_directory_url_lists_with_mlsd_when_feat_has_it() -> None:
    s = logged_in()
    answer = answers(listing=b"type=file;size=3; f\r\ntype=dir; d\r\n")
    sent, listed = fs.play(s, s.open(plan("ftp://h/pub/"), u("ftp://h/pub/"), Opts()),
                           b"250 ok\r\n211-Features:\r\n MLST type*;size*;\r\n EPSV\r\n211 End\r\n"
                           b"229 (|||40001|)\r\n150 here\r\n226 ok\r\n", answer)
    assert sent == b"CWD pub\r\nFEAT\r\nEPSV\r\nMLSD\r\n"
    assert [(i.name, i.kind) for i in listed.items] == [("f", "file"), ("d", "directory")]


def test_listing_falls_back_from_mlsd_to_list_to_nlst() -> None:
    s = logged_in()
    answer = answers(listing=b"x\r\n")
    sent, listed = fs.play(s, s.open(plan("ftp://h/"), u("ftp://h/"), Opts()),
                           b"211-Features:\r\n MLSD\r\n211 End\r\n229 (|||1|)\r\n500 MLSD?\r\n"
                           b"200 type A\r\n229 (|||2|)\r\n502 LIST?\r\n229 (|||3|)\r\n150 ok\r\n226 ok\r\n",
                           answer)
    assert sent == b"FEAT\r\nEPSV\r\nMLSD\r\nTYPE A\r\nEPSV\r\nLIST\r\nEPSV\r\nNLST\r\n"
    assert [i.name for i in listed.items] == ["x"]
    assert fs.DATA_CLOSE in answer.seen  # each refused command's data connection closed


def test_550_on_retr_falls_back_to_cwd_and_a_listing() -> None:
    s = logged_in()
    answer = answers(listing=b"-rw-r--r-- 1 u g 3 Jan 01 2020 inner\r\n")
    sent, listed = fs.play(s, s.open(plan("ftp://h/pub"), u("ftp://h/pub"), Opts(use_mlsd=False)),
                           b"200 type\r\n213-not a file\r\n213 x\r\n229 (|||1|)\r\n550 Not a plain file\r\n"
                           b"250 dir\r\n200 type A\r\n229 (|||2|)\r\n150 list\r\n226 ok\r\n", answer)
    assert sent == (b"TYPE I\r\nSIZE pub\r\nEPSV\r\nRETR pub\r\nCWD pub\r\nTYPE A\r\nEPSV\r\nLIST\r\n")
    assert listed.directory == ("pub",) and [i.name for i in listed.items] == ["inner"]
    assert s.cwd_path is None  # the CWD into the name was not part of the URL's path


def test_550_fallback_when_cwd_fails_reports_retr_and_stays_in_step() -> None:
    s = logged_in()
    out = bytearray()
    with pytest.raises(ResourceNotFound) as info:
        _play_collecting(s, s.open(plan("ftp://h/nope"), u("ftp://h/nope"), Opts(use_size=False)),
                         b"200 type\r\n229 (|||1|)\r\n550 No such file\r\n550 No such directory\r\n", out)
    assert bytes(out) == b"TYPE I\r\nEPSV\r\nRETR nope\r\nCWD nope\r\n"
    assert "RETR nope" in str(info.value) and info.value.reply == "550 No such file"
    assert s.in_step_after(info.value)


def test_no_fallback_with_a_typecode() -> None:
    s = logged_in()
    out = bytearray()
    with pytest.raises(ResourceNotFound):
        _play_collecting(s, s.open(plan("ftp://h/nope;type=i"), u("ftp://h/nope;type=i"), Opts(use_size=False)),
                         b"200 type\r\n229 (|||1|)\r\n550 No such file\r\n", out)
    assert bytes(out) == b"TYPE I\r\nEPSV\r\nRETR nope\r\n"


def test_nocwd_fallback_lists_the_path_and_reports_retr_when_listing_fails() -> None:
    s = logged_in()
    out = bytearray()
    with pytest.raises(ResourceNotFound) as info:
        _play_collecting(s, s.open(plan("ftp://h/a/x", "nocwd"), u("ftp://h/a/x"),
                                   Opts(cwd_strategy="nocwd", use_size=False, use_mlsd=False)),
                         b"200 type\r\n229 (|||1|)\r\n550 No such file\r\n200 A\r\n229 (|||2|)\r\n"
                         b"450 No such file or directory\r\n", out, answers())
    assert bytes(out) == b"TYPE I\r\nEPSV\r\nRETR a/x\r\nTYPE A\r\nEPSV\r\nLIST a/x\r\n"
    assert info.value.reply == "550 No such file"


# -- EPSV / PASV, active mode --------------------------------------------------------------


@pytest.mark.parametrize("refusal", [b"500 unknown command", b"502 not implemented", b"425 no EPSV here"])
def test_epsv_refused_falls_back_to_pasv_for_good(refusal: bytes) -> None:
    s = logged_in()
    answer = answers()
    sent, _ = fs.play(s, s.open(plan("ftp://h/f"), u("ftp://h/f"), Opts(use_size=False, pipeline=False)),
                      b"200 type\r\n" + refusal + b"\r\n227 Entering Passive Mode (10,9,8,7,156,65)\r\n150 go\r\n",
                      answer)
    assert sent == b"TYPE I\r\nEPSV\r\nPASV\r\nRETR f\r\n"
    assert answer.seen[0] == fs.DataPort(156 * 256 + 65, "retr")  # the address in the reply is ignored
    assert not s.epsv_ok
    sent, _ = fs.play(s, s.open(plan("ftp://h/g"), u("ftp://h/g"), Opts(use_size=False, pipeline=False)),
                      b"227 (1,2,3,4,0,80)\r\n150 go\r\n")
    assert sent == b"PASV\r\nRETR g\r\n"


def test_epsv_421_is_the_servers_trouble_not_epsvs() -> None:
    s = logged_in()
    out = bytearray()
    with pytest.raises(TemporaryFailure) as info:
        _play_collecting(s, s.open(plan("ftp://h/f"), u("ftp://h/f"), Opts(use_size=False, pipeline=False)),
                         b"200 type\r\n421 closing\r\n", out)
    assert bytes(out) == b"TYPE I\r\nEPSV\r\n"
    assert s.epsv_ok and not s.in_step_after(info.value)  # a 4xx: the connection is dropped


def test_epsv_off_uses_pasv_only() -> None:
    s = logged_in()
    sent, _ = fs.play(s, s.open(plan("ftp://h/f"), u("ftp://h/f"), Opts(use_size=False, epsv=False)),
                      b"200 type\r\n227 (1,2,3,4,0,80)\r\n150 go\r\n")
    assert sent == b"TYPE I\r\nPASV\r\nRETR f\r\n"


def test_active_mode_eprt_then_port() -> None:
    s = logged_in()
    answer = answers(listen=(False, "127.0.0.1", 0x1234))
    sent, _ = fs.play(s, s.open(plan("ftp://h/f"), u("ftp://h/f"), Opts(use_size=False, passive=False)),
                      b"200 type\r\n500 EPRT?\r\n200 PORT ok\r\n150 go\r\n", answer)
    assert sent == b"TYPE I\r\nEPRT |1|127.0.0.1|4660|\r\nPORT 127,0,0,1,18,52\r\nRETR f\r\n"
    assert answer.seen[0] == fs.DataListen("retr")


# -- pipelining on a connection where EPSV worked ----------------------------------------------


def test_next_file_is_pipelined_after_a_229() -> None:
    s = logged_in()
    s.type, s.epsv_seen = "I", True
    answer = answers()
    sent, started = fs.play(s, s.open(plan("ftp://h/g"), u("ftp://h/g"), Opts()),
                            b"213 7\r\n229 (|||40002|)\r\n150 go\r\n", answer)
    assert sent == b"SIZE g\r\nEPSV\r\nRETR g\r\n"
    assert answer.seen == [fs.DataEarly(40002), fs.DATA_CHECK, fs.DataOpen(7)]
    assert started.total == 7


def test_pipelined_reply_out_of_turn_drops_the_connection() -> None:
    s = logged_in()
    s.type, s.epsv_seen = "I", True
    with pytest.raises(ProtocolError, match="out of turn"):
        fs.play(s, s.open(plan("ftp://h/g"), u("ftp://h/g"), Opts(use_size=False)), b"150 early\r\n")
    assert s.broken


def test_pipelined_epsv_refused_reads_retrs_reply_then_uses_pasv() -> None:
    s = logged_in()
    s.type, s.epsv_seen = "I", True
    sent, _ = fs.play(s, s.open(plan("ftp://h/g"), u("ftp://h/g"), Opts(use_size=False)),
                      b"502 no EPSV\r\n425 use PORT or PASV first\r\n227 (1,2,3,4,0,80)\r\n150 go\r\n")
    assert sent == b"EPSV\r\nRETR g\r\nPASV\r\nRETR g\r\n"
    assert not s.epsv_ok and not s.broken


def test_pipelined_connect_failure_while_server_waits_is_not_in_step() -> None:
    s = logged_in()
    s.type, s.epsv_seen = "I", True

    def answer(event: Any) -> Any:
        return OSError(111, "refused") if isinstance(event, fs.DataEarly) else None
    with pytest.raises(ConnectError):
        fs.play(s, s.open(plan("ftp://h/g"), u("ftp://h/g"), Opts(use_size=False)),
                b"229 (|||9|)\r\n150 go\r\n", answer)
    assert s.broken


def test_no_pipelining_with_an_offset_or_tls() -> None:
    s = logged_in()
    s.type, s.epsv_seen, s.tls_data = "I", True, True
    sent, _ = fs.play(s, s.open(plan("ftp://h/g"), u("ftp://h/g"), Opts(use_size=False)),
                      b"229 (|||9|)\r\n150 go\r\n")
    assert sent == b"EPSV\r\nRETR g\r\n"
    assert fs.Send((("EPSV", None),)).data() == b"EPSV\r\n"


# -- the next file queued behind a transfer (servers that read commands between transfers) ---------


def vsftpd_mid_transfer(expected: int | None = 4096) -> fs.Session:
    """A vsftpd session whose RETR of f is written, only its replies due."""
    s = logged_in()
    s.queues = True
    s.type, s.epsv_seen, s.expected = "I", True, expected
    s.size_in_150 = True  # (vsftpd's 150 says the size: no SIZE)
    s.awaiting_end = True
    return s


@pytest.mark.parametrize(("greeting", "queues"), [
    (b"220 (vsFTPd 3.0.3)\r\n", True),
    (b"220 pyftpdlib 1.5 ready\r\n", False),
    (b"220 ProFTPD Server (Debian) [127.0.0.1]\r\n", False),
    (b"220 Welcome to example FTP, powered by vsftpd\r\n", False),  # a banner of its own: not known
])
def test_only_a_greeting_known_to_queue_commands_allows_queueing(greeting: bytes, queues: bool) -> None:
    s = fs.Session(u("ftp://h/f"))
    fs.play(s, s.login(plan("ftp://h/f"), "h", 21, "plain", pipeline=True),
            greeting + b"331 pw\r\n230 in\r\n257 \"/\"\r\n")
    assert s.queues is queues


def test_next_retr_is_written_behind_the_transfer_and_read_after_its_turn() -> None:
    s = vsftpd_mid_transfer()
    p = plan("ftp://h/g")
    assert s.open_to_follow() and s.can_follow(p, Opts())
    op = s.follow(p, u("ftp://h/g"), Opts())
    assert op.send(None) == fs.Send((("EPSV", None), ("RETR", "g")))  # written at once
    assert op.send(None) is fs.TURN and s.behind  # then waits: the transfer ahead reads its 226
    assert not s.can_follow(plan("ftp://h/x"), Opts())  # one queued at a time
    s.handed_over()
    assert not s.behind and s.awaiting_end
    answer = answers()
    sent, started = fs.play(s, op, b"229 (|||40002|)\r\n150 go (4096 bytes)\r\n", answer)
    assert sent == b""  # nothing more written
    assert answer.seen == [fs.DataEarly(40002), fs.DATA_CHECK, fs.DataOpen(4096)]
    assert started.total == 4096


def test_first_file_on_a_server_that_queues_sends_size_epsv_and_retr_together() -> None:
    # vsftpd takes commands in turn: the connection's first EPSV need not wait for its 229
    # (aioftp.Server, which does not queue, answers a RETR sent along with it first)
    for queues, writes in ((True, [b"SIZE g\r\nEPSV\r\nRETR g\r\n"]),
                           (False, [b"SIZE g\r\n", b"EPSV\r\n", b"RETR g\r\n"])):
        s = logged_in()
        s.queues, s.type = queues, "I"
        assert play_writes(s, s.open(plan("ftp://h/g"), u("ftp://h/g"), Opts()),
                           b"213 7\r\n229 (|||40002|)\r\n150 go\r\n") == writes


@pytest.mark.parametrize(("change", "why"), [
    ({"queues": False}, "a server not known to queue commands"),
    ({"awaiting_end": False}, "the request in progress may still send commands"),
    ({"expected": None}, "no transfer ended here yet: its size is unknown"),
    ({"expected": fs.FOLLOW_MAX + 1}, "a big transfer: the queued request would wait long"),
    ({"type": "A"}, "TYPE would have to change"),
    ({"tls_data": True}, "TLS data connections"),
    ({"epsv_seen": False}, "EPSV not yet seen to work"),
    ({"broken": True}, "out of step"),
])
def test_no_queueing_where_it_is_not_safe(change: dict[str, Any], why: str) -> None:
    s = vsftpd_mid_transfer()
    for name, value in change.items():
        setattr(s, name, value)
    assert not s.can_follow(plan("ftp://h/g"), Opts()), why


def test_no_queueing_for_another_directory_an_offset_or_a_limit() -> None:
    s = vsftpd_mid_transfer()
    assert not s.can_follow(plan("ftp://h/d/g"), Opts())
    assert not s.can_follow(plan("ftp://h/g"), Opts(), offset=5)
    assert not s.can_follow(plan("ftp://h/g"), Opts(), limit=100)
    assert not s.can_follow(plan("ftp://h/g"), Opts(pipeline=False))


def test_a_transfer_with_a_request_queued_behind_it_must_end_with_226() -> None:
    # a server that answered the queued EPSV during the transfer (pyftpdlib does, and closes the
    # transfer's data connection): its 229 where the 226 was due is never taken for the end
    s = vsftpd_mid_transfer()
    s.behind = True
    with pytest.raises(TruncatedTransfer, match="out of step"):  # not known complete: Retry may retry it
        fs.play(s, s.end_of_retr(u("ftp://h/f"), 4096, 4096), b"229 (|||40003|)\r\n")
    assert s.out_of_step and s.broken
    s = vsftpd_mid_transfer()
    s.behind = True
    fs.play(s, s.end_of_retr(u("ftp://h/f"), 4096, 4096), b"226 done\r\n")
    assert not s.broken and s.expected == 4096


def test_a_retr_refused_with_a_request_queued_behind_sends_nothing_more() -> None:
    # the 550 fallback (CWD name + listing) would be answered after the queued request's
    # replies: Behind, with every reply of this request read (in step)
    s = vsftpd_mid_transfer()
    s.awaiting_end, s.behind = False, True
    op = s.retrieve(plan("ftp://h/g"), u("ftp://h/g"), Opts(use_size=False))
    with pytest.raises(fs.Behind):
        fs.play(s, op, b"229 (|||40002|)\r\n550 no such file\r\n")
    assert not s.broken and not s.awaiting_end


def test_abort_with_a_request_queued_behind_drops_the_connection() -> None:
    s = vsftpd_mid_transfer()
    s.behind = True
    sent, in_step = fs.play(s, s.abort(), b"")
    assert sent == b"" and in_step is False and s.broken


# -- the end of a transfer, ABOR ------------------------------------------------------------------


@pytest.mark.parametrize(("reply", "received", "expected", "error"), [
    (b"226 done\r\n", 10, 10, None),
    (b"226 done\r\n", 5, 10, TruncatedTransfer),
    (b"426 aborted\r\n", 5, None, TruncatedTransfer),
    (b"451 local error\r\n", 5, None, TruncatedTransfer),
    (b"550 gone\r\n", 5, None, ResourceNotFound),
])
def test_end_of_retr(reply: bytes, received: int, expected: int | None, error: type[Exception] | None) -> None:
    s = logged_in()
    if error is None:
        assert fs.play(s, s.end_of_retr(u("ftp://h/f"), received, expected), reply) == (b"", None)
    else:
        with pytest.raises(error):
            fs.play(s, s.end_of_retr(u("ftp://h/f"), received, expected), reply)


@pytest.mark.parametrize(("replies", "in_step"), [
    (b"426 aborted\r\n226 abort ok\r\n200 noop\r\n", True),
    (b"226 done\r\n225 nothing to abort\r\n200 noop\r\n", True),
    (b"200 abor\r\n200 noop\r\n", True),
    (b"500 ABOR?\r\n", False),
])
def test_abort_sends_abor_and_noop(replies: bytes, in_step: bool) -> None:
    s = logged_in()
    sent, ok = fs.play(s, s.abort(), replies)
    assert sent == b"ABOR\r\nNOOP\r\n" and ok is in_step


# -- reuse (section 3.2.5) ----------------------------------------------------------------------


def test_reuse_jumps_with_one_absolute_cwd_on_unix_paths() -> None:
    s = logged_in()
    s.cwd_path = ("x", "y")
    sent, ok = fs.play(s, s.reset(("a", "b")), b"250 ok\r\n")
    assert (sent, ok, s.cwd_path) == (b"CWD /home/me/a/b\r\n", True, ("a", "b"))


def test_reuse_goes_back_to_the_login_dir_when_the_jump_fails() -> None:
    s = logged_in()
    s.cwd_path = ("x",)
    sent, ok = fs.play(s, s.reset(("a",)), b"550 no\r\n250 ok\r\n")
    assert (sent, ok, s.cwd_path) == (b"CWD /home/me/a\r\nCWD /home/me\r\n", True, ())


def test_reuse_under_multicwd_goes_back_to_the_login_dir_then_one_cwd_per_segment() -> None:
    # issue 33 item 10: cwd_strategy="multicwd" asks for the RFC's sequence; never a joined CWD
    s = logged_in()
    s.cwd_path = ("x", "y")
    sent, ok = fs.play(s, s.reset(("a", "b"), joinable=False), b"250 ok\r\n")
    assert (sent, ok, s.cwd_path) == (b"CWD /home/me\r\n", True, ())
    sent, _ = fs.play(s, s.change_dirs(("a", "b")), b"250 ok\r\n250 ok\r\n")
    assert sent == b"CWD a\r\nCWD b\r\n"


def test_reuse_deeper_on_the_same_path_sends_nothing() -> None:
    s = logged_in()
    s.cwd_path = ("a",)
    assert fs.play(s, s.reset(("a", "b")), b"") == (b"", True)


# -- stat --------------------------------------------------------------------------------------------


def test_stat_with_mlst() -> None:
    s = logged_in()
    sent, facts = fs.play(s, s.stat(plan("ftp://h/f"), u("ftp://h/f"), Opts()),
                          b"211-Features:\r\n MLST size*;\r\n211 End\r\n"
                          b"250-Listing f\r\n type=file;size=62; f\r\n250 End\r\n")
    assert sent == b"FEAT\r\nMLST f\r\n"
    assert facts.kind == "file" and facts.item is not None and facts.item.size == 62


def test_stat_without_mlst_asks_size_mdtm_and_cwd_in_one_write() -> None:
    s = logged_in()
    s.cwd_path = ("a",)
    sent, facts = fs.play(s, s.stat(plan("ftp://h/a/f"), u("ftp://h/a/f"), Opts(use_mlsd=False)),
                          b"200 type\r\n213 62\r\n213 20240131120000\r\n550 not a directory\r\n")
    assert sent == b"TYPE I\r\nSIZE f\r\nMDTM f\r\nCWD f\r\n"
    assert (facts.kind, facts.size, facts.modified.year) == ("file", 62, 2024)
    assert s.cwd_path == ("a",)  # a failed CWD leaves the connection where it was


def test_stat_of_a_directory_whose_size_is_answered_is_a_directory() -> None:
    # Twisted answers SIZE and MDTM for a directory ("213 4096"): the CWD tells.
    s = logged_in()
    sent, facts = fs.play(s, s.stat(plan("ftp://h/pub"), u("ftp://h/pub"), Opts(use_mlsd=False)),
                          b"200 type\r\n213 4096\r\n213 20240131120000\r\n250 ok\r\n")
    assert sent == b"TYPE I\r\nSIZE pub\r\nMDTM pub\r\nCWD pub\r\n"
    assert (facts.kind, facts.size) == ("directory", None)
    assert s.cwd_path is None  # inside it now


def test_stat_a_name_size_refuses_but_cwd_accepts_is_a_directory() -> None:
    s = logged_in()
    sent, facts = fs.play(s, s.stat(plan("ftp://h/d"), u("ftp://h/d"), Opts(use_mlsd=False)),
                          b"200 type\r\n550 not a regular file\r\n550 no\r\n250 ok\r\n")
    assert sent == b"TYPE I\r\nSIZE d\r\nMDTM d\r\nCWD d\r\n"
    assert facts.kind == "directory" and facts.reply == "550 not a regular file"


def test_stat_of_a_missing_name_is_the_size_replys_error() -> None:
    s = logged_in()
    with pytest.raises(ResourceNotFound, match="SIZE f"):
        fs.play(s, s.stat(plan("ftp://h/f"), u("ftp://h/f"), Opts(use_mlsd=False)),
                b"200 type\r\n550 No such file\r\n550 No such file\r\n550 No such file\r\n")


def test_stat_421_in_the_pipelined_replies_drops_the_connection() -> None:
    s = logged_in()
    with pytest.raises(TemporaryFailure):
        fs.play(s, s.stat(plan("ftp://h/f"), u("ftp://h/f"), Opts(use_mlsd=False)), b"200 type\r\n421 bye\r\n")
    assert s.broken


def test_stat_with_nothing_to_ask_is_not_supported() -> None:
    s = logged_in()
    with pytest.raises(NotSupported):
        fs.play(s, s.stat(plan("ftp://h/f"), u("ftp://h/f"), Opts(use_mlsd=False)),
                b"200 type\r\n502 no\r\n502 no\r\n550 not a dir\r\n")


@pytest.mark.parametrize("facts", [
    b"size=9;type=file;UNIX.mode=0777; f",  # ProFTPD: the link's own size and mode
    b"size=9;type=OS.unix=symlink; f",
])
def test_stat_of_a_name_through_a_symlink_prefers_size(facts: bytes) -> None:
    s = logged_in()
    sent, st = fs.play(s, s.stat(plan("ftp://h/f"), u("ftp://h/f"), Opts()),
                       b"211-Features:\r\n MLST size*;\r\n SIZE\r\n211 End\r\n"
                       b"250-Listing f\r\n " + facts + b"\r\n250 End\r\n200 type\r\n213 62\r\n")
    assert sent == b"FEAT\r\nMLST f\r\nTYPE I\r\nSIZE f\r\n"
    assert st.item is not None and (st.kind, st.item.size, dict(st.item.facts)["size"]) == ("file", 62, "62")


# -- ranges on a server without REST ------------------------------------------------------------


def test_rest_not_implemented_skips_on_the_client() -> None:
    # Twisted: "502 Command 'REST' not implemented"
    s = logged_in()
    sent, started = fs.play(s, s.open(plan("ftp://h/f"), u("ftp://h/f"), Opts(use_size=False), offset=100),
                            b"200 type\r\n229 (|||1|)\r\n502 Command 'REST' not implemented\r\n150 go\r\n")
    assert sent == b"TYPE I\r\nEPSV\r\nREST 100\r\nRETR f\r\n"
    assert started.skip == 100 and not s.rest_ok
    sent, started = fs.play(s, s.open(plan("ftp://h/g"), u("ftp://h/g"), Opts(use_size=False), offset=7),
                            b"229 (|||2|)\r\n150 go\r\n")
    assert sent == b"EPSV\r\nRETR g\r\n" and started.skip == 7  # not asked again


def test_rest_refused_otherwise_is_an_error() -> None:
    s = logged_in()
    with pytest.raises(ResourceNotFound):
        fs.play(s, s.open(plan("ftp://h/f"), u("ftp://h/f"), Opts(use_size=False), offset=100),
                b"200 type\r\n229 (|||1|)\r\n550 No such file\r\n")
    assert s.rest_ok


# -- upload --------------------------------------------------------------------------------------------


def test_upload_to_a_temporary_name_then_rename() -> None:
    s = logged_in()
    answer = answers()
    sent, method = fs.play(s, s.upload(plan("ftp://h/in/f"), u("ftp://h/in/f"), Opts(), atomic=True, token="t"),
                           b"250 ok\r\n200 type\r\n229 (|||1|)\r\n150 send\r\n226 stored\r\n"
                           b"350 ready\r\n250 renamed\r\n", answer)
    assert sent == (b"CWD in\r\nTYPE I\r\nEPSV\r\nSTOR .f.t.part\r\nRNFR .f.t.part\r\nRNTO f\r\n")
    assert method == "temp-dot" and fs.SEND_DATA in answer.seen


def test_upload_tries_the_next_name_when_a_dot_name_is_refused() -> None:
    s = logged_in()
    sent, method = fs.play(s, s.upload(plan("ftp://h/f"), u("ftp://h/f"), Opts(), atomic=True, token="t"),
                           b"200 type\r\n229 (|||1|)\r\n553 Prohibited file name\r\n"
                           b"229 (|||2|)\r\n150 send\r\n226 stored\r\n350 ready\r\n250 renamed\r\n")
    assert sent == (b"TYPE I\r\nEPSV\r\nSTOR .f.t.part\r\nEPSV\r\nSTOR f.t.part\r\n"
                    b"RNFR f.t.part\r\nRNTO f\r\n")
    assert method == "temp"


@pytest.mark.parametrize(("refusal", "commands"), [
    (b"550 Anonymous users are not allowed to move/rename files\r\n550 nor delete\r\n",
     b"RNFR .f.t.part\r\nDELE .f.t.part\r\n"),  # Pure-FTPd's anonymous user
    (b"350 ready\r\n553 not allowed\r\n250 deleted\r\n", b"RNFR .f.t.part\r\nRNTO f\r\nDELE .f.t.part\r\n"),
])
def test_any_refused_rename_ends_in_a_direct_stor(refusal: bytes, commands: bytes) -> None:
    s = logged_in()
    sent, method = fs.play(s, s.upload(plan("ftp://h/f"), u("ftp://h/f"), Opts(), atomic=True, token="t"),
                           b"200 type\r\n229 (|||1|)\r\n150 send\r\n226 stored\r\n" + refusal
                           + b"229 (|||2|)\r\n150 send\r\n226 stored\r\n")
    assert sent == b"TYPE I\r\nEPSV\r\nSTOR .f.t.part\r\n" + commands + b"EPSV\r\nSTOR f\r\n"
    assert method == "direct"


def test_rename_refused_with_421_is_not_retried() -> None:
    s = logged_in()
    with pytest.raises(TemporaryFailure):
        fs.play(s, s.upload(plan("ftp://h/f"), u("ftp://h/f"), Opts(), atomic=True, token="t"),
                b"200 type\r\n229 (|||1|)\r\n150 send\r\n226 stored\r\n421 closing\r\n")


def test_not_allowed_to_is_access_denied() -> None:
    reply = ftp.Reply(550, ("Anonymous users are not allowed to move/rename files",))
    assert ftp.classify(reply) is AccessDenied
    assert ftp.classify(ftp.Reply(553, ("Prohibited file name",))) is ProtocolError  # the name, not the user


def test_upload_without_rename_stores_the_name_itself() -> None:
    s = logged_in()
    sent, method = fs.play(s, s.upload(plan("ftp://h/f"), u("ftp://h/f"), Opts(), atomic=True, token="t"),
                           b"200 type\r\n229 (|||1|)\r\n150 send\r\n226 stored\r\n502 no RNFR\r\n250 deleted\r\n"
                           b"229 (|||2|)\r\n150 send\r\n226 stored\r\n")
    assert sent == (b"TYPE I\r\nEPSV\r\nSTOR .f.t.part\r\nRNFR .f.t.part\r\nDELE .f.t.part\r\n"
                    b"EPSV\r\nSTOR f\r\n")
    assert method == "direct"


def test_a_failed_stor_of_a_temporary_name_is_deleted() -> None:
    s = logged_in()
    out = bytearray()
    with pytest.raises(TransferError) as info:
        _play_collecting(s, s.upload(plan("ftp://h/f"), u("ftp://h/f"), Opts(), atomic=True, token="t"),
                         b"200 type\r\n229 (|||1|)\r\n150 send\r\n452 Insufficient storage\r\n250 deleted\r\n",
                         out)
    assert bytes(out) == b"TYPE I\r\nEPSV\r\nSTOR .f.t.part\r\nDELE .f.t.part\r\n"
    assert s.in_step_after(info.value)


def test_commands_with_control_characters_are_never_sent() -> None:
    from anyurl.errors import UnsafeURL

    with pytest.raises(UnsafeURL):
        fs.Send((("CWD", "a\r\nDELE x"),)).data()


# -- round trips (issue 24: the login in one write) -----------------------------------------------


def round_trips(session: fs.Session, op: Any, replies: bytes) -> tuple[list[bytes], Any]:
    """The writes of *op*, those sent together joined: each is one wait for replies."""
    writes: list[bytes] = []
    pending = bytearray()
    lines = replies.splitlines(keepends=True)
    value: Any = None
    while True:
        try:
            event = op.send(value)
        except StopIteration as stop:
            return writes, stop.value
        value = None
        if isinstance(event, fs.Send):
            pending += event.data()
        elif event is fs.READ:
            if pending:
                writes.append(bytes(pending))
                pending.clear()
            reply = None
            while reply is None:
                reply = session.receive_line(lines.pop(0))
            value = reply


def test_pipelined_login_is_one_round_trip() -> None:
    s = fs.Session(u("ftp://h/"))
    writes, _ = round_trips(s, s.login(plan("ftp://bob:pw@h/"), "h", 21, "plain", pipeline=True),
                            b"220 hi\r\n331 pw\r\n230 in\r\n257 \"/home/bob\"\r\n")
    assert writes == [b"USER bob\r\nPASS pw\r\nPWD\r\n"] and s.login_dir == "/home/bob"
    s = fs.Session(u("ftp://h/"))
    writes, _ = round_trips(s, s.login(plan("ftp://bob:pw@h/"), "h", 21, "plain"),
                            b"220 hi\r\n331 pw\r\n230 in\r\n257 \"/home/bob\"\r\n")
    assert writes == [b"USER bob\r\n", b"PASS pw\r\n", b"PWD\r\n"]  # without: three


def test_pipelined_login_where_user_logs_in_reads_the_spare_pass_reply() -> None:
    s = fs.Session(u("ftp://h/"))  # aioftp, Pure-FTPd: anonymous is in at USER
    writes, _ = round_trips(s, s.login(plan("ftp://h/"), "h", 21, "explicit", pipeline=True),
                            b"220 hi\r\n234 tls\r\n230 in\r\n503 already logged in\r\n200 pbsz\r\n"
                            b"200 prot\r\n257 \"/\"\r\n")
    assert writes == [b"AUTH TLS\r\n", b"USER anonymous\r\nPASS me@example.org\r\nPBSZ 0\r\nPROT P\r\nPWD\r\n"]
    assert s.login_dir == "/" and s.tls_data


def test_pipelined_login_pwd_answered_before_the_spare_pass() -> None:
    s = fs.Session(u("ftp://h/"))
    fs.play(s, s.login(plan("ftp://h/"), "h", 21, "plain", pipeline=True),
            b"220 hi\r\n230 in\r\n257 \"/srv\"\r\n503 already logged in\r\n")
    assert s.login_dir == "/srv"


@pytest.mark.parametrize(("replies", "error"), [
    (b"220 hi\r\n331 pw\r\n530 Login incorrect\r\n", AccessDenied),
    (b"220 hi\r\n530 no such user\r\n", AccessDenied),
    (b"220 hi\r\n331 pw\r\n332 need account\r\n", AccessDenied),
    (b"220 hi\r\n230 in\r\n421 closing\r\n", TemporaryFailure),
])
def test_pipelined_login_refused(replies: bytes, error: type[Exception]) -> None:
    s = fs.Session(u("ftp://h/"))
    with pytest.raises(error):
        fs.play(s, s.login(plan("ftp://bob:pw@h/"), "h", 21, "plain", pipeline=True), replies)


def test_no_pipelined_login_without_a_password() -> None:
    s = fs.Session(u("ftp://h/"))
    answer = answers(password="asked")
    sent, _ = fs.play(s, s.login(plan("ftp://bob@h/"), "h", 21, "plain", pipeline=True),
                      b"220 hi\r\n331 pw\r\n230 in\r\n257 \"/\"\r\n", answer)
    assert sent == b"USER bob\r\nPASS asked\r\nPWD\r\n" and answer.seen == [fs.AskPassword("bob", "h")]


# -- fewer round trips before the first RETR (issue 24 step 5) ------------------------------


def test_first_file_cwd_and_type_in_one_write_then_size_epsv_retr_in_one() -> None:
    # was: CWD a, CWD b c, TYPE I, SIZE, EPSV, then RETR: six round trips; now two writes
    s = logged_in()
    answer = answers()
    url = "ftp://h/a/b%20c/f.bin"
    writes = play_writes(s, s.open(plan(url), u(url), Opts()),
                         b"250 ok\r\n200 type\r\n213 1234\r\n229 (|||40001|)\r\n150 here\r\n")
    # the connection's first EPSV is never pipelined with RETR (aioftp.Server would answer RETR first)
    assert writes == [b"CWD /home/me/a/b c\r\nTYPE I\r\n", b"SIZE f.bin\r\n", b"EPSV\r\n", b"RETR f.bin\r\n"]
    assert s.cwd_path == ("a", "b c") and s.type == "I" and not s.out_of_step
    fs.play(s, s.open(plan(url), u(url), Opts(), offset=0), b"213 1234\r\n229 (|||40002|)\r\n150 here\r\n",
            answer)
    assert answer.seen == [fs.DataEarly(40002), fs.DATA_CHECK, fs.DataOpen(1234)]


@pytest.mark.parametrize("pipeline", [True, False])
def test_first_file_under_multicwd_sends_one_cwd_per_segment(pipeline: bool) -> None:
    # issue 33 item 10: with the default pipeline=True, "multicwd" sent "CWD /home/me/a/b"
    s = logged_in()
    url = "ftp://h/a/b/f"
    writes = play_writes(s, s.open(plan(url, "multicwd"), u(url), Opts(cwd_strategy="multicwd", use_size=False,
                                                                       pipeline=pipeline)),
                         b"250 ok\r\n250 ok\r\n200 type\r\n229 (|||1|)\r\n150 go\r\n")
    assert writes == [b"CWD a\r\n", b"CWD b\r\n", b"TYPE I\r\n", b"EPSV\r\n", b"RETR f\r\n"]
    assert s.cwd_path == ("a", "b")


def test_first_file_absolute_cwd_refused_runs_the_rfc_sequence() -> None:
    s = logged_in()
    writes = play_writes(s, s.open(plan("ftp://h/a/b/f"), u("ftp://h/a/b/f"), Opts(use_size=False)),
                         b"550 no\r\n200 type\r\n250 ok\r\n250 ok\r\n229 (|||1|)\r\n150 go\r\n")
    assert writes == [b"CWD /home/me/a/b\r\nTYPE I\r\n", b"CWD a\r\n", b"CWD b\r\n", b"EPSV\r\n", b"RETR f\r\n"]
    assert s.cwd_path == ("a", "b") and s.type == "I"


def test_first_file_chain_without_unix_paths_is_sent_one_cwd_at_a_time() -> None:
    s = logged_in()
    s.login_dir = "SYS$USER:[ME]"  # no absolute CWD stands for the chain; never a pipelined chain
    writes = play_writes(s, s.open(plan("ftp://h/a/b/f"), u("ftp://h/a/b/f"), Opts(use_size=False)),
                         b"250 ok\r\n250 ok\r\n200 type\r\n229 (|||1|)\r\n150 go\r\n")
    assert writes == [b"CWD a\r\n", b"CWD b\r\n", b"TYPE I\r\n", b"EPSV\r\n", b"RETR f\r\n"]


def test_first_file_cwd_refused_in_the_batch_fails_in_step() -> None:
    s = logged_in()
    out = bytearray()
    with pytest.raises(ResourceNotFound, match="CWD pub") as info:
        _play_collecting(s, s.open(plan("ftp://h/pub/f"), u("ftp://h/pub/f"), Opts()),
                         b"550 No such directory\r\n200 type\r\n", out)
    assert bytes(out) == b"CWD pub\r\nTYPE I\r\n"
    assert s.in_step_after(info.value) and s.cwd_path is None and not s.out_of_step


@pytest.mark.parametrize("replies", [
    b"200 type\r\n250 ok\r\n",  # TYPE answered first, as a server running commands at once does
    b"213 4\r\n200 type\r\n",  # a reply to some other command
    b"150 go\r\n250 ok\r\n",
])
def test_batch_answered_out_of_step_drops_the_connection_and_says_so(replies: bytes) -> None:
    s = logged_in()
    with pytest.raises(ProtocolError, match="out of step"):
        _play_collecting(s, s.open(plan("ftp://h/pub/f"), u("ftp://h/pub/f"), Opts()), replies, bytearray())
    assert s.out_of_step and s.broken


def test_batch_421_is_the_servers_closing() -> None:
    s = logged_in()
    with pytest.raises(TemporaryFailure):
        _play_collecting(s, s.open(plan("ftp://h/pub/f"), u("ftp://h/pub/f"), Opts()), b"421 bye\r\n",
                         bytearray())
    assert s.broken and not s.out_of_step


def test_epsv_refused_and_retr_started_anyway_is_out_of_step() -> None:
    # RETR sent with the EPSV it needed refused: a server that starts it anyway (RFC 959's
    # default data port) cannot be pipelined to: the driver goes one command at a time
    s = logged_in()
    s.type, s.cwd_path, s.epsv_seen = "I", (), True
    with pytest.raises(ProtocolError, match="after refusing EPSV"):
        _play_collecting(s, s.open(plan("ftp://h/f"), u("ftp://h/f"), Opts(use_size=False)),
                         b"500 EPSV?\r\n150 opening\r\n", bytearray())
    assert s.out_of_step and s.broken


def test_retr_answered_before_a_refused_epsv_is_out_of_step() -> None:
    s = logged_in()
    s.type, s.cwd_path, s.epsv_seen = "I", (), True
    with pytest.raises(ProtocolError, match="out of turn: '229"):
        _play_collecting(s, s.open(plan("ftp://h/f"), u("ftp://h/f"), Opts(use_size=False)),
                         b"503 use PASV first\r\n229 (|||5|)\r\n", bytearray())
    assert s.out_of_step and s.broken

"""The sans-I/O FTP logic: replies, command plans, passive replies, listings, child URLs."""

from __future__ import annotations

import ast
from datetime import UTC, datetime
from pathlib import Path

import pytest

from anyurl.errors import AccessDenied, ProtocolError, ResourceNotFound, TemporaryFailure, UnsafeURL
from anyurl.protocols import ftp
from anyurl.urls import FTPURL, parse


def u(text: str) -> FTPURL:
    url = parse(text)
    assert isinstance(url, FTPURL)
    return url


def test_module_never_imports_asyncio() -> None:
    tree = ast.parse(Path(ftp.__file__).read_text())
    names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not any("asyncio" in n for n in names)


# -- replies -------------------------------------------------------------------

REPLIES = [
    ([b"220 ready\r\n"], 220, ("ready",)),
    ([b"230-Welcome\r\n", b"230-  second\r\n", b"230 done\r\n"], 230, ("Welcome", "  second", "done")),
    # a line starting with another code, or the same code and "-", does not end the reply
    ([b"211-Features:\r\n", b" MLSD\r\n", b"200 not the end\r\n", b"211-still not\r\n", b"211 End\r\n"],
     211, ("Features:", " MLSD", "200 not the end", "still not", "End")),
    ([b"550 No such file\n"], 550, ("No such file",)),
]


@pytest.mark.parametrize(("lines", "code", "texts"), REPLIES)
def test_reply_reader(lines: list[bytes], code: int, texts: tuple[str, ...]) -> None:
    reader = ftp.ReplyReader()
    results = [reader.feed(line) for line in lines]
    assert results[:-1] == [None] * (len(lines) - 1)
    assert results[-1] == ftp.Reply(code, texts)


@pytest.mark.parametrize("line", [b"hello\r\n", b"22 short\r\n", b"\r\n", b"2200 x\r\n"])
def test_reply_reader_refuses_malformed(line: bytes) -> None:
    with pytest.raises(ProtocolError):
        ftp.ReplyReader().feed(line)


def test_reply_reader_bounds() -> None:
    with pytest.raises(ProtocolError, match="longer than 10 bytes"):
        ftp.ReplyReader(max_line=10).feed(b"220 " + b"x" * 20 + b"\r\n")
    reader = ftp.ReplyReader(max_lines=3)
    reader.feed(b"220-a\r\n")
    reader.feed(b"b\r\n")
    reader.feed(b"c\r\n")
    with pytest.raises(ProtocolError, match="longer than 3 lines"):
        reader.feed(b"d\r\n")


@pytest.mark.parametrize(("code", "cls"), [
    (530, AccessDenied), (550, ResourceNotFound), (421, TemporaryFailure), (450, TemporaryFailure),
    (425, TemporaryFailure), (500, ProtocolError), (553, ProtocolError),
])
def test_error_mapping(code: int, cls: type[Exception]) -> None:
    err = ftp.error_for(ftp.Reply(code, ("text",)), "RETR x", url="ftp://h/x")
    assert type(err) is cls
    assert err.reply == f"{code} text"
    assert "RETR x" in str(err) and f"{code} text" in str(err)


# Replies real servers send, and what the user must get (README: permission denied -> exit 12).
CLASSIFIED = [
    (550, "secret.txt: Operation not permitted", AccessDenied),           # ProFTPD
    (553, "secret.txt: Permission denied.", AccessDenied),                # inetutils / netkit ftpd
    (550, "Permission denied.", AccessDenied),                            # vsftpd STOR without write_enable
    (550, "Access is denied.", AccessDenied),                             # IIS
    (450, "x: Permission denied", AccessDenied),                          # a permission is not transient
    (550, "nope.txt: No such file or directory", ResourceNotFound),       # ProFTPD, inetutils
    (550, "Failed to open file.", ResourceNotFound),                      # vsftpd (missing or unreadable)
    (553, "x: No such file or directory", ResourceNotFound),
    (450, "No files found", ResourceNotFound),
    (553, "Prohibited file name: .x.part", ProtocolError),                # Pure-FTPd refusing a dot file
    (553, "Could not create file.", ProtocolError),                       # vsftpd
    (550, ".x.part: Forbidden filename", ProtocolError),                  # ProFTPD PathDenyFilter
    (421, "Timeout.", TemporaryFailure),
    (421, "Permission denied: too many users", TemporaryFailure),         # 421 always closes: retry later
    (426, "Connection closed; transfer aborted.", TemporaryFailure),
    (452, "Insufficient storage space", TemporaryFailure),
    (530, "Login incorrect.", AccessDenied),
    (552, "Exceeded storage allocation", ProtocolError),
]


@pytest.mark.parametrize(("code", "text", "cls"), CLASSIFIED)
def test_classification_table(code: int, text: str, cls: type[Exception]) -> None:
    reply = ftp.Reply(code, (text,))
    assert ftp.classify(reply) is cls
    assert type(ftp.error_for(reply, "RETR x")) is cls


def test_upload_names_and_when_to_try_the_next() -> None:
    assert ftp.upload_names("dir/f.bin", "ab12") == [
        ("temp-dot", "dir/.f.bin.ab12.part"), ("temp", "dir/f.bin.ab12.part"), ("direct", None)]
    assert ftp.upload_names("f", "x")[0] == ("temp-dot", ".f.x.part")
    assert ftp.retry_stor_name("553 Prohibited file name: .f.x.part")  # Pure-FTPd, anonymous
    assert ftp.retry_stor_name("550 .f.x.part: Forbidden filename")  # ProFTPD PathDenyFilter
    assert not ftp.retry_stor_name("550 f: Operation not permitted")  # no name will help
    assert not ftp.retry_stor_name("553 f: Permission denied.")
    assert not ftp.retry_stor_name("452 Insufficient storage")
    assert not ftp.retry_stor_name(None)


def test_classification_table_is_documented() -> None:
    # docs/ftp.md carries the same table; every class named in the code's table appears there.
    doc = (Path(__file__).parents[3] / "docs" / "ftp.md").read_text()
    for codes, _pattern, cls in ftp.REPLY_ERRORS:
        assert cls.__name__ in doc
        assert str(codes[0]) in doc


# -- the command plan (RFC 1738 3.2) --------------------------------------------

PLANS = [
    # url, strategy, user, password, cwds, type, action, argument, fallback
    # no typecode: binary whatever the suffix (byte-exact, as curl, wget, lftp and urllib)
    ("ftp://h/pub/hello.txt", "multicwd", "anonymous", "me@x", ("pub",), "I", "RETR", "hello.txt", True),
    ("ftp://h/a/b/file.bin", "multicwd", "anonymous", "me@x", ("a", "b"), "I", "RETR", "file.bin", True),
    ("ftp://h/a/b/file.bin", "singlecwd", "anonymous", "me@x", ("a/b",), "I", "RETR", "file.bin", True),
    ("ftp://h/a/b/file.bin", "nocwd", "anonymous", "me@x", (), "I", "RETR", "a/b/file.bin", True),
    # the RFC's motd examples
    ("ftp://myname@host.dom/%2Fetc/motd", "multicwd", "myname", None, ("/etc",), "I", "RETR", "motd", True),
    ("ftp://myname@host.dom/etc/motd", "multicwd", "myname", None, ("etc",), "I", "RETR", "motd", True),
    ("ftp://myname@host.dom//etc/motd", "multicwd", "myname", None, ("", "etc"), "I", "RETR", "motd", True),
    ("ftp://h/%2Fetc/motd", "nocwd", "anonymous", "me@x", (), "I", "RETR", "/etc/motd", True),
    # typecodes
    ("ftp://h/x.txt;type=i", "multicwd", "anonymous", "me@x", (), "I", "RETR", "x.txt", False),
    ("ftp://h/x.bin;type=a", "multicwd", "anonymous", "me@x", (), "A", "RETR", "x.bin", False),
    ("ftp://h/pub/sub;type=d", "multicwd", "anonymous", "me@x", ("pub",), "A", "NLST", "sub", False),
    ("ftp://h/pub/;type=d", "multicwd", "anonymous", "me@x", ("pub",), "A", "NLST", "", False),
    # an empty name lists
    ("ftp://h/pub/", "multicwd", "anonymous", "me@x", ("pub",), "I", "LIST", "", False),
    ("ftp://h/a/b/", "nocwd", "anonymous", "me@x", (), "I", "LIST", "a/b", False),
    # login variants
    ("ftp://u:p@h/f", "multicwd", "u", "p", (), "I", "RETR", "f", True),
    ("ftp://@h/", "multicwd", "", None, (), "I", "LIST", "", False),
    ("ftp://:pw@h/", "multicwd", "", "pw", (), "I", "LIST", "", False),
    # encoded names
    ("ftp://h/a%2Fb/c%3Bd%20e.txt", "multicwd", "anonymous", "me@x", ("a/b",), "I", "RETR", "c;d e.txt", True),
]


@pytest.mark.parametrize(("text", "strategy", "user", "password", "cwds", "type_", "action", "arg", "fb"), PLANS)
def test_plan(text: str, strategy: str, user: str, password: str | None, cwds: tuple[str, ...],
              type_: str, action: str, arg: str, fb: bool) -> None:
    p = ftp.plan(u(text), anonymous_email="me@x", cwd_strategy=strategy)
    assert (p.user, p.password, p.cwds, p.type, p.action, p.argument, p.fallback) == (
        user, password, cwds, type_, action, arg, fb)


def test_plan_text_suffixes_only_with_guess_type() -> None:
    url = u("ftp://h/notes.log")
    assert ftp.plan(url, anonymous_email="e").type == "I"
    assert ftp.plan(url, anonymous_email="e", guess_type=True).type == "A"
    assert ftp.plan(url, anonymous_email="e", guess_type=True, text_suffixes=(".txt",)).type == "I"
    assert ftp.plan(u("ftp://h/x.txt"), anonymous_email="e").type == "I"
    assert ftp.plan(u("ftp://h/x.bin;type=a"), anonymous_email="e").type == "A"


def test_plan_bad_strategy() -> None:
    with pytest.raises(ValueError, match="cwd_strategy"):
        ftp.plan(u("ftp://h/x"), anonymous_email="e", cwd_strategy="bogus")


UNSAFE = [
    ("ftp://h/a%0d%0aDELE%20x", "file name"),
    ("ftp://h/a%0aDELE%20x/f", "directory segment 1"),
    ("ftp://h/ok/b%00c/f", "directory segment 2"),
    ("ftp://us%0der:p@h/f", "user name"),
    ("ftp://u:p%0aw@h/f", "password"),
    ("ftp://h/x%00", "file name"),
]


@pytest.mark.parametrize(("text", "what"), UNSAFE)
def test_unsafe_refused(text: str, what: str) -> None:
    with pytest.raises(UnsafeURL, match=what):
        ftp.plan(u(text), anonymous_email="e")


def test_format_command_refuses_controls() -> None:
    assert ftp.format_command("CWD", "") == b"CWD \r\n"
    assert ftp.format_command("PWD") == b"PWD\r\n"
    with pytest.raises(UnsafeURL):
        ftp.format_command("CWD", "a\r\nDELE b")


# -- passive, PWD, 150 ------------------------------------------------------------

def test_epsv() -> None:
    assert ftp.parse_epsv(ftp.Reply(229, ("Entering Extended Passive Mode (|||40001|)",))) == 40001
    with pytest.raises(ProtocolError):
        ftp.parse_epsv(ftp.Reply(229, ("no port here",)))


@pytest.mark.parametrize(("text", "port"), [
    ("Entering Passive Mode (127,0,0,1,156,65).", 156 * 256 + 65),
    # the address is ignored: a server pointing elsewhere still only gives a port
    ("Entering Passive Mode (10,9,8,7,4,1)", 1025),
    ("=192,168,1,1,0,21", 21),
])
def test_pasv_port_only(text: str, port: int) -> None:
    assert ftp.parse_pasv(ftp.Reply(227, (text,))) == port


@pytest.mark.parametrize("text", ["Entering Passive Mode", "(1,2,3,4,0,0)", "(1,2,3,4,300,1)"])
def test_pasv_bad(text: str) -> None:
    with pytest.raises(ProtocolError):
        ftp.parse_pasv(ftp.Reply(227, (text,)))


@pytest.mark.parametrize(("reply", "path"), [
    (ftp.Reply(257, ('"/" is the current directory',)), "/"),
    (ftp.Reply(257, ('"/home/a ""q"" b" ok',)), '/home/a "q" b'),
    (ftp.Reply(257, ("no quotes",)), None),
    (ftp.Reply(550, ('"/x"',)), None),
    (ftp.Reply(257, ('"unterminated',)), None),
])
def test_pwd(reply: ftp.Reply, path: str | None) -> None:
    assert ftp.parse_pwd(reply) == path


def test_150_size() -> None:
    assert ftp.parse_150_size(ftp.Reply(150, ("Opening BINARY mode data connection for x (1234 bytes).",))) == 1234
    assert ftp.parse_150_size(ftp.Reply(150, ("File status okay.",))) is None


def test_size_and_mdtm_replies() -> None:
    assert ftp.parse_size(ftp.Reply(213, ("1234",))) == 1234
    assert ftp.parse_size(ftp.Reply(213, ("not a number",))) is None
    assert ftp.parse_size(ftp.Reply(550, ("1234",))) is None
    assert ftp.parse_mdtm(ftp.Reply(213, ("20240131120005",))) == datetime(2024, 1, 31, 12, 0, 5, tzinfo=UTC)
    assert ftp.parse_mdtm(ftp.Reply(213, ("20240131120005.250",))) == datetime(2024, 1, 31, 12, 0, 5, tzinfo=UTC)
    assert ftp.parse_mdtm(ftp.Reply(213, ("20241399000000",))) is None  # month 13
    assert ftp.parse_mdtm(ftp.Reply(550, ("20240131120005",))) is None


def test_mlst_reply() -> None:
    # pyftpdlib's form: the facts line starts with one space and carries the path
    reply = ftp.Reply(250, ('Listing "/pub/hello.txt":', " type=file;size=25;modify=20261122101700;perm=r; "
                            "/pub/hello.txt", "End MLST."))
    item = ftp.parse_mlst(reply)
    assert item is not None
    assert (item.name, item.kind, item.size, item.modified) == (
        "/pub/hello.txt", "file", 25, datetime(2026, 11, 22, 10, 17, tzinfo=UTC))
    d = ftp.parse_mlst(ftp.Reply(250, ("Start", " Type=cdir;Modify=20240102030405; /pub", "End")))
    assert d is not None and d.kind == "directory" and d.name == "/pub"
    assert ftp.parse_mlst(ftp.Reply(550, ("No such file",))) is None
    assert ftp.parse_mlst(ftp.Reply(250, ("Start", "End"))) is None


def test_line_splitter_across_chunks() -> None:
    sp = ftp.LineSplitter(max_line=100)
    assert sp.feed(b"one\r") == []
    assert sp.feed(b"\ntw") == ["one"]
    assert sp.feed(b"o\n\r\nthree\nfo") == ["two", "three"]
    assert sp.flush() == ["fo"]
    assert sp.flush() == []


def test_line_splitter_bounds_what_it_holds() -> None:
    sp = ftp.LineSplitter(max_line=10)
    assert sp.feed(b"x" * 10) == []
    with pytest.raises(ProtocolError, match="longer than 10 bytes"):
        sp.feed(b"y")  # no newline in sight: refused before the tail grows further
    with pytest.raises(ProtocolError, match="longer than 10 bytes"):
        ftp.LineSplitter(max_line=10).feed(b"ok\n" + b"z" * 20 + b"\nok\n")


# -- listings ----------------------------------------------------------------------

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)

LIST_LINES = [
    ("-rw-r--r--    1 0        0              25 Nov 22 10:17 hello.txt",
     ftp.ListItem("hello.txt", "file", 25, datetime(2026, 11, 22, 10, 17, tzinfo=UTC))),
    ("drwxr-xr-x    3 0        0            4096 Jan 02  2024 dir with space",
     ftp.ListItem("dir with space", "directory", None, datetime(2024, 1, 2, tzinfo=UTC))),
    ("lrwxrwxrwx    1 0        0               9 Nov 22 10:17 link -> hello.txt",
     ftp.ListItem("link", "symlink", None, datetime(2026, 11, 22, 10, 17, tzinfo=UTC), "hello.txt")),
    # a device: listed as a file the listing does not call a file
    ("crw-rw-rw-    1 0        0               0 Nov 22 10:17 null",
     ftp.ListItem("null", "file", 0, datetime(2026, 11, 22, 10, 17, tzinfo=UTC), known=False)),
    # "HH:MM" in the future means last year
    ("-rw-r--r-- 1 owner 5 Dec 24 10:00 xmas.txt",
     ftp.ListItem("xmas.txt", "file", 5, datetime(2025, 12, 24, 10, 0, tzinfo=UTC))),
    ("-rw-r--r--+ 1 a b 7 Mar  1 09:05 semi;colon%.txt",
     ftp.ListItem("semi;colon%.txt", "file", 7, datetime(2026, 3, 1, 9, 5, tzinfo=UTC))),
    ("01-31-24  09:15PM       <DIR>          Windows Dir",
     ftp.ListItem("Windows Dir", "directory", None, datetime(2024, 1, 31, 21, 15, tzinfo=UTC))),
    ("12-01-2023  12:05AM              1234 report.pdf",
     ftp.ListItem("report.pdf", "file", 1234, datetime(2023, 12, 1, 0, 5, tzinfo=UTC))),
    ("total 12", None),
    ("drwxr-xr-x 2 0 0 4096 Nov 22 10:17 .", None),
    # a line in no known format is kept, as an "info" item holding the line (issue 25)
    ("garbage line", ftp.ListItem("line", "info", known=False,
                                  meta=(("format", "unknown"), ("line", "garbage line")))),
]


@pytest.mark.parametrize(("line", "item"), LIST_LINES)
def test_list_line(line: str, item: ftp.ListItem | None) -> None:
    assert ftp.parse_list_line(line, NOW) == item


MLSD_LINES = [
    ("type=file;size=25;modify=20261122101700;perm=r; hello.txt",
     ("hello.txt", "file", 25, datetime(2026, 11, 22, 10, 17, tzinfo=UTC))),
    ("type=dir;modify=20240102030405.123; dir with space",
     ("dir with space", "directory", None, datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC))),
    ("Type=OS.unix=slink:/x;Size=3; link", ("link", "symlink", 3, None)),
    ("type=file;size=1; name with ;semicolon", ("name with ;semicolon", "file", 1, None)),
    ("type=cdir; .", None),
    ("type=pdir; ..", None),
    ("nospace", None),
]


@pytest.mark.parametrize(("line", "want"), MLSD_LINES)
def test_mlsd_line(line: str, want: tuple[object, ...] | None) -> None:
    item = ftp.parse_mlsd_line(line)
    if want is None:
        assert item is None
    else:
        assert item is not None
        assert (item.name, item.kind, item.size, item.modified) == want


def test_mlsd_symlink_keeps_its_target_and_odd_types_are_files() -> None:
    link = ftp.parse_mlsd_line("type=OS.unix=slink:/pub/real;modify=20240102030405; alias")
    assert link is not None and (link.kind, link.target, link.known) == ("symlink", "/pub/real", True)
    fifo = ftp.parse_mlsd_line("type=OS.unix=fifo; pipe")
    assert fifo is not None and (fifo.kind, fifo.known) == ("file", False)
    assert ftp.parse_nlst_line("a.txt") == ftp.ListItem("a.txt", known=False)


@pytest.mark.parametrize(("directory", "target", "login", "want"), [
    (("pub",), "real dir", "/", "ftp://h/pub/real%20dir"),
    (("pub", "a"), "../b/c.txt", "/home/u", "ftp://h/pub/b/c.txt"),
    (("pub",), "./same", "/", "ftp://h/pub/same"),
    (("pub",), "..", "/", "ftp://h/"),
    (("pub",), "../../escape", "/", None),
    # absolute targets are server paths: relative to the login directory only when below it
    (("pub",), "/other/x", "/", "ftp://h/other/x"),
    (("pub",), "/home/u/a/b", "/home/u", "ftp://h/a/b"),
    (("pub",), "/home/u/", "/home/u/", "ftp://h/"),
    # else RFC 1738 3.2.2's absolute form: a first CWD of "/x" is the URL segment %2Fx
    (("pub",), "/etc/motd", "/home/u", "ftp://h/%2Fetc/motd"),
    (("pub",), "/etc/x/y", "/home/u", "ftp://h/%2Fetc/x/y"),
    (("pub",), "/motd", "/home/u", "ftp://h/%2Fmotd"),
    (("pub",), "/home/user2/f", "/home/u", "ftp://h/%2Fhome/user2/f"),
    (("pub",), "/../etc/./motd", "/home/u", "ftp://h/%2Fetc/motd"),
    (("pub",), "/other/x", None, "ftp://h/%2Fother/x"),  # PWD unparsable: the absolute form
    (("pub",), "/other/x", "SYS$DISK:[HOME]", "ftp://h/%2Fother/x"),  # not a Unix path
    # a directory reached through an absolute CWD: relative targets stay server paths
    (("/etc", "a"), "b", None, "ftp://h/%2Fetc/a/b"),
    (("/etc",), "../x", "/home/u", "ftp://h/%2Fx"),
])
def test_symlink_key_resolves_the_target(directory: tuple[str, ...], target: str, login: str | None,
                                         want: str | None) -> None:
    assert ftp.symlink_key(u("ftp://h/"), directory, target, login) == want


def test_symlink_key_absolute_form_plans_the_rfc_commands() -> None:
    # ftp://h/%2Fetc/x/y is "CWD /etc", "CWD x", "RETR y" (RFC 1738 3.2.2's %2Fetc/motd example)
    key = ftp.symlink_key(u("ftp://h/"), ("pub",), "/etc/x/y", "/home/u")
    assert key is not None
    p = ftp.plan(u(key), anonymous_email="a@b")
    assert (p.cwds, p.action, p.argument) == (("/etc", "x"), "RETR", "y")


def test_nlst_and_split_lines() -> None:
    lines = ftp.split_lines(b"a.txt\r\nsub/b.txt\r\n.\r\n\r\nc d\n")
    assert lines == ["a.txt", "sub/b.txt", ".", "c d"]
    assert [i.name for i in ftp.parse_nlst(lines)] == ["a.txt", "b.txt", "c d"]


CHILDREN = [
    ("ftp://h/pub/", ("pub",), ftp.ListItem("with space.txt", "file"), "ftp://h/pub/with%20space.txt"),
    ("ftp://h/pub/", ("pub",), ftp.ListItem("semi;colon.txt", "file"), "ftp://h/pub/semi%3Bcolon.txt"),
    ("ftp://h/pub/", ("pub",), ftp.ListItem("100%.txt", "file"), "ftp://h/pub/100%25.txt"),
    ("ftp://h/pub/", ("pub",), ftp.ListItem("a/b", "file"), "ftp://h/pub/a%2Fb"),
    ("ftp://h/pub/", ("pub",), ftp.ListItem("sub", "directory"), "ftp://h/pub/sub/"),
    ("ftp://u:secret@h:2121/%2Fetc/", ("/etc",), ftp.ListItem("motd", "file"), "ftp://u@h:2121/%2Fetc/motd"),
    ("ftp://h/", (), ftp.ListItem("x", known=False), "ftp://h/x"),
]


@pytest.mark.parametrize(("base", "directory", "item", "want"), CHILDREN)
def test_child_url(base: str, directory: tuple[str, ...], item: ftp.ListItem, want: str) -> None:
    got = ftp.child_url(u(base), directory, item)
    assert got == want
    back = u(got)  # the URL designates exactly that name again
    if item.kind == "directory":
        assert back.cwd == (*directory, item.name) and back.name == ""
    else:
        assert back.cwd == directory and back.name == item.name


@pytest.mark.parametrize(("chunks", "want"), [
    ([b"a\r\nb\r\n"], b"a\nb\n"),
    ([b"a\r", b"\nb"], b"a\nb"),
    ([b"a\r", b"b\r"], b"a\rb\r"),
    ([b"\r", b"\r", b"\n"], b"\r\n"),
])
def test_crlf_decoder(chunks: list[bytes], want: bytes) -> None:
    dec = ftp.CRLFDecoder()
    out = b"".join(dec.feed(c) for c in chunks) + dec.flush()
    assert out == want


# -- properties ----------------------------------------------------------------------

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_names = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n\0"), min_size=1,
                 max_size=40).filter(lambda s: s not in (".", ".."))


@given(_names, st.lists(_names, max_size=3), st.sampled_from(["file", "directory", "symlink"]))
def test_child_url_round_trips_any_name(name: str, directory: list[str], kind: str) -> None:
    base = FTPURL(scheme="ftp", host="h", port=21, cwd=tuple(directory))
    back = u(ftp.child_url(base, tuple(directory), ftp.ListItem(name, kind)))
    if kind == "directory":
        assert (back.cwd, back.name) == ((*directory, name), "")
    else:
        assert (back.cwd, back.name, back.typecode) == (tuple(directory), name, None)


# names as listings give them: any text, and undecodable bytes as lone surrogates (surrogateescape)
_awkward = st.text(st.one_of(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n\0"),
                             st.characters(min_codepoint=0xDC80, max_codepoint=0xDCFF),
                             st.sampled_from("%/;? #:@&=+~")), max_size=24)


@pytest.mark.parametrize("base", ["ftp://h/", "ftp://u:secret@h:2121/pub/x;type=d", "ftp://a%40b@[::1]/"])
@pytest.mark.parametrize("directory", [(), ("pub",), ("/etc", "with space", "100%", "a;b", "caf\u00e9", "x\udcff")])
def test_child_urls_equal_child_url(base: str, directory: tuple[str, ...]) -> None:
    # child_urls serializes the directory once per listing: its text must be child_url's
    url = u(base)
    names = ["plain.txt", "with space.txt", "semi;colon.txt", "100%.txt", "a/b", "?q#f", "caf\u00e9",
             "x\udc80y", "", "..", ".", "%2F", "~u"]
    child = ftp.child_urls(url, directory)
    for name in names:
        for kind in ("file", "directory", "symlink"):
            item = ftp.ListItem(name, kind)
            assert child(item) == ftp.child_url(url, directory, item), (name, kind)


@given(_awkward, st.lists(_awkward, max_size=4), st.sampled_from(["file", "directory", "symlink"]),
       st.sampled_from([None, "", "us er", "a@b:c"]))
def test_child_urls_equal_child_url_on_any_name(name: str, directory: list[str], kind: str,
                                                user: str | None) -> None:
    base = FTPURL(scheme="ftp", host="h", port=2121, user=user, password="pw", cwd=("x",), name="y", typecode="i")
    item = ftp.ListItem(name, kind)
    assert ftp.child_urls(base, tuple(directory))(item) == ftp.child_url(base, tuple(directory), item)


@given(st.text(max_size=200))
def test_list_and_mlsd_parsers_never_crash(line: str) -> None:
    item = ftp.parse_list_line(line, NOW)
    assert item is None or item.name or item.kind == "info"  # an unreadable line's last word may be no name
    ftp.parse_mlsd_line(line)


@given(st.lists(st.binary(max_size=30), max_size=20))
def test_reply_reader_only_raises_protocol_error(lines: list[bytes]) -> None:
    reader = ftp.ReplyReader(max_line=20, max_lines=5)
    for line in lines:
        try:
            reply = reader.feed(line)
        except ProtocolError:
            return
        if reply is not None:
            assert 0 <= reply.code <= 999


@pytest.mark.parametrize(("login", "cwds", "expected"), [
    ("/", ("pub", "sub"), "/pub/sub"),
    ("/home/urltest", ("upload",), "/home/urltest/upload"),
    ("/home/urltest/", ("a b", "100%", "ü;#"), "/home/urltest/a b/100%/ü;#"),
    ("/", (), None),  # back to the login directory itself: CWD login_dir as it is
    ("/", ("",), None),  # "//" in the URL: an empty CWD is sent as the RFC says
    ("/", ("a/b",), None),  # %2F inside a segment: one argument, as it is
    ("/", ("..",), None),
    ("/", (".", "x"), None),
    ("/", ("~user",), None),  # a server may expand it; "/~user" would not be the same
    ("SYS$DISK:[ANON]", ("pub",), None),  # not a Unix path: the sequence only
])
def test_absolute_cwd_only_where_it_means_the_sequence(login: str, cwds: tuple[str, ...],
                                                        expected: str | None) -> None:
    assert ftp.absolute_cwd(login, cwds) == expected


@pytest.mark.parametrize(("raw", "want"), [
    (b"229 Entering Extended Passive Mode (|||40001|)\r\n", (229, ("Entering Extended Passive Mode (|||40001|)",))),
    (b"226 \r\n", (226, ("",))),
    (b"150 Opening BINARY mode data connection for f (4096 bytes).\n",
     (150, ("Opening BINARY mode data connection for f (4096 bytes).",))),
    ("\u0661\u0665\u0660 Arabic-Indic digits\r\n".encode(), (150, ("Arabic-Indic digits",))),  # the regex path
])
def test_one_line_replies_parse_as_the_regex_does(raw: bytes, want: tuple[int, tuple[str, ...]]) -> None:
    reply = ftp.ReplyReader().feed(raw)
    assert reply is not None and (reply.code, reply.lines) == want
    assert reply.text == f"{want[0]} {want[1][0]}"


@pytest.mark.parametrize("raw", [b"220\r\n", b"22x ready\r\n", b"\xc2\xb2\xc2\xb2\xc2\xb2 x\r\n"])
def test_malformed_one_line_replies_still_fail(raw: bytes) -> None:
    with pytest.raises(ProtocolError):
        ftp.ReplyReader().feed(raw)


def test_content_type_per_suffix_matches_mimetypes() -> None:
    # the handler looks the type up once per suffix pair; it must agree with a lookup per name
    import itertools

    from anyurl.handlers.ftp import _content_type
    from anyurl.response import guess_content_type

    parts = ["", "a", ".", ".gz", ".tar", ".txt", "..", ".Z", ".svgz", ".tgz", ".PNG", "data:"]
    names = ["".join(p) for p in itertools.product(parts, repeat=4)]
    assert [n for n in names if _content_type(n) != guess_content_type(n)] == []


@pytest.mark.parametrize("name", ["../../etc/passwd", "sub/../..", "/abs", "nul\x00name", ".", ".."])
def test_listing_names_no_directory_can_hold_are_dropped(name: str) -> None:
    # Entry.name must be usable as a local file name: a "/" or NUL means a hostile or garbled line.
    assert ftp.parse_list_line(f"-rw-r--r--  1 0 0 10 Nov 22 10:17 {name}") is None
    assert ftp.parse_list_line(f"01-31-24  09:15PM  10 {name}") is None
    assert ftp.parse_mlsd_line(f"type=file;size=10; {name}") is None
    assert ftp.parse_list_line(f"lrwxrwxrwx  1 0 0 10 Nov 22 10:17 {name} -> /etc") is None
    # NLST keeps the last part of "dir/name" (servers prefix the directory), never "/" or NUL
    item = ftp.parse_nlst_line(name)
    assert item is None or ("/" not in item.name and item.name not in (".", ".."))
    assert ftp.parse_nlst_line("nul\x00name") is None
    assert ftp.parse_nlst_line("pub/sub/") == ftp.ListItem("sub", known=False)
    # a legal Unix name stays, CR included (fetching it is refused as UnsafeURL)
    assert ftp.parse_list_line("-rw-r--r--  1 0 0 10 Nov 22 10:17 cr\rname").name == "cr\rname"  # type: ignore[union-attr]

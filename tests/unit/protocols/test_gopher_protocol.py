"""Table-driven tests of the pure gopher protocol module (no network)."""

from __future__ import annotations

import pytest

from anyurl.errors import ProtocolError, ResourceNotFound, TemporaryFailure, UnsafeURL
from anyurl.protocols import gopher as gp
from anyurl.response import ENTRY_KINDS
from anyurl.urls import GopherURL, parse


def G(sel: str = "", t: str = "1", search: str | None = None, plus: str | None = None,
      port: int = 70) -> GopherURL:
    return GopherURL("gopher", "example.org", port, None, None, t, sel, search, plus)


# -- requests ------------------------------------------------------------------

REQUESTS = [
    # (url text, plan kind, exact bytes sent)
    ("gopher://example.org/", "plain", b"\r\n"),
    ("gopher://example.org", "plain", b"\r\n"),
    ("gopher://example.org/1", "plain", b"\r\n"),
    ("gopher://example.org/0/hello.txt", "plain", b"/hello.txt\r\n"),
    ("gopher://example.org/00about", "plain", b"0about\r\n"),  # selector starting with its type
    ("gopher://example.org/0/with%20space.txt", "plain", b"/with space.txt\r\n"),
    ("gopher://example.org/0/caf%C3%A9", "plain", "/café".encode() + b"\r\n"),
    ("gopher://example.org/9/%FF%FE", "plain", b"/\xff\xfe\r\n"),  # raw octets, not UTF-8
    ("gopher://example.org/7/search%09foo%20bar", "search", b"/search\tfoo bar\r\n"),
    ("gopher://example.org/7/search%09", "search", b"/search\t\r\n"),
    ("gopher://example.org/0/f%09%09+", "data", b"/f\t\t+\r\n"),
    ("gopher://example.org/0/f%09%09+application/postscript%20Es_ES", "data",
     b"/f\t\t+application/postscript Es_ES\r\n"),
    ("gopher://example.org/0/f%09%09!", "attributes", b"/f\t\t!\r\n"),
    ("gopher://example.org/0/f%09%09!+ABSTRACT%20+SMELL", "attributes", b"/f\t\t!+ABSTRACT +SMELL\r\n"),
    ("gopher://example.org/1/d%09%09$", "directory-attributes", b"/d\t\t$\r\n"),
    ("gopher://example.org/7/s%09q%09+", "data", b"/s\tq\t+\r\n"),
    ("gopher://example.org/0/f%09%09?", "ask", b"/f\t\t!\r\n"),  # "?" first fetches the form
    # RFC 1738 3.4.9: a filled-out form
    ("gopher://example.org/0/f%09%09+%091%0D%0A+-1%0D%0Aone%0D%0Atwo%0D%0A.%0D%0A", "form",
     b"/f\t\t+\t1\r\n+-1\r\none\r\ntwo\r\n.\r\n"),
]


@pytest.mark.parametrize(("text", "kind", "wire"), REQUESTS)
def test_plan_request(text: str, kind: str, wire: bytes) -> None:
    url = parse(text)
    assert isinstance(url, GopherURL)
    plan = gp.plan_request(url)
    assert plan.kind == kind
    assert plan.request == wire


def test_plan_request_view_and_names() -> None:
    plan = gp.plan_request(G("/f", "0", "", "+application/postscript Es_ES"))
    assert (plan.view, plan.language) == ("application/postscript", "Es_ES")
    plan = gp.plan_request(G("/f", "0", "", "!+ABSTRACT +smell"))
    assert plan.attribute_names == ("+ABSTRACT", "+SMELL")


UNSAFE = [
    # (url value, words the message must contain)
    (G("/a\r\nFLUSHALL", "0"), ["selector", "CR", "LF"]),
    (G("/a\nb", "0"), ["selector", "LF"]),
    (G("/a\tb", "0"), ["selector", "TAB"]),  # only buildable directly: the parser splits at %09
    (G("/a\0b", "0"), ["selector", "NUL"]),
    (G("/s", "7", "x\r\nQUIT"), ["search", "CR"]),
    (G("/s", "7", "x\ty"), ["search", "TAB"]),
    (G("/f", "0", "", "+\r\nQUIT"), ["Gopher+", "CR"]),
    (G("/f", "0", "", "!\nX"), ["Gopher+", "LF"]),
    # a form string with an extra raw line after the end is not a form
    (G("/f", "0", "", "+\t1\r\n+-1\r\na\r\n.\r\nQUIT\r\n"), ["Gopher+"]),
]


@pytest.mark.parametrize(("url", "words"), UNSAFE)
def test_plan_request_refuses_controls(url: GopherURL, words: list[str]) -> None:
    with pytest.raises(UnsafeURL) as info:
        gp.plan_request(url)
    for w in words:
        assert w in str(info.value)


def test_parsed_crlf_url_is_refused() -> None:
    url = parse("gopher://127.0.0.1:7070/_%0D%0AFLUSHALL")
    with pytest.raises(UnsafeURL):
        gp.plan_request(url)  # type: ignore[arg-type]


@pytest.mark.parametrize(("port", "refused"), [
    (70, False), (7070, False), (25, True), (6379, True), (11211, True), (9000, True), (27017, True),
    (21, True), (587, True), (2049, True), (9200, True), (443, False),
])
def test_service_ports(port: int, refused: bool) -> None:
    reason = gp.service_port_refusal(port)
    assert (reason is not None) == refused
    if reason:
        assert str(port) in reason and "RFC 1738" in reason and "allow_gopher_to_service_ports" in reason


# -- menus ---------------------------------------------------------------------

MENU_LINES = [
    # (line, expected (type, display, selector, host, port, plus) or a broken-line reason word)
    (b"0Hello\t/hello.txt\texample.org\t70\r\n", ("0", "Hello", "/hello.txt", "example.org", 70, None)),
    (b"1Sub\t/sub\th\t7070\t+\r\n", ("1", "Sub", "/sub", "h", 7070, "+")),
    (b"0Form\t/f\th\t70\t?\r\n", ("0", "Form", "/f", "h", 70, "?")),
    (b"iJust text\tfake\t(NULL)\t0\r\n", ("i", "Just text", "fake", "(NULL)", 0, None)),
    (b"iNo tabs at all\n", ("i", "No tabs at all", "", "", 0, None)),
    (b"3Not found\t\terror.host\t1\r\n", ("3", "Not found", "", "error.host", 1, None)),
    (b"hWeb\tURL:http://x.org/\th\t70\n", ("h", "Web", "URL:http://x.org/", "h", 70, None)),
    (b"ZOdd type\t/z\th\t70\n", ("Z", "Odd type", "/z", "h", 70, None)),
    (b"0No host\t/x\n", ("0", "No host", "/x", "menu.host", 7000, None)),  # defaulted
    (b"0Bad port\t/x\th\tseventy\n", "port"),
    (b"0No selector at all\n", "selector"),
]


@pytest.mark.parametrize(("line", "expected"), MENU_LINES)
def test_parse_menu_line(line: bytes, expected: object) -> None:
    item = gp.parse_menu_line(line, 3, host="menu.host", port=7000)
    if isinstance(expected, str):
        assert isinstance(item, gp.BrokenLine)
        assert expected in item.reason and item.number == 3
    else:
        assert isinstance(item, gp.MenuItem)
        got = (item.gophertype, item.display, item.selector, item.host, item.port, item.plus)
        assert got == expected


def test_parse_menu_line_empty() -> None:
    assert gp.parse_menu_line(b"\r\n") is None


def test_parse_menu_stops_at_dot_and_reports_broken() -> None:
    data = (b"iinfo\tfake\t(NULL)\t0\r\n0A\t/a\th\t70\r\nbroken line\r\n1B\t/b\th\t70\t+\r\n"
            b".\r\n0After the end\t/c\th\t70\r\n")
    items, broken, terminated = gp.parse_menu(data)
    assert terminated
    assert [i.display for i in items] == ["info", "A", "B"]
    assert [(b.number, b.text) for b in broken] == [(3, "broken line")]


ENTRIES = [
    # (item, kind, url, name): name is what a file would be called (the selector's last segment)
    (gp.MenuItem("0", "T", "/a b", "Example.ORG", 70), "file", "gopher://example.org/0/a%20b", "a b"),
    (gp.MenuItem("1", "D", "", "h", 7070), "directory", "gopher://h:7070/", "h"),
    (gp.MenuItem("7", "S", "/s", "h", 70), "search", "gopher://h/7/s", "s"),
    (gp.MenuItem("9", "B", "/b.bin", "h", 70), "file", "gopher://h/9/b.bin", "b.bin"),
    (gp.MenuItem("g", "G", "/p.gif", "h", 70), "file", "gopher://h/g/p.gif", "p.gif"),
    (gp.MenuItem("I", "I", "/p.png", "h", 70), "file", "gopher://h/I/p.png", "p.png"),
    (gp.MenuItem("s", "S", "/a.wav", "h", 70), "file", "gopher://h/s/a.wav", "a.wav"),
    (gp.MenuItem("5", "Z", "/a.zip", "h", 70), "file", "gopher://h/5/a.zip", "a.zip"),
    (gp.MenuItem("h", "W", "URL:http://x.org/d/a%20b?b", "h", 70), "page", "http://x.org/d/a%20b?b", "a b"),
    (gp.MenuItem("h", "W", "URL:http://x.org/", "h", 70), "page", "http://x.org/", "x.org"),
    (gp.MenuItem("h", "W", "/page.html", "h", 70), "page", "gopher://h/h/page.html", "page.html"),
    (gp.MenuItem("i", "info", "fake", "(NULL)", 0), "info", None, ""),
    (gp.MenuItem("3", "oops", "", "error.host", 1), "error", None, ""),
    (gp.MenuItem("8", "T", "guest", "t.org", 23), "session", "telnet://guest@t.org", "guest"),
    (gp.MenuItem("8", "T", "", "t.org", 2323), "session", "telnet://t.org:2323", "t.org"),
    (gp.MenuItem("Z", "U", "/z", "h", 70), "file", "gopher://h/Z/z", "z"),
    (gp.MenuItem("0", "F", "/form", "h", 70, "?"), "file", "gopher://h/0/form%09%09?", "form"),
    (gp.MenuItem("0", "P", "/plus", "h", 70, "+"), "file", "gopher://h/0/plus", "plus"),
    (gp.MenuItem("0", "tab", "/x\ty", "h", 70), "file", "gopher://h/0/x%09y", "x\ty"),
    (gp.MenuItem("1", "Sub menu", "/a/sub/", "h", 70), "directory", "gopher://h/1/a/sub/", "sub"),
]


@pytest.mark.parametrize(("item", "kind", "url", "name"), ENTRIES)
def test_menu_entry(item: gp.MenuItem, kind: str, url: str | None, name: str) -> None:
    e = gp.menu_entry(item)
    assert e.kind == kind and e.kind in ENTRY_KINDS
    assert e.name == name  # was the padded display string
    assert e.title == item.display
    if url is None:
        assert e.url is None
    else:
        assert e.url is not None and e.url.rstrip("/") == url.rstrip("/")
    assert e.meta["gophertype"] == item.gophertype and e.meta["selector"] == item.selector
    assert e.meta["host"] == item.host and e.meta["port"] == item.port
    assert ("unknown_type" in e.meta) == (item.gophertype == "Z")
    assert e.rel is None  # no menu given: nothing to relate to


@pytest.mark.parametrize(("gtype", "word"), [
    ("0", "text"), ("9", "binary"), ("5", "binary"), ("g", "image"), ("I", "image"), ("s", "sound"),
    ("d", "document"), ("Z", "unknown")])
def test_file_items_say_what_they_hold(gtype: str, word: str) -> None:
    # kind "binary" is gone: every retrievable item is a "file", meta["type"] says what it holds
    e = gp.menu_entry(gp.MenuItem(gtype, "x", "/x", "h", 70))
    assert (e.kind, e.meta["type"]) == ("file", word)


MENU = GopherURL("gopher", "h", 70, None, None, "1", "/pub/sub")


@pytest.mark.parametrize(("item", "rel"), [
    (gp.MenuItem("1", "..", "/pub", "h", 70), "parent"),
    (gp.MenuItem("1", "Main menu", "", "h", 70), "parent"),  # the root is above every menu
    (gp.MenuItem("1", "Top", "/", "H", 70), "parent"),
    (gp.MenuItem("1", "Here", "/pub/sub/", "h", 70), "self"),
    (gp.MenuItem("1", "Parent Directory", "/elsewhere", "h", 70), "parent"),  # says it goes up
    (gp.MenuItem("1", "Deeper", "/pub/sub/deeper", "h", 70), None),
    (gp.MenuItem("1", "Sibling", "/pub/other", "h", 70), None),
    (gp.MenuItem("1", "..", "/pub", "other.host", 70), None),  # another server: not up this tree
    (gp.MenuItem("1", "..", "/pub", "h", 7070), None),
    (gp.MenuItem("0", "a file named pub", "/pub", "h", 70), None),  # only menus lead up
])
def test_parent_and_self_links_are_flagged(item: gp.MenuItem, rel: str | None) -> None:
    assert gp.menu_entry(item, MENU).rel == rel


def test_entry_url_round_trips() -> None:
    e = gp.menu_entry(gp.MenuItem("0", "x", "/dir/a b%c", "h", 7070))
    assert e.url is not None
    back = parse(e.url)
    assert isinstance(back, GopherURL)
    assert (back.gophertype, back.selector, back.port) == ("0", "/dir/a b%c", 7070)


@pytest.mark.parametrize(("line", "expected"), [
    (b"3'/x' does not exist\t\terror.host\t1\r\n", ("'/x' does not exist", False)),
    (b"Error: File or directory not found! (null)\r\n", ("Error: File or directory not found! (null)", True)),
    (b"0Hello\t/h\th\t70\r\n", None),
    (b"3 little pigs\n", None),
])
def test_error_text(line: bytes, expected: object) -> None:
    assert gp.error_text(line) == expected


# -- text ------------------------------------------------------------------------

TEXTS = [
    # (wire, text, stuffed, terminated)
    (b"a\r\n..b\r\n...c\r\nd\r\n.\r\n", b"a\r\n.b\r\n..c\r\nd\r\n", True, True),  # RFC 1436 framing
    (b"a\n.b\n..c\nd\n", b"a\n.b\n..c\nd\n", False, False),  # verbatim (pygopherd)
    (b"a\n..c\nd\n", b"a\n..c\nd\n", False, False),  # ".." but no final ".": verbatim
    (b"a\n..c\n.\nd\n", b"a\n..c\n.\nd\n", False, False),  # a "." line that is not last
    (b"a\nb\n.\n", b"a\nb\n", None, True),  # final "." removed
    (b"a\nb\n.", b"a\nb\n", None, True),  # ... even without its line end
    (b"a\nb", b"a\nb", None, False),  # no final line end kept as is
    (b".\r\n", b"", None, True),
    (b"", b"", None, False),
    (b"..only\r\n..dots\r\n.\r\n", b".only\r\n.dots\r\n", True, True),
    (b"x\r\n.\r\nafter\r\n", b"x\r\n.\r\nafter\r\n", False, False),
]


@pytest.mark.parametrize(("wire", "text", "stuffed", "terminated"), TEXTS)
@pytest.mark.parametrize("step", [1, 2, 3, 7, 1 << 20])
def test_text_unstuffer(wire: bytes, text: bytes, stuffed: bool | None, terminated: bool, step: int) -> None:
    u = gp.TextUnstuffer()
    out = b"".join(u.feed(wire[i:i + step]) for i in range(0, len(wire), step)) + u.finish()
    assert out == text
    if stuffed is not None:
        assert u.stuffed is stuffed
    assert u.terminated is terminated


def test_text_unstuffer_hold_is_bounded() -> None:
    # After hold_limit bytes of undecided text the RFC rule (stuffed) is assumed.
    u = gp.TextUnstuffer(hold_limit=100)
    out = u.feed(b"..x\n" + b"y" * 50 + b"\n")
    assert out == b""
    out += u.feed(b"z" * 60 + b"\n..w\n")
    assert u.stuffed is True
    assert out == b".x\n" + b"y" * 50 + b"\n" + b"z" * 60 + b"\n.w\n"


def test_text_unstuffer_stops_at_terminator() -> None:
    u = gp.TextUnstuffer(hold_limit=4)
    out = u.feed(b"..a\n..b\n.\ngarbage\n")
    assert u.terminated and out == b".a\n.b\n"
    assert u.feed(b"more") == b"" and u.finish() == b""


# -- Gopher+ ---------------------------------------------------------------------


@pytest.mark.parametrize(("line", "expected"), [
    (b"+52\r\n", gp.PlusHeader(52)),
    (b"+-1\r\n", gp.PlusHeader(-1)),
    (b"+-2\r\n", gp.PlusHeader(-2)),
    (b"+0\n", gp.PlusHeader(0)),
    (b"--2\r\n", gp.PlusHeader(-2, error=True)),
    (b"--1\r\n", gp.PlusHeader(-1, error=True)),
    (b"-17\r\n", gp.PlusHeader(17, error=True)),
    (b"Hello\r\n", None),
    (b"+INFO: 0x\t/x\th\t70\r\n", None),
    (b"+-3\r\n", None),
    (b"+52", None),
])
def test_parse_plus_header(line: bytes, expected: gp.PlusHeader | None) -> None:
    assert gp.parse_plus_header(line) == expected


@pytest.mark.parametrize(("data", "exc", "words"), [
    (b"1 Test Admin <a@b>\r\n'/x' does not exist\r\n", ResourceNotFound, "'/x' does not exist"),
    (b"2 Admin <a@b>\r\nbusy, come back\r\n.\r\n", TemporaryFailure, "busy, come back"),
    (b"3 Admin <a@b>\r\nmoved to gopher://y/\r\n", ProtocolError, "moved to gopher://y/"),
    (b"garbage\r\n", ProtocolError, "garbage"),
])
def test_plus_errors(data: bytes, exc: type[Exception], words: str) -> None:
    err = gp.parse_plus_error(data)
    e = gp.error_for_plus(err, "gopher://h/0x")
    assert type(e) is exc
    assert words in str(e)


def test_plus_error_fields() -> None:
    err = gp.parse_plus_error(b"1 Test Admin <admin@127.0.0.1>\r\n'/n' does not exist\r\n")
    assert (err.code, err.contact, err.message) == (1, "Test Admin <admin@127.0.0.1>", "'/n' does not exist")


ATTRS = (b"+INFO: 0hello.txt\t/hello.txt\t127.0.0.1\t7070\t+\r\n+ADMIN:\r\n Admin: Test Admin <a@b>\r\n"
         b" Mod-Date: Sun Nov 22 11:33:12 2026 <20261122113312>\r\n+VIEWS:\r\n text/plain: <0k>\r\n"
         b" application/postscript Es_ES: <12k>\r\n+ABSTRACT:\r\n An abstract\r\n second line\r\n")


def test_parse_attributes_one_item() -> None:
    (item,) = gp.parse_attributes(ATTRS)
    assert item["INFO"] == "0hello.txt\t/hello.txt\t127.0.0.1\t7070\t+"
    assert item["ADMIN"].split("\n")[0] == "Admin: Test Admin <a@b>"
    assert item["ABSTRACT"] == "An abstract\nsecond line"
    views = gp.parse_views(item["VIEWS"])
    assert views == [gp.View("text/plain", None, "0k"), gp.View("application/postscript", "Es_ES", "12k")]


def test_parse_attributes_directory() -> None:
    data = ATTRS + b"+INFO: 1sub\t/sub\th\t70\t+\r\n+VIEWS:\r\n application/gopher+-menu:\r\n"
    items = gp.parse_attributes(data)
    assert [i["INFO"].split("\t")[0] for i in items] == ["0hello.txt", "1sub"]
    assert gp.parse_views(items[1]["VIEWS"]) == [gp.View("application/gopher+-menu")]


def test_render_attributes_round_trip() -> None:
    items = gp.parse_attributes(ATTRS)
    assert gp.parse_attributes(gp.render_attributes(items)) == items


ASK = ("Note: Please tell us\nAsk: Your name?\tAnonymous\nAskP: Password?\n"
       "Choose: Protocol\tgopher\tftp\twais\nSelect: Mail me?:\t1\nAskL: Comments\nWeird line\n")


def test_parse_ask() -> None:
    fields = gp.parse_ask(ASK)
    assert [(f.kind, f.prompt, f.default, f.choices) for f in fields] == [
        ("note", "Please tell us", None, []),
        ("ask", "Your name?", "Anonymous", []),
        ("askp", "Password?", None, []),
        ("choose", "Protocol", "gopher", ["gopher", "ftp", "wais"]),
        ("select", "Mail me?:", "1", []),
        ("askl", "Comments", None, []),
        ("note", "Weird line", None, []),
    ]


def test_answer_fields_and_form_url() -> None:
    fields = gp.parse_ask("Note: hi\nAsk: Name?\tx\nChoose: P\tgopher\tftp\n")
    # one answer per field (the note's is dropped) or one per answerable field
    assert gp.answer_fields(fields, ["ignored", "Bob", "ftp"]) == ["Bob", "ftp"]
    assert gp.answer_fields(fields, ["Bob", "ftp"]) == ["Bob", "ftp"]
    with pytest.raises(ProtocolError, match="2 fields"):
        gp.answer_fields(fields, ["Bob"])
    with pytest.raises(ProtocolError, match="not one of the choices"):
        gp.answer_fields(fields, ["Bob", "http"])
    with pytest.raises(UnsafeURL):
        gp.answer_fields(fields, ["Bob\r\nQUIT", "ftp"])
    url = G("/form", "0")
    target = gp.form_url(url, ["Bob", ".dot"])
    assert target.gopher_plus == "+\t1\r\n+-1\r\nBob\r\n..dot\r\n.\r\n"
    assert str(target) == "gopher://example.org/0/form%09%09+%091%0D%0A+-1%0D%0ABob%0D%0A..dot%0D%0A.%0D%0A"
    assert gp.plan_request(parse(str(target))).request == b"/form\t\t+\t1\r\n+-1\r\nBob\r\n..dot\r\n.\r\n"  # type: ignore[arg-type]


@pytest.mark.parametrize(("gtype", "selector", "view", "ctype"), [
    ("0", "/a", None, "text/plain"),
    ("1", "/", None, "text/plain"),
    ("g", "/x", None, "image/gif"),
    ("I", "/p.png", None, "image/png"),
    ("I", "/noext", None, "application/octet-stream"),
    ("s", "/a.wav", None, "audio/x-wav"),
    ("9", "/a.pdf", None, "application/pdf"),
    ("9", "/a", None, "application/octet-stream"),
    ("h", "/p", None, "text/html"),
    ("0", "/a", "application/postscript", "application/postscript"),
    ("0", "/a", "", "text/plain"),
])
def test_content_type_for(gtype: str, selector: str, view: str | None, ctype: str) -> None:
    assert gp.content_type_for(gtype, selector, view) == ctype


# -- properties ----------------------------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_lines = st.lists(st.text(alphabet=st.sampled_from(list(".ab\t")), max_size=6), max_size=12)


def _feed(u: gp.TextUnstuffer, wire: bytes, cuts: list[int]) -> bytes:
    out, last = [], 0
    for c in sorted(set(cuts)):
        if 0 < c < len(wire):
            out.append(u.feed(wire[last:c]))
            last = c
    out.append(u.feed(wire[last:]))
    return b"".join(out) + u.finish()


@settings(max_examples=300, deadline=None)
@given(_lines, st.lists(st.integers(0, 200), max_size=8))
def test_framed_text_round_trips(lines: list[str], cuts: list[int]) -> None:
    """Text a framing server dot-stuffs and terminates comes back exactly."""
    text = "".join(ln + "\r\n" for ln in lines).encode()
    wire = "".join(("." + ln if ln.startswith(".") else ln) + "\r\n" for ln in lines).encode() + b".\r\n"
    u = gp.TextUnstuffer()
    assert _feed(u, wire, cuts) == text
    assert u.terminated


@settings(max_examples=300, deadline=None)
@given(_lines, st.lists(st.integers(0, 200), max_size=8))
def test_unframed_text_is_verbatim_unless_it_ends_with_a_dot(lines: list[str], cuts: list[int]) -> None:
    """A server that just closes: the text comes back as sent, except a final "." line."""
    wire = "".join(ln + "\n" for ln in lines).encode()
    u = gp.TextUnstuffer()
    out = _feed(u, wire, cuts)
    if lines and lines[-1] == ".":
        assert u.terminated  # indistinguishable from a framed reply: the "." is removed
        assert out.endswith(b"\n") or out == b""
    else:
        assert out == wire
        assert not u.terminated


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=80))
def test_menu_line_parser_never_raises(line: bytes) -> None:
    item = gp.parse_menu_line(line, 1, host="h", port=70)
    assert item is None or isinstance(item, (gp.MenuItem, gp.BrokenLine))
    if isinstance(item, gp.MenuItem):
        e = gp.menu_entry(item, GopherURL("gopher", "h", 70, None, None, "1", "/a"))
        assert e.kind in ENTRY_KINDS  # an entry (maybe without URL) for every parsed line


@pytest.mark.parametrize(("start", "expect_start"), [
    (b"", b""), (b".", b"."), (b"..", b"."), (b"x", b"x")])
def test_text_unstuffer_never_buffers_a_long_line(start: bytes, expect_start: bytes) -> None:
    u = gp.TextUnstuffer(hold_limit=1000)
    out = [u.feed(start + b"y" * 10)]
    for _ in range(100):  # 1 MB of one line, in 10 kB pieces
        out.append(u.feed(b"z" * 10_000))
        assert len(u._partial) + u._held_size <= 1000 + 10_000 + 12  # bounded
    out.append(u.finish())
    # ".." starts a held line; past hold_limit the RFC rule (stuffed) is assumed
    assert b"".join(out) == expect_start + b"y" * 10 + b"z" * 1_000_000


# -- stat: Gopher+ attributes ------------------------------------------------------

@pytest.mark.parametrize(("text", "expect"), [
    ("<12k>", (12 * 1024, True)),
    ("12k", (12 * 1024, True)),
    ("<1.5M>", (1536 * 1024, True)),
    ("< 3 K >", (3 * 1024, True)),
    ("<300>", (300, False)),
    ("<300b>", (300, False)),
    ("<0>", (0, False)),  # an empty item, in bytes
    ("<0k>", None),  # pygopherd's floor: under a kilobyte, not empty
    ("", None),
    ("big", None),
    ("<12q>", None),
])
def test_parse_plus_size(text: str, expect: tuple[int, bool] | None) -> None:
    assert gp.parse_plus_size(text) == expect


def test_parse_mod_date() -> None:
    from datetime import UTC, datetime

    admin = "Admin: Test <t@example.org>\nMod-Date: Sun Sep  9 01:46:40 2001 <20010909014640>"
    assert gp.parse_mod_date(admin) == datetime(2001, 9, 9, 1, 46, 40, tzinfo=UTC)
    assert gp.parse_mod_date("Admin: x\nMod-Date: yesterday") is None
    assert gp.parse_mod_date("Mod-Date: <20011309014640>") is None  # month 13
    assert gp.parse_mod_date("") is None


def test_plus_facts_pick_the_view_asked_for() -> None:
    attrs = gp.parse_attributes(
        "+INFO: 0Report\t/report\texample.org\t70\t+\r\n"
        "+ADMIN:\r\n Admin: A <a@b>\r\n Mod-Date: x <20240102030405>\r\n"
        "+VIEWS:\r\n text/plain: <40k>\r\n application/pdf En_US: <120k>\r\n")[0]
    first = gp.plus_facts(attrs)
    assert (first.gophertype, first.size, first.content_type, first.size_text) == (
        "0", 40 * 1024, "text/plain", "40k")
    assert first.modified is not None and first.modified.year == 2024
    pdf = gp.plus_facts(attrs, "application/pdf")
    assert (pdf.size, pdf.content_type, pdf.size_approximate) == (120 * 1024, "application/pdf", True)
    bare = gp.plus_facts({})
    assert (bare.gophertype, bare.size, bare.modified, bare.content_type, bare.views) == (
        None, None, None, None, [])


@pytest.mark.parametrize(("url", "request_bytes"), [
    (G("/report", "0"), b"/report\t\t!\r\n"),
    (G("/sub", "1", plus="+"), b"/sub\t\t!\r\n"),  # whatever Gopher+ string the URL carries
    (G("/search", "7", search="q"), b"/search\tq\t!\r\n"),
])
def test_stat_request(url: GopherURL, request_bytes: bytes) -> None:
    assert gp.stat_request(url) == gp.RequestPlan("attributes", request_bytes)


def test_stat_request_refuses_control_characters() -> None:
    with pytest.raises(UnsafeURL):
        gp.stat_request(G("/x\r\nQUIT", "0"))

"""Every listing producer builds Entries whose kind is in the closed set ENTRY_KINDS and whose
fields mean one thing: each producer's entry builder is run over listing lines of every shape
it meets (the suite also sets ANYURL_CHECK_ENTRIES=1, so any Entry built anywhere checks)."""

from __future__ import annotations

from pathlib import Path

import pytest

from anyurl.handlers import ftp as ftp_handler
from anyurl.handlers.file import _list_directory
from anyurl.handlers.news import NewsHandler
from anyurl.handlers.news_conn import Server
from anyurl.handlers.prospero import ProsperoHandler
from anyurl.protocols import ftp, nntp
from anyurl.protocols import gopher as gp
from anyurl.protocols import prospero as pp
from anyurl.response import ENTRY_KINDS, ENTRY_RELS, Entry
from anyurl.urls import NewsURL, parse


def check(entries: list[Entry]) -> list[Entry]:
    assert entries
    for e in entries:
        assert e.kind in ENTRY_KINDS, e
        assert e.rel is None or e.rel in ENTRY_RELS, e
        assert e.description is None  # deprecated: no producer writes it
        assert e.key is not None or e.url is None
    return entries


def test_entry_check_refuses_a_kind_outside_the_set() -> None:
    for bad in ("link", "binary", "telnet", "unknown", "menu"):
        with pytest.raises(ValueError, match="outside ENTRY_KINDS"):
            Entry("x", "ftp://h/x", bad)
    with pytest.raises(ValueError, match="outside ENTRY_KINDS"):
        Entry("x", "ftp://h/x", "file", rel="up")


def test_description_is_read_as_title() -> None:
    e = Entry("x", "ftp://h/x", description="old spelling")
    assert e.title == "old spelling" and "description" not in e.as_dict()


GOPHERMAP = (b"iInfo line\tfake\t(NULL)\t0\r\n0Text\t/a.txt\th\t70\r\n1Menu\t/m\th\t70\r\n"
             b"7Search\t/s\th\t70\r\n9Bin\t/b.bin\th\t70\r\ngGif\t/p.gif\th\t70\r\nIImg\t/p.png\th\t70\r\n"
             b"sSnd\t/a.wav\th\t70\r\n5Zip\t/a.zip\th\t70\r\nhWeb\tURL:http://x.org/\th\t70\r\n"
             b"hDoc\t/d.html\th\t70\r\n8Tel\tguest\tt.org\t23\r\nTTn3270\t\tt.org\t23\r\n"
             b"3Oops\t\terror.host\t1\r\nZOdd\t/z\th\t70\r\n+Mirror\t/a.txt\th2\t70\r\n"
             b"1..\t/\th\t70\r\n1Self\t/here\th\t70\r\n")


def test_gopher_menu_entries() -> None:
    items, broken, _ = gp.parse_menu(GOPHERMAP)
    assert not broken
    menu = parse("gopher://h/1/here")
    entries = check([gp.menu_entry(i, menu) for i in items])  # type: ignore[arg-type]
    kinds = {e.title: e.kind for e in entries}
    assert kinds == {"Info line": "info", "Text": "file", "Menu": "directory", "Search": "search",
                     "Bin": "file", "Gif": "file", "Img": "file", "Snd": "file", "Zip": "file",
                     "Web": "page", "Doc": "page", "Tel": "session", "Tn3270": "session",
                     "Oops": "error", "Odd": "file", "Mirror": "file", "..": "directory", "Self": "directory"}
    assert {e.title: e.rel for e in entries if e.rel} == {"..": "parent", "Self": "self"}


FTP_LINES = [
    "-rw-r--r--    1 0        0              25 Nov 22 10:17 hello.txt",
    "drwxr-xr-x    3 0        0            4096 Jan 02  2024 dir",
    "lrwxrwxrwx    1 0        0               9 Nov 22 10:17 link -> hello.txt",
    "lrwxrwxrwx    1 0        0               9 Nov 22 10:17 up -> ../..",
    "crw-rw-rw-    1 0        0               0 Nov 22 10:17 null",
    "prw-rw-rw-    1 0        0               0 Nov 22 10:17 fifo",
    "01-31-24  09:15PM       <DIR>          Windows Dir",
    "12-01-2023  12:05AM              1234 report.pdf",
]
MLSD_LINES = ["type=file;size=25; a", "type=dir; d", "type=OS.unix=slink:/pub/d; l", "type=OS.unix=chr-1/3; null"]


def test_ftp_listing_entries() -> None:
    url = parse("ftp://h/pub/")
    items = [i for i in (ftp.parse_list_line(x) for x in FTP_LINES) if i is not None]
    items += [i for i in (ftp.parse_mlsd_line(x) for x in MLSD_LINES) if i is not None]
    items += ftp.parse_nlst(["a", "b/c"])
    child = ftp.child_urls(url, ("pub",))  # type: ignore[arg-type]
    entries = check([ftp_handler._entry(child, url, ("pub",), i) for i in items])  # type: ignore[arg-type]
    by_name = {e.name: e for e in entries}
    assert by_name["link"].key == "ftp://h/pub/hello.txt" and by_name["link"].kind == "symlink"
    assert by_name["l"].key == "ftp://h/pub/d" and by_name["l"].meta["target"] == "/pub/d"
    assert by_name["up"].key == by_name["up"].url  # leads above the top: keyed by itself
    assert by_name["null"].meta["kind_known"] is False and by_name["c"].meta["kind_known"] is False


def test_news_entries() -> None:
    handler = NewsHandler.__new__(NewsHandler)
    server = Server("nntp", "news.example", 119, False)
    over = nntp.parse_overview(b"7\tSubject here\ta@b\tMon, 1 Jan 2024 00:00:00 +0000\t<m7@b>\t\t123\t4")
    by_nntp = handler._article_entry(parse("nntp://news.example/comp.x"), server, "comp.x", over)
    by_news = handler._article_entry(NewsURL("news", "comp.x", None), server, "comp.x", over)
    other = handler._article_entry(parse("nntp://news.example/comp.y"), server, "comp.y",
                                   nntp.parse_overview(b"99\tSubject here\ta@b\t\t<m7@b>\t\t123\t4"))
    check([by_nntp, by_news, other])
    assert (by_nntp.name, by_nntp.title, by_nntp.kind) == ("7", "Subject here", "article")
    assert by_nntp.key == by_news.key == other.key == "news:m7@b"  # cross-posted: one key
    assert by_nntp.url != other.url
    group = handler._group_entry(parse("nntp://news.example/"), server, nntp.parse_active(b"comp.x 10 1 y"),
                                 "A group")
    check([group])
    assert (group.name, group.kind, group.title) == ("comp.x", "group", "A group")


def test_file_entries(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("f")
    (tmp_path / "d").mkdir()
    (tmp_path / "l").symlink_to("d")
    (tmp_path / "dangling").symlink_to("nowhere")
    entries = check(_list_directory(str(tmp_path), 100, None))
    assert {e.name: e.kind for e in entries} == {"f": "file", "d": "directory", "l": "symlink",
                                                  "dangling": "symlink"}


def test_prospero_entries() -> None:
    handler = ProsperoHandler.__new__(ProsperoHandler)
    url = parse("prospero://p.example/pub")
    ext = pp.AccessMethod("AFTP", "INTERNET-D", "ftp.example", "ASCII", "/pub/x", ("BINARY",))
    links = [pp.Link("L", t, f"n-{t}", "INTERNET-D", "p.example", "ASCII", f"/pub/{t}", access=(ext,))
             for t in ("DIRECTORY", "FILE", "SYMBOLIC", "EXTERNAL", "OBJECT")]
    entries = check([handler._entry(url, link) for link in links])  # type: ignore[arg-type]
    assert [e.kind for e in entries] == ["directory", "file", "symlink", "page", "file"]

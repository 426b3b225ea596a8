"""HTML pages as listings (src/anyurl/protocols/html.py) and URL.join for RFC 3986 references.

The autoindex fixtures (fixtures/html/) are in the formats nginx and Apache 2.4
mod_autoindex write; tests/integration/test_html_entries.py reads the same
files (and a real nginx autoindex) over HTTP.
"""

from __future__ import annotations

import gc
import time
import tracemalloc
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anyurl import ProtocolError, TransferError, URLSyntaxError, parse
from anyurl.protocols.html import PageLinks, clean_href, is_html, page_links
from anyurl.response import ENTRY_KINDS, Entry

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "html"

NGINX = b"""<html>
<head><title>Index of /d/</title></head>
<body>
<h1>Index of /d/</h1><hr><pre><a href="../">../</a>
<a href="sub%20dir/">sub dir/</a>                                          23-Nov-2026 12:14                   -
<a href="a%25b%23c.txt">a%b#c.txt</a>                                          23-Nov-2026 12:15                  17
<a href="%C3%A9t%C3%A9.bin">\xc3\xa9t\xc3\xa9.bin</a>                                       01-Jan-2020 00:00              123456
<a href="a-name-longer-than-fifty-characters-is-cut-by-nginx-in-the-text.txt">a-name-longer-than-fifty-characters-is-cut-by-n..&gt;</a> 02-Mar-2021 07:08  0
<a href="big.iso">big.iso</a>                                 01-Jan-2020 00:00              12M
</pre><hr></body>
</html>
"""


def when(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)  # type: ignore[misc]


def by_name(entries: list[Entry]) -> dict[str, Entry]:
    return {e.name: e for e in entries}


def test_nginx_autoindex_rows() -> None:
    entries, parser = page_links(NGINX, "http://h:8080/d/")
    assert parser.autoindex is True
    assert [e.name for e in entries] == ["/", "sub dir", "a%b#c.txt", "été.bin",
                                         "a-name-longer-than-fifty-characters-is-cut-by-nginx-in-the-text.txt",
                                         "big.iso"]
    up, sub, pct, uni, long, big = entries
    assert (up.url, up.kind, up.rel) == ("http://h:8080/", "directory", "parent")
    assert (sub.url, sub.kind, sub.size, sub.modified, sub.rel) == (
        "http://h:8080/d/sub%20dir/", "directory", None, when(2026, 11, 23, 12, 14), None)
    assert (pct.url, pct.kind, pct.size, pct.modified) == (
        "http://h:8080/d/a%25b%23c.txt", "file", 17, when(2026, 11, 23, 12, 15))
    assert (uni.url, uni.size, uni.title) == ("http://h:8080/d/%C3%A9t%C3%A9.bin", 123456, "été.bin")
    assert long.size == 0 and long.title == "a-name-longer-than-fifty-characters-is-cut-by-n..>"
    # "12M" (autoindex_exact_size off) is an approximation: never in size
    assert big.size is None and big.meta == {"size_approx": 12 * 2**20, "size_text": "12M"}
    assert all(e.kind in ENTRY_KINDS for e in entries)


@pytest.mark.parametrize("fixture", ["apache-table.html", "apache-pre.html"])
def test_apache_autoindex_formats(fixture: str) -> None:
    entries, parser = page_links((FIXTURES / fixture).read_bytes(), "http://h/pub/tree/")
    assert parser.autoindex is True
    # the "?C=N;O=D" sort links are controls of the page, not entries
    assert [e.name for e in entries] == ["pub", "docs old", "README", "a#b%c.tar.gz", "über.iso"]
    parent, docs, readme, tgz, iso = entries
    assert (parent.url, parent.rel, parent.kind, parent.title) == (
        "http://h/pub/", "parent", "directory", "Parent Directory")
    assert (docs.url, docs.kind, docs.size, docs.modified) == (
        "http://h/pub/tree/docs%20old/", "directory", None, when(2024, 2, 29, 23, 59))
    # the date in the Description column is not taken for the row's
    assert (readme.kind, readme.size, readme.modified) == ("file", 812, when(2023, 1, 15, 10, 22))
    assert (tgz.url, tgz.size, tgz.meta) == ("http://h/pub/tree/a%23b%25c.tar.gz", None,
                                             {"size_approx": 4096, "size_text": "4.0K"})
    assert (iso.url, iso.title, iso.meta["size_approx"]) == (
        "http://h/pub/tree/%C3%BCber.iso", "über.iso", int(1.2 * 2**30))


def test_ordinary_page_links_base_and_schemes() -> None:
    page = "http://127.0.0.1:8080/links/links.html"
    entries, parser = page_links((FIXTURES / "links.html").read_bytes(), page)
    assert parser.autoindex is False
    got = [(e.name, e.url, e.rel, e.title) for e in entries]
    base = "http://127.0.0.1:8080/links/base/"
    assert got == [
        ("a.html", base + "a.html", None, "Page <A>"),
        ("spaced name.html", base + "spaced%20name.html", None, "spaced"),
        ("up.html", "http://127.0.0.1:8080/links/up.html", None, "up one"),
        ("sub", base + "sub/", None, "a sub dir"),
        ("base", base, None, "the base itself"),
        ("/", "http://127.0.0.1:8080/", "parent", "home"),
        ("base", base, None, "top of the base"),  # "#top" is the base URL's fragment
        ("base", base + "?q=1", None, "query"),
        ("same-scheme.html", base + "same-scheme.html", None, "same scheme"),
        ("other", "http://127.0.0.2:9/other", None, "other host"),
        ("x", "ftp://127.0.0.1/pub/x", None, "ftp link"),
        ("bad%zzescape.html", base + "bad%25zzescape.html", None, "bad escape"),
        ("café.html", base + "caf%C3%A9.html", None, "café"),
        ("nofollow.html", base + "nofollow.html", None, "nofollow"),
        ("area.html", base + "area.html", None, "Area"),
        ("frame.html", base + "frame.html", None, None),
    ]
    assert all(e.kind == "page" for e in entries)
    assert by_name(entries)["nofollow.html"].meta == {"html_rel": "nofollow"}
    # mailto:, javascript:, data: and file: (from a remote page) are dropped
    assert parser.skipped == 4


def test_self_and_parent_links_without_base() -> None:
    html = (b'<title>t</title><a href="#frag">frag</a> <a href="">empty</a> <a href="p.html?x">query</a>'
            b'<a href="p.html">again</a> <a href="./">dir</a> <a href="../../">top</a> <a href="q/../p.html">dots</a>')
    entries, _ = page_links(html, "http://h/a/b/p.html")
    assert [(e.url, e.rel) for e in entries] == [
        ("http://h/a/b/p.html", "self"),   # the fragment and the empty href: one entry (in a row)
        ("http://h/a/b/p.html?x", None),
        ("http://h/a/b/p.html", "self"),
        ("http://h/a/b/", "parent"),
        ("http://h/", "parent"),
        ("http://h/a/b/p.html", "self"),
    ]


@pytest.mark.parametrize("page", ["http://h:8080/d/", "ftp://h/d/", "file:///d/"])
def test_a_link_to_the_root_of_the_pages_server_is_named_slash(page: str) -> None:
    # an autoindex's "../" at the top, a "home" link: not named after the host, which reads
    # as a host entry; a link to another server's root still is
    root = page.split("/", 3)
    root_url = "/".join(root[:3]) + "/"
    html = b'<title>Index of /d/</title><a href="../">../</a><a href="/">home</a><a href="http://other:81/">o</a>'
    entries, _ = page_links(html, page)
    assert [(e.name, e.rel) for e in entries] == [("/", "parent"), ("other", None)]
    assert entries[0].url == root_url and entries[0].kind == "directory"
    on_root, _ = page_links(b'<a href="/">me</a><a href="../">up</a>', root_url)
    assert [(e.name, e.rel) for e in on_root] == [("/", "self")]


def test_file_links_only_from_file_pages() -> None:
    html = b'<a href="file:///etc/passwd">x</a><a href="other.html">y</a>'
    remote, parser = page_links(html, "http://h/p.html")
    assert [e.url for e in remote] == ["http://h/other.html"] and parser.skipped == 1
    local, _ = page_links(html, "file:///srv/p.html")
    assert [e.url for e in local] == ["file:///etc/passwd", "file:///srv/other.html"]


def test_charset_from_meta_and_from_protocol() -> None:
    latin = b'<meta charset="iso-8859-1"><a href="x">caf\xe9</a>'
    assert page_links(latin, "http://h/")[0][0].title == "café"
    # the protocol's charset wins over <meta>
    assert page_links(latin.replace(b"\xe9", "é".encode()), "http://h/", charset="utf-8")[0][0].title == "café"
    assert page_links(b"\xef\xbb\xbf<a href=x>\xc3\xa9</a>", "http://h/")[0][0].title == "é"


def test_clean_href_and_is_html() -> None:
    assert clean_href("  a b\t\n.html ", True) == "a%20b.html"
    assert clean_href("a\\b", True) == "a/b" and clean_href('"<x>"', False) == "%22%3Cx%3E%22"
    assert clean_href("100%", True) == "100%25" and clean_href("%41", True) == "%41"
    assert is_html("text/html") and is_html("Text/HTML; charset=utf-8") and is_html("application/xhtml+xml")
    assert not is_html("text/plain") and not is_html(None) and not is_html("")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, len(NGINX) - 1), max_size=12))
def test_any_split_gives_the_same_entries(cuts: list[int]) -> None:
    """The page arrives in pieces cut anywhere (inside a tag, a UTF-8 character, a row)."""
    whole, _ = page_links(NGINX, "http://h:8080/d/")
    parser = PageLinks("http://h:8080/d/")
    got: list[Entry] = []
    last = 0
    for cut in [*sorted(set(cuts)), len(NGINX)]:
        got.extend(parser.feed(NGINX[last:cut]))
        last = cut
    got.extend(parser.close())
    assert got == whole and [e.meta for e in got] == [e.meta for e in whole]


def _endless(head: bytes, piece: bytes, total: int) -> Iterator[bytes]:
    yield head
    for _ in range(total // len(piece)):
        yield piece


def test_endless_attribute_is_refused_with_bounded_memory() -> None:
    parser = PageLinks("http://h/evil.html")
    tracemalloc.start()
    t0 = time.monotonic()
    with pytest.raises(ProtocolError, match="longer than 1048576 bytes"):
        for chunk in _endless(b'<title>x</title><a href="', b"A" * 65536, 1 << 30):
            parser.feed(chunk)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert parser.parsed < 2 * 1024 * 1024  # stopped after the bound, not at 1 GB
    assert peak < 16 * 1024 * 1024 and time.monotonic() - t0 < 5


@pytest.mark.parametrize("reference", [False, True])
def test_endless_script_is_skipped_not_buffered(reference: bool) -> None:
    parser = PageLinks("http://h/p.html", reference=reference)
    got: list[Entry] = []
    for chunk in _endless(b"<title>x</title><a href=a>a</a><script>", b"x = 1; " * 8192, 8 << 20):
        got.extend(parser.feed(chunk))
        assert parser._parser.pending(parser.max_pending) <= parser.max_pending + 65536
    got.extend(parser.feed(b"</script><a href=b>b</a>"))
    got.extend(parser.close())
    assert [e.name for e in got] == ["a", "b"]


def test_page_bytes_and_link_count_are_bounded() -> None:
    parser = PageLinks("http://h/p.html", max_bytes=100_000)
    with pytest.raises(TransferError, match="larger than 100000 bytes"):
        for chunk in _endless(b"<p>", b"text " * 1000, 1 << 30):
            parser.feed(chunk)
    assert parser.parsed <= 100_000 + 5000
    parser = PageLinks("http://h/p.html", max_entries=1000)
    handed = 0
    with pytest.raises(TransferError, match="more than 1000 links"):
        for i, chunk in enumerate(_endless(b"", b"".join(b'<a href="l%d">x</a>' % i for i in range(100)), 1 << 30)):
            handed += len(parser.feed(chunk.replace(b'"l', b'"%d-' % i)))
    assert handed == 1000


def test_many_links_stream_in_bounded_memory() -> None:
    """100,000 distinct links (3.2 MB) fed as a stream: entries come out as they complete
    and nothing grows with the page (the caller keeps none of them here)."""
    parser = PageLinks("http://h/p.html", max_entries=2_000_000)
    row = b"".join(b'<a href="/f%07d">f</a>\n' % i for i in range(1000))
    count = 0
    tracemalloc.start()
    for block in range(100):
        count += len(parser.feed(row.replace(b"/f", b"/%d-" % block)))
    count += len(parser.close())
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert count == 100_000
    assert peak < 4 * 1024 * 1024  # the entries themselves would take ~50 MB


# -- URL.join: RFC 3986 section 5.4 (what links on a page resolve with) -------------------

RFC3986_BASE = "http://a/b/c/d;p?q"
RFC3986 = {
    "g": "http://a/b/c/g", "./g": "http://a/b/c/g", "g/": "http://a/b/c/g/", "/g": "http://a/g",
    "//g": "http://g/", "?y": "http://a/b/c/d;p?y", "g?y": "http://a/b/c/g?y", "#s": "http://a/b/c/d;p?q",
    "g#s": "http://a/b/c/g", "g?y#s": "http://a/b/c/g?y", ";x": "http://a/b/c/;x", "g;x": "http://a/b/c/g;x",
    "g;x?y#s": "http://a/b/c/g;x?y", "": "http://a/b/c/d;p?q", ".": "http://a/b/c/", "./": "http://a/b/c/",
    "..": "http://a/b/", "../": "http://a/b/", "../g": "http://a/b/g", "../..": "http://a/",
    "../../": "http://a/", "../../g": "http://a/g",
    # abnormal examples (5.4.2)
    "../../../g": "http://a/g", "../../../../g": "http://a/g", "/./g": "http://a/g", "/../g": "http://a/g",
    "g.": "http://a/b/c/g.", ".g": "http://a/b/c/.g", "g..": "http://a/b/c/g..", "..g": "http://a/b/c/..g",
    "./../g": "http://a/b/g", "./g/.": "http://a/b/c/g/", "g/./h": "http://a/b/c/g/h",
    "g/../h": "http://a/b/c/h", "g;x=1/./y": "http://a/b/c/g;x=1/y", "g;x=1/../y": "http://a/b/c/y",
    "g?y/./x": "http://a/b/c/g?y/./x", "g?y/../x": "http://a/b/c/g?y/../x",
    # the backward-compatible reading RFC 3986 5.2.2 allows (and browsers use)
    "http:g": "http://a/b/c/g", "http:": "http://a/b/c/d;p?q",
}


@pytest.mark.parametrize(("ref", "expected"), sorted(RFC3986.items()))
def test_join_rfc3986_examples(ref: str, expected: str) -> None:
    assert str(parse(RFC3986_BASE).join(ref)) == expected


def test_join_keeps_fragments_and_other_schemes() -> None:
    joined = parse(RFC3986_BASE).join("g#s/../x")
    assert str(joined) == "http://a/b/c/g" and getattr(joined, "fragment", None) == "s/../x"
    with pytest.raises(URLSyntaxError):  # another scheme stays absolute ("ftp:g" is no ftp URL)
        parse(RFC3986_BASE).join("ftp:g")
    assert str(parse("ftp://h/pub/dir/").join("ftp:x")) == "ftp://h/pub/dir/x"


def test_autoindex_needs_a_path_title() -> None:
    page = b'<title>Index of Authors</title><a href="smith/">Smith</a>'
    entries, parser = page_links(page, "http://h/authors.html")
    assert parser.autoindex is False and entries[0].kind == "page"
    # python -m http.server: no dates or sizes, only the kinds
    page = (b'<title>Directory listing for /x/</title><h1>Directory listing for /x/</h1><hr><ul>'
            b'<li><a href="a.txt">a.txt</a></li><li><a href="d/">d/</a></li></ul>')
    entries, parser = page_links(page, "http://h/x/")
    assert parser.autoindex is True
    assert [(e.name, e.kind, e.size, e.modified) for e in entries] == [("a.txt", "file", None, None),
                                                                       ("d", "directory", None, None)]


# BusyBox httpd's index.cgi (httpd_indexcgi.c): unclosed cells, the size before the date
BUSYBOX = b"""<!DOCTYPE html PUBLIC "-//W3C//DTD HTML 4.01//EN" "http://www.w3.org/TR/html4/strict.dtd">
<html><head><meta http-equiv="Content-type" content="text/html; charset=utf-8">
<title>Index of /pub/</title>
<link href="/style.css" rel="stylesheet" type="text/css">
</head>
<body>
<h1>Index of /pub/</h1>
<table>
<tr class=hdr><th class=cnt>Name<th class=sz>Size<th class=dt>Last modified
<tr class=o><td class=nm><a href='..'>..</a><td class=sz><td class=dt>2026-11-30 08:00:00
<tr class=e><td class=nm><a href='docs/'>docs/</a><td class=sz><td class=dt>2026-11-30 09:10:11
<tr class=o><td class=nm><a href='a.bin'>a.bin</a><td class=sz>500<td class=dt>2026-12-01 23:04:48
<tr class=e><td class=nm><a href='b%20c.txt'>b c.txt</a><td class=sz>0<td class=dt>2026-12-02 01:02:03
<tr class=foot><th class=cnt>Files: 2, directories: 1<th class=sz>500<th class=dt>&nbsp;
</table></body></html>
"""


def test_busybox_index_cgi_rows_give_size_before_the_date() -> None:
    # issue 33 item 16: size was None for every file (looked for only after the date)
    entries, links = page_links(BUSYBOX, "http://h/pub/")
    assert links.autoindex
    got = [(e.name, e.kind, e.size, e.modified) for e in entries if e.rel is None]
    assert got == [("docs", "directory", None, when(2026, 11, 30, 9, 10, 11)),
                   ("a.bin", "file", 500, when(2026, 12, 1, 23, 4, 48)),
                   ("b c.txt", "file", 0, when(2026, 12, 2, 1, 2, 3))]


def _many_links(n: int) -> bytes:
    return b"<html><body>" + b"".join(b'<a href="/d/file-%07d.html">file %d</a>\n' % (i, i) for i in range(n))


def test_links_are_bounded_in_memory_as_well_as_in_count() -> None:
    # issue 33 item 13: a page of 1,100,000 links took 664 MB in entries held whole up to
    # Limits.max_entries; now their memory is bounded too (estimated, and measured here)
    bound = 4 * 1024 * 1024
    page = _many_links(50_000)
    pieces = [page[i:i + 256 * 1024] for i in range(0, len(page), 256 * 1024)]
    parser = PageLinks("http://h/d/", max_bytes=None, max_entries_bytes=bound)
    kept: list[Entry] = []
    tracemalloc.start()
    try:
        with pytest.raises(TransferError, match=r"more than 4194304 bytes of memory \(Limits.max_entries_bytes; "):
            for piece in pieces:
                kept += parser.feed(piece)
            kept += parser.close()
        assert 5_000 < len(kept) < 50_000
        assert sum(560 + len(e.url or "") + len(e.name) + len(e.title or "") for e in kept) <= bound
        with_them = tracemalloc.get_traced_memory()[0]
        del kept  # what that frees is what the entries held
        gc.collect()
        held = with_them - tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    # the estimate follows what the entries really take (so the bound is a memory bound)
    assert 0.75 * bound < held < 1.3 * bound, held


def test_the_default_memory_bound_cuts_a_million_links() -> None:
    from anyurl import Limits
    from anyurl.protocols.html import ENTRY_COST, MAX_ENTRIES_BYTES

    assert Limits().max_entries_bytes == MAX_ENTRIES_BYTES == 128 * 1024 * 1024
    # 1,000,000 links of this page's size take ~0.6 GB: the default stops them near 0.13 GB
    per_link = ENTRY_COST + len("http://h/d/file-0000000.html") + len("file-0000000.html") + len("file 0")
    assert MAX_ENTRIES_BYTES // per_link < 250_000

"""The fast HTML scanner (protocols.html._Scanner, the default) against the reference
tokenizer (the standard library's html.parser, ``PageLinks(reference=True)``): the same
entries, in the same order, with the same titles, kinds, rels and meta, and the same
autoindex decision, for the pages of the tests' fixtures, the crawl bench's generated site
and generated markup, whole or fed in pieces cut anywhere."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from bench.suites.crawl import web_files
from hypothesis import given, settings
from hypothesis import strategies as st

from anyurl.protocols.html import PageLinks

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "html"


def _links(page: str, data: bytes, reference: bool, cuts: list[int], **options: Any) -> tuple[list[Any], Any]:
    parser = PageLinks(page, reference=reference, **options)
    out = []
    last = 0
    for cut in [*sorted(set(cuts)), len(data)]:
        out += parser.feed(data[last:cut])
        last = cut
    out += parser.close()
    return [(e.url, e.name, e.kind, e.title, e.rel, e.size, e.modified, sorted(e.meta.items())) for e in out], \
        (parser.autoindex, parser.skipped)


def _same(page: str, data: bytes, cuts: list[int] = (), **options: Any) -> list[Any]:
    want = _links(page, data, True, [], **options)
    assert _links(page, data, False, [], **options) == want
    if cuts:
        assert _links(page, data, False, list(cuts), **options) == want
    return want[0]


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.html")))
@pytest.mark.parametrize("requisites", [False, True])
def test_fixture_pages(name: str, requisites: bool) -> None:
    data = (FIXTURES / name).read_bytes()
    got = _same("http://h.test/pub/dir/", data, list(range(0, len(data), 97)), requisites=requisites)
    assert got  # every fixture page has links


def test_bench_site_pages() -> None:
    files = web_files(300, 0, [("127.0.0.1", 8001), ("127.0.0.2", 8002)])
    pages = 0
    for path, data in files.items():
        if path.endswith(".html"):
            assert _same(f"http://127.0.0.1:8001/{path}", data, [len(data) // 3, len(data) // 2],
                         requisites=True)
            pages += 1
    assert pages == 301


_VALUES = st.sampled_from(["a.html", "../d/", "/img/x.png", "http://o.test/p", "p?q=1&amp;r=2", "x&#47;y",
                           "sp ace.html", "#frag", "mailto:x@y", "", "a.png 1x, b.png 2x", "é.html", "a>b",
                           "url(c.png)", "background: url('bg.png')"])
_ATTR_NAMES = st.sampled_from(["href", "src", "srcset", "rel", "style", "alt", "title", "type", "data", "poster",
                               "HREF", "class", "xlink:href"])


@st.composite
def _attr(draw: st.DrawFn) -> str:
    name, value = draw(_ATTR_NAMES), draw(_VALUES)
    quote = draw(st.sampled_from(['"', "'", ""]))
    if quote == "" and (not value or any(c in value for c in " >'\"=")):
        quote = '"'
    if quote and quote in value:
        quote = "'" if quote == '"' else '"'
    return f"{name}={quote}{value}{quote}" if draw(st.integers(0, 5)) else name


_TAGS = st.sampled_from(["a", "A", "img", "link", "base", "script", "style", "div", "p", "td", "tr", "source",
                         "iframe", "area", "video", "object", "input", "body", "use", "title", "head", "pre"])
_TEXT = st.sampled_from(["text", " ", "\n", "Index of /pub/", "a &amp; b", "&lt;not a tag&gt;", "x < y",
                         "23-Nov-2026 12:14  1234", "2026-11-23 12:14 4.0K", "&copy;", "\u00e9t\u00e9",
                         "body { background: url(s.png) } @import 'i.css';", "if (a<b) x();"])


@st.composite
def _markup(draw: st.DrawFn) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 25))):
        kind = draw(st.integers(0, 9))
        if kind <= 3:
            tag = draw(_TAGS)
            attrs = "".join(" " + draw(_attr()) for _ in range(draw(st.integers(0, 3))))
            parts.append(f"<{tag}{attrs}{draw(st.sampled_from(['', ' ', '/']))}>")
        elif kind <= 5:
            parts.append(f"</{draw(_TAGS)}>")
        elif kind == 6:
            parts.append(draw(st.sampled_from(["<!-- <a href=hidden.html> -->", "<!DOCTYPE html>", "<!---->",
                                               "<?xml version='1.0'?>", "<script src=s.js></script>",
                                               "<script>if (a<b) { x('<a href=no.html>') }</script>",
                                               "<SCRIPT type=x>var s = '</scr' + 'ipt>';</SCRIPT >"])))
        else:
            parts.append(draw(_TEXT))
    return "".join(parts)


@settings(max_examples=300, deadline=None)
@given(_markup(), st.lists(st.integers(0, 2000), max_size=4), st.booleans())
def test_generated_markup(markup: str, cuts: list[int], requisites: bool) -> None:
    # (closing any <style> or <script> left open: html.parser drops the text of one the page
    # ends in, the scanner reads a style's as CSS, as a browser does)
    data = (markup + "</style></script>").encode()
    _same("http://h.test/a/b.html", data, [c for c in cuts if c < len(data)], requisites=requisites)

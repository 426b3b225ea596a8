"""Page requisites as wget -p takes them (issue 30 part 3): src/anyurl/protocols/html.py with
requisites=True, and the CSS url()/@import scanner of src/anyurl/protocols/css.py."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anyurl.protocols.css import MAX_TOKEN, CSSRefs, css_refs
from anyurl.protocols.html import PageLinks, srcset_urls

SHEET = """@charset "utf-8";
@import "a.css"; @import url(b.css) screen; @IMPORT url( 'c.css' ); @import 'd.css' print;
/* url(commented.png) @import "commented.css"; */
body { background: url(bg.png) } .x { background-image: url("q.png"), url('r.png') }
@font-face { src: url(f.woff2) format("woff2"), url( f.woff ) }
.e { background: url() } .d { background: url(data:image/png;base64,AAA=) }
"""
WANT = [("a.css", "@import"), ("b.css", "@import"), ("c.css", "@import"), ("d.css", "@import"),
        ("bg.png", "url()"), ("q.png", "url()"), ("r.png", "url()"), ("f.woff2", "url()"), ("f.woff", "url()"),
        ("data:image/png;base64,AAA=", "url()")]


def test_css_references_of_a_whole_sheet() -> None:
    assert css_refs(SHEET) == WANT


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=len(SHEET)), max_size=12))
def test_css_references_are_the_same_however_the_sheet_is_cut(cuts: list[int]) -> None:
    scanner, out, at = CSSRefs(), [], 0
    for cut in sorted(set(cuts)):
        out += scanner.feed(SHEET[at:cut])
        at = cut
    out += scanner.feed(SHEET[at:]) + scanner.close()
    assert out == WANT


def test_css_unfinished_token_is_bounded() -> None:
    scanner = CSSRefs()
    scanner.feed("/* an endless comment " + "x" * (MAX_TOKEN + 10))
    assert len(scanner._buf) < MAX_TOKEN  # noqa: SLF001 - the bound itself
    assert scanner.feed("*/ a { background: url(after.png) }") + scanner.close() == [("after.png", "url()")]


@pytest.mark.parametrize(("value", "want"), [
    ("a.png 1x, b.png 2x", ["a.png", "b.png"]),
    ("a.png", ["a.png"]),
    ("  a.png 100w,b.png 200w ,  c.png", ["a.png", "b.png", "c.png"]),
    ("a,b.png 1x, c.png,", ["a,b.png", "c.png"]),
    ("data:image/png;base64,AA 1x, x.png 2x", ["data:image/png;base64,AA", "x.png"]),
    ("", []),
])
def test_srcset_urls(value: str, want: list[str]) -> None:
    assert srcset_urls(value) == want


PAGE = b"""<html><head><title>t</title><base href="http://h/site/assets/">
<link rel="stylesheet" href="s.css"><link rel="shortcut icon" href="fav.ico"><link rel="apple-touch-icon" href="t.png">
<link rel="manifest" href="app.webmanifest"><link rel="alternate" href="feed.xml"><link rel=preload href=l.jpg imagesrcset="l2.jpg 2x">
<style>@import "imp.css"; .h { background: url(bg.png) }</style></head>
<body background="bodybg.gif"><img src="a.png" srcset="a2.png 2x, a3.png 3x" lowsrc="low.png">
<picture><source srcset="p.webp 1x, p2.webp 2x"></picture><video src="v.mp4" poster="poster.jpg">
<source src="v.webm"><track src="subs.vtt"></video><audio src="au.ogg"></audio><object data="o.svg"></object>
<embed src="e.swf"><input type="image" src="btn.png"><input type="text" src="not-an-image.png">
<svg><image href="svgimg.png"/><use xlink:href="sprite.svg#i"/><use href="#on-this-page"/></svg>
<table><tr><td background="cell.png" style="background: url('styled.png')">c</td></tr></table>
<a href="next.html">next</a></body></html>"""


def _links(data: bytes, **kw: object) -> list[tuple[str, str | None, bool]]:
    parser = PageLinks("http://h/site/index.html", **kw)  # type: ignore[arg-type]
    out = parser.feed(data) + parser.close()
    return [(e.url.rsplit("/", 1)[1] if e.url else "", e.meta.get("requisite"), bool(e.meta.get("stylesheet")))
            for e in out]


def test_every_requisite_kind_resolved_against_the_base() -> None:
    got = _links(PAGE, requisites=True)
    assert got == [
        ("s.css", "link", True), ("fav.ico", "link", False), ("t.png", "link", False),
        ("app.webmanifest", "link", False), ("l.jpg", "link", False), ("l2.jpg", "link", False),
        ("imp.css", "@import", True), ("bg.png", "url()", False), ("bodybg.gif", "body", False),
        ("a.png", "img", False), ("a2.png", "img", False), ("a3.png", "img", False), ("low.png", "img", False),
        ("p.webp", "source", False), ("p2.webp", "source", False), ("v.mp4", "video", False),
        ("poster.jpg", "video", False), ("v.webm", "source", False), ("subs.vtt", "track", False),
        ("au.ogg", "audio", False), ("o.svg", "object", False), ("e.swf", "embed", False),
        ("btn.png", "input", False), ("svgimg.png", "image", False), ("sprite.svg", "use", False),
        ("cell.png", "td", False), ("styled.png", "url()", False), ("next.html", None, False)]
    parser = PageLinks("http://h/site/index.html", requisites=True)
    urls = {e.url for e in parser.feed(PAGE) + parser.close()}
    assert "http://h/site/assets/a2.png" in urls  # the <base href>, not the page's directory


def test_requisites_only_when_asked() -> None:
    assert _links(PAGE) == [("next.html", None, False)]


def test_a_style_sheet_body_gives_its_references_against_its_own_url() -> None:
    parser = PageLinks("http://h/site/css/main.css", stylesheet=True)
    data = SHEET.encode()
    out = []
    for i in range(0, len(data), 7):
        out += parser.feed(data[i:i + 7])
    out += parser.close()
    assert [(e.url, e.meta["requisite"], e.kind) for e in out][:2] == [
        ("http://h/site/css/a.css", "@import", "page"), ("http://h/site/css/b.css", "@import", "page")]
    assert [e.meta.get("stylesheet", False) for e in out[:5]] == [True, True, True, True, False]
    assert parser.skipped == 1  # the data: URL
    assert len(out) == len(WANT) - 1


def test_a_style_sheet_is_bounded_like_a_page() -> None:
    parser = PageLinks("http://h/s.css", stylesheet=True, max_entries=3)
    with pytest.raises(Exception, match="more than 3 links"):
        parser.feed(b"".join(b"a { background: url(i%d.png) }\n" % i for i in range(2000)))
        parser.close()

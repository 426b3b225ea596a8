"""urls.Resolver: the fast join of a page's relative links gives what the strict resolver
(``parse(join_text(str(base), ref))``) gives, text and value, for every reference (fails
without the fast path's guards: a ":" or a bad escape in the path, a "//" reference...)."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from anyurl import URLSyntaxError, parse
from anyurl.urls import FTPURL, HTTPURL, URL, FileURL, Resolver, join_text


def _strict(base: URL, ref: str) -> tuple[str, URL] | type[Exception]:
    """What a page's link resolved to before Resolver: joined against a hierarchical base, else
    absolute links only."""
    try:
        u = parse(join_text(str(base), ref) if isinstance(base, (HTTPURL, FTPURL, FileURL)) else ref)
    except URLSyntaxError:
        return URLSyntaxError
    return str(u), u


def _fast(base: URL, ref: str) -> tuple[str, URL] | type[Exception]:
    try:
        return Resolver(base).join(ref)
    except URLSyntaxError:
        return URLSyntaxError


def _same(base: URL, ref: str) -> None:
    want, got = _strict(base, ref), _fast(base, ref)
    assert got == want, (str(base), ref)
    if isinstance(want, tuple) and isinstance(got, tuple):  # the same value, field by field (but the fragment)
        assert type(got[1]) is type(want[1])
        assert {**vars(got[1]), "fragment": None} == {**vars(want[1]), "fragment": None}


_SEG = st.sampled_from(["", ".", "..", "a", "b.html", "d1", "p%20q", "x%2Fy", "%zz", "a:b", "~u", "it's", "a;b=c",
                        "@", "é", "a b", "[x]", "a|b", "%", "A-Z_0.9", "+!$&()*,="])
_PATH = st.lists(_SEG, max_size=5).map("/".join)
_QUERY = st.none() | st.sampled_from(["", "q=1", "a=b&c=d", "x/y?z", "%41", "a b", "é", "a:b@c"])
_FRAG = st.none() | st.sampled_from(["", "top", "a#b", "é"])


@st.composite
def _refs(draw: st.DrawFn) -> str:
    lead = draw(st.sampled_from(["", "/", "./", "../", "//", "http:", "https://h2/", "ftp://f/", "mailto:",
                                 "\\", "?"]))
    ref = lead + draw(_PATH)
    q, f = draw(_QUERY), draw(_FRAG)
    return ref + ("" if q is None else "?" + q) + ("" if f is None else "#" + f)


_BASES = st.sampled_from([
    "http://127.0.0.1:8001/", "http://h/d/p.html", "https://H.example:8443/a/b/?x=1", "http://h/d/",
    "http://h", "http://h/a%20b/c;p?q#f", "http://u:p@h/d/p", "http://[::1]:81/x/y", "https://h:443/z",
    "ftp://h/pub/d/", "ftp://h/pub/f.txt", "file:///tmp/a/b.html", "gopher://h/1/x", "http://h/~a/%7E/x.html",
]).map(parse)


@settings(max_examples=800, deadline=None)
@given(_BASES, _refs())
@example(parse("http://h/d/p.html"), "../../x/./y/..")
@example(parse("http://h/d/p.html"), "?")
@example(parse("http://h/d/p.html?a"), "#x")
@example(parse("http://h/d/p.html?a"), "")
def test_fast_join_is_the_strict_join(base: URL, ref: str) -> None:
    _same(base, ref)


@pytest.mark.parametrize("ref", ["p2.html", "../d2/", "/img/a.png", "?q=1", "#top", "a/./b/../c", "", "x?y?z"])
def test_common_forms_take_the_fast_path_and_agree(ref: str) -> None:
    base = parse("http://127.0.0.1:8001/d/p.html?s")
    r = Resolver(base)
    assert r._origin == "http://127.0.0.1:8001"  # the fast path is on for this base
    _same(base, ref)

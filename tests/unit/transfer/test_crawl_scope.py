"""The crawl's fast scope (transfer.crawl.FastScope): for every entry, seed and listing it
answers as the walk's ScopeRules do (in scope or not, the dedup key, the host queue), with
or without its fast path (fails if the fast path admits a link back up, a link above the
seed's directory, a non-canonical URL's key...)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anyurl.response import Entry
from anyurl.transfer.crawl import FastScope
from anyurl.transfer.walk import scope_rules
from anyurl.urls import parse

SEEDS = ["http://127.0.0.1:8001/", "http://h.test/docs/guide/", "https://h.test:8443/a/p.html?x=1",
         "ftp://h.test/pub/", "http://u@h.test/x/", "gopher://h.test/1/g"]
ORIGINS = ["http://127.0.0.1:8001/", "http://h.test/", "https://h.test:8443/", "http://h.test:80/",
           "HTTP://H.test/", "https://h.test/", "http://127.0.0.1:8002/", "ftp://h.test/", "file:///"]
SEGS = st.sampled_from(["", "docs", "guide", "a", "p.html", "x y", "%41", "é", "a:b", "..", ".", "img", "pub",
                        "g", "%zz", "~u"])
LISTED = ["http://127.0.0.1:8001/", "http://127.0.0.1:8001/d0/p1.html", "http://h.test/docs/guide/i.html",
          "http://h.test/docs/", "https://h.test:8443/a/p.html?x=1", "https://h.test:8443/a/b/c.html",
          "ftp://h.test/pub/", "http://h.test/docs/guide/x?q", "file:///tmp/"]


@st.composite
def entries(draw: st.DrawFn) -> Entry:
    url = draw(st.sampled_from(ORIGINS)) + "/".join(draw(st.lists(SEGS, max_size=4)))
    if draw(st.booleans()):
        url += "?" + draw(st.sampled_from(["", "q=1", "a/b", "x y"]))
    kind = draw(st.sampled_from(["page", "file", "directory", "symlink", "info"]))
    meta = {"requisite": "img"} if draw(st.booleans()) else {}
    key = draw(st.sampled_from([None, "same", "other"]))
    return Entry(name="n", url=url, kind=kind, meta=meta, rel=draw(st.sampled_from([None, None, "self", "parent"])),
                 key=url if key == "same" else "http://h.test/other" if key == "other" else None)


@settings(max_examples=600, deadline=None)
@given(entries(), st.sampled_from(LISTED), st.integers(0, len(SEEDS) - 1), st.booleans(), st.booleans(),
       st.booleans())
def test_fast_scope_answers_as_the_rules(entry: Entry, listed: str, seed: int, same_host: bool,
                                         cross_scheme: bool, under_seed: bool) -> None:
    seeds = [parse(s) for s in SEEDS]
    options = {"same_host": same_host, "cross_scheme": cross_scheme, "under_seed": under_seed}
    fast, rules = FastScope(seeds, **options), scope_rules(seeds, **options)
    where = parse(listed)
    assert fast.child(entry, where, seed, 3) == rules.child(entry, where, seed, 3)


@pytest.mark.parametrize("url, listed, admitted", [
    ("http://h.test/docs/guide/a.html", "http://h.test/docs/guide/i.html", True),
    ("http://h.test/docs/other.html", "http://h.test/docs/guide/i.html", False),   # above the seed
    ("http://h.test/docs/guide/", "http://h.test/docs/guide/sub/i.html", False),   # a link back up
    ("http://h.test/docs/guide/i.html?p=2", "http://h.test/docs/guide/i.html", True),
])
def test_fast_path_cases(url: str, listed: str, admitted: bool) -> None:
    seeds = [parse("http://h.test/docs/guide/")]
    fast = FastScope(seeds, under_seed=True)
    entry = Entry(name="n", url=url, kind="page")
    got = fast.child(entry, parse(listed), 0, 1)
    assert (got is not None) is admitted
    assert got == scope_rules(seeds, under_seed=True).child(entry, parse(listed), 0, 1)

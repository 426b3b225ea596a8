"""Issue 25 item 7: a gopher menu item whose selector climbs with ".." (``/map/..``, as
some holes link back up) is a parent (or self) link, never walked into."""

from __future__ import annotations

import pytest

from anyurl.protocols.gopher import MenuItem, relation
from anyurl.urls import GopherURL, parse


def menu(selector: str) -> GopherURL:
    u = parse(f"gopher://h.example:70/1{selector}")
    assert isinstance(u, GopherURL)
    return u


@pytest.mark.parametrize(("here", "selector", "want"), [
    ("/map", "/map/..", "parent"),            # the root, from /map
    ("", "/map/..", "self"),                  # the root menu itself
    ("/a/b", "/a/b/../..", "parent"),
    ("/a/b", "/a/b/./", "self"),
    ("/a/b", "/a/b/c/..", "self"),
    ("/a/b", "/a/b/c/../d", None),            # a child, reached oddly: walked
    ("/a", "/x/..", "parent"),
    ("/a", "/a/sub", None),
])
def test_dot_dot_selectors(here: str, selector: str, want: str | None) -> None:
    assert relation(MenuItem("1", "Back", selector, "h.example", 70), menu(here)) == want

"""Listing helpers the ecosystem adapters share (fsspec, Scrapy): which entries
link back up, what an entry's local file name is. Pure: no I/O, no optional imports."""

from __future__ import annotations

from ..errors import URLSyntaxError
from ..response import Entry
from ..urls import URL, leaf_name, parse, slash_free_name, tree_place

__all__ = ["entry_file_name", "file_name", "fit_name", "is_parent_link", "parse_or_value_error", "segments"]


def parse_or_value_error(url: str) -> URL:
    try:
        return parse(url)
    except URLSyntaxError as exc:
        raise ValueError(f"not a URL anyurl can read: {url!r}: {exc}") from None


segments = tree_place  # (origin, path segments): see anyurl.urls.tree_place


def is_parent_link(directory: str, entry: Entry) -> bool:
    """True for an entry the listing marks ``rel="parent"`` or ``"self"`` (gopher ``..``
    items, HTML links up), or whose URL is *directory* itself or one of its ancestors."""
    if entry.rel is not None:
        return True
    if entry.url is None:
        return False
    try:
        d_origin, d_segs = segments(parse(directory))
        e_origin, e_segs = segments(parse(entry.url))
    except URLSyntaxError:
        return False
    return d_origin == e_origin and len(e_segs) <= len(d_segs) and d_segs[: len(e_segs)] == e_segs


file_name = leaf_name  # a URL's local file name: see anyurl.urls.leaf_name


def entry_file_name(entry: Entry) -> str:
    """The local file name for an entry: its ``name`` (made safe), else its URL's."""
    return _safe(entry.name) if entry.name else file_name(entry.url or "")


_safe = slash_free_name


def fit_name(name: str, suffix: str = "", limit: int = 255) -> str:
    """*name* shortened (a short extension kept, whole characters only) so that it and
    *suffix* fit in *limit* bytes: the rule mirror's local names follow, for the names an
    adapter makes from remote ones ("name~2", part files)."""
    from .download import _fit

    return _fit(name, limit - len(suffix.encode("utf-8", "surrogateescape"))) + suffix

"""Listing helpers the ecosystem adapters share (fsspec, Scrapy): which entries
link back up, what an entry's local file name is. Pure: no I/O, no optional imports."""

from __future__ import annotations

import os
from urllib.parse import unquote

from ..errors import URLSyntaxError
from ..response import Entry
from ..urls import FTPURL, HTTPURL, NNTPURL, URL, WAISURL, FileURL, GopherURL, NewsURL, ProsperoURL, parse

__all__ = ["entry_file_name", "file_name", "is_parent_link", "parse_or_value_error", "segments"]


def parse_or_value_error(url: str) -> URL:
    try:
        return parse(url)
    except URLSyntaxError as exc:
        raise ValueError(f"not a URL anyurl can read: {url!r}: {exc}") from None


def segments(u: URL) -> tuple[str, tuple[str, ...]]:
    """(origin, path segments) of a URL, decoded: the shape parent/ancestor tests compare."""
    if isinstance(u, GopherURL):
        return f"gopher://{u.host}:{u.port}", tuple(s for s in u.selector.split("/") if s)
    if isinstance(u, FTPURL):
        return f"{u.scheme}://{u.user}@{u.host}:{u.port}", tuple(s for s in (*u.cwd, u.name) if s)
    if isinstance(u, FileURL):
        return f"file://{u.host}", tuple(s for s in u.path.split("/") if s)
    if isinstance(u, HTTPURL):
        return f"{u.scheme}://{u.host}:{u.port}", tuple(unquote(s) for s in u.path.split("/") if s)
    if isinstance(u, NNTPURL):
        art = () if u.article is None else (str(u.article),)
        return f"{u.scheme}://{u.host}:{u.port}", (u.group, *art) if u.group else ()
    if isinstance(u, NewsURL):
        return "news:", ((u.group,) if u.group else (f"<{u.message_id}>",))
    if isinstance(u, ProsperoURL):
        return f"prospero://{u.host}:{u.port}", tuple(s for s in u.hsoname.split("/") if s)
    if isinstance(u, WAISURL):
        return f"wais://{u.host}:{u.port}", tuple(s for s in (u.database, u.search, u.wpath) if s)
    return u.scheme + ":", (str(u),)


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


def file_name(entry_url: str, fallback: str = "") -> str:
    """The local file name for a URL: its last path segment, decoded
    (a gopher selector's, an article's number or message-id)."""
    try:
        _origin, segs = segments(parse(entry_url))
    except URLSyntaxError:
        segs = ()
    return _safe(segs[-1] if segs else (fallback.strip() or "index"))


def entry_file_name(entry: Entry) -> str:
    """The local file name for an entry: its ``name`` (made safe), else its URL's."""
    return _safe(entry.name) if entry.name else file_name(entry.url or "")


def _safe(name: str) -> str:
    name = name.replace("/", "_").replace("\x00", "_").replace(os.sep, "_")
    return "_" + name if name in (".", "..") else name

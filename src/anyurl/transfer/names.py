"""Local names, all in one place, and the listing helpers the ecosystem adapters share
(fsspec, Scrapy). Pure: no I/O, no optional imports.

Three policies, each for its use (docs/internals.md, "Names"): :func:`safe_name` (and
:func:`name_for_url`) for the one file ``get -O`` writes, :func:`local_name` for each
file of a mirror, :func:`file_name`/:func:`entry_file_name` (``urls.slash_free_name``)
for an entry's name in a listing and the ``filename`` fsspec reports."""

from __future__ import annotations

import unicodedata

from ..errors import URLSyntaxError
from ..response import Entry
from ..urls import URL, leaf_name, parse, slash_free_name, tree_place

__all__ = ["MAX_NAME_BYTES", "PART_SUFFIX", "WEB_INDEX", "entry_file_name", "file_name", "fit_name", "is_parent_link",
           "local_name", "name_for_url", "parse_or_value_error", "safe_name", "segments", "web_names"]

#: the suffix of a download's part file (no local name made here ends in it)
PART_SUFFIX = ".anyurl-part"
MAX_NAME_BYTES = 255  # the usual file name limit (ext4, xfs, tmpfs)


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
    return _fit(name, limit - len(suffix.encode("utf-8", "surrogateescape"))) + suffix


def safe_name(name: str, fallback: str = "index") -> str:
    """Make *name* (from a URL or a server's listing) safe as a local file name.

    The result never contains "/", "\\", NUL or other control characters, never
    starts with "." (no "..", no hidden files), is never empty and fits in 255
    bytes. An unusable name gives *fallback* (itself made safe, else "index").
    """
    if (name.isascii() and name.isprintable() and "/" not in name and "\\" not in name
            and name[:1] not in (".", " ", "") and name[-1:] != " " and len(name) <= MAX_NAME_BYTES
            and not name.endswith(PART_SUFFIX)):
        return name  # the usual name: nothing to clean (the loop below costs ~1 us a character)
    return _clean_name(name, fallback)


def _clean_name(name: str, fallback: str) -> str:
    """:func:`safe_name` character by character (what its fast path must agree with)."""
    chars = []
    for ch in name:
        if ch in "/\\" or unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp"):
            chars.append("_")
        else:
            chars.append(ch)
    cleaned = "".join(chars).strip()
    # leading dots would make "..", "." or a hidden file (".bashrc", ".ssh")
    cleaned = cleaned.lstrip(".").strip()
    if cleaned.endswith(PART_SUFFIX):  # never collide with our own temporary files
        cleaned = cleaned[: -len(PART_SUFFIX)] + "_" + PART_SUFFIX[1:]
    cleaned = _fit(cleaned, MAX_NAME_BYTES)
    if not cleaned:
        return safe_name(fallback, "index") if fallback and fallback != name else "index"
    return cleaned


def _fit(name: str, limit: int) -> str:
    """Shorten *name* to *limit* UTF-8 bytes, keeping a short extension."""
    if len(name.encode("utf-8", "surrogateescape")) <= limit:
        return name
    stem, dot, ext = name.rpartition(".")
    if not dot or len(ext) > 16 or not stem:
        stem, ext = name, ""
    tail = ("." + ext) if ext else ""
    budget = limit - len(tail.encode("utf-8", "surrogateescape"))
    out = []
    used = 0
    for ch in stem:
        n = len(ch.encode("utf-8", "surrogateescape"))
        if used + n > budget:
            break
        out.append(ch)
        used += n
    return "".join(out) + tail


def _last_segment(path: str) -> str:
    return path.rstrip("/").rpartition("/")[2] if path.strip("/") else ""


def _unquote(raw: str) -> str:
    import urllib.parse  # (here: a plain get needs it only for a name with %XX, and its import costs start-up)

    return urllib.parse.unquote(raw, errors="surrogateescape")


def name_for_url(url: URL | str) -> str:
    """The local file name ``anyurl get -O`` uses for *url*: its last path component, made safe.

    Directory-like URLs (path ending in "/") and URLs without a path fall back to
    "index"; the result is always a safe name (see :func:`safe_name`).
    """
    if isinstance(url, str):
        from ..urls import parse

        url = parse(url)
    raw = ""
    if url.scheme in ("http", "https"):  # the common case first (each hasattr below that fails costs)
        path = str(getattr(url, "path", "") or "")
        raw = "" if path.endswith("/") else _last_segment(path)
        if "%" in raw:
            raw = _unquote(raw)
    elif hasattr(url, "cwd") and hasattr(url, "name"):  # ftp
        raw = getattr(url, "name", "") or ""
    elif hasattr(url, "selector"):  # gopher: the selector is opaque, its tail is a fair guess
        raw = _last_segment(str(getattr(url, "selector", "") or ""))
    elif hasattr(url, "article") and hasattr(url, "group"):  # nntp
        article = getattr(url, "article", None)
        group = str(getattr(url, "group", "") or "")
        raw = f"{group}.{article}" if article is not None else group
    elif hasattr(url, "message_id") or hasattr(url, "group"):  # news
        raw = str(getattr(url, "message_id", None) or getattr(url, "group", None) or "")
        raw = raw.strip("<>")
    elif hasattr(url, "wpath"):  # wais
        raw = str(getattr(url, "wpath", None) or getattr(url, "database", "") or "")
    elif hasattr(url, "hsoname"):  # prospero
        raw = _last_segment(str(getattr(url, "hsoname", "") or ""))
    elif hasattr(url, "path"):  # http, file
        path = str(getattr(url, "path", "") or "")
        raw = "" if path.endswith("/") else _last_segment(path)
        # only an HTTP path is kept encoded; every other field above is decoded by
        # the parser already, and decoding it again would turn "a%2541" into "aA"
        if url.scheme in ("http", "https") and "%" in raw:
            raw = _unquote(raw)
    return safe_name(raw, "index")


#: the local name of a web directory's own page ("/docs/" -> docs/index.html), as wget names it,
#: so that "/docs/" and a link to "/docs/index.html" are one file
WEB_INDEX = "index.html"


def web_names(path: str) -> list[str]:
    """The local names of a web URL's path segments (encoded, below the mirror's start), a
    directory's page named :data:`WEB_INDEX`."""
    from ..urls import percent_decode

    names = [local_name(percent_decode(seg)) for seg in path.split("/")]
    if not path or path.endswith("/"):  # the directory's own page
        names[-1] = WEB_INDEX
    return names


# names the remote side may use that mean something else here
_RESERVED = {"": "%", ".": "%2E", "..": "%2E%2E"}


def local_name(name: str) -> str:
    """The local file name for a remote *name* (already decoded once; not decoded again).

    Keeps the name as it is (dot files, spaces, %, #, ;, unicode) except what a
    local path cannot hold or would read differently: "/" -> ``%2F``, NUL and
    other control characters -> ``%XX``, "." / ".." -> ``%2E`` / ``%2E%2E``,
    our own part-file suffix, and names over 255 bytes (shortened).
    """
    if name in _RESERVED:
        return _RESERVED[name]
    if name.isprintable() and "/" not in name:  # no control character (Cc is never printable)
        return _fit(name + "_" if name.endswith(PART_SUFFIX) else name, 255)
    out = []
    for ch in name:
        if ch == "/" or unicodedata.category(ch) == "Cc":
            out.append("".join(f"%{b:02X}" for b in ch.encode("utf-8", "surrogateescape")))
        else:
            out.append(ch)
    text = "".join(out)
    if text.endswith(PART_SUFFIX):
        text += "_"
    return _fit(text, 255)

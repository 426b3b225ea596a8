"""Media types of HTTP replies, without I/O: the Content-Type to believe, and HTML sniffing.

:func:`content_type_of` reads a Content-Type value as browsers do (the Fetch
standard's "extract a MIME type"): a server that sends two Content-Type fields
gives one value joined with ", " (``application/json, text/x-zoo``); each part
is parsed and the **last valid** one wins (``*/*`` and parts that are not
``type/subtype`` tokens are skipped), keeping an earlier part's charset when
the winner is the same type without one.

:func:`looks_like_html` is the HTML half of the WHATWG MIME sniffing rules for
a reply with no usable type (BusyBox httpd's index.cgi pages): after leading
white space, one of the HTML tags the standard lists, case-insensitive, then a
space or ">".
"""

from __future__ import annotations

__all__ = ["content_type_of", "looks_like_html", "parse_content_type", "split_header_list"]

# RFC 9110 token characters
_TOKEN = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
# the WHATWG "rules for identifying an unknown MIME type": HTML patterns (each then " " or ">")
_HTML_TAGS = (b"<!doctype html", b"<html", b"<head", b"<script", b"<iframe", b"<h1", b"<div", b"<font",
              b"<table", b"<a", b"<style", b"<title", b"<b", b"<body", b"<br", b"<p", b"<!--")
_WHITE = b"\t\n\x0c\r "
#: bytes of the start of a body the sniffer looks at (the standard's resource header)
SNIFF_BYTES = 1445


def split_header_list(value: str) -> list[str]:
    """The parts of a comma-joined header value, commas inside double quotes kept."""
    parts: list[str] = []
    start = 0
    quoted = False
    i = 0
    n = len(value)
    while i < n:
        c = value[i]
        if c == '"':
            quoted = not quoted
        elif c == "\\" and quoted:
            i += 1
        elif c == "," and not quoted:
            parts.append(value[start:i])
            start = i + 1
        i += 1
    parts.append(value[start:])
    return [p.strip() for p in parts]


def _parse(part: str) -> tuple[str, str | None] | None:
    """(essence, charset) of one media type, or None when it is no ``type/subtype``."""
    main, _, params = part.partition(";")
    kind, slash, sub = main.strip().partition("/")
    if not slash or not kind or not sub or not _TOKEN.issuperset(kind) or not _TOKEN.issuperset(sub):
        return None
    charset = None
    for p in params.split(";"):
        k, eq, v = p.partition("=")
        if eq and k.strip().lower() == "charset":
            v = v.strip()
            if len(v) >= 2 and v[0] == v[-1] == '"':
                v = v[1:-1]
            charset = v or None
    return f"{kind}/{sub}".lower(), charset


def content_type_of(value: str | None) -> tuple[str, str | None] | None:
    """(type, charset) to believe from a Content-Type value (repeated fields joined with
    ", "), or None when it names no valid type (absent, empty, garbage, only ``*/*``)."""
    if not value:
        return None
    if "," not in value:  # the usual case: one part
        found = _parse(value)
        return None if found is None or found[0] == "*/*" else found
    essence: str | None = None
    charset: str | None = None
    for part in split_header_list(value):
        found = _parse(part)
        if found is None or found[0] == "*/*":
            continue
        if found[0] != essence:
            essence, charset = found
        elif found[1] is not None:
            charset = found[1]
    return None if essence is None else (essence, charset)


def looks_like_html(data: bytes) -> bool:
    """True when the first bytes of a body with no usable type are HTML (WHATWG sniffing)."""
    head = data[:SNIFF_BYTES].lstrip(_WHITE).lower()
    for tag in _HTML_TAGS:
        if head.startswith(tag) and head[len(tag):len(tag) + 1] in (b" ", b">"):
            return True
    return False


_types_seen: dict[str, tuple[str, str | None]] = {}  # a server sends the same few values


def parse_content_type(value: str | None) -> tuple[str, str | None]:
    """(type, charset) of a Content-Type value (:func:`content_type_of`, answers for short values
    kept); "" when absent or not a valid type (the body may then be sniffed). Every HTTP
    version's response reads its Content-Type here."""
    if value is None:
        return "", None
    seen = _types_seen.get(value)
    if seen is not None:
        return seen
    # two fields arrive joined ("application/json, text/x-zoo"): the last valid one, as browsers
    seen = content_type_of(value) or ("", None)
    if len(value) <= 128:  # bounded: 256 short values (a hostile server may send a new one each time)
        if len(_types_seen) >= 256:
            _types_seen.clear()
        _types_seen[value] = seen
    return seen

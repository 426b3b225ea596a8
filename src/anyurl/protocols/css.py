"""The URLs a style sheet loads, with no I/O: ``url(...)`` and ``@import`` (wget -p's CSS rules).

:class:`CSSRefs` takes CSS text in pieces (a linked style sheet as it streams, a
``<style>`` element, a ``style=`` attribute) and hands back ``(reference, kind)``
pairs, kind "@import" (a style sheet: its own references count too) or "url()"
(an image, a font...). Comments are skipped; a reference cut between two pieces
is kept for the next one, at most :data:`MAX_TOKEN` characters of it.
"""

from __future__ import annotations

import re

__all__ = ["MAX_TOKEN", "CSSRefs", "css_refs"]

#: characters of one unfinished token (a comment, a ``url(``, an ``@import``) held between pieces
MAX_TOKEN = 64 * 1024

_START = re.compile(r"/\*|url\(|@import", re.I)
_URL = re.compile(r"""\s*(?:"([^"\n]*)"|'([^'\n]*)'|([^"'()\s]*))\s*\)""")
_IMPORT = re.compile(r"""\s*(?:"([^"\n]*)"|'([^'\n]*)')""")
_IMPORT_URL = re.compile(r"\s*url\(", re.I)
_KEEP = 8  # "@import" is 7 characters: a start cut at the end of a piece


def _unfinished(rest: str, kind: str) -> bool:
    """Could the reference after a ``url(`` or ``@import`` still end in the next piece?"""
    if kind == "url()" or _IMPORT_URL.match(rest):
        return ")" not in rest
    head = rest.lstrip()
    if head[:1] in ("'", '"'):
        return head.find(head[0], 1) < 0 and "\n" not in head
    return "url(".startswith(head.lower())


class CSSRefs:
    """Incremental scanner of one style sheet's references (see the module docstring)."""

    def __init__(self) -> None:
        self._buf = ""

    def feed(self, text: str) -> list[tuple[str, str]]:
        """The references completed by *text*."""
        self._buf += text
        return self._scan(False)

    def close(self) -> list[tuple[str, str]]:
        """The end of the sheet: the last references."""
        return self._scan(True)

    def _scan(self, final: bool) -> list[tuple[str, str]]:
        buf, pos, out = self._buf, 0, []
        while True:
            m = _START.search(buf, pos)
            if m is None:
                pos = max(pos, len(buf) - _KEEP)
                break
            token = m.group().lower()
            if token == "/*":
                end = buf.find("*/", m.end())
                if end < 0:
                    pos = m.start()  # an unfinished comment: wait for its end
                    break
                pos = end + 2
                continue
            kind, at = ("@import", m.end()) if token == "@import" else ("url()", m.end())
            if kind == "@import":
                via_url = _IMPORT_URL.match(buf, at)
                found = _URL.match(buf, via_url.end()) if via_url else _IMPORT.match(buf, at)
            else:
                found = _URL.match(buf, at)
            if found is None:
                unfinished = _unfinished(buf[at:], kind)
                if unfinished and not final:
                    pos = m.start()  # the reference may go on in the next piece
                    break
                pos = at
                continue
            ref = next(g for g in found.groups() if g is not None)
            pos = found.end()
            if ref:
                out.append((ref, kind))
        rest = "" if final else buf[pos:]
        self._buf = rest if len(rest) <= MAX_TOKEN else rest[-_KEEP:]
        return out


def css_refs(text: str) -> list[tuple[str, str]]:
    """Every reference of a whole style sheet or ``style=`` attribute."""
    scanner = CSSRefs()
    return scanner.feed(text) + scanner.close()

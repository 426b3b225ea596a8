"""HTML pages as listings, with no I/O: the links of a page, the rows of an autoindex.

:class:`PageLinks` takes a page's bytes in pieces as they arrive (``feed``)
and hands back :class:`~anyurl.response.Entry` values as soon as each link is
complete; ``close`` returns the rest. It scans the markup with compiled regexes
(tolerant of broken markup as browsers are, incremental): tags are found whole,
but only the attributes and text that can hold a link are looked at; comments,
declarations and the raw text of ``<script>``/``<style>`` are skipped (a style's
text goes to the CSS scanner). ``reference=True`` parses with the standard
library's :class:`html.parser.HTMLParser` instead (about 3x slower; the tests
compare the two). It keeps every buffer bounded: bytes parsed (``max_bytes``), links
(``max_entries``), the memory the links' entries take, estimated as :data:`ENTRY_COST`
bytes each plus their characters (``max_entries_bytes``), and the unfinished markup the parser holds back (a tag,
comment or declaration longer than ``max_pending`` is refused; the text of an
endless ``<script>``/``<style>`` is dropped as it comes).

What becomes an entry:

* ``<a href>``, ``<area href>``, ``<frame src>`` and ``<iframe src>``, resolved
  with :meth:`anyurl.urls.URL.join` against the first ``<base href>`` (links
  before it: against the page URL). An href is first cleaned as browsers do
  (outer white space trimmed, TAB/CR/LF removed, spaces and other characters a
  URL may not hold %-encoded, a "\\\\" in an http(s) URL read as "/");
* with ``requisites=True``, also the page's requisites, what a browser loads to show
  it (wget -p): ``<img src srcset lowsrc>``, ``<source src srcset>``, ``<script src>``,
  ``<link href>`` (and ``imagesrcset``) with rel stylesheet/icon/apple-touch-icon/
  mask-icon/preload/modulepreload/manifest, ``<video src poster>``, ``<audio src>``,
  ``<track src>``, ``<embed src>``, ``<object data>``, ``<input type=image src>``, SVG
  ``<image>``/``<use>`` ``href``/``xlink:href``, ``background=`` of body and table cells,
  and the CSS ``url()``/``@import`` of ``<style>`` and ``style=``: kind "page" with
  ``meta["requisite"]`` the tag ("url()" or "@import" for CSS), ``meta["stylesheet"]``
  True for a style sheet (not in an autoindex page). With ``stylesheet=True`` the body
  is a style sheet (text/css) and its ``url()``/``@import`` are the entries;
* only links anyurl can retrieve (http, https, ftp, ftps, gopher, news, nntp,
  nntps, wais, prospero); ``file:`` only from a ``file:`` page, so a remote
  page never leads to local files. ``mailto:``, ``javascript:``, ``data:``...
  and hrefs that are not URLs are dropped (``skipped`` counts them);
* the fragment is not part of the entry's URL; a link to the page itself has
  ``rel="self"``, one to an ancestor (``../``, "Parent Directory", "/") has
  ``rel="parent"``; the same URL linked twice in a row is one entry.

Entry fields: ``name`` the last path segment of the URL, decoded (a
directory's name without its "/"; "/" for the root of the page's own server,
the host for another server's root); ``title`` the link text; ``kind`` "page"
(unknown until fetched) for an ordinary page. A page whose ``<title>`` is
"Index of /..." or "Directory listing for /..." is an *autoindex* (nginx,
Apache, lighttpd, python -m http.server): its links are "directory" (href
ending in "/") or "file", sort links (``?C=N;O=D``) are dropped, and the text
after a link (nginx ``DD-Mon-YYYY HH:MM  size``, Apache's pre or table
columns "Last modified" and "Size") gives ``modified`` (UTC; minutes) and
``size``. A size is put in ``size`` only when the page shows exact bytes; an
abbreviated one ("4.0K", "12M") goes to ``meta["size_approx"]`` (bytes,
rounded as shown) with ``meta["size_text"]``, and ``size`` stays None.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable
from datetime import UTC, datetime
from html import unescape
from html.parser import HTMLParser
from typing import Any
from urllib.parse import unquote

from ..errors import AnyURLError, ProtocolError, TransferError
from ..response import HTML_TYPES, Entry, is_html
from ..urls import FTPURL, HTTPURL, URL, FileURL, Resolver, parse
from .css import CSSRefs

__all__ = ["ENTRY_COST", "FOLLOWABLE_SCHEMES", "HTML_TYPES", "MAX_ENTRIES_BYTES", "MAX_PAGE_BYTES", "MAX_PENDING", "PageLinks", "clean_href", "is_html",
           "page_links", "srcset_urls"]

# Schemes a link may lead to (file: only from a file: page).
FOLLOWABLE_SCHEMES: frozenset[str] = frozenset({
    "http", "https", "ftp", "ftps", "gopher", "news", "nntp", "nntps", "wais", "prospero"})
# Bytes of one page parsed for links when Limits.max_size does not say.
MAX_PAGE_BYTES = 256 * 1024 * 1024
# Memory the entries of one page may take (Limits.max_entries_bytes), estimated: ENTRY_COST
# bytes an entry (an Entry with its __dict__, its meta dict, three str headers: ~560 with
# tracemalloc) plus the characters of its URL, name and link text.
MAX_ENTRIES_BYTES = 128 * 1024 * 1024
ENTRY_COST = 560
# Unfinished markup the parser may hold back (one tag, comment or declaration).
MAX_PENDING = 1024 * 1024
_MAX_TEXT = 1024       # characters of link text kept
_MAX_TRAILER = 1024    # characters after an autoindex link kept (its date and size columns)
_MAX_TITLE = 256
_SNIFF = 1024          # bytes looked at for <meta charset> when the protocol gives none

_AUTOINDEX_TITLE = re.compile(r"\s*(index of|directory listing for)\s+/", re.I)
_MONTHS = {m: i for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)}
_TIME = r"(?P<H>\d{1,2}):(?P<M>\d{2})(?::(?P<S>\d{2}))?"
# nginx / Apache 2.2 "23-Nov-2026 12:14", Apache 2.4 "2026-11-23 12:14", lighttpd "2026-Nov-23 12:14:05"
_DATE = re.compile(
    r"(?:(?P<d1>\d{1,2})-(?P<b1>[A-Za-z]{3})-(?P<y1>\d{4})"
    r"|(?P<y2>\d{4})-(?P<m2>\d{2})-(?P<d2>\d{2})"
    r"|(?P<y3>\d{4})-(?P<b3>[A-Za-z]{3})-(?P<d3>\d{2}))[ T]+" + _TIME)
_SIZE = re.compile(r"\s*(?P<num>\d+(?:\.\d+)?)\s?(?P<unit>[KMGTPkmgtp]?)(?:i?[Bb])?(?=\s|$)|\s*-(?=\s|$)")
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}
_META_CHARSET = re.compile(rb"""<meta[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9_.:\-]+)""", re.I)
_CSS_CHARSET = re.compile(rb'@charset "([A-Za-z0-9_.:\-]+)";')
_HREF_STRIP = " \t\n\r\f\x00\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0e\x0f" \
              "\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f"
_HREF_BAD = re.compile(r"[\x00-\x20\x7f\"<>`]|%(?![0-9A-Fa-f]{2})")
_SPACES = re.compile(r"\s+")
_LINK_ATTR = {"a": "href", "area": "href", "frame": "src", "iframe": "src"}
# page requisites (what a browser loads to show the page, wget -p): offered with requisites=True.
# tag -> attributes holding one URL; srcset-like attributes hold a list (_SRCSET)
_REQUISITE_ATTRS: dict[str, tuple[str, ...]] = {
    "img": ("src", "srcset", "lowsrc"), "source": ("src", "srcset"), "script": ("src",),
    "input": ("src",), "video": ("src", "poster"), "audio": ("src",), "track": ("src",),
    "embed": ("src",), "object": ("data",), "image": ("href", "xlink:href"), "use": ("href", "xlink:href"),
    "body": ("background",), "table": ("background",), "tr": ("background",), "td": ("background",),
    "th": ("background",), "link": ("href", "imagesrcset")}
_SRCSET = frozenset({"srcset", "imagesrcset"})
_REQUISITE_RELS = frozenset({"stylesheet", "icon", "shortcut", "apple-touch-icon", "apple-touch-icon-precomposed",
                             "mask-icon", "fluid-icon", "preload", "modulepreload", "manifest"})
# tags that end an autoindex row (its date and size come before them)
_ROW_END = frozenset({"tr", "table", "pre", "hr", "li", "ul", "br", "body", "html", "div", "p"})


def clean_href(href: str, http: bool) -> str:
    """An href as a URL reference: white space trimmed and removed as browsers do, and
    what a URL may not hold %-encoded (a lone "%" becomes "%25")."""
    ref = href.strip(_HREF_STRIP).replace("\t", "").replace("\n", "").replace("\r", "")
    if http:
        ref = ref.replace("\\", "/")
    return _HREF_BAD.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), ref)


def srcset_urls(value: str) -> list[str]:
    """The URLs of a ``srcset`` ("a.png 1x, b.png 2x"): each candidate's first run of
    non-space characters (trailing commas cut), its descriptors up to the next comma skipped."""
    out: list[str] = []
    i, n = 0, len(value)
    while i < n:
        while i < n and (value[i].isspace() or value[i] == ","):
            i += 1
        start = i
        while i < n and not value[i].isspace():
            i += 1
        url = value[start:i]
        if url.endswith(","):
            url = url.rstrip(",")
        else:
            depth = 0  # descriptors: skip to the comma that ends them, not one inside "(...)"
            while i < n and (value[i] != "," or depth):
                depth += {"(": 1, ")": -1}.get(value[i], 0)
                i += 1
        if url:
            out.append(url)
    return out


def _parse_date(text: str) -> tuple[datetime | None, int, int]:
    """(the first date in *text*, where it starts, where it ends)."""
    m = _DATE.search(text)
    if m is None:
        return None, 0, 0
    g = m.groupdict()
    try:
        if g["y1"]:
            year, month, day = int(g["y1"]), _MONTHS.get(g["b1"].lower(), 0), int(g["d1"])
        elif g["y2"]:
            year, month, day = int(g["y2"]), int(g["m2"]), int(g["d2"])
        else:
            year, month, day = int(g["y3"]), _MONTHS.get(g["b3"].lower(), 0), int(g["d3"])
        when = datetime(year, month, day, int(g["H"]), int(g["M"]), int(g["S"] or 0), tzinfo=UTC)
    except ValueError:  # "31-Feb", a month name we do not know
        return None, m.start(), m.end()
    return when, m.start(), m.end()


def _parse_size(text: str) -> tuple[int | None, dict[str, Any]]:
    """Exact bytes (a plain number) or, for "4.0K"-style sizes, None and the approximation in meta."""
    m = _SIZE.match(text)
    if m is None or m.group("num") is None:
        return None, {}
    num, unit = m.group("num"), m.group("unit").lower()
    if not unit and "." not in num:
        return int(num), {}
    return None, {"size_approx": int(float(num) * _UNITS[unit]), "size_text": m.group().strip()}


def _last_name(u: URL) -> str:
    """The last path segment of *u*, decoded (a directory's without its "/")."""
    if isinstance(u, FTPURL):
        segs = [s for s in (*u.cwd, u.name) if s]
        return segs[-1] if segs else ""
    path = getattr(u, "path", None)
    if isinstance(path, str):
        segs = [s for s in path.split("/") if s]
        return unquote(segs[-1], errors="replace") if segs else ""
    text = str(u)
    return unquote(text.rstrip("/").rsplit("/", 1)[-1], errors="replace")


def _name(u: URL) -> str:
    return _last_name(u) or str(getattr(u, "host", "") or u)


def _place(u: URL) -> tuple[tuple[str, str, int], tuple[str, ...], str | None] | None:
    """(origin, path segments, query) of a hierarchical URL, for the self/parent tests."""
    if isinstance(u, HTTPURL):
        return (u.scheme, u.host, u.port), tuple(s for s in u.path.split("/") if s), u.search
    if isinstance(u, FTPURL):
        return (u.scheme, u.host, u.port), tuple(s for s in (*u.cwd, u.name) if s), None
    if isinstance(u, FileURL):
        return (u.scheme, u.host, 0), tuple(s for s in u.path.split("/") if s), None
    return None


class _Events:
    """What the tags of a page mean for its links (both tokenizers end here): start and end
    tags with their attributes, and text. The owner turns them into entries."""

    def __init__(self, owner: PageLinks) -> None:
        self.owner = owner
        self.in_title = False
        self.in_style = False  # inside <style> with requisites asked: its text is CSS
        self.title: list[str] = []
        self.title_len = 0

    def start(self, tag: str, values: dict[str, str | None]) -> None:
        o = self.owner
        if tag == "base":
            href = values.get("href")
            if href is not None:
                o.set_base(href)
            return
        if tag == "title" and o.autoindex is None:
            self.in_title = True
            return
        if o.requisites and not o.autoindex:
            self.requisites(tag, values)
        attr = _LINK_ATTR.get(tag)
        if attr is not None:
            href = values.get(attr)
            if href is None:
                return
            o.start_link(href, values.get("rel"), tag)
            if tag != "a":  # no text: complete at once
                alt = values.get("alt") or values.get("title")
                if alt:
                    o.add_text(alt)
                o.end_link()
            return
        if tag in _ROW_END:
            o.end_row()
        elif tag in ("td", "th"):
            o.add_trailer(" ")

    def requisites(self, tag: str, values: dict[str, str | None]) -> None:
        """A tag's page requisites: its URL attributes, its ``style=`` and, for ``<style>``, its text."""
        o = self.owner
        names = _REQUISITE_ATTRS.get(tag)
        if names is not None and (tag != "input" or (values.get("type") or "").lower() == "image"):
            sheet = False
            if tag == "link":
                rels = set((values.get("rel") or "").lower().split())
                if not _REQUISITE_RELS & rels:
                    names = ()
                sheet = "stylesheet" in rels
            for name in names:
                value = values.get(name)
                if not value:
                    continue
                if name in _SRCSET:
                    for ref in srcset_urls(value):
                        o.requisite(ref, tag)
                elif not (tag == "use" and value.lstrip().startswith("#")):  # a symbol of this page
                    o.requisite(value, tag, stylesheet=sheet and name == "href")
        style = values.get("style")
        if style:
            o.css(style, final=True)
        if tag == "style":
            self.in_style = True

    def end(self, tag: str) -> None:
        o = self.owner
        if tag == "style" and self.in_style:
            self.in_style = False
            o.css("", final=True)
            return
        if tag == "title" and self.in_title:
            self.in_title = False
            o.decide("".join(self.title))
        elif tag == "a":
            o.end_link()
        elif tag in _ROW_END:
            o.end_row()
        elif tag == "head" and o.autoindex is None:
            o.decide("")

    def text(self, data: str) -> None:
        if self.in_style:
            self.owner.css(data)
            return
        if self.in_title:
            if self.title_len < _MAX_TITLE:
                self.title.append(data[:_MAX_TITLE])
                self.title_len += len(data)
            return
        self.owner.add_text(data)


class _Reference(HTMLParser):
    """The reference tokenizer: the standard library's html.parser (``PageLinks(reference=True)``),
    what the fast scanner is tested against."""

    def __init__(self, owner: PageLinks) -> None:
        super().__init__(convert_charrefs=True)
        self.events = _Events(owner)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.events.start(tag, dict(attrs))

    def handle_endtag(self, tag: str) -> None:
        self.events.end(tag)

    def handle_data(self, data: str) -> None:
        if self.cdata_elem is not None and not self.events.in_style:
            return  # a script's text (or a style's, requisites not asked) is no link's text
        self.events.text(data)

    def pending(self, limit: int) -> int:
        """Characters held back (an unfinished tag); past *limit*, the text of an endless
        ``<script>``/``<style>`` is dropped (it is of no use)."""
        if len(self.rawdata) > limit and getattr(self, "cdata_elem", None):
            self.rawdata = self.rawdata[-16:]
        return len(self.rawdata)


# The fast scanner's grammar (HTML's tokenizer, tolerant as browsers are). A start tag: its name,
# then attributes up to the first ">" outside a quoted value (a quote opens a value only after
# "="; written as normal* (special normal*)* so a failing match cannot backtrack without end).
_START_TAG = re.compile(r"""<([A-Za-z][^\s/>]*)([^>"'=]*(?:(?:=\s*"[^"]*"|=\s*'[^']*'|=(?!\s*["'])|["'])[^>"'=]*)*)>""")
_END_TAG = re.compile(r"</([A-Za-z][^\s/>]*)[^>]*>")
_ATTR = re.compile(r"""([^\s/>"'=][^\s/>=]*)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s>]*))?""")
_STYLE_ATTR = re.compile("style", re.I)
_RAW_END = {"script": re.compile(r"</script(?:[\s/][^>]*)?>", re.I), "style": re.compile(r"</style(?:[\s/][^>]*)?>", re.I)}
_COMMENT_END = re.compile(r"--!?>")
_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
# tags whose attributes matter whatever else is asked; with requisites, those of _REQUISITE_ATTRS
# and any tag with a style=
_LINK_TAGS = frozenset({"base", *_LINK_ATTR})
# tags that mean something with no attributes (a row's end, a cell, raw text, the title)
_BARE_TAGS = frozenset({*_ROW_END, "td", "th", "title", "head", "script", "style"})
_PARTIAL_REF = re.compile(r"&[^\s;&<]{0,32}\Z")  # a character reference cut at the end of a piece


def _attributes(region: str) -> tuple[dict[str, str | None], bool]:
    """The attributes of a start tag (names lower case, values unquoted and unescaped; the last
    of a name counts, as with html.parser), and whether the tag closes itself ("/>")."""
    values: dict[str, str | None] = {}
    end = 0
    for m in _ATTR.finditer(region):
        value = m.group(2)
        if value is not None:
            if value[:1] in ("'", '"'):
                value = value[1:-1]
            if "&" in value:
                value = unescape(value)
        values[m.group(1).lower()] = value
        end = m.end()
    return values, region[end:].strip() == "/"


class _Scanner:
    """The fast tokenizer: finds the tags with compiled regexes and looks only at the
    attributes and text that can hold a link (see _Events); comments, declarations and the
    raw text of ``<script>``/``<style>`` are skipped (a style's text goes to the CSS scanner).
    Unfinished markup at the end of a piece is held (``pending``) for the next one."""

    def __init__(self, owner: PageLinks) -> None:
        self.events = _Events(owner)
        self.owner = owner
        self.buf = ""
        self.raw: str | None = None  # inside <script> or <style>: its name

    def feed(self, text: str) -> None:
        self.buf = self.buf + text if self.buf else text
        self._scan(False)

    def close(self) -> None:
        self._scan(True)

    def pending(self, limit: int) -> int:
        """Characters held back (raw text is never held: see _raw)."""
        return len(self.buf)

    def _wants_text(self) -> bool:
        return self.events.in_title or self.owner.wants_text()

    def _text(self, data: str) -> None:
        self.events.text(unescape(data) if "&" in data else data)

    def _scan(self, final: bool) -> None:
        buf = self.buf
        n = len(buf)
        i = 0
        events = self.events
        while i < n:
            if self.raw is not None:
                i = self._raw(buf, i, final)
                if self.raw is not None:
                    break
                continue
            j = buf.find("<", i)
            if j < 0:  # text to the end of the piece
                if self._wants_text():
                    cut = None if final else _PARTIAL_REF.search(buf, max(i, n - 34))
                    stop = n if cut is None else cut.start()
                    if stop > i:
                        self._text(buf[i:stop])
                    i = stop
                else:
                    i = n
                break
            if j > i and self._wants_text():
                self._text(buf[i:j])
            i = j
            nxt = buf[j + 1:j + 2]
            if nxt in _LETTERS:
                m = _START_TAG.match(buf, j)
                if m is None:
                    if not final:
                        break  # its ">" (or a value's closing quote) is still to come
                    self._stray(j)
                    i = j + 1
                    continue
                i = m.end()
                self._start(m.group(1).lower(), m.group(2))
            elif nxt == "/":
                m = _END_TAG.match(buf, j)
                if m is not None:
                    events.end(m.group(1).lower())
                    i = m.end()
                    continue
                k = buf.find(">", j)
                if k < 0:
                    if not final:
                        break
                    i = n
                else:
                    i = k + 1  # "</>", "</ x>": nothing (a bogus comment)
            elif nxt == "!" or nxt == "?":
                if buf.startswith("<!--", j):
                    if buf.startswith("<!-->", j) or buf.startswith("<!--->", j):
                        i = j + (5 if buf[j + 4] == ">" else 6)
                        continue
                    m = _COMMENT_END.search(buf, j + 4)
                    if m is None:
                        if not final and (n - j < 4 or buf[j + 3] == "-"):
                            break
                        i = n
                        break
                    i = m.end()
                else:
                    k = buf.find(">", j)
                    if k < 0:
                        if not final:
                            break
                        i = n
                        break
                    i = k + 1  # <!DOCTYPE>, <![CDATA[...]>, <?xml ...?>
            elif not nxt and not final:
                break  # "<" at the end of the piece
            else:
                self._stray(j)
                i = j + 1
        self.buf = buf[i:] if i < n else ""

    def _stray(self, j: int) -> None:
        """A "<" that starts no markup: text."""
        if self._wants_text():
            self.events.text("<")

    def _start(self, tag: str, region: str) -> None:
        o = self.owner
        events = self.events
        selfclose = False
        if tag in _LINK_TAGS or (o.requisites and not o.autoindex and (
                tag in _REQUISITE_ATTRS or tag == "style" or _STYLE_ATTR.search(region))):
            values, selfclose = _attributes(region)
        elif tag in _BARE_TAGS:
            values = {}
            if region.endswith("/") or region.rstrip().endswith("/"):
                selfclose = _attributes(region)[1]
        else:
            return
        events.start(tag, values)
        if selfclose:  # "<a href=x/>" is a value "x/", "<a href='x'/>" closes itself
            events.end(tag)
        elif tag == "script" or tag == "style":
            self.raw = tag

    def _raw(self, buf: str, i: int, final: bool) -> int:
        """The raw text of <script>/<style> from *i*: to its end tag (the text of a style sheet to
        the CSS scanner), or what can be taken of it now; where the scan goes on."""
        tag = self.raw
        assert tag is not None
        m = _RAW_END[tag].search(buf, i)
        if m is None:
            # the text is done with, but what may start the end tag (held for the next piece)
            n = len(buf)
            lt = -1 if final else buf.rfind("<", max(i, n - 1024))
            keep = n if lt < 0 else lt
            if self.events.in_style and keep > i:
                self.events.text(buf[i:keep])
            return keep
        if self.events.in_style and m.start() > i:
            self.events.text(buf[i:m.start()])
        self.raw = None
        self.events.end(tag)
        return m.end()


class PageLinks:
    """Incremental link extraction from one HTML page (see the module docstring).

    ``feed(data)`` and ``close()`` return the entries completed so far.
    ``autoindex`` is True once the page showed it is a server's directory
    listing (False for an ordinary page, None while unknown). ``parsed`` counts
    the bytes fed, ``entries`` the entries handed out, ``skipped`` the links
    dropped (unsupported scheme, not a URL).
    """

    def __init__(self, url: str | URL, *, charset: str | None = None, max_bytes: int | None = MAX_PAGE_BYTES,
                 max_entries: int = 1_000_000, max_pending: int = MAX_PENDING, requisites: bool = False,
                 stylesheet: bool = False, max_entries_bytes: int | None = MAX_ENTRIES_BYTES,
                 reference: bool = False) -> None:
        self.page = parse(url) if isinstance(url, str) else url
        # also <img src>, <script src>, <link rel=stylesheet|icon href>, CSS url()...
        self.requisites = requisites or stylesheet
        self.stylesheet = stylesheet  # the body is a style sheet (text/css), not HTML
        self.page_text = str(self.page)
        self.base: URL = self.page
        self.base_text = self.page_text
        self._resolver = Resolver(self.page)
        self._http = self.page.scheme in ("http", "https")
        self.base_set = False
        self.charset = charset
        self.max_bytes = max_bytes
        self.max_entries = max_entries
        self.max_entries_bytes = max_entries_bytes
        self.entries_bytes = 0  # the entries' memory handed out so far, estimated (ENTRY_COST each + text)
        self.max_pending = max_pending
        self.autoindex: bool | None = False if stylesheet else None
        self._css: CSSRefs | None = None
        self.parsed = 0
        self.entries = 0
        self.skipped = 0
        self._decoder: codecs.IncrementalDecoder | None = None
        self._head = b""  # bytes held while looking for <meta charset>
        self._failed: AnyURLError | None = None
        self._out: list[Entry] = []
        self._link: tuple[str, str | None] | None = None  # (href, rel attribute) of the open <a>
        self._text: list[str] = []
        self._text_len = 0
        self._row: tuple[str, str | None, str] | None = None  # a finished autoindex link awaiting its columns
        self._trailer: list[str] = []
        self._trailer_len = 0
        self._last_url: str | None = None
        self._place = _place(self.page)
        self._parser: _Scanner | _Reference = _Reference(self) if reference else _Scanner(self)

    # -- feeding -----------------------------------------------------------------

    def feed(self, data: bytes) -> list[Entry]:
        """Parse the next piece of the page; the entries it completed."""
        if self._failed is not None:
            raise self._failed
        self.parsed += len(data)
        if self.max_bytes is not None and self.parsed > self.max_bytes:
            raise TransferError(f"HTML page larger than {self.max_bytes} bytes: not parsed for links "
                                f"past that (Limits.max_size)", url=self.page_text)
        if self._decoder is None:
            self._head += data
            if len(self._head) < _SNIFF:
                return []
            data, self._head = self._head, b""
            self._start_decoder(data)
        assert self._decoder is not None
        return self._guarded(self._feed_text, self._decoder.decode(data))

    def close(self) -> list[Entry]:
        """The end of the page: the last entries."""
        if self._failed is not None:
            raise self._failed
        if self._decoder is None:
            self._start_decoder(self._head)  # a page shorter than the <meta charset> sniff
        return self._guarded(self._finish, "")

    def _finish(self, _: str) -> None:
        assert self._decoder is not None
        data, self._head = self._head, b""
        self._feed_text(self._decoder.decode(data, True))
        if self.stylesheet:
            self.css("", final=True)
            return
        self._parser.close()
        self.end_link()
        self.end_row()

    def _guarded(self, step: Callable[[str], None], text: str) -> list[Entry]:
        """Run a parsing step; past a limit, the entries completed before it are still
        handed out, and the error comes with the next call."""
        try:
            step(text)
        except AnyURLError as exc:
            self._failed = exc
            if not self._out:
                raise
        return self._take()

    def _start_decoder(self, head: bytes) -> None:
        name = self.charset
        if head.startswith(codecs.BOM_UTF8):
            name = "utf-8-sig"
        elif not name and self.stylesheet:
            m = _CSS_CHARSET.match(head)
            name = m.group(1).decode("ascii") if m else "utf-8"
        elif not name:
            m = _META_CHARSET.search(head)
            name = m.group(1).decode("ascii") if m else "utf-8"
        try:
            factory = codecs.getincrementaldecoder(name)
        except LookupError:
            factory = codecs.getincrementaldecoder("utf-8")
        self._decoder = factory(errors="replace")

    def _feed_text(self, text: str) -> None:
        if not text:
            return
        if self.stylesheet:
            self.css(text)
            return
        p = self._parser
        p.feed(text)
        if p.pending(self.max_pending) > self.max_pending:
            raise ProtocolError(f"HTML page has a tag, comment or declaration longer than "
                                f"{self.max_pending} bytes: not parsed for links", url=self.page_text)

    def _take(self) -> list[Entry]:
        out, self._out = self._out, []
        return out

    # -- events from the parser ----------------------------------------------------

    def decide(self, title: str) -> None:
        if self.autoindex is None:
            self.autoindex = bool(_AUTOINDEX_TITLE.match(title))

    def set_base(self, href: str) -> None:
        if self.base_set:
            return  # the first <base href> counts
        self.base_set = True
        try:
            base_text, base = self._resolver.join(clean_href(href, self.page.scheme in ("http", "https")))
        except AnyURLError:
            return
        if base.scheme in FOLLOWABLE_SCHEMES or base.scheme == self.page.scheme:
            self.base = base
            self.base_text = base_text
            self._resolver = Resolver(base)
            self._http = base.scheme in ("http", "https")

    def start_link(self, href: str, rel: str | None, tag: str) -> None:
        self.end_link()
        self.end_row()
        if self.autoindex is None:
            self.autoindex = False  # links before any <title>: an ordinary page
        self._link = (href, rel)
        self._text, self._text_len = [], 0

    def wants_text(self) -> bool:
        """Whether text now would be used: a link's text, or an autoindex row's columns."""
        return self._link is not None or self._row is not None

    def add_text(self, data: str) -> None:
        if self._link is not None:
            if self._text_len < _MAX_TEXT:
                self._text.append(data[: _MAX_TEXT - self._text_len])
                self._text_len += len(data)
        elif self._row is not None:
            self.add_trailer(data)
            if "\n" in data:  # nginx / Apache <pre>: one row per line
                self.end_row()

    def add_trailer(self, data: str) -> None:
        if self._row is not None and self._trailer_len < _MAX_TRAILER:
            self._trailer.append(data[: _MAX_TRAILER - self._trailer_len])
            self._trailer_len += len(data)

    def end_link(self) -> None:
        if self._link is None:
            return
        (href, rel), self._link = self._link, None
        text = _SPACES.sub(" ", "".join(self._text)).strip()
        if self.autoindex:
            self._row = (href, rel, text)  # its date and size follow
            self._trailer, self._trailer_len = [], 0
        else:
            self._emit(href, rel, text, "")

    def end_row(self) -> None:
        if self._row is None:
            return
        (href, rel, text), self._row = self._row, None
        self._emit(href, rel, text, "".join(self._trailer))

    # -- entries -------------------------------------------------------------------

    def requisite(self, href: str, tag: str, stylesheet: bool = False) -> None:
        """A page requisite (an image, a stylesheet, a script): an entry of kind "page" with
        ``meta["requisite"]`` the tag (``"@import"``, ``"url()"`` for a CSS reference) and
        ``meta["stylesheet"]`` True for a style sheet (its own references are requisites
        too), never part of an autoindex listing."""
        if self.autoindex:
            return  # a listing's icons are not its entries
        self._emit(href, None, "", "", requisite=tag, stylesheet=stylesheet)

    def css(self, text: str, final: bool = False) -> None:
        """CSS text of the page (``<style>``, ``style=``) or of the style sheet itself."""
        if self._css is None:
            self._css = CSSRefs()
        refs = self._css.feed(text)
        if final:
            refs += self._css.close()
        for ref, kind in refs:
            self.requisite(ref, kind, stylesheet=kind == "@import")

    def _emit(self, href: str, html_rel: str | None, text: str, trailer: str, requisite: str | None = None,
              stylesheet: bool = False) -> None:
        ref = clean_href(href, self._http)
        if self.autoindex and ref.startswith("?"):
            return  # a sort control of the listing itself
        try:
            url, u = self._resolver.join(ref)
        except AnyURLError:
            self.skipped += 1
            return
        scheme = u.scheme
        if scheme not in FOLLOWABLE_SCHEMES and not (scheme == "file" and self.page.scheme == "file"):
            self.skipped += 1
            return
        if url == self._last_url:
            return  # an icon and a name linking to the same place
        self._last_url = url
        if self.entries >= self.max_entries:
            raise TransferError(f"HTML page has more than {self.max_entries} links (Limits.max_entries)",
                                url=self.page_text)
        meta: dict[str, Any] = {}
        if html_rel:
            meta["html_rel"] = html_rel
        if requisite is not None:
            meta["requisite"] = requisite
            if stylesheet:
                meta["stylesheet"] = True
        size: int | None = None
        modified: datetime | None = None
        if self.autoindex and requisite is None:
            kind = "directory" if ref.split("?", 1)[0].split("#", 1)[0].endswith("/") else "file"
            modified, start, end = _parse_date(trailer)
            if modified is not None:
                size, approx = _parse_size(trailer[end:])
                if size is None and not approx and start:  # BusyBox's index.cgi: the size column first
                    size, approx = _parse_size(trailer[:start].rstrip() + " ")
                meta.update(approx)
        else:
            kind = "page"
        rel = self._rel(u)
        # the root of the page's own server (a top autoindex's "../", a "home" link) has no
        # last segment: "/", not the host's name, which would read as an entry for a host
        name = _last_name(u) or ("/" if rel is not None and _place(u) is not None else _name(u))
        cost = ENTRY_COST + len(url) + len(name) + len(text)
        if self.max_entries_bytes is not None and self.entries_bytes + cost > self.max_entries_bytes:
            raise TransferError(f"HTML page's links take more than {self.max_entries_bytes} bytes of memory "
                                f"(Limits.max_entries_bytes; {self.entries} links kept)", url=self.page_text)
        self.entries_bytes += cost
        self.entries += 1
        self._out.append(Entry(name=name, url=url, kind=kind, size=size, modified=modified,
                               meta=meta, title=text or None, rel=rel))

    def _rel(self, u: URL) -> str | None:
        here, there = self._place, _place(u)
        if here is None or there is None or here[0] != there[0]:
            return "self" if str(u) == self.page_text else None
        if there[1] == here[1] and there[2] == here[2]:
            return "self"
        if there[2] is None and len(there[1]) < len(here[1]) and here[1][: len(there[1])] == there[1]:
            return "parent"
        return None


def page_links(content: bytes, url: str | URL, *, charset: str | None = None,
               max_entries: int = 1_000_000, max_entries_bytes: int | None = MAX_ENTRIES_BYTES
               ) -> tuple[list[Entry], PageLinks]:
    """Every link of a page already in memory, and the parser (``autoindex``, ``skipped``)."""
    links = PageLinks(url, charset=charset, max_bytes=None, max_entries=max_entries,
                      max_entries_bytes=max_entries_bytes)
    out: list[Entry] = []
    step = 256 * 1024
    for i in range(0, len(content), step):
        out.extend(links.feed(content[i:i + step]))
    out.extend(links.close())
    return out, links

"""Gopher (RFC 1436) and Gopher+ protocol logic, with no I/O.

What a gopher handler needs, as pure functions and small state machines:

- :func:`plan_request` turns a :class:`~anyurl.urls.GopherURL` into the exact
  request bytes (selector, TAB search, TAB Gopher+ string, CR LF; RFC 1738
  section 3.4) after refusing decoded TAB/CR/LF/NUL that would let a URL
  smuggle extra lines to the server;
- :func:`service_port_refusal` names the well-known ports of other protocols
  that a gopher URL must not be aimed at (RFC 1738 section 6);
- :func:`parse_menu_line` / :func:`parse_menu` read menu lines into
  :class:`MenuItem` values (info lines, ``h`` items with ``URL:`` selectors and
  unknown types are kept; broken lines are reported, not fatal), and
  :func:`menu_entry` makes the :class:`~anyurl.response.Entry` with the item's
  absolute URL;
- :class:`TextUnstuffer` removes the final "." line of a type-0 reply and
  undoes ".." stuffing, but only when the server really used the terminator;
- :func:`parse_plus_header`, :func:`parse_plus_error`, :func:`parse_attributes`,
  :func:`parse_views` and :func:`parse_ask` read Gopher+ replies;
  :func:`form_gopher_plus` builds the section 3.4.9 string for a filled form.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import unquote, urlsplit

if TYPE_CHECKING:
    from datetime import datetime

    from ..response import Entry

from ..errors import ProtocolError, ResourceNotFound, TemporaryFailure, TransferError
from ..urls import GopherURL, TelnetURL, to_wire
from .lines import refuse_controls

__all__ = [
    "SERVICE_PORTS",
    "FormField",
    "MenuItem",
    "PlusError",
    "BrokenLine",
    "PlusFacts",
    "PlusHeader",
    "RequestPlan",
    "TextUnstuffer",
    "View",
    "answer_fields",
    "content_type_for",
    "error_text",
    "error_for_plus",
    "form_gopher_plus",
    "form_url",
    "is_text_type",
    "item_url",
    "is_error_line",
    "file_type",
    "kind_for",
    "menu_entry",
    "parse_ask",
    "parse_attributes",
    "parse_mod_date",
    "parse_plus_size",
    "plus_facts",
    "parse_menu",
    "parse_menu_line",
    "parse_plus_error",
    "parse_plus_header",
    "parse_views",
    "render_attributes",
    "plan_request",
    "relation",
    "stat_request",
    "service_port_refusal",
]

DEFAULT_PORT = 70

# Well-known ports of other protocols. A gopher request is one arbitrary line
# sent to a TCP port, which is enough to give commands to line-based services
# (Redis "FLUSHALL", memcached, SMTP, FastCGI...): the "Gopherus" technique
# RFC 1738 section 6 warns about. Gopher to these ports is refused unless
# Policy(allow_gopher_to_service_ports=True).
SERVICE_PORTS: dict[int, str] = {
    21: "FTP", 22: "SSH", 23: "Telnet", 25: "SMTP", 53: "DNS", 110: "POP3", 111: "RPC portmapper",
    119: "NNTP", 135: "MS RPC", 139: "NetBIOS", 143: "IMAP", 389: "LDAP", 445: "SMB", 465: "SMTPS",
    512: "rexec", 513: "rlogin", 514: "rsh", 563: "NNTPS", 587: "SMTP submission", 636: "LDAPS",
    873: "rsync", 993: "IMAPS", 995: "POP3S", 1433: "Microsoft SQL Server", 1521: "Oracle",
    2049: "NFS", 2375: "Docker API", 2376: "Docker API (TLS)", 3306: "MySQL", 4369: "Erlang EPMD",
    5432: "PostgreSQL", 5672: "AMQP", 5984: "CouchDB", 6379: "Redis", 6380: "Redis",
    8500: "Consul", 9000: "FastCGI (php-fpm)", 9042: "Cassandra", 9200: "Elasticsearch",
    9300: "Elasticsearch transport", 11211: "memcached", 27017: "MongoDB", 27018: "MongoDB",
}


def service_port_refusal(port: int) -> str | None:
    """Why a gopher request to *port* is refused by default, or None if it is allowed."""
    name = SERVICE_PORTS.get(port)
    if name is None:
        return None
    return (f"refusing a gopher request to port {port}, the well-known port of {name}: a gopher URL "
            "sends a raw line to any service, which RFC 1738 section 6 warns can be used to attack "
            "it; set Policy(allow_gopher_to_service_ports=True) to allow it")


# ---------------------------------------------------------------------------
# Requests
# ---------------------------------------------------------------------------


# Patterns are kept as text: re compiles each on first use (and caches it), so
# importing this module for a plain download compiles none it does not use.

# The gopher+_string of a filled-out ASK form (RFC 1738 section 3.4.9): "+",
# TAB, "1", CRLF, "+-1", CRLF, one line per answer, ".", CRLF.
_FORM = r"\+\t1\r\n\+-1\r\n(?:[^\r\n\t\0]*\r\n)*\.\r\n\Z"


def _refuse(url: object, what: str, value: str | None, chars: str) -> None:
    refuse_controls(url, f"the gopher {what}", value, chars, why=" (it would inject extra request lines)")


class RequestPlan(NamedTuple):
    """What to send for a URL and how to read the reply.

    ``kind`` is "plain" (RFC 1436), "search", "data" (Gopher+ "+" or
    "+view lang"), "attributes" ("!..."), "directory-attributes" ("$..."),
    "ask" ("?": fetch the form, ask, send), "form" (a filled-out form) or
    "plus" (another Gopher+ string, sent as is).
    """

    kind: str
    request: bytes
    view: str | None = None  # the MIME type of a "+<view> <language>" request
    language: str | None = None
    attribute_names: tuple[str, ...] = ()


def _with_plus(url: GopherURL, gopher_plus: str) -> bytes:
    # RFC 1738 3.4.3: selector, TAB, search (may be empty), TAB, Gopher+ string.
    line = url.selector + "\t" + (url.search or "") + "\t" + gopher_plus
    return to_wire(line) + (b"" if gopher_plus.endswith("\r\n") else b"\r\n")


def plan_request(url: GopherURL) -> RequestPlan:
    """The request for *url*; UnsafeURL if a decoded control character would be sent."""
    _refuse(url, "selector", url.selector, "\t\r\n\0")
    _refuse(url, "search string", url.search, "\t\r\n\0")
    gplus = url.gopher_plus
    if gplus is None:
        if url.search is None:
            return RequestPlan("plain", to_wire(url.selector) + b"\r\n")
        return RequestPlan("search", to_wire(url.selector + "\t" + url.search) + b"\r\n")
    if re.match(_FORM, gplus):
        return RequestPlan("form", _with_plus(url, gplus))
    _refuse(url, "Gopher+ string", gplus, "\t\r\n\0")
    if gplus == "?":
        # The item's form: first its attributes ("!"), then the filled form.
        return RequestPlan("ask", _with_plus(url, "!"))
    if gplus.startswith("+"):
        view, _, lang = gplus[1:].partition(" ")
        return RequestPlan("data", _with_plus(url, gplus), view=view or None, language=lang or None)
    if gplus.startswith("!") or gplus.startswith("$"):
        names = tuple(n.upper() for n in gplus[1:].split() if n)
        kind = "attributes" if gplus[0] == "!" else "directory-attributes"
        return RequestPlan(kind, _with_plus(url, gplus), attribute_names=names)
    return RequestPlan("plus", _with_plus(url, gplus))


# ---------------------------------------------------------------------------
# Item types
# ---------------------------------------------------------------------------

_TEXT_TYPES = {"0": "text/plain", "4": "application/mac-binhex40", "6": "text/x-uuencode",
               "h": "text/html", "M": "multipart/mixed", "c": "text/calendar", "x": "application/xml"}
_BINARY_TYPES = {"5": "application/octet-stream", "9": "application/octet-stream", "g": "image/gif",
                 "I": "image/", "s": "audio/", ";": "video/", "d": "application/octet-stream",
                 "P": "application/pdf", "p": "image/png", "r": "application/rtf", "X": "application/xml"}
MENU_TYPES = frozenset("17")
# a menu as archives store it (the bytes as sent): the media type web archives give gopher menus
MENU_MEDIA_TYPE = "application/gopher-menu"
KNOWN_TYPES = frozenset(_TEXT_TYPES) | frozenset(_BINARY_TYPES) | frozenset("12378T+i")


# What a retrievable item holds (Entry.meta["type"] of a "file" entry).
_FILE_TYPES = {"0": "text", "4": "text", "6": "text", "c": "text", "x": "text", "M": "text",
               "5": "binary", "9": "binary", "d": "document", "P": "document", "r": "document",
               "X": "text", "g": "image", "I": "image", "p": "image", "s": "sound", ";": "video"}


def kind_for(gophertype: str, selector: str = "") -> str:
    """Entry kind (one of :data:`~anyurl.response.ENTRY_KINDS`) of a gopher item type:
    1 directory, 7 search, 8/T session, i info, 3 error, h page, any other file."""
    if gophertype == "1":
        return "directory"
    if gophertype == "7":
        return "search"
    if gophertype == "i":
        return "info"
    if gophertype == "3":
        return "error"
    if gophertype in ("8", "T"):
        return "session"
    if gophertype == "h":
        return "page"
    return "file"


def file_type(gophertype: str) -> str:
    """What a retrievable item holds: text, binary, image, sound, video, document or unknown."""
    return _FILE_TYPES.get(gophertype, "unknown")


def content_type_for(gophertype: str, selector: str, view: str | None = None) -> str:
    """The MIME type of an item: the Gopher+ view when one was asked for, else by type
    (refined by the selector's suffix for generic binary, image and sound types)."""
    from ..response import guess_content_type  # (here: anyurl.response imports asyncio, see _early.py)

    if view and "/" in view:
        return view
    if gophertype in MENU_TYPES:
        return "text/plain"  # the body is the rendered listing
    if gophertype in _TEXT_TYPES:
        return _TEXT_TYPES[gophertype]
    base = _BINARY_TYPES.get(gophertype)
    if base is None:
        return guess_content_type(selector)
    if base.endswith("/"):  # a family: the suffix says which member
        guessed = guess_content_type(selector, "")
        return guessed if guessed.startswith(base) else "application/octet-stream"
    if base == "application/octet-stream":
        return guess_content_type(selector)
    return base


def is_text_type(gophertype: str) -> bool:
    """Types whose reply is RFC 1436 text (lines, maybe "." terminated)."""
    return gophertype in ("0", "4", "6", "c", "x") or gophertype in MENU_TYPES


# ---------------------------------------------------------------------------
# Menus
# ---------------------------------------------------------------------------


class MenuItem(NamedTuple):
    """One menu line: type, display string, selector, host, port and the Gopher+ flag."""

    gophertype: str
    display: str
    selector: str = ""
    host: str = ""
    port: int = 0
    plus: str | None = None  # "+" Gopher+ item, "?" Gopher+ item with an ASK form
    extra: tuple[str, ...] = ()
    defaulted: bool = False  # host/port were missing and taken from the menu's server


class BrokenLine(NamedTuple):
    """A menu line that could not be understood (reported, never fatal)."""

    number: int
    text: str
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return {"line": self.number, "text": self.text, "reason": self.reason}


def _decode_line(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def parse_menu_line(line: str | bytes, number: int = 0, *, host: str = "",
                    port: int = 0) -> MenuItem | BrokenLine | None:
    """Parse one menu line (without or with its line end).

    Returns None for an empty line, a :class:`BrokenLine` for one that makes no
    sense. Info (``i``) and error (``3``) lines need only their display string;
    a line missing host and port gets the menu's own *host*/*port* (marked).
    """
    text = _decode_line(line) if isinstance(line, bytes) else line
    text = text.rstrip("\r\n")
    if not text.strip():
        return None
    gtype, rest = text[0], text[1:]
    fields = rest.split("\t")
    display = fields[0]
    if gtype in ("i", "3"):
        sel = fields[1] if len(fields) > 1 else ""
        h = fields[2] if len(fields) > 2 else ""
        p = _int(fields[3]) if len(fields) > 3 else 0
        return MenuItem(gtype, display, sel, h, p or 0)
    if len(fields) < 2:
        return BrokenLine(number, text, "no TAB-separated selector")
    sel = fields[1]
    defaulted = False
    if len(fields) < 4 or not fields[2]:
        if not host:
            return BrokenLine(number, text, "no host and port")
        h, p, defaulted = host, port or DEFAULT_PORT, True
        if len(fields) >= 4 and _int(fields[3]) is not None:
            p = _int(fields[3]) or p
    else:
        h = fields[2].strip()
        pv = _int(fields[3])
        if pv is None or not 0 <= pv <= 65535:
            return BrokenLine(number, text, f"port {fields[3]!r} is not a number from 0 to 65535")
        p = pv
    plus: str | None = None
    extra = tuple(fields[4:])
    if extra and extra[0] in ("+", "?", "!"):
        plus = "?" if extra[0] == "?" else "+"
        extra = extra[1:]
    return MenuItem(gtype, display, sel, h, p, plus, extra, defaulted)


def _int(s: str) -> int | None:
    s = s.strip()
    if s.isdigit():
        return int(s)
    return None


def parse_menu(data: bytes, *, host: str = "", port: int = 0
               ) -> tuple[list[MenuItem], list[BrokenLine], bool]:
    """Parse a whole menu: (items, broken lines, whether a "." line ended it)."""
    items: list[MenuItem] = []
    broken: list[BrokenLine] = []
    for n, raw in enumerate(data.splitlines(), 1):
        if raw.rstrip(b"\r") == b".":
            return items, broken, True
        parsed = parse_menu_line(raw, n, host=host, port=port)
        if isinstance(parsed, MenuItem):
            items.append(parsed)
        elif isinstance(parsed, BrokenLine):
            broken.append(parsed)
    return items, broken, False


def item_url(item: MenuItem) -> str | None:
    """The absolute URL an item designates (None for info and error lines); an item marked
    "?" (it has an ASK form) gets the Gopher+ string "?", so opening it fills the form."""
    kind = kind_for(item.gophertype, item.selector)
    if kind in ("info", "error"):
        return None
    if kind == "page" and item.selector.startswith("URL:"):
        link = item.selector[4:]
        if link[:5].lower() == "file:":  # a remote menu never leads to local files (as HTML pages)
            raise ValueError(f"a gopher menu links to a local file: {link!r}")
        return link
    host = item.host.lower()
    if _BAD_HOST_CHAR.search(host):  # "evil.host/../x" would make the URL say something else
        raise ValueError(f"not a host name: {item.host!r}")
    if kind == "session":
        # RFC 1436: the selector of a telnet item is the login name, if any.
        user = item.selector.strip() or None
        return str(TelnetURL("telnet", host, item.port or 23, user))
    if item.plus == "?":
        # RFC 1738 3.4.4: an item with an ASK form is designated with the Gopher+ string "?".
        return str(GopherURL("gopher", host, item.port or DEFAULT_PORT, None, None,
                             item.gophertype, item.selector, "", "?"))
    return str(GopherURL("gopher", host, item.port or DEFAULT_PORT, None, None,
                         item.gophertype, item.selector))


_BAD_HOST_CHAR = re.compile(r"[^a-z0-9.\-_:\[\]]")

# Display strings of a link back up the tree, as menus write them.
_PARENT_WORDS = frozenset({"..", "../", "parent", "parent directory", "parent menu", "up",
                           "go up", "previous menu", "up a level"})


def _segments(selector: str) -> tuple[str, ...]:
    return tuple(s for s in selector.split("/") if s)


def _item_name(item: MenuItem, kind: str) -> str:
    """The name a local file would get: the selector's last segment (the host for a root menu)."""
    if kind in ("info", "error"):
        return ""
    if kind == "page" and item.selector.startswith("URL:"):
        try:
            parts = urlsplit(item.selector[4:])
        except ValueError:
            return "index"
        path = _segments(parts.path)
        return unquote(path[-1]) if path else (parts.hostname or "index")
    if kind == "session":
        return item.selector.strip() or item.host
    segs = _segments(item.selector)
    name = segs[-1] if segs else (item.host or item.display.strip())
    # a selector is opaque text: its last segment may be ".." or hold a NUL, no file name
    return "_" + name if name in (".", "..") else name.replace("\0", "_")


def relation(item: MenuItem, menu: GopherURL) -> str | None:
    """ "self" for a menu item that is the menu itself, "parent" for one that leads up the tree
    (a selector that is an ancestor of the menu's own, or a ".." display string), else None."""
    if item.gophertype != "1" or item.host.lower() != menu.host.lower() \
            or (item.port or DEFAULT_PORT) != (menu.port or DEFAULT_PORT):
        return None
    if menu.search is not None or menu.gopher_plus is not None:
        return None
    here, there = _segments(menu.selector), _segments(item.selector)
    if ".." in there or "." in there:  # "/map/..": read as a path, as the server will
        resolved: list[str] = []
        for seg in there:
            if seg == "..":
                if resolved:
                    resolved.pop()
            elif seg != ".":
                resolved.append(seg)
        there = tuple(resolved)
    if there == here:
        return "self"
    if len(there) < len(here) and here[: len(there)] == there:
        return "parent"
    if item.display.strip().lower() in _PARENT_WORDS:
        return "parent"
    return None


def menu_entry(item: MenuItem, menu: GopherURL | None = None) -> Entry:
    """The :class:`Entry` of a menu item listed in *menu*: ``name`` the selector's last
    segment, ``title`` the display string, ``rel`` "parent"/"self" for links up or to
    *menu* itself, ``url`` where it leads."""
    from ..response import Entry  # (here: anyurl.response imports asyncio, see _early.py)

    refused: str | None
    try:
        url = item_url(item)
    except (ValueError, TypeError) as exc:  # an unrepresentable host: keep the item, without a URL
        url = None
        refused = str(exc)
    else:
        refused = None
    kind = kind_for(item.gophertype, item.selector)
    meta: dict[str, Any] = {"gophertype": item.gophertype, "selector": item.selector,
                            "host": item.host, "port": item.port, "plus": item.plus}
    if kind == "file":
        meta["type"] = file_type(item.gophertype)
    if item.gophertype not in KNOWN_TYPES:
        meta["unknown_type"] = True
    if item.defaulted:
        meta["host_defaulted"] = True
    if item.extra:
        meta["extra"] = list(item.extra)
    if refused:
        meta["url_refused"] = refused
    rel = relation(item, menu) if menu is not None and url is not None else None
    return Entry(name=_item_name(item, kind), url=url, kind=kind, title=item.display, rel=rel,
                 meta=meta)


_ERROR_LINE = rb"3[^\t\r\n]*(\t[^\t\r\n]*){2,}\t?[^\t\r\n]*\r?\n?\Z"
# Replies some servers send instead of a type-3 item (gophernicus).
_KNOWN_ERROR_TEXT = rb"Error: (File or directory not found!|Access denied!)[^\r\n]*"


def is_error_line(line: bytes) -> bool:
    """True for a type-3 error item line (RFC 1436), sent in place of a resource."""
    return bool(re.match(_ERROR_LINE, line))


def error_text(line: bytes) -> tuple[str, bool] | None:
    """(the server's message, certain) if *line* is an error reply, else None.

    A type-3 line (RFC 1436) is an error only if nothing else follows it, so
    it is not certain; gophernicus' ``Error: File or directory not found!``
    line (followed by its footer) is.
    """
    if is_error_line(line):
        return _decode_line(line[1:]).split("\t")[0].strip(), False
    m = re.match(_KNOWN_ERROR_TEXT, line)
    if m:
        return _decode_line(m.group(0)).strip(), True
    return None


# ---------------------------------------------------------------------------
# Text replies
# ---------------------------------------------------------------------------


class TextUnstuffer:
    """Undo RFC 1436 text framing while streaming, with bounded memory.

    A server that uses the "." terminator dot-stuffs lines starting with "."
    (".." on the wire); one that just closes the connection (pygopherd,
    gophernicus) sends the lines verbatim. Which one we face is only certain
    at the end, so lines from the first one starting with ".." on are held
    back until: a line that proves there is no stuffing (a single "." then
    anything but ".", or a "." line that is not the last) flushes them
    verbatim; the end of the reply decides by its last line (a final "."
    line means the server framed the text); or *hold_limit* bytes are held,
    after which the RFC rule (stuffed) is assumed. A final "." line is always
    removed. ``stuffed`` tells the decision, ``terminated`` whether a "." ended
    the reply.
    """

    def __init__(self, hold_limit: int = 1 << 20) -> None:
        self.hold_limit = hold_limit
        self.stuffed: bool | None = None  # None: undecided
        self.terminated = False
        self._partial = b""  # an incomplete line that starts with "."
        self._midline = False  # the start of the current line was already released
        self._held: list[tuple[bytes, bool]] = []  # (piece, starts a line)
        self._held_size = 0
        self._pending_dot: bytes | None = None  # a "." line that may be the terminator

    def feed(self, data: bytes) -> bytes:
        """Take reply bytes; return the text that can be released now."""
        out: list[bytes] = []
        if self.terminated or not data:
            return b""
        if (not self._held and self._pending_dot is None and not self._partial
                and b"\n." not in data and (self._midline or data[:1] != b".")):
            # The common case, fast: no line in this chunk starts with ".".
            self._midline = not data.endswith(b"\n")
            return data
        if self._midline:
            nl = data.find(b"\n")
            if nl < 0:
                self._release(data, out)
                return b"".join(out)
            self._release(data[:nl + 1], out)
            self._midline = False
            data = data[nl + 1:]
        data = self._partial + data
        lines = data.split(b"\n")
        self._partial = lines.pop()
        for raw in lines:
            self._line(raw + b"\n", out)
            if self.terminated:
                self._partial = b""
                return b"".join(out)
        # The start of a line that cannot be a lone "." is handled now and the rest of
        # the line streams after it, so a huge line is never buffered.
        if self._partial and self._partial not in (b".", b".\r"):
            start, self._partial = self._partial, b""
            self._line(start, out)
            self._midline = not self.terminated
        return b"".join(out)

    def _release(self, piece: bytes, out: list[bytes]) -> None:
        # Part of a line known not to start with ".": goes out (or joins the held lines).
        if self._held:
            self._hold(piece, out, line_start=False)
        else:
            out.append(piece)

    def _hold(self, piece: bytes, out: list[bytes], line_start: bool = True) -> None:
        self._held.append((piece, line_start))
        self._held_size += len(piece)
        if self._held_size > self.hold_limit:
            self._decide(True, out)

    def _unstuff(self, line: bytes) -> bytes:
        return line[1:] if line.startswith(b"..") else line

    def _decide(self, stuffed: bool, out: list[bytes]) -> None:
        self.stuffed = stuffed
        held, self._held, self._held_size = self._held, [], 0
        out.extend(self._unstuff(h) if stuffed and start else h for h, start in held)

    def _line(self, line: bytes, out: list[bytes]) -> None:
        if self._pending_dot is not None:
            dot, self._pending_dot = self._pending_dot, None
            if self.stuffed:
                self.terminated = True  # a framing server ends the text at the "."
                return
            # A "." line that is not the last: this server does not frame text.
            self._decide(False, out)
            out.append(dot)
        body = line.rstrip(b"\r\n")
        if body == b".":
            self._pending_dot = line
            return
        if self.stuffed is None and body.startswith(b"."):
            if body.startswith(b".."):
                self._hold(line, out)
                return
            self._decide(False, out)  # ".x": a stuffing server would have sent "..x"
        if self._held:
            self._hold(line, out)
        else:
            out.append(self._unstuff(line) if self.stuffed else line)

    def finish(self) -> bytes:
        """The reply ended (connection closed): release what is left."""
        out: list[bytes] = []
        if self.terminated:
            return b""
        tail, self._partial = self._partial, b""
        if tail:
            if tail.rstrip(b"\r") == b"." and self._pending_dot is None and not self._midline:
                self._pending_dot = tail
            else:
                self._line(tail, out)
        if self._pending_dot is not None:
            self._pending_dot = None
            self.terminated = True
            if self.stuffed is None:
                self._decide(True, out)
        elif self._held:
            self._decide(False, out)
        return b"".join(out)


# ---------------------------------------------------------------------------
# Gopher+ replies
# ---------------------------------------------------------------------------


class PlusHeader(NamedTuple):
    """A Gopher+ reply header: ``+<n>``, ``+-1`` (ends with "."), ``+-2`` (ends at close);
    ``error`` is True for ``-<n>`` (``--1``, ``--2``...)."""

    length: int  # >= 0 bytes; -1 terminated by "."; -2 until the connection closes
    error: bool = False


_PLUS_HEADER = rb"([+-])(-1|-2|\d{1,18})\r?\n\Z"


def parse_plus_header(line: bytes) -> PlusHeader | None:
    """The header of a Gopher+ reply, or None if *line* is not one (a Gopher0 server)."""
    m = re.match(_PLUS_HEADER, line)
    if not m:
        return None
    return PlusHeader(int(m.group(2)), m.group(1) == b"-")


class PlusError(NamedTuple):
    """A Gopher+ error reply: code 1 item not available, 2 try again later, 3 item moved."""

    code: int | None
    contact: str
    message: str


def parse_plus_error(data: bytes) -> PlusError:
    """The data of a ``--<n>`` reply: ``<code> <admin contact>`` then the message."""
    text = _decode_line(data).replace("\r\n", "\n")
    lines = [ln for ln in text.split("\n")]
    while lines and lines[-1].strip() in ("", "."):
        lines.pop()
    first = lines[0] if lines else ""
    code_s, _, contact = first.partition(" ")
    code = int(code_s) if code_s.isdigit() else None
    if code is None:
        contact, message_lines = "", lines
    else:
        message_lines = lines[1:]
    return PlusError(code, contact.strip(), "\n".join(message_lines).strip())


def error_for_plus(err: PlusError, url: object) -> TransferError:
    """The exception for a Gopher+ error reply, carrying the server's text."""
    reply = err.message or err.contact
    if err.code == 1:
        return ResourceNotFound(f"the item is not available: {err.message}", url=url, reply=reply)
    if err.code == 2:
        return TemporaryFailure(f"the server says try again later: {err.message}", url=url, reply=reply)
    if err.code == 3:
        return ProtocolError(f"the item has moved: {err.message}", url=url, reply=reply)
    return ProtocolError(f"Gopher+ error {err.code}: {err.message}", url=url, reply=reply)


def parse_attributes(data: bytes | str) -> list[dict[str, str]]:
    """Attribute blocks of a ``!`` (one item) or ``$`` (one per item) reply.

    Each item is a mapping from block name without "+" (``INFO``, ``ADMIN``,
    ``VIEWS``, ``ABSTRACT``, ``ASK``...) to its text: the rest of the ``+NAME:``
    line and the following lines with their one leading space removed, joined
    by LF. A new item starts at each ``+INFO``.
    """
    text = _decode_line(data) if isinstance(data, bytes) else data
    items: list[dict[str, list[str]]] = []
    current: dict[str, list[str]] | None = None
    name: str | None = None
    for raw in text.replace("\r\n", "\n").split("\n"):
        if raw == "." or raw == "":
            continue
        if raw.startswith("+") and ":" in raw and " " not in raw.partition(":")[0]:
            head, _, rest = raw.partition(":")
            name = head[1:].upper()
            if current is None or name == "INFO":
                current = {}
                items.append(current)
            current[name] = [rest[1:] if rest.startswith(" ") else rest] if rest.strip() else []
        elif current is not None and name is not None:
            current[name].append(raw[1:] if raw.startswith(" ") else raw)
    return [{k: "\n".join(v) for k, v in item.items()} for item in items]


def render_attributes(items: list[dict[str, str]]) -> bytes:
    """Attribute blocks written back in the Gopher+ wire form (CRLF lines)."""
    out: list[str] = []
    for item in items:
        for name, value in item.items():
            lines = value.split("\n") if value else []
            if name == "INFO" and lines:
                out.append(f"+INFO: {lines[0]}")
                lines = lines[1:]
            else:
                out.append(f"+{name}:")
            out.extend(" " + ln for ln in lines)
    return "".join(ln + "\r\n" for ln in out).encode("utf-8", "surrogateescape")


class View(NamedTuple):
    """One +VIEWS line: ``<mime> [<language>]: <size>``."""

    mime: str
    language: str | None = None
    size: str | None = None


def parse_views(block: str) -> list[View]:
    """The views listed in a +VIEWS block."""
    views: list[View] = []
    for line in block.split("\n"):
        line = line.strip()
        if not line:
            continue
        head, _, size = line.partition(":")
        parts = head.split()
        if not parts:
            continue
        size = size.strip()
        if size.startswith("<") and size.endswith(">"):
            size = size[1:-1]
        views.append(View(parts[0], " ".join(parts[1:]) or None, size or None))
    return views


class FormField(NamedTuple):
    """One item of a Gopher+ +ASK form.

    ``kind`` is the ASK keyword in lower case: "ask" (a line of text),
    "askp" (a password), "askl" (long text), "askf" (a file name), "choose"
    (one of ``choices``), "select" (a yes/no box; ``default`` is "1" or "0"),
    "note" (text to show; it takes no answer).
    """

    kind: str
    prompt: str
    default: str | None = None
    choices: list[str] = []  # never mutated; parse_ask gives each field its own list

    @property
    def answerable(self) -> bool:
        """False for notes, which only show text."""
        return self.kind != "note"


_ASK_KINDS = {"ask", "askp", "askl", "askf", "choose", "choosef", "select", "note"}


def parse_ask(block: str) -> list[FormField]:
    """The fields of a +ASK block (lines ``Kind: prompt<TAB>default-or-choices``)."""
    fields: list[FormField] = []
    for line in block.split("\n"):
        line = line.strip("\r")
        if not line.strip():
            continue
        head, sep, rest = line.strip().partition(":")
        kind = head.strip().lower()
        if not sep or kind not in _ASK_KINDS:
            # An unknown keyword: show it as a note rather than dropping it.
            fields.append(FormField("note", line.strip(), None, []))
            continue
        parts = rest.lstrip(" ").split("\t")
        prompt, values = parts[0], parts[1:]
        if kind in ("choose", "choosef"):
            fields.append(FormField(kind, prompt, values[0] if values else None, values))
        else:
            fields.append(FormField(kind, prompt, values[0] if values else None, []))
    return fields


def answer_fields(fields: list[FormField], answers: list[str], url: object = None) -> list[str]:
    """Match the callback's *answers* to the form: one per field, or one per answerable
    field (notes skipped). Returns the answers to send, one per answerable field."""
    answerable = [f for f in fields if f.answerable]
    if len(answers) == len(fields) and len(fields) != len(answerable):
        answers = [a for f, a in zip(fields, answers, strict=True) if f.answerable]
    if len(answers) != len(answerable):
        raise ProtocolError(f"the form has {len(answerable)} fields to answer but the form callback "
                            f"returned {len(answers)} answers", url=url)
    out: list[str] = []
    for f, a in zip(answerable, answers, strict=True):
        a = "" if a is None else str(a)
        if f.kind == "askl" and "\n" in a.rstrip("\r\n"):
            raise ProtocolError(f"multi-line answers (to {f.prompt!r}) are not supported", url=url)
        _refuse(url, f"answer to {f.prompt!r}", a.rstrip("\r\n") if f.kind == "askl" else a, "\t\r\n\0")
        if f.kind == "askl":
            a = a.rstrip("\r\n")
        if f.kind == "choose" and f.choices and a not in f.choices:
            raise ProtocolError(f"{a!r} is not one of the choices for {f.prompt!r}: {f.choices}", url=url)
        out.append(a)
    return out


def form_gopher_plus(answers: list[str]) -> str:
    """The gopher+_string of a filled-out form (RFC 1738 section 3.4.9); lines starting
    with "." are dot-stuffed as in every "." terminated Gopher+ block."""
    lines = [("." + a) if a.startswith(".") else a for a in answers]
    return "+\t1\r\n+-1\r\n" + "".join(a + "\r\n" for a in lines) + ".\r\n"


def form_url(url: GopherURL, answers: list[str]) -> GopherURL:
    """The URL that designates *url*'s item with its form filled out with *answers*."""
    return replace(url, search=url.search or "", gopher_plus=form_gopher_plus(answers))


# ---------------------------------------------------------------------------
# stat: what Gopher+ attributes say about an item
# ---------------------------------------------------------------------------


def stat_request(url: GopherURL) -> RequestPlan:
    """The ``!`` (item attributes) request for *url*, whatever Gopher+ string it carries."""
    plan_request(url)  # refuse control characters in the URL as it is
    return plan_request(replace(url, search=url.search or "", gopher_plus="!"))


_SIZE = r"<?\s*(\d+(?:\.\d+)?)\s*([kKmMgG]?)[bB]?\s*>?"
_UNITS = {"": 1, "k": 1024, "m": 1024 ** 2, "g": 1024 ** 3}


def parse_plus_size(text: str) -> tuple[int, bool] | None:
    """A +VIEWS size (``<12k>``, ``<1.5M>``, ``<300>``) -> (bytes, approximate); None if
    unreadable. Sizes in k/M/G are rounded by the server (pygopherd floors to whole
    kilobytes), so they are approximate; ``<0k>`` (under 1024 bytes) gives None."""
    m = re.fullmatch(_SIZE, text.strip())
    if not m:
        return None
    unit = m.group(2).lower()
    size = int(float(m.group(1)) * _UNITS[unit])
    if unit and size == 0:
        return None  # "<0k>": under a kilobyte, not empty
    return size, bool(unit)


_MOD_DATE = r"Mod-Date:[^<\n]*<(\d{14})>"


def parse_mod_date(admin: str) -> datetime | None:
    """The ``<YYYYMMDDhhmmss>`` of a +ADMIN ``Mod-Date:`` line. Gopher+ gives no zone;
    it is taken as UTC."""
    m = re.search(_MOD_DATE, admin)
    if not m:
        return None
    from datetime import UTC, datetime  # only Gopher+ +ADMIN needs it: not on every gopher run

    try:
        return datetime.strptime(m.group(1), "%Y%m%d%H%M%S").replace(tzinfo=UTC)
    except ValueError:
        return None


class PlusFacts(NamedTuple):
    """What an item's Gopher+ attributes say, for ``stat``."""

    gophertype: str | None  # from +INFO
    size: int | None
    size_text: str | None
    size_approximate: bool
    modified: datetime | None
    content_type: str | None
    views: list[View]


def plus_facts(attrs: dict[str, str], view: str | None = None) -> PlusFacts:
    """Size (of *view*, else the first view), modification date and type from ``!`` attributes."""
    info = parse_menu_line(attrs.get("INFO", ""))
    gtype = info.gophertype if isinstance(info, MenuItem) else None
    views = parse_views(attrs.get("VIEWS", ""))
    chosen = next((v for v in views if view and v.mime.lower() == view.lower()), views[0] if views else None)
    size: tuple[int, bool] | None = None
    if chosen is not None and chosen.size:
        size = parse_plus_size(chosen.size)
    return PlusFacts(
        gophertype=gtype,
        size=size[0] if size else None,
        size_text=chosen.size if chosen is not None else None,
        size_approximate=size[1] if size else False,
        modified=parse_mod_date(attrs.get("ADMIN", "")),
        content_type=chosen.mime if chosen is not None else None,
        views=views,
    )

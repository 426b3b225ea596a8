"""NNTP (RFC 3977, with RFC 977 compatibility) without I/O.

Everything here is pure: the asyncio driver in :mod:`anyurl.handlers.news`
feeds received bytes into a :class:`ReplyReader` and pulls events out, and
writes the bytes the command builders return.

* :class:`ReplyReader`: an incremental state machine over the byte stream.
  The driver announces each command's reply with :meth:`ReplyReader.expect`
  (so several commands may be in flight: pipelining), feeds bytes, and gets
  :class:`Reply`, :class:`Data` (dot-unstuffed payload, CRLF kept) and
  :class:`End` events. A connection lost inside a multi-line block raises
  :class:`~anyurl.errors.TruncatedTransfer`.
* command builders (:func:`group_cmd`, :func:`article_cmd`...) that refuse CR,
  LF, NUL and whitespace in group names and message-ids with
  :class:`~anyurl.errors.UnsafeURL`, before anything is sent.
* parsers for GROUP replies, OVER/XOVER lines, LIST ACTIVE and LIST
  NEWSGROUPS lines, CAPABILITIES, and article headers (RFC 2047 decoded).

Errors raised here carry no URL; the driver adds it.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from email.header import decode_header, make_header
from email.utils import parsedate_to_datetime
from typing import Final

from .._record import Record
from ..errors import (
    AccessDenied,
    AnyURLError,
    ConnectError,
    ProtocolError,
    ResourceNotFound,
    TemporaryFailure,
    TruncatedTransfer,
    UnsafeURL,
)
from .lines import refuse_controls

_set = object.__setattr__  # how a frozen Record's __init__ sets its fields

__all__ = [
    "ARTICLE_CODES",
    "Active",
    "Data",
    "End",
    "GroupStatus",
    "NEED_DATA",
    "Overview",
    "Reply",
    "ReplyReader",
    "ArticleFacts",
    "article_cmd",
    "article_facts",
    "authinfo_cmd",
    "check_group",
    "check_message_id",
    "decode_words",
    "error_for",
    "group_cmd",
    "parse_active",
    "parse_article_head",
    "parse_capabilities",
    "parse_group_reply",
    "parse_newsgroups",
    "overview_number",
    "parse_overview",
    "parse_reply",
    "parse_stat_reply",
    "split_head",
]

# Replies followed by a multi-line data block (RFC 3977 section 3.4.1).
CAPABILITIES_CODES: Final = frozenset({101})
ARTICLE_CODES: Final = frozenset({220, 221, 222})
LIST_CODES: Final = frozenset({215})
OVER_CODES: Final = frozenset({224})
NO_BLOCK: Final = frozenset[int]()

# A group name: printable ASCII without whitespace (RFC 3977 wildmat-safe subset
# plus what real hierarchies use); message-ids: printable ASCII, no '<' '>' inside.
_UNSAFE = re.compile(r"[\x00-\x20\x7f]")
_GROUP_OK = re.compile(r"[A-Za-z0-9][A-Za-z0-9+\-_.]*\Z")


class Reply(Record):
    """A status line: three-digit ``code`` and the ``text`` after it."""

    __slots__ = ("code", "text")
    code: int
    text: str

    def __init__(self, code: int, text: str) -> None:
        _set(self, "code", code)
        _set(self, "text", text)

    @property
    def line(self) -> str:
        """The status line as the server sent it (without CRLF)."""
        return f"{self.code} {self.text}".rstrip()


class Data(Record):
    """A piece of a multi-line block, dot-unstuffed, lines still ending in CRLF."""

    __slots__ = ("data",)
    data: bytes

    def __init__(self, data: bytes) -> None:
        _set(self, "data", data)


class End(Record):
    """The terminating ``.`` line of a multi-line block."""

    __slots__ = ()

    def __init__(self) -> None:
        pass


class _NeedData:
    def __repr__(self) -> str:
        return "NEED_DATA"


NEED_DATA: Final = _NeedData()
Event = Reply | Data | End | _NeedData


def parse_reply(line: bytes) -> Reply:
    """Parse one status line (``b"211 3 1 3 misc.test\\r\\n"``)."""
    text = line.rstrip(b"\r\n")
    if len(text) < 3 or not text[:3].isdigit() or (len(text) > 3 and text[3:4] not in b" -\t"):
        shown = text[:80].decode("latin-1")
        raise ProtocolError(f"malformed NNTP status line {shown!r}")
    return Reply(int(text[:3]), text[4:].decode("utf-8", "replace").strip())


class ReplyReader:
    """Turns the bytes of an NNTP connection into Reply/Data/End events.

    ``expect(codes)`` queues one reply: if its code is in *codes*, a data block
    follows. Lines are bounded by *max_line* bytes.
    """

    def __init__(self, max_line: int = 64 * 1024) -> None:
        self.max_line = max_line
        self._buf = bytearray()
        self._expected: list[frozenset[int]] = []
        self._in_block = False
        self._eof = False

    @property
    def in_block(self) -> bool:
        """True while inside a multi-line block."""
        return self._in_block

    @property
    def buffered(self) -> int:
        """Bytes received and not yet turned into events."""
        return len(self._buf)

    @property
    def pending(self) -> int:
        """Replies announced but not yet received."""
        return len(self._expected)

    def expect(self, block_codes: frozenset[int] = NO_BLOCK) -> None:
        """Announce the reply of one command sent."""
        self._expected.append(block_codes)

    def feed(self, data: bytes) -> None:
        """Add received bytes."""
        self._buf += data

    def feed_eof(self) -> None:
        """The peer closed the connection."""
        self._eof = True

    def next_event(self) -> Event:
        """The next event, or NEED_DATA when more bytes are needed."""
        if self._in_block:
            return self._block_event()
        nl = self._buf.find(b"\n")
        if nl < 0:
            if len(self._buf) > self.max_line:
                raise ProtocolError(f"reply line longer than {self.max_line} bytes")
            if self._eof:
                raise ConnectError("the server closed the connection" +
                                   (" inside a reply line" if self._buf else ""))
            return NEED_DATA
        if nl + 1 > self.max_line:
            raise ProtocolError(f"reply line longer than {self.max_line} bytes")
        line = bytes(self._buf[: nl + 1])
        del self._buf[: nl + 1]
        reply = parse_reply(line)
        block = self._expected.pop(0) if self._expected else NO_BLOCK
        if reply.code in block:
            self._in_block = True
        return reply

    def _block_event(self) -> Event:
        buf = self._buf
        # Only whole lines are handed out: the block always resumes at a line start.
        last = buf.rfind(b"\n")
        if last < 0:
            if len(buf) > self.max_line:
                raise ProtocolError(f"data line longer than {self.max_line} bytes")
            if self._eof:
                raise TruncatedTransfer("the connection closed inside a multi-line reply")
            return NEED_DATA
        if buf[:3] == b".\r\n" or buf[:2] == b".\n":
            del buf[: 3 if buf[1:2] == b"\r" else 2]
            self._in_block = False
            return End()
        # The terminator line anywhere in the complete part ends this chunk before it.
        cut = last + 1
        term = buf.find(b"\n.\r\n", 0, cut)
        term_lf = buf.find(b"\n.\n", 0, cut)
        if term_lf >= 0 and (term < 0 or term_lf < term):
            term = term_lf
        if term >= 0:
            cut = term + 1
        if len(buf) - (last + 1) > self.max_line:
            raise ProtocolError(f"data line longer than {self.max_line} bytes")
        chunk = bytes(buf[:cut])
        del buf[:cut]
        # Dot-unstuffing: a line starting with ".." loses its first dot.
        if b"\n.." in chunk or chunk[:2] == b"..":
            chunk = (b"\n" + chunk).replace(b"\n..", b"\n.")[1:]
        return Data(chunk)


# -- errors --------------------------------------------------------------------


def error_for(reply: Reply, what: str = "") -> AnyURLError:
    """The anyurl error for a failure reply (411, 423, 430, 480, 502...)."""
    about = f" ({what})" if what else ""
    code, line = reply.code, reply.line
    if code == 411:
        return ResourceNotFound(f"no such newsgroup{about}", reply=line)
    if code in (420, 421, 422, 423, 430):
        return ResourceNotFound(f"no such article{about}", reply=line)
    if code in (480, 481, 482, 483):
        return AccessDenied(f"the news server refused access{about}", reply=line)
    if code == 502:
        return AccessDenied(f"the news server refused the command{about}", reply=line)
    if code in (400, 403):
        return TemporaryFailure(f"the news server is temporarily unable to serve{about}", reply=line)
    return ProtocolError(f"unexpected NNTP reply{about}", reply=line)


# -- commands --------------------------------------------------------------------


def check_group(group: str) -> str:
    """Refuse a group name that could smuggle another command (CR, LF, NUL, spaces)."""
    if not group or _UNSAFE.search(group):
        bad = "is empty" if not group else "contains control characters or whitespace"
        raise UnsafeURL(f"newsgroup name {group!r} {bad}; refusing to send it")
    if not group.isascii():
        raise UnsafeURL(f"newsgroup name {group!r} is not ASCII; refusing to send it")
    return group


def check_message_id(message_id: str) -> str:
    """Validate a message-id (with or without its angle brackets); return it with brackets."""
    mid = message_id[1:-1] if message_id.startswith("<") and message_id.endswith(">") else message_id
    if not mid or _UNSAFE.search(mid) or "<" in mid or ">" in mid or not mid.isascii():
        raise UnsafeURL(f"message-id {message_id!r} contains control characters, whitespace or "
                        "angle brackets; refusing to send it")
    if "@" not in mid:
        raise UnsafeURL(f"message-id {message_id!r} has no '@'")
    if len(mid) > 248:  # RFC 3977 section 3.6: at most 250 octets with brackets
        raise UnsafeURL(f"message-id {message_id!r} is longer than 250 octets")
    return f"<{mid}>"


def _line(*words: str) -> bytes:
    for word in words:
        if not word or _UNSAFE.search(word) or not word.isascii():
            raise UnsafeURL(f"command word {word!r} is empty or holds control characters or whitespace")
    return " ".join(words).encode("ascii") + b"\r\n"


def group_cmd(group: str) -> bytes:
    """``GROUP name``."""
    return _line("GROUP", check_group(group))


def article_cmd(ref: int | str, verb: str = "ARTICLE") -> bytes:
    """``ARTICLE n`` or ``ARTICLE <message-id>`` (also HEAD, BODY, STAT)."""
    if isinstance(ref, int):
        if ref < 0:
            raise UnsafeURL(f"article number {ref} is negative")
        return _line(verb, str(ref))
    return _line(verb, check_message_id(ref))


def over_cmd(first: int, last: int, verb: str = "OVER") -> bytes:
    """``OVER first-last`` (``XOVER`` for servers without OVER)."""
    return _line(verb, f"{first}-{last}")


def authinfo_cmd(kind: str, value: str) -> bytes:
    """``AUTHINFO USER name`` / ``AUTHINFO PASS secret``; refuses CR/LF/NUL."""
    refuse_controls(None, f"AUTHINFO {kind} value", value, decoded=False)
    return b"AUTHINFO " + kind.encode("ascii") + b" " + value.encode("utf-8") + b"\r\n"


def simple_cmd(*words: str) -> bytes:
    """A command made of fixed words (``CAPABILITIES``, ``MODE READER``, ``LIST ACTIVE``...)."""
    return _line(*words)


# -- reply parsers ----------------------------------------------------------------


class GroupStatus(Record):
    """A 211 reply to GROUP: estimated ``count``, ``low`` and ``high`` water marks."""

    __slots__ = ("count", "low", "high", "name")
    count: int
    low: int
    high: int
    name: str

    def __init__(self, count: int, low: int, high: int, name: str) -> None:
        _set(self, "count", count)
        _set(self, "low", low)
        _set(self, "high", high)
        _set(self, "name", name)


def parse_group_reply(reply: Reply) -> GroupStatus:
    """Parse ``211 count low high group``."""
    parts = reply.text.split()
    try:
        count, low, high = int(parts[0]), int(parts[1]), int(parts[2])
    except (IndexError, ValueError) as exc:
        raise ProtocolError("malformed GROUP reply", reply=reply.line) from exc
    return GroupStatus(count, low, high, parts[3] if len(parts) > 3 else "")


def parse_capabilities(block: bytes) -> dict[str, list[str]]:
    """CAPABILITIES lines -> {"OVER": [], "LIST": ["ACTIVE", ...], ...} (keys upper case)."""
    caps: dict[str, list[str]] = {}
    for raw in block.splitlines():
        words = raw.decode("utf-8", "replace").split()
        if words:
            caps[words[0].upper()] = [w.upper() for w in words[1:]]
    return caps


class Overview(Record):
    """One OVER/XOVER line (RFC 3977 section 8.3), header fields RFC 2047 decoded."""

    __slots__ = ("number", "subject", "sender", "date", "date_text", "message_id", "references", "size",
                 "lines", "extra")
    number: int
    subject: str
    sender: str
    date: datetime | None
    date_text: str
    message_id: str
    references: str
    size: int | None
    lines: int | None
    extra: tuple[str, ...]

    def __init__(self, number: int, subject: str, sender: str, date: datetime | None, date_text: str,
                       message_id: str, references: str, size: int | None, lines: int | None,
                       extra: tuple[str, ...] = ()) -> None:
        _set(self, "number", number)
        _set(self, "subject", subject)
        _set(self, "sender", sender)
        _set(self, "date", date)
        _set(self, "date_text", date_text)
        _set(self, "message_id", message_id)
        _set(self, "references", references)
        _set(self, "size", size)
        _set(self, "lines", lines)
        _set(self, "extra", extra)


def _int_or_none(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def _parse_date(text: str) -> datetime | None:
    try:
        return parsedate_to_datetime(text) if text else None
    except (TypeError, ValueError, IndexError):
        return None


def _text(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def parse_overview(line: bytes) -> Overview:
    """Parse one overview line: number TAB subject TAB from TAB date TAB message-id
    TAB references TAB bytes TAB lines [TAB extra...]."""
    fields = _text(line.rstrip(b"\r\n")).split("\t")
    if len(fields) < 8 or not fields[0].strip().isdigit():
        raise ProtocolError(f"malformed overview line {_text(line[:80])!r}")
    return Overview(
        number=int(fields[0]),
        subject=decode_words(fields[1]),
        sender=decode_words(fields[2]),
        date=_parse_date(fields[3]),
        date_text=fields[3],
        message_id=fields[4].strip(),
        references=fields[5].strip(),
        size=_int_or_none(fields[6].strip()),
        lines=_int_or_none(fields[7].strip()),
        extra=tuple(fields[8:]),
    )


def overview_number(line: bytes) -> int | None:
    """The article number an overview line starts with (None if it has none), without
    parsing the rest: a listing keeps only the lines it will show."""
    head, _, _ = line.partition(b"\t")
    head = head.strip()
    return int(head) if head.isdigit() and len(head) <= 20 else None


class Active(Record):
    """One LIST ACTIVE line: group, high and low water marks, status (y, n, m...)."""

    __slots__ = ("group", "high", "low", "status")
    group: str
    high: int
    low: int
    status: str

    def __init__(self, group: str, high: int, low: int, status: str) -> None:
        _set(self, "group", group)
        _set(self, "high", high)
        _set(self, "low", low)
        _set(self, "status", status)


def parse_active(line: bytes) -> Active:
    """Parse ``group high low status``."""
    parts = _text(line.rstrip(b"\r\n")).split()
    if len(parts) < 4:
        raise ProtocolError(f"malformed LIST ACTIVE line {_text(line[:80])!r}")
    try:
        return Active(parts[0], int(parts[1]), int(parts[2]), parts[3])
    except ValueError as exc:
        raise ProtocolError(f"malformed LIST ACTIVE line {_text(line[:80])!r}") from exc


def parse_newsgroups(line: bytes) -> tuple[str, str]:
    """Parse ``group<whitespace>description`` (LIST NEWSGROUPS)."""
    text = _text(line.rstrip(b"\r\n"))
    parts = text.split(None, 1)
    if not parts:
        raise ProtocolError("empty LIST NEWSGROUPS line")
    return parts[0], decode_words(parts[1].strip()) if len(parts) > 1 else ""


# -- articles ---------------------------------------------------------------------


def decode_words(value: str) -> str:
    """Decode RFC 2047 encoded-words (``=?UTF-8?B?...?=``); malformed ones stay as they are."""
    if "=?" not in value:
        return value
    try:
        return str(make_header(decode_header(value)))
    except (ValueError, LookupError, UnicodeError):
        return value


def split_head(data: bytes) -> int:
    """Offset where the body starts (after the empty line), or -1 if the head is not complete."""
    if data.startswith(b"\r\n"):  # an article without header fields
        return 2
    if data.startswith(b"\n"):
        return 1
    crlf = data.find(b"\r\n\r\n")
    lf = data.find(b"\n\n")
    if crlf >= 0 and (lf < 0 or crlf < lf):
        return crlf + 4
    if lf >= 0:
        return lf + 2
    return -1


def parse_stat_reply(reply: Reply) -> tuple[int | None, str | None]:
    """``223 number <message-id>`` (STAT, also the 220/221 replies): (number, message-id).
    The number is 0 for a message-id lookup outside a group (RFC 3977 6.2.4)."""
    words = reply.text.split()
    number = int(words[0]) if words and words[0].isdigit() else None
    mid = words[1] if len(words) > 1 and words[1].startswith("<") and words[1].endswith(">") else None
    return number, mid


class ArticleFacts(Record):
    """What an article head says about the article: for ``stat``."""

    __slots__ = ("size", "modified", "subject", "message_id", "lines")
    size: int | None  # the Bytes: header (INN and others add it), else None
    modified: datetime | None  # the Date: header
    subject: str | None
    message_id: str | None
    lines: int | None

    def __init__(self, size: int | None, modified: datetime | None, subject: str | None,
                       message_id: str | None, lines: int | None) -> None:
        _set(self, "size", size)
        _set(self, "modified", modified)
        _set(self, "subject", subject)
        _set(self, "message_id", message_id)
        _set(self, "lines", lines)


def article_facts(fields: list[tuple[str, str]]) -> ArticleFacts:
    """Size, date, subject and message-id from parsed head *fields* (first of each wins)."""
    first: dict[str, str] = {}
    for name, value in fields:
        first.setdefault(name.lower(), value)
    size = _int_or_none(first.get("bytes", "").strip())
    lines = _int_or_none(first.get("lines", "").strip())
    date = _parse_date(first.get("date", ""))
    if date is not None and date.tzinfo is not None:
        date = date.astimezone(UTC)
    return ArticleFacts(
        size=size if size is not None and size >= 0 else None,
        modified=date,
        subject=first.get("subject"),
        message_id=first.get("message-id"),
        lines=lines if lines is not None and lines >= 0 else None,
    )


def parse_article_head(head: bytes) -> list[tuple[str, str]]:
    """Header fields of an article head, unfolded and RFC 2047 decoded, in order."""
    fields: list[tuple[str, str]] = []
    for raw in re.split(rb"\r?\n", head):
        if not raw:
            continue
        if raw[:1] in (b" ", b"\t") and fields:
            name, value = fields[-1]
            fields[-1] = (name, value + " " + _text(raw).strip())
            continue
        rname, sep, rvalue = raw.partition(b":")
        if not sep:
            continue  # not a header line; tolerated
        fields.append((_text(rname).strip(), _text(rvalue).strip()))
    return [(n, decode_words(v)) for n, v in fields]

"""FTP protocol logic for RFC 1738 section 3.2, with no I/O (never imports asyncio).

What lives here:

* :class:`ReplyReader` - assembles (multi-line) control replies from lines,
  with hard bounds on line length and line count.
* :func:`plan` - the commands a URL stands for: login user/password, one
  CWD per decoded segment (or another :data:`CWD_STRATEGIES`), the TYPE,
  and RETR/NLST/listing of the name.
* Parsers for EPSV/PASV/PWD/150 replies, and :func:`child_url` / :func:`child_urls` for
  listing entries; listings themselves (MLSD, LIST in every known format, NLST) are read
  by :mod:`anyurl.protocols.ftplist`, whose names this module re-exports.
* :class:`CRLFDecoder` - TYPE A's CRLF to "\\n" conversion across chunk borders.

The asyncio driver is :mod:`anyurl.handlers.ftp`.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._record import Record
from ..errors import (
    AccessDenied,
    ProtocolError,
    ResourceNotFound,
    TemporaryFailure,
    TransferError,
    UnsafeURL,
)
from ..schemes import CWD_STRATEGIES, DEFAULT_TEXT_SUFFIXES
from ..urls import FPATH, FTPURL, percent_encode
from .lines import refuse_controls

if TYPE_CHECKING:
    from datetime import datetime

    from .ftplist import (
        ListItem,
        ListParser,
        parse_list,
        parse_list_line,
        parse_mlsd,
        parse_mlsd_line,
        parse_nlst,
        parse_nlst_line,
    )

# Listings are read by .ftplist, imported on first use (a program that only retrieves files
# never parses a listing; importing it cost ~0.7 ms of every `anyurl get ftp://...`).
_LISTING_NAMES = frozenset({"ListItem", "ListParser", "parse_list", "parse_list_line", "parse_mlsd",
                            "parse_mlsd_line", "parse_nlst", "parse_nlst_line"})


def __getattr__(name: str) -> Any:
    if name in _LISTING_NAMES:
        from . import ftplist

        return getattr(ftplist, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "CWD_STRATEGIES",
    "DEFAULT_TEXT_SUFFIXES",
    "CRLFDecoder",
    "ListItem",
    "ListParser",
    "REPLY_ERRORS",
    "LineSplitter",
    "Plan",
    "Reply",
    "ReplyReader",
    "absolute_cwd",
    "check_safe",
    "classify",
    "child_url",
    "child_urls",
    "directory_text",
    "entry_text",
    "error_for",
    "format_command",
    "login_credentials",
    "parse_150_size",
    "parse_epsv",
    "parse_list",
    "parse_list_line",
    "parse_mlsd",
    "parse_mlsd_line",
    "parse_mdtm",
    "parse_mlst",
    "parse_nlst",
    "parse_nlst_line",
    "parse_pasv",
    "parse_pwd",
    "parse_size",
    "plan",
    "retry_stor_name",
    "transfer_type",
    "upload_names",
]



_set = object.__setattr__  # how a frozen Record's __init__ sets its fields

# Reply, Plan and ListItem are Records, not dataclasses, and the patterns below are compiled
# on first use (listings, errors, multi-line replies): making three dataclasses, a dozen
# patterns and importing datetime cost ~6-8 ms of every `anyurl get ftp://...` (see _record).


# ---------------------------------------------------------------------------
# Replies
# ---------------------------------------------------------------------------


class Reply(Record):
    """One control reply: the 3-digit ``code`` and its text ``lines`` (without the code)."""

    __slots__ = ("code", "lines")
    code: int
    lines: tuple[str, ...]

    def __init__(self, code: int, lines: tuple[str, ...]) -> None:
        _set(self, "code", code)
        _set(self, "lines", lines)

    @property
    def text(self) -> str:
        """The reply as the server wrote it, lines joined by spaces ("550 No such file")."""
        lines = self.lines
        if len(lines) == 1:  # most replies: no join
            return f"{self.code} {lines[0]}" if lines[0] else f"{self.code} "
        return f"{self.code} " + " ".join(s for s in lines if s)

    @property
    def first(self) -> str:
        """The text of the first line."""
        return self.lines[0] if self.lines else ""

    @property
    def kind(self) -> int:
        """The first digit: 1 preliminary, 2 done, 3 more needed, 4 transient, 5 permanent."""
        return self.code // 100


@functools.cache
def _reply_start() -> re.Pattern[str]:
    return re.compile(r"(\d{3})([ -])(.*)\Z", re.S)


class ReplyReader:
    """Feed control lines one at a time; :meth:`feed` returns a :class:`Reply` when one is complete.

    A multi-line reply starts with ``123-`` and ends with a line starting
    ``123 `` (RFC 959 4.2). Lines are bounded by *max_line* bytes and a reply
    by *max_lines* lines; beyond either the server is misbehaving and
    :class:`ProtocolError` is raised.
    """

    def __init__(self, max_line: int = 64 * 1024, max_lines: int = 10_000) -> None:
        self.max_line = max_line
        self.max_lines = max_lines
        self._code: str | None = None
        self._lines: list[str] = []

    def feed(self, raw: bytes) -> Reply | None:
        """One line as read (with or without its CRLF); a Reply when it completes one."""
        if len(raw) > self.max_line:
            raise ProtocolError(f"FTP reply line longer than {self.max_line} bytes")
        line = raw.rstrip(b"\r\n").decode("utf-8", "surrogateescape")
        if self._code is None and line[3:4] == " " and line[:3].isdigit() and line[:3].isascii():
            return Reply(int(line[:3]), (line[4:],))  # the common one-line reply, without the regex
        m = _reply_start().match(line)
        if self._code is None:
            if m is None:
                raise ProtocolError(f"malformed FTP reply line: {line[:80]!r}")
            code, sep, text = m.groups()
            if sep == " ":
                return Reply(int(code), (text,))
            self._code = code
            self._lines = [text]
            return None
        if len(self._lines) >= self.max_lines:
            raise ProtocolError(f"FTP reply longer than {self.max_lines} lines")
        if m is not None and m.group(1) == self._code and m.group(2) == " ":
            self._lines.append(m.group(3))
            reply = Reply(int(self._code), tuple(self._lines))
            self._code, self._lines = None, []
            return reply
        # Continuation lines may repeat the code with "-" (RFC 959 4.2); keep the text only.
        self._lines.append(m.group(3) if m is not None and m.group(1) == self._code else line)
        return None


# Which error a failed reply becomes: the first row whose codes hold the reply's code and
# whose pattern (if any) occurs in its text wins. Codes alone are ambiguous across servers:
# ProFTPD says "550 x: Operation not permitted", inetutils/netkit "553 x: Permission denied",
# vsftpd "550 Permission denied." and "550 Failed to open file." for both missing and
# unreadable files. docs/ftp.md shows this table; keep the two in step.
_4XX = tuple(range(400, 500))
# The patterns are searched case-insensitively, compiled on the first failed reply.
_PERMISSION = (r"permission denied|operation not permitted|access (?:is )?denied|not authori[sz]ed"
               r"|insufficient privileges|not allowed to")  # Pure-FTPd: "... are not allowed to move/rename files"
_MISSING = r"no such file|not found|does not exist|doesn't exist|cannot find|can't find|no files found"
_NAME_REFUSED = r"forbidden file ?name|prohibited file ?name|file ?name not allowed"
REPLY_ERRORS: tuple[tuple[tuple[int, ...], str | None, type[TransferError]], ...] = (
    ((530, 532), None, AccessDenied),                         # not logged in / need an account
    ((421,), None, TemporaryFailure),                          # service closing (idle, too many users)
    ((450, 550, 553), _PERMISSION, AccessDenied),              # permission texts win over the code
    ((450, 550, 553), _MISSING, ResourceNotFound),             # 450/553 "No such file" too
    ((550, 553), _NAME_REFUSED, ProtocolError),                # the name, not the file: ProFTPD PathDenyFilter
    (_4XX, None, TemporaryFailure),                            # RFC 959: transient, retrying may help
    ((550,), None, ResourceNotFound),                          # "file unavailable", most often missing
)


def classify(reply: Reply) -> type[TransferError]:
    """The error class for a failed *reply*, from :data:`REPLY_ERRORS` (ProtocolError if no row matches)."""
    for codes, pattern, cls in REPLY_ERRORS:
        if reply.code in codes and (pattern is None or _ignoring_case(pattern).search(reply.text)):
            return cls
    return ProtocolError


@functools.cache
def _ignoring_case(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.I)


def error_for(reply: Reply, what: str, url: object = None) -> TransferError:
    """The error of the anyurl tree for a failed *reply* to *what* (e.g. "RETR x")."""
    return classify(reply)(f"{what} failed: {reply.text}", url=url, reply=reply.text)


def format_command(verb: str, arg: str | None = None) -> bytes:
    """The wire form of one command. The argument must already be checked by :func:`check_safe`."""
    if _has_control(arg):
        raise UnsafeURL(f"{verb} argument contains control characters; refusing to send it")
    line = verb if arg is None else f"{verb} {arg}"
    return line.encode("utf-8", "surrogateescape") + b"\r\n"


# ---------------------------------------------------------------------------
# The command plan for a URL
# ---------------------------------------------------------------------------


def _has_control(value: str | None) -> bool:
    return value is not None and ("\r" in value or "\n" in value or "\0" in value)  # (fast path)


def check_safe(url: FTPURL) -> None:
    """UnsafeURL if any decoded part that becomes a command argument holds CR, LF or NUL."""
    if not any(_has_control(v) for v in (url.user, url.password, url.name, *url.cwd)):
        if url.typecode is None or url.typecode in ("a", "i", "d"):
            return  # the common case: nothing to report, no labels built
    parts: list[tuple[str, str | None]] = [("user name", url.user), ("password", url.password)]
    parts += [(f"directory segment {i + 1}", seg) for i, seg in enumerate(url.cwd)]
    parts.append(("file name", url.name))
    for what, value in parts:
        refuse_controls(url, f"the {what}", value)
    if url.typecode is not None and url.typecode not in ("a", "i", "d"):
        raise UnsafeURL(f"unknown FTP typecode {url.typecode!r} (expected a, i or d)", url=url)


def login_credentials(url: FTPURL, anonymous_email: str) -> tuple[str, str | None]:
    """(user, password) to send. No user: anonymous with the e-mail address as password.
    An empty user ("ftp://@host/") is sent as an empty USER, distinct from anonymous."""
    if url.user is None:
        return "anonymous", url.password if url.password is not None else anonymous_email
    return url.user, url.password


def transfer_type(url: FTPURL, text_suffixes: tuple[str, ...] = DEFAULT_TEXT_SUFFIXES,
                  guess: bool = False) -> str:
    """"A" or "I": the typecode's, else binary ("I", byte-exact as curl, wget, lftp and
    urllib fetch), or with *guess* "A" for names ending in one of *text_suffixes*."""
    if url.typecode in ("a", "d"):
        return "A"
    if url.typecode == "i":
        return "I"
    if guess and url.name.lower().endswith(tuple(s.lower() for s in text_suffixes)):
        return "A"
    return "I"


class Plan(Record):
    """What a URL asks for, as FTP commands.

    ``cwds``: the CWD arguments in order. ``action``: "RETR" (a file, with
    fallback to a listing on 550 when ``fallback``), "NLST" (typecode d) or
    "LIST" (an empty name: the best listing the server offers). ``argument``:
    the name (with the directory when the strategy is nocwd). ``joinable``: several
    of ``cwds`` may go as one CWD to the absolute path (cwd_strategy "auto"); False
    sends exactly one CWD per segment (the RFC's sequence, "multicwd").
    """

    __slots__ = ("user", "password", "cwds", "type", "action", "argument", "fallback", "joinable")
    user: str
    password: str | None
    cwds: tuple[str, ...]
    type: str
    action: str
    argument: str
    fallback: bool
    joinable: bool

    def __init__(self, user: str, password: str | None, cwds: tuple[str, ...], type: str,  # noqa: A002
                 action: str, argument: str, fallback: bool, joinable: bool = True) -> None:
        _set(self, "user", user)
        _set(self, "password", password)
        _set(self, "cwds", cwds)
        _set(self, "type", type)
        _set(self, "action", action)
        _set(self, "argument", argument)
        _set(self, "fallback", fallback)
        _set(self, "joinable", joinable)


def plan(url: FTPURL, *, anonymous_email: str, cwd_strategy: str = "auto",
         text_suffixes: tuple[str, ...] = DEFAULT_TEXT_SUFFIXES, guess_type: bool = False) -> Plan:
    """The command plan of *url* (checks it with :func:`check_safe` first)."""
    check_safe(url)
    if cwd_strategy not in CWD_STRATEGIES:
        raise ValueError(f"cwd_strategy must be one of {CWD_STRATEGIES}, not {cwd_strategy!r}")
    user, password = login_credentials(url, anonymous_email)
    argument = url.name
    if cwd_strategy in ("auto", "multicwd"):
        cwds = tuple(url.cwd)
    elif cwd_strategy == "singlecwd":
        cwds = ("/".join(url.cwd),) if url.cwd else ()
    else:  # nocwd: one path argument to the transfer command
        cwds = ()
        if url.cwd:
            argument = "/".join((*url.cwd, url.name))
            if not url.name:
                argument = "/".join(url.cwd)
    if url.typecode == "d":
        action = "NLST"
    elif url.name == "":
        action = "LIST"
    else:
        action = "RETR"
    return Plan(user=user, password=password, cwds=cwds,
                type=transfer_type(url, text_suffixes, guess_type), action=action,
                argument=argument, fallback=action == "RETR" and url.typecode is None,
                joinable=cwd_strategy == "auto")


def absolute_cwd(login_dir: str, cwds: tuple[str, ...]) -> str | None:
    """One CWD argument equal to "CWD *login_dir*" followed by one CWD per segment of
    *cwds*, where that is sure to mean the same: the server's paths are Unix paths
    (PWD gave "/...") and every segment is a plain name (not empty, no "/", not "."
    or "..", no leading "~" a server might expand). Else None: send the sequence."""
    if not cwds or not login_dir.startswith("/"):
        return None
    for seg in cwds:
        if not seg or "/" in seg or seg in (".", "..") or seg.startswith("~"):
            return None
    return login_dir.rstrip("/") + "/" + "/".join(cwds)


def upload_names(final: str, token: str) -> list[tuple[str, str | None]]:
    """The names an atomic upload of *final* ("dir/name" or "name") tries, in order, with the
    method each stands for: a hidden temporary name, one without the leading dot (servers
    such as Pure-FTPd refuse dot names to anonymous users), then None: the name itself."""
    prefix, _, base = final.rpartition("/")
    head = prefix + "/" if prefix else ""
    return [("temp-dot", f"{head}.{base}.{token}.part"), ("temp", f"{head}{base}.{token}.part"), ("direct", None)]


def retry_stor_name(reply: str | None) -> bool:
    """True when a refused STOR of a temporary name may succeed under another name: 553
    ("file name not allowed", RFC 959: Pure-FTPd's "Prohibited file name") or 550 (ProFTPD's
    PathDenyFilter, many others), unless the text says permission denied: no name helps then."""
    if reply is None or reply[:3] not in ("550", "553") or not reply[:3].isdigit():
        return False
    return classify(Reply(int(reply[:3]), (reply[4:],))) is not AccessDenied


# ---------------------------------------------------------------------------
# Reply parsers
# ---------------------------------------------------------------------------

_EPSV = re.compile(r"\((.)\1\1(\d{1,5})\1\)")  # every passive transfer
_SIZE150 = re.compile(r"\((\d+) bytes\)")  # every RETR


@functools.cache
def _pasv() -> re.Pattern[str]:  # servers without EPSV only
    return re.compile(r"(\d{1,3}),(\d{1,3}),(\d{1,3}),(\d{1,3}),(\d{1,3}),(\d{1,3})")


def parse_epsv(reply: Reply) -> int:
    """The port of a 229 reply "(|||port|)" (RFC 2428)."""
    m = _EPSV.search(reply.lines[0] if len(reply.lines) == 1 else reply.text)
    if m is None or not 0 < int(m.group(2)) < 65536:
        raise ProtocolError(f"cannot parse EPSV reply: {reply.text}", reply=reply.text)
    return int(m.group(2))


def parse_pasv(reply: Reply) -> int:
    """The port of a 227 reply. The address in it is deliberately IGNORED: the data
    connection always goes to the control connection's host, so a server cannot aim
    the client at a third party (the FTP bounce / PASV redirection attack)."""
    m = _pasv().search(reply.text)
    if m is None:
        raise ProtocolError(f"cannot parse PASV reply: {reply.text}", reply=reply.text)
    hi, lo = int(m.group(5)), int(m.group(6))
    port = hi * 256 + lo
    if hi > 255 or lo > 255 or port == 0:
        raise ProtocolError(f"bad port in PASV reply: {reply.text}", reply=reply.text)
    return port


def parse_pwd(reply: Reply) -> str | None:
    """The directory of a 257 reply (``257 "/a ""quoted"" dir" ...``), or None if unparsable."""
    if reply.code != 257:
        return None
    text = reply.first
    start = text.find('"')
    if start < 0:
        return None
    out: list[str] = []
    i = start + 1
    while i < len(text):
        c = text[i]
        if c == '"':
            if i + 1 < len(text) and text[i + 1] == '"':
                out.append('"')
                i += 2
                continue
            return "".join(out)
        out.append(c)
        i += 1
    return None


def parse_size(reply: Reply) -> int | None:
    """The size of a 213 reply to SIZE (RFC 3659 4), else None."""
    text = reply.first.strip()
    return int(text) if reply.code == 213 and text.isdigit() else None


def parse_mdtm(reply: Reply) -> datetime | None:
    """The UTC time of a 213 reply to MDTM ("213 20240131120000[.123]"), else None."""
    if reply.code != 213:
        return None
    from .ftplist import mlsd_time

    return mlsd_time(reply.first.strip())


def parse_mlst(reply: Reply) -> ListItem | None:
    """The entry of a 250 reply to MLST (RFC 3659 7.2): the fact line starts with one space."""
    if reply.code != 250:
        return None
    for line in reply.lines[1:]:
        if line.startswith(" ") and "=" in line:
            from .ftplist import mlsd_item

            return mlsd_item(line[1:])
    return None


def parse_150_size(reply: Reply) -> int | None:
    """The "(N bytes)" many servers put in the 150 reply to RETR, else None."""
    m = _SIZE150.search(reply.lines[0] if len(reply.lines) == 1 else reply.text)
    return int(m.group(1)) if m else None


# ---------------------------------------------------------------------------
# Listings
# ---------------------------------------------------------------------------


class LineSplitter:
    """Listing bytes in, complete lines out (CRLF or LF; empty lines dropped), decoded
    UTF-8 with surrogateescape. A line longer than *max_line* bytes is a ProtocolError,
    so what is held back stays bounded however the server sends."""

    def __init__(self, max_line: int = 64 * 1024) -> None:
        self.max_line = max_line
        self._tail = b""

    def feed(self, data: bytes) -> list[str]:
        """The lines completed by *data*."""
        data = self._tail + data if self._tail else data
        head, sep, tail = data.rpartition(b"\n")
        if len(tail) > self.max_line:
            raise ProtocolError(f"listing line longer than {self.max_line} bytes")
        self._tail = tail
        if not sep:
            return []
        lines = head.split(b"\n")
        if max(map(len, lines)) > self.max_line + 1:  # +1: the CR before the LF
            raise ProtocolError(f"listing line longer than {self.max_line} bytes")
        return [text for raw in lines if (text := raw.rstrip(b"\r").decode("utf-8", "surrogateescape"))]

    def flush(self) -> list[str]:
        """The last line, when the data did not end with a newline."""
        tail, self._tail = self._tail, b""
        text = tail.rstrip(b"\r").decode("utf-8", "surrogateescape")
        return [text] if text else []


def split_lines(data: bytes) -> list[str]:
    """Listing data split into lines (CRLF or LF), decoded UTF-8 with surrogateescape."""
    text = data.decode("utf-8", "surrogateescape")
    return [line.rstrip("\r") for line in text.split("\n") if line.rstrip("\r")]


def child_url(url: FTPURL, directory: tuple[str, ...], item: ListItem) -> str:
    """The absolute URL of *item* listed in *directory* (decoded segments) on *url*'s server.

    The serializer percent-encodes "/", ";", "%", spaces and the rest, so the
    URL designates exactly that name. A directory gets a trailing "/" (an
    empty name, which lists it). The password is left out: listings are
    printed, and the Client's credentials or ~/.netrc supply it again.
    """
    if item.kind == "directory":
        child = dataclasses.replace(url, password=None, cwd=(*directory, item.name), name="", typecode=None)
    else:
        child = dataclasses.replace(url, password=None, cwd=directory, name=item.name, typecode=None)
    return str(child)


def directory_text(url: FTPURL, directory: tuple[str, ...]) -> str:
    """The URL text of *directory* (decoded segments) on *url*'s server, password left out,
    ending in "/": what :func:`child_url` writes before an entry's encoded name."""
    return str(dataclasses.replace(url, password=None, cwd=directory, name="", typecode=None))


def entry_text(prefix: str, name: str) -> str:
    """The URL text of the file *name* in the directory whose :func:`directory_text` is
    *prefix* (a directory adds "/"): the serializer's own encoding of a last segment."""
    return prefix + percent_encode(name, FPATH.safe)


def child_urls(url: FTPURL, directory: tuple[str, ...]) -> Callable[[ListItem], str]:
    """:func:`child_url` for the entries of one listing: the directory's part of the
    URL (scheme, login, host, encoded segments) is serialized once, and each entry
    adds only its encoded name, and "/" for a directory. The text is exactly
    child_url's (the serializer ends the directory's path with "/" and joins the
    name's encoding after it); a test compares the two on awkward names."""
    prefix = directory_text(url, directory)

    def child(item: ListItem) -> str:
        text = entry_text(prefix, item.name)
        return text + "/" if item.kind == "directory" else text

    return child


def symlink_key(url: FTPURL, directory: tuple[str, ...], target: str, login_dir: str | None = None) -> str | None:
    """The URL of what a symlink in *directory* points at (its ``Entry.key``), or None when
    a relative target leads above the top. A relative target is resolved against
    *directory*. An absolute one is a path on the server, not in the URL tree (whose top is
    the login directory, section 3.2.2): under *login_dir* (PWD's Unix path) it becomes the
    relative URL, else the RFC's absolute form, a first CWD with "/" (``ftp://h/%2Fx/y``).
    The URL has no trailing "/": the listing does not say whether the target is a directory."""
    absolute = target.startswith("/")
    if not absolute and directory and directory[0].startswith("/"):
        absolute = True  # listed through an absolute first CWD: the directory is a server path
        target = "/".join(directory) + "/" + target
    if absolute:
        parts: list[str] = []
        for part in target.split("/"):
            if part == "..":
                if parts:
                    parts.pop()  # "/.." is "/"
            elif part not in ("", "."):
                parts.append(part)
        home = login_dir.split("/")[1:] if login_dir and login_dir.startswith("/") else None
        if home is not None and home[-1:] == [""]:
            home.pop()  # "/" or a trailing "/"
        if home is not None and parts[:len(home)] == home:
            segs = parts[len(home):]
        elif not parts:
            return str(dataclasses.replace(url, password=None, cwd=(), name="/", typecode=None))
        elif len(parts) == 1:
            return str(dataclasses.replace(url, password=None, cwd=(), name="/" + parts[0], typecode=None))
        else:
            return str(dataclasses.replace(url, password=None, cwd=("/" + parts[0], *parts[1:-1]),
                                           name=parts[-1], typecode=None))
    else:
        segs = list(directory)
        for part in target.split("/"):
            if part in ("", "."):
                continue
            if part == "..":
                if not segs:
                    return None
                segs.pop()
            else:
                segs.append(part)
    if not segs:
        return str(dataclasses.replace(url, password=None, cwd=(), name="", typecode=None))
    return str(dataclasses.replace(url, password=None, cwd=tuple(segs[:-1]), name=segs[-1], typecode=None))


# ---------------------------------------------------------------------------
# TYPE A newline conversion
# ---------------------------------------------------------------------------


class CRLFDecoder:
    """Converts CRLF to "\\n" in a stream of chunks (a CR at a chunk's end waits for the next)."""

    def __init__(self) -> None:
        self._cr = False

    def feed(self, chunk: bytes) -> bytes:
        """Converted bytes of *chunk* (may hold back one trailing CR)."""
        if self._cr:
            chunk = b"\r" + chunk
            self._cr = False
        if chunk.endswith(b"\r"):
            chunk = chunk[:-1]
            self._cr = True
        return chunk.replace(b"\r\n", b"\n")

    def flush(self) -> bytes:
        """The held-back CR, if the stream ended with one."""
        if self._cr:
            self._cr = False
            return b"\r"
        return b""

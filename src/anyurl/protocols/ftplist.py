"""FTP directory listings (MLSD, LIST, NLST) read into :class:`ListItem` values, with no I/O.

LIST has no standard format (RFC 959 leaves it to the server), so each line is tried
against the formats the widely used clients know (lftp, wget, Apache Commons Net,
ftputil, D. J. Bernstein's ftpparse), as their documentation describes them:

* **Unix** ``ls -l``: with or without the link count and the group, owners and groups
  holding spaces (``maxm Domain Users``), numeric ids, English, other European and
  CJK month names (``Mär``, ``janv.``, ``1月``), day-first dates (``15. Jan``), ISO dates
  (``2024-01-15 10:30``, ``--full-iso``), BSD ``-T`` times, devices (``1, 3`` instead of a
  size), symlinks ``name -> target``; NetPresenz/WebSTAR Mac lines read the same way.
* **DOS/IIS**: ``01-31-24  09:15PM  <DIR>  name``, 12 or 24 hours, 2 or 4 digit years.
* **EPLF** (ftpparse's own, ``+i8388621.48594,m825718503,r,s280,\\tdjb.html``).
* **VMS**: ``NAME.EXT;3  12/14  2-JAN-2024 10:00:00  [GRP,OWN]  (RWED,RWED,RE,)``, an
  entry split over two lines, ``X.DIR;1`` directories, older versions.
* **MVS** (z/OS): datasets (``Volume Unit Referred ... Dsorg Dsname``; ``PO`` is a
  directory), members of a partitioned dataset, ``Migrated``/``Pseudo Directory`` lines.
  JES job lists (``SITE FILETYPE=JES``): each job is a file named by its id.
* **OS/400** (IBM i): ``OWNER size date time *TYPE name``, members ``*MEM``.
* **OS/2**: ``345  A  10-29-97  08:43  name``, ``DIR`` for directories.
* **Netware**: ``d [RWCEAFMS] owner 512 Apr 13 23:12 name``.
* **Enterprise Unix** (Sterling Connect): ``-C--E-----FTP B QUA1I1 18128 41 Aug 12 13:56 NAME``.

A line no format reads is never dropped: it becomes an item of kind ``"info"`` whose
name is the line's last word and whose ``meta`` holds the line (``format: "unknown"``);
:class:`ListParser` counts such lines so the driver can log them and, when no line
of a listing was read, ask NLST instead. Directory totals (``total 12``), headers
(``Directory DISK$USER:[X]``, ``Volume Unit ...``) and ``.``/``..`` are not entries.
A name no directory can hold (``/``, NUL: a hostile or garbled line) is refused.

Sizes in blocks, tracks or records (VMS, MVS) are not bytes: ``size`` is then None
and the count is in ``meta``. Times carry no zone on the wire and are given as UTC.
The work per line is bounded (:data:`MAX_FORMATTED_LINE`, 16 words scanned for an
``ls -l`` date): a hostile 64 KiB line costs about what reading it costs.
"""

from __future__ import annotations

import functools
import itertools
import re
from typing import TYPE_CHECKING, Any

from .._record import Record

if TYPE_CHECKING:
    from datetime import datetime

__all__ = [
    "INFO",
    "MAX_FORMATTED_LINE",
    "ListItem",
    "ListParser",
    "is_name",
    "mlsd_time",
    "parse_list",
    "parse_list_line",
    "parse_mlsd",
    "parse_mlsd_line",
    "parse_nlst",
    "parse_nlst_line",
]

_set = object.__setattr__  # how a frozen Record's __init__ sets its fields

#: the kind of an item read from a line in no known format (an :data:`anyurl.response.ENTRY_KINDS` value)
INFO = "info"


class ListItem(Record):
    """One parsed listing line. ``kind``: "file", "directory", "symlink" (``target`` its
    target where the listing shows it) or "info" (a line in no known format); ``known`` is
    False when the listing gave a name only (NLST) or a type it does not say is a file
    (kind is then "file"). ``facts``: MLSD's facts; ``meta``: what an exotic LIST format
    says beyond name, kind, size and time (``format``, VMS ``blocks``, MVS ``dsorg``...)."""

    __slots__ = ("name", "kind", "size", "modified", "target", "facts", "known", "meta")  # a listing may keep a million
    name: str
    kind: str
    size: int | None
    modified: datetime | None
    target: str | None
    facts: tuple[tuple[str, str], ...]
    known: bool
    meta: tuple[tuple[str, Any], ...]

    def __init__(self, name: str, kind: str = "file", size: int | None = None, modified: datetime | None = None,
                 target: str | None = None, facts: tuple[tuple[str, str], ...] = (), known: bool = True,
                 meta: tuple[tuple[str, Any], ...] = ()) -> None:
        _set(self, "name", name)
        _set(self, "kind", kind)
        _set(self, "size", size)
        _set(self, "modified", modified)
        _set(self, "target", target)
        _set(self, "facts", facts)
        _set(self, "known", known)
        _set(self, "meta", meta)


def is_name(name: str) -> bool:
    """A name a directory can hold: not empty, "." or "..", no "/" or NUL. Anything else in a
    listing is a hostile or garbled line ("../../etc/passwd"): the entry's ``name`` must be
    safe to use as a local file name, so the line is refused."""
    return bool(name) and name not in (".", "..") and "/" not in name and "\0" not in name


def _num(text: str) -> bool:
    """ASCII digits only: str.isdigit() also accepts "²", which int() refuses."""
    return text.isascii() and text.isdigit()


def _utc(y: int, mo: int, d: int, h: int = 0, mi: int = 0, s: int = 0) -> datetime | None:
    from datetime import UTC, datetime  # listings only: not imported at start-up

    try:
        return datetime(y, mo, d, h, mi, s, tzinfo=UTC)
    except ValueError:
        return None


# ---------------------------------------------------------------------------
# MLSD (RFC 3659) and NLST
# ---------------------------------------------------------------------------


@functools.cache
def _mlsd_time_re() -> re.Pattern[str]:
    return re.compile(r"(\d{4})(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)(?:\.\d+)?")


def mlsd_time(value: str) -> datetime | None:
    """The UTC time of an MLSD ``modify`` fact or an MDTM reply ("20240131120000[.123]")."""
    m = _mlsd_time_re().fullmatch(value)
    return None if m is None else _utc(*(int(g) for g in m.groups()))


def parse_mlsd_line(line: str) -> ListItem | None:
    """One MLSD line "fact=value;fact=value; name" (RFC 3659 7.2); None for "." and "..",
    for a line without facts and for a name no directory can hold."""
    item = mlsd_item(line)
    if item is None or not is_name(item.name) or dict(item.facts).get("type", "").lower() in ("cdir", "pdir"):
        return None
    return item


def mlsd_item(line: str) -> ListItem | None:
    """One "facts name" line as an item, "." and cdir included (MLST reports the directory itself)."""
    facts_text, sep, name = line.partition(" ")
    if not sep or not name:
        return None
    facts: dict[str, str] = {}
    for fact in facts_text.split(";"):
        key, eq, value = fact.partition("=")
        if eq:
            facts[key.strip().lower()] = value
    ftype = facts.get("type", "").lower()
    target: str | None = None
    known = True
    if ftype in ("dir", "cdir", "pdir"):
        kind = "directory"
    elif ftype == "file":
        kind = "file"
    elif ftype.startswith("os.unix=slink") or ftype.startswith("os.unix=symlink"):
        kind = "symlink"
        # "OS.unix=slink:/target" (proftpd) names the target
        target = facts.get("type", "").partition(":")[2] or None
    else:
        kind, known = "file", False  # a device, a FIFO, an OS-specific type: see facts
    size: int | None = None
    raw_size = facts.get("size") or facts.get("sizd")
    if raw_size is not None and _num(raw_size):
        size = int(raw_size)
    modified = mlsd_time(facts["modify"]) if "modify" in facts else None
    return ListItem(name=name, kind=kind, size=size, modified=modified, target=target,
                    facts=tuple(sorted(facts.items())), known=known)


def parse_mlsd(lines: list[str]) -> list[ListItem]:
    """Every entry of an MLSD listing (lines without their CRLF)."""
    return [item for item in map(parse_mlsd_line, lines) if item is not None]


def parse_nlst_line(line: str) -> ListItem | None:
    """One NLST name. Some servers prefix the directory ("dir/name"): keep the last part."""
    if not line:
        return None
    name = line.rstrip("/").rsplit("/", 1)[-1]
    return ListItem(name=name, known=False) if is_name(name) else None


def parse_nlst(lines: list[str]) -> list[ListItem]:
    """NLST: one name per line (see :func:`parse_nlst_line`)."""
    return [item for item in map(parse_nlst_line, lines) if item is not None]


# ---------------------------------------------------------------------------
# Dates
# ---------------------------------------------------------------------------

# Month abbreviations as ls prints them in the locales servers run in (a trailing "." is
# dropped first); all map each spelling to one month, so no locale needs to be chosen.
_MONTH_NAMES = {
    1: "jan january janv janvier ene enero gen gennaio jän jänner januar janeiro sty styczeń янв января январь січ",
    2: "feb february febr févr février fév febrero febbraio fev fevereiro februar lut luty фев февраля февраль лют",
    3: "mar march mär märz mrz mars marzo março maart mrt мар марта март бер",
    4: "apr april avr avril abr abril aprile kwi kwiecień апр апреля апрель кві",
    5: "may mai mayo mag maggio maio mei maj мая май тра",
    6: "jun june juin junio giu giugno juni junho cze czerwiec июн июня июнь чер",
    7: "jul july juil juillet julio lug luglio juli julho lip lipiec июл июля июль лип",
    8: "aug august août aou ago agosto augustus sie sierpień авг августа август сер",
    9: "sep sept september septembre septiembre set settembre setembro wrz wrzesień сен сентября сентябрь вер",
    10: "oct october octobre octubre ott ottobre out outubro okt oktober paź październik окт октября октябрь жов",
    11: "nov november novembre noviembre novembro lis listopad ноя ноября ноябрь лис",
    12: "dec december déc décembre dic diciembre dicembre dez dezember dezembro des desember gru grudzień "
        "дек декабря декабрь гру",
}
_MONTHS: dict[str, int] = {word: n for n, words in _MONTH_NAMES.items() for word in words.split()}


def _month(text: str) -> int | None:
    """The month a word names: an abbreviation or name (case, a trailing "." ignored), or a
    CJK "1月"/"1월"."""
    word = text.lower().rstrip(".")
    n = _MONTHS.get(word)
    if n is not None:
        return n
    if word[-1:] in ("月", "월") and word[:-1].isdigit() and word[:-1].isascii():
        n = int(word[:-1])
        return n if 1 <= n <= 12 else None
    return None


def _day(text: str) -> int | None:
    """A day of the month: "5", "05", "5." (German) or "5日" (CJK)."""
    t = text.rstrip(".日일")
    if t.isdigit() and t.isascii() and 1 <= len(t) <= 2 and 1 <= int(t) <= 31:
        return int(t)
    return None


@functools.cache
def _hhmm_re() -> re.Pattern[str]:
    return re.compile(r"(\d{1,2}):(\d\d)(?::(\d\d)(?:\.\d+)?)?")


def _year(text: str) -> int | None:
    t = text.rstrip("年년")
    return int(t) if len(t) == 4 and t.isdigit() and t.isascii() else None


def _recent(mon: int, day: int, hour: int, minute: int, now: datetime, second: int = 0) -> datetime | None:
    """ls's "Mon DD HH:MM": within the last six months, so a date ahead of *now* is last year's."""
    when = _utc(now.year, mon, day, hour, minute, second)
    if when is None and mon == 2 and day == 29:  # 29 Feb of last year, seen in a non-leap year
        return _utc(now.year - 1, mon, day, hour, minute, second)
    if when is not None and (when - now).days > 1:
        when = _utc(now.year - 1, mon, day, hour, minute, second)
    return when


def _clock(text: str) -> tuple[int, int, int] | None:
    m = _hhmm_re().fullmatch(text)
    if m is None:
        return None
    h, mi, s = int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)
    return (h, mi, s) if h < 24 and mi < 60 and s < 61 else None


def _numeric_date(a: str, b: str, c: str, orders: str) -> tuple[int, int, int] | None:
    """(year, month, day) of three numeric fields, read in the first of *orders* ("MDY DMY
    YMD") that makes a valid date: such dates are ambiguous, so each format's usual order
    comes first. Two-digit years are 1970-2069."""
    for order in orders.split():
        parts = dict(zip(order, (a, b, c), strict=True))
        if len(parts["Y"]) not in (2, 4) or len(parts["M"]) > 2 or len(parts["D"]) > 2:
            continue
        y, mo, d = int(parts["Y"]), int(parts["M"]), int(parts["D"])
        if y < 100:
            y += 2000 if y < 70 else 1900
        if _utc(y, mo, d) is not None:
            return y, mo, d
    return None


# ---------------------------------------------------------------------------
# Unix ls -l
# ---------------------------------------------------------------------------

# The common shape (vsftpd, ProFTPD, pyftpdlib, Pure-FTPd): one regex, no token scan. The
# owner and group are the fewest words before a size and an English date (spaces allowed).
@functools.cache
def _unix_fast_re() -> re.Pattern[str]:
    return re.compile(
        r"([-dlf])[-rwxsStT]{9}[.+@]?\s+\d+\s+(?:\S+\s+){1,20}?(\d+)\s+"
        r"([A-Za-z]{3})\s+(\d{1,2})\s+(?:(\d{1,2}):(\d\d)|(\d{4})) (.+)\Z", re.S)


@functools.lru_cache(maxsize=4096)  # a listing's lines share few dates: each built once
def _fast_date(mon_text: str, day_text: str, hh: str | None, mm: str | None, year: str | None,
               now: datetime) -> datetime | None | bool:
    """The date of a fast-path line; False when the month or day is no date (then the line
    is scanned word by word)."""
    mon = _MONTHS.get(mon_text.lower())
    day = _day(day_text)
    if mon is None or day is None:
        return False
    if year:
        return _utc(int(year), mon, day)
    return _recent(mon, day, int(hh or 0), int(mm or 0), now)


@functools.cache
def _perms_re() -> re.Pattern[str]:
    # type, 9 permission characters (ACL/extended-attribute marks after them)
    return re.compile(r"[-dlfcbpsDnwM?][-rwxsStTlLAaE?]{9}[.+@*]?\Z")


@functools.cache
def _token_re() -> re.Pattern[str]:
    return re.compile(r"\S+")


@functools.cache
def _device_re() -> re.Pattern[str]:
    return re.compile(r"\d+,(?:\d+)?")


@functools.cache
def _iso_day_re() -> re.Pattern[str]:
    return re.compile(r"(\d{4})-(\d\d)-(\d\d)\Z")


@functools.cache
def _md_re() -> re.Pattern[str]:
    return re.compile(r"(\d\d)-(\d\d)\Z")  # --time-style=iso for a recent file


def _date_at(words: list[str], i: int, now: datetime) -> tuple[datetime | None, int] | None:
    """A date starting at word *i* and the index after it, in one of the shapes ls prints."""
    w = words[i]
    rest = len(words) - i
    if rest >= 2:
        m = _iso_day_re().match(w)
        if m is not None:  # 2024-01-15 10:30[:00[.000000000]] [+0000], or the date alone
            y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
            clock = _clock(words[i + 1])
            if clock is None:
                return _utc(y, mo, d), i + 1
            end = i + 2
            if end < len(words) - 1 and re.fullmatch(r"[-+]\d{4}", words[end]):
                end += 1  # --full-iso's zone: the time is local to it; given as written
            return _utc(y, mo, d, *clock), end
        m = _md_re().match(w)
        if m is not None and rest >= 3:
            clock = _clock(words[i + 1])
            if clock is not None:
                return _recent(int(m.group(1)), int(m.group(2)), clock[0], clock[1], now), i + 2
    if rest < 4:  # three date words and a name
        return None
    mon = _month(w)
    day = None
    if mon is not None:
        day = _day(words[i + 1])
    else:
        day = _day(w)
        if day is not None:
            mon = _month(words[i + 1])
    if mon is None or day is None:
        return None
    third = words[i + 2]
    year = _year(third)
    if year is not None:
        return _utc(year, mon, day), i + 3
    clock = _clock(third)
    if clock is None:
        return None
    if rest >= 5:  # BSD ls -T: "Jan 15 10:30:45 2024"
        year = _year(words[i + 3])
        if year is not None:
            return _utc(year, mon, day, *clock), i + 4
    return _recent(mon, day, clock[0], clock[1], now, clock[2]), i + 3


def _kind_of(t: str) -> tuple[str, bool]:
    if t == "d":
        return "directory", True
    if t == "l":
        return "symlink", True
    return "file", t in "-f"  # "f": a plain file, as some servers write it


def _unix_item(t: str, size: int | None, when: datetime | None, name: str,
               meta: tuple[tuple[str, Any], ...] = ()) -> ListItem | None:
    kind, known = _kind_of(t)
    target = None
    if kind == "symlink" and " -> " in name:
        name, _, target = name.partition(" -> ")
    if not is_name(name):
        return None
    return ListItem(name=name, kind=kind, size=size if kind == "file" else None, modified=when,
                    target=target, known=known, meta=meta)


_REFUSED = ListItem("<refused>", INFO)  # a line read, whose name no directory can hold
_NOT_ENTRY = ListItem("<not an entry>", INFO)  # a total, a header, "." or ".."


@functools.cache
def _glued_re() -> re.Pattern[str]:
    return re.compile(r"([-dlfcbps][-rwxsStT]{9}[.+@]?)(\d)")


def _unglue(line: str) -> str:
    """"drwxr-x---+1464 owner ...": a link count of 4 digits leaves no blank after the
    permissions (ls pads the column to its widest value); one is put back."""
    m = _glued_re().match(line)
    return line if m is None else f"{m.group(1)} {line[m.end(1):]}"


def _unix(line: str, now: datetime) -> ListItem | None:
    item = _unix_fast(line, now)
    return _unix_scan(line, now) if item is None else item


def _unix_fast(line: str, now: datetime) -> ListItem | None:
    if line[10:11].isdigit() or line[11:12].isdigit():
        line = _unglue(line)
    m = _unix_fast_re().match(line)
    if m is not None:
        t, size, mon, day, hh, mm, year, name = m.groups()
        when = _fast_date(mon, day, hh, mm, year, now)
        if when is not False:
            assert when is not True
            if name in (".", ".."):
                return _NOT_ENTRY
            item = _unix_item(t, int(size), when, name)
            return _REFUSED if item is None else item
    return None


_SCAN_WORDS = 24  # words of an ls -l line before its date, at most (a Cygwin group may hold 13)


def _unix_scan(line: str, now: datetime) -> ListItem | None:
    """Any ls -l shape: the permissions first; then, left to right, the first place where a
    size is followed by a date the name follows (so owners and groups may hold spaces)."""
    # the date starts within the first words (perms, links, owner and group of a few words
    # each, size): a line's later words are its name, never scanned
    if line[10:11].isdigit() or line[11:12].isdigit():
        line = _unglue(line)
    spans = [(m.start(), m.end()) for m in itertools.islice(_token_re().finditer(line), _SCAN_WORDS + 5)]
    words = [line[a:b] for a, b in spans]
    first = 0
    if len(words) > 1 and _num(words[0]) and _perms_re().match(words[1]):
        first = 1  # ls -s: the block count before the permissions
    if not words or not _perms_re().match(words[first]):
        return None
    t = words[first][0]
    for i in range(first + 2, min(len(words) - 1, first + _SCAN_WORDS)):
        size_word = words[i - 1]
        if not (_num(size_word) or _device_re().fullmatch(size_word)):
            continue
        found = _date_at(words, i, now)
        if found is None:
            continue
        when, end = found
        if end >= len(words):
            continue
        start = spans[end - 1][1] + 1  # one blank after the date, then the name (leading blanks kept)
        if line[start:start + 1] == " " and _iso_day_re().match(words[end - 1]):
            start += 1  # --time-style=iso pads an old file's date to the width of "MM-DD HH:MM"
        name = line[start:]
        if not name or line[start - 1] not in " \t":
            continue
        size: int | None
        meta: tuple[tuple[str, Any], ...] = ()
        if not _num(size_word):  # a device: "major,minor" or "major, minor" where the size would be
            size, meta = None, (("device", size_word.rstrip(",")),)
            if size_word.endswith(","):
                continue  # "1," then the minor number: the size word is the minor
        elif i - 2 > first and t in "bc" and _device_re().fullmatch(words[i - 2]) and words[i - 2].endswith(","):
            size, meta = None, (("device", f"{words[i - 2][:-1]},{size_word}"),)
        else:
            size = int(size_word)
        if name in (".", ".."):
            return _NOT_ENTRY
        item = _unix_item(t, size, when, name, meta)
        return _REFUSED if item is None else item
    return None


# ---------------------------------------------------------------------------
# The other formats, one pattern each
# ---------------------------------------------------------------------------


@functools.cache
def _dos_re() -> re.Pattern[str]:
    return re.compile(
        r"(\d{1,4})([-/.])(\d{1,2})\2(\d{2,4})\s+(\d{1,2}):(\d\d)(?::\d\d)?(?:\s?([AaPp][Mm]))?\s+"
        r"(<DIR>|[\d,]+)\s+(.+)\Z", re.S)


def _dos(line: str) -> ListItem | None:
    m = _dos_re().match(line)
    if m is None:
        return None
    a, b, c = m.group(1), m.group(3), m.group(4)
    # IIS writes MM-DD-YY[YY]; dots are a day-first locale's (a German Windows "dir": 31.01.2024)
    orders = "YMD" if len(a) == 4 else "DMY MDY" if m.group(2) == "." else "MDY DMY"
    ymd = _numeric_date(a, b, c, orders)
    hour, minute = int(m.group(5)), int(m.group(6))
    ap = (m.group(7) or "").upper()
    if ap == "PM" and hour < 12:
        hour += 12
    elif ap == "AM" and hour == 12:
        hour = 0
    when = None if ymd is None else _utc(*ymd, hour, minute)
    is_dir = m.group(8) == "<DIR>"
    size = None if is_dir else int(m.group(8).replace(",", ""))
    name = m.group(9)
    if name in (".", ".."):
        return _NOT_ENTRY
    if not is_name(name):
        return _REFUSED
    return ListItem(name=name, kind="directory" if is_dir else "file", size=size, modified=when)


def _eplf(line: str) -> ListItem | None:
    """"+facts,facts,...\\tname" (draft-bernstein-eplf): r retrievable, / a directory,
    s size, m modification time in seconds since 1970 UTC, i an identifier."""
    facts, tab, name = line[1:].partition("\t")
    if not tab or not name:
        return None
    parts = facts.split(",")
    kind = "directory" if "/" in parts else "file"
    known = "/" in parts or "r" in parts  # neither: something one can neither list nor retrieve
    size: int | None = None
    when: datetime | None = None
    ident: str | None = None
    for fact in parts:
        if fact[:1] == "s" and fact[1:].isdigit() and fact[1:].isascii():
            size = int(fact[1:])
        elif fact[:1] == "m" and fact[1:].isdigit() and fact[1:].isascii() and len(fact) < 13:
            from datetime import UTC, datetime

            when = datetime.fromtimestamp(int(fact[1:]), UTC)
        elif fact[:1] == "i" and len(fact) > 1:
            ident = fact[1:]
    if not is_name(name):
        return _REFUSED
    meta: tuple[tuple[str, Any], ...] = (("format", "eplf"),) + ((("id", ident),) if ident else ())
    return ListItem(name=name, kind=kind, size=None if kind == "directory" else size, modified=when,
                    known=known, meta=meta)


@functools.cache
def _vms_re() -> re.Pattern[str]:
    # NAME.EXT;VERSION, then (maybe on the next line) blocks used[/allocated], date, time, [owner], (protection)
    return re.compile(r"([^\s;]+);(\d+)(?:\s+(.*))?\Z", re.S)


@functools.cache
def _vms_rest_re() -> re.Pattern[str]:
    return re.compile(
        r"(\d+)(?:/(\d+))?\s+(\d{1,2})-([A-Za-z]{3})-(\d{2,4})\s+(\d{1,2}):(\d\d)(?::(\d\d)(?:\.\d+)?)?"
        r"(?:\s+(\[[^\]]*\]))?(?:\s+(\([^)]*\)))?\s*\Z")


_VMS_BLOCK = 512  # bytes in a VMS disk block


def _vms(line: str, seen: set[str] | None = None) -> ListItem | None:
    m = _vms_re().match(line)
    if m is None:
        return None
    return _vms_entry(m.group(1), m.group(2), (m.group(3) or "").strip(), seen)


def _vms_entry(name: str, version: str, rest: str, seen: set[str] | None) -> ListItem | None:
    meta: list[tuple[str, Any]] = [("format", "vms"), ("version", int(version))]
    when = None
    r = _vms_rest_re().match(rest) if rest else None
    if r is not None:
        mon = _month(r.group(4))
        year = int(r.group(5))
        if year < 100:
            year += 2000 if year < 70 else 1900
        if mon is not None:
            when = _utc(year, mon, int(r.group(3)), int(r.group(6)), int(r.group(7)), int(r.group(8) or 0))
        blocks = int(r.group(1))
        # a count of 512-byte blocks: the size rounded up, not bytes (size stays None)
        meta += [("blocks", blocks), ("size_approx", blocks * _VMS_BLOCK)]
        if r.group(9):
            meta.append(("owner", r.group(9)))
        if r.group(10):
            meta.append(("protection", r.group(10)))
    elif rest:
        meta.append(("note", rest))  # "%RMS-E-PRV, insufficient privilege...": the entry without details
    kind = "file"
    if name.upper().endswith(".DIR"):
        kind, name = "directory", name[:-4]
    if seen is not None:  # VMS lists the newest version first; an older one keeps its ";N"
        if name.upper() in seen:
            name = f"{name};{version}"
        else:
            seen.add(name.upper())
    if not is_name(name):
        return _REFUSED
    return ListItem(name=name, kind=kind, modified=when, meta=tuple(meta))


@functools.cache
def _mvs_dataset_re() -> re.Pattern[str]:
    # Volume Unit Referred Ext Used Recfm Lrecl BlkSz Dsorg Dsname
    return re.compile(r"(\S+)\s+(\S+)\s+(\d{4}/\d\d/\d\d|\*\*NONE\*\*)\s+(\d+)\s+(\d+)\s+(\S+)\s+(\d+)\s+(\d+)"
                      r"\s+(\S+)\s+(\S+)\s*\Z")


@functools.cache
def _mvs_member_re() -> re.Pattern[str]:
    # Name VV.MM Created Changed Size Init Mod Id
    return re.compile(r"(\S+)\s+(\d\d\.\d\d)\s+(\d{4})/(\d\d)/(\d\d)\s+(\d{4})/(\d\d)/(\d\d)\s+(\d\d):(\d\d)(?::\d\d)?"
                      r"\s+(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s*\Z")


@functools.cache
def _mvs_other_re() -> re.Pattern[str]:
    # datasets that are not on a disk now: their name only
    return re.compile(r"(Migrated|Pseudo Directory|ARCIVE Not Direct Access Device|Not Mounted|"
                      r"Error determining attributes)\s+(\S+)\s*\Z")


@functools.cache
def _jes_re() -> re.Pattern[str]:
    # SITE FILETYPE=JES: "JOBNAME JOBID [OWNER] STATUS ..." (level 2 has the owner and a class)
    return re.compile(r"(\S+)\s+((?:JOB|TSU|STC|J|T|S)\d{4,7})\s+(?:(\S+)\s+)?(OUTPUT|INPUT|ACTIVE|HELD)\b\s*(.*)\Z",
                      re.S)


def _mvs(line: str) -> ListItem | None:
    m = _mvs_dataset_re().match(line)
    if m is not None:
        dsorg = m.group(9)
        kind, known = ("directory", True) if dsorg in ("PO", "PO-E") else ("file", dsorg == "PS")
        meta: tuple[tuple[str, Any], ...] = (("format", "mvs"), ("volume", m.group(1)), ("dsorg", dsorg),
                                             ("recfm", m.group(6)), ("lrecl", int(m.group(7))),
                                             ("blksize", int(m.group(8))), ("tracks", int(m.group(5))))
        return _named(m.group(10), kind, None, None, known, meta)
    m = _mvs_member_re().match(line)
    if m is not None:
        g = [int(x) if _num(x) else 0 for x in m.groups()]
        when = _utc(g[5], g[6], g[7], g[8], g[9])
        meta = (("format", "mvs"), ("version", m.group(2)), ("lines", g[10]), ("user", m.group(14)))
        return _named(m.group(1), "file", None, when, True, meta)
    m = _jes_re().match(line)
    if m is not None:  # a job: RETR of its id gets its output
        status = m.group(4)
        meta = (("format", "mvs-jes"), ("job", m.group(1)), ("status", status))
        if m.group(3):
            meta += (("owner", m.group(3)),)
        return _named(m.group(2), "file", None, None, status == "OUTPUT", meta)
    m = _mvs_other_re().match(line)
    if m is not None:
        what = m.group(1)
        kind = "directory" if what == "Pseudo Directory" else "file"
        return _named(m.group(2), kind, None, None, kind == "directory",
                      (("format", "mvs"), ("state", what.lower())))
    return None


def _named(name: str, kind: str, size: int | None, when: datetime | None, known: bool,
           meta: tuple[tuple[str, Any], ...]) -> ListItem:
    if not is_name(name):
        return _REFUSED
    return ListItem(name=name, kind=kind, size=size, modified=when, known=known, meta=meta)


@functools.cache
def _os400_re() -> re.Pattern[str]:
    # [OWNER] [size] [date time] *TYPE [name]: a member list may give no owner or statistics
    return re.compile(r"\s*(?:([^\s*]\S*)\s+)?(?:(\d+)\s+)?(?:(\d\d)([./-])(\d\d)\4(\d\d(?:\d\d)?)\s+"
                      r"(\d\d):(\d\d):(\d\d)\s+)?(\*[A-Z]+)(?:\s+(.+?))?\s*\Z", re.S)


_OS400_DIRS = frozenset({"*DIR", "*DDIR", "*LIB", "*FLR", "*FILE"})
_OS400_FILES = frozenset({"*STMF", "*DSTMF", "*MEM", "*DOC", "*SAVF", "*USRSPC"})


def _os400(line: str) -> ListItem | None:
    m = _os400_re().match(line)
    if m is None:
        return None
    otype, name = m.group(10), m.group(11)
    if not name:
        return _NOT_ENTRY  # the *FILE line of the file being listed (its members follow)
    name = name.rstrip("/").rsplit("/", 1)[-1]  # "testDir1/", "AFILE/AMEMBER"
    when = None
    if m.group(3):
        sep = m.group(4)
        # IBM i writes the system's date format; yy/mm/dd is its default, mm/dd/yy and dd.mm.yy others'
        orders = {".": "DMY MDY YMD", "/": "YMD MDY DMY"}.get(sep, "MDY YMD DMY")
        ymd = _numeric_date(m.group(3), m.group(5), m.group(6), orders)
        if ymd is not None:
            when = _utc(*ymd, int(m.group(7)), int(m.group(8)), int(m.group(9)))
    if otype in _OS400_DIRS and not (otype == "*FILE" and name.upper().endswith(".SAVF")):
        kind, known = "directory", True  # a *FILE holds members: CWD into it lists them
    else:
        kind, known = "file", otype in _OS400_FILES or otype == "*FILE"
    size = int(m.group(2)) if m.group(2) and kind == "file" else None
    meta: tuple[tuple[str, Any], ...] = (("format", "os400"), ("type", otype))
    return _named(name, kind, size, when, known, meta + ((("owner", m.group(1)),) if m.group(1) else ()))


@functools.cache
def _os2_re() -> re.Pattern[str]:
    # size, attributes and/or DIR, MM-DD-YY, HH:MM, name
    return re.compile(r"\s*(\d+)((?:\s+(?:[ARHS]{1,4}|DIR)){0,5})\s+(\d\d)-(\d\d)-(\d\d(?:\d\d)?)\s+(\d\d):(\d\d)\s+(.+)\Z",
                      re.S)


def _os2(line: str) -> ListItem | None:
    m = _os2_re().match(line)
    if m is None:
        return None
    flags = m.group(2).split()
    is_dir = "DIR" in flags
    ymd = _numeric_date(m.group(3), m.group(4), m.group(5), "MDY DMY")
    when = None if ymd is None else _utc(*ymd, int(m.group(6)), int(m.group(7)))
    name = m.group(8)
    if name in (".", ".."):
        return _NOT_ENTRY
    meta = (("format", "os2"),) + ((("attributes", "".join(f for f in flags if f != "DIR")),)
                                   if any(f != "DIR" for f in flags) else ())
    return _named(name, "directory" if is_dir else "file", None if is_dir else int(m.group(1)), when, True, meta)


@functools.cache
def _netware_re() -> re.Pattern[str]:
    # d|- [RWCEAFMS] owner size date name
    return re.compile(r"([d-])\s+\[([-A-Z]+)\]\s+(\S+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(.+)\Z", re.S)


def _netware(line: str, now: datetime) -> ListItem | None:
    m = _netware_re().match(line)
    if m is None:
        return None
    found = _date_at([m.group(5), m.group(6), m.group(7), "x"], 0, now)
    when = None if found is None else found[0]
    is_dir = m.group(1) == "d"
    name = m.group(8).strip()
    if name in (".", ".."):
        return _NOT_ENTRY
    return _named(name, "directory" if is_dir else "file", None if is_dir else int(m.group(4)), when, True,
                  (("format", "netware"), ("rights", m.group(2)), ("owner", m.group(3))))


@functools.cache
def _enterprise_re() -> re.Pattern[str]:
    # ten flag letters (an "FTP" may follow them), fields, then group/size, date and name
    return re.compile(r"[-A-Z]{10}\S*(?:\s+\S+){0,3}?\s+(\d+)\s+(\d+)\s+([A-Za-z]{3})\s+(\d{1,2})\s+"
                      r"(?:(\d{1,2}):(\d\d)|(\d{4})) (.+)\Z", re.S)


def _enterprise(line: str, now: datetime) -> ListItem | None:
    m = _enterprise_re().match(line)
    if m is None:
        return None
    mon = _MONTHS.get(m.group(3).lower())
    day = _day(m.group(4))
    if mon is None or day is None:
        return None
    when = (_utc(int(m.group(7)), mon, day) if m.group(7)
            else _recent(mon, day, int(m.group(5)), int(m.group(6)), now))
    return _named(m.group(8), "file", int(m.group(2)), when, True, (("format", "enterprise-unix"),))


# ---------------------------------------------------------------------------
# Lines that are not entries
# ---------------------------------------------------------------------------


@functools.cache
def _not_entry_re() -> re.Pattern[str]:
    return re.compile(
        r"\s*(?:"
        r"(?:total|insgesamt|totale|totaal|razem|celkem|sammanlagt|totalt|yhteensä|összesen|toplam|итого|合計|总用量|합계)"
        r"\s+\d[\d.,]*\s*[KMGkmg]?"                                   # ls: total 12
        r"|(?:Grand )?[Tt]otal of .*"                                 # VMS footers
        r"|Directory [^\s]*[:\[<].*"                                  # VMS: Directory DISK$USER:[ANON]
        r"|Volume\s+Unit\s+Referred\s.*"                              # MVS dataset header
        r"|Name\s+VV\.MM\s.*|Name\s+Size\s+TTR\s.*"                   # MVS member headers
        r"|JOBNAME\s+JOBID\s.*"                                       # MVS JES header
        r"|\d+\s+(?:File|Dir)\(s\)\s.*|Volume (?:in drive|Serial Number) .*|Directory of .*"  # Windows dir
        r")\Z", re.I | re.S)


@functools.cache
def _mvs_member_name_re() -> re.Pattern[str]:
    # a member name alone (no statistics kept), or a load module's: name, hex size, TTR...
    return re.compile(r"([A-Z#@$][A-Z0-9#@$]{0,7})(?:\s+[0-9A-F]{6}\s.*)?\s*\Z", re.S)


def _unknown(line: str) -> ListItem:
    words = line.split()
    last = words[-1] if words else ""
    return ListItem(name=last if is_name(last) else "", kind=INFO, known=False,
                    meta=(("format", "unknown"), ("line", line)))


# No listing line of a known format is this long (a name has at most 255 bytes, or 255
# UTF-16 units): a longer line gets only the cheap tests, so a hostile server's 64 KiB
# lines cost what reading them costs.
MAX_FORMATTED_LINE = 4096


def _read(line: str, now: datetime, seen: set[str] | None = None) -> ListItem | None:
    """One line in any format: its item, _NOT_ENTRY, _REFUSED, or None (no format reads it)."""
    c = line[:1]
    if c == "+":
        item = _eplf(line)
        if item is not None:
            return item
    if len(line) > MAX_FORMATTED_LINE:
        item = _unix_fast(line, now) if c in "-dlf" else _dos(line) if c.isdigit() else None
        return item
    if c in "-dlfcbpsDnwM?" or c.isdigit() or c.isspace():
        item = _unix(line, now)
        if item is not None:
            return item
    if c.isdigit():
        item = _dos(line)
        if item is None:
            item = _os2(line)
        if item is not None:
            return item
    if c in "d-" and line[1:2] in (" ", "\t"):
        item = _netware(line, now)
        if item is not None:
            return item
    if _not_entry_re().match(line):
        return _NOT_ENTRY
    if c.isspace():
        item = _os2(line)
        if item is not None:
            return item
    if ";" in line:
        item = _vms(line, seen)
        if item is not None:
            return item
    if "*" in line:
        item = _os400(line)
        if item is not None:
            return item
    item = _mvs(line)
    if item is not None:
        return item
    if c == "-" or c.isupper():
        return _enterprise(line, now)
    return None


def _now() -> datetime:
    from datetime import UTC, datetime

    return datetime.now(UTC)


def parse_list_line(line: str, now: datetime | None = None) -> ListItem | None:
    """One LIST line in any format this module reads, on its own (a VMS entry split over
    two lines needs :class:`ListParser`). An item of kind :data:`INFO` for a line no format
    reads; None for a line that is not an entry (a total, a header, "." or "..") or whose
    name no directory can hold. Never raises on any text."""
    if not line.strip():
        return None
    item = _read(line, now or _now())
    if item is None:
        return _unknown(line)
    return None if item is _NOT_ENTRY or item is _REFUSED else item


class ListParser:
    """The lines of one listing in, items out. *command* is the one that sent them: "LIST"
    (any format :func:`parse_list_line` reads, plus what needs the lines around it: a VMS
    entry whose details are on the next line, older VMS versions of a name, kept as
    "NAME;N", MVS member lines holding a name only), "MLSD" or "NLST".

    Counts what it saw: ``entries`` (items that are not "info"), ``unread`` (lines in no
    known format, given as "info" items; the first three in ``samples``), ``skipped``
    (totals, headers, "." and ".."), ``refused`` (names no directory can hold).
    """

    def __init__(self, command: str = "LIST", now: datetime | None = None) -> None:
        if command not in ("LIST", "MLSD", "NLST"):
            raise ValueError(f"not a listing command: {command!r}")
        self.command = command
        self.now = now or _now() if command == "LIST" else now
        self.entries = 0
        self.unread = 0
        self.skipped = 0
        self.refused = 0
        self.samples: list[str] = []
        self._pending: tuple[str, str] | None = None  # a VMS "NAME;N" alone on its line
        self._members = False  # after an MVS member list's header: a bare name is a member
        self._seen: set[str] = set()  # VMS names listed, upper case

    def feed(self, line: str) -> list[ListItem | None]:
        """The items *line* completes (none, one, or two when a held VMS name had no details);
        None in the list stands for a line that is no entry."""
        if self._pending is None and self.command == "LIST" and line[:1] in ("-", "d"):
            assert self.now is not None
            item = _unix_fast(line, self.now)  # the common case first, without the other formats' tests
            if item is not None:
                return [self._count(item, line)]
        if self.command == "MLSD":
            return [self._mlsd(line)] if line else []
        if self.command == "NLST":
            item = parse_nlst_line(line)
            return [self._count(_REFUSED if item is None else item, line)] if line else []
        out: list[ListItem | None] = []
        if self._pending is not None:
            name, version = self._pending
            self._pending = None
            if line[:1].isspace() and _vms_rest_re().match(line.strip()):
                out.append(self._count(_vms_entry(name, version, line.strip(), self._seen), line))
                return out
            out.append(self._count(_vms_entry(name, version, "", self._seen), name))
        if not line.strip():
            return out
        m = _vms_re().match(line) if ";" in line and not line[:1].isspace() else None
        if m is not None and not m.group(3):
            self._pending = (m.group(1), m.group(2))
            return out
        assert self.now is not None
        item = _read(line, self.now, self._seen)
        if item is _NOT_ENTRY and _member_header_re().match(line):
            self._members = True
        if item is None and self._members:
            mm = _mvs_member_name_re().match(line)
            if mm is not None:
                item = _named(mm.group(1), "file", None, None, True, (("format", "mvs"),))
        out.append(self._count(item, line))
        return out

    def flush(self) -> list[ListItem | None]:
        """What the end of the listing completes: a VMS name held for details that never came."""
        return self.feed("") if self._pending is not None else []

    def _mlsd(self, line: str) -> ListItem | None:
        item = mlsd_item(line)
        head = line.partition(" ")[0]
        if item is None or (head and "=" not in head):  # RFC 3659: [fact=value;...] SP name
            return self._count(None, line)
        if item.name in (".", "..") or dict(item.facts).get("type", "").lower() in ("cdir", "pdir"):
            return self._count(_NOT_ENTRY, line)
        return self._count(item if is_name(item.name) else _REFUSED, line)

    def _count(self, item: ListItem | None, line: str) -> ListItem | None:
        if item is None:
            self.unread += 1
            if len(self.samples) < 3:
                self.samples.append(line[:200])
            return _unknown(line)
        if item is _NOT_ENTRY:
            self.skipped += 1
            return None
        if item is _REFUSED:
            self.refused += 1
            return None
        self.entries += 1
        return item


@functools.cache
def _member_header_re() -> re.Pattern[str]:
    return re.compile(r"\s*Name\s+(?:VV\.MM|Size\s+TTR)\s")


def parse_list(lines: list[str], now: datetime | None = None) -> list[ListItem]:
    """Every item of a LIST listing (see :class:`ListParser`); totals and headers are skipped,
    lines in no known format are "info" items."""
    parser = ListParser("LIST", now)
    out = [item for line in lines for item in parser.feed(line) if item is not None]
    out += [item for item in parser.flush() if item is not None]
    return out

"""FTP LIST formats (anyurl.protocols.ftplist): a corpus of lines per format, written in the
shape each format's documentation gives, and properties over any text (issue 25 item 1)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from anyurl.protocols import ftp, ftplist
from anyurl.protocols.ftplist import ListItem, ListParser

CORPUS = json.loads((Path(__file__).parent / "ftp_listing_corpus.json").read_text(encoding="utf-8"))
NOW = datetime.fromisoformat(CORPUS["now"])


def _shown(item: ListItem) -> dict[str, Any]:
    d: dict[str, Any] = {"name": item.name, "kind": item.kind, "size": item.size,
                         "modified": item.modified.isoformat() if item.modified else None}
    meta = dict(item.meta)
    if item.target is not None:
        meta["target"] = item.target
    if meta:
        d["meta"] = meta
    return d


def _read(lines: list[str]) -> tuple[list[ListItem], ListParser]:
    parser = ListParser("LIST", NOW)
    items = [i for line in lines for i in parser.feed(line) if i is not None]
    items += [i for i in parser.flush() if i is not None]
    return items, parser


@pytest.mark.parametrize("case", CORPUS["cases"], ids=[f"{c['format']}-{n}" for n, c in enumerate(CORPUS["cases"])])
def test_corpus(case: dict[str, Any]) -> None:
    items, parser = _read(case["lines"])
    assert [_shown(i) for i in items] == case["entries"]
    # every line is accounted for: an entry, an "info" item, or a total/header/refused name
    assert parser.entries + parser.unread == len(items)
    if case["format"] not in ("unknown", "refused"):
        assert parser.unread == 0


def test_corpus_covers_every_format() -> None:
    formats = {c["format"] for c in CORPUS["cases"]}
    assert {"unix", "dos", "eplf", "vms", "mvs", "os400", "os2", "netware", "enterprise-unix", "unknown"} <= formats


def test_one_line_at_a_time_reads_what_needs_no_neighbour() -> None:
    # parse_list_line is stateless: a VMS name alone is an entry without its details
    item = ftplist.parse_list_line("LONG_NAME.TXT;4", NOW)
    assert item is not None and (item.name, item.kind, dict(item.meta)["version"]) == ("LONG_NAME.TXT", "file", 4)
    assert ftplist.parse_list_line("total 0", NOW) is None
    assert ftplist.parse_list_line("   ", NOW) is None


def test_vms_name_without_details_at_the_end_of_the_listing() -> None:
    items, parser = _read(["LAST.DIR;1"])
    assert [(i.name, i.kind) for i in items] == [("LAST", "directory")]
    assert parser.entries == 1


def test_old_names_and_parse_list_are_re_exported() -> None:
    # callers of anyurl.protocols.ftp keep working after the move
    assert ftp.ListItem is ListItem and ftp.parse_list_line is ftplist.parse_list_line
    assert [i.name for i in ftp.parse_list(["total 1", "-rw-r--r-- 1 a b 1 Jan 1 2000 x", "junk"], NOW)] == ["x", "junk"]


def test_mlsd_and_nlst_parsers_count_too() -> None:
    p = ListParser("MLSD")
    got = [i for line in ("type=cdir; .", "type=file;size=3; a", "no facts here", "type=file; ../x")
           for i in p.feed(line)]
    assert [(i.name, i.kind) for i in got if i is not None] == [("a", "file"), ("here", "info")]
    assert (p.entries, p.unread, p.skipped, p.refused) == (1, 1, 1, 1)
    n = ListParser("NLST")
    assert [i.name for line in ("a", "dir/b", "..") for i in n.feed(line) if i is not None] == ["a", "b"]
    with pytest.raises(ValueError, match="not a listing command"):
        ListParser("RETR")


# -- properties ----------------------------------------------------------------------------

_line_text = st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\n"), max_size=120)


def _check(item: ListItem | None) -> None:
    if item is None:
        return
    assert item.kind in ("file", "directory", "symlink", "info")
    if item.kind == "info":
        assert dict(item.meta)["format"] == "unknown"
    else:
        assert ftplist.is_name(item.name), item
    assert item.name == "" or ftplist.is_name(item.name)
    assert item.size is None or item.size >= 0


@given(_line_text)
def test_any_line_is_an_entry_an_info_item_or_not_an_entry(line: str) -> None:
    # no text raises: it is read, kept as "info", or skipped (total, header, ".", refused name)
    _check(ftplist.parse_list_line(line, NOW))


@given(st.lists(_line_text, max_size=12), st.sampled_from(["LIST", "MLSD", "NLST"]))
def test_the_listing_parser_never_raises_and_loses_no_line(lines: list[str], command: str) -> None:
    parser = ListParser(command, NOW)
    items = [i for line in lines for i in parser.feed(line)] + parser.flush()
    for i in items:
        _check(i)
    kept = [i for i in items if i is not None]
    assert parser.entries + parser.unread == len(kept)
    if command == "LIST":  # each non-blank line is an item or counted as skipped/refused (a VMS pair is one)
        assert parser.entries + parser.unread + parser.skipped + parser.refused <= sum(1 for s in lines if s.strip())


_word = st.text(st.sampled_from("abcxyzABC019_-"), min_size=1, max_size=8)
_name = st.text(st.characters(blacklist_categories=["Cs", "Cc"], blacklist_characters="/\0"),
                min_size=1, max_size=30).filter(lambda s: s.strip() == s and s not in (".", "..") and " -> " not in s)


@given(_name, st.lists(_word, min_size=1, max_size=3), st.lists(_word, max_size=3), st.integers(0, 10**15),
       st.sampled_from(["Jan  5 10:17", "Dec 31  1999", "2024-02-29 23:59", "15. Okt 08:00", "7月 4 12:00"]),
       st.sampled_from(["-", "d"]))
def test_unix_lines_give_back_their_name_and_size(name: str, owner: list[str], group: list[str], size: int,
                                                  date: str, kind: str) -> None:
    # owners and groups with spaces, any size, dates in several locales: name and size come back
    line = f"{kind}rw-r--r--  3 {' '.join(owner)} {' '.join(group)} {size} {date} {name}"
    item = ftplist.parse_list_line(line, NOW)
    assert item is not None and item.kind == ("file" if kind == "-" else "directory"), line
    assert item.name == name
    assert item.size == (size if kind == "-" else None)
    assert item.modified is not None


def test_digits_int_refuses_are_not_sizes() -> None:
    # str.isdigit() is True for "²" but int("²") raises: the MLSD size fact raised ValueError
    item = ftplist.parse_mlsd_line("type=file;size=²; x")
    assert item is not None and item.size is None
    item = ftplist.parse_list_line("-rw-r--r-- 1 a b ² Jan  1  2000 x", NOW)
    assert item is not None and item.kind == "info"


def test_long_hostile_lines_cost_what_reading_them_costs() -> None:
    # 64 KiB lines (Limits.max_line) shaped to make format patterns backtrack: a DOS date
    # followed by spaces took minutes per line (the blanks around AM/PM split every way)
    import time

    n = 64 * 1024
    lines = ["01-01-24 10:00" + " " * n, "1" + " " * n + "x", "-rw-r--r-- 1 " + "1 " * (n // 2),
             "-rw-r--r-- 1 " + "1 Jan " * (n // 6), "1" + " A" * (n // 2) + " x", "-C--E-----" + " 1" * (n // 2),
             "01-01-24 10:00" + " " * 4000, "-rw-r--r-- 1 " + "a " * 2000]
    start = time.process_time()
    items, parser = _read(lines)
    assert time.process_time() - start < 10
    assert parser.unread == len(items) == len(lines)  # none read; none lost


# issue 33 item 11: shapes from Apache Commons Net's sample listings that were misread (lines
# written here in those shapes: a Cygwin group of many words, a 4-digit link count glued to
# the permissions, the "f" type letter, OS/400 yy/mm/dd dates and members without
# statistics, VMS sizes in 512-byte blocks)
@pytest.mark.parametrize(("line", "want"), [
    ("-rw-r--r--   1 anon     a group name of many words as windows allows them 4711 99  1234 Jun 30  2003 "
     "pkg.tar.gz", {"name": "pkg.tar.gz", "kind": "file", "size": 1234, "modified": "2003-06-30T00:00:00+00:00"}),
    ("drwxr-x---+2048 someone  staff       8192 Nov  3 09:41 20261103",
     {"name": "20261103", "kind": "directory", "size": None, "modified": "2026-11-03T09:41:00+00:00"}),
    ("-rwxr-xr-x1111 someone  staff         12 Nov  3  2020 glued",
     {"name": "glued", "kind": "file", "size": 12, "modified": "2020-11-03T00:00:00+00:00"}),
    ("frw-rw-r--   1 someone  staff        300 Feb  1  2019 plain.dat",
     {"name": "plain.dat", "kind": "file", "size": 300, "modified": "2019-02-01T00:00:00+00:00"}),
    ("WEBUSER         20480 09/11/30 07:05:01 *STMF      report.csv",
     {"name": "report.csv", "kind": "file", "size": 20480, "modified": "2009-11-30T07:05:01+00:00",
      "meta": {"format": "os400", "type": "*STMF", "owner": "WEBUSER"}}),
    ("WEBUSER                                 *MEM       SRCLIB.FILE/PAYROLL.MBR",
     {"name": "PAYROLL.MBR", "kind": "file", "size": None, "modified": None,
      "meta": {"format": "os400", "type": "*MEM", "owner": "WEBUSER"}}),
    ("                                        *MEM       SRCLIB.FILE/BILLING.MBR",
     {"name": "BILLING.MBR", "kind": "file", "size": None, "modified": None,
      "meta": {"format": "os400", "type": "*MEM"}}),
    ("NOTES.TXT;4             17/18         3-MAR-2021 11:22:33  [STAFF,ME]      (RWED,RWED,RE,)",
     {"name": "NOTES.TXT", "kind": "file", "size": None, "modified": "2021-03-03T11:22:33+00:00",
      "meta": {"format": "vms", "version": 4, "blocks": 17, "size_approx": 17 * 512, "owner": "[STAFF,ME]",
               "protection": "(RWED,RWED,RE,)"}}),
])
def test_commons_net_shapes(line: str, want: dict[str, Any]) -> None:
    items, parser = _read([line])
    assert [_shown(i) for i in items] == [want]
    assert parser.unread == 0
    assert [_shown(i) for i in ftplist.parse_list([line], NOW)] == [want]

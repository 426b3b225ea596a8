"""The walk's and mirror's short cut for FTP children: a URL is keyed (and the mirror's
``;type=i`` URL built) without parsing only when its text is exactly the serializer's,
and then the result is the one parsing gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from anyurl.response import Entry
from anyurl.transfer.mirror import _Mirror
from anyurl.transfer.walk import Found, _canonical, _child_prefix, child_key
from anyurl.urls import FTPURL, parse

NAMES = ["plain.bin", "with space", "100%", "a#b", "semi;type=a", "ünï", "tab\there",
         "lone\udcff", "~tilde", "q?x", "at@colon:", "a%2Fb"]


def _child_url(dir_url: FTPURL, name: str, directory: bool) -> str:
    cwd = (*dir_url.cwd, dir_url.name) if dir_url.name else dir_url.cwd
    if directory:
        return str(FTPURL(dir_url.scheme, dir_url.host, dir_url.port, dir_url.user, None, (*cwd, name)))
    return str(FTPURL(dir_url.scheme, dir_url.host, dir_url.port, dir_url.user, None, cwd, name))


@pytest.mark.parametrize("base", ["ftp://h:2121/pub/mirror/", "ftp://u%40x:pw@H/", "ftp://h/a%20b/c;type=d",
                                  "ftp://h/top/x"])
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("directory", [False, True])
def test_child_key_is_the_parsed_canonical(base: str, name: str, directory: bool) -> None:
    listed = parse(base)
    assert isinstance(listed, FTPURL)
    prefix = _child_prefix(listed)
    assert prefix is not None
    url = _child_url(listed, name, directory)
    assert child_key(url, name, prefix) == _canonical(parse(url))


@pytest.mark.parametrize("url_name, name", [
    ("a%2Fb", "a/b"),   # a decoded "/" never passes as one segment
    ("..", ".."), (".", "."), ("", ""),
    ("A", "a"),         # another name's URL
    ("%41", "A"),       # not the serializer's spelling: parsed instead
    ("x/y", "y"),       # deeper than one segment
    ("x;type=a", "x;type=a"),
])
def test_child_key_refuses_what_is_not_the_plain_child(url_name: str, name: str) -> None:
    prefix = _child_prefix(parse("ftp://h/pub/"))
    assert prefix == "ftp://h/pub/"
    assert child_key(prefix + url_name, name, prefix) is None


def test_no_prefix_for_non_ftp_or_file_typecodes() -> None:
    assert _child_prefix(parse("http://h/pub/")) is None
    assert _child_prefix(parse("ftp://h/pub/x;type=i")) is None


@pytest.mark.parametrize("name", NAMES)
def test_mirror_ftp_file_equals_parse(name: str, tmp_path: Path) -> None:
    m = _Mirror(None, tmp_path, parallel=1, resume=False, newer=False, force=False,  # type: ignore[arg-type]
                include=(), exclude=(), progress=None)
    parent = "ftp://me:secret@h:2121/pub/d%20ir/"
    url = _child_url(parse(parent), name, False)  # type: ignore[arg-type]
    found = Found(url, Entry(name, url), 2, ("d ir", name), False, parent)
    built = m.ftp_file(found)
    assert built == parse(url + ";type=i")
    assert built is not None and built.password is None  # type: ignore[attr-defined]


def test_mirror_ftp_file_falls_back(tmp_path: Path) -> None:
    m = _Mirror(None, tmp_path, parallel=1, resume=False, newer=False, force=False,  # type: ignore[arg-type]
                include=(), exclude=(), progress=None)
    parent = "ftp://h/pub/"
    assert m.ftp_file(Found("ftp://h/pub/%41", Entry("A", "ftp://h/pub/%41"), 1, ("A",), False, parent)) is None
    assert m.ftp_file(Found("ftp://h/other/a", Entry("a", "ftp://h/other/a"), 1, ("a",), False, parent)) is None
    assert m.ftp_file(Found("ftp://h/pub/a", None, 1, ("a",), False, parent)) is None

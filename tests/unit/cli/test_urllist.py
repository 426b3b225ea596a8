"""``get -i FILE`` (anyurl.cli.urllist): the list is read in batches, each read's whole lines,
every URL knowing its line; an overlong line ends the list after the URLs before it."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import pytest

from anyurl.cli import urllist
from anyurl.cli.urllist import Listed, URLList
from anyurl.errors import TransferError


async def _batches(listing: URLList) -> list[list[str]]:
    out: list[list[str]] = []
    with pytest.raises(TransferError) if listing.max_line < 100 else contextlib.nullcontext():
        async for batch in listing.batches():
            out.append(batch)
    return out


def test_batches_are_the_lines_of_each_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(urllist, "_LIST_CHUNK", 64)  # several reads, a line across two of them
    lines = [f"http://h/f{i:03d}" for i in range(12)]
    path = tmp_path / "list.txt"
    path.write_text("\ufeff# comment\n\n" + "\n".join(lines[:6]) + "\r\n" + "\n".join(lines[6:]))
    listing = URLList(str(path))
    try:
        got = asyncio.run(_batches(listing))
    finally:
        listing.close()
    assert len(got) > 2  # not one list of everything: a 100,000-line list is never held whole
    flat = [u for b in got for u in b]
    assert flat == lines
    assert all(type(u) is Listed for u in flat)
    assert flat[0].where == f"{path} line 3" and flat[-1].where == f"{path} line 14"


def test_an_overlong_line_ends_the_list_after_the_urls_before_it(tmp_path: Path) -> None:
    path = tmp_path / "list.txt"
    path.write_text("http://h/a\nhttp://h/b\n" + "x" * 200 + "\nhttp://h/c\n")
    listing = URLList(str(path), max_line=60)
    try:
        got = asyncio.run(_batches(listing))
    finally:
        listing.close()
    assert [u for b in got for u in b] == ["http://h/a", "http://h/b"]  # read in the same chunk as the long line


def test_iterating_the_list_still_gives_each_url(tmp_path: Path) -> None:
    path = tmp_path / "list.txt"
    path.write_text("http://h/a http://h/ignored-not\nhttp://h/b\n")

    async def urls() -> list[str]:
        return [u async for u in listing]

    listing = URLList(str(path))
    try:
        assert asyncio.run(urls()) == ["http://h/a http://h/ignored-not", "http://h/b"]
    finally:
        listing.close()


def test_listed_urls_take_the_fast_parser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a URL read from a list is a str subclass (it knows its line); parse's fast path takes
    # exact str only, so get hands it the plain text (was: every listed URL parsed the slow way)
    import anyurl.urls as urls
    from anyurl.cli.commands import main

    src = tmp_path / "src"
    src.mkdir()
    listed = []
    for i in range(3):
        (src / f"f{i}.txt").write_text(f"file {i}\n")
        listed.append((src / f"f{i}.txt").as_uri())
    (tmp_path / "list.txt").write_text("\n".join(listed) + "\n")
    assert urls._parse_fast(listed[0]) is not None  # (the fast path knows these URLs)
    slow: list[str] = []
    real = urls._parse_full

    def spy(text: str, strict: bool) -> urls.URL:
        slow.append(text)
        return real(text, strict)

    monkeypatch.setattr(urls, "_parse_full", spy)
    out = tmp_path / "out"
    assert main(["get", "-q", "-d", str(out), "-i", str(tmp_path / "list.txt")]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["f0.txt", "f1.txt", "f2.txt"]
    assert slow == []

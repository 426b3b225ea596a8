"""``get -i FILE`` (anyurl.cli.urllist): the list is read in batches, each read's whole lines,
every URL knowing its line; an overlong line is reported and skipped, and the list goes on."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from anyurl.cli import urllist
from anyurl.cli.urllist import Listed, URLList
from anyurl.errors import TransferError


async def _batches(listing: URLList) -> list[list[str]]:
    out: list[list[str]] = []
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


@pytest.mark.parametrize("chunk", [64, 1 << 16])
def test_an_overlong_line_is_reported_and_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  chunk: int) -> None:
    # issue 33 item 15: it ended the list, the URLs after it never read
    monkeypatch.setattr(urllist, "_LIST_CHUNK", chunk)  # the long line across several reads, or in one
    path = tmp_path / "list.txt"
    path.write_text("http://h/a\nhttp://h/b\n" + "x" * 200 + "\nhttp://h/c\n")
    listing = URLList(str(path), max_line=60)
    reported: list[tuple[int, str]] = []
    listing.report_to(lambda i, exc: reported.append((i, exc.message)))
    try:
        got = asyncio.run(_batches(listing))
    finally:
        listing.close()
    flat = [u for b in got for u in b]
    assert flat == ["http://h/a", "http://h/b", "http://h/c"]
    assert [u.where for u in flat] == [f"{path} line {n}" for n in (1, 2, 4)]  # the lines still counted
    assert reported == [(2, f"URL list {path} line 3 is longer than 60 bytes (Limits.max_line); "
                            f"it starts {b'x' * 60!r}; skipped")]


def test_a_line_with_no_end_ends_the_list_after_skip_lines_times_the_limit(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(urllist, "_LIST_CHUNK", 64)
    path = tmp_path / "list.txt"
    path.write_text("http://h/a\n" + "x" * 60 * (urllist.SKIP_LINES + 2))
    listing = URLList(str(path), max_line=60)
    reported: list[TransferError] = []
    listing.report_to(lambda i, exc: reported.append(exc))
    got: list[str] = []

    async def read() -> None:
        async for batch in listing.batches():
            got.extend(batch)

    try:
        with pytest.raises(TransferError, match=r"line 2 is longer than 60 bytes .*no newline in its first 61440 "
                                                r"bytes: the rest of the list is not read"):
            asyncio.run(read())
    finally:
        listing.close()
    assert got == ["http://h/a"] and len(reported) == 1


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

"""``anyurl get -d DIR URL...``: the directory is listed once, and what the listing
shows decides which per-file lookups are still needed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import anyurl.transfer.download as dl
from anyurl import Client
from anyurl.cli.commands import main
from anyurl.transfer.download import PART_SUFFIX, DirNames, WouldOverwrite


def _sources(tmp_path: Path, n: int = 5) -> list[str]:
    src = tmp_path / "src"
    src.mkdir()
    urls = []
    for i in range(n):
        (src / f"f{i}.txt").write_bytes(f"file {i}\n".encode() * (i + 1))
        urls.append((src / f"f{i}.txt").as_uri())
    return urls


def _spy(monkeypatch: pytest.MonkeyPatch, out: Path) -> list[tuple[str, str]]:
    """Record os.stat, os.lstat and os.unlink calls on paths inside *out* (lstat as "stat")."""
    seen: list[tuple[str, str]] = []
    for name in ("stat", "lstat", "unlink"):
        real = getattr(os, name)

        def spy(path: object, *a: object, _real: object = real, _name: str = name, **k: object) -> object:
            if isinstance(path, str) and path.startswith(str(out)):
                seen.append((_name.removeprefix("l"), os.path.basename(path)))
            return _real(path, *a, **k)  # type: ignore[operator]

        monkeypatch.setattr(os, name, spy)
    return seen


def test_a_batch_into_a_new_directory_looks_nothing_up_per_file(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    urls = _sources(tmp_path)
    out = tmp_path / "out"
    seen = _spy(monkeypatch, out)
    assert main(["get", "-q", "-d", str(out), *urls]) == 0
    assert sorted(os.listdir(out)) == [f"f{i}.txt" for i in range(5)]
    assert (out / "f3.txt").read_bytes() == b"file 3\n" * 4
    assert seen == []  # no stat of the destination, no unlink of a part file that was never there


def test_a_listed_name_is_still_looked_up_a_symlink_is_never_written_through(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # issue 25 item 9: a name anyurl chose under -d is never opened through a symlink
    # (was: streamed into /dev/null, exit 0); the link is left as it is, the rest saved
    urls = _sources(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "f1.txt").symlink_to("/dev/null")
    seen = _spy(monkeypatch, out)
    assert main(["get", "-q", "-d", str(out), *urls]) == 10
    assert (out / "f1.txt").is_symlink() and os.readlink(out / "f1.txt") == "/dev/null"
    assert (out / "f2.txt").read_bytes() == b"file 2\n" * 3
    assert ("stat", "f1.txt") in seen and ("stat", "f2.txt") not in seen


def test_a_stale_part_file_in_the_directory_is_still_cleared(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    urls = _sources(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / f".f4.txt{PART_SUFFIX}").write_bytes(b"old, from an interrupted --continue")
    seen = _spy(monkeypatch, out)
    assert main(["get", "-q", "-d", str(out), *urls]) == 0
    assert sorted(os.listdir(out)) == [f"f{i}.txt" for i in range(5)]
    assert (out / "f4.txt").read_bytes() == b"file 4\n" * 5
    assert ("unlink", f".f4.txt{PART_SUFFIX}") in seen


def test_the_listing_knows_names_and_part_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a").write_text("x")
    names = DirNames(str(tmp_path))
    assert names.new("b") and not names.new("a")
    (tmp_path / f".b{PART_SUFFIX}").write_text("x")
    assert not DirNames(str(tmp_path)).new("c")  # a part file somewhere: every file looked up
    assert not DirNames(str(tmp_path / "missing")).new("c")
    monkeypatch.setattr(dl, "_LISTING_LIMIT", 1)
    (tmp_path / "z").write_text("x")
    (tmp_path / f".b{PART_SUFFIX}").unlink()
    assert not DirNames(str(tmp_path)).new("c")  # too many entries to keep: no listing


async def test_a_name_made_after_the_listing_is_compared_not_replaced(tmp_path: Path) -> None:
    src = tmp_path / "src.txt"
    src.write_text("new content\n")
    dest = tmp_path / "dest.txt"
    dest.write_text("someone else's file\n")  # appeared after the listing said "new"
    async with Client() as client:
        with pytest.raises(WouldOverwrite):
            await dl.download_file(client, client.parse(src.as_uri()), str(dest), False, None, None, None, False,
                                   {}, new=True)
    assert dest.read_text() == "someone else's file\n"
    assert sorted(os.listdir(tmp_path)) == ["dest.txt", "src.txt"]

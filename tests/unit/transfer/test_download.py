"""anyurl.transfer.download: safe local names, and the write-to-temp-then-rename logic.

The transfer tests use a small in-process handler registered for the scheme
"dltest", so each failure mode (error mid-stream, short body, a handler that
cannot resume, one that silently restarts) can be produced exactly.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.doubles import ScriptedHandler

import anyurl.transfer.download as anyurl_download
from anyurl import Client, ProtocolError, ResourceNotFound, TransferError, TruncatedTransfer
from anyurl.registry import register
from anyurl.transfer.download import PART_SUFFIX, WouldOverwrite, download, name_for_url, part_path, safe_name

CONTENT = bytes(range(256)) * 40  # 10240 bytes


class FakeHandler(ScriptedHandler):
    """Serves CONTENT in 1000-byte chunks; a misbehaving open is scripted per test (tests/doubles.py)."""

    data = CONTENT
    cut_error = ProtocolError  # a reset connection, as a driver reports it


def calls() -> list[int]:
    """The offset of every open, in order."""
    return [offset for offset, _ in FakeHandler.opened]


register("dltest", FakeHandler)


@pytest.fixture(autouse=True)
def fresh_handler() -> None:
    FakeHandler.reset()


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


# -- names -------------------------------------------------------------------


@pytest.mark.parametrize("raw, expected", [
    ("report.pdf", "report.pdf"),
    ("with space.txt", "with space.txt"),
    ("..", "index"),
    (".", "index"),
    ("", "index"),
    ("...", "index"),
    ("/", "_"),
    ("../../etc/passwd", "_.._etc_passwd"),
    ("/etc/passwd", "_etc_passwd"),
    (".bashrc", "bashrc"),
    ("..\\..\\win.ini", "_.._win.ini"),
    ("a\x00b", "a_b"),
    ("\x1b[31mred", "_[31mred"),
    ("line\nbreak", "line_break"),
    ("x" + PART_SUFFIX, "x_" + PART_SUFFIX[1:]),
    ("  spaced  ", "spaced"),
    ("é.txt", "é.txt"),
])
def test_safe_name(raw: str, expected: str) -> None:
    assert safe_name(raw) == expected


def test_safe_name_fallback_and_length() -> None:
    assert safe_name("..", "example.org") == "example.org"
    assert safe_name("", "..") == "index"
    long = "a" * 300 + ".tar.gz"
    short = safe_name(long)
    assert len(short.encode()) <= 255 and short.endswith(".gz")
    multibyte = safe_name("é" * 200)
    assert len(multibyte.encode()) <= 255 and set(multibyte) == {"é"}


@pytest.mark.parametrize("url, expected", [
    ("http://h/dir/file.txt", "file.txt"),
    ("http://h/dir/file.txt?q=1", "file.txt"),
    ("http://h/", "index"),
    ("http://h", "index"),
    ("http://h/dir/", "index"),
    ("http://h/with%20space.txt", "with space.txt"),
    ("http://h/%2e%2e", "index"),
    ("http://h/a/..%2f..%2fetc%2fpasswd", "_.._etc_passwd"),
    ("http://h/.hidden", "hidden"),
    ("ftp://h/pub/README", "README"),
    ("ftp://h/pub/", "index"),
    ("file:///tmp/x.bin", "x.bin"),
    ("gopher://h/0/docs/a.txt", "a.txt"),
])
def test_name_for_url(url: str, expected: str) -> None:
    name = name_for_url(url)
    assert name == expected
    assert "/" not in name and not name.startswith(".") and name == os.path.basename(name)


def test_part_path_is_hidden_sibling(tmp_path: Path) -> None:
    assert part_path(tmp_path / "f.bin") == tmp_path / f".f.bin{PART_SUFFIX}"


def test_part_path_fits_name_max_for_every_length(tmp_path: Path) -> None:
    seen = set()
    for n in range(230, 256):
        for name in ("x" * n, "é" * (n // 2) + "z" * (n % 2), "y" * (n - 4) + ".bin"):
            part = part_path(tmp_path / name)
            assert len(part.name.encode()) <= 255 and part.parent == tmp_path
            assert part.name.startswith(".") and part.name.endswith(PART_SUFFIX)
            assert part == part_path(tmp_path / name)  # the same every time: resume finds it
            part.touch()  # the file system takes it
            seen.add(part.name)
    assert len(seen) == 26 * 3  # names sharing a long prefix still get their own part file


async def test_resume_with_a_name_of_250_bytes(tmp_path: Path) -> None:
    dest = tmp_path / ("n" * 246 + ".bin")
    FakeHandler.reset(steps=["cut"], cut_after=4000)
    async with Client() as client:
        with pytest.raises(ProtocolError):
            await download(client, "dltest:x", dest, resume=True)
        assert part_path(dest).read_bytes() == CONTENT[:4000]
        await download(client, "dltest:x", dest, resume=True)
    assert calls() == [0, 4000]
    assert dest.read_bytes() == CONTENT and leftovers(tmp_path) == [dest.name]


# -- transfers ----------------------------------------------------------------


async def test_success_renames_into_place(tmp_path: Path) -> None:
    seen: list[tuple[int, int | None]] = []
    async with Client() as client:
        path = await download(client, "dltest:x", tmp_path / "out.bin",
                              progress=lambda d, t: seen.append((d, t)))
    assert path == tmp_path / "out.bin"
    assert path.read_bytes() == CONTENT
    assert leftovers(tmp_path) == ["out.bin"]
    dones = [d for d, _ in seen]
    assert dones == sorted(dones) and dones[0] == 0 and dones[-1] == len(CONTENT)
    assert {t for _, t in seen} == {len(CONTENT)}


async def test_failure_leaves_nothing_and_keeps_old_file(tmp_path: Path) -> None:
    dest = tmp_path / "out.bin"
    dest.write_bytes(b"previous version")
    FakeHandler.reset(steps=["cut"], cut_after=3000)
    async with Client() as client:
        with pytest.raises(ProtocolError, match="mid-transfer"):
            await download(client, "dltest:x", dest)
    assert dest.read_bytes() == b"previous version"  # untouched: the rename never happened
    assert leftovers(tmp_path) == ["out.bin"]


async def test_short_body_is_truncated_transfer(tmp_path: Path) -> None:
    FakeHandler.announce = len(CONTENT) + 500
    async with Client() as client:
        with pytest.raises(TruncatedTransfer, match=f"got {len(CONTENT)} of {len(CONTENT) + 500}"):
            await download(client, "dltest:x", tmp_path / "out.bin")
    assert leftovers(tmp_path) == []


async def test_not_found_creates_nothing(tmp_path: Path) -> None:
    FakeHandler.reset(steps=["missing"])
    async with Client() as client:
        with pytest.raises(ResourceNotFound):
            await download(client, "dltest:x", tmp_path / "out.bin", resume=True)
    assert calls() == [0]
    assert leftovers(tmp_path) == []  # not even an empty part file


async def test_resume_keeps_partial_then_continues(tmp_path: Path) -> None:
    dest = tmp_path / "out.bin"
    FakeHandler.reset(steps=["cut"], cut_after=4000)
    async with Client() as client:
        with pytest.raises(ProtocolError):
            await download(client, "dltest:x", dest, resume=True)
        part = part_path(dest)
        assert part.read_bytes() == CONTENT[:4000]
        assert not dest.exists()
        seen: list[int] = []
        await download(client, "dltest:x", dest, resume=True, progress=lambda d, t: seen.append(d))
    assert calls() == [0, 4000]
    assert seen[0] == 4000 and seen[-1] == len(CONTENT)
    assert dest.read_bytes() == CONTENT
    assert leftovers(tmp_path) == ["out.bin"]


async def test_resume_restarts_when_handler_cannot_resume(tmp_path: Path) -> None:
    dest = tmp_path / "out.bin"
    part_path(dest).write_bytes(b"X" * 5000)  # garbage: must be overwritten from byte 0
    FakeHandler.reset(steps=["no-resume"])
    async with Client() as client:
        await download(client, "dltest:x", dest, resume=True)
    assert calls() == [5000, 0]
    assert dest.read_bytes() == CONTENT


async def test_resume_follows_body_offset_when_server_restarts(tmp_path: Path) -> None:
    dest = tmp_path / "out.bin"
    part_path(dest).write_bytes(b"X" * 20000)  # longer than the resource: must be cut
    FakeHandler.reset(steps=["restart"])
    async with Client() as client:
        await download(client, "dltest:x", dest, resume=True)
    assert calls() == [20000]
    assert dest.read_bytes() == CONTENT


async def test_without_resume_a_stale_part_is_ignored(tmp_path: Path) -> None:
    dest = tmp_path / "out.bin"
    part_path(dest).write_bytes(b"X" * 5000)
    async with Client() as client:
        await download(client, "dltest:x", dest)
    assert calls() == [0]
    assert dest.read_bytes() == CONTENT
    assert leftovers(tmp_path) == ["out.bin"]


async def test_max_size(tmp_path: Path) -> None:
    async with Client() as client:
        with pytest.raises(TransferError, match="larger than the limit"):
            await download(client, "dltest:x", tmp_path / "a", max_size=100)
        assert calls() == [0]
        FakeHandler.announce = -1  # size unknown: caught while streaming
        with pytest.raises(TransferError, match="larger than the limit of 2500"):
            await download(client, "dltest:x", tmp_path / "b", max_size=2500)
        await download(client, "dltest:x", tmp_path / "c", max_size=len(CONTENT))
    assert leftovers(tmp_path) == ["c"]


async def _download_held_after_first_chunk(client: Client, dest: Path) -> tuple[asyncio.Task[Any], asyncio.Event]:
    """A download to *dest* that has written its first chunk and waits for the returned gate."""
    gate = asyncio.Event()
    FakeHandler.gate = gate
    started = asyncio.Event()
    task = asyncio.create_task(download(client, "dltest:x", dest,
                                        progress=lambda d, t: started.set() if d else None))
    await asyncio.wait_for(started.wait(), 10)
    return task, gate


async def test_cancel_removes_part(tmp_path: Path) -> None:
    async with Client() as client:
        task, _ = await _download_held_after_first_chunk(client, tmp_path / "out.bin")
        assert not (tmp_path / "out.bin").exists()  # nothing under the final name mid-transfer
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert leftovers(tmp_path) == []


async def test_unwritable_destination_is_an_anyurl_error(tmp_path: Path) -> None:
    async with Client() as client:
        with pytest.raises(TransferError, match="cannot write"):
            await download(client, "dltest:x", tmp_path / "no" / "such" / "dir" / "f")


async def test_special_destination_is_written_not_replaced(tmp_path: Path) -> None:
    # `anyurl get -o /dev/null`: a rename onto a device or FIFO would replace the node itself
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = bytearray()

    def drain() -> None:
        with open(fifo, "rb") as f:
            received.extend(f.read())

    reader = asyncio.get_running_loop().run_in_executor(None, drain)
    async with Client() as client:
        await download(client, "dltest:x", fifo)
    await reader
    assert bytes(received) == CONTENT
    assert fifo.is_fifo()
    assert leftovers(tmp_path) == ["pipe"]
    before = os.stat("/dev/null")
    async with Client() as client:
        await download(client, "dltest:x", "/dev/null")
    after = os.stat("/dev/null")
    assert (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)
    assert ".null" + PART_SUFFIX not in leftovers(Path("/dev"))


# -- issue 12: names decoded once, nothing overwritten silently --------------------


@pytest.mark.parametrize(("url", "name"), [
    ("ftp://h/a%2541.txt", "a%41.txt"),          # was "aA.txt" (decoded twice)
    ("ftp://h/pct%2522.bin", "pct%22.bin"),      # was 'pct".bin'
    ("ftp://h/pct%22.bin", 'pct".bin'),
    ("file:///tmp/a%2541", "a%41"),
    ("gopher://h/0/x%2541.txt", "x%41.txt"),
    ("http://h/a%2541.txt", "a%41.txt"),         # HTTP paths stay encoded: decoded once here
    ("http://h/a%20b.txt", "a b.txt"),
])
def test_name_for_url_decodes_once(url: str, name: str) -> None:
    from anyurl.transfer.download import name_for_url

    assert name_for_url(url) == name


async def test_download_never_overwrites_other_content(tmp_path: Path) -> None:
    from anyurl.client import Client
    from anyurl.transfer.download import WouldOverwrite, download

    src = tmp_path / "src.bin"
    src.write_bytes(b"new bytes")
    dest = tmp_path / "dest.bin"
    dest.write_bytes(b"precious")
    async with Client() as client:
        with pytest.raises(WouldOverwrite) as info:
            await download(client, src.as_uri(), dest)
        assert "--force" in str(info.value) and isinstance(info.value, FileExistsError)
        assert dest.read_bytes() == b"precious"
        assert sorted(os.listdir(tmp_path)) == ["dest.bin", "src.bin"]  # no part file  # noqa: ASYNC240
        dest.write_bytes(b"new bytes")
        before = dest.stat().st_mtime_ns
        await download(client, src.as_uri(), dest)  # same content: fine, left alone
        assert dest.stat().st_mtime_ns == before
        dest.write_bytes(b"precious")
        await download(client, src.as_uri(), dest, overwrite=True)
    assert dest.read_bytes() == b"new bytes"


@pytest.mark.parametrize(("remote", "local"), [
    ("..", "%2E%2E"), (".", "%2E"), ("", "%"), ("a/b", "a%2Fb"), ("nul\0x", "nul%00x"),
    (".hidden", ".hidden"), ("ünï code #;%41.txt", "ünï code #;%41.txt"),
    ("x.anyurl-part", "x.anyurl-part_"),
])
def test_mirror_local_names_stay_inside(remote: str, local: str) -> None:
    from anyurl.transfer.mirror import local_name

    assert local_name(remote) == local
    assert "/" not in local_name(remote) and local_name(remote) not in (".", "..")


def test_mirror_local_name_fits_255_bytes() -> None:
    from anyurl.transfer.mirror import local_name

    assert len(local_name("é" * 300 + ".txt").encode()) <= 255


# -- the unnamed file (O_TMPFILE) ---------------------------------------------------

needs_tmpfile = pytest.mark.skipif(not anyurl_download._use_tmpfile, reason="no O_TMPFILE or /proc here")


@needs_tmpfile
async def test_unnamed_file_leaves_no_directory_entry_mid_transfer(tmp_path: Path) -> None:
    async with Client() as client:
        task, gate = await _download_held_after_first_chunk(client, tmp_path / "out.bin")
        assert leftovers(tmp_path) == []  # no part file: the bytes so far have no name
        gate.set()
        await asyncio.wait_for(task, 10)
    assert (tmp_path / "out.bin").read_bytes() == CONTENT
    assert leftovers(tmp_path) == ["out.bin"]
    assert (tmp_path / "out.bin").stat().st_mode & 0o777 == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@needs_tmpfile
async def test_unnamed_file_overwrite_replaces_and_clears_a_stale_part(tmp_path: Path) -> None:
    dest = tmp_path / "out.bin"
    dest.write_bytes(b"old")
    part_path(dest).write_bytes(b"stale part of an earlier run")
    async with Client() as client:
        with pytest.raises(WouldOverwrite):
            await download(client, "dltest:x", dest)
        assert dest.read_bytes() == b"old"
        await download(client, "dltest:x", dest, overwrite=True)
    assert dest.read_bytes() == CONTENT
    assert leftovers(tmp_path) == ["out.bin"]


@needs_tmpfile
async def test_unnamed_file_falls_back_to_a_copy_when_proc_links_fail(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_link = os.link

    def link(src: str, dst: str, **kw: object) -> None:
        if kw.get("src_dir_fd") is not None:  # through /proc/self/fd
            raise PermissionError(1, "Operation not permitted")
        real_link(src, dst, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "link", link)
    monkeypatch.setattr(anyurl_download, "_use_tmpfile", True)
    async with Client() as client:
        await download(client, "dltest:x", tmp_path / "out.bin")
        assert anyurl_download._use_tmpfile is False  # part files from now on
        await download(client, "dltest:x", tmp_path / "two.bin")
    assert (tmp_path / "out.bin").read_bytes() == CONTENT == (tmp_path / "two.bin").read_bytes()
    assert leftovers(tmp_path) == ["out.bin", "two.bin"]


@given(st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=300)
       | st.sampled_from(["a.txt", "x" * 255, "x" * 256, ". a", "a ", " a", "f" + PART_SUFFIX, "a\\b", "é.txt"]))
def test_safe_name_fast_path_agrees_with_the_character_loop(name: str) -> None:
    from anyurl.transfer import names  # where the policy lives

    assert safe_name(name) == names._clean_name(name, "index")

"""transfer.output.save_part: the one way mirror --state and the crawl's directory sink write a
fetched body to its part file and put it in place."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from anyurl.errors import ConnectError, TransferError
from anyurl.transfer.output import save_part


async def _chunks(*parts: bytes, then: BaseException | None = None) -> AsyncIterator[bytes]:
    for p in parts:
        yield p
    if then is not None:
        raise then


def _replace(part: str, path: str) -> bool:
    os.replace(part, path)
    return True


def test_the_body_is_written_dated_and_placed(tmp_path: Path) -> None:
    part, path = str(tmp_path / ".a.part"), str(tmp_path / "a")
    done, written = asyncio.run(save_part(part, path, _chunks(b"ab", b"cd" * 40_000), "http://h/a", below=str(tmp_path),
                                    place=_replace, mtime=1_000_000_000.0))
    assert (done, written) == (80_002, True)
    assert Path(path).read_bytes() == b"ab" + b"cd" * 40_000 and not os.path.exists(part)
    assert os.stat(path).st_mtime == 1_000_000_000.0


def test_a_connection_lost_mid_body_stays_itself_and_no_part_is_left(tmp_path: Path) -> None:
    # ConnectError is an OSError: the crawl's own copy of this code once re-worded it "cannot write"
    part, path = str(tmp_path / ".a.part"), str(tmp_path / "a")
    lost = ConnectError("connection lost while reading the body: Connection reset by peer", url="http://h/a")
    with pytest.raises(ConnectError) as caught:
        asyncio.run(save_part(part, path, _chunks(b"ab", then=lost), "http://h/a", below=str(tmp_path), place=_replace))
    assert caught.value is lost
    assert os.listdir(tmp_path) == []


def test_an_os_error_in_placing_names_the_final_path(tmp_path: Path) -> None:
    part, path = str(tmp_path / ".a.part"), str(tmp_path / "a")

    def refuse(part: str, path: str) -> bool:
        raise PermissionError(13, "Permission denied")

    with pytest.raises(TransferError, match=f"cannot write {path}: Permission denied"):
        asyncio.run(save_part(part, path, _chunks(b"x"), "http://h/a", below=str(tmp_path), place=refuse))
    assert os.listdir(tmp_path) == []

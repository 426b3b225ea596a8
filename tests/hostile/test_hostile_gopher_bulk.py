"""Gopher binary items downloaded in bulk: exact bytes, and every failure an error with no file.

The server (tests/hostile/fakes/gopher_bulk.py) sends the reply in pieces with pauses, so
the download writes most of it while more is still arriving. Each case runs on
asyncio's loop and on uvloop's (the CLI's for many URLs).
"""

from __future__ import annotations

import asyncio
import gc
import os
import subprocess
import sys
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest
from tests.hostile.fakes.gopher_bulk import GopherBulk

from anyurl.client import Client, Timeouts
from anyurl.errors import ConnectError, FetchTimeout, TransferError, TruncatedTransfer
from anyurl.transfer.download import download

pytestmark = pytest.mark.timeout(60)

LOOPS = ["asyncio", "uvloop"]
PIECE = bytes(range(256)) * 1024  # 256 KiB with every byte value (CR, LF, "." included)


def run(loop: str, coro: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    if loop == "uvloop":
        import uvloop

        return uvloop.run(coro())
    return asyncio.run(coro())


def pieces(n: int, pause: float = 0.05) -> list[tuple[bytes, float]]:
    return [(PIECE[i:] + PIECE[:i], pause) for i in range(n)]


def joined(steps: list[tuple[bytes, float]]) -> bytes:
    return b"".join(d for d, _ in steps)


async def fetch_into(url: str, dest: Path, **kw: Any) -> Path:
    async with Client(timeouts=Timeouts(read=kw.pop("read", 10.0))) as client:
        return await download(client, url, dest, **kw)


@pytest.mark.parametrize("loop", LOOPS)
def test_bulk_download_is_exact(tmp_path: Path, loop: str) -> None:
    steps = pieces(12)
    with GopherBulk(steps) as srv:
        dest = tmp_path / "out.bin"
        run(loop, lambda: fetch_into(f"gopher://{srv.host}:{srv.port}/9/big.bin", dest))
    assert dest.read_bytes() == joined(steps)
    assert srv.requests == [b"/big.bin\r\n"]


@pytest.mark.parametrize("loop", LOOPS)
def test_gopher_plus_exact_length(tmp_path: Path, loop: str) -> None:
    steps = pieces(6)
    body = joined(steps)
    # trailing bytes past the announced length are not part of the item
    with GopherBulk([(b"+%d\r\n" % len(body), 0.05), *steps, (b"JUNK", 0.0)]) as srv:
        dest = tmp_path / "out.bin"
        run(loop, lambda: fetch_into(f"gopher://{srv.host}:{srv.port}/9/big.bin%09%09+", dest))
    assert dest.read_bytes() == body


def no_files(directory: Path) -> list[str]:
    return sorted(os.listdir(directory))


@pytest.mark.parametrize("loop", LOOPS)
def test_early_close_on_announced_size_is_truncated(tmp_path: Path, loop: str) -> None:
    steps = pieces(6)
    with GopherBulk([(b"+%d\r\n" % (len(joined(steps)) + 1000), 0.05), *steps]) as srv:
        dest = tmp_path / "out.bin"
        with pytest.raises(TruncatedTransfer, match="announced"):
            run(loop, lambda: fetch_into(f"gopher://{srv.host}:{srv.port}/9/big.bin%09%09+", dest))
    assert no_files(tmp_path) == []


@pytest.mark.parametrize("loop", LOOPS)
def test_stall_times_out(tmp_path: Path, loop: str) -> None:
    with GopherBulk(pieces(4), end="stall") as srv:
        dest = tmp_path / "out.bin"
        started = time.monotonic()
        with pytest.raises(FetchTimeout, match="no data"):
            run(loop, lambda: fetch_into(f"gopher://{srv.host}:{srv.port}/9/big.bin", dest, read=0.5))
        assert time.monotonic() - started < 5  # the read timeout, not the server's hold
    assert no_files(tmp_path) == []


@pytest.mark.parametrize("loop", LOOPS)
def test_reset_is_an_error(tmp_path: Path, loop: str) -> None:
    with GopherBulk(pieces(4), end="reset") as srv:
        dest = tmp_path / "out.bin"
        with pytest.raises(ConnectError):
            run(loop, lambda: fetch_into(f"gopher://{srv.host}:{srv.port}/9/big.bin", dest))
    assert no_files(tmp_path) == []


@pytest.mark.parametrize("loop", LOOPS)
def test_max_size_stops_the_download(tmp_path: Path, loop: str) -> None:
    with GopherBulk(pieces(8)) as srv:
        dest = tmp_path / "out.bin"
        with pytest.raises(TransferError, match="limit of 600000"):
            run(loop, lambda: fetch_into(f"gopher://{srv.host}:{srv.port}/9/big.bin", dest, max_size=600_000))
    assert no_files(tmp_path) == []


# -- the CLI, standard output and -o -------------------------------------------------------


def cli(*args: str, stdout: int | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "anyurl", "get", "-q", *args], stdout=stdout,
                          stderr=subprocess.PIPE, timeout=60, check=False)


@pytest.mark.parametrize("append", [False, True])
def test_cli_stdout_into_a_file(tmp_path: Path, append: bool) -> None:
    steps = pieces(6)
    out = tmp_path / "out.bin"
    out.write_bytes(b"HEAD")
    # ">> out": the item lands after what the file held
    fd = os.open(out, os.O_WRONLY | (os.O_APPEND if append else os.O_TRUNC))
    try:
        with GopherBulk(steps) as srv:
            proc = cli(f"gopher://{srv.host}:{srv.port}/9/big.bin", stdout=fd)
    finally:
        os.close(fd)
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes() == (b"HEAD" if append else b"") + joined(steps)


def test_cli_stdout_max_size(tmp_path: Path) -> None:
    out = tmp_path / "out.bin"
    fd = os.open(out, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        with GopherBulk(pieces(8)) as srv:
            proc = cli("--max-size", "600000", f"gopher://{srv.host}:{srv.port}/9/big.bin", stdout=fd)
    finally:
        os.close(fd)
    assert proc.returncode != 0 and b"limit of 600000" in proc.stderr
    # standard output cannot be taken back: what it got is the item's start, none past the limit
    got = out.read_bytes()
    assert 0 < len(got) <= 600_000 and got == joined(pieces(8))[:len(got)]


def test_cli_early_close_leaves_no_file(tmp_path: Path) -> None:
    steps = pieces(6)
    with GopherBulk([(b"+%d\r\n" % (len(joined(steps)) + 1), 0.05), *steps]) as srv:
        proc = cli("-o", str(tmp_path / "out.bin"), f"gopher://{srv.host}:{srv.port}/9/big.bin%09%09+")
    assert proc.returncode != 0 and b"announced" in proc.stderr
    assert no_files(tmp_path) == []


def test_cli_exact_copy(tmp_path: Path) -> None:
    steps = pieces(10)
    with GopherBulk(steps) as srv:
        proc = cli("-o", str(tmp_path / "out.bin"), f"gopher://{srv.host}:{srv.port}/9/big.bin")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "out.bin").read_bytes() == joined(steps)


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.parametrize("loop", LOOPS)
def test_cancelled_download_leaves_nothing_open(tmp_path: Path, loop: str) -> None:
    """A total deadline (the CLI's --max-time) cancels the transfer: no file, no descriptor left open."""

    async def capped() -> None:
        async with asyncio.timeout(0.6):
            await fetch_into(f"gopher://{srv.host}:{srv.port}/9/big.bin", tmp_path / "out.bin")

    run(loop, lambda: asyncio.sleep(0))  # a loop's one-time descriptors (uvloop keeps two) counted first
    before = open_fds()
    with GopherBulk(pieces(4), end="stall") as srv:
        with pytest.raises(TimeoutError):
            run(loop, capped)
    gc.collect()
    assert no_files(tmp_path) == []
    assert open_fds() == before

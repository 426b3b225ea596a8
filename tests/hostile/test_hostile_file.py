"""file: a FIFO that nobody writes to, and devices (issue 11, item 7).

``anyurl get --max-time 3 file:///tmp/fifo`` printed the timeout at 3 s and
never exited: the blocking ``open()`` ran in an asyncio worker thread, which
``asyncio.run`` waits for; ``--timeout`` alone never fired for file reads.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.hostile.fakes.child import run_child

from anyurl import Client, Timeouts
from anyurl.errors import FetchTimeout

MAX_RSS_MB = 64


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "fifo"
    os.mkfifo(path)
    yield path
    # a blocked writer left behind would hang: open the read side once, without blocking
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    os.close(fd)


@pytest.mark.parametrize("option", ["--max-time", "--timeout"])
def test_fifo_without_writer_times_out_and_the_process_exits(fifo: Path, option: str) -> None:
    result = run_child(["-m", "anyurl", "get", option, "2", f"file://{fifo}"], deadline=15)
    assert not result.killed, result.describe()
    assert result.returncode == FetchTimeout.exit_code, result.describe()
    assert f"file://{fifo}" in result.stderr, result.describe()
    assert 1.5 <= result.elapsed <= 2 + 4, result.describe()
    assert result.peak_rss_mb < MAX_RSS_MB, result.describe()


async def test_fifo_read_obeys_timeouts_read_between_chunks(fifo: Path) -> None:
    # the writer sends one line, then keeps the FIFO open and silent
    release = threading.Event()

    def writer() -> None:
        fd = os.open(fifo, os.O_WRONLY)
        try:
            os.write(fd, b"hello\n")
            release.wait(10)
        finally:
            os.close(fd)

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    try:
        async with Client(timeouts=Timeouts(read=1.0)) as client, client.open(f"file://{fifo}") as body:
            got = b""
            t0 = time.monotonic()
            with pytest.raises(FetchTimeout, match="Timeouts.read"):
                async for chunk in body:
                    got += chunk
            assert got == b"hello\n"
            assert 0.9 <= time.monotonic() - t0 < 3
    finally:
        release.set()
        t.join(5)

"""`anyurl ls` streams a huge listing: its output starts before the menu ends, and the
command's memory does not grow with the listing (issue 25 item 14).

The CLI runs in a child process, which reports its own peak RSS (VmHWM) on exit; the
hostile gopher server stays in the test process. Before the fix, `ls` held every entry
(and the table's rows) before printing.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.hostile.fakes.base import AsyncServer
from tests.hostile.fakes.gopher_bulk import GopherBulk
from tests.hostile.fakes.gopher_huge_menu import menu_line
from tests.procs import aspawn

from anyurl.errors import AnyURLError, ConnectError, FetchTimeout

ITEMS = 200_000
# Measured: 32-33 MB streaming, in each format; the old code peaked at 221 MB (--json-lines),
# 271 MB (table) and 783 MB (--json) for this menu, and printed nothing before the menu had ended.
MAX_RSS_MB = 100
MAX_SECONDS = 240  # a few seconds of CPU; the rest is slack for a loaded machine
FIRST_LINE_WAIT = 60  # the server holds the menu's second half until the test saw a line (or this)

pytestmark = pytest.mark.timeout(2 * MAX_SECONDS + 20)

# runs the CLI, then writes its peak RSS to the file named by the environment (atexit: after sys.exit)
CHILD = r"""
import atexit, os, runpy, sys

def report():
    with open("/proc/self/status") as f:
        hwm_kb = next(int(ln.split()[1]) for ln in f if ln.startswith("VmHWM:"))
    with open(os.environ["LS_RSS_FILE"], "w") as f:
        f.write(str(hwm_kb / 1024))

atexit.register(report)
sys.argv = ["anyurl", *sys.argv[1:]]
runpy.run_module("anyurl", run_name="__main__")
"""


class HalvedMenuServer(AsyncServer):
    """A menu of *items* lines; after the first half it waits for ``go`` (at most FIRST_LINE_WAIT)."""

    deadline = MAX_SECONDS

    def __init__(self, items: int) -> None:
        super().__init__()
        self.items = items
        self.go = asyncio.Event()
        self.half_sent_at: float | None = None
        self.done = False

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readline()
        for start in range(0, self.items, 2000):
            if start >= self.items // 2 and self.half_sent_at is None:
                self.half_sent_at = time.monotonic()
                try:
                    await asyncio.wait_for(self.go.wait(), FIRST_LINE_WAIT)
                except TimeoutError:
                    pass
            writer.write(b"".join(menu_line(i) for i in range(start, min(self.items, start + 2000))))
            await writer.drain()
        writer.write(b".\r\n")
        await writer.drain()
        self.done = True


async def run_ls(flags: list[str], tmp_path: os.PathLike[str]) -> tuple[int, str, str, float, bool]:
    """(lines, first line, last line, peak RSS in MB, whether the first line came before the menu's end)"""
    rss_file = os.path.join(tmp_path, "rss")
    env = dict(os.environ, LS_RSS_FILE=rss_file)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)  # this checkout's anyurl
    async with HalvedMenuServer(ITEMS) as srv:
        url = f"gopher://127.0.0.1:{srv.port}/1/huge"
        async with aspawn([sys.executable, "-c", CHILD, "ls", *flags, url], env=env,
                          stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE) as proc:
            async with asyncio.timeout(MAX_SECONDS):
                assert proc.stdout is not None and proc.stderr is not None
                err_task = asyncio.ensure_future(proc.stderr.read())
                first = await proc.stdout.readline()
                early = not srv.done
                srv.go.set()
                lines, last, tail = 1 if first else 0, first, b""
                while chunk := await proc.stdout.read(1 << 16):
                    lines += chunk.count(b"\n")
                    tail = (tail + chunk)[-4096:]
                if tail.endswith(b"\n"):
                    last = tail.splitlines()[-1]
                err = await err_task
                rc = await proc.wait()
    assert rc == 0, err.decode(errors="replace")[-3000:]
    rss = float(Path(rss_file).read_text())  # noqa: ASYNC240 -- a few bytes, the child is gone
    print(f"ls {flags}: {lines} lines, peak RSS {rss:.1f} MB, first line early: {early}")
    return lines, first.decode(), last.decode(), rss, early


async def test_ls_json_lines_streams_a_huge_menu(tmp_path: os.PathLike[str]) -> None:
    lines, first, last, rss, early = await run_ls(["--json-lines"], tmp_path)
    assert lines == ITEMS
    assert json.loads(first)["title"] == "Item 0000000"
    assert json.loads(last)["url"] == f"gopher://gopher.example/0/item/{ITEMS - 1:07d}.txt"
    assert early, "the first line came only after the whole menu"
    assert rss < MAX_RSS_MB, rss


async def test_ls_table_streams_a_huge_menu(tmp_path: os.PathLike[str]) -> None:
    lines, first, last, rss, early = await run_ls([], tmp_path)
    assert lines == ITEMS + 1  # the header
    assert first.split()[:6] == ["kind", "size", "modified", "name", "title", "url"]
    assert last.split()[:5] == ["file", f"{ITEMS - 1:07d}.txt", "Item", f"{ITEMS - 1:07d}",
                                f"gopher://gopher.example/0/item/{ITEMS - 1:07d}.txt"]
    assert early, "the first line came only after the whole menu"
    assert rss < MAX_RSS_MB, rss


async def test_ls_json_array_streams_a_huge_menu(tmp_path: os.PathLike[str]) -> None:
    lines, first, last, rss, early = await run_ls(["--json"], tmp_path)
    assert first == "[\n" and last == "]"
    assert early, "the first line came only after the whole menu"
    assert rss < MAX_RSS_MB, rss


# -- a listing that fails part-way (issue 25 residual) ----------------------------------------

@pytest.mark.parametrize("part", [3, 1200])  # menu lines before the reset or stall: in the first batch, or after two
@pytest.mark.parametrize(("end", "extra", "error", "says"), [
    ("reset", [], ConnectError, "connection lost"),
    ("stall", ["--timeout", "1"], FetchTimeout, "no data from the gopher server for 1.0 s"),
    ("stall", ["--max-time", "1.5"], FetchTimeout, "longer than"),
])
@pytest.mark.parametrize("fmt", ["--json", "--json-lines", "table"])
def test_ls_that_fails_part_way_prints_what_came_closes_its_json_and_fails(
        fmt: str, end: str, extra: list[str], error: type[AnyURLError], says: str, part: int) -> None:
    # Before: --json left "[" and the entries unclosed (or printed nothing: the batch and the
    # table's sample were dropped), and the server's error was reported as "cannot write to
    # standard output" with exit 10. Now what came is printed, --json's array is closed (valid
    # JSON), and the server's error is the one line on stderr, with its own exit code.
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    lines = b"".join(menu_line(i) for i in range(part))
    with GopherBulk([(lines, 0.3)], end=end) as srv:
        url = f"gopher://127.0.0.1:{srv.port}/1/menu"
        flags = [] if fmt == "table" else [fmt]
        proc = subprocess.run([sys.executable, "-m", "anyurl", "ls", *flags, *extra, url],
                              capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == error.exit_code, proc.stderr
    assert proc.stderr.startswith(f"anyurl: {url}: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert says in proc.stderr and "standard output" not in proc.stderr, proc.stderr
    if fmt == "--json":
        entries = json.loads(proc.stdout)
    elif fmt == "--json-lines":
        entries = [json.loads(line) for line in proc.stdout.splitlines()]
    else:
        header, *rows = proc.stdout.splitlines()
        assert header.split()[:4] == ["kind", "size", "modified", "name"]
        entries = [{"title": " ".join(row.split()[2:4])} for row in rows]
    assert [e["title"] for e in entries] == [f"Item {i:07d}" for i in range(part)]

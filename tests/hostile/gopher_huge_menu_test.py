"""A hostile gopher server sending a 1,000,000-item menu, generated lazily.

Before listings streamed, the whole menu was parsed into a list before the
first entry or byte reached the caller: this menu cost 886 MB. Now a menu
streams entry by entry, so reading it costs memory only for what the caller
keeps. The client runs in a child process so its peak RSS can be measured
without tracemalloc's slowdown; the server runs here.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import AsyncIterator

import pytest

ITEMS = 1_000_000
# A fresh interpreter with anyurl imported peaks near 40 MB; the old code needed ~900 MB here.
MAX_RSS_MB = 150
MAX_SECONDS = 110

pytestmark = pytest.mark.timeout(MAX_SECONDS + 10)


def menu_line(i: int) -> bytes:
    return b"0Item %07d\t/item/%07d.txt\tgopher.example\t70\r\n" % (i, i)


async def huge_menu_server(items: int) -> AsyncIterator[int]:
    """Serve a menu of *items* lines (then "."), written in batches as the client reads."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readline()
            for start in range(0, items, 2000):
                writer.write(b"".join(menu_line(i) for i in range(start, min(items, start + 2000))))
                await writer.drain()
            writer.write(b".\r\n")
            await writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    async with server:
        yield server.sockets[0].getsockname()[1]


CHILD = r"""
import asyncio, json, resource, sys
import anyurl

async def main(url, mode):
    out = {}
    async with anyurl.Client() as c:
        async with c.open(url) as body:
            if mode == "entries":
                n, last = 0, None
                async for e in body.aiter_entries():
                    n += 1
                    last = (e.name, e.url, e.kind)
                out.update(count=n, last=last, terminated=body.meta.get("terminated"))
            else:
                lines, size, tail = 0, 0, b""
                async for chunk in body:
                    lines += chunk.count(b"\n")
                    size += len(chunk)
                    tail = (tail + chunk)[-200:]
                out.update(count=lines, size=size, last=tail.decode().splitlines()[-1])
    out["maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


async def run_child(url: str, mode: str) -> tuple[dict[str, object], float]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)  # this checkout's anyurl
    started = time.monotonic()
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", CHILD, url, mode, env=env,
                                                stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE)
    try:
        out, err = await asyncio.wait_for(proc.communicate(), MAX_SECONDS)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise AssertionError(f"reading the menu took more than {MAX_SECONDS} s") from None
    assert proc.returncode == 0, err.decode()[-3000:]
    return json.loads(out), time.monotonic() - started


async def test_million_item_menu_streams_entries_in_bounded_memory() -> None:
    async for port in huge_menu_server(ITEMS):
        res, took = await run_child(f"gopher://127.0.0.1:{port}/1/huge", "entries")
        assert res["count"] == ITEMS
        assert res["last"] == [f"Item {ITEMS - 1:07d}", f"gopher://gopher.example/0/item/{ITEMS - 1:07d}.txt",
                               "file"]
        assert res["terminated"] is True
        assert res["maxrss_mb"] < MAX_RSS_MB, res  # type: ignore[operator]
        assert took < MAX_SECONDS


async def test_million_item_menu_rendered_as_bytes_in_bounded_memory() -> None:
    # `anyurl get gopher://.../1/huge` streams the menu's text rendering the same way
    async for port in huge_menu_server(ITEMS):
        res, took = await run_child(f"gopher://127.0.0.1:{port}/1/huge", "bytes")
        assert res["count"] == ITEMS
        assert str(res["last"]).startswith("file") and str(res["last"]).endswith(
            f"Item {ITEMS - 1:07d}  gopher://gopher.example/0/item/{ITEMS - 1:07d}.txt")
        assert res["maxrss_mb"] < MAX_RSS_MB, res  # type: ignore[operator]
        assert took < MAX_SECONDS

"""Read a listing in a child process and report what arrived and the child's peak RSS.

A fresh interpreter measures the client alone (the hostile server stays in the
test process) and without tracemalloc's slowdown. Modes: "entries" streams
``Body.aiter_entries()``, "bytes" streams the rendered text (as ``anyurl get``
does), "fetch" collects with ``Client.fetch``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from tests.procs import arun

CHILD = r"""
import asyncio, json, resource, sys
import anyurl

async def main(url, mode):
    out = {}
    async with anyurl.Client() as c:
        if mode == "fetch":
            r = await c.fetch(url)
            out.update(count=len(r.entries), first=r.entries[0].as_dict(), last=r.entries[-1].as_dict(),
                       meta=r.meta)
        else:
            async with c.open(url) as body:
                if mode == "entries":
                    n, first, last = 0, None, None
                    async for e in body.aiter_entries():
                        n += 1
                        if first is None:
                            first = e.as_dict()
                        last = e
                    out.update(count=n, first=first, last=last.as_dict() if last else None, meta=body.meta)
                else:
                    lines, size, tail = 0, 0, b""
                    async for chunk in body:
                        lines += chunk.count(b"\n")
                        size += len(chunk)
                        tail = (tail + chunk)[-300:]
                    out.update(count=lines, size=size, last=tail.decode().splitlines()[-1])
    # VmHWM, not ru_maxrss: the latter keeps the parent's peak across fork+exec
    with open("/proc/self/status") as f:
        hwm_kb = next(int(ln.split()[1]) for ln in f if ln.startswith("VmHWM:"))
    out["maxrss_mb"] = hwm_kb / 1024
    print(json.dumps(out, default=str))

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


async def read_listing(url: str, mode: str, max_seconds: float) -> tuple[dict[str, Any], float]:
    """(the child's report, seconds it took); AssertionError if it fails or takes longer."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)  # this checkout's anyurl
    started = time.monotonic()
    try:
        rc, out, err = await arun([sys.executable, "-c", CHILD, url, mode], within=max_seconds, env=env)
    except TimeoutError:
        raise AssertionError(f"reading {url} took more than {max_seconds} s") from None
    assert rc == 0, err.decode(errors="replace")[-3000:]
    report: dict[str, Any] = json.loads(out)
    return report, time.monotonic() - started

"""walk's memory on an endless generated gopher tree (issue 25 item 15).

Every menu lists 1000 more menus, so the frontier (directories found, not yet
listed) grows without end. A child process walks it and reports its peak RSS;
the walk must stop by its ``max_pending`` bound, well under the memory the
frontier cost when only ``max_items`` (1,000,000) bounded it.
"""

from __future__ import annotations

import json
import os
import sys
import time

from tests.hostile.fakes.gopher_menus import GopherMenus, gopher_menus
from tests.procs import arun

WIDTH = 1000
RSS_BOUND_MB = 400  # the old default passed it within seconds (~1.1 KB per pending item)

CHILD = r"""
import asyncio, json, sys, time
import anyurl

def rss_mb(field):
    with open("/proc/self/status") as f:
        return next(int(ln.split()[1]) for ln in f if ln.startswith(field)) / 1024

async def main(url, bound, seconds):
    out = {"count": 0, "error": None, "over": False}
    end = time.monotonic() + seconds
    async with anyurl.Client() as c:
        try:
            async for _ in c.walk(url):
                out["count"] += 1
                if out["count"] % 50 == 0 and (rss_mb("VmRSS:") > bound or time.monotonic() > end):
                    out["over"] = rss_mb("VmRSS:") > bound
                    break
        except anyurl.AnyURLError as exc:
            out["error"] = str(exc)
    out["maxrss_mb"] = rss_mb("VmHWM:")
    print(json.dumps(out))

asyncio.run(main(sys.argv[1], float(sys.argv[2]), float(sys.argv[3])))
"""


class EndlessMenus(dict[str, bytes]):
    """Each selector's menu: WIDTH menus below it, generated on demand."""

    port = 0

    def get(self, selector: str, default: bytes | None = None) -> bytes:  # type: ignore[override]
        # the last name grows with depth: no listing is the same as one above it (no loop)
        level = selector.count("/")
        lines = [f"1m{level}-{i}\t{selector}/{level}-{i}\t127.0.0.1\t{self.port}\r\n" for i in range(WIDTH)]
        return ("".join(lines) + ".\r\n").encode()


async def walk_in_child(url: str, bound_mb: float, seconds: float) -> dict[str, object]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    try:
        rc, out, err = await arun([sys.executable, "-c", CHILD, url, str(bound_mb), str(seconds)],
                                  within=seconds + 60, env=env)
    except TimeoutError:
        raise AssertionError(f"the walking child did not end within {seconds + 60} s") from None
    assert rc == 0, err.decode(errors="replace")[-3000:]
    report: dict[str, object] = json.loads(out)
    return report


async def test_walk_of_endless_tree_stops_at_max_pending_with_bounded_memory() -> None:
    menus = EndlessMenus()
    server: GopherMenus
    with gopher_menus(menus) as server:
        menus.port = server.port
        started = time.monotonic()
        report = await walk_in_child(f"gopher://127.0.0.1:{server.port}/1/r", RSS_BOUND_MB, 45)
    took = time.monotonic() - started
    assert not report["over"], f"peak RSS passed {RSS_BOUND_MB} MB: {report}"
    assert report["error"] is not None and "max_pending" in str(report["error"]), report
    assert float(str(report["maxrss_mb"])) < RSS_BOUND_MB, report
    print(f"walk stopped after {report['count']} items in {took:.1f} s, peak RSS {report['maxrss_mb']:.0f} MB")

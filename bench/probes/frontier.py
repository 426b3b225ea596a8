"""The crawl frontier at scale: admit N URLs (over H hosts, in batches as a crawl's listings
would), then take and finish some; print one JSON object: admission rate, take+finish rate,
peak RSS of this process, size of the state file.

    python -m bench.probes.frontier 10000000 [--hosts 10000] [--dir DIR]

The suite ``crawl`` runs it (bench/suites/crawl.py); tests/unit/transfer/test_frontier.py
runs it small to hold the memory bound.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import tempfile
import time

from anyurl.transfer.frontier import DONE, New, Outcome, SQLiteFrontier


def _url(i: int, hosts: int) -> tuple[str, str]:
    host = f"h{i // 1000 % hosts}.example"  # a listing gives one host a thousand URLs
    return f"http://{host}/dir{i // 1000 % 1000}/page{i}.html", host


async def measure(n: int, hosts: int, where: str, batch: int = 10_000, takes: int = 20_000,
                  cache_kib: int = 32 * 1024) -> dict[str, float]:
    path = os.path.join(where, "frontier.sqlite")
    f = SQLiteFrontier(path, cache_kib=cache_kib)
    await f.open()
    t0 = time.perf_counter()
    added = 0
    for start in range(0, n, batch):
        rows = []
        for i in range(start, min(n, start + batch)):
            url, host = _url(i, hosts)
            rows.append(New(url, url, host, 0, 1, "page"))
        added += await f.add(rows)
    admit = time.perf_counter() - t0
    t1 = time.perf_counter()
    done = 0
    while done < takes:
        items = await f.take(64, {}, 2)
        if not items:
            break
        # finished concurrently, as a crawl's fetches end: the frontier commits them in groups
        await asyncio.gather(*(f.finish(item, Outcome(DONE, "http", 100)) for item in items))
        done += len(items)
    cycle = time.perf_counter() - t1
    totals = await f.totals()
    await f.close()
    return {"urls": n, "admitted": added, "pending": totals.pending, "admit_seconds": round(admit, 2),
            "admitted_per_second": round(added / admit), "take_finish_per_second": round(done / cycle),
            "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "cpu_seconds": round(sum(resource.getrusage(resource.RUSAGE_SELF)[:2]), 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("n", type=int)
    ap.add_argument("--hosts", type=int, default=10_000)
    ap.add_argument("--cache-kib", type=int, default=32 * 1024, help="SQLite's page cache (default 32 MiB)")
    ap.add_argument("--takes", type=int, default=20_000, help="URLs taken and finished after admitting")
    ap.add_argument("--dir", default=None, help="where the state file goes (default: a temporary directory)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as where:
        got = asyncio.run(measure(args.n, args.hosts, where, takes=args.takes, cache_kib=args.cache_kib))
        path = os.path.join(where, "frontier.sqlite")
        got["state_mib"] = round(os.path.getsize(path) / 2**20, 1)
        print(json.dumps(got))


if __name__ == "__main__":
    main()

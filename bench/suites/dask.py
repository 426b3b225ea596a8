"""dask: 2,000 FTP files fetched across a dask.distributed LocalCluster through the
anyurl fsspec filesystem, 1 worker process vs 2, each file verified by sha256.

``python -m bench.run dask [--quick]`` (--quick: 500 files). Self-contained: it
starts vsftpd through the launcher and prints its own rows (no bench.harness).
Each worker process holds one Client, so its per-host limit (``Limits.per_host``)
is the politeness towards the server per worker; the cluster as a whole opens
at most workers x per_host connections to one host.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

FILE_SIZE = 4096


def fetch_and_hash(fs: Any, urls: list[str]) -> list[tuple[str, str]]:
    """Runs on a worker: (url, sha256) of each URL, fetched through *fs* (the anyurl filesystem)."""
    paths = [fs._strip_protocol(u) for u in urls]  # "anyurl+ftp://..." -> "ftp://..."
    blobs = fs.cat(paths, on_error="raise")  # concurrent within the worker, bounded by per_host
    return [(p, hashlib.sha256(blobs[p]).hexdigest()) for p in paths]


def fetch_all(urls: list[str], workers: int, batch: int = 100, per_host: int = 4) -> tuple[dict[str, str], float]:
    """Fetch *urls* over a LocalCluster of *workers* processes; (sha256 by URL, seconds)."""
    from dask.distributed import Client, LocalCluster

    from anyurl.adapters.fsspec import AnyURLFileSystem
    from anyurl.settings import Limits

    # workers import anyurl (and this module) from the same tree as the parent
    os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys([p for p in sys.path if p]))
    fs = AnyURLFileSystem(client_kwargs={"limits": Limits(per_host=per_host)}, skip_instance_cache=True)
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=40) as cluster, Client(cluster) as client:
        client.run(lambda: None)  # workers up before the clock starts
        t0 = time.perf_counter()
        futures = client.map(fetch_and_hash, [fs] * ((len(urls) + batch - 1) // batch),
                             [urls[i:i + batch] for i in range(0, len(urls), batch)], pure=False)
        results = client.gather(futures)
        took = time.perf_counter() - t0
    return {u: h for part in results for u, h in part}, took


def seed(launcher: Any, count: int) -> tuple[list[str], dict[str, str]]:
    """count files in vsftpd's /pub/dask-<count>/: their anyurl+ftp URLs and sha256 by URL."""
    from fixtures.servers import vsftpd

    ep = launcher.get("vsftpd")
    d = vsftpd.ensure_many(ep.info, count, FILE_SIZE, f"dask-{count}")
    base = f"anyurl+ftp://{ep.host}:{ep.port}/pub/{d.name}/"
    files = sorted(p for p in d.iterdir() if p.is_file())
    want = {f"ftp://{ep.host}:{ep.port}/pub/{d.name}/{p.name}": hashlib.sha256(p.read_bytes()).hexdigest()
            for p in files}
    return [base + p.name for p in files], want


def run(launcher: Any, quick: bool) -> None:
    count = 500 if quick else 2000
    urls, want = seed(launcher, count)
    rows = []
    for workers in (1, 2):
        got, took = fetch_all(urls, workers)
        ok = got == want
        rows.append({"group": "dask", "case": f"{count} ftp files, {workers} worker(s)", "workers": workers,
                     "files": count, "seconds": round(took, 3), "files_per_s": round(count / took, 1),
                     "sha256_ok": ok})
        print(f"dask  {count} x {FILE_SIZE} B over ftp, {workers} worker process(es): {took:6.2f} s "
              f"({count / took:7.1f} files/s) sha256 {'ok' if ok else 'MISMATCH'}", flush=True)
    out = Path(__file__).resolve().parents[1] / "results"
    out.mkdir(exist_ok=True)
    with open(out / "latest.jsonl", "a") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    from bench.run import run_with_servers

    run_with_servers(run, "--quick" in sys.argv)

"""dask: 2,000 FTP files fetched across a dask.distributed LocalCluster through the
anyurl fsspec filesystem, 1 worker process vs 2, each file verified by sha256.

``python -m bench.run dask [--quick]`` (--quick: 500 files). It starts vsftpd
through the launcher and times the cluster's work in-process (bench.harness.report), rounds alternating.
Each worker process holds one Client, so its per-host limit (``Limits.per_host``)
is the politeness towards the server per worker; the cluster as a whole opens
at most workers x per_host connections to one host.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
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

    # workers import anyurl (and this module) from the same tree as the parent; the caller's own
    # PYTHONPATH comes back afterwards (left set, it leaked into every later subprocess of a test run)
    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys([p for p in sys.path if p]))
    try:
        fs = AnyURLFileSystem(client_kwargs={"limits": Limits(per_host=per_host)}, skip_instance_cache=True)
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                          silence_logs=40) as cluster, Client(cluster) as client:
            client.run(lambda: None)  # workers up before the clock starts
            t0 = time.perf_counter()
            futures = client.map(fetch_and_hash, [fs] * ((len(urls) + batch - 1) // batch),
                                 [urls[i:i + batch] for i in range(0, len(urls), batch)], pure=False)
            results = client.gather(futures)
            took = time.perf_counter() - t0
    finally:
        if before is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = before
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
    from bench import harness

    count = 500 if quick else 2000
    title = f"dask: {count} x {FILE_SIZE} B over ftp through fsspec, 1 worker process vs 2"
    if not harness.wanted(title):
        return
    urls, want = seed(launcher, count)
    cases = [harness.Case(f"{w} worker process{'es' if w > 1 else ''}", []) for w in (1, 2)]
    load = harness.load1()
    rounds = min(harness.ROUNDS, 3)  # each run starts a cluster: seconds before the clock starts
    for i in range(rounds):
        for w, case in ([(1, cases[0]), (2, cases[1])] if i % 2 == 0 else [(2, cases[1]), (1, cases[0])]):
            got, took = fetch_all(urls, w)
            if got != want:
                raise RuntimeError(f"dask, {w} workers: {sum(got.get(u) != h for u, h in want.items())} "
                                   "files differ from the server's (sha256)")
            case.runs.append(harness.Run(took, 0, 0.0))
    harness.report(title, cases, cases[0].name, unit_work=(count, "files"), load=(load, harness.load1()), rss=False,
                   note="in-process timing of the cluster's work (workers started before the clock); "
                        "every file's sha256 checked; CPU not measured (it is spread over the workers)")


if __name__ == "__main__":
    from bench.run import run_with_servers

    run_with_servers(run, "--quick" in sys.argv)

"""A crawl spread over a Dask cluster (a LocalCluster of 2 worker processes): the seeds split
by host (transfer.crawl.by_host), each part crawled by one worker with its own state, so every
host is crawled by one process: nginx's log shows each URL fetched once, and the files are
the site's, byte-exact (docs/crawl.md)."""

from __future__ import annotations

import os
import shutil
import sys
import uuid
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("dask.distributed")
from fixtures import crawl_site  # noqa: E402
from fixtures.launcher import Launcher  # noqa: E402

from anyurl.transfer.crawl import by_host, crawl_sync  # noqa: E402


def test_a_crawl_partitioned_by_host_over_two_worker_processes(servers: Launcher, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from dask.distributed import Client, LocalCluster

    nginx = servers.get("nginx")
    tag = uuid.uuid4().hex[:8]
    www = Path(nginx.info["www"])
    sites = {name: crawl_site.build(www / f"{name}-{tag}", pages=20) for name in ("a", "b")}
    # two hosts for one server: 127.0.0.1 and localhost (by_host puts them in different parts)
    seeds = [f"http://127.0.0.1:{nginx.port}/a-{tag}/", f"http://localhost:{nginx.port}/b-{tag}/",
             f"http://127.0.0.1:{nginx.port}/a-{tag}/sub1/"]
    parts = by_host(seeds, 2)
    assert sorted(map(len, parts)) == [1, 2] and all(len({s.split("/")[2] for s in p}) == 1 for p in parts)
    # the workers import anyurl from this tree; only for this test (a server started later with
    # the system's Python must not see this interpreter's paths)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(dict.fromkeys([p for p in sys.path if p])))
    try:
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                          silence_logs=40) as cluster, Client(cluster) as client:
            futures = [client.submit(crawl_sync, part, dest=str(tmp_path / "out"),
                                     state=str(tmp_path / f"state-{i}.sqlite"), per_host=2, pure=False)
                       for i, part in enumerate(parts)]
            summaries = client.gather(futures, errors="raise")
    finally:
        for name in sites:
            shutil.rmtree(www / f"{name}-{tag}", ignore_errors=True)
    assert all(s["errors"] == 0 and s["pending"] == 0 for s in summaries), summaries
    assert len({s["pid"] for s in summaries}) == 2  # two processes did the work
    for name, host in (("a", "127.0.0.1"), ("b", "localhost")):
        got = Counter(crawl_site.gets(nginx.info["access_log"], f"/{name}-{tag}/"))
        assert not {p: n for p, n in got.items() if n > 1}, got
        root = tmp_path / "out" / f"{host}:{nginx.port}" / f"{name}-{tag}"
        for rel, data in sites[name].items():
            assert (root / rel).read_bytes() == data, (name, rel)

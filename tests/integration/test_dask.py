"""Dask beyond one machine (here: a LocalCluster of 2 worker processes): 2,000 FTP
files from vsftpd fetched through the anyurl fsspec filesystem, every one checked
by sha256 against the file on the server's disk (bench/suites/dask.py does the work)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("dask.distributed")
pytest.importorskip("fsspec")
from bench.suites import dask as bench_dask  # noqa: E402
from fixtures.launcher import Launcher  # noqa: E402


def test_two_thousand_urls_across_two_worker_processes(servers: Launcher) -> None:
    urls, want = bench_dask.seed(servers, 2000)
    # the 2,000 files leave /pub with the test: later tests walk /pub recursively
    seeded = Path(servers.get("vsftpd").info["anon_root"]) / "pub" / "dask-2000"
    try:
        assert len(urls) == 2000
        got, took = bench_dask.fetch_all(urls, workers=2)
    finally:
        shutil.rmtree(seeded, ignore_errors=True)
    assert len(got) == 2000
    assert got == want  # keys are the URLs the workers fetched, values the sha256 of what arrived
    assert took < 120, took

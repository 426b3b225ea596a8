"""Issue 25 item 7: ``dd.read_csv`` over anyurl's fsspec filesystem, with what the
``[dask]`` extra installs (dask's "dataframe": pandas, pyarrow), against pygopherd."""

from __future__ import annotations

import pytest

pytest.importorskip("fsspec")
pytest.importorskip("dask")
import dask.dataframe as dd  # noqa: E402  (dask installed by the extra: its dataframe part must import)
from fixtures.launcher import Launcher  # noqa: E402


def test_dask_read_csv_over_gopher(servers: Launcher) -> None:
    ep = servers.get("pygopherd")
    # gopher gives no size: one block per file (blocksize=None), as dask says for such filesystems
    df = dd.read_csv(f"gopher://{ep.host}:{ep.port}/0/data/table.csv", blocksize=None).compute(scheduler="sync")
    assert list(df["name"]) == ["alpha", "beta", "gamma"] and list(df["size"]) == [1, 22, 333]

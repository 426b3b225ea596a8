"""Issue 25 item 7: ``pip install 'anyurl[dask]'`` must give what ``dd.read_csv`` needs
(dask's own "dataframe" extra: pandas and pyarrow), not only dask.distributed."""

from __future__ import annotations

import importlib.metadata
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[3]


def test_the_dask_extra_asks_for_dask_dataframe() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    dask = [r for r in map(Requirement, extras["dask"]) if r.name == "dask"]
    assert len(dask) == 1 and {"dataframe", "distributed"} <= dask[0].extras, extras["dask"]


def test_what_dask_dataframe_needs_is_named_by_dask_itself() -> None:
    # the extra is dask's own "dataframe" (which names pandas and pyarrow), not a copy of its list
    try:
        requires = importlib.metadata.requires("dask") or []
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("dask is not installed")
    needs = {Requirement(r).name for r in requires if 'extra == "dataframe"' in r}
    assert {"pandas", "pyarrow"} <= needs, needs

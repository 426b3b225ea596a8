"""``fetch()`` holds a body once, not twice (issue 25 item 16: a list of chunks and a join
peaked at twice the body size). Peak RSS measured in a child process."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fixtures.launcher import Endpoint, Launcher
from tests.hostile.fakes.child import run_child

SIZE = 200 << 20  # 200 MiB


def _peak_of_fetch(url: str) -> float:
    code = (f"import anyurl\nr = anyurl.fetch_sync({url!r})\n"
            f"assert len(r.content) == {SIZE}, len(r.content)\n")
    result = run_child(["-c", code], deadline=120)
    assert result.returncode == 0, result.describe()
    print(f"peak RSS {result.peak_rss_mb:.0f} MB fetching {url}")
    return result.peak_rss_mb


@pytest.fixture
def big_file(servers: Launcher) -> tuple[Endpoint, Path]:
    ep = servers.get("nginx")
    path = Path(ep.info["www"]) / "big-200m.bin"
    if not path.exists() or path.stat().st_size != SIZE:
        with open(path, "wb") as f:
            block = os.urandom(1 << 20)  # incompressible, and never one shared page
            for i in range(SIZE >> 20):
                f.write(block[i:] + block[:i])
        os.chmod(path, 0o644)
    return ep, path


def test_fetch_holds_a_200_mib_body_once_from_nginx(big_file: tuple[Endpoint, Path]) -> None:
    ep, path = big_file
    peak = _peak_of_fetch(f"http://{ep.host}:{ep.port}/{path.name}")
    assert peak < 200 * 1.4, f"{peak:.0f} MB peak for a 200 MiB body"  # it was 425; now 230


def test_fetch_holds_a_200_mib_body_once_from_file(big_file: tuple[Endpoint, Path]) -> None:
    _ep, path = big_file
    peak = _peak_of_fetch(path.as_uri())
    assert peak < 200 * 1.4, f"{peak:.0f} MB peak for a 200 MiB body"

"""A crawl fetches through the batch engine (transfer/batch.py), so it gets the per-origin
scheduling ``anyurl get`` has: through a latency relay (bench/relay.py, 100 ms round trip),
a crawl with per_host=1 (one connection) and parallel=8 of a page linking 40 others sends
the 40 GETs pipelined 8 at a time on its one connection (nginx's access log: which connection,
when each began), instead of one round trip each. The files saved are checked byte for byte."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixtures.launcher import Endpoint, Launcher
from tests.integration.test_http import AccessLog
from tests.integration.test_http_pipeline import _bursts, _relay

from anyurl import Client, Limits
from anyurl.transfer.crawl import crawl

PAGES = 40


@pytest.fixture(scope="module")
def nginx(servers: Launcher) -> Endpoint:
    return servers.get("nginx")


@pytest.fixture
def site(nginx: Endpoint) -> Iterator[dict[str, bytes]]:
    root = Path(nginx.info["www"]) / "crawlpipe"
    root.mkdir(exist_ok=True)
    files = {f"p{i}.html": f"<html><body><p>page {i}</p>{'x' * (100 + i)}</body></html>\n".encode()
             for i in range(PAGES)}
    files["index.html"] = ("<html><body>" + "".join(f'<a href="p{i}.html">{i}</a>' for i in range(PAGES))
                           + "</body></html>\n").encode()
    for name, data in files.items():
        (root / name).write_bytes(data)
    yield files
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def relayed(nginx: Endpoint) -> Iterator[str]:
    with _relay(nginx) as origin:
        yield origin


async def test_a_crawl_pipelines_its_gets_on_one_connection(nginx: Endpoint, site: dict[str, bytes], relayed: str,
                                                            tmp_path: Path) -> None:
    log = AccessLog(nginx.info["access_log"])
    async with Client(limits=Limits(per_host=1)) as client:
        result = await crawl(client, f"{relayed}/crawlpipe/index.html", dest=tmp_path / "out", per_host=1,
                             parallel=8, robots=False)
    assert result.errors == 0 and result.fetched == PAGES + 1
    assert {p.name: p.read_bytes() for p in (tmp_path / "out").rglob("*") if p.is_file()} == site
    lines = await log.lines(PAGES + 1)
    assert len(lines) == PAGES + 1
    bursts = _bursts(lines)
    assert len(bursts) == 1  # one connection (per_host=1)
    # the index alone, then the 40 pages it links pipelined up to 8 at once: a handful of
    # bursts, not 40 round trips one by one
    (counts,) = bursts.values()
    assert counts[0] == 1 and len(counts) <= 15 and max(counts) >= 4, counts

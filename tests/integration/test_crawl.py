"""Crawls and mirrors fetch each URL once (nginx's access log says so), several seeds share
one seen-set, and each seed keeps its own scope."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from collections import Counter
from pathlib import Path

import pytest
from fixtures import crawl_site
from fixtures.launcher import Endpoint, Launcher

from anyurl.client import Client

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2] / "src"),
                                                    os.environ.get("PYTHONPATH", "")])}


def run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "anyurl", *args], capture_output=True, text=True,
                          timeout=timeout, env=ENV, check=False)


@pytest.fixture
def site(servers: Launcher) -> tuple[Endpoint, str, dict[str, bytes]]:
    ep = servers.get("nginx")
    name = f"site-{uuid.uuid4().hex[:8]}"
    root = Path(ep.info["www"]) / name
    files = crawl_site.build(root, pages=50)
    yield ep, name, files
    shutil.rmtree(root, ignore_errors=True)


def test_mirror_of_a_web_site_fetches_each_page_once(site: tuple[Endpoint, str, dict[str, bytes]],
                                                     tmp_path: Path) -> None:
    # was: 102 GETs for a 50-page site, each page once to find its links and once to save it
    ep, name, files = site
    proc = run("mirror", f"http://{ep.host}:{ep.port}/{name}/", str(tmp_path / "m"))
    assert proc.returncode == 0, proc.stderr
    for rel, data in files.items():
        assert (tmp_path / "m" / rel).read_bytes() == data, rel
    got = Counter(crawl_site.gets(ep.info["access_log"], f"/{name}/"))
    twice = {p: n for p, n in got.items() if n > 1}
    assert not twice, twice
    # every file of the site was fetched (blob0/blob1 by the walk's look, then saved from those bytes)
    assert {f"/{name}/{rel.removesuffix('index.html')}" for rel in files} <= set(got)


async def test_walk_of_overlapping_seeds_lists_each_resource_once(
        site: tuple[Endpoint, str, dict[str, bytes]]) -> None:
    ep, name, files = site
    base = f"http://{ep.host}:{ep.port}/{name}"
    seeds = [f"{base}/sub1/", f"{base}/", f"{base}/p3.html"]  # the site's root reaches the others
    async with Client() as client:
        found = [f async for f in client.walk(seeds, keep=True, requisites=True, under_seed=True)]
    urls = Counter(f.url for f in found)
    assert not {u: n for u, n in urls.items() if n > 1}
    got = Counter(crawl_site.gets(ep.info["access_log"], f"/{name}/"))
    assert not {p: n for p, n in got.items() if n > 1}, got
    # each seed's own scope: the sub1 seed's "../p1.html" is found, by the root seed
    by_url = {f.url: f for f in found}
    assert by_url[f"{base}/p1.html"].seed == 1
    assert {f.seed for f in found if f.depth == 0} == {0, 1, 2}
    # the bytes of each page came with it
    page = by_url[f"{base}/p7.html"]
    assert page.content is not None and page.content.read() == files["p7.html"]


async def test_walk_under_seed_keeps_each_seed_below_its_directory(
        site: tuple[Endpoint, str, dict[str, bytes]]) -> None:
    ep, name, _files = site
    base = f"http://{ep.host}:{ep.port}/{name}"
    async with Client() as client:
        found = [f async for f in client.walk([f"{base}/sub0/", f"{base}/sub2/"], under_seed=True)]
    urls = sorted(f.url for f in found)
    assert urls == [f"{base}/sub0/", f"{base}/sub0/leaf0.txt", f"{base}/sub2/", f"{base}/sub2/leaf2.txt"]


async def test_crawl_of_overlapping_seeds_fetches_each_url_once(
        servers: Launcher, site: tuple[Endpoint, str, dict[str, bytes]], tmp_path: Path) -> None:
    # seeds that reach each other (a site and pages in it, an FTP tree and a directory in it)
    from fixtures import mirror_tree
    from fixtures.servers import vsftpd

    from anyurl.transfer.crawl import crawl

    ep, name, files = site
    ftp = servers.get("vsftpd")
    ftp_root = Path(ftp.info["anon_root"]) / "pub" / name
    ftp_files = mirror_tree.build(ftp_root, 30, links=False)
    mark = os.path.getsize(ftp.info["log"])  # noqa: ASYNC240
    base = f"http://{ep.host}:{ep.port}/{name}"
    ftp_base = f"ftp://{ftp.host}:{ftp.port}/pub/{name}"
    seeds = [f"{base}/sub1/", f"{base}/", f"{base}/p3.html", f"{ftp_base}/dir%200/", f"{ftp_base}/"]
    try:
        async with Client() as client:
            result = await crawl(client, seeds, dest=tmp_path / "c", parallel=6)
    finally:
        shutil.rmtree(ftp_root, ignore_errors=True)
    assert result.errors == 0, result.first_errors
    got = Counter(crawl_site.gets(ep.info["access_log"], f"/{name}/"))
    assert not {p: n for p, n in got.items() if n > 1}, got
    retrs = Counter(c for c in vsftpd.commands(ftp.info["log"], mark) if c.startswith("RETR "))
    assert not {c: n for c, n in retrs.items() if n > 1}, retrs
    assert len(retrs) == len(ftp_files)
    host = tmp_path / "c" / f"127.0.0.1:{ep.port}" / name
    for rel, data in files.items():
        assert (host / rel).read_bytes() == data, rel
    for rel, data in ftp_files.items():
        assert (tmp_path / "c" / f"127.0.0.1:{ftp.port}" / "pub" / name / rel).read_bytes() == data, rel
    assert result.by_scheme["ftp"]["fetched"] == len(ftp_files)

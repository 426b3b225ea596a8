"""Scrapy over anyurl: a real spider (``scrapy runspider``, in a subprocess) crawls the
gopher hole (pygopherd), an FTP tree (vsftpd) and a news group (INN) through
``anyurl.adapters.scrapy.AnyURLDownloadHandler``; every item must arrive exactly once, with
the bytes the server holds."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

pytest.importorskip("scrapy")
from fixtures.launcher import Endpoint, Launcher  # noqa: E402
from fixtures.servers import _gopher_seed as gseed  # noqa: E402

import anyurl  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
FILE_KINDS = {"file", "article"}


def crawl(tmp_path: Path, roots: list[str], *settings: str, probe: tuple[str, ...] | list[str] = (),
          deny: str = "", timeout: float = 240) -> tuple[list[dict[str, Any]], str]:
    out = tmp_path / "items.jsonl"
    argv = [sys.executable, "-m", "scrapy", "runspider", str(HERE / "scrapy_spider.py"), "-O", f"{out}:jsonlines",
            "-a", "roots=" + ",".join(roots), "-a", "probe=" + ",".join(probe), "-a", f"deny={deny}"]
    for s in settings:
        argv += ["-s", s]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT), *sys.path])}
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-4000:]
    items = [json.loads(line) for line in out.read_text().splitlines()]
    return items, proc.stderr


async def expected_files(roots: list[str], deny: str = "", **client_kw: Any) -> set[str]:
    """File URLs reachable from *roots* on their own servers, by a plain anyurl walk (no Scrapy)."""
    from urllib.parse import urlsplit

    def origin(u: str) -> str:
        p = urlsplit(u)
        return f"{p.scheme}:{p.netloc}" if p.scheme != "news" else "news:"

    origins = {origin(r) for r in roots}
    files: set[str] = set()
    seen: set[str] = set(roots)
    todo = list(roots)
    from anyurl.transfer.names import is_parent_link

    async with anyurl.Client(**client_kw) as client:
        while todo:
            url = todo.pop()
            r = await client.fetch(url)
            for e in r.entries or []:
                if (e.url is None or e.url in seen or origin(e.url) not in origins or is_parent_link(url, e)
                        or (deny and deny in e.url)):
                    continue
                seen.add(e.url)
                if e.kind in ("directory", "group"):
                    todo.append(e.url)
                elif e.kind in FILE_KINDS:
                    files.add(e.url)
    return files


def seed_ftp_tree(ep: Endpoint) -> tuple[Path, dict[str, bytes]]:
    base = Path(ep.info["anon_root"]) / "pub" / "scrapy-tree"
    files = {"a.txt": b"alpha\n", "b c/with space.txt": b"spaced\n", "b c/deeper/100%.bin": bytes(range(256)) * 9,
             "d/e/f/g.txt": b"deep\n" * 100}
    for rel, data in files.items():
        p = base / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    for dirpath, _dirs, names in os.walk(base):
        os.chmod(dirpath, 0o755)
        for n in names:
            os.chmod(os.path.join(dirpath, n), 0o644)
    return base, files


def test_spider_scrapes_gopher_ftp_and_news_once_each(servers: Launcher, tmp_path: Path) -> None:
    pyg, ftp, inn, web = (servers.get(n) for n in ("pygopherd", "vsftpd", "inn", "nginx"))
    base, files = seed_ftp_tree(ftp)
    gopher_root = f"gopher://{pyg.host}:{pyg.port}/1/"
    ftp_root = f"ftp://{ftp.host}:{ftp.port}/pub/scrapy-tree/"
    group = inn.info["group"]
    news_server = f"{inn.host}:{inn.port}"
    news_root = f"news://{news_server}/{group}"  # RFC 5538 form: Scrapy wants "://" and a host
    nntp_root = f"nntp://{inn.host}:{inn.port}/{group}"
    http_item = f"http://{web.host}:{web.port}/hello.txt"
    large = next(a for a in inn.info["articles"] if a["subject"] == "A large article")
    roots = [gopher_root, ftp_root, news_root, nntp_root, http_item]
    items, stderr = crawl(tmp_path, roots,
                          "USER_AGENT=anyurl-scrapy-test/1.0", "CONCURRENT_REQUESTS_PER_DOMAIN=4",
                          deny="/many", probe=[f"nntp://{inn.host}:{inn.port}/{group}/{large['number']}"])
    errors = [i for i in items if "error" in i]
    got = [i for i in items if "error" not in i]
    urls = [i["url"] for i in got]
    dupes = {u for u in urls if urls.count(u) > 1}
    assert not dupes, sorted(dupes)[:5]
    want = asyncio.run(expected_files([gopher_root, ftp_root, f"news:{group}", nntp_root],
                                      deny="/many", news_server=news_server)) | {http_item}
    want = {f"news://{news_server}/" + u[5:] if u.startswith("news:") else u for u in want}
    assert set(urls) == want, (sorted(want - set(urls))[:5], sorted(set(urls) - want)[:5])
    assert not [u for u in urls if "/many/" in u]  # the spider's deny= pattern held
    by_url = {i["url"]: i for i in got}
    # bytes equal what the servers hold
    for rel, data in files.items():
        url = ftp_root + "/".join(quote(seg, safe="") for seg in rel.split("/"))
        assert by_url[url]["sha256"] == hashlib.sha256(data).hexdigest(), rel
    assert by_url[f"gopher://{pyg.host}:{pyg.port}/9/sub/blob.bin"]["sha256"] == hashlib.sha256(gseed.blob()).hexdigest()
    assert by_url[f"gopher://{pyg.host}:{pyg.port}/0/hello.txt"]["class"] == "TextResponse"
    news_items = [u for u in urls if u.startswith(("news://", "nntp:"))]
    assert len(news_items) == 2 * len(inn.info["articles"])
    # DOWNLOAD_MAXSIZE through the download_maxsize meta: the 600 kB article is refused
    assert [e["error"] for e in errors] == ["IgnoreRequest"] and "DOWNLOAD_MAXSIZE=1000" in errors[0]["message"]
    # USER_AGENT reached the HTTP server through anyurl
    assert "anyurl-scrapy-test/1.0" in Path(web.info["access_log"]).read_text()
    assert "Traceback" not in stderr


def test_settings_map_to_the_client() -> None:
    from scrapy.utils.reactor import install_reactor
    from scrapy.utils.test import get_crawler

    install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")
    from twisted.internet import reactor

    from anyurl.adapters.scrapy import AnyURLDownloadHandler

    try:
        crawler = get_crawler(settings_dict={"DOWNLOAD_TIMEOUT": 7, "CONCURRENT_REQUESTS_PER_DOMAIN": 3,
                                             "DOWNLOAD_MAXSIZE": 12345, "USER_AGENT": "ua/1",
                                             "ANYURL_CLIENT_KWARGS": {"news_server": "news.invalid:119"}})
        h = AnyURLDownloadHandler.from_crawler(crawler)
        c = h.client
        assert c.timeouts.total == 7 and c.timeouts.connect == 7 and c.limits.per_host == 3
        assert c.user_agent == "ua/1" and c.news_server == "news.invalid:119" and h.maxsize == 12345
    finally:
        # the reactor's asyncio loop never runs in this process: closed here, or the
        # interpreter reports an "unclosed event loop" at exit
        reactor._asyncioEventloop.close()  # type: ignore[attr-defined]

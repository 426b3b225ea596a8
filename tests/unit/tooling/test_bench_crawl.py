"""bench/suites/crawl.py: the generated site is whole (every file reached from the index pages
through links, requisites and CSS, every link in scope names a file of the site), and a run's
output that misses, cuts short or adds a file is refused."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
from bench.suites import crawl

HOSTS = [("127.0.0.1", 8001), ("127.0.0.2", 8002)]
REF = re.compile(rb'(?:href|src)="([^"]+)"|url\("?([^")]+)"?\)')


def _reached(files: dict[str, bytes], origin: str) -> set[str]:
    seen, todo = {"index.html"}, ["index.html"]
    while todo:
        rel = todo.pop()
        for m in REF.finditer(files[rel]):
            url = urljoin(f"{origin}/{rel}", (m.group(1) or m.group(2)).decode())
            parts = urlsplit(url)
            if f"{parts.scheme}://{parts.netloc}" != origin:
                continue
            target = parts.path.lstrip("/") or "index.html"
            assert target in files, f"{rel} names {url}, not a file of the site"
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def test_every_file_of_a_host_is_reached_from_its_index() -> None:
    files = crawl.web_files(2500, 0, HOSTS)
    assert _reached(files, "http://127.0.0.1:8001") == set(files)
    assert sum(rel.endswith(".html") for rel in files) == 2501  # the pages and the index
    assert any(b"http://127.0.0.2:8002/" in data for data in files.values())  # a link out of scope
    assert {"css/base.css", "img/bg3.png", "img/own/p2490.png", "js/j7.js"} <= set(files)


def test_a_run_that_did_not_do_the_work_is_refused(tmp_path: Path) -> None:
    want = {**crawl.ftp_files(150), **crawl.gopher_files(60)}
    crawl.write_tree(tmp_path, want)
    crawl.check_tree("whole", crawl.sizes(tmp_path), want)
    (tmp_path / "a0/b1/f100.dat").write_bytes(b"short")
    with pytest.raises(RuntimeError, match="1 of another size"):
        crawl.check_tree("cut", crawl.sizes(tmp_path), want)
    (tmp_path / "a0/b1/f100.dat").unlink()
    with pytest.raises(RuntimeError, match="1 missing"):
        crawl.check_tree("missing", crawl.sizes(tmp_path), want)
    crawl.write_tree(tmp_path, {"a0/b1/f100.dat": want["a0/b1/f100.dat"], "robots.txt": b"x"})
    with pytest.raises(RuntimeError, match="1 more"):
        crawl.check_tree("extra", crawl.sizes(tmp_path), want)

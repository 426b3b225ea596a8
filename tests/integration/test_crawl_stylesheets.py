"""A crawl reads a linked style sheet for its requisites, as ``wget -p`` does: the images its
CSS ``url()`` names and the sheets it ``@import``s are saved too (nginx's access log shows
each fetched once)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from collections import Counter
from pathlib import Path

from fixtures import crawl_site
from fixtures.launcher import Launcher

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2] / "src"),
                                                    os.environ.get("PYTHONPATH", "")])}

FILES = {
    "index.html": b'<html><head><link rel="stylesheet" href="css/site.css"></head>'
                  b'<body><a href="p1.html">p1</a></body></html>\n',
    "p1.html": b'<html><head><link rel="stylesheet" href="css/site.css"></head><body>p1</body></html>\n',
    "css/site.css": b'@import url("base.css");\nbody { background: url(../img/bg.png) }\n',
    "css/base.css": b"h1 { background-image: url('/SITE/img/head.png') }\n",
    "img/bg.png": bytes(range(256)) * 3,
    "img/head.png": bytes(range(255, -1, -1)) * 2,
}


def test_crawl_saves_what_a_linked_style_sheet_names(servers: Launcher, tmp_path: Path) -> None:
    ep = servers.get("nginx")
    name = f"css-{uuid.uuid4().hex[:8]}"
    root = Path(ep.info["www"]) / name
    files = {rel: data.replace(b"SITE", name.encode()) for rel, data in FILES.items()}
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    try:
        out = tmp_path / "out"
        proc = subprocess.run([sys.executable, "-m", "anyurl", "crawl", "-q", "--no-robots", "-d", str(out),
                               f"http://{ep.host}:{ep.port}/{name}/"],
                              capture_output=True, text=True, timeout=300, env=ENV, check=False)
        assert proc.returncode == 0, proc.stderr
        site = out / f"{ep.host}:{ep.port}" / name
        saved = {str(p.relative_to(site)): p.read_bytes() for p in site.rglob("*") if p.is_file()}
        assert saved == files
        got = Counter(crawl_site.gets(ep.info["access_log"], f"/{name}/"))
        assert got[f"/{name}/css/base.css"] == 1 and got[f"/{name}/img/head.png"] == 1
        assert all(n == 1 for n in got.values()), got
    finally:
        shutil.rmtree(root, ignore_errors=True)

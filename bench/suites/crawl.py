"""crawl: a generated web site (pages linking each other, a stylesheet, images, binaries) from
nginx crawled by ``anyurl crawl`` and ``anyurl mirror`` beside ``wget -r -p -np``, each copy
checked (every file of the site, byte-exact); then the crawl frontier alone at 10,000,000 URLs
(bench/probes/frontier.py: admission rate, take+finish rate, peak RSS, state file size).

    bench/.venv/bin/python -m bench.run crawl [--quick]     (--quick: 500 pages, 1,000,000 URLs)
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from fixtures import crawl_site

from bench.harness import Case, anyurl_cmd, compare, python_cmd, record, wanted


def _site(launcher: object, pages: int) -> tuple[str, dict[str, bytes], str]:
    ep = launcher.get("nginx")  # type: ignore[attr-defined]
    name = f"crawl-bench-{pages}"
    files = crawl_site.build(Path(ep.info["www"]) / name, pages=pages)
    return f"http://{ep.host}:{ep.port}/{name}/", files, f"{ep.host}:{ep.port}"


def _group(launcher: object, pages: int) -> None:
    title = f"crawl: a web site of {pages} pages (+ requisites) from nginx, vs wget -r -p -np"
    if not wanted(title):
        return
    url, files, hostport = _site(launcher, pages)
    name = url.rstrip("/").rsplit("/", 1)[1]
    work = Path(tempfile.mkdtemp(prefix="anyurl-crawl-bench-"))
    out = work / "out"

    def fresh() -> None:
        shutil.rmtree(out, ignore_errors=True)
        for p in work.glob("state*"):
            p.unlink()

    def check(root: Path) -> None:
        bad = [rel for rel, data in files.items() if not (root / rel).is_file() or (root / rel).read_bytes() != data]
        if bad:
            raise RuntimeError(f"crawl bench: {len(bad)} of {len(files)} files missing or different: {bad[:3]}")

    cases = [
        Case("wget -r -p -np", ["wget", "-q", "-r", "-p", "-np", "-l", "inf", "-e", "robots=off", "-P", str(out), url],
             fresh, lambda: check(out / hostport / name)),
        Case("anyurl crawl", anyurl_cmd("crawl", "-q", "--no-robots", "-d", str(out), "--state", str(work / "state"),
                                        url), fresh, lambda: check(out / hostport / name)),
        Case("anyurl mirror", anyurl_cmd("mirror", "-q", "--no-robots", url, str(out)), fresh, lambda: check(out)),
    ]
    try:
        compare(title, cases, "wget -r -p -np", unit_work=(len(files), "files"))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _frontier(n: int) -> None:
    title = f"crawl: the frontier alone, {n:,} URLs over 10,000 hosts (SQLite state on disk)"
    if not wanted(title):
        return
    with tempfile.TemporaryDirectory(prefix="anyurl-frontier-") as where:
        proc = subprocess.run([*python_cmd("-m", "bench.probes.frontier", str(n), "--dir", where)],
                              capture_output=True, text=True, check=True)
    got = json.loads(proc.stdout)
    print(f"\n{title}\n  {json.dumps(got)}")
    record(title, [f"### {title}", "", "```", json.dumps(got), "```"], {"frontier": got})


def run(launcher: object, quick: bool) -> None:
    _group(launcher, 500 if quick else 5000)
    _frontier(1_000_000 if quick else 10_000_000)


if __name__ == "__main__":
    from bench.run import run_with_servers

    run_with_servers(run, "--quick" in sys.argv)

"""crawl: a generated site crawled by ``anyurl crawl`` beside the recursive downloaders.

The site (sizes scale with PAGES, 100,000 in a full run, 2,000 with --quick, ``--pages N``
when run alone):

- **web**: PAGES HTML pages over four hosts (fixtures/servers/nginx_hosts.py: one nginx,
  a server block per address 127.0.0.1-4, each its own port and root), 1,000 pages a
  directory; each page links to two children (a tree, so every page is reached), one page
  further away, its host's index and a page on the next host (out of scope for every tool),
  and has requisites: a stylesheet (whose CSS ``url()`` names a background image and
  ``@import``s a base sheet), a script, a shared image and, one page in ten, an image of
  its own. ``wget2 -r`` (8 threads), ``wget -r -p`` and ``anyurl crawl`` fetch it from the
  four index pages; robots.txt off for all.
- **ftp**: PAGES/10 files of 1-8 KiB in two directory levels from vsftpd: ``lftp mirror
  --parallel=8``, ``wget -r`` and ``anyurl crawl``.
- **all**: one ``anyurl crawl`` of the four hosts, the FTP tree and a gopher hole of
  PAGES/50 items (gophernicus, whose menus are its directories) at once; no peer crawls
  gopher, so this table has no reference but itself.

Every run's output is checked: every file of the site present with its size, nothing else,
the total bytes; a run that did not do all the work raises. Every URL is a loopback one.
Then the frontier alone (bench/probes/frontier.py): 10,000,000 URLs admitted (1,000,000
with --quick), URLs admitted per second and peak RSS.

    bench/.venv/bin/python -m bench.suites.crawl [--quick] [--pages N] [--frontier N]
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from bench.harness import Case, anyurl_cmd, compare, outputs, python_cmd, record, remove_later, wanted

FULL_PAGES = 100_000
QUICK_PAGES = 2_000
PER_DIR = 1000
STYLES = 8  # stylesheets, scripts and shared images per host
CRAWL_FLAGS = ("--no-robots", "-q")


def _pad(seed: int, n: int) -> str:
    """*n* characters of deterministic text (a page's prose)."""
    words = ("crawl", "frontier", "gopher", "menu", "anchor", "listing", "mirror", "host", "queue")
    out: list[str] = []
    length = 0
    k = seed
    while length < n:
        w = words[k % len(words)]
        out.append(w)
        length += len(w) + 1
        k = k * 1103515245 + 12345 & 0x7FFFFFFF
    return " ".join(out)[:n]


def _page_path(i: int) -> str:
    return f"d{i // PER_DIR}/p{i}.html"


def web_files(pages: int, host: int, hosts: list[tuple[str, int]]) -> dict[str, bytes]:
    """The files of web host number *host* (of *hosts*, each (address, port)), *pages* pages:
    {path below the root: bytes}."""
    files: dict[str, bytes] = {}
    nxt_addr, nxt_port = hosts[(host + 1) % len(hosts)]
    files["index.html"] = (f"<html><head><title>host {host}</title></head><body>"
                           f'<a href="{_page_path(0)}">start</a> <a href="{_page_path(pages // 2)}">middle</a>'
                           "</body></html>\n").encode()
    for i in range(pages):
        kids = [j for j in (2 * i + 1, 2 * i + 2, (i * 7919 + 13) % pages) if j < pages]
        links = " ".join(f'<a href="../{_page_path(j)}">page {j}</a>' for j in kids)
        own = f'<img src="/img/own/p{i}.png" alt="own">' if i % 10 == 0 else ""
        files[_page_path(i)] = (
            f'<html><head><title>page {i} of host {host}</title>'
            f'<link rel="stylesheet" href="/css/s{i % STYLES}.css"><script src="/js/j{i % STYLES}.js"></script>'
            f'</head><body><h1>page {i}</h1><img src="/img/i{i % STYLES}.png" alt="shared">{own}'
            f"<p>{_pad(i + host * pages, 900)}</p><p>{links} <a href=\"../index.html\">home</a> "
            f'<a href="http://{nxt_addr}:{nxt_port}/{_page_path(i)}">elsewhere</a></p></body></html>\n').encode()
        if i % 10 == 0:
            files[f"img/own/p{i}.png"] = bytes((i + n) % 256 for n in range(200 + i % 300))
    for k in range(STYLES):
        files[f"css/s{k}.css"] = (f'@import url("base.css");\nbody {{ background: url(../img/bg{k}.png) }}\n'
                                  f"h1 {{ color: #{k:03d}; }}\n").encode()
        files[f"js/j{k}.js"] = f"console.log('script {k}');\n".encode() * 20
        files[f"img/i{k}.png"] = bytes((k * 31 + n) % 256 for n in range(3000 + k))
        files[f"img/bg{k}.png"] = bytes((k * 17 + n) % 256 for n in range(1500 + k))
    files["css/base.css"] = b"p { margin: 1em; }\n"
    return files


def ftp_files(count: int) -> dict[str, bytes]:
    """*count* files of 1-8 KiB, 100 a directory, 10 directories a parent."""
    return {f"a{i // 1000}/b{i // 100 % 10}/f{i}.dat": bytes((i * 7 + n) % 251 for n in range(1024 + i % 7168))
            for i in range(count)}


def gopher_files(count: int) -> dict[str, bytes]:
    """*count* text items, 50 a directory (gophernicus makes each directory a menu)."""
    return {f"g{i // 50}/t{i}.txt": f"gopher item {i}\r\n{_pad(i, 400)}\r\n".encode() for i in range(count)}


def write_tree(root: Path, files: dict[str, bytes]) -> None:
    """Write *files* below *root*, readable by servers running as their own users."""
    root.mkdir(parents=True, exist_ok=True)
    root.chmod(0o755)
    made: set[Path] = set()
    for rel, data in files.items():
        path = root / rel
        if path.parent not in made:
            path.parent.mkdir(parents=True, exist_ok=True)
            made.add(path.parent)
        path.write_bytes(data)
        path.chmod(0o644)
    for d in made:
        while d != root:
            d.chmod(0o755)
            d = d.parent


def sizes(root: Path) -> dict[str, int]:
    """{path below *root*: size} of every file under *root* (nothing if it is missing)."""
    out: dict[str, int] = {}
    for base, _dirs, names in os.walk(root):
        for name in names:
            path = os.path.join(base, name)
            out[os.path.relpath(path, root)] = os.path.getsize(path)
    return out


def check_tree(label: str, got: dict[str, int], want: dict[str, bytes]) -> None:
    """Raise unless *got* ({path: size} of a run's output) holds exactly the files of *want*,
    each of its size: a crawl that missed a file, cut one short or fetched one more raises."""
    missing = [rel for rel in want if rel not in got]
    wrong = [rel for rel, data in want.items() if rel in got and got[rel] != len(data)]
    extra = [rel for rel in got if rel not in want]
    if missing or wrong or extra:
        raise RuntimeError(f"{label}: {len(got)} files, expected {len(want)}: {len(missing)} missing "
                           f"{missing[:3]}, {len(wrong)} of another size {wrong[:3]}, {len(extra)} more {extra[:3]}")


class Site:
    """The generated site on its servers, and its expected copies."""

    def __init__(self, launcher: object, pages: int) -> None:
        web = launcher.get("nginx_hosts")  # type: ignore[attr-defined]
        self.hosts = [(str(a), int(p)) for a, p, _root in web.info["hosts"]]
        per_host = pages // len(self.hosts)
        self.web: dict[str, dict[str, bytes]] = {}
        for k, (addr, port, root) in enumerate(web.info["hosts"]):
            files = web_files(per_host, k, self.hosts)
            write_tree(Path(root), files)
            self.web[f"{addr}:{port}"] = files
        ftp = launcher.get("vsftpd")  # type: ignore[attr-defined]
        self.ftp_count = max(pages // 10, 10)
        self.ftp_dir = f"pub/crawl{self.ftp_count}"
        self.ftp = ftp_files(self.ftp_count)
        write_tree(Path(ftp.info["anon_root"]) / self.ftp_dir, self.ftp)
        self.ftp_host = f"{ftp.host}:{ftp.port}"
        gopher = launcher.get("gophernicus")  # type: ignore[attr-defined]
        self.gopher_count = max(pages // 50, 10)
        self.gopher_dir = f"crawl{self.gopher_count}"
        self.gopher = gopher_files(self.gopher_count)
        write_tree(Path(gopher.info["root"]) / self.gopher_dir, self.gopher)
        self.gopher_host = f"{gopher.host}:{gopher.port}"

    def web_seeds(self) -> list[str]:
        return [f"http://{a}:{p}/" for a, p in self.hosts]

    def ftp_seed(self) -> str:
        return f"ftp://{self.ftp_host}/{self.ftp_dir}/"

    def gopher_seed(self) -> str:
        return f"gopher://{self.gopher_host}/1/{self.gopher_dir}"

    def web_want(self, ports: bool = True) -> dict[str, bytes]:
        """Every web file as the crawlers name it: host:port/path (a directory's page index.html);
        *ports* False: host/path, as wget2 names them."""
        return {f"{h if ports else h.rsplit(':', 1)[0]}/{rel}": data
                for h, files in self.web.items() for rel, data in files.items()}

    def bytes(self, want: dict[str, bytes]) -> int:
        return sum(len(d) for d in want.values())


def _out_dir(group: str) -> Path:
    """A directory for a group's runs on the first output (tmpfs by default), removed at the end."""
    root = outputs()[0].root
    work = Path(tempfile.mkdtemp(prefix=f"{group}-", dir=root))
    remove_later(work)
    return work


def _fresh(*paths: Path) -> Callable[[], None]:
    def fresh() -> None:
        for p in paths:
            if p.is_dir():
                shutil.rmtree(p)
            elif p.exists():
                p.unlink()
    return fresh


def _checked(label: str, root: Path, want: dict[str, bytes], seen: dict[str, str]) -> Callable[[], None]:
    def after() -> None:
        got = sizes(root)
        check_tree(label, got, want)
        seen[label] = f"{len(got)} files, {sum(got.values()):,} bytes"
    return after


def _web(site: Site, pages: int) -> None:
    want = site.web_want()
    title = (f"crawl: web, {pages:,} pages over {len(site.hosts)} hosts (nginx), {len(want):,} files with "
             "requisites")
    if not wanted(title):
        return
    work = _out_dir("crawl-web")
    out, state = work / "out", work / "state.sqlite"
    seeds = site.web_seeds()
    seen: dict[str, str] = {}
    fresh = _fresh(out, state, Path(f"{state}-wal"), Path(f"{state}-shm"))
    cases = [
        Case("wget2 -r -p --max-threads=8",
             ["wget2", "-q", "-r", "-p", "-l", "0", "--robots=off", "--max-threads=8", "--no-parent",
              "-P", str(out), *seeds], fresh, _checked("wget2 -r -p --max-threads=8", out, site.web_want(ports=False), seen)),
        Case("wget -r -p", ["wget", "-q", "-r", "-p", "-l", "inf", "-np", "-e", "robots=off", "-P", str(out), *seeds],
             fresh, _checked("wget -r -p", out, want, seen)),
        Case("anyurl crawl (--parallel 8)",
             anyurl_cmd("crawl", *CRAWL_FLAGS, "-d", str(out), "--state", str(state), *seeds),
             fresh, _checked("anyurl crawl (--parallel 8)", out, want, seen)),
    ]
    compare(title, cases, "wget2 -r -p --max-threads=8", unit_work=(len(want), "files"),
            note=f"output: {outputs()[0].describe()}; {site.bytes(want):,} bytes; anyurl's state on the same fs")
    for name, text in seen.items():
        print(f"   {name:<44} {text}")


def _ftp(site: Site) -> None:
    want = {f"{site.ftp_host}/{site.ftp_dir}/{rel}": data for rel, data in site.ftp.items()}
    title = f"crawl: ftp, a tree of {len(want):,} files from vsftpd"
    if not wanted(title):
        return
    work = _out_dir("crawl-ftp")
    out, state = work / "out", work / "state.sqlite"
    host, port = site.ftp_host.rsplit(":", 1)
    seen: dict[str, str] = {}
    fresh = _fresh(out, state, Path(f"{state}-wal"), Path(f"{state}-shm"))
    # lftp and wget name files below DIR/host:port/path too, as the crawl does
    lftp_out = out / site.ftp_host / site.ftp_dir
    cases = [
        Case("lftp mirror --parallel=8",
             ["lftp", "-c", f"set cmd:interactive no; open -p {port} {host}; "
              f"mirror --parallel=8 /{site.ftp_dir}/ {lftp_out}"],
             fresh, _checked("lftp mirror --parallel=8", out, want, seen)),
        Case("wget -r", ["wget", "-q", "-r", "-l", "inf", "-np", "-P", str(out), site.ftp_seed()],
             fresh, _checked("wget -r", out, want, seen)),
        Case("anyurl crawl (--parallel 8)",
             anyurl_cmd("crawl", *CRAWL_FLAGS, "-d", str(out), "--state", str(state), site.ftp_seed()),
             fresh, _checked("anyurl crawl (--parallel 8)", out, want, seen)),
    ]
    compare(title, cases, "lftp mirror --parallel=8", unit_work=(len(want), "files"),
            note=f"output: {outputs()[0].describe()}; {site.bytes(want):,} bytes")
    for name, text in seen.items():
        print(f"   {name:<44} {text}")


def gopher_want(site: Site) -> dict[str, bytes]:
    """The gopher items as the crawl names them: host:port/selector (item type dropped)."""
    return {f"{site.gopher_host}/{site.gopher_dir}/{rel}": data for rel, data in site.gopher.items()}


def _all(site: Site, pages: int) -> None:
    want = {**site.web_want(), **{f"{site.ftp_host}/{site.ftp_dir}/{r}": d for r, d in site.ftp.items()},
            **gopher_want(site)}
    title = (f"crawl: all at once, {pages:,} pages over {len(site.hosts)} web hosts + {site.ftp_count:,} FTP files"
             f" + {site.gopher_count:,} gopher items, {len(want):,} files")
    if not wanted(title):
        return
    work = _out_dir("crawl-all")
    out, state = work / "out", work / "state.sqlite"
    seen: dict[str, str] = {}
    fresh = _fresh(out, state, Path(f"{state}-wal"), Path(f"{state}-shm"))
    cases = [Case("anyurl crawl (--parallel 8)",
                  anyurl_cmd("crawl", *CRAWL_FLAGS, "-d", str(out), "--state", str(state),
                             *site.web_seeds(), site.ftp_seed(), site.gopher_seed()),
                  fresh, _checked("anyurl crawl (--parallel 8)", out, want, seen))]
    compare(title, cases, unit_work=(len(want), "files"),
            note=f"output: {outputs()[0].describe()}; {site.bytes(want):,} bytes; no peer crawls gopher")
    for name, text in seen.items():
        print(f"   {name:<44} {text}")


def frontier(n: int) -> None:
    """The frontier alone: bench/probes/frontier.py admitting *n* URLs (state on disk)."""
    title = f"crawl: the frontier alone, {n:,} URLs over 10,000 hosts (SQLite state on disk)"
    if not wanted(title):
        return
    with tempfile.TemporaryDirectory(prefix="anyurl-frontier-") as where:
        proc = subprocess.run(python_cmd("-m", "bench.probes.frontier", str(n), "--dir", where),
                              capture_output=True, text=True, check=True)
    got = json.loads(proc.stdout)
    if got["admitted"] != n:
        raise RuntimeError(f"frontier probe admitted {got['admitted']} of {n}: {got}")
    print(f"\n== {title}\n   {json.dumps(got)}")
    record(title, [f"\n### {title}\n", "```", json.dumps(got), "```"], {"frontier": got})


def run(launcher: object, quick: bool, pages: int | None = None, urls: int | None = None) -> None:
    """The group; *pages* (default $ANYURL_BENCH_CRAWL_PAGES, else 100,000, or 2,000 quick) sizes
    the site, *urls* the frontier probe."""
    pages = pages or int(os.environ.get("ANYURL_BENCH_CRAWL_PAGES") or (QUICK_PAGES if quick else FULL_PAGES))
    site = Site(launcher, pages)
    _web(site, pages)
    _ftp(site)
    _all(site, pages)
    frontier(urls or (1_000_000 if quick else 10_000_000))


if __name__ == "__main__":
    import argparse

    from bench import harness
    from bench.run import run_with_servers

    ap = argparse.ArgumentParser(prog="python -m bench.suites.crawl")
    ap.add_argument("--quick", action="store_true", help="2,000 pages, 1,000,000 URLs, 3 rounds")
    ap.add_argument("--rounds", type=int, help="interleaved rounds (default 5; 3 with --quick)")
    ap.add_argument("--pages", type=int, help=f"web pages in all (default {FULL_PAGES:,}; {QUICK_PAGES:,} quick)")
    ap.add_argument("--frontier", type=int, help="URLs the frontier probe admits (default 10,000,000)")
    args = ap.parse_args()
    harness.ROUNDS = args.rounds or (3 if args.quick else 5)
    run_with_servers(lambda launcher, quick: run(launcher, quick, args.pages, args.frontier), args.quick)

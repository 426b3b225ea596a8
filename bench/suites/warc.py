"""warc: what writing WARC files costs: ``anyurl get --warc`` and ``anyurl mirror --warc``
against ``wget --warc-file`` on the same HTTP work, each with and without the WARC file.

    bench/.venv/bin/python -m bench.run warc [--quick] [--rounds N] [--only loopback|RTT|mirror]

Rows (nginx; files of distinct, text-like content, served as .bin so nginx sends them as they are
and no payload repeats: every record is a full ``response``, none a ``revisit``):

* loopback: 10,000 x 4 KiB (2,000 with --quick), ``anyurl get -d DIR -i LIST`` with its defaults
  and ``wget -i LIST`` (one connection, one request after another: wget has no parallel mode);
* RTT 50 ms through bench/relay.py: 200 x 4 KiB, anyurl with 8 connections (``--parallel 8``, as
  the peers group's WAN rows), wget as it is;
* mirror of a small site: an nginx autoindex tree of 500 x 4 KiB in 5 directories (200 with
  --quick), ``anyurl mirror URL DIR`` and ``wget -r -np``.

wget2 has no WARC options (wget2 2.x dropped them), so wget 1.x is the only peer that writes WARC.
Every run is checked: the files saved (count and size) and, with a WARC file, its records read
back with warcio's ArchiveIterator (a ``response`` record for every file fetched, none missing).
Below each table: the cost of the WARC file per client, per round: wall and CPU with it over
without it (medians, min-max).
"""

from __future__ import annotations

import hashlib
import shutil
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

from bench.harness import Case, Relay, anyurl_cmd, compare, outputs, record, remove_later, wanted

SIZE = 4096
LOTS = 10_000
WAN_N, WAN_CONNS, RTT = 200, 8, 50
SITE_FILES, SITE_DIRS = 500, 5
DIR = "warcbench"


def page(i: int, size: int = SIZE) -> bytes:
    """File *i*'s bytes: text-like (as compressible as a small HTML page), distinct per file."""
    h = hashlib.sha256(str(i).encode()).hexdigest()
    out = bytearray()
    n = 0
    while len(out) < size:
        out += f'<p class="c{n % 7}">line {n} of file {i}: {h[n % 40:n % 40 + 24]}</p>\n'.encode()
        n += 1
    return bytes(out[:size])


def seed(www: Path, count: int) -> list[str]:
    """*count* files under www/warcbench/ (kept when already there); their paths."""
    d = www / DIR
    d.mkdir(exist_ok=True)
    d.chmod(0o755)
    paths = []
    for i in range(count):
        f = d / f"w{i:05d}.bin"
        if not f.exists() or f.stat().st_size != SIZE:
            f.write_bytes(page(i))
            f.chmod(0o644)
        paths.append(f"/{DIR}/{f.name}")
    return paths


def seed_site(www: Path, files: int) -> dict[str, int]:
    """A tree of *files* under www/warcsite{files}/ in SITE_DIRS directories; relative path -> size."""
    root = www / f"warcsite{files}"
    want: dict[str, int] = {}
    for i in range(files):
        rel = f"d{i % SITE_DIRS}/s{i:04d}.bin"
        f = root / rel
        if not f.exists():
            f.parent.mkdir(parents=True, exist_ok=True)
            f.parent.chmod(0o755)
            f.write_bytes(page(100_000 + i))
            f.chmod(0o644)
        want[rel] = SIZE
    root.chmod(0o755)
    return want


def warc_responses(paths: list[Path]) -> set[str]:
    """The target URIs of every ``response`` record in *paths* (a broken file raises)."""
    from warcio.archiveiterator import ArchiveIterator

    uris: set[str] = set()
    for p in paths:
        with p.open("rb") as f:
            for rec in ArchiveIterator(f):
                if rec.rec_type == "response":
                    uris.add(rec.rec_headers.get_header("WARC-Target-URI"))
    return uris


class Work:
    """One client's output: a directory renewed before each run, and a WARC file beside it."""

    def __init__(self, root: Path, name: str) -> None:
        self.dir = root / name
        self.warc = root / f"{name}.warc.gz"  # anyurl's name; wget's prefix is the name less .warc.gz

    @property
    def prefix(self) -> str:
        return str(self.warc)[:-len(".warc.gz")]

    def fresh(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)
        self.warc.unlink(missing_ok=True)

    def check(self, files: dict[str, int], urls: list[str] | None) -> None:
        """*files* (relative path -> size) all saved; with *urls*, a response record for each."""
        got = {str(p.relative_to(self.dir)): p.stat().st_size for p in self.dir.rglob("*") if p.is_file()}
        missing = [k for k, size in files.items() if got.get(k) != size]
        if missing:
            raise RuntimeError(f"{self.dir}: {len(missing)} of {len(files)} files missing or short: {missing[:3]}")
        if urls is None:
            if self.warc.exists():
                raise RuntimeError(f"{self.warc} written by a run without a WARC file")
            return
        have = warc_responses([self.warc])
        lost = [u for u in urls if u not in have]
        if lost:
            raise RuntimeError(f"{self.warc}: no response record for {len(lost)} of {len(urls)} URLs: {lost[:3]}")


def get_cases(root: Path, urls: list[str], conns: int | None) -> list[Case]:
    """anyurl get and wget -i on *urls*, each with and without a WARC file."""
    listing = root / "urls.txt"
    listing.write_text("".join(u + "\n" for u in urls))
    files = {u.rsplit("/", 1)[1]: SIZE for u in urls}
    par = ["--parallel", str(conns)] if conns else []
    cases = []
    for warc in (False, True):
        tag = " --warc" if warc else ""
        a = Work(root, f"anyurl{'-warc' if warc else ''}")
        cases.append(Case(f"anyurl get{' --parallel ' + str(conns) if conns else ''}{tag}",
                          anyurl_cmd("get", "-q", *par, "-d", str(a.dir), "-i", str(listing),
                                     *(["--warc", str(a.warc)] if warc else [])),
                          a.fresh, _checker(a, files, urls if warc else None)))
        w = Work(root, f"wget{'-warc' if warc else ''}")
        cases.append(Case(f"wget -i{' --warc-file' if warc else ''}",
                          ["wget", "-q", "--no-config", "-P", str(w.dir), "-i", str(listing),
                           *([f"--warc-file={w.prefix}"] if warc else [])],
                          w.fresh, _checker(w, files, urls if warc else None)))
    return cases


def mirror_cases(root: Path, url: str, files: dict[str, int]) -> list[Case]:
    urls = [url + rel for rel in files]
    cases = []
    for warc in (False, True):
        a = Work(root, f"mirror{'-warc' if warc else ''}")
        cases.append(Case(f"anyurl mirror{' --warc' if warc else ''}",
                          anyurl_cmd("mirror", "-q", url, str(a.dir), *(["--warc", str(a.warc)] if warc else [])),
                          a.fresh, _checker(a, files, urls if warc else None)))
        w = Work(root, f"wgetr{'-warc' if warc else ''}")
        cut = str(url.rstrip("/").count("/") - 2)  # the URL's path segments: the tree lands in DIR
        cases.append(Case(f"wget -r -np{' --warc-file' if warc else ''}",
                          ["wget", "-q", "--no-config", "-r", "-np", "-nH", f"--cut-dirs={cut}", "-P", str(w.dir),
                           url, *([f"--warc-file={w.prefix}"] if warc else [])],
                          w.fresh, _checker(w, files, urls if warc else None)))  # (and its index.html pages)
    return cases


def _checker(work: Work, files: dict[str, int], urls: list[str] | None) -> Callable[[], None]:
    return lambda: work.check(files, urls)


def warc_cost(group: dict[str, object]) -> None:
    """Each client's cost of the WARC file, per round: wall and CPU with it over without it."""
    if not group:
        return
    runs = {r["name"]: r["runs"] for r in group["results"]}  # type: ignore[attr-defined]
    # (a --tree/--variant copy keeps its " [label]" after the flags: "anyurl get --warc [old]")
    plain = {w: w.replace(" --warc-file", "").replace(" --warc", "") for w in runs if " --warc" in w}
    pairs = [(n, w) for w, n in plain.items() if n in runs]
    title = f"{group['title']}: the cost of the WARC file"
    md = [f"\n### {title}\n", "per round: the run with the WARC file over the same client's run without"
          " (> 1: the WARC file costs that much more); medians and min-max\n",
          "| client | wall with / without | min-max | CPU with / without | min-max |", "|---|---:|---:|---:|---:|"]
    print(f"\n== {title}\n   {'client':<36} {'wall x':>7} {'min-max':>11} {'CPU x':>7} {'min-max':>11}")
    data = {}
    for plain, warc in pairs:
        wall = [b["seconds"] / a["seconds"] for a, b in zip(runs[plain], runs[warc], strict=True)]
        cpu = [b["cpu_seconds"] / a["cpu_seconds"] for a, b in zip(runs[plain], runs[warc], strict=True)
               if a["cpu_seconds"] > 0]
        cells = [(f"{statistics.median(v):.2f}", f"{min(v):.2f}-{max(v):.2f}") for v in (wall, cpu)]
        print(f"   {plain:<36} {cells[0][0]:>7} {cells[0][1]:>11} {cells[1][0]:>7} {cells[1][1]:>11}", flush=True)
        md.append(f"| {plain} | {cells[0][0]} | {cells[0][1]} | {cells[1][0]} | {cells[1][1]} |")
        data[plain] = {"wall": wall, "cpu": cpu}
    record(title, md, {"clients": data})


def run(launcher: object, quick: bool) -> None:
    from fixtures.launcher import free_ports

    ng = launcher.get("nginx")  # type: ignore[attr-defined]
    www = Path(ng.info["www"])
    lots = 2_000 if quick else LOTS
    site = 200 if quick else SITE_FILES
    paths = seed(www, max(lots, WAN_N))
    tmpfs = next((o for o in outputs() if o.label == "tmpfs"), outputs()[0])
    root = Path(tmpfs.root) / "warc"
    root.mkdir(exist_ok=True)
    remove_later(root)
    note = "output: tmpfs, the directory and the WARC file removed before each run"
    title = f"warc: HTTP {lots} x 4 KiB, loopback"
    if wanted(title):
        urls = [f"http://127.0.0.1:{ng.port}{p}" for p in paths[:lots]]
        warc_cost(compare(title, get_cases(root, urls, None), "wget -i", note=note))
    title = f"warc: HTTP {WAN_N} x 4 KiB, RTT {RTT} ms"
    if wanted(title):
        (port,) = free_ports(1)
        relay = Relay(RTT, [f"127.0.0.1:{port}=127.0.0.1:{ng.port}"])
        try:
            urls = [f"http://127.0.0.1:{port}{p}" for p in paths[:WAN_N]]
            warc_cost(relay.compare(title, get_cases(root, urls, WAN_CONNS), "wget -i", note=note))
        finally:
            relay.stop()
    title = f"warc: mirror of a {site}-file site, {SITE_DIRS} directories, loopback"
    if wanted(title):
        files = seed_site(www, site)
        url = f"http://127.0.0.1:{ng.port}/warcsite{site}/"
        warc_cost(compare(title, mirror_cases(root, url, files), "wget -r -np", note=note))


if __name__ == "__main__":
    from bench.run import run_with_servers

    run_with_servers(run, "--quick" in sys.argv)

"""One benchmark harness: whole-process runs, medians, peak RSS, ratios.

Every case is a command line run as its own process (so peak RSS is that
process's own, read with wait4). A group compares several commands doing the
same work in the same run and prints each one's median time and its ratio to
the group's reference (ratio > 1 means faster than the reference).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

VENV_BIN = Path(sys.executable).parent
RESULTS = Path(__file__).resolve().parent / "results"


@dataclass
class Run:
    seconds: float
    max_rss_kib: int
    returncode: int


@dataclass
class Result:
    name: str
    runs: list[Run] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(r.seconds for r in self.runs)

    @property
    def peak_rss_mib(self) -> float:
        return max(r.max_rss_kib for r in self.runs) / 1024


def run_once(argv: Sequence[str], *, stdout: int | None = subprocess.DEVNULL,
             env: dict[str, str] | None = None, cwd: str | None = None) -> Run:
    """Run *argv* once; wall time and the child's own peak RSS."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(list(argv), stdout=stdout, stderr=subprocess.PIPE, env=env, cwd=cwd)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({proc.returncode}): {err[-500:]}")
    return Run(elapsed, usage.ru_maxrss, proc.returncode)


def measure(name: str, argv: Sequence[str], repeat: int = 5, *,
            before: Callable[[], None] | None = None, after: Callable[[], None] | None = None,
            env: dict[str, str] | None = None) -> Result:
    """Median of *repeat* runs of *argv* (``before``/``after`` run untimed around each)."""
    res = Result(name)
    for _ in range(repeat):
        if before:
            before()
        res.runs.append(run_once(argv, env=env))
        if after:
            after()
    return res


def report(title: str, results: list[Result], reference: str | None = None,
           unit_work: tuple[float, str] | None = None) -> dict[str, object]:
    """Print one group: median seconds, peak RSS, and time ratio reference/this
    (so > 1.0 means this is faster than the reference). *unit_work* = (amount,
    unit) adds a throughput column, e.g. (1024, "MiB")."""
    ref = next((r for r in results if r.name == reference), results[0])
    print(f"\n== {title}")
    print(f"   {'command':<40} {'median s':>9} {'speed vs ' + ref.name:>22} {'peak RSS MiB':>13}"
          + (f" {unit_work[1] + '/s':>10}" if unit_work else ""))
    rows = []
    for r in results:
        ratio = ref.median / r.median if r.median else float("inf")
        line = f"   {r.name:<40} {r.median:9.3f} {ratio:22.2f} {r.peak_rss_mib:13.1f}"
        if unit_work:
            line += f" {unit_work[0] / r.median:10.1f}"
        print(line, flush=True)
        rows.append({"name": r.name, "median_s": r.median, "ratio_vs_ref": ratio,
                     "peak_rss_mib": r.peak_rss_mib, "runs": [asdict(x) for x in r.runs]})
    group = {"title": title, "reference": ref.name, "results": rows}
    RESULTS.mkdir(exist_ok=True)
    with open(RESULTS / "latest.jsonl", "a") as f:
        f.write(json.dumps(group) + "\n")
    return group


def check_size(path: Path, size: int) -> None:
    """Raise unless *path* holds exactly *size* bytes (a benchmark run must be a complete one)."""
    got = path.stat().st_size
    if got != size:
        raise RuntimeError(f"{path}: {got} bytes, expected {size}")


def anyurl_cmd(*args: str) -> list[str]:
    """The installed ``anyurl`` CLI of this venv."""
    return [str(VENV_BIN / "anyurl"), *args]


def python_cmd(*args: str) -> list[str]:
    return [sys.executable, *args]


@dataclass
class ManyFiles:
    """Scaffolding for an 'N small files' group: an output directory emptied
    before each run (``fresh``), checked after it (``check``), and a curl
    config file naming every URL (``curl_config``, for ``curl -K``)."""

    outdir: Path
    curl_config: Path
    count: int
    size: int

    @classmethod
    def prepare(cls, scratch: Path, urls: Sequence[str], size: int) -> ManyFiles:
        cfg = scratch / "curl.cfg"
        cfg.write_text("".join(f'url = "{u}"\n' for u in urls))
        return cls(scratch / "many", cfg, len(urls), size)

    def fresh(self) -> None:
        import shutil

        shutil.rmtree(self.outdir, ignore_errors=True)
        self.outdir.mkdir()

    def check(self) -> None:
        files = list(self.outdir.iterdir())
        if len(files) != self.count or any(f.stat().st_size != self.size for f in files):
            raise RuntimeError(f"expected {self.count} files of {self.size} bytes in {self.outdir}")

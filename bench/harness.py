"""One benchmark harness: interleaved rounds, medians with their spread,
each process's own peak RSS, and the machine's load beside every table.

A group compares several commands doing the same work. ``compare`` runs them
in rounds: every round runs each command once, in an order rotated from round
to round, so a burst of load from someone else on the shared machine hits all
commands of that round rather than deciding a ratio. For each command the
table shows its median wall time, the median of its per-round speed ratios
(reference time / its time in the same round; > 1 means faster than the
reference), the min-max of those per-round ratios, its median CPU time and
its peak RSS.

Peak RSS comes from ``/usr/bin/time -f %M`` wrapped around each command: the
child is forked from that small program, not from this Python process, whose
resident pages a vfork/fork child would otherwise count as its own (Linux
carries the pre-exec high-water mark across exec).

The 1-minute load average before and after each group is printed beside it
and stored with it in bench/results/latest.jsonl; every group is also
appended as a Markdown table to bench/results/latest.md.

Small-file groups (``ManyFiles``) run once per output filesystem (``OUTPUTS``:
tmpfs for the clients' own cost, disk for what a user's disk adds) and carry one
more case, a plain ``os.open``/``os.write``/``os.close`` writer of the same files
into the same directory (bench/reference/fs_anchor.py): the filesystem's share of every row.

A/B of source trees and settings: ``bench.run --tree DIR`` (``TREES``) adds, beside every
``anyurl`` CLI case of every group, the same command run from that source tree
(``python -m anyurl`` with DIR/src first on the path, its bytecode compiled once), and
``--variant NAME:ENV=VALUE`` (``VARIANTS``) the same command with that environment, e.g.
``asyncio:ANYURL_LOOP=asyncio``. They run in the same interleaved rounds as the rest.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

VENV_BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"
TIME = "/usr/bin/time"

# Rounds per group; bench.run sets ROUNDS from --quick / --rounds.
ROUNDS = 5
# Title filters (bench.run --only): a group runs when its title contains one of them.
ONLY: list[str] = []
# How a disk output directory is renewed between runs (bench.run --disk-fresh): "spread"
# empties the last run's directory, keeps it (renamed aside) and makes a new one, which
# chattr +T places in another block group (ManyFiles.fresh); "rmtree" deletes and re-makes
# the same directory (the method before 2026-11-23's fourth session, kept to show its cost).
DISK_FRESH = "spread"
# Case filters (bench.run --skip): a case whose name contains one of them is left out of its table.
SKIP: list[str] = []
# Source trees and environment variants run beside each anyurl CLI case (bench.run --tree/--variant).
TREES: list[Path] = []
VARIANTS: list[tuple[str, dict[str, str]]] = []


@dataclass
class Run:
    seconds: float
    max_rss_kib: int
    cpu_seconds: float


@dataclass
class Case:
    """One command of a group. ``before``/``after`` run untimed around each run
    (``after`` checks the output: a benchmark run must be a complete one)."""

    name: str
    argv: Sequence[str]
    before: Callable[[], None] | None = None
    after: Callable[[], None] | None = None
    env: dict[str, str] | None = None
    runs: list[Run] = field(default_factory=list)


def bench_env(**extra: str) -> dict[str, str]:
    """The environment of every benchmarked process: the repository root on
    PYTHONPATH (for ``python -m bench.*``; anyurl itself is not there, it lives
    under src/), so ``import anyurl`` finds the bench venv's compiled install."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
    env["PYTHONPATH"] = str(ROOT)
    env.update(extra)
    return env


def tree_env(tree: Path, **extra: str) -> dict[str, str]:
    """The environment that runs anyurl from the source tree *tree* (TREE/src first on the path),
    its bytecode cached once per tree under the scratch directory, as an installed package's is."""
    env = bench_env(**extra)
    env["PYTHONPATH"] = f"{tree}/src:{ROOT}"
    tag = hashlib.sha1(str(tree).encode()).hexdigest()[:12]
    env["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir()) / f"pyc-{tag}")
    return env


def compile_tree(tree: Path) -> None:
    """Compile *tree*'s anyurl into its bytecode cache (tree_env) before any timed run."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "src")], env=tree_env(tree),
                   stdout=subprocess.DEVNULL, check=True)


def _is_cli(case: Case) -> bool:
    return bool(case.argv) and str(case.argv[0]) == str(VENV_BIN / "anyurl")


def kept(cases: list[Case]) -> list[Case]:
    """*cases* without those the --skip filters leave out (by a part of the name, any case)."""
    return [c for c in cases if not any(f.lower() in c.name.lower() for f in SKIP)]


def with_trees(cases: list[Case]) -> list[Case]:
    """*cases* and, after each anyurl CLI case, its copies for each --tree and --variant."""
    out: list[Case] = []
    for case in cases:
        out.append(case)
        if not _is_cli(case):
            continue
        rest = [str(a) for a in case.argv[1:]]
        for tree in TREES:
            env = {**tree_env(tree), **(case.env or {})}
            env["PYTHONPATH"] = tree_env(tree)["PYTHONPATH"]
            out.append(Case(f"{case.name} [{tree.name or tree}]", [sys.executable, "-m", "anyurl", *rest],
                            case.before, case.after, env))
        for label, extra in VARIANTS:
            env = {**(case.env or bench_env()), **extra}
            out.append(Case(f"{case.name} [{label}]", list(case.argv), case.before, case.after, env))
    return out


def record(title: str, md: Sequence[str], data: dict[str, object]) -> None:
    """Store one table: *data* (with *title* and the time) as a line of bench/results/latest.jsonl,
    the Markdown lines *md* appended to bench/results/latest.md."""
    entry = {"title": title, "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **data}
    RESULTS.mkdir(exist_ok=True)
    with open(RESULTS / "latest.jsonl", "a") as f:
        f.write(json.dumps(entry) + "\n")
    with open(RESULTS / "latest.md", "a") as f:
        f.write("\n".join(md) + "\n")


def run_once(argv: Sequence[str], env: dict[str, str] | None = None) -> Run:
    """Run *argv* once under /usr/bin/time: wall time, CPU time and its own peak RSS.

    The CPU time (user+sys, the command's and its children's) comes from wait4's rusage, in
    microseconds (/usr/bin/time prints it in hundredths, too coarse for CPU per request as the
    difference of two runs); it includes /usr/bin/time's own, well under a millisecond."""
    with tempfile.NamedTemporaryFile("r", prefix="bench-time-", suffix=".txt") as tf, \
            tempfile.TemporaryFile(prefix="bench-err-") as errf:
        cmd = [TIME, "-f", "%M %U %S", "-o", tf.name, "--", *argv]
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=errf,
                                env=env if env is not None else bench_env(), cwd=ROOT)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        report = tf.read().strip().splitlines()
        errf.seek(0)
        err = errf.read().decode(errors="replace")
    if proc.returncode != 0 or not report:
        raise RuntimeError(f"{' '.join(argv)} failed ({proc.returncode}): {err[-500:]} {report[-1:]}")
    return Run(elapsed, int(report[-1].split()[0]), usage.ru_utime + usage.ru_stime)


def load1() -> float:
    return os.getloadavg()[0]


def _ratio_stats(ref: list[float], mine: list[float]) -> tuple[float, float, float]:
    ratios = [r / m if m else float("inf") for r, m in zip(ref, mine, strict=True)]
    return statistics.median(ratios), min(ratios), max(ratios)


def wanted(title: str) -> bool:
    """Whether the group *title* runs under the --only filters (all run without one)."""
    return not ONLY or any(f.lower() in title.lower() for f in ONLY)


def compare(title: str, cases: list[Case], reference: str | None = None, *,
            rounds: int | None = None, unit_work: tuple[float, str] | None = None,
            note: str | None = None, expand: bool = True) -> dict[str, object]:
    """Run *cases* in interleaved rounds and print/store the group's table.

    *unit_work* = (amount, unit) adds a throughput column, e.g. (1024, "MiB");
    *note* is printed and stored under the title (e.g. where the output went).
    *expand* False: the caller has added the --tree/--variant cases (with_trees) itself.
    Returns {} without running anything when --only filters the group out."""
    if not wanted(title):
        return {}
    rounds = rounds or ROUNDS
    if expand:
        cases = with_trees(cases)
    cases = kept(cases)
    load_before = load1()
    t0 = time.monotonic()
    for i in range(rounds):
        k = i % len(cases)
        for case in cases[k:] + cases[:k]:
            if case.before:
                case.before()
            case.runs.append(run_once(case.argv, case.env))
            if case.after:
                case.after()
    return report(title, cases, reference, unit_work=unit_work, load=(load_before, load1()),
                  wall=time.monotonic() - t0, note=note)


def report(title: str, cases: list[Case], reference: str | None = None, *,
           unit_work: tuple[float, str] | None = None, load: tuple[float, float] | None = None,
           wall: float | None = None, rss: bool = True, note: str | None = None) -> dict[str, object]:
    """Print and store one group whose cases hold the same number of runs (one per round)."""
    ref = next((c for c in cases if c.name == reference), cases[0])
    ref_times = [r.seconds for r in ref.runs]
    load = load or (load1(), load1())
    rounds = len(ref.runs)
    print(f"\n== {title}")
    print(f"   {rounds} interleaved rounds; load average (1 min) {load[0]:.2f} before, {load[1]:.2f} after"
          + (f"; {wall:.0f} s" if wall is not None else ""))
    if note:
        print(f"   {note}")
    head = (f"   {'command':<44} {'median s':>9} {'ratio':>6} {'min-max':>11} {'CPU s':>7}"
            + (f" {'peak RSS MiB':>12}" if rss else "") + (f" {unit_work[1] + '/s':>10}" if unit_work else ""))
    print(head)
    rows = []
    md = [f"\n### {title}\n", f"{rounds} interleaved rounds; load average {load[0]:.2f} before, {load[1]:.2f} after;"
          f" ratio = {ref.name} time / this time, per round (median, min-max)\n",
          *([f"{note}\n"] if note else []),
          "| command | median s | ratio | min-max | CPU s | peak RSS MiB |"
          + (f" {unit_work[1]}/s |" if unit_work else ""),
          "|---|---:|---:|---:|---:|---:|" + ("---:|" if unit_work else "")]
    for c in cases:
        med = statistics.median(r.seconds for r in c.runs)
        ratio, lo, hi = _ratio_stats(ref_times, [r.seconds for r in c.runs])
        cpu = statistics.median(r.cpu_seconds for r in c.runs)
        peak = max(r.max_rss_kib for r in c.runs) / 1024
        line = f"   {c.name:<44} {med:9.3f} {ratio:6.2f} {f'{lo:.2f}-{hi:.2f}':>11} {cpu:7.2f}"
        if rss:
            line += f" {peak:12.1f}"
        if unit_work:
            line += f" {unit_work[0] / med:10.1f}"
        print(line, flush=True)
        md.append(f"| {c.name} | {med:.3f} | {ratio:.2f} | {lo:.2f}-{hi:.2f} | {cpu:.2f} | "
                  + (f"{peak:.1f} |" if rss else "- |") + (f" {unit_work[0] / med:.1f} |" if unit_work else ""))
        rows.append({"name": c.name, "argv": [str(a) for a in c.argv], "median_s": med, "ratio": ratio,
                     "ratio_min": lo, "ratio_max": hi, "cpu_median_s": cpu,
                     "peak_rss_mib": peak if rss else None, "runs": [asdict(x) for x in c.runs]})
    group: dict[str, object] = {"reference": ref.name, "rounds": rounds, "load_before": load[0],
                                "load_after": load[1], "note": note, "results": rows}
    record(title, md, group)
    return {"title": title, **group}


def cpu_slopes(group: dict[str, object], pairs: list[tuple[str, str]], n_lots: int,
               n_few: int) -> dict[str, list[float]]:
    """Per-request CPU (µs) of each (LOTS case, FEW case) pair of one compare() group, per round:
    (CPU of the LOTS run - CPU of the FEW run) / (n_lots - n_few), so start-up cancels out."""
    rows = {r["name"]: r for r in group["results"]}  # type: ignore[attr-defined]
    per: dict[str, list[float]] = {}
    for lots, few in pairs:
        a, b = rows[lots]["runs"], rows[few]["runs"]
        per[lots] = [(x["cpu_seconds"] - y["cpu_seconds"]) * 1e6 / (n_lots - n_few) for x, y in zip(a, b, strict=True)]
    return per


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


def fs_type(path: Path) -> str:
    """The filesystem type /proc/mounts gives for the mount holding *path* ("?" if unknown)."""
    best, kind = "", "?"
    real = str(path.resolve())
    try:
        mounts = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        return kind
    for line in mounts:
        fields = line.split()
        if len(fields) > 2:
            mnt = fields[1]
            if (real == mnt or real.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best):
                best, kind = mnt, fields[2]
    return kind


def spread_dirs(path: Path) -> bool:
    """Mark *path* with ext4's top-directory flag (``chattr +T``): the inode allocator
    then places each new subdirectory, and so the files in it, in a block group with many
    free inodes, away from the groups others create and delete files in. Best effort:
    False where the flag cannot be set (not ext4, no chattr, no permission)."""
    try:
        done = subprocess.run(["chattr", "+T", str(path)], capture_output=True, check=False)
    except OSError:
        return False
    return done.returncode == 0


@dataclass(frozen=True)
class Output:
    """One place the small-file groups write to: *label* goes into group titles
    ("tmpfs", "disk"), *root* holds each group's directories."""

    label: str
    root: Path
    spread: bool = False  # spread_dirs() took on root

    def describe(self) -> str:
        return f"{fs_type(self.root)} {self.root}" + (" (chattr +T)" if self.spread else "")


# Where small-file groups write, in this order; bench.run sets it from --outputs/--tmpfs/--scratch.
OUTPUTS: list[Output] = []
_REMOVE_LATER: list[Path] = []
_TO_EMPTY: list[ManyFiles] = []
# Disk group directories left by earlier runs are deleted once this old (see cleanup()).
PRUNE_AFTER_S = 600


def outputs() -> list[Output]:
    """The output filesystems to run each small-file group on (tmpfs and disk by default)."""
    if not OUTPUTS:
        disk = Path(os.environ.get("ANYURL_BENCH_TMP") or Path(__file__).resolve().parent / ".scratch")
        OUTPUTS.extend(default_outputs(["tmpfs", "disk"], Path("/dev/shm"), disk))
    return OUTPUTS


def default_outputs(labels: Sequence[str], tmpfs: Path, disk: Path) -> list[Output]:
    out = []
    for label in labels:
        if label == "tmpfs":
            root = Path(tempfile.mkdtemp(prefix="anyurl-bench-", dir=tmpfs))
            root.chmod(0o755)
            _REMOVE_LATER.append(root)
            out.append(Output("tmpfs", root))
        elif label == "disk":
            disk.mkdir(parents=True, exist_ok=True)
            prune(disk)
            disk.chmod(0o755)  # servers running as their own users read trees below it
            # the old method gets a title of its own, so summary never mixes its rows with these
            label = "disk" if DISK_FRESH == "spread" else f"disk, {DISK_FRESH} per run"
            out.append(Output(label, disk, DISK_FRESH == "spread" and spread_dirs(disk)))
        else:
            raise ValueError(f"unknown output {label!r}: tmpfs or disk")
    return out


def remove_later(path: Path) -> None:
    """Delete *path* in cleanup(), after the whole run."""
    _REMOVE_LATER.append(path)


def _empty(directory: Path) -> None:
    for entry in os.scandir(directory):
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path)
        else:
            os.unlink(entry.path)


def cleanup() -> None:
    """After the last group: delete what remove_later() collected (tmpfs roots, tmpfs
    groups) and the files of each disk group's last run, but keep the disk groups' emptied
    directories. Deleting them now would give their block groups back to the Orlov
    allocator while their files' inodes still count as recently deleted, and a run started
    within minutes would put its directories there (its first rounds read 0.14 s instead of
    0.03 s in the fs group, bench/suites/fs.py); the next run prunes them (prune())."""
    while _TO_EMPTY:
        many = _TO_EMPTY.pop()
        if many.outdir.is_dir():
            _empty(many.outdir)
    while _REMOVE_LATER:
        shutil.rmtree(_REMOVE_LATER.pop(), ignore_errors=True)
    OUTPUTS.clear()


def prune(disk: Path, older_than: float = PRUNE_AFTER_S) -> None:
    """Delete group directories an earlier run left under *disk* once untouched for *older_than* s."""
    now = time.time()
    for entry in os.scandir(disk):
        if entry.is_dir(follow_symlinks=False) and now - entry.stat().st_mtime > older_than:
            shutil.rmtree(entry.path, ignore_errors=True)


@dataclass
class ManyFiles:
    """Scaffolding for an 'N small files' group on one Output: an output directory
    renewed before each run (``fresh``), checked after it (``check``), a curl config
    file naming every URL (``curl_config``, for ``curl -K``) and the filesystem
    anchor case (``anchor``: the same files written with plain os calls)."""

    outdir: Path
    curl_config: Path
    count: int
    size: int
    names: list[str]
    output: Output
    exact: bool = True  # check() also checks every file's size (else only the count)
    mkdir: bool = True  # fresh() makes the directory (False: the clients make it)
    manifest: Path | None = None  # a tree for fs_anchor --tree instead of names x size
    retired: int = 0

    @classmethod
    def prepare(cls, output: Output, group: str, urls: Sequence[str], size: int,
                names: Sequence[str] | None = None, exact: bool = True) -> ManyFiles:
        """*names*: the files each run leaves in the directory (default: each URL's last
        segment); *size*: each file's (with *exact* False, the mean size, for the anchor)."""
        work = Path(tempfile.mkdtemp(prefix=f"{group}-", dir=output.root))
        work.chmod(0o755)
        if output.label == "disk" and DISK_FRESH == "spread":
            spread_dirs(work)  # each run's directory in a block group of its own (fresh)
        else:
            remove_later(work)
        cfg = work / "curl.cfg"
        cfg.write_text("".join(f'url = "{u}"\n' for u in urls))
        names = list(names) if names is not None else [u.rsplit("/", 1)[-1] for u in urls]
        self = cls(work / "many", cfg, len(urls), size, names, output, exact)
        if output.label == "disk" and DISK_FRESH == "spread":
            _TO_EMPTY.append(self)
        return self

    @classmethod
    def tree(cls, output: Output, group: str, files: dict[str, bytes]) -> ManyFiles:
        """A directory tree the clients create themselves (mirror): *files* maps each
        relative path to its content, which the anchor writes as they do."""
        import json

        self = cls.prepare(output, group, [], 0, names=[], exact=False)
        self.count, self.mkdir = len(files), False
        self.manifest = self.outdir.parent / "tree.json"
        self.manifest.write_text(json.dumps([[rel, data.hex()] for rel, data in files.items()]))
        return self

    def fresh(self) -> None:
        """An empty output directory before each run.

        On ext4 without a journal (this machine's root) a file created within 1-360 s of
        deleting others in the same block group costs 0.2-0.9 ms instead of 0.03 ms: the
        inode allocator passes over recently deleted inodes, scanning from the group's start
        for every new one (docs/benchmarks.md). So on disk the last run's files are deleted
        (seconds old, before writeback: no discard I/O), its emptied directory is kept,
        renamed aside, and a new directory is made, which chattr +T on the parent places in
        another block group. Elsewhere (tmpfs, or --disk-fresh rmtree) the same directory
        is deleted and re-made."""
        if self.output.label == "disk" and DISK_FRESH == "spread":
            if self.outdir.exists():
                _empty(self.outdir)
                self.retired += 1
                self.outdir.rename(self.outdir.with_name(f"{self.outdir.name}.{self.retired}"))
        else:
            shutil.rmtree(self.outdir, ignore_errors=True)
        if self.mkdir:
            self.outdir.mkdir()

    def check(self) -> None:
        files = list(self.outdir.iterdir())
        if len(files) != self.count or (self.exact and any(f.stat().st_size != self.size for f in files)):
            raise RuntimeError(f"expected {self.count} files of {self.size} bytes in {self.outdir}")

    def note(self) -> str:
        how = ("a new directory per run placed by chattr +T, the last run's files deleted and its"
               " emptied directory kept (pruned by a run 10 minutes later)"
               if self.output.label == "disk" and DISK_FRESH == "spread"
               else "the same directory deleted and re-made before each run")
        return f"output: {self.output.describe()}; {how}"

    def anchor(self, after: Callable[[], None] | None = None) -> Case:
        """The filesystem's share: the same files written by plain os calls in one process
        (checked by *after*, default check())."""
        if self.manifest is not None:
            argv = [sys.executable, "-S", "-m", "bench.reference.fs_anchor", "--tree", str(self.manifest), str(self.outdir)]
        else:
            argv = anchor_cmd(self.outdir, self.size, self.names)
        return Case(ANCHOR, argv, self.fresh, after or self.check)


# Name of the filesystem anchor case in every small-file group.
ANCHOR = "fs anchor: python os.open/write/close only"


def anchor_cmd(outdir: Path, size: int, names: Sequence[str]) -> list[str]:
    """bench/reference/fs_anchor.py: write *size* bytes to each of *names* in *outdir* (python -S:
    about 8 ms of interpreter start on top of the files)."""
    return [sys.executable, "-S", "-m", "bench.reference.fs_anchor", str(outdir), str(size), *names]


class Relay:
    """One bench/relay.py process for one round trip (every *spec* LISTEN=TARGET of it, the
    handshake modelled, each direction delayed RTT/2), and its CPU time from /proc."""

    def __init__(self, rtt: int, specs: list[str]) -> None:
        self.proc = subprocess.Popen(python_cmd("-m", "bench.relay", "--rtt", str(rtt), *specs),
                                     stdout=subprocess.PIPE, text=True, env=bench_env(), cwd=ROOT)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if line != "ready":
            self.stop()
            raise RuntimeError(f"bench.relay did not start (exit {self.proc.returncode})")
        self.mark = 0.0

    def cpu(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def compare(self, title: str, cases: list[Case], reference: str | None = None, *,
                note: str = "output: tmpfs, an emptied directory per run") -> dict[str, object]:
        """harness.compare of *cases* through this relay, with the relay's own CPU time per run
        (median per case) printed and stored below the table."""
        spent: dict[str, list[float]] = {}
        cases = with_trees(cases)
        for case in cases:
            self._meter(case, spent)
        ref = reference or cases[0].name
        group = compare(title, cases, ref, note=f"{note}; ratio = {ref} time / this time", expand=False)
        if spent and group:
            line = "relay CPU s per run (median): " + ", ".join(
                f"{k} {statistics.median(v):.2f}" for k, v in spent.items())
            print(f"   {line}", flush=True)
            with open(RESULTS / "latest.md", "a") as f:
                f.write(f"\n{line}\n")
        return group

    def _meter(self, case: Case, spent: dict[str, list[float]]) -> None:
        before, after = case.before, case.after

        def b() -> None:
            if before:
                before()
            self.mark = self.cpu()

        def a() -> None:
            spent.setdefault(case.name, []).append(self.cpu() - self.mark)
            if after:
                after()

        case.before, case.after = b, a

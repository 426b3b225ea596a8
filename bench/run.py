"""Run the benchmarks: ``bench/.venv/bin/python -m bench.run [group ...] [--quick]``.

``make bench`` first builds bench/.venv (bench/make_venv.py: the package installed
from this tree as a wheel, with its bytecode compiled) and then runs this with
that venv's Python. Each group has a module bench/suites/<group>.py with
``def run(launcher: fixtures.launcher.Launcher, quick: bool) -> None`` that
starts the servers it needs and prints its tables with bench.harness.compare.
Results: bench/results/latest.jsonl (every run) and bench/results/latest.md.
bench/README.md says what each group measures.

A/B of source trees or settings, in the same interleaved rounds as everything else:
``--tree DIR`` (repeatable) runs every ``anyurl`` CLI case of the chosen groups from that
source tree too (e.g. ``git worktree add /tmp/main main`` and ``--tree /tmp/main``), and
``--variant NAME:ENV=VALUE[,ENV=VALUE]`` with that environment (e.g.
``asyncio:ANYURL_LOOP=asyncio``, ``late:ANYURL_EARLY_CONNECT=0``).
"""

from __future__ import annotations

import argparse
import compileall
import importlib
import os
import pkgutil
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from fixtures.launcher import Launcher

from bench import harness


def run_with_servers(run: Callable[[Launcher, bool], None], quick: bool) -> None:
    """Run one benchmark module's ``run`` with a Launcher, stopping its servers after."""
    launcher = Launcher()
    try:
        run(launcher, quick)
    finally:
        launcher.stop_all()
        launcher.remove()
        harness.cleanup()


def installed_anyurl() -> Path:
    """Where benchmarked processes import anyurl from; refuse the source tree
    (an editable install without bytecode recompiles anyurl in every process)."""
    out = subprocess.run([sys.executable, "-c", "import anyurl; print(anyurl.__file__)"],
                         capture_output=True, text=True, env=harness.bench_env(), cwd=harness.ROOT, check=True)
    path = Path(out.stdout.strip()).resolve()
    if "site-packages" not in path.parts or not (path.parent / "__pycache__").is_dir():
        raise SystemExit(f"anyurl comes from {path}, not a compiled install: run `make bench` "
                         "(or python bench/make_venv.py, then bench/.venv/bin/python -m bench.run)")
    return path


def parse_variant(text: str) -> tuple[str, dict[str, str]]:
    """``NAME:ENV=VALUE[,ENV=VALUE]`` as (NAME, {ENV: VALUE})."""
    name, sep, rest = text.partition(":")
    pairs = [p.partition("=") for p in rest.split(",") if p]
    if not sep or not name or not pairs or any(not k or not eq for k, eq, _ in pairs):
        raise ValueError(f"--variant {text!r}: expected NAME:ENV=VALUE[,ENV=VALUE]")
    return name, {k: v for k, _, v in pairs}


def header(groups: list[str], quick: bool) -> str:
    commit = subprocess.run(["git", "-C", str(harness.ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True, check=False).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(harness.ROOT), "status", "--porcelain", "--", "src"],
                           capture_output=True, text=True, check=False).stdout.strip()
    return (f"# bench run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n\n"
            f"commit {commit}{' (src modified)' if dirty else ''}; groups {' '.join(groups)}"
            f"{' (--quick)' if quick else ''}; {harness.ROUNDS} rounds;"
            f"{''.join(f' tree {t};' for t in harness.TREES)}{''.join(f' skip {k!r};' for k in harness.SKIP)}"
            f"{''.join(f' variant {n} {e};' for n, e in harness.VARIANTS)} {os.cpu_count()} CPUs; "
            f"Python {platform.python_version()}; anyurl from {installed_anyurl()}; "
            f"small-file outputs: {'; '.join(f'{o.label} = {o.describe()}' for o in harness.OUTPUTS)}"
            f" (disk dirs renewed by {harness.DISK_FRESH}); "
            f"load average at start {harness.load1():.2f}\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.run")
    ap.add_argument("groups", nargs="*", help="which benchmarks (default: all)")
    ap.add_argument("--quick", action="store_true", help="smaller files and 3 rounds (a few minutes)")
    ap.add_argument("--rounds", type=int, help="interleaved rounds per group (default 5; 3 with --quick)")
    ap.add_argument("--only", action="append", default=[], metavar="TEXT",
                    help="run only the groups whose title contains TEXT (repeatable; e.g. 'files of 4 KiB')")
    ap.add_argument("--skip", action="append", default=[], metavar="TEXT",
                    help="leave out the commands whose name contains TEXT (repeatable; e.g. 'httpx')")
    ap.add_argument("--outputs", default="tmpfs,disk",
                    help="where small-file groups write, each a table of its own: tmpfs, disk or both "
                         "(default tmpfs,disk)")
    ap.add_argument("--tmpfs", type=Path, default=Path("/dev/shm"), help="tmpfs directory (default /dev/shm)")
    ap.add_argument("--scratch", type=Path,
                    help="disk scratch directory (default $ANYURL_BENCH_TMP or bench/.scratch)")
    ap.add_argument("--disk-fresh", choices=["spread", "rmtree"], default="spread",
                    help="renew a disk output dir by a new directory in another block group (default) or "
                         "by deleting and re-making it (the old method, whose cost docs/benchmarks.md shows)")
    ap.add_argument("--tree", action="append", default=[], type=Path, metavar="DIR",
                    help="also run each anyurl CLI case from this source tree (repeatable)")
    ap.add_argument("--variant", action="append", default=[], metavar="NAME:ENV=VALUE[,ENV=VALUE]",
                    help="also run each anyurl CLI case with this environment (repeatable)")
    args = ap.parse_args(argv)
    try:
        harness.VARIANTS[:] = [parse_variant(v) for v in args.variant]
    except ValueError as exc:
        ap.error(str(exc))
    harness.TREES[:] = [t.resolve() for t in args.tree]
    for tree in harness.TREES:
        if not (tree / "src" / "anyurl" / "__init__.py").is_file():
            ap.error(f"--tree {tree}: no src/anyurl/__init__.py there")
    harness.ROUNDS = args.rounds or (3 if args.quick else 5)
    harness.ONLY = args.only
    harness.SKIP = args.skip
    harness.DISK_FRESH = args.disk_fresh
    here = Path(__file__).resolve().parent
    available = sorted(m.name for m in pkgutil.iter_modules([str(here / "suites")]) if not m.name.startswith("_"))
    chosen = args.groups or available
    # dask last: its cluster runs inside this process, and the threads distributed leaves
    # behind slowed the groups measured after it (FTP 1 GiB to /dev/null read 0.17-0.28x curl
    # after dask, 0.88-0.99x alone, same commit and a quiet machine)
    chosen = sorted(chosen, key=lambda name: name == "dask")
    unknown = [n for n in chosen if n not in available]
    if unknown:
        print(f"no benchmark {unknown[0]!r}; have {available}", file=sys.stderr)
        return 2
    # the bench's own scripts run as processes too: compile them once, not in every run
    compileall.compile_dir(here, quiet=1)
    compileall.compile_dir(harness.ROOT / "fixtures", quiet=1)
    for tree in harness.TREES:
        harness.compile_tree(tree)
    # Output files go to bench/.scratch (--scratch or ANYURL_BENCH_TMP to choose), not /tmp:
    # everyone creates and deletes files there, and on ext4 without a journal a create next
    # to recently deleted inodes costs 0.2-0.9 ms instead of 0.03 ms (harness.ManyFiles.fresh).
    scratch = (args.scratch or Path(os.environ.get("ANYURL_BENCH_TMP") or here / ".scratch")).resolve()
    scratch.mkdir(parents=True, exist_ok=True)
    scratch.chmod(0o755)  # servers running as their own users read their trees below it
    tempfile.tempdir = str(scratch)
    os.environ["TMPDIR"] = str(scratch)
    try:
        harness.OUTPUTS[:] = harness.default_outputs(args.outputs.split(","), args.tmpfs, scratch)
    except ValueError as exc:
        ap.error(str(exc))
    head = header(chosen, args.quick)
    print(head, flush=True)
    harness.RESULTS.mkdir(exist_ok=True)
    (harness.RESULTS / "latest.md").write_text(head)
    launcher = Launcher()
    t0 = time.monotonic()
    try:
        for name in chosen:
            importlib.import_module(f"bench.suites.{name}").run(launcher, args.quick)
    finally:
        launcher.stop_all()
        launcher.remove()
        harness.cleanup()
    print(f"\nall groups in {time.monotonic() - t0:.0f} s; tables in {harness.RESULTS / 'latest.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

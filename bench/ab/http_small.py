"""Small-file HTTP A/B: two anyurl source trees against curl and the raw yardstick, interleaved rounds.

    python bench/ab/http_small.py A_TREE B_TREE [--rounds N] [--count N] [--only TEXT]

One nginx (started through fixtures/launcher.py, as bench/suites/http.py does)
serves COUNT files of 4 KiB (/many/, text that nginx gzips when asked); every
round runs each case once, in an order rotated from round to round, with the
output on /dev/shm. A tree is picked with PYTHONPATH (TREE/src:TREE), its
bytecode cached under /dev/shm. Cases: ``curl -Z --parallel-max 32``; the raw
yardstick bench/reference/http_asyncio.py (identity, and ``--gzip`` as anyurl asks); per
tree ``anyurl get -q --parallel 32 -d DIR URL...`` (the CLI) and bench/suites/http.py
``many --parallel 32`` (the library, on asyncio's loop and with ``--uvloop``); the floor ``python -c "import asyncio,
uvloop"``. With ``--count`` above 1,000 the URLs are bench/suites/http.py's
uncompressed /many10k/ files (seed_lots). Wall time around the child, user+sys CPU from its wait4 rusage; each
run's output is checked (count and sizes). Per-request CPU = (case - floor) / COUNT, or with
``--slope N`` the difference between COUNT and N URLs over COUNT - N (start-up cancelled out).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from fixtures.launcher import Launcher  # noqa: E402

from bench.ab.common import clean_up, spread, tree_env  # noqa: E402

SIZE = 4096


def run_once(argv: list[str], env: dict[str, str] | None, cwd: Path, out: Path,
             want: int) -> tuple[float, float, float]:
    """(wall s, user s, sys s) of one run of *argv* writing *want* files into *out*."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{argv[:4]}: exit {os.waitstatus_to_exitcode(status)}: {err[-500:]}")
    names = os.listdir(out)
    if want and (len(names) != want or any(os.path.getsize(out / n) != SIZE for n in names)):
        raise RuntimeError(f"{argv[:4]}: {len(names)} files, not {want} of {SIZE} bytes")
    return wall, usage.ru_utime, usage.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("a", type=Path, help="source tree A (the baseline)")
    ap.add_argument("b", type=Path, help="source tree B")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--only", action="append", default=[], help="run only cases whose name has TEXT")
    ap.add_argument("--slope", type=int, default=0, metavar="N",
                    help="also run every case on the first N URLs: per-request CPU = the difference / (COUNT - N), "
                         "start-up and set-up cancelled out")
    args = ap.parse_args()
    py = sys.executable
    scratch = Path(tempfile.mkdtemp(prefix="ab-http-small-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None))
    out = scratch / "out"
    launcher = Launcher()
    try:
        ep = launcher.get("nginx")
        if args.count > 1000:  # more than the fixture seeds: the 10,000-file row's uncompressed files
            from bench.suites.http import seed_lots

            urls = [f"http://{ep.host}:{ep.port}{p}" for p in seed_lots(Path(ep.info["www"]), args.count)]
        else:
            urls = [f"http://{ep.host}:{ep.port}/many/f{i:04d}.txt" for i in range(args.count)]
        cfg = scratch / "curl.cfg"
        cfg.write_text("".join(f'url = "{u}"\n' for u in urls))
        cfg_few = scratch / "curl-few.cfg"
        cfg_few.write_text("".join(f'url = "{u}"\n' for u in urls[:args.slope]))
        here = tree_env(ROOT, scratch, "raw")  # (bench/ from this tree; anyurl is not imported)
        cases: list[tuple[str, list[str], dict[str, str] | None, Path, int]] = [
            ("curl -Z --parallel-max 32", ["curl", "-sf", "-Z", "--parallel-max", "32", "--output-dir", str(out),
                                           "--remote-name-all", "-K", str(cfg)], None, scratch, args.count),
            ("raw asyncio+httptools (ceiling)", [py, "-m", "bench.reference.http_asyncio", "-d", str(out), *urls],
             here, ROOT, args.count),
            ("raw ceiling, --gzip", [py, "-m", "bench.reference.http_asyncio", "--gzip", "-d", str(out), *urls],
             here, ROOT, args.count),
        ]
        for tag, tree in (("A", args.a.resolve()), ("B", args.b.resolve())):
            env = tree_env(tree, scratch, tag)
            cases += [
                (f"{tag} anyurl get --parallel 32 -d DIR",
                 [py, "-m", "anyurl", "get", "-q", "--parallel", "32", "-d", str(out), *urls], env, tree, args.count),
                (f"{tag} library many --parallel 32",
                 [py, "-m", "bench.suites.http", "many", "--parallel", "32", str(out), *urls], env, tree, args.count),
                (f"{tag} library many --uvloop",
                 [py, "-m", "bench.suites.http", "many", "--uvloop", "--parallel", "32", str(out), *urls], env, tree,
                 args.count),
            ]
        if args.only:
            cases = [c for c in cases if any(t in c[0] for t in args.only)]
        if args.slope:
            few = set(urls[args.slope:])
            cases += [(f"{name} [{args.slope}]", [a for a in argv if a not in few] if "-K" not in argv
                       else [*argv[:-1], str(cfg_few)], env, cwd, args.slope) for name, argv, env, cwd, _ in cases]
        cases.append(("floor: import asyncio, uvloop", [py, "-c", "import asyncio, uvloop"], None, scratch, 0))
        results: dict[str, list[tuple[float, float, float]]] = {c[0]: [] for c in cases}
        for _name, argv, env, cwd, want in cases:  # warm-up: bytecode, page cache
            run_once(argv, env, cwd, out, want)
        for r in range(args.rounds):
            for name, argv, env, cwd, want in cases[r % len(cases):] + cases[:r % len(cases)]:
                results[name].append(run_once(argv, env, cwd, out, want))
        load = os.getloadavg()
        floor = statistics.median(u + s for _, u, s in results["floor: import asyncio, uvloop"])
        print(f"{args.rounds} interleaved rounds, {args.count} x {SIZE} B, output on {scratch.parent}; "
              f"load average {load[0]:.2f}; A={args.a} B={args.b}")
        print(f"{'case (s)':40} {'wall med':>8} {'min-max':>13} {'cpu med':>8} {'min-max':>13} {'user':>6} "
              f"{'sys':>6} {'ms/req':>7}")
        for name, runs in results.items():
            wall = [w for w, _, _ in runs]
            cpu = [u + s for _, u, s in runs]
            per = (statistics.median(cpu) - floor) * 1000 / args.count
            print(f"{name:40} {spread(wall)} {spread(cpu)} "
                  f"{statistics.median(u for _, u, _ in runs):6.3f} {statistics.median(s for _, _, s in runs):6.3f} "
                  f"{per:7.3f}")
        if args.slope:
            print(f"per-request CPU (ms) from the slope, ({args.count} URLs - {args.slope} URLs) / "
                  f"{args.count - args.slope}, medians of the paired rounds, [min-max]:")
            for name in results:
                few_runs = results.get(f"{name} [{args.slope}]")
                if few_runs is None:
                    continue
                d = sorted(((u + s) - (fu + fs)) * 1000 / (args.count - args.slope)
                           for (_, u, s), (_, fu, fs) in zip(results[name], few_runs, strict=True))
                print(f"  {name:40} {statistics.median(d):.3f} [{d[0]:.3f}-{d[-1]:.3f}]")
    finally:
        clean_up(launcher, scratch)
    return 0


if __name__ == "__main__":
    sys.exit(main())

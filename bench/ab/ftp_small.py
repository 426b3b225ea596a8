"""Small-file FTP A/B: two anyurl source trees against lftp, interleaved rounds.

    python bench/ab/ftp_small.py A_TREE B_TREE [--rounds N] [--count N]

One vsftpd (started through fixtures/launcher.py, as bench/suites/ftp.py does)
serves COUNT files of 4 KiB; every round runs each case once, in an order
rotated from round to round, with the output on /dev/shm so the filesystem does
not decide a row. A tree is picked with PYTHONPATH (TREE/src:TREE) and its
bytecode cached under /dev/shm, so A and B start alike. Cases: ``lftp mget -P 8``;
per tree ``anyurl get -q --parallel 8 -d DIR URL...`` (the CLI) and the library
script bench/suites/ftp.py ``many --parallel 8``; the CLI fetching 8 files (its start-up
and logins, what does not grow with COUNT); and the floor ``python -c "import
asyncio, uvloop"``. Wall time is measured around the child, user and sys CPU come
from its wait4 rusage; each run's output is checked (count and sizes).

The "server" column is the CPU vsftpd spent serving the run: its listener's
reaped children (one session process pair per control connection; /proc's
cutime + cstime, read once the sessions have ended). With 8 connections on 2
cores the run is close to CPU-bound, so what a client makes the server do counts
as much as its own CPU (lftp sends PASV, SIZE, MDTM and RETR per file, anyurl
EPSV and RETR in one write).
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
from fixtures.servers import vsftpd  # noqa: E402

from bench.ab.common import clean_up, spread, tree_env  # noqa: E402

SIZE = 4096


def children_cpu(pid: int | None) -> float:
    """CPU seconds of *pid*'s reaped children (0 without a pid or on another OS)."""
    if pid is None:
        return 0.0
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")  # cutime + cstime


def session_ends(pid: int | None, limit: float = 2.0) -> float:
    """*pid*'s children CPU once its sessions have been reaped (it settles; at most *limit* s)."""
    deadline = time.monotonic() + limit
    last = children_cpu(pid)
    while time.monotonic() < deadline:
        time.sleep(0.03)
        now = children_cpu(pid)
        if now == last:
            return now
        last = now
    return last


def run_once(argv: list[str], env: dict[str, str] | None, cwd: Path, out: Path,
             want: int, server: int | None = None) -> tuple[float, float, float, float]:
    """(wall s, user s, sys s, server s) of one run of *argv* writing *want* files into *out*."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    served = session_ends(server)
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
    return wall, usage.ru_utime, usage.ru_stime, session_ends(server) - served


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("a", type=Path, help="source tree A (the baseline)")
    ap.add_argument("b", type=Path, help="source tree B")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--count", type=int, default=1000)
    args = ap.parse_args()
    py = sys.executable
    scratch = Path(tempfile.mkdtemp(prefix="ab-ftp-small-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None))
    out = scratch / "out"
    launcher = Launcher()
    try:
        ep = launcher.get("vsftpd")
        server = launcher.pids()[-1]  # the vsftpd listener: each session is its child
        many_dir = vsftpd.ensure_many(ep.info, args.count, SIZE, f"bench{args.count}")
        rel = f"/pub/{many_dir.name}"
        urls = [f"ftp://{ep.host}:{ep.port}{rel}/{n}" for n in sorted(p.name for p in many_dir.iterdir())]
        lftp = ["lftp", "-c", f"set cmd:interactive no; set xfer:clobber on; open -p {ep.port} {ep.host}; "
                              f"lcd {out}; mget -P 8 {rel}/*"]
        cases: list[tuple[str, list[str], dict[str, str] | None, Path, int]] = [
            ("lftp mget -P 8", lftp, None, scratch, args.count)]
        for tag, tree in (("A", args.a.resolve()), ("B", args.b.resolve())):
            env = tree_env(tree, scratch, tag)
            cli = [py, "-m", "anyurl", "get", "-q", "--parallel", "8", "-d", str(out)]
            cases += [
                (f"{tag} anyurl get --parallel 8 -d DIR", [*cli, *urls], env, tree, args.count),
                (f"{tag} library many --parallel 8", [py, "-m", "bench.suites.ftp", "many", "--parallel", "8",
                                                      str(out), *urls], env, tree, args.count),
                (f"{tag} CLI, 8 files (start-up + logins)", [*cli, *urls[:8]], env, tree, 8),
            ]
        cases.append(("floor: import asyncio, uvloop", [py, "-c", "import asyncio, uvloop"], None, scratch, 0))
        results: dict[str, list[tuple[float, float, float, float]]] = {c[0]: [] for c in cases}
        for _name, argv, env, cwd, want in cases:  # warm-up: bytecode, page cache
            run_once(argv, env, cwd, out, want)
        for r in range(args.rounds):
            for name, argv, env, cwd, want in cases[r % len(cases):] + cases[:r % len(cases)]:
                results[name].append(run_once(argv, env, cwd, out, want, server))
        load = os.getloadavg()
        print(f"{args.rounds} interleaved rounds, {args.count} x {SIZE} B, output on {scratch.parent}; "
              f"load average {load[0]:.2f}; A={args.a} B={args.b}")
        print(f"{'case (s)':40} {'wall med':>8} {'min-max':>13} {'cpu med':>8} {'min-max':>13} {'user':>6} {'sys':>6}"
              f" {'server':>6}")
        for name, runs in results.items():
            wall = [w for w, _, _, _ in runs]
            cpu = [u + s for _, u, s, _ in runs]
            print(f"{name:40} {spread(wall)} {spread(cpu)} "
                  f"{statistics.median(u for _, u, _, _ in runs):6.3f} "
                  f"{statistics.median(s for _, _, s, _ in runs):6.3f} "
                  f"{statistics.median(v for _, _, _, v in runs):6.3f}")
    finally:
        clean_up(launcher, scratch)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Start-up A/B: two anyurl installs, interleaved rounds, medians and spread in ms.

    python bench/ab/startup.py A_VENV B_VENV [--rounds N] [--no-big]

Each round runs every case once, in turn, so a burst of load on the shared
machine hits A and B alike. Cases: the floor (``python -c "import asyncio,
uvloop"`` in A's venv), ``anyurl get -q -o OUT`` of a 1-byte file: URL, and of
a small (1 KiB) and a 100 MiB gopher item from gophernicus (started through
fixtures/launcher.py, as bench/suites/gopher.py does), with curl on the 100 MiB
item as the anchor. Wall time is measured around the child; user+sys CPU and
peak RSS come from ``/usr/bin/time`` (that child's own wait4 rusage). Output
files go to /dev/shm where it exists, so ext4's state does not decide a row.
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

from bench.ab.common import clean_up  # noqa: E402

TIME = "/usr/bin/time"


def run_once(argv: list[str], stats: Path) -> tuple[float, float, int]:
    """(wall ms, user+sys CPU ms, peak RSS KiB) of one run of *argv* under /usr/bin/time.

    CPU comes from wait4's rusage of the time process (its child included, in
    microseconds; time's own share is ~0.5 ms, the same for every case); the
    peak RSS is time's %M, the command's own.
    """
    err = stats.with_suffix(".err")
    with open(err, "wb") as err_file:
        start = time.perf_counter()
        proc = subprocess.Popen([TIME, "-q", "-f", "%M", "-o", str(stats), *argv],
                                stdout=subprocess.DEVNULL, stderr=err_file)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = (time.perf_counter() - start) * 1000
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{argv}: exit {proc.returncode}: {err.read_text(errors='replace')}")
    rss = int(stats.read_text().split()[-1])
    return wall, (usage.ru_utime + usage.ru_stime) * 1000, rss


def _q(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(p * len(s)))]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("a", type=Path, help="venv A (the baseline)")
    ap.add_argument("b", type=Path, help="venv B")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--no-big", action="store_true", help="leave out the 100 MiB gopher item")
    args = ap.parse_args()
    out_dir = Path(tempfile.mkdtemp(prefix="ab-startup-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None))
    stats = out_dir / "time.txt"
    out = out_dir / "out"
    one = out_dir / "one-byte"
    one.write_bytes(b"x")
    launcher = Launcher()
    try:
        ep = launcher.get("gophernicus")
        root = Path(ep.info["root"])
        (root / "small.txt").write_bytes(b"0123456789abcdef" * 64)
        os.chmod(root / "small.txt", 0o644)
        sizes = {"small": 1024}
        if not args.no_big:
            big = root / "big100.bin"
            with open(big, "wb") as f:
                block = bytes(range(256)) * 4096
                for _ in range(100):
                    f.write(block)
            os.chmod(big, 0o644)
            sizes["big"] = 100 << 20
        base = f"gopher://{ep.host}:{ep.port}"
        urls = {"file 1 B": one.as_uri(), "gopher 1 KiB": f"{base}/0/small.txt"}
        if not args.no_big:
            urls["gopher 100 MiB"] = f"{base}/9/big100.bin"
        cases: list[tuple[str, list[str]]] = [
            ("floor: python -c 'import asyncio, uvloop'", [str(args.a / "bin/python"), "-c", "import asyncio, uvloop"]),
        ]
        for what, url in urls.items():
            for tag, venv in (("A", args.a), ("B", args.b)):
                cases.append((f"{what}: {tag} anyurl get -q -o OUT", [str(venv / "bin/anyurl"), "get", "-q", "-o",
                                                                     str(out), url]))
            if what == "gopher 100 MiB":
                # the ceiling of an asyncio+uvloop process (no anyurl), and curl
                cases.append((f"{what}: raw asyncio+uvloop (B's python)", [str(args.b / "bin/python"),
                              str(ROOT / "bench" / "reference" / "gopher_asyncio.py"), url, str(out)]))
                if shutil.which("curl"):
                    cases.append((f"{what}: curl -s -o OUT", ["curl", "-s", "-o", str(out), url]))
        results: dict[str, list[tuple[float, float, int]]] = {name: [] for name, _ in cases}
        for _name, argv in cases:  # warm-up: page cache, bytecode
            run_once(argv, stats)
            out.unlink(missing_ok=True)
        for r in range(args.rounds):
            order = cases[r % len(cases):] + cases[:r % len(cases)]  # rotate who goes first
            for name, argv in order:
                results[name].append(run_once(argv, stats))
                if "100 MiB" in name and out.stat().st_size != 100 << 20:
                    raise RuntimeError(f"{name}: wrong size {out.stat().st_size}")
                out.unlink(missing_ok=True)
        load = os.getloadavg()
        print(f"{args.rounds} interleaved rounds; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
              f"A={args.a} B={args.b}")
        print(f"{'case (ms)':52} {'wall med':>9} {'p25-p75':>15} {'min':>7} {'cpu med':>8} {'p25-p75':>13} "
              f"{'RSS MiB':>8}")
        for name, _ in cases:
            rows = results[name]
            wall = [w for w, _, _ in rows]
            cpu = [c for _, c, _ in rows]
            rss = [m for _, _, m in rows]
            print(f"{name:52} {statistics.median(wall):9.1f} {_q(wall, .25):7.1f}-{_q(wall, .75):<7.1f} "
                  f"{min(wall):7.1f} {statistics.median(cpu):8.1f} {_q(cpu, .25):6.1f}-{_q(cpu, .75):<6.1f} "
                  f"{statistics.median(rss) / 1024:8.1f}")
    finally:
        clean_up(launcher, out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())

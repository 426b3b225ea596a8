"""The CLI's event loop for one URL and for a batch: asyncio vs uvloop, interleaved rounds.

    python bench/ab/loop.py [--rounds N] [--only TEXT ...] [--env NAME=VALUE ...]

Rows (each run with ANYURL_LOOP=asyncio and ANYURL_LOOP=uvloop, curl beside the
single-URL rows): ``anyurl get -q -o FILE URL`` for a 100 MiB gopher item
(gophernicus), a 1 GiB file from nginx and from vsftpd, a 1-byte file:// URL,
and ``anyurl get -q --parallel 32 -d DIR`` with 1,000 URLs of 4 KiB from nginx.
Single files go to a scratch directory on the root disk (as bench/suites/gopher.py),
the batch to tmpfs. Every round runs each case once, in an order rotated from
round to round; wall time around the child, user+sys CPU from its wait4 rusage.
Each output is checked (size or file count). ``--variant NAME:ENV=VALUE`` adds
a gopher case on each loop with that environment: an A/B of a setting that a
temporary change in the tree reads from ENV (the 4 MiB SO_RCVBUF was tried so).

Measured 2026-11-23 (2 cores, load ~2-3, 9 rounds, medians of wall / CPU s):
gopher 100 MiB asyncio 0.28 / 0.16, uvloop 0.28-0.32 / 0.16-0.17; HTTP 1 GiB
asyncio 1.31-1.45 / 1.13-1.24, uvloop 0.85-1.22 / 0.69-0.76; FTP 1 GiB asyncio
1.21-1.62 / 1.10-1.38, uvloop 0.87-0.98 / 0.77-0.79; file 1 byte 0.08-0.09 both
(CPU 1-4 ms less on asyncio); HTTP batch 0.43-0.44 / 0.34-0.38 both. uvloop
stays the CLI's loop for every command.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from fixtures.launcher import Launcher  # noqa: E402

from bench.ab.common import big_rows, clean_up, run_timed, spread  # noqa: E402


def run_once(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall s, user+sys CPU s) of one run of *argv* (its output to /dev/null)."""
    return run_timed(argv, env)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--only", action="append", default=[], help="rows whose name contains TEXT")
    ap.add_argument("--variant", action="append", default=[], metavar="NAME:ENV=VALUE",
                    help="an extra gopher case per loop with ENV=VALUE")
    ap.add_argument("--loops", default="asyncio,uvloop", help="ANYURL_LOOP values to compare")
    args = ap.parse_args()
    py = sys.executable
    scratch = Path(tempfile.mkdtemp(prefix="ab-loop-"))
    shm = Path(tempfile.mkdtemp(prefix="ab-loop-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None))
    pyc = shm / "pyc"
    out = scratch / "out.bin"
    many_dir = shm / "many"
    launcher = Launcher()
    made: list[Path] = []
    try:
        def wanted(row: str) -> bool:
            return not args.only or any(t in row for t in args.only)

        base = dict(os.environ)
        base.pop("PYTHONDONTWRITEBYTECODE", None)
        base["PYTHONPYCACHEPREFIX"] = str(pyc)
        env = dict(base, PYTHONPATH=f"{ROOT}/src:{ROOT}")
        curl = shutil.which("curl") or "curl"
        # row -> (URL, expected size) for the single-URL rows
        singles = big_rows(launcher, wanted, "ab-loop", shm, made)
        if wanted("http batch"):
            ng = launcher.get("nginx")

        loops = args.loops.split(",")
        # (row, case, argv, env, before, check)
        Cases = list[tuple[str, str, list[str], dict[str, str], Callable[[], None], Callable[[], None]]]
        cases: Cases = []

        def rm_out() -> None:
            out.unlink(missing_ok=True)

        def size_is(n: int) -> Callable[[], None]:
            def check() -> None:
                got = out.stat().st_size if out.exists() else -1
                if got != n:
                    raise RuntimeError(f"{out}: {got} bytes, not {n}")
            return check

        for row, (url, size) in singles.items():
            if not row.startswith("file"):
                cases.append((row, "curl", [curl, "-s", "-o", str(out), url], base, rm_out, size_is(size)))
            for loop in loops:
                cases.append((row, loop, [py, "-m", "anyurl", "get", "-q", "-o", str(out), url],
                              dict(env, ANYURL_LOOP=loop), rm_out, size_is(size)))
            if row.startswith("gopher"):
                for variant in args.variant:
                    name, _, setting = variant.partition(":")
                    key, _, value = setting.partition("=")
                    for loop in loops:
                        cases.append((row, f"{loop} {name}", [py, "-m", "anyurl", "get", "-q", "-o", str(out), url],
                                      dict(env, ANYURL_LOOP=loop, **{key: value}), rm_out, size_is(size)))
        if wanted("http batch"):
            urls = [f"http://{ng.host}:{ng.port}/many/f{i:04d}.txt" for i in range(1000)]

            def fresh() -> None:
                shutil.rmtree(many_dir, ignore_errors=True)
                many_dir.mkdir()

            def count() -> None:
                names = os.listdir(many_dir)
                if len(names) != 1000 or any((many_dir / n).stat().st_size != 4096 for n in names[:50]):
                    raise RuntimeError(f"{many_dir}: {len(names)} files")

            row = "http batch 1000 x 4 KiB, --parallel 32, tmpfs"
            for loop in loops:
                cases.append((row, loop, [py, "-m", "anyurl", "get", "-q", "--parallel", "32", "-d", str(many_dir),
                                          *urls], dict(env, ANYURL_LOOP=loop), fresh, count))

        def one(case: tuple[str, str, list[str], dict[str, str], Callable[[], None], Callable[[], None]]
                ) -> tuple[float, float]:
            _, _, argv, e, before, check = case
            before()
            res = run_once(argv, e)
            check()
            return res

        results: dict[tuple[str, str], list[tuple[float, float]]] = {(c[0], c[1]): [] for c in cases}
        for c in cases:  # warm-up: bytecode, page cache, the output check
            one(c)
        for r in range(args.rounds):
            for c in cases[r % len(cases):] + cases[:r % len(cases)]:
                results[(c[0], c[1])].append(one(c))
        load = os.getloadavg()
        print(f"{args.rounds} interleaved rounds; single files on {scratch.parent}, batch on {shm.parent}; "
              f"load average {load[0]:.2f}")
        print(f"{'row':46} {'case':22} {'wall med':>8} {'min-max':>13} {'cpu med':>8} {'min-max':>13}")
        for (row, case), runs in results.items():
            wall = [w for w, _ in runs]
            cpu = [c for _, c in runs]
            print(f"{row:46} {case:22} {spread(wall)} {spread(cpu)}")
    finally:
        clean_up(launcher, scratch, shm, files=made)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The CLI's early connect (anyurl/_early.py): source trees A/B, interleaved rounds.

    python bench/ab/early.py [--rounds N] [--only TEXT ...] [--tree DIR ...] [--variant NAME:ENV=VALUE ...]

Rows: ``anyurl get -q -o FILE URL`` for a 100 MiB gopher item (gophernicus), a
1 GiB file from vsftpd and from nginx, one 4 KiB file from nginx, and a 1-byte
file:// URL; curl beside each network row. Cases per row: each --tree (default:
this tree; pass the main checkout's export first for main vs this branch), this
tree with ANYURL_EARLY_CONNECT=0, and each --variant (this tree with ENV=VALUE).
Every tree runs from its own source with its bytecode cached (compiled once, as
an installed package). Every round runs each case once, in an order rotated from
round to round; wall time around the child, user+sys CPU from its wait4 rusage;
each output's size is checked. Files go to a scratch directory on the root disk.

Measured 2026-11-24 (2 cores shared, load 1.0-2.8; main = 8697959, medians of wall s, min-max):
gopher 100 MiB, 31 rounds: curl 0.130, main 0.183 (0.175-0.384), early connect 0.169
(0.159-0.365), ANYURL_EARLY_CONNECT=0 0.186; CPU 0.147 s in every anyurl case (the CLI's
wall is now its CPU time). Sending the selector early as well (a throwaway tree, blocking
connect + send at start-up) gave 0.177: no gain over connecting, so it is not done.
FTP 1 GiB, HTTP 1 GiB, one 4 KiB HTTP file and a 1-byte file:// URL: no change beyond
the noise (file 1 byte 0.077-0.080 s in every case).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from fixtures.launcher import Launcher  # noqa: E402

from bench.ab.common import big_rows, clean_up, run_timed, spread, tree_env  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--only", action="append", default=[], help="rows whose name contains TEXT")
    ap.add_argument("--tree", action="append", type=Path, default=[], help="anyurl source trees (A, B...)")
    ap.add_argument("--variant", action="append", default=[], metavar="NAME:ENV=VALUE",
                    help="an extra case: this tree with ENV=VALUE")
    ap.add_argument("--no-off", action="store_true", help="no ANYURL_EARLY_CONNECT=0 case")
    args = ap.parse_args()
    py = sys.executable
    trees = [t.resolve() for t in args.tree] or [ROOT]
    scratch = Path(tempfile.mkdtemp(prefix="ab-early-"))
    shm = Path(tempfile.mkdtemp(prefix="ab-early-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None))
    out = scratch / "out.bin"
    launcher = Launcher()
    made: list[Path] = []
    try:
        def wanted(row: str) -> bool:
            return not args.only or any(t in row for t in args.only)

        base = dict(os.environ)
        base.pop("PYTHONDONTWRITEBYTECODE", None)
        curl = shutil.which("curl") or "curl"
        rows = big_rows(launcher, wanted, "ab-early", shm, made)
        if wanted("http 4 KiB"):
            ng = launcher.get("nginx")
            rows["http 4 KiB"] = (f"http://{ng.host}:{ng.port}/many/f0000.txt", 4096)

        # (row, case, argv, env, expected size)
        cases: list[tuple[str, str, list[str], dict[str, str], int]] = []
        for row, (url, size) in rows.items():
            argv = [py, "-m", "anyurl", "get", "-q", "-o", str(out), url]
            if not row.startswith("file"):
                cases.append((row, "curl", [curl, "-s", "-o", str(out), url], base, size))
            for i, tree in enumerate(trees):
                name = tree.name if len(trees) > 1 else "this tree"
                cases.append((row, name, argv, tree_env(tree, shm, f"t{i}"), size))
            if not args.no_off:
                cases.append((row, f"{ROOT.name} EARLY=0", argv,
                              dict(tree_env(ROOT, shm, "self"), ANYURL_EARLY_CONNECT="0"), size))
            for variant in args.variant:
                vname, _, setting = variant.partition(":")
                key, _, value = setting.partition("=")
                cases.append((row, f"{ROOT.name} {vname}", argv, dict(tree_env(ROOT, shm, "self"), **{key: value}),
                              size))

        def one(case: tuple[str, str, list[str], dict[str, str], int]) -> tuple[float, float]:
            _, _, argv, env, size = case
            out.unlink(missing_ok=True)
            res = run_timed(argv, env)
            got = out.stat().st_size if out.exists() else -1
            if got != size:
                raise RuntimeError(f"{case[:2]}: {got} bytes, not {size}")
            return res

        results: dict[tuple[str, str], list[tuple[float, float]]] = {(c[0], c[1]): [] for c in cases}
        for c in cases:  # warm-up: bytecode, page cache, the output check
            one(c)
        for r in range(args.rounds):
            for c in cases[r % len(cases):] + cases[:r % len(cases)]:
                results[(c[0], c[1])].append(one(c))
        load = os.getloadavg()
        print(f"{args.rounds} interleaved rounds; files on {scratch.parent}; load average {load[0]:.2f}; "
              f"trees: {', '.join(map(str, trees))}")
        print(f"{'row':16} {'case':24} {'wall med':>8} {'min-max':>13} {'x curl':>6} {'cpu med':>8} {'min-max':>13}")
        for row in rows:
            anchor = results.get((row, "curl"))
            aw = statistics.median(w for w, _ in anchor) if anchor else None
            for (r_, case), runs in results.items():
                if r_ != row:
                    continue
                wall = [w for w, _ in runs]
                cpu = [c for _, c in runs]
                ratio = f"{aw / statistics.median(wall):6.2f}" if aw else "     -"
                print(f"{row:16} {case:24} {spread(wall)} {ratio} {spread(cpu)}")
    finally:
        clean_up(launcher, scratch, shm, files=made)
    return 0


if __name__ == "__main__":
    sys.exit(main())

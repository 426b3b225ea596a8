"""One big gopher item (gophernicus): curl vs anyurl vs the raw prototypes, interleaved rounds.

    python bench/ab/gopher_big.py [--rounds N] [--mib N] [--only TEXT ...] [--tree DIR ...]

One gophernicus (fixtures/launcher.py) serves a MIB-MiB binary item (type 9).
Every round runs each case once, in an order rotated from round to round, to a
file (FILE in a scratch directory on the root disk, as bench/suites/gopher.py) and to
/dev/null. Wall time is measured around the child, user+sys CPU from its wait4
rusage; each file output is checked (size, and bytes against the source on
the first run). Cases: curl; per --tree (default: this tree) the anyurl CLI;
bench/reference/gopher_asyncio.py (transport + buffered protocol, the earlier ceiling);
bench/reference/gopher_splice.py splice and recv modes (plain socket + add_reader).
Ratios are curl's median wall (or CPU) over the case's.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from fixtures.launcher import Launcher  # noqa: E402

from bench.ab.common import clean_up, run_timed, spread  # noqa: E402


def run_once(argv: list[str], env: dict[str, str], stdout: str | None) -> tuple[float, float]:
    """(wall s, user+sys CPU s) of one run of *argv*."""
    return run_timed(argv, env, stdout)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--mib", type=int, default=100)
    ap.add_argument("--only", action="append", default=[], help="cases whose name contains TEXT (and curl)")
    ap.add_argument("--tree", action="append", type=Path, default=[], help="anyurl source tree(s) for the CLI")
    args = ap.parse_args()
    trees = args.tree or [ROOT]
    py = sys.executable
    scratch = Path(tempfile.mkdtemp(prefix="ab-gopher-big-"))
    pyc = Path(tempfile.mkdtemp(prefix="ab-gopher-pyc-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None))
    out = scratch / "big.out"
    launcher = Launcher()
    try:
        ep = launcher.get("gophernicus")
        src = Path(ep.info["root"]) / "big.bin"
        block = bytes(range(256)) * 4096
        with open(src, "wb") as f:
            for i in range(args.mib):
                f.write(block[i % 256:] + block[:i % 256])  # not periodic per MiB: a misplaced block shows
        os.chmod(src, 0o644)
        (src.parent / "one.bin").write_bytes(b"1")
        os.chmod(src.parent / "one.bin", 0o644)
        size = src.stat().st_size
        url = f"gopher://{ep.host}:{ep.port}/9/big.bin"
        base = dict(os.environ)
        base.pop("PYTHONDONTWRITEBYTECODE", None)
        base["PYTHONPYCACHEPREFIX"] = str(pyc)
        raw_env = dict(base, PYTHONPATH=str(ROOT))
        curl = shutil.which("curl") or "curl"
        # (name, argv, env, writes FILE itself, to /dev/null)
        cases: list[tuple[str, list[str], dict[str, str], bool]] = []
        for dest in ("file", "null"):
            to = str(out) if dest == "file" else os.devnull
            cases.append((f"{dest}: curl", [curl, "-s", "-o", to, url], base, dest == "file"))
            for i, tree in enumerate(trees):
                env = dict(base, PYTHONPATH=f"{tree.resolve()}/src:{tree.resolve()}")
                tag = f" [{tree.name}]" if len(trees) > 1 else ""
                argv = [py, "-m", "anyurl", "get", "-q", "-o", to, url] if dest == "file" else \
                    [py, "-m", "anyurl", "get", "-q", url]
                cases.append((f"{dest}: anyurl CLI{tag}", argv, env, dest == "file"))
                del i
            target = to if dest == "file" else "-"
            cases.append((f"{dest}: raw_gopher (transport)", [py, "-m", "bench.reference.gopher_asyncio", url, target], raw_env,
                          dest == "file"))
            for mode in ("splice", "recv"):
                for loop in ("uvloop", "asyncio"):
                    cases.append((f"{dest}: raw_splice {mode} {loop}",
                                  [py, "-m", "bench.reference.gopher_splice", "--mode", mode, "--loop", loop, url, target],
                                  raw_env, dest == "file"))
                # connect before importing asyncio, a 4 MiB receive buffer asked: the import overlaps the start
                cases.append((f"{dest}: raw_splice {mode} asyncio early+rcvbuf",
                              [py, "-m", "bench.reference.gopher_splice", "--mode", mode, "--loop", "asyncio", "--connect-first",
                               "1", "--rcvbuf", str(4 << 20), url, target], raw_env, dest == "file"))
                cases.append((f"{dest}: raw_splice {mode} asyncio rcvbuf 4M",
                              [py, "-m", "bench.reference.gopher_splice", "--mode", mode, "--loop", "asyncio",
                               "--rcvbuf", str(4 << 20), url, target], raw_env, dest == "file"))
        # floors: what no transfer pays for
        cases.append(("floor: python -c 'import asyncio, uvloop'", [py, "-c", "import asyncio, uvloop"], base, False))
        cases.append(("floor: python -c 'import asyncio'", [py, "-c", "import asyncio"], base, False))
        cases.append(("floor: curl, a 1-byte item (server start)",
                      [curl, "-s", "-o", os.devnull, f"gopher://{ep.host}:{ep.port}/9/one.bin"], base, False))
        cases = [c for c in cases if not args.only or c[0].endswith(": curl") or c[0].startswith("floor") or any(t in c[0] for t in args.only)]
        results: dict[str, list[tuple[float, float]]] = {c[0]: [] for c in cases}

        def one(name: str, argv: list[str], env: dict[str, str], to_file: bool, check: bool) -> tuple[float, float]:
            out.unlink(missing_ok=True)
            res = run_once(argv, env, None)
            if to_file:
                if not out.exists():
                    raise RuntimeError(f"{name}: wrote no {out}")
                if out.stat().st_size != size:
                    raise RuntimeError(f"{name}: {out.stat().st_size} bytes, not {size}")
                if check and not filecmp.cmp(src, out, shallow=False):
                    raise RuntimeError(f"{name}: bytes differ from the source")
            return res

        for c in cases:  # warm-up (bytecode, page cache) and the byte-exact check
            one(*c, check=True)
        for r in range(args.rounds):
            for c in cases[r % len(cases):] + cases[:r % len(cases)]:
                results[c[0]].append(one(*c, check=False))
        load = os.getloadavg()
        print(f"{args.rounds} interleaved rounds, one {args.mib} MiB item (gophernicus), file on {scratch.parent}; "
              f"load average {load[0]:.2f}")
        print(f"{'case':40} {'wall med':>8} {'min-max':>13} {'x curl':>6} {'cpu med':>8} {'min-max':>13} {'x curl':>6}")
        for dest in ("file", "null", "floor"):
            anchor = results.get(f"{dest}: curl") or results["file: curl"]
            if not anchor:
                continue
            aw = statistics.median(w for w, _ in anchor)
            ac = statistics.median(c for _, c in anchor)
            for name, runs in results.items():
                if not name.startswith(dest):
                    continue
                wall = [w for w, _ in runs]
                cpu = [c for _, c in runs]
                print(f"{name:40} {spread(wall)} {aw / statistics.median(wall):6.2f} {spread(cpu)} "
                      f"{ac / statistics.median(cpu):6.2f}")
    finally:
        clean_up(launcher, scratch, pyc)
    return 0


if __name__ == "__main__":
    sys.exit(main())

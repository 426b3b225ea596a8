"""Syscalls per small HTTP request: the CLI against the asyncio ceiling and curl, counted by strace.

    python bench/ab/syscalls_http.py [TREE...] [--count N] [--few M]

One nginx (fixtures/launcher.py) serves bench/suites/http.py's uncompressed 4 KiB files
(seed_lots). Each client fetches COUNT and then FEW of them at concurrency 32 into /dev/shm
under ``strace -f -c``; per request = (calls for COUNT - calls for FEW) / (COUNT - FEW), by
syscall name, so start-up's calls cancel out. TREE: anyurl source trees to run the CLI from
(PYTHONPATH=TREE/src); none: the installed ``anyurl`` of this interpreter's environment.
Counts, not time: strace slows every call, and a count does not depend on the machine's load.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from fixtures.launcher import Launcher  # noqa: E402

from bench.ab.common import clean_up, tree_env  # noqa: E402


def parse_summary(text: str) -> dict[str, int]:
    """strace -c's table as {syscall: calls}."""
    calls: dict[str, int] = {}
    for line in text.splitlines():
        fields = line.split()
        # % time, seconds, usecs/call, calls, [errors,] syscall
        if len(fields) >= 5 and fields[3].isdigit() and fields[-1] != "total":
            calls[fields[-1]] = calls.get(fields[-1], 0) + int(fields[3])
    return calls


def count(argv: list[str], env: dict[str, str] | None, out: Path, scratch: Path) -> dict[str, int]:
    """Syscalls of one run of *argv* (children too), its output directory emptied first."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    report = scratch / "strace.txt"
    proc = subprocess.run(["strace", "-f", "-c", "-o", str(report), *argv], env=env, cwd=ROOT,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{argv[:4]}: exit {proc.returncode}: {proc.stderr.decode(errors='replace')[-500:]}")
    return parse_summary(report.read_text())


def per_request(lots: dict[str, int], few: dict[str, int], n: int) -> dict[str, float]:
    """Calls per request by name (the difference of two runs over *n* more requests), largest first."""
    names = set(lots) | set(few)
    per = {k: (lots.get(k, 0) - few.get(k, 0)) / n for k in names}
    return dict(sorted(((k, v) for k, v in per.items() if abs(v) >= 0.005), key=lambda kv: -kv[1]))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("trees", nargs="*", type=Path, help="anyurl source trees (default: the installed one)")
    ap.add_argument("--count", type=int, default=10000)
    ap.add_argument("--few", type=int, default=1000)
    args = ap.parse_args()
    if shutil.which("strace") is None:
        print("strace is not installed", file=sys.stderr)
        return 1
    from bench.suites.http import seed_lots

    py = sys.executable
    scratch = Path(tempfile.mkdtemp(prefix="ab-syscalls-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None))
    out = scratch / "out"
    launcher = Launcher()
    try:
        ep = launcher.get("nginx")
        urls = [f"http://{ep.host}:{ep.port}{p}" for p in seed_lots(Path(ep.info["www"]), args.count)]
        lists = {}
        for n in (args.count, args.few):
            lists[n] = scratch / f"urls-{n}.txt"
            lists[n].write_text("".join(u + "\n" for u in urls[:n]))
            (scratch / f"curl-{n}.cfg").write_text("".join(f'url = "{u}"\n' for u in urls[:n]))
        here = tree_env(ROOT, scratch, "raw")
        cases: list[tuple[str, dict[str, str] | None, object]] = [
            ("curl -Z --parallel-max 32", None, lambda n: [
                "curl", "-sf", "-Z", "--parallel-max", "32", "--output-dir", str(out), "--remote-name-all",
                "-K", str(scratch / f"curl-{n}.cfg")]),
            ("asyncio ceiling (bench/reference/http_asyncio.py)", here, lambda n: [
                py, "-m", "bench.reference.http_asyncio", "--parallel", "32", "-d", str(out), *urls[:n]]),
        ]
        cli = lambda n: [py, "-m", "anyurl", "get", "-q", "--parallel", "32", "-d", str(out),  # noqa: E731
                         "-i", str(lists[n])]
        if args.trees:
            cases += [(f"anyurl get ({tree})", tree_env(tree.resolve(), scratch, f"t{i}"), cli)
                      for i, tree in enumerate(args.trees)]
        else:
            cases.append(("anyurl get (installed)", None, cli))
        print(f"syscalls per request: ({args.count} - {args.few} URLs) / {args.count - args.few}, strace -f -c")
        for name, env, argv in cases:
            lots = count(argv(args.count), env, out, scratch)  # type: ignore[operator]
            few = count(argv(args.few), env, out, scratch)  # type: ignore[operator]
            per = per_request(lots, few, args.count - args.few)
            detail = ", ".join(f"{k} {v:.2f}" for k, v in per.items())
            print(f"{name}: {sum(per.values()):.2f} ({detail})", flush=True)
    finally:
        clean_up(launcher, scratch)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Instructions per small HTTP request, counted by callgrind: repeatable where CPU time is not.

    python bench/ab/http_small_callgrind.py TREE [TREE...] [--modes cli,lib,libaio] [--few 40] [--many 240]

For each source tree and mode, runs the same command on the first FEW and on the
first MANY of nginx's /many/ files (4 KiB text, gzipped as anyurl asks) under
``valgrind --tool=callgrind`` and prints (Ir(MANY) - Ir(FEW)) / (MANY - FEW): the
user-space instructions of one request, start-up, the connections (32 in both
runs) and the close cancelled out. Modes: ``cli`` is ``anyurl get -q --parallel
32 -d DIR``, ``lib`` bench/suites/http.py ``many --uvloop --parallel 32``, ``libaio``
the same on asyncio's loop. PYTHONHASHSEED=0 makes a count repeat to a few
instructions; a warm-up run first writes the bytecode cache. The kernel's share
(sendto, linkat...) is not counted: see bench/ab/http_small.py for CPU time.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from fixtures.launcher import Launcher  # noqa: E402

from bench.ab.common import clean_up, tree_env  # noqa: E402


def _argv(mode: str, out: Path, urls: list[str]) -> list[str]:
    py = sys.executable
    if mode == "cli":
        return [py, "-m", "anyurl", "get", "-q", "--parallel", "32", "-d", str(out), *urls]
    loop = ["--uvloop"] if mode == "lib" else []
    return [py, "-m", "bench.suites.http", "many", *loop, "--parallel", "32", str(out), *urls]


def count(tree: Path, mode: str, urls: list[str], scratch: Path, tag: str) -> int:
    """Instructions of one run of *mode* from *tree* on *urls* (each file checked)."""
    out = scratch / "out"
    env = tree_env(tree, scratch, tag)
    env["PYTHONHASHSEED"] = "0"
    for grind in (False, True):  # (the first run writes the bytecode cache)
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir()
        pre = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"] if grind else []
        proc = subprocess.run([*pre, *_argv(mode, out, urls)], env=env, cwd=tree, capture_output=True,
                              text=True, timeout=600)
        if proc.returncode:
            raise RuntimeError(f"{mode} {tree}: exit {proc.returncode}: {proc.stderr[-800:]}")
        if len(os.listdir(out)) != len(urls):
            raise RuntimeError(f"{mode} {tree}: {len(os.listdir(out))} files, not {len(urls)}")
    m = re.search(r"Collected : (\d+)", proc.stderr)
    if m is None:
        raise RuntimeError(f"no callgrind total in: {proc.stderr[-800:]}")
    return int(m.group(1))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("trees", nargs="+", type=Path)
    ap.add_argument("--modes", default="cli,lib,libaio")
    ap.add_argument("--few", type=int, default=40)
    ap.add_argument("--many", type=int, default=240)
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        print("valgrind is not installed", file=sys.stderr)
        return 2
    scratch = Path(tempfile.mkdtemp(prefix="cg-http-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None))
    launcher = Launcher()
    try:
        ep = launcher.get("nginx")
        urls = [f"http://{ep.host}:{ep.port}/many/f{i:04d}.txt" for i in range(args.many)]
        print(f"instructions per request: (Ir of {args.many} URLs - Ir of {args.few}) / {args.many - args.few}")
        for mode in args.modes.split(","):
            for i, tree in enumerate(args.trees):
                few = count(tree.resolve(), mode, urls[:args.few], scratch, f"t{i}")
                many = count(tree.resolve(), mode, urls, scratch, f"t{i}")
                print(f"  {mode:7} {str(tree):40} {(many - few) / (args.many - args.few):10,.0f}"
                      f"   ({args.few} URLs: {few:,})", flush=True)
    finally:
        clean_up(launcher, scratch)
    return 0


if __name__ == "__main__":
    sys.exit(main())

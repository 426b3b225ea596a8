"""Run the benchmarks: ``python -m bench.run [scheme ...]``.

Each scheme has a module bench/bench_<scheme>.py with
``def run(launcher: fixtures.launcher.Launcher, quick: bool) -> None`` that
starts the servers it needs through the launcher and prints its groups with
bench.harness.report. Results are appended to bench/results/latest.jsonl.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Callable
from pathlib import Path

from fixtures.launcher import Launcher


def run_with_servers(run: Callable[[Launcher, bool], None], quick: bool) -> None:
    """Run one benchmark module's ``run`` with a Launcher, stopping its servers after."""
    launcher = Launcher()
    try:
        run(launcher, quick)
    finally:
        launcher.stop_all()
        launcher.remove()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.run")
    ap.add_argument("schemes", nargs="*", help="which benchmarks (default: all)")
    ap.add_argument("--quick", action="store_true", help="smaller files and fewer runs")
    args = ap.parse_args(argv)
    here = Path(__file__).resolve().parent
    available = sorted(m.name[len("bench_"):] for m in pkgutil.iter_modules([str(here)])
                       if m.name.startswith("bench_"))
    chosen = args.schemes or available
    unknown = [n for n in chosen if n not in available]
    if unknown:
        print(f"no benchmark {unknown[0]!r}; have {available}", file=sys.stderr)
        return 2
    launcher = Launcher()
    try:
        for name in chosen:
            importlib.import_module(f"bench.bench_{name}").run(launcher, args.quick)
    finally:
        launcher.stop_all()
        launcher.remove()
    return 0


if __name__ == "__main__":
    sys.exit(main())

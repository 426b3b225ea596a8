"""What the interleaved A/B scripts (bench/ab/*.py) share: a source tree's environment and
one timed run of a child with its own CPU time from wait4."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def tree_env(tree: Path, scratch: Path, tag: str) -> dict[str, str]:
    """The environment that runs anyurl from source tree *tree*, its bytecode cached per tag."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = f"{tree}/src:{tree}"
    env["PYTHONPYCACHEPREFIX"] = str(scratch / f"pyc-{tag}")
    return env


def run_timed(argv: list[str], env: dict[str, str], stdout: str | None = None) -> tuple[float, float]:
    """(wall s, user+sys CPU s) of one run of *argv*, standard output to *stdout* (or /dev/null);
    a failing run raises with the end of its standard error."""
    out = os.open(stdout or os.devnull, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    start = time.perf_counter()
    try:
        proc = subprocess.Popen(argv, env=env, cwd=ROOT, stdout=out, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        os.close(out)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{argv[:6]}: exit {os.waitstatus_to_exitcode(status)}: {err[-500:]}")
    return wall, usage.ru_utime + usage.ru_stime

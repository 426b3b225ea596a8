"""CPU time of one call on hostile text, measured in a fresh interpreter: a quadratic
version is killed by the timeout instead of holding the test run (issue 11)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TEN_MB = 10 * 2**20
# A linear pass over TEN_MB takes well under 1 s of CPU on an idle machine, and a quadratic one
# hours; 5 s keeps them apart on a loaded one too (two cores shared with other suites: 1.0 s
# was exceeded by a linear parse at load 5).
LINEAR_BOUND = 5.0


def cpu_seconds(make_text: str, call: str, *, imports: str, catch: str | None = None) -> float:
    """CPU seconds of the statement *call* on ``text = <make_text>``, after *imports*;
    an exception of the class named *catch* ends the call without failing it."""
    import anyurl

    body = f"try:\n    {call}\nexcept {catch}:\n    pass" if catch else call
    script = (f"import time\n{imports}\ntext = {make_text}\nstart = time.process_time()\n{body}\n"
              f"print(time.process_time() - start)\n")
    env = {**os.environ, "PYTHONPATH": str(Path(anyurl.__file__).parent.parent)}
    try:
        proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{call} on {make_text} ran for over 60 s")
    assert proc.returncode == 0, proc.stderr
    return float(proc.stdout)

"""Run anyurl in a child process as a user would, and measure what a user would check:
the exit status, the wall-clock time, the peak resident memory and the output.

The peak is the child's own ``VmHWM`` (``/proc/PID/status``), polled while it runs
and written by the child itself at exit. (``ru_maxrss`` from ``wait4`` will not do:
Linux carries the forking parent's high-water mark over into the child.)

The child runs under an address-space limit (``RLIMIT_AS``), so a bug that eats
memory fails with MemoryError instead of taking the shared machine down, and a
child that outlives its time budget is killed: both show up as a failed test.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tests.procs import spawn

ROOT = Path(__file__).resolve().parents[3]
DEFAULT_AS_LIMIT = 1536 << 20  # bytes of address space: far above a healthy run, far below the machine

# Set the limit inside the child, then become the program (no preexec_fn: the test
# process has server threads running).
_PRELUDE = (
    "import atexit, os, resource, runpy, sys\n"
    "limit = int(sys.argv.pop(1))\n"
    "resource.setrlimit(resource.RLIMIT_AS, (limit, limit))\n"
    "def _hwm(path=os.environ.pop('ANYURL_CHILD_HWM')):\n"
    "    with open('/proc/self/status') as s, open(path, 'w') as out:\n"
    "        out.write(next(ln for ln in s if ln.startswith('VmHWM:')).split()[1])\n"
    "atexit.register(_hwm)\n"
    "if sys.argv[1] == '-c':\n"
    "    code = sys.argv.pop(2); sys.argv.pop(1)\n"
    "    exec(compile(code, '<child>', 'exec'), {'__name__': '__main__'})\n"
    "else:\n"
    "    sys.argv.pop(1); mod = sys.argv.pop(1)\n"
    "    runpy.run_module(mod, run_name='__main__', alter_sys=True)\n"
)


@dataclass
class ChildResult:
    returncode: int  # negative: killed by that signal
    elapsed: float  # seconds from start to exit (or to the kill)
    peak_rss_mb: float  # the child's peak resident set size
    stdout: str
    stderr: str
    killed: bool  # still running at the deadline, so killed

    def describe(self) -> str:
        return (f"rc={self.returncode} elapsed={self.elapsed:.2f}s peak_rss={self.peak_rss_mb:.0f}MB "
                f"killed={self.killed}\nstdout: {self.stdout[-800:]}\nstderr: {self.stderr[-1500:]}")


def _src_path() -> str:
    # the checkout under test first (the venv may hold another editable install)
    parts = [os.environ.get("ANYURL_SRC", str(ROOT / "src")), str(ROOT)]
    if os.environ.get("PYTHONPATH"):
        parts.append(os.environ["PYTHONPATH"])
    return os.pathsep.join(parts)


def _vm_hwm_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass  # exited between two polls
    return 0


def run_child(args: list[str], *, deadline: float, as_limit: int = DEFAULT_AS_LIMIT,
              cwd: str | os.PathLike[str] | None = None) -> ChildResult:
    """Run ``python -m anyurl ...`` (``args = ["-m", "anyurl", ...]``) or ``python -c CODE``
    (``args = ["-c", code, ...]``); kill it after *deadline* seconds."""
    with tempfile.TemporaryDirectory() as tmp:
        hwm_file = Path(tmp) / "hwm"
        env = dict(os.environ, PYTHONPATH=_src_path(), PYTHONUNBUFFERED="1", COLUMNS="200",
                   ANYURL_CHILD_HWM=str(hwm_file))
        env.pop("PYTHONASYNCIODEBUG", None)
        with open(Path(tmp) / "out", "w+b") as out, open(Path(tmp) / "err", "w+b") as err:
            start = time.monotonic()
            with spawn([sys.executable, "-c", _PRELUDE, str(as_limit), *args],
                       stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env, cwd=cwd) as proc:
                killed = False
                peak_kb = 0
                while True:  # an error in the loop: spawn kills and reaps the child
                    peak_kb = max(peak_kb, _vm_hwm_kb(proc.pid))  # before reaping: /proc/PID still there
                    pid, status = os.waitpid(proc.pid, os.WNOHANG)
                    if pid:
                        break
                    if time.monotonic() - start > deadline:
                        killed = True
                        proc.send_signal(signal.SIGKILL)
                        _pid, status = os.waitpid(proc.pid, 0)
                        break
                    time.sleep(0.02)
                proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
            elapsed = time.monotonic() - start
            try:
                peak_kb = max(peak_kb, int(hwm_file.read_text()))
            except (OSError, ValueError):
                pass  # killed, or died before its exit handlers ran
            out.seek(0)
            err.seek(0)
            return ChildResult(proc.returncode, elapsed, peak_kb / 1024,
                               out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace"),
                               killed)

"""The suite's one way to start a child process it talks to while it runs.

``spawn`` is a context manager around ``subprocess.Popen`` that always reaps the child: on
the way out a child still running is killed and waited for, and its pipes are closed, so a
failing or timed-out test never leaves a process whose ResourceWarning fails a later test.

``default_signals=True`` starts the child with SIGINT and SIGQUIT at their default action.
A test that sends a signal needs it: a job started in the background (``nohup make test &``,
many CI runners) inherits SIGINT ignored, and the CLI rightly keeps an inherited ignore, as
POSIX programs do. The reset is an exec wrapper (not ``preexec_fn``, unsafe with threads).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

# exec()s argv[1:] with SIGINT and SIGQUIT at SIG_DFL (an exec keeps an ignore, resets a handler)
_RESET = ("import os, signal, sys\n"
          "signal.signal(signal.SIGINT, signal.SIG_DFL)\n"
          "signal.signal(signal.SIGQUIT, signal.SIG_DFL)\n"
          "os.execvp(sys.argv[1], sys.argv[1:])\n")


def with_default_signals(argv: Sequence[str]) -> list[str]:
    """*argv* run through the wrapper that restores SIGINT and SIGQUIT to their default."""
    return [sys.executable, "-I", "-S", "-c", _RESET, *argv]  # -I -S: quick, and silent under PYTHON* variables


def reap(proc: subprocess.Popen[Any], timeout: float = 10) -> None:
    """Kill *proc* if it still runs, wait for it and close its pipes."""
    try:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout)
    finally:
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass  # a broken pipe to a killed child


@contextmanager
def spawn(argv: Sequence[str], *, default_signals: bool = False,
          **kwargs: Any) -> Iterator[subprocess.Popen[bytes]]:
    """``subprocess.Popen(argv, **kwargs)``, reaped on exit whatever happened."""
    args = with_default_signals(argv) if default_signals else list(argv)
    proc: subprocess.Popen[bytes] = subprocess.Popen(args, **kwargs)
    try:
        yield proc
    finally:
        reap(proc)

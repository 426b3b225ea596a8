"""The suite's one way to start a child process it talks to while it runs.

``spawn`` is a context manager around ``subprocess.Popen`` that always reaps the child: on
the way out a child still running is killed and waited for, and its pipes are closed, so a
failing or timed-out test never leaves a process whose ResourceWarning fails a later test.
``aspawn`` is the same around ``asyncio.create_subprocess_exec`` (its pipes read to their end,
so the loop's transport closes too), and ``arun`` runs a child to its end under a deadline.

``default_signals=True`` starts the child with SIGINT and SIGQUIT at their default action.
A test that sends a signal needs it: a job started in the background (``nohup make test &``,
many CI runners) inherits SIGINT ignored, and the CLI rightly keeps an inherited ignore, as
POSIX programs do. The reset is an exec wrapper (not ``preexec_fn``, unsafe with threads).
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
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


async def areap(proc: asyncio.subprocess.Process, within: float = 10) -> None:
    """Kill *proc* if it still runs, wait for it, and read its pipes to their end (else the
    loop's transport stays open: a ResourceWarning later)."""
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    async with asyncio.timeout(within):
        await proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                with contextlib.suppress(RuntimeError, OSError):  # (a task of the test still reads it)
                    await stream.read()


@asynccontextmanager
async def aspawn(argv: Sequence[str], *, default_signals: bool = False,
                 **kwargs: Any) -> AsyncIterator[asyncio.subprocess.Process]:
    """``asyncio.create_subprocess_exec(*argv, **kwargs)``, reaped on exit whatever happened."""
    args = with_default_signals(argv) if default_signals else list(argv)
    proc = await asyncio.create_subprocess_exec(*args, **kwargs)
    try:
        yield proc
    finally:
        await areap(proc)


async def arun(argv: Sequence[str], *, within: float, input: bytes | None = None,
               **kwargs: Any) -> tuple[int, bytes, bytes]:
    """Run *argv* to its end: (exit code, stdout, stderr), the pipes PIPE unless *kwargs* say
    otherwise; after *within* seconds TimeoutError, the child killed and reaped."""
    kwargs.setdefault("stdout", asyncio.subprocess.PIPE)
    kwargs.setdefault("stderr", asyncio.subprocess.PIPE)
    if input is not None:
        kwargs.setdefault("stdin", asyncio.subprocess.PIPE)
    async with aspawn(argv, **kwargs) as proc:
        async with asyncio.timeout(within):
            out, err = await proc.communicate(input)
    assert proc.returncode is not None
    return proc.returncode, out or b"", err or b""

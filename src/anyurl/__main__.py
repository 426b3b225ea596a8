"""``python -m anyurl``: the same as the ``anyurl`` command."""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not typing's: importing typing costs start-up time
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from sys import UnraisableHookArgs


def main(argv: Sequence[str] | None = None) -> int:
    """The ``anyurl`` command (its console script). :mod:`anyurl.cli.quick` answers what it can
    without loading :mod:`anyurl.cli.commands`; both are imported and called inside this handler
    so that Ctrl-C at any moment of start-up (or clean-up) also ends with one line and exit code
    130, not a traceback and death by the signal."""
    hook = sys.unraisablehook
    sys.unraisablehook = ours = _Rearm(hook)
    try:
        return _run(list(sys.argv[1:] if argv is None else argv))
    except KeyboardInterrupt:
        sys.stderr.write("anyurl: interrupted\n")  # one write: print's two let another writer split the line
        return 130  # cli.exits.EXIT_INTERRUPTED, as a shell reports SIGINT
    finally:
        if sys.unraisablehook is ours:
            sys.unraisablehook = hook


class _Rearm:
    """``sys.unraisablehook`` while :func:`main` runs. A Ctrl-C whose KeyboardInterrupt is raised
    inside a weakref callback or a finaliser (importlib runs one at every import) is dropped by
    Python ("Exception ignored in"), and the command would go on waiting. This signals it again
    a moment later, from a thread: a signal made inside the hook would be raised in the hook
    and dropped again. Where it lands in such a callback once more, the hook runs again."""

    DELAY = 0.01  # seconds: the hook has returned by then (if not, it catches the interrupt)

    def __init__(self, hook: Callable[[UnraisableHookArgs], object]) -> None:
        self.hook = hook

    def __call__(self, unraisable: UnraisableHookArgs) -> None:
        if unraisable.exc_type is None or not issubclass(unraisable.exc_type, KeyboardInterrupt):
            self.hook(unraisable)
            return
        try:
            self._later()
        except KeyboardInterrupt:  # an earlier re-signal arrived inside this hook: once more
            self._later()

    def _later(self) -> None:
        # Imported here, in the main thread: the dropped interrupt may have left importlib's
        # lock held by this thread (its callback was stopped between acquire and try), and a
        # thread that imports would wait on it forever.
        import signal
        import threading  # loaded by now (the early connect, asyncio); only on this rare path

        timer = threading.Timer(self.DELAY, self._fire, (signal.pthread_kill, threading.get_ident(), signal.SIGINT))
        timer.daemon = True
        timer.start()

    def _fire(self, kill: Callable[[int, int], None], main: int, signum: int) -> None:
        if sys.unraisablehook is self:  # main has not returned: nobody is left to catch it after
            kill(main, signum)  # a real SIGINT to the main thread: it also ends a blocking call there (EINTR)


def _run(raw: list[str]) -> int:
    import gc  # built in: no import cost

    from .cli import quick

    # Start-up (asyncio, uvloop, anyurl) makes ~25,000 objects that live to the end; the
    # collections they trigger walk them all for nothing (~4 ms). The commands resume the
    # collector, with those objects frozen, once the event loop runs.
    if gc.isenabled():
        gc.disable()
        quick.gc_paused = True
    try:
        code = quick.answer(raw)
        if code is None:
            from .cli.commands import run  # main, then exit without the last collections

            code = run(raw)
        return code
    finally:
        if quick.gc_paused:
            quick.gc_paused = False
            gc.enable()


if __name__ == "__main__":
    sys.exit(main())

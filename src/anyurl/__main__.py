"""``python -m anyurl``: the same as the ``anyurl`` command."""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not typing's: importing typing costs start-up time
if TYPE_CHECKING:
    from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """The ``anyurl`` command (its console script). :mod:`anyurl.cli.quick` answers what it can
    without loading :mod:`anyurl.cli.commands`; both are imported and called inside this handler
    so that Ctrl-C at any moment of start-up (or clean-up) also ends with one line and exit code
    130, not a traceback and death by the signal."""
    try:
        return _run(list(sys.argv[1:] if argv is None else argv))
    except KeyboardInterrupt:
        print("anyurl: interrupted", file=sys.stderr)
        return 130  # cli.exits.EXIT_INTERRUPTED, as a shell reports SIGINT


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

"""``python -m anyurl``: the same as the ``anyurl`` command."""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not typing's: importing typing costs start-up time
if TYPE_CHECKING:
    from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """The ``anyurl`` command (its console script): :func:`anyurl.cli.quick.main`, imported and
    called inside this handler so that Ctrl-C at any moment of start-up (or clean-up) also ends
    with one line and exit code 130, not a traceback and death by the signal."""
    try:
        from .cli.quick import main as run

        return run(argv)
    except KeyboardInterrupt:
        print("anyurl: interrupted", file=sys.stderr)
        return 130  # _quick.EXIT_INTERRUPTED, as a shell reports SIGINT


if __name__ == "__main__":
    sys.exit(main())

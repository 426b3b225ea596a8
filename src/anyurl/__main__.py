"""``python -m anyurl``: the same as the ``anyurl`` command."""

from __future__ import annotations

import sys

from .cli import run

if __name__ == "__main__":
    sys.exit(run())

"""``python -m anyurl``: the same as the ``anyurl`` command."""

from __future__ import annotations

import sys

from ._quick import main

if __name__ == "__main__":
    sys.exit(main())

"""Standard modules imported when first used, so that importing the CLI's modules costs no start-up.

``anyurl --version`` and ``anyurl parse`` import :mod:`anyurl.cli.commands`' neighbours but need
neither asyncio nor argparse (docs/internals.md, start-up idioms).
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: importing typing costs start-up time (mypy knows this idiom)
if TYPE_CHECKING:
    from typing import Any


class OnFirstUse:
    """A top-level module imported when one of its attributes is first read."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(__import__(self._name), attr)  # top-level modules only

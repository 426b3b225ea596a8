"""anyurl.cli.output: each ``anyurl: ...`` line reaches stderr in one write (print() makes
two, text then newline, and another thread's output could land between them)."""

from __future__ import annotations

import io

import pytest

from anyurl.cli.output import Reporter
from anyurl.cli.progress import DelayedProgress


class Recording(io.StringIO):
    """A stream that keeps each write call."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[str] = []

    def write(self, s: str) -> int:
        self.writes.append(s)
        return super().write(s)


def recording(monkeypatch: pytest.MonkeyPatch) -> Recording:
    """sys.stderr recorded; set in the test itself (pytest's capture resets sys.stderr after fixtures)."""
    stream = Recording()
    monkeypatch.setattr("sys.stderr", stream)
    return stream


def test_an_error_line_is_one_write(monkeypatch: pytest.MonkeyPatch) -> None:
    stderr = recording(monkeypatch)
    Reporter(quiet=False).error("no such file\x1b[2J")
    assert stderr.writes == ["anyurl: no such file\\x1b[2J\n"]


def test_an_info_line_is_one_write(monkeypatch: pytest.MonkeyPatch) -> None:
    stderr = recording(monkeypatch)
    r = Reporter(quiet=False)
    r.info("first")
    r.info("second")
    assert stderr.writes == ["anyurl: first\n", "anyurl: second\n"]


def test_a_line_before_the_bars_are_drawn_is_one_write(monkeypatch: pytest.MonkeyPatch) -> None:
    stderr = recording(monkeypatch)
    r = Reporter(quiet=False)
    r.progress = DelayedProgress(3)  # not drawn yet: its lines go straight to stderr
    r.error("refused")
    assert stderr.writes == ["anyurl: refused\n"]

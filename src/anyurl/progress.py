"""Progress bars for the CLI (rich), drawn on stderr only.

:class:`TransferProgress` shows one bar per download (bytes, rate, and an
ETA when the size is known) and, for several downloads, an overall bar.
Each bar is driven by the ``progress(done, total)`` callback that
:func:`anyurl.download.download` accepts.
"""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)

__all__ = ["TransferProgress"]


def _label(text: str, width: int = 32) -> str:
    # names come from URLs and servers: no control characters on the terminal, no rich markup
    text = "".join(c if c.isprintable() else "?" for c in text)
    if len(text) > width:
        text = "…" + text[-(width - 1):]
    return text


class _Bar:
    """The callback for one transfer."""

    def __init__(self, owner: TransferProgress, task: TaskID, label: str) -> None:
        self.owner = owner
        self.label = label
        self.task = task
        self.last = 0
        self.total: int | None = None

    def __call__(self, done: int, total: int | None) -> None:
        p = self.owner.progress
        if total != self.total:
            self.owner._retotal(self, total)
            p.update(self.task, total=total)
        p.update(self.task, completed=done)
        self.owner._advance(done - self.last)
        self.last = done


class TransferProgress:
    """``with TransferProgress(n) as tp: cb = tp.bar("name")``; one bar per transfer,
    plus an overall bar when *count* > 1 (or None: not known yet, see :meth:`set_count`)."""

    MAX_VISIBLE = 10  # above this many downloads, only running (and failed) bars stay on screen

    def __init__(self, count: int | None = 1, *, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.progress = Progress(
            TextColumn("{task.description}", markup=False),
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
            console=self.console,
            transient=False,
        )
        self.count = count
        self.finished = 0
        # running sums instead of a list of every bar: a long URL list keeps no state per finished file
        self._bars = 0
        self._sized = 0  # bars whose total is known
        self._total = 0  # the sum of those totals
        self.overall: TaskID | None = None
        if count is None or count > 1:
            self.overall = self.progress.add_task(self._overall_label(), total=None)

    def _overall_label(self) -> str:
        if self.count is None:
            return f"all ({self.finished} files)"
        return f"all ({self.finished}/{self.count} files)"

    def _many(self) -> bool:
        return self.count is None or self.count > self.MAX_VISIBLE

    def set_count(self, count: int) -> None:
        """The number of transfers, once known (a URL list read to its end)."""
        if self.count == count:
            return
        self.count = count
        if self.overall is not None:
            self.progress.update(self.overall, description=self._overall_label())
            self._update_overall_total()

    def bar(self, label: str) -> _Bar:
        """A new bar; call it as ``bar(done, total)``."""
        task = self.progress.add_task(_label(label), total=None)
        self._bars += 1
        return _Bar(self, task, label)

    def finish(self, bar: _Bar, ok: bool) -> None:
        """Mark *bar*'s transfer as done (successfully or not)."""
        self.finished += 1
        if ok and bar.total is None:
            self.progress.update(bar.task, total=bar.last, completed=bar.last)
        if ok and self._many():
            # many downloads: finished bars go away (and are forgotten), the overall bar tells the story
            self.progress.remove_task(bar.task)
        if not ok:
            self.progress.update(bar.task, description=_label("failed: " + bar.label))
        if self.overall is not None:
            self.progress.update(self.overall, description=self._overall_label())

    def _retotal(self, bar: _Bar, total: int | None) -> None:
        if bar.total is not None:
            self._sized -= 1
            self._total -= bar.total
        if total is not None:
            self._sized += 1
            self._total += total
        bar.total = total
        self._update_overall_total()

    def _update_overall_total(self) -> None:
        # an overall total only when every size is known (else rich shows a pulsing bar)
        if self.overall is not None and self.count is not None and self._sized == self.count:
            self.progress.update(self.overall, total=self._total)

    def _advance(self, n: int) -> None:
        if self.overall is not None and n:
            self.progress.advance(self.overall, n)

    def __enter__(self) -> TransferProgress:
        self.progress.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.progress.stop()

    def pause(self) -> None:
        """Stop redrawing (while the user answers a prompt)."""
        self.progress.stop()

    def resume(self) -> None:
        """Redraw again after :meth:`pause`."""
        self.progress.start()

"""Progress bars for the CLI (rich), drawn on stderr only.

:class:`TransferProgress` shows one bar per download (bytes, rate, and an
ETA when the size is known) and, for several downloads, an overall bar.
Each bar is driven by the ``progress(done, total)`` callback that
:func:`anyurl.transfer.download.download` accepts.

:class:`DelayedProgress` has the same interface and draws nothing until the
transfers have run for :data:`SHOW_AFTER` seconds: a quick download never
imports rich (35-55 ms of start-up) and leaves no bar behind. Once due, it
builds the real :class:`TransferProgress` from the state it kept and
forwards to it.
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # rich loads only when bars are drawn
    import asyncio

    from rich.console import Console
    from rich.progress import Progress, TaskID

__all__ = ["SHOW_AFTER", "DelayedProgress", "TransferProgress", "show_after"]

SHOW_AFTER = 0.4  # seconds of transfer before bars appear (as pip and cargo do)


def show_after() -> float:
    """The delay before bars appear: ``$ANYURL_PROGRESS_AFTER`` seconds when it is a number >= 0
    (0: at once; a large one: only for long transfers), else :data:`SHOW_AFTER`."""
    import os

    text = os.environ.get("ANYURL_PROGRESS_AFTER", "")
    try:
        value = float(text)
    except ValueError:
        return SHOW_AFTER
    return value if value >= 0 else SHOW_AFTER


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
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )

        self.console = console or Console(stderr=True)
        self.progress: Progress = Progress(
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

    def carry(self, files: int, done: int, sized: int, total: int) -> None:
        """Count *files* transfers that finished (and were forgotten) before these bars were drawn:
        *done* bytes in all, *sized* of them with a known size, *total* the sum of those sizes."""
        self._bars += files
        self.finished += files
        self._sized += sized
        self._total += total
        self._advance(done)
        if self.overall is not None:
            self.progress.update(self.overall, description=self._overall_label())
            self._update_overall_total()

    def print(self, text: str) -> None:
        """A message above the bars (plain text, no markup)."""
        from rich.text import Text

        self.console.print(Text(text), highlight=False, soft_wrap=True)

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


class _LazyBar:
    """A transfer's state before the bars are drawn; forwards to the real bar once they are."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.done = 0
        self.total: int | None = None
        self.ok: bool | None = None  # None while running
        self.real: _Bar | None = None

    def __call__(self, done: int, total: int | None) -> None:
        self.done = done
        self.total = total
        if self.real is not None:
            self.real(done, total)


class DelayedProgress:
    """:class:`TransferProgress`'s interface; the bars appear only after *delay* seconds.

    Until then it keeps what the bars would show: the running (and still visible
    finished) transfers, and sums for those a :class:`TransferProgress` would have
    forgotten already (finished ones, with more than ``MAX_VISIBLE`` downloads).
    The timer runs on the event loop entered with ``with``; without one the bars
    appear at once.
    """

    MAX_VISIBLE = TransferProgress.MAX_VISIBLE

    def __init__(self, count: int | None = 1, *, delay: float = SHOW_AFTER,
                 console: Console | None = None) -> None:
        self.count = count
        self.delay = delay
        self.console = console  # for tests; the real bars default to stderr
        self.real: TransferProgress | None = None
        self._bars: dict[_LazyBar, None] = {}  # shown once drawn, in order (a dict: O(1) removal)
        # finished transfers already forgotten: how many, their bytes, how many had a size, those sizes
        self._gone_files = self._gone_bytes = self._gone_sized = self._gone_total = 0
        self._due = False  # the delay is over (drawing waits while a prompt is paused)
        self._paused = False
        self._timer: asyncio.TimerHandle | None = None

    @property
    def live(self) -> bool:
        """True once the bars are drawn."""
        return self.real is not None

    def _many(self) -> bool:
        return self.count is None or self.count > self.MAX_VISIBLE

    def set_count(self, count: int) -> None:
        """The number of transfers, once known (a URL list read to its end)."""
        self.count = count
        if self.real is not None:
            self.real.set_count(count)

    def bar(self, label: str) -> _LazyBar:
        """A new bar; call it as ``bar(done, total)``."""
        b = _LazyBar(label)
        if self.real is not None:
            b.real = self.real.bar(label)
        else:
            self._bars[b] = None
        return b

    def finish(self, bar: _LazyBar, ok: bool) -> None:
        """Mark *bar*'s transfer as done (successfully or not)."""
        bar.ok = ok
        if self.real is not None and bar.real is not None:
            self.real.finish(bar.real, ok)
        elif ok and self._many():  # TransferProgress would drop this bar: keep only sums
            del self._bars[bar]
            self._gone_files += 1
            self._gone_bytes += bar.done
            if bar.total is not None:
                self._gone_sized += 1
                self._gone_total += bar.total

    def print(self, text: str) -> None:
        """A message: above the bars once drawn, else a plain line on stderr."""
        if self.real is not None:
            self.real.print(text)
        else:
            sys.stderr.write(text + "\n")  # one write, as output.stderr_line (print() makes two)
            sys.stderr.flush()

    def _show(self) -> None:
        """The delay is over: draw the bars, unless a prompt is on the terminal."""
        self._timer = None
        self._due = True
        if not self._paused:
            self._start()

    def _start(self) -> None:
        real = self.real = TransferProgress(self.count, console=self.console)
        real.carry(self._gone_files, self._gone_bytes, self._gone_sized, self._gone_total)
        for b in self._bars:  # the same calls the transfers made, replayed in order
            b.real = real.bar(b.label)
            b.real(b.done, b.total)
            if b.ok is not None:
                real.finish(b.real, b.ok)
        self._bars.clear()
        real.__enter__()

    def __enter__(self) -> DelayedProgress:
        import asyncio

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._show()
        else:
            self._timer = loop.call_later(self.delay, self._show)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._timer is not None:  # done before the delay: nothing was drawn
            self._timer.cancel()
            self._timer = None
        if self.real is not None:
            self.real.__exit__(exc_type, exc, tb)

    def pause(self) -> None:
        """Stop redrawing (while the user answers a prompt); the bars do not appear meanwhile."""
        self._paused = True
        if self.real is not None:
            self.real.pause()

    def resume(self) -> None:
        """Redraw again after :meth:`pause` (or draw now, if the delay ended meanwhile)."""
        self._paused = False
        if self.real is not None:
            self.real.resume()
        elif self._due:
            self._start()

"""DelayedProgress: nothing drawn for quick transfers; once due, bars with the transfers' current state."""

from __future__ import annotations

import asyncio
import io

import pytest
from rich.console import Console

from anyurl.cli.progress import SHOW_AFTER, DelayedProgress, TransferProgress


def _console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=True, width=120, color_system=None), out


async def _past_delay(dp: DelayedProgress) -> None:
    """Let the event loop run until the delay is over (bounded)."""
    for _ in range(100):
        await asyncio.sleep(dp.delay)
        if dp.live or dp._due:
            return
    raise AssertionError("the delay never ended")


def test_the_delay_is_short() -> None:
    assert 0.2 <= SHOW_AFTER <= 0.5


def test_quick_transfers_draw_nothing() -> None:
    console, out = _console()

    async def quick() -> None:
        with DelayedProgress(2, delay=60, console=console) as dp:
            for name in ("a", "b"):
                bar = dp.bar(name)
                bar(0, 10)
                bar(10, 10)
                dp.finish(bar, True)
        assert not dp.live

    asyncio.run(quick())
    assert out.getvalue() == ""


def test_bars_after_the_delay_show_the_current_state() -> None:
    console, out = _console()

    async def slow() -> DelayedProgress:
        with DelayedProgress(3, delay=0.01, console=console) as dp:
            done = dp.bar("done.bin")
            done(1000, 1000)
            dp.finish(done, True)
            bad = dp.bar("bad.bin")
            bad(7, None)
            dp.finish(bad, False)
            running = dp.bar("running.bin")
            running(500, 2000)
            await _past_delay(dp)
            assert dp.real is not None
            tasks = {t.description: t for t in dp.real.progress.tasks}
            assert tasks["done.bin"].completed == tasks["done.bin"].total == 1000
            assert tasks["running.bin"].completed == 500 and tasks["running.bin"].total == 2000
            assert "failed: bad.bin" in tasks
            assert tasks["all (2/3 files)"].completed == 1507
            running(2000, 2000)  # later calls go to the real bar
            assert tasks["running.bin"].completed == 2000
            assert tasks["all (2/3 files)"].completed == 3007
            dp.finish(running, True)
            assert dp.real.finished == 3
        return dp

    asyncio.run(slow())
    screen = out.getvalue()
    assert "running.bin" in screen and "2.0/2.0 kB" in screen and "all (3/3 files)" in screen


def test_many_transfers_finished_before_the_delay_are_counted_not_kept() -> None:
    console, _ = _console()

    async def many() -> None:
        with DelayedProgress(None, delay=0.01, console=console) as dp:  # a piped list: count unknown
            for i in range(25):
                bar = dp.bar(f"f{i}")
                bar(100, 100)
                dp.finish(bar, True)
            assert len(dp._bars) == 0  # no state per finished file
            running = dp.bar("last")
            running(50, None)
            dp.set_count(26)
            await _past_delay(dp)
            assert dp.real is not None
            tasks = {t.description: t for t in dp.real.progress.tasks}
            assert set(tasks) == {"all (25/26 files)", "last"}  # above MAX_VISIBLE only running bars
            assert tasks["all (25/26 files)"].completed == 2550
            assert tasks["all (25/26 files)"].total is None  # one size is still unknown
            running(100, 100)
            assert tasks["all (25/26 files)"].total == 2600

    asyncio.run(many())


def test_a_stalled_transfer_shows_its_bar_after_the_delay() -> None:
    console, out = _console()

    async def stalled() -> None:
        with DelayedProgress(1, delay=0.01, console=console) as dp:
            dp.bar("stuck.bin")
            await _past_delay(dp)
            assert dp.live

    asyncio.run(stalled())
    assert "stuck.bin" in out.getvalue()


def test_messages_before_and_after_the_bars_appear(capsys: pytest.CaptureFixture[str]) -> None:
    console, out = _console()

    async def talk() -> None:
        with DelayedProgress(1, delay=0.01, console=console) as dp:
            dp.print("anyurl: early [b]not markup[/b]")
            bar = dp.bar("x.bin")
            await _past_delay(dp)
            dp.print("anyurl: late [b]not markup[/b]")
            bar(5, 5)
            dp.finish(bar, True)

    asyncio.run(talk())
    assert capsys.readouterr().err == "anyurl: early [b]not markup[/b]\n"
    assert "anyurl: late [b]not markup[/b]" in out.getvalue()
    assert "early" not in out.getvalue()


def test_a_prompt_holds_the_bars_back_and_pauses_them() -> None:
    console, out = _console()

    async def prompt() -> None:
        with DelayedProgress(1, delay=0.01, console=console) as dp:
            bar = dp.bar("x.bin")
            bar(3, 10)
            dp.pause()  # a password prompt before the bars appeared
            await _past_delay(dp)
            assert not dp.live and out.getvalue() == ""  # nothing drawn over the prompt
            dp.resume()
            assert dp.live and dp.real is not None and dp.real.progress.live.is_started
            dp.pause()  # a second prompt, while drawn
            assert not dp.real.progress.live.is_started
            dp.resume()
            assert dp.real.progress.live.is_started
            bar(10, 10)
            dp.finish(bar, True)

    asyncio.run(prompt())
    assert "x.bin" in out.getvalue()


def test_without_an_event_loop_the_bars_appear_at_once() -> None:
    console, out = _console()
    with DelayedProgress(1, console=console) as dp:
        assert isinstance(dp.real, TransferProgress)
        bar = dp.bar("sync.bin")
        bar(4, 4)
        dp.finish(bar, True)
    assert "sync.bin" in out.getvalue()

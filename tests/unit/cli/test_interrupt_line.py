"""The CLI's last line on Ctrl-C and SIGTERM (anyurl.cli and anyurl.__main__) is written in one piece.

``print(text, file=sys.stderr)`` makes two writes (the text, then the newline), and another
thread (the early connect's resolver), or another process on the same terminal or log, can
write between them: ``anyurl: interruptedanyurl: interrupted`` and an empty line, the flake
that tests/integration/test_cli_interrupt.py showed under load. One write cannot be split.
"""

from __future__ import annotations

import sys

import pytest

import anyurl.__main__ as entry
from anyurl.cli import commands, early, quick


class _Writes:
    """A stderr that records each write call."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def write(self, text: str) -> int:
        self.calls.append(text)
        return len(text)

    def flush(self) -> None:
        pass


def _raise(exc: BaseException) -> object:
    def raiser(*args: object, **kwargs: object) -> None:
        raise exc
    return raiser


def _record(monkeypatch: pytest.MonkeyPatch) -> _Writes:
    writes = _Writes()
    monkeypatch.setattr(sys, "stderr", writes)  # in the test: pytest sets its own at each phase
    return writes


def test_ctrl_c_at_the_entry_point_is_one_write(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(quick, "answer", _raise(KeyboardInterrupt()))
    stderr = _record(monkeypatch)
    assert entry.main(["get", "http://h/"]) == 130
    assert stderr.calls == ["anyurl: interrupted\n"]


def test_ctrl_c_in_a_quick_parse_is_one_write(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(quick, "url_components", _raise(KeyboardInterrupt()))
    stderr = _record(monkeypatch)
    assert quick.answer(["parse", "http://h/"]) == quick.EXIT_INTERRUPTED
    assert stderr.calls == ["anyurl: interrupted\n"]


@pytest.mark.parametrize(("exc", "code", "line"), [
    (KeyboardInterrupt(), commands.EXIT_INTERRUPTED, "anyurl: interrupted\n"),
    (commands._Terminated(), commands.EXIT_TERMINATED, "anyurl: terminated\n"),
])
def test_ctrl_c_and_sigterm_in_a_command_are_one_write(monkeypatch: pytest.MonkeyPatch, exc: BaseException,
                                                       code: int, line: str) -> None:
    monkeypatch.setattr(early, "start", _raise(exc))
    stderr = _record(monkeypatch)
    assert commands.main(["get", "-q", "http://127.0.0.1:9/"]) == code
    assert stderr.calls == [line]


# A child: Ctrl-C arrives while a weakref callback runs (importlib runs one at each import,
# in _get_module_lock); Python prints "Exception ignored in" and drops that KeyboardInterrupt.
# The command went on waiting for its server (the 20 s timeout of test_cli_interrupt.py).
# With LEAK, the callback is stopped as importlib's can be, between taking the import lock and
# the try that gives it back: a thread that imports then waits forever (the re-signal did).
_LOST_IN_CALLBACK = """
import _imp, _signal, _thread, sys, time, weakref
_signal.signal(_signal.SIGINT, _signal.default_int_handler)  # the test may run with SIGINT ignored
import anyurl.__main__ as entry
from anyurl.cli import quick
assert "signal" not in sys.modules  # as at the CLI's start-up

class Thing:
    pass

def callback(ref):
    if LEAK:
        _imp.acquire_lock()  # never released: as importlib's callback interrupted at this line
    _thread.interrupt_main()  # SIGINT, handled at the next check: inside this callback
    for _ in range(1000):
        pass

def answer(raw):
    thing = Thing()
    ref = weakref.ref(thing, callback)
    del thing
    time.sleep(60)  # the command's wait for a server that never answers
    return 0

quick.answer = answer
sys.exit(entry.main(["get", "http://127.0.0.1:9/"]))
"""


@pytest.mark.parametrize("leak", [False, True])
def test_ctrl_c_dropped_inside_a_callback_still_interrupts_the_command(leak: bool) -> None:
    import subprocess
    from pathlib import Path

    src = str(Path(entry.__file__).parent.parent)
    code = f"LEAK = {leak}\n{_LOST_IN_CALLBACK}"
    # it ends at the Ctrl-C, not after its minute of waiting (a generous bound for a busy machine)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": src})
    assert (proc.returncode, proc.stderr) == (130, "anyurl: interrupted\n")

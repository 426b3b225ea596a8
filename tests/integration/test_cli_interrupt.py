"""Ctrl-C in the first milliseconds of a CLI run: exit code 130 and one line, never a traceback.

SIGINT is sent at many early moments of ``anyurl get``: while ``anyurl.cli.quick`` imports
``anyurl.cli``, while the command line is read, while the early connect starts
(``anyurl.cli.early``, to a literal address and to a name resolved in a thread) and while
asyncio and the handlers are imported. The moments come from the interpreter itself:
``PYTHONPROFILEIMPORTTIME=1`` writes a line to stderr as each module finishes importing,
and the signal goes out as the N-th line after ``anyurl.__main__`` arrives. (Earlier, the
interpreter is still starting or importing the ``anyurl`` package: no anyurl code runs yet.)
The server accepts connections and never answers, so the command is still running.
"""

from __future__ import annotations

import os
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.procs import spawn

ANYURL = str(Path(sys.executable).parent / "anyurl")
STEPS = [1, 2, 3, 4, 5, 6, 8, 10, 13, 16, 20, 25, 30, 40, 55, 70, 90, 120, 160, 10_000]


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port whose listener completes handshakes (the backlog) and never reads or answers."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(64)
    try:
        yield srv.getsockname()[1]
    finally:
        srv.close()


def interrupted_at(url: str, lines_after_main: int) -> tuple[int | None, list[str]]:
    """Run ``anyurl get URL``, send SIGINT when the given import line has come (or output
    stopped for a second: it waits on the server); its exit code and non-import stderr lines."""
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1", "ANYURL_EARLY_CONNECT": "1"}
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        env.pop(name, None)
    with spawn([ANYURL, "get", "--max-time", "30", "-o", os.devnull, url], default_signals=True,
               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env) as proc:
        assert proc.stderr is not None
        fd = proc.stderr.fileno()
        got = b""
        seen = -1  # import lines since anyurl.__main__'s; -1 before it
        deadline = time.monotonic() + 20
        while seen < lines_after_main:
            left = deadline - time.monotonic()
            assert left > 0, got[-2000:]
            ready, _, _ = select.select([fd], [], [], min(left, 1.0))
            if not ready:
                break  # a second without output: it waits on the server
            chunk = os.read(fd, 65536)
            if not chunk:
                break  # it ended (the checks below say how)
            got += chunk
            *done, _ = got.split(b"\n")
            seen = -1
            for line in done:
                if seen >= 0:
                    seen += 1
                elif line.rstrip().endswith(b"| anyurl.__main__"):
                    seen = 0
        proc.send_signal(signal.SIGINT)
        try:
            rest = proc.communicate(timeout=20)[1]
            code = proc.returncode
        except subprocess.TimeoutExpired as exc:  # still running: the Ctrl-C was lost (spawn reaps it)
            rest, code = exc.stderr or b"", None
    text = (got + rest).decode("utf-8", "replace")
    return code, [ln for ln in text.splitlines() if not ln.startswith("import time:")]


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])  # connected at once / resolved in a thread
def test_ctrl_c_at_start_up_exits_130_with_one_line(silent_port: int, host: str) -> None:
    url = f"http://{host}:{silent_port}/never"
    for step in STEPS:
        code, err = interrupted_at(url, step)
        assert (code, err) == (130, ["anyurl: interrupted"]), (step, code, "\n".join(err)[-3000:])
        assert "Traceback" not in "\n".join(err)

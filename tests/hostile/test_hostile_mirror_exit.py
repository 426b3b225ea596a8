"""`anyurl mirror` over a tree with two failing items: the exit code is the first failing
entry's in tree order, whichever failed first in time (it was the first error in time, so
two runs over one tree could exit differently)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tests.hostile.fakes.gopher_hostile import Reply, hostile_gopher

from anyurl.errors import ConnectError, FetchTimeout

MENU = (b"0first\t/a\t127.0.0.1\t{port}\r\n"
        b"0second\t/b\t127.0.0.1\t{port}\r\n"
        b"0fine\t/ok\t127.0.0.1\t{port}\r\n.\r\n")
SILENT = Reply(silent=True)  # fails late: the client's 1 s idle timeout (exit 14)
RESET = Reply(reset=True)    # fails at once: connection reset (exit 13)


@pytest.mark.parametrize(("a", "b", "code"), [
    (SILENT, RESET, FetchTimeout.exit_code),  # /b fails first in time; /a comes first in the tree
    (RESET, SILENT, ConnectError.exit_code),
])
def test_mirror_exit_code_is_the_first_failure_in_tree_order(a: Reply, b: Reply, code: int,
                                                             tmp_path: Path) -> None:
    replies = {"": Reply(MENU), "/a": a, "/b": b, "/ok": Reply(b"fine\r\n")}
    with hostile_gopher(replies) as g:
        proc = subprocess.run([sys.executable, "-m", "anyurl", "mirror", "--timeout", "1",
                               f"gopher://127.0.0.1:{g.port}/1", str(tmp_path / "out")],
                              capture_output=True, text=True, timeout=60)
    assert proc.returncode == code, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if "2 errors" not in line]
    # both reported, in tree order (/a before /b)
    assert len(errors) == 2 and f"{g.port}/0/a:" in errors[0] and f"{g.port}/0/b:" in errors[1], proc.stderr
    assert (tmp_path / "out" / "ok").read_bytes() == b"fine\r\n"
    assert not (tmp_path / "out" / "a").exists() and not (tmp_path / "out" / "b").exists()

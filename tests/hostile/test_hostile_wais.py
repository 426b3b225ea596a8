"""wais: a Z39.50 target that hangs up (yaz-ztest never does; a dying or overloaded one does).

Was: on uvloop "unexpected error: RuntimeError: unable to perform operation on
<TCPTransport closed=True ...>" (exit 15, the Init written to a closed transport); on
asyncio's loop "connection lost: wais://...: the target closed the connection" (the URL
twice: the ConnectError raised inside the read loop was wrapped again as an OSError).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from tests.hostile.fakes.base import ThreadServer

import anyurl
from anyurl.errors import ConnectError

SRC = str(Path(anyurl.__file__).parent.parent)


class HangUp(ThreadServer):
    """Accepts, optionally reads the Init request, and closes."""

    def __init__(self, read_first: bool) -> None:
        super().__init__(max_seconds=30)
        self.read_first = read_first
        self.connections = 0
        self._tcp_listener()

    def answer(self, conn: socket.socket) -> None:
        self.connections += 1
        with conn:
            if self.read_first:
                conn.settimeout(5)
                conn.recv(4096)


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
@pytest.mark.parametrize("read_first", [False, True], ids=["at-once", "after-init"])
@pytest.mark.parametrize("command", ["get", "ls"])
def test_a_target_that_hangs_up_is_a_lost_connection_naming_the_url_once(
        loop: str, read_first: bool, command: str, tmp_path: Path) -> None:
    pytest.importorskip(loop)
    with HangUp(read_first) as server:
        url = f"wais://127.0.0.1:{server.port}/Default" + ("?computer" if command == "get" else "")
        argv = [sys.executable, "-m", "anyurl", command, url] + (["-o", str(tmp_path / "x")] if command == "get" else [])
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=60,
                              env={**os.environ, "PYTHONPATH": SRC, "ANYURL_LOOP": loop})
    assert proc.returncode == ConnectError.exit_code, proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.count(url) == 1, proc.stderr
    assert proc.stderr.startswith(f"anyurl: {url}: "), proc.stderr
    assert "the target closed the connection" in proc.stderr or "connection lost" in proc.stderr, proc.stderr
    assert "RuntimeError" not in proc.stderr
    assert not (tmp_path / "x").exists()

"""A gopher server that puts terminal escape sequences in everything it sends: menu titles,
selectors (hence names), error text and a text body. What the CLI prints to a terminal shows
them escaped (no ESC, C1 CSI, DEL, backspace or lone CR reaches the terminal); JSON keeps the
values but escapes them; ``-o -`` and a pipe still get the bytes exactly."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import socket
import struct
import subprocess
import sys
import termios
import time

from tests.hostile.fakes.base import ThreadServer
from tests.hostile.fakes.gopher_hostile import Reply, hostile_gopher
from tests.procs import spawn

# OSC retitles the window, CSI 2J clears the screen, a lone CR and backspaces hide what came
# before, U+009B is the one-character CSI, DEL, BEL
EVIL_TITLE = "ti\x1b]0;pwned\x07tle\rHIDDEN\x08\x08 \u009b2J\x7f"
BODY = "line one\r\n\x1b[2J\x1b]0;pwned\x07cleared\rover\x08\u009b31m\x7f\r\nend\r\n".encode() + b"\xff\r\n"
MENU = ("0" + EVIL_TITLE + "\t/t\x1b[31m.txt\t127.0.0.1\t{port}\r\n"
        "1dir \x1b[5mblink\t/d\t127.0.0.1\t{port}\r\n"
        "iinfo \x1b[8mconcealed\t\terror.host\t1\r\n.\r\n").encode()
ERROR = b"3no such \x1b[2Jthing\t\terror.host\t1\r\n.\r\n"
# what a terminal must never receive from the peer
RAW = (b"\x1b", "\u009b".encode(), b"\x9b", b"\x7f", b"\x08", b"\x07", b"\xff")
ENV = {**os.environ, "COLUMNS": "400", "TERM": "xterm", "NO_COLOR": "1"}


def on_terminal(*args: str) -> tuple[int, bytes]:
    """Run the CLI with stdout and stderr on a pseudo-terminal: (exit code, what it showed)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 400, 0, 0))  # one table row a line
    attrs = termios.tcgetattr(slave)
    attrs[1] &= ~termios.OPOST  # the terminal gets the bytes as written (no LF -> CRLF)
    termios.tcsetattr(slave, termios.TCSANOW, attrs)
    with spawn([sys.executable, "-m", "anyurl", *args], stdin=slave, stdout=slave, stderr=slave, env=ENV) as proc:
        os.close(slave)
        shown = b""
        end = time.monotonic() + 60
        while time.monotonic() < end:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # EIO: every writer closed
                    break
                if not data:
                    break
                shown += data
            elif proc.poll() is not None:
                break
        os.close(master)
        return proc.wait(10), shown


def assert_safe(shown: bytes) -> None:
    for raw in RAW:
        assert raw not in shown, (raw, shown)
    assert b"\r" not in shown.replace(b"\r\n", b""), shown  # CR only in a CRLF line end


def test_what_reaches_a_terminal_is_escaped_and_data_stays_exact() -> None:
    replies = {"": Reply(MENU), "/t\x1b[31m.txt": Reply(BODY), "/d": Reply(ERROR)}
    with hostile_gopher(replies) as g:
        base = f"gopher://127.0.0.1:{g.port}"
        text_url = f"{base}/0/t%1B%5B31m.txt"

        code, shown = on_terminal("ls", f"{base}/1")
        assert code == 0
        assert_safe(shown.replace(b"\x1b[1m", b"").replace(b"\x1b[0m", b""))  # but the header's own bold
        assert b"\\x1b]0;pwned\\x07tle\\rHIDDEN\\x08\\x08 \\x9b2J\\x7f" in shown  # visible, not acted on

        code, shown = on_terminal("ls", "--json", f"{base}/1")
        assert code == 0
        assert_safe(shown)
        listed = json.loads(shown)
        assert listed[0]["title"] == EVIL_TITLE  # the value is kept, only its spelling escaped

        code, shown = on_terminal("get", text_url)
        assert code == 0
        assert_safe(shown)
        assert shown.startswith(b"line one\r\n\\x1b[2J\\x1b]0;pwned\\x07cleared\\rover\\x08\\x9b31m\\x7f")
        assert shown.endswith(b"end\r\n\\xff\r\n")

        # -o - on the terminal: the bytes as sent
        code, shown = on_terminal("get", "-o", "-", text_url)
        assert code == 0 and shown == BODY

        # a pipe: byte-exact as before
        piped = subprocess.run([sys.executable, "-m", "anyurl", "get", text_url], capture_output=True,
                               timeout=60, env=ENV)
        assert piped.returncode == 0 and piped.stdout == BODY

        code, shown = on_terminal("ls", f"{base}/1/d")  # a type-3 error with a screen clear in it
        assert code == 11
        assert_safe(shown)
        assert b"no such \\x1b[2Jthing" in shown


class _EvilFTP(ThreadServer):
    """Greets and refuses the login with escape sequences in its replies."""

    def __init__(self) -> None:
        super().__init__()
        self._tcp_listener()

    def answer(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.sendall(b"220 hello \x1b]0;pwned\x07\x1b[2J\r\n")
                self.read_until(conn, b"\n", 4096)
                conn.sendall(b"530 go away \x1b[8mhidden\x9b\r\n")
            except OSError:
                pass


def test_verbose_log_of_server_replies_is_escaped() -> None:
    with _EvilFTP() as ftp:
        code, shown = on_terminal("get", "-v", f"ftp://127.0.0.1:{ftp.port}/x")
    assert code == 12  # the login was refused
    assert_safe(shown)
    assert b"< 220 hello \\x1b]0;pwned\\x07\\x1b[2J" in shown
    assert b"530 go away \\x1b[8mhidden" in shown

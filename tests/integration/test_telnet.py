"""telnet: against a real inetutils-telnetd (under socat, /bin/login, user urltest).

The scripted session is driven from Python; the interactive terminal is the
real CLI (``python -m anyurl telnet://...``) inside tmux, driven with
send-keys and read back with capture-pane.
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixtures.launcher import Endpoint, Launcher, free_ports

import anyurl
from anyurl.errors import AccessDenied, ConnectError, NotRetrievable, ProtocolError, UnsafeURL
from anyurl.protocols.telnet import DO, NAWS, SB, SGA, TTYPE, WILL

# `make test` installs inetutils-telnetd, so a missing telnetd fails these tests rather than skipping them
pytestmark = pytest.mark.skipif(os.geteuid() != 0 and os.environ.get("ANYURL_TEST_SERVERS") != "compose",
                                reason="telnetd and its test user need root")

LOGIN = rb"login: $"
PROMPT = rb"\$ (?:\x1b\[[0-9;?]*[A-Za-z])*$"


@pytest.fixture(scope="module")
def telnetd(servers: Launcher) -> Endpoint:
    return servers.get("telnetd")


def url_of(ep: Endpoint, userinfo: str = "") -> str:
    return f"telnet://{userinfo}{ep.host}:{ep.port}/"


async def test_login_prompt_and_negotiation(telnetd: Endpoint) -> None:
    async with anyurl.connect(url_of(telnetd), terminal_type="vt100", window_size=(132, 43)) as s:
        _i, _m, data = await s.expect([LOGIN], timeout=15)
        assert data.rstrip().endswith(b"login:")
        received = s.protocol.received
        # what inetutils-telnetd asks for, and what we agreed to
        assert (DO, TTYPE) in received and (DO, NAWS) in received and (WILL, SGA) in received
        assert (WILL, TTYPE) in s.protocol.sent and (WILL, NAWS) in s.protocol.sent
        assert set(s.options["local"]) >= {"TTYPE", "NAWS"}
        assert "SGA" in s.options["remote"]
        # the server asked for our terminal type (SB TTYPE SEND) and we told it; NAWS was reported
        assert bytes((TTYPE, 1)) in s.protocol.subnegotiations
        assert (SB, TTYPE) in s.protocol.sent and (SB, NAWS) in s.protocol.sent


async def test_scripted_login_runs_a_command(telnetd: Endpoint) -> None:
    url = url_of(telnetd, f"{telnetd.info['user']}:{telnetd.info['password']}@")
    async with anyurl.connect(url, terminal_type="vt100", window_size=(132, 43)) as s:
        banner = await s.login(timeout=20)
        assert re.search(PROMPT, banner)
        assert "ECHO" in s.options["remote"]  # after login the server echoes for us
        await s.write("echo TELNET-$((6*7)) $(whoami) $TERM; stty size\n")
        await s.read_until(b"stty size", timeout=10)  # the echo of our own line
        out = await s.read_until(b"TELNET-42", timeout=10)
        assert out.endswith(b"TELNET-42")
        _i, _m, rest = await s.expect([PROMPT], timeout=10)
        assert b" urltest vt100\r\n43 132\r\n" in rest  # TTYPE became $TERM, NAWS the tty size
        await s.set_window_size(100, 30)
        await s.write("stty size\n")
        _i, m, _d = await s.expect([rb"[\r\n](\d+) (\d+)\r\n"], timeout=10)
        assert m.groups() == (b"30", b"100")
        await s.write("exit\n")
        with pytest.raises(ConnectError):  # the server hangs up: no match can come
            await s.read_until(b"never printed", timeout=10)
        while await s.receive():  # what came before the hang-up ("logout")
            pass
        assert s.at_eof


async def test_eight_bit_data_both_ways(telnetd: Endpoint) -> None:
    url = url_of(telnetd, f"{telnetd.info['user']}:{telnetd.info['password']}@")
    async with anyurl.connect(url, binary=True) as s:
        await s.login(timeout=20)
        assert "BINARY" in s.options["local"]
        # the server sends 0xFF as IAC IAC; we hand back the single byte
        await s.write(b"printf 'A\\377B\\n'\n")
        await s.read_until(b"printf", timeout=10)
        assert (await s.read_until(b"A\xffB", timeout=10)).endswith(b"A\xffB")
        # 0xFF and UTF-8 from us reach the program unchanged (od shows the bytes)
        await s.write(b"od -An -tx1 -N4\n")
        await s.read_until(b"-N4", timeout=10)
        await s.read_until(b"\r\n", timeout=10)
        await asyncio.sleep(0.3)  # let od start reading
        await s.write(b"\xff" + "\u00e9\n".encode())  # 0xFF, then é in UTF-8, then LF
        _i, m, _d = await s.expect([rb"([0-9a-f]{2}) ([0-9a-f]{2}) ([0-9a-f]{2}) ([0-9a-f]{2})"], timeout=10)
        assert m.group(0) == b"ff c3 a9 0a"


async def test_unmatched_output_is_bounded(telnetd: Endpoint) -> None:
    url = url_of(telnetd, f"{telnetd.info['user']}:{telnetd.info['password']}@")
    async with anyurl.connect(url) as s:
        await s.login(timeout=20)
        await s.write("head -c 1200000 /dev/zero | tr '\\0' x; echo\n")
        with pytest.raises(ProtocolError, match="without a match"):
            await s.read_until(b"never printed", timeout=30)


async def test_login_with_explicit_credentials_overrides_url(telnetd: Endpoint) -> None:
    async with anyurl.connect(url_of(telnetd, "nobody:wrong@")) as s:
        await s.login(telnetd.info["user"], telnetd.info["password"], timeout=20)
        await s.write("whoami\n")
        await s.read_until(b"whoami", timeout=10)
        _i, m, _d = await s.expect([rb"[\r\n](\w+)\r\n"], timeout=10)
        assert m.group(1) == b"urltest"


async def test_wrong_password_is_access_denied(telnetd: Endpoint) -> None:
    async with anyurl.connect(url_of(telnetd, "urltest:not-the-password@")) as s:
        with pytest.raises(AccessDenied, match="login as 'urltest' failed"):
            await s.login(timeout=30)


@pytest.mark.parametrize("userinfo", ["ur%0D%0Altest:pw@", "urltest:p%0Aw@", "urltest:p%00w@",
                                      "urltest:p%FFw@"])
async def test_unsafe_credentials_refused_before_connecting(userinfo: str) -> None:
    port = free_ports(1)[0]  # nothing listens: reaching connect() would be a ConnectError
    with pytest.raises(UnsafeURL):
        async with anyurl.connect(f"telnet://{userinfo}127.0.0.1:{port}/"):
            pass


async def test_fetch_names_connect(telnetd: Endpoint) -> None:
    with pytest.raises(NotRetrievable, match="anyurl.connect"):
        await anyurl.fetch(url_of(telnetd))


# -- the interactive CLI in tmux ---------------------------------------------------------


class Tmux:
    """A private tmux server (own socket) running one command in a 100x30 window."""

    def __init__(self, command: str) -> None:
        self.socket = f"anyurl-test-{uuid.uuid4().hex[:8]}"
        self._run("new-session", "-d", "-s", "main", "-x", "100", "-y", "30", command)

    def _run(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], check=True, capture_output=True,
                              text=True, timeout=10).stdout

    def keys(self, *keys: str) -> None:
        self._run("send-keys", "-t", "main", *keys)

    def screen(self) -> str:
        return self._run("capture-pane", "-p", "-t", "main")

    def wait_for(self, pattern: str, timeout: float = 20) -> str:
        deadline = time.monotonic() + timeout
        while True:
            text = self.screen()
            if re.search(pattern, text, re.MULTILINE):
                return text
            if time.monotonic() > deadline:
                raise AssertionError(f"{pattern!r} not on screen after {timeout}s:\n{text}")
            time.sleep(0.1)

    def resize(self, columns: int, rows: int) -> None:
        self._run("resize-window", "-t", "main", "-x", str(columns), "-y", str(rows))

    def tty_settings(self) -> str:
        """``stty -a`` of the pane's terminal, read from outside."""
        tty = self._run("display-message", "-p", "-t", "main", "#{pane_tty}").strip()
        return subprocess.run(["stty", "-a", "-F", tty], check=True, capture_output=True, text=True,
                              timeout=10).stdout

    def kill(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=10)


@pytest.fixture
def tmux_session(telnetd: Endpoint, tmp_path: Path) -> Iterator[tuple[Tmux, Path]]:
    assert shutil.which("tmux"), "tmux is missing: fixtures/debian-packages.txt installs it"
    url = url_of(telnetd, f"{telnetd.info['user']}:{telnetd.info['password']}@")
    root = Path(__file__).resolve().parents[2]
    # stty before and after, the exit status, and the anyurl process id, into tmp_path
    script = (f"cd {root}; stty -g > {tmp_path}/before.g; stty -a | tail -n +2 > {tmp_path}/before.a; "
              f"(echo $BASHPID > {tmp_path}/pid; exec {sys.executable} -m anyurl {url}); "
              f"echo $? > {tmp_path}/rc; stty -g > {tmp_path}/after.g; "
              f"stty -a | tail -n +2 > {tmp_path}/after.a; echo SHELL-BACK; sleep 60")
    t = Tmux(f"bash --norc --noprofile -c {shlex.quote(script)}")
    try:
        yield t, tmp_path
    finally:
        t.kill()


def _login(t: Tmux) -> None:
    screen = t.wait_for(r"login: *$")
    # RFC 1738: the advisory user/password are shown, not typed
    assert "login as urltest, password urltest-pw" in screen.replace("\n", "")
    assert re.search(r"login: *$", screen, re.MULTILINE) and "login: urltest" not in screen
    t.keys("urltest", "Enter")
    t.wait_for(r"Password: *$")
    t.keys("urltest-pw", "Enter")
    t.wait_for(r"\$ *$")


def _restored(tmp: Path) -> None:
    for _ in range(100):
        if (tmp / "after.a").exists() and (tmp / "after.a").stat().st_size:
            break
        time.sleep(0.1)
    assert (tmp / "before.g").read_text() == (tmp / "after.g").read_text()
    # stty -a wraps at the window width, which a test may have changed: compare the words
    assert (tmp / "before.a").read_text().split() == (tmp / "after.a").read_text().split()
    after = (tmp / "after.a").read_text().split()
    assert "icanon" in after and "echo" in after and "isig" in after  # cooked mode again


def test_terminal_session_escape_key(tmux_session: tuple[Tmux, Path]) -> None:
    t, tmp = tmux_session
    _login(t)
    during = t.tty_settings().split()
    assert "-icanon" in during and "-echo" in during and "-isig" in during  # raw while connected
    t.keys("echo TELNET-$((6*7)) Grüße-$((1+1)); stty size", "Enter")
    screen = t.wait_for(r"^30 100$")
    # the shell ran it (not just an echo), and typed UTF-8 went through 8-bit clean
    assert re.search(r"^TELNET-42 Grüße-2$", screen, re.MULTILINE)
    t.resize(120, 40)  # SIGWINCH -> NAWS -> the server's pty size
    for attempt in range(3):  # the signal and the NAWS update race with our next command
        t.keys("stty size", "Enter")
        try:
            t.wait_for(r"^40 120$", timeout=5)
            break
        except AssertionError:
            if attempt == 2:
                raise
    t.keys("C-]")
    t.wait_for("SHELL-BACK")
    assert "escape key; closing the session" in t.screen()
    assert (tmp / "rc").read_text().strip() == "0"
    _restored(tmp)


def test_terminal_session_remote_close(tmux_session: tuple[Tmux, Path]) -> None:
    t, tmp = tmux_session
    _login(t)
    t.keys("exit", "Enter")
    t.wait_for("SHELL-BACK")
    assert "Connection closed by foreign host." in t.screen()
    assert (tmp / "rc").read_text().strip() == "0"
    _restored(tmp)


def test_terminal_restored_after_sigterm(tmux_session: tuple[Tmux, Path]) -> None:
    t, tmp = tmux_session
    t.wait_for(r"login: *$")
    os.kill(int((tmp / "pid").read_text()), 15)
    t.wait_for("SHELL-BACK")
    assert (tmp / "rc").read_text().strip() == str(128 + 15)
    _restored(tmp)

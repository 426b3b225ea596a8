"""An interactive Telnet session in the user's terminal (``anyurl telnet://host/``).

The terminal is put in raw mode so every key goes to the server as typed
(the server echoes), the window size follows SIGWINCH (NAWS), and Ctrl-]
quits. The terminal settings are restored on every way out: the escape key,
the server closing, an error, SIGTERM or SIGHUP.

RFC 1738 section 3.8: the user name and password in a telnet URL are
advisory. They are shown to the person ("login as guest, password ...")
and never typed for them.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import signal
import sys
import termios
import tty
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ..errors import AnyURLError, NotRetrievable
from ..handlers.telnet import TelnetHandler, TelnetSession
from ..schemes import port_of
from ..urls import URL, TelnetURL

if TYPE_CHECKING:
    from ..client import Client

__all__ = ["ESCAPE", "advisory_text", "run"]

ESCAPE = 0x1D  # Ctrl-]
ESCAPE_NAME = "^]"


def advisory_text(url: TelnetURL) -> str | None:
    """The hint to show for the URL's advisory credentials, or None."""
    if url.user is None:
        return None
    text = f"login as {url.user}"
    if url.password:
        text += f", password {url.password}"
    return text + " (the URL suggests these; anyurl does not type them for you)"


def _window_size(fd: int) -> tuple[int, int] | None:
    try:
        size = os.get_terminal_size(fd)
    except OSError:
        return None
    return (size.columns, size.lines)


@contextlib.contextmanager
def _raw_mode(fd: int | None) -> Iterator[None]:
    """Raw mode on *fd* for the block; the saved settings come back however it ends."""
    if fd is None:
        yield
        return
    saved = termios.tcgetattr(fd)
    try:
        tty.setraw(fd, termios.TCSANOW)
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            n = os.write(fd, view)
        except BlockingIOError:
            select.select([], [fd], [])  # a non-blocking stdout that is full: wait, then retry
            continue
        view = view[n:]


def _say(text: str, raw: bool) -> None:
    # in raw mode "\n" does not return the carriage
    sys.stderr.write(text.replace("\n", "\r\n") if raw else text)
    sys.stderr.flush()


async def run(url: str | URL, client: Client) -> int:
    """Run an interactive session for *url* on this process's terminal; returns an exit code."""
    u = client.parse(url)
    if not isinstance(u, TelnetURL):
        raise NotRetrievable(f"{u.scheme} URLs are not interactive sessions", url=u)
    stdin_fd, stdout_fd = sys.stdin.fileno(), sys.stdout.fileno()
    is_tty = os.isatty(stdin_fd)
    handler = client.handler(u)
    assert isinstance(handler, TelnetHandler)
    host, port = u.host, port_of(u)
    _say(f"Trying {host}:{port}...\n", False)
    hint = advisory_text(u)
    try:
        # binary: typed UTF-8 must reach the server 8-bit clean; Enter is a bare CR either way
        session = await handler.connect(client.request(u), terminal_type=os.environ.get("TERM") or None, binary=True,
                                        window_size=_window_size(stdout_fd) if os.isatty(stdout_fd) else None)
    except AnyURLError as exc:
        _say(f"anyurl: {exc}\n", False)
        return exc.exit_code
    _say(f"Connected to {host}.\nEscape character is '{ESCAPE_NAME}'.\n", False)
    if hint:
        _say(f"Hint: {hint}\n", False)
    try:
        with _raw_mode(stdin_fd if is_tty else None):
            return await _interact(session, stdin_fd, stdout_fd, is_tty)
    except AnyURLError as exc:
        _say(f"\nanyurl: {exc}\n", False)
        return exc.exit_code
    finally:
        await session.close()


async def _interact(session: TelnetSession, stdin_fd: int, stdout_fd: int, is_tty: bool) -> int:
    loop = asyncio.get_running_loop()
    keys: asyncio.Queue[bytes] = asyncio.Queue()
    stop: asyncio.Future[int] = loop.create_future()

    def on_stdin() -> None:
        try:
            data = os.read(stdin_fd, 4096)
        except OSError:
            data = b""
        keys.put_nowait(data)
        if not data:
            loop.remove_reader(stdin_fd)  # EOF: keep showing the server's output

    def on_signal(code: int) -> None:
        if not stop.done():
            stop.set_result(code)

    resizes: set[asyncio.Task[None]] = set()

    async def report_size(size: tuple[int, int]) -> None:
        with contextlib.suppress(AnyURLError):  # a lost connection shows up in the reader
            await session.set_window_size(*size)

    def on_winch() -> None:
        size = _window_size(stdout_fd)
        if size is not None:
            task = loop.create_task(report_size(size))
            resizes.add(task)
            task.add_done_callback(resizes.discard)

    async def remote_to_screen() -> int:
        while True:
            data = await session.receive()
            if not data:
                _say("\nConnection closed by foreign host.\n", is_tty)
                return 0
            _write_all(stdout_fd, data)

    async def keys_to_remote() -> int:
        while True:
            data = await keys.get()
            if not data:
                await asyncio.Event().wait()  # stdin ended: wait for the server to finish
            if ESCAPE in data:
                before = data[: data.index(ESCAPE)]
                if before:
                    await session.write(before)
                _say("\nanyurl: escape key; closing the session.\n", is_tty)
                return 0
            await session.write(data)

    try:
        loop.add_reader(stdin_fd, on_stdin)
    except (OSError, ValueError):
        keys.put_nowait(b"")  # stdin cannot be polled (a regular file, /dev/null): no input
    handled = [signal.SIGTERM, signal.SIGHUP]
    for sig in handled:
        loop.add_signal_handler(sig, on_signal, 128 + sig)
    if is_tty:
        loop.add_signal_handler(signal.SIGWINCH, on_winch)
    tasks = [asyncio.ensure_future(remote_to_screen()), asyncio.ensure_future(keys_to_remote()), stop]
    try:
        done, _pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for t in tasks:
            if t in done:
                return t.result()
        return 0  # not reached: one task is always done
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        loop.remove_reader(stdin_fd)
        for sig in handled:
            loop.remove_signal_handler(sig)
        if is_tty:
            loop.remove_signal_handler(signal.SIGWINCH)

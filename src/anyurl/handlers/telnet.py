"""telnet: an interactive session (RFC 1738 section 3.8), driven by the pure protocol.

A telnet URL designates a session, not a data object, so ``open``/``fetch``
raise :class:`NotRetrievable`. From Python::

    async with anyurl.connect("telnet://host:2323/") as session:
        await session.expect([rb"login: "])
        await session.write("guest\\n")

From a terminal, ``anyurl telnet://host/`` (see :mod:`anyurl.cli.terminal`).
The user name and password of the URL are advisory only: they are used
only when the caller asks (:meth:`TelnetSession.login`). Nothing here
spawns an external program.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence

from ..errors import (
    AccessDenied,
    ConfigurationError,
    ConnectError,
    FetchTimeout,
    NotRetrievable,
    ProtocolError,
    UnsafeURL,
)
from ..net.connect import exchanging, open_stream
from ..net.pool import Connection, Lease, Pool
from ..protocols.telnet import BINARY, DO, WILL, TelnetProtocol
from ..response import Body
from ..schemes import port_of
from ..urls import TelnetURL
from .base import Context, Handler, Request

__all__ = ["TelnetHandler", "TelnetSession", "check_telnet_url"]

Pattern = str | bytes | re.Pattern[bytes]
# a prompt character at the end of the data, maybe followed by terminal escapes (bash emits ESC [K)
SHELL_PROMPT = rb"[$#>%] ?(?:\x1b\[[0-9;?]*[A-Za-z])*$"
_UNSAFE = {"\r": "CR", "\n": "LF", "\0": "NUL", "\xff": "IAC (0xFF)", "\udcff": "IAC (0xFF)"}


def _refuse(what: str, value: str | None, url: object) -> None:
    if value is None:
        return
    bad = sorted({name for ch, name in _UNSAFE.items() if ch in value})
    if bad:
        raise UnsafeURL(f"{what} contains {', '.join(bad)}; refusing to type it into a session", url=url)


def check_telnet_url(url: TelnetURL) -> None:
    """Refuse what could inject Telnet commands or shell options: before connecting."""
    _refuse("user name", url.user, url)
    _refuse("password", url.password, url)
    if not url.host:
        raise UnsafeURL("a telnet URL needs a host", url=url)
    if url.host.startswith("-"):
        raise UnsafeURL(f"host {url.host!r} begins with '-'", url=url)


def _compile(pattern: Pattern) -> re.Pattern[bytes]:
    if isinstance(pattern, re.Pattern):
        return pattern
    if isinstance(pattern, str):
        pattern = pattern.encode("utf-8")
    return re.compile(pattern)


class TelnetSession:
    """One Telnet connection. Reads pull from the socket on demand and answer the
    server's negotiation as they go; every read is bounded by ``max_buffer``."""

    def __init__(self, url: TelnetURL, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 protocol: TelnetProtocol, *, read_timeout: float | None, max_buffer: int,
                 handler: TelnetHandler | None = None, slot: Lease[Connection] | None = None) -> None:
        self.url = url
        self.protocol = protocol
        self._reader = reader
        self._writer = writer
        self._buffer = bytearray()
        self._eof = False
        self._read_timeout = read_timeout
        self._max_buffer = max_buffer
        self._handler = handler
        self._closed = False
        self._drain_lock = asyncio.Lock()
        self._slot = slot  # the per-host slot, held while the session is open

    # -- state -----------------------------------------------------------------

    @property
    def options(self) -> dict[str, list[str]]:
        """Options agreed so far: ``{"local": [...], "remote": [...]}``."""
        return self.protocol.options

    @property
    def at_eof(self) -> bool:
        """True once the server closed the connection and the buffer is empty."""
        return self._eof and not self._buffer

    # -- reading -----------------------------------------------------------------

    async def _fill(self, wait: float | None) -> bool:
        """Read once from the socket into the buffer (waiting at most *wait* s); False at EOF."""
        if self._eof:
            return False
        with exchanging(self.url, "reading"):
            async with asyncio.timeout(wait):
                chunk = await self._reader.read(65536)
        if not chunk:
            self._eof = True
            return False
        self._buffer += self.protocol.receive_data(chunk)
        await self.flush()
        return True

    # The timeout parameters below are the telnetlib-style API scripts expect (ASYNC109 prefers
    # asyncio.timeout around the call; both work, and the default is the Client's read timeout).
    async def read_some(self, timeout: float | None = None) -> bytes:  # noqa: ASYNC109
        """Whatever data is available (waiting for some); b"" at EOF."""
        # one deadline for the whole wait: negotiation bytes (no data) must not re-arm it
        try:
            async with asyncio.timeout(self._timeout(timeout)):
                while not self._buffer:
                    if not await self._fill(None):
                        return b""
        except FetchTimeout:
            raise
        except TimeoutError as exc:
            raise FetchTimeout("no data from the telnet server", url=self.url) from exc
        data = bytes(self._buffer)
        self._buffer.clear()
        return data

    async def receive(self) -> bytes:
        """Wait as long as it takes for data (an interactive session may idle); b"" at EOF."""
        while not self._buffer:
            if not await self._fill(None):
                return b""
        data = bytes(self._buffer)
        self._buffer.clear()
        return data

    def _timeout(self, timeout: float | None) -> float | None:
        return self._read_timeout if timeout is None else timeout

    async def read_until(self, expected: bytes | str,
                         timeout: float | None = None) -> bytes:  # noqa: ASYNC109
        """Data up to and including *expected*. FetchTimeout if it does not arrive in time,
        ConnectError if the server closes first (the error message shows the tail)."""
        if isinstance(expected, str):
            expected = expected.encode("utf-8")
        _index, _match, data = await self.expect([re.compile(re.escape(expected))], timeout)
        return data

    async def expect(self, patterns: Pattern | Sequence[Pattern],
                     timeout: float | None = None,  # noqa: ASYNC109
                     ) -> tuple[int, re.Match[bytes], bytes]:
        """Wait until one of the regular expressions matches the incoming data.

        Returns (index of the pattern, the match, the data up to the end of the
        match); the rest stays buffered for the next read.
        """
        if isinstance(patterns, str | bytes | re.Pattern):
            patterns = [patterns]
        compiled = [_compile(p) for p in patterns]
        try:
            async with asyncio.timeout(self._timeout(timeout)):
                while True:
                    best: tuple[int, re.Match[bytes]] | None = None
                    buf = bytes(self._buffer)  # a match must not see the buffer change under it
                    for i, rx in enumerate(compiled):
                        m = rx.search(buf)
                        if m and (best is None or m.end() < best[1].end()):
                            best = (i, m)
                    if best is not None:
                        end = best[1].end()
                        data = buf[:end]
                        del self._buffer[:end]
                        return best[0], best[1], data
                    if len(self._buffer) > self._max_buffer:
                        raise ProtocolError(f"{len(self._buffer)} bytes arrived without a match for "
                                            f"{[p.pattern for p in compiled]}", url=self.url)
                    if not await self._fill(None):
                        tail = bytes(self._buffer[-200:])
                        raise ConnectError(f"the server closed the session before "
                                           f"{[p.pattern for p in compiled]} arrived; last data: {tail!r}",
                                           url=self.url)
        except FetchTimeout:
            raise
        except TimeoutError as exc:
            tail = bytes(self._buffer[-200:])
            raise FetchTimeout(f"timed out waiting for {[p.pattern for p in compiled]}; last data: {tail!r}",
                               url=self.url) from exc

    # -- writing -------------------------------------------------------------------

    async def flush(self) -> None:
        """Send what the option negotiation has queued (``write`` does it too)."""
        out = self.protocol.data_to_send()
        if not out:
            return
        try:
            with exchanging(self.url, "sending"):
                self._writer.write(out)
                # a server that stops reading must not hold us forever (nor grow our buffer)
                async with self._drain_lock, asyncio.timeout(self._read_timeout):  # reader and writer may both flush
                    await self._writer.drain()
        except TimeoutError as exc:
            raise FetchTimeout(f"the telnet server read nothing for {self._read_timeout} s",
                               url=self.url) from exc

    async def write(self, data: str | bytes) -> None:
        """Send *data* (str is UTF-8 encoded); "\\n" goes out as CR LF, 0xFF is escaped."""
        if isinstance(data, str):
            data = data.encode("utf-8")
        self.protocol.send_data(data)
        await self.flush()

    async def set_window_size(self, columns: int, rows: int) -> None:
        """Report a new window size (NAWS) if the server agreed to it."""
        self.protocol.set_window_size(columns, rows)
        await self.flush()

    async def login(self, user: str | None = None, password: str | None = None, *,
                    login_prompt: Pattern = rb"(?i)(login|username)[^\r\n]*: ?$",
                    password_prompt: Pattern = rb"(?i)password[^\r\n]*: ?$",
                    shell_prompt: Pattern = SHELL_PROMPT,
                    timeout: float | None = None) -> bytes:  # noqa: ASYNC109
        """Answer a login prompt, then a password prompt, and wait for a shell prompt.

        With no *user*/*password*, the URL's advisory ones are used (the
        caller asked for them by calling this), then the Client's
        credentials/~/.netrc or its password callback. Returns the text from
        after the password up to the shell prompt. AccessDenied when the
        server answers "Login incorrect" (or asks for the login again).
        """
        user = user if user is not None else self.url.user
        if password is None:
            password = self.url.password
        if user is None:
            raise ConfigurationError("no user name: give one to login() or in the URL", url=self.url)
        _refuse("user name", user, self.url)
        if password is None and self._handler is not None:
            password = await self._handler.context.ask_password(user, self.url.host)
        _refuse("password", password, self.url)
        lp = _compile(login_prompt)
        mline = re.compile(lp.pattern, lp.flags | re.MULTILINE)
        await self.expect([mline], timeout)
        await self.write(user + "\r\n")
        pp = _compile(password_prompt)
        sp = _compile(shell_prompt)
        idx, _m, _data = await self.expect([re.compile(pp.pattern, pp.flags | re.MULTILINE),
                                            re.compile(sp.pattern, sp.flags | re.MULTILINE)], timeout)
        if idx == 0:
            await self.write((password or "") + "\r\n")
        incorrect = re.compile(rb"(?i)login incorrect|authentication failure|access denied")
        idx, m, data = await self.expect(
            [incorrect, re.compile(sp.pattern, sp.flags | re.MULTILINE),
             re.compile(mline.pattern, mline.flags)], timeout)
        if idx != 1:
            raise AccessDenied(f"telnet login as {user!r} failed", url=self.url,
                               reply=m.group().decode("utf-8", "replace"))
        return data

    async def close(self) -> None:
        """Close the connection (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self._writer.close()
        try:
            async with asyncio.timeout(self._read_timeout):
                await self._writer.wait_closed()
        except TimeoutError:
            self._writer.transport.abort()  # unsent data the server will not read: drop it
        except OSError:
            pass  # already gone: nothing left to close
        finally:
            slot, self._slot = self._slot, None
            if slot is not None:
                await slot.release(False)

    async def __aenter__(self) -> TelnetSession:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()


class TelnetHandler(Handler):
    """Opens Telnet sessions; telnet URLs are not retrievable."""

    def __init__(self, context: Context) -> None:
        super().__init__(context)
        self.pool: Pool[Connection] = Pool("telnet")  # sessions are not reused: per-host slots only


    async def open(self, req: Request) -> Body:
        """Always raises NotRetrievable: a telnet URL designates an interactive session."""
        url = req.url
        raise NotRetrievable("a telnet URL designates an interactive session, not a data object: use "
                             "`async with anyurl.connect(url) as session` from Python, or run "
                             "`anyurl URL` in a terminal", url=url)

    async def connect(  # type: ignore[override]  # the one scheme with sessions: its own options
            self, req: Request, *, terminal_type: str | None = "xterm",
                      window_size: tuple[int, int] | None = (80, 24),
                      binary: bool = False) -> TelnetSession:
        """Connect and start negotiating; returns a :class:`TelnetSession`.

        *binary* asks for TRANSMIT-BINARY both ways (RFC 856), so 8-bit data
        (UTF-8 text, 0xFF) passes: a plain NVT server may strip the high bit
        (inetutils-telnetd does). In binary mode data goes out as given, so
        end lines the way the server wants (a pty wants "\r" or "\n", not both);
        without it, "\n" is sent as the NVT's CR LF.
        """
        url = req.url
        if not isinstance(url, TelnetURL):
            raise NotRetrievable("connect needs a telnet URL", url=url)
        check_telnet_url(url)
        protocol = TelnetProtocol(terminal_type=terminal_type, window_size=window_size, accept_binary=binary,
                                  max_log=self.context.limits.max_reply_lines)
        if binary:
            protocol.request(WILL, BINARY)
            protocol.request(DO, BINARY)
        slot = await self.pool.lend_slot(req, url.host, port_of(url))  # held until session.close()
        try:
            reader, writer = await open_stream(url, "telnet", url.host, port_of(url),
                                               timeout=req.connect_timeout, limit=req.limits.max_line)
        except BaseException:
            await slot.release(False)
            raise
        session = TelnetSession(url, reader, writer, protocol, read_timeout=req.timeouts.read,
                                max_buffer=max(req.limits.max_line, 1 << 20), handler=self, slot=slot)
        self.pool.log.debug("opened session to %s:%s", url.host, port_of(url))
        try:
            await session.flush()  # our own requests go out first
        except BaseException:
            await session.close()
            raise
        return session

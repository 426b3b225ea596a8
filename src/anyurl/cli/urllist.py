"""``get -i FILE``: the URL list, read as the downloads need it."""

from __future__ import annotations

import errno
import os
import stat
import sys

from ..errors import ResourceNotFound, TransferError

TYPE_CHECKING = False  # not typing's: importing typing costs start-up time (mypy knows this idiom)
if TYPE_CHECKING:
    import asyncio
    import contextlib
    from collections.abc import AsyncIterator, Awaitable, Callable
else:
    from .lazy import OnFirstUse

    asyncio, contextlib = map(OnFirstUse, ("asyncio", "contextlib"))


_LIST_CHUNK = 1 << 16
#: an overlong line is skipped up to its end, unless it runs past this many times Limits.max_line
#: (64 MiB by default): then no end is coming (-i /dev/zero) and the list ends there
SKIP_LINES = 1024
_BOM = b"\xef\xbb\xbf"  # UTF-8's byte order mark, which some editors write first


def _urls_in(raw: bytes) -> list[str]:
    """The URLs of one line of a URL list (blank lines and # comments skipped)."""
    out = []
    for line in raw.decode("utf-8", "surrogateescape").splitlines():  # also \r, as in text mode
        text = line.strip()
        if text and not text.startswith("#"):
            out.append(text)
    return out


class Listed(str):
    """A URL read from a URL list, with its place there: ``list.txt line 3``."""

    line: int
    source: str

    def __new__(cls, text: str, line: int, source: str) -> Listed:
        self = super().__new__(cls, text)
        self.line = line
        self.source = source
        return self

    @property
    def where(self) -> str:
        """Where the URL is in the list (for an error message: only then formatted)."""
        return f"{'standard input' if self.source == '-' else self.source} line {self.line}"


class URLList:
    """The URLs of ``get -i FILE`` ('-': standard input), read as they are needed.

    A 100,000-line list is never held whole: a file or device is read 64 KiB at
    a time; a pipe through the event loop (a slow writer never blocks the
    downloads already running); a terminal at once (its prompts share stdin).
    A line longer than ``max_line`` bytes (``Limits.max_line``) is reported (its
    first bytes only, as a TransferError given to :meth:`report_to`'s function)
    and skipped up to its newline, and the list goes on; one that runs on past
    ``SKIP_LINES`` times that with no newline ends the list with that error. A
    UTF-8 byte order mark at the start is skipped.
    """

    def __init__(self, source: str, max_line: int = 64 * 1024, login: str | None = None) -> None:
        self.source = source
        self.max_line = max_line
        self.login = login  # -u USER[:PASSWORD]: put into each ftp or http(s) URL naming no user
        self.opened = source != "-"
        self._transport: asyncio.ReadTransport | None = None
        self.urls = 0  # URLs handed out so far
        # overlong lines skipped: (URLs before it, its error), until report_to gives a function
        self.skipped: list[tuple[int, TransferError]] = []
        self._report: Callable[[int, TransferError], object] | None = None
        try:
            self.fd = os.open(source, os.O_RDONLY | os.O_CLOEXEC) if self.opened else sys.stdin.fileno()
            mode = os.fstat(self.fd).st_mode
        except (OSError, ValueError, AttributeError) as exc:
            if isinstance(exc, FileNotFoundError):
                raise ResourceNotFound(f"URL list {source}: no such file") from exc
            raise TransferError(f"cannot read the URL list {source}: "
                                f"{getattr(exc, 'strerror', None) or exc}") from exc
        if stat.S_ISDIR(mode):
            self.close()
            raise TransferError(f"cannot read the URL list {source}: {os.strerror(errno.EISDIR)}")
        self.regular = stat.S_ISREG(mode)
        self.pipe = stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)
        self.terminal = not self.regular and not self.pipe and os.isatty(self.fd)

    def close(self) -> None:
        if self._transport is not None:  # it made the pipe non-blocking: give it back as it was
            self._transport.close()
            self._transport = None
            with contextlib.suppress(OSError):
                os.set_blocking(self.fd, True)
        if self.opened and self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def _fail(self, exc: OSError) -> TransferError:
        return TransferError(f"cannot read the URL list {self.source}: {exc.strerror or exc}")

    def _overlong(self, start: bytes, endless: bool = False) -> TransferError:
        # the line's first bytes only: a 200 MB line is not echoed
        where = "standard input" if self.source == "-" else self.source
        then = (f"no newline in its first {SKIP_LINES * self.max_line} bytes: the rest of the list is not read"
                if endless else "skipped")
        return TransferError(f"URL list {where} line {self.lineno + 1} is longer than {self.max_line} bytes "
                             f"(Limits.max_line); it starts {start[:60]!r}; {then}")

    def report_to(self, report: Callable[[int, TransferError], object]) -> None:
        """Give each skipped line's error to *report* (with the number of URLs before it),
        those skipped so far at once."""
        self._report = report
        for before, exc in self.skipped:
            report(before, exc)

    def _skip(self, start: bytes) -> None:
        """An overlong line, reported and passed over (its line number counted)."""
        exc = self._overlong(start)
        self.skipped.append((self.urls, exc))
        if self._report is not None:
            self._report(self.urls, exc)
        self.lineno += 1

    def count_urls(self) -> int | None:
        """How many URLs a regular file holds (one more pass; for the overall progress bar)."""
        if not self.regular:
            return None
        n = 0
        tail = b""
        pos = 0
        try:
            while chunk := os.pread(self.fd, _LIST_CHUNK, pos):
                if pos == 0:
                    chunk = chunk.removeprefix(_BOM)
                pos += len(chunk)
                *lines, tail = (tail + chunk).split(b"\n")
                if len(tail) > self.max_line:
                    return None  # an overlong line: reading the list will report it
                n += sum(len(_urls_in(line)) for line in lines)
        except OSError as exc:
            raise self._fail(exc) from exc
        return n + len(_urls_in(tail))

    def _listed(self, line: bytes) -> list[str]:
        """The URLs of the list's next line, each knowing where it was (for its error message)."""
        if len(line) > self.max_line:
            self._skip(line)
            return []
        if self.lineno == 0:
            line = line.removeprefix(_BOM)
        self.lineno += 1
        texts = _urls_in(line)
        if self.login:
            from .session import login_url

            texts = [login_url(t, self.login) for t in texts]
        urls: list[str] = [Listed(url, self.lineno, self.source) for url in texts]
        self.urls += len(urls)
        return urls

    async def __aiter__(self) -> AsyncIterator[str]:
        async for batch in self.batches():
            for url in batch:
                yield url

    async def batches(self) -> AsyncIterator[list[str]]:
        """The list's URLs, a batch per read (the whole lines it ended; maybe none)."""
        read: Callable[[], Awaitable[bytes]] | None = None
        self.lineno = 0
        if self.pipe:
            read = await self._pipe_reader()
        elif self.terminal:  # read at once: the prompts of the downloads share it
            yield self._listed_lines(self._read_all().split(b"\n"))
            return
        pending: list[bytes] = []  # the start of a line not ended yet
        held = 0  # its length
        skipping = -1  # >= 0: in an overlong line, passed over up to its newline (bytes passed)
        while True:
            try:
                chunk = os.read(self.fd, _LIST_CHUNK) if read is None else await read()
            except OSError as exc:
                raise self._fail(exc) from exc
            if not chunk:
                break
            if skipping >= 0:
                end = chunk.find(b"\n")
                if end < 0:
                    skipping += len(chunk)
                    if skipping > SKIP_LINES * self.max_line:  # no end coming (-i /dev/zero)
                        self.lineno -= 1  # (the line reported, counted when skipped)
                        raise self._overlong(self._skipped_start, endless=True)
                    continue
                chunk, skipping = chunk[end + 1:], -1
            pending.append(chunk)
            if b"\n" not in chunk:
                held += len(chunk)
                if held > self.max_line:  # not held, not echoed whole: skipped up to its newline
                    self._skipped_start = b"".join(pending)[:60]
                    self._skip(self._skipped_start)
                    pending, held, skipping = [], 0, held
                continue
            *lines, rest = b"".join(pending).split(b"\n")
            pending = [rest]
            held = len(rest)
            yield self._listed_lines(lines)
        if skipping < 0:
            yield self._listed(b"".join(pending))

    _skipped_start = b""

    def _listed_lines(self, lines: list[bytes]) -> list[str]:
        """The URLs of *lines* (overlong ones skipped)."""
        out: list[str] = []
        for line in lines:
            out += self._listed(line)
        return out

    def _read_all(self) -> bytes:
        parts = []
        held = 0  # bytes since the last line end
        try:
            while chunk := os.read(self.fd, _LIST_CHUNK):
                parts.append(chunk)
                held = len(chunk) - 1 - chunk.rfind(b"\n") if b"\n" in chunk else held + len(chunk)
                if held > self.max_line:
                    raise self._overlong(b"".join(parts)[-held:][:60])
        except OSError as exc:
            raise self._fail(exc) from exc
        return b"".join(parts)

    async def _pipe_reader(self) -> Callable[[], Awaitable[bytes]]:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=_LIST_CHUNK, loop=loop)
        pipe = os.fdopen(os.dup(self.fd), "rb", buffering=0)  # the transport closes the copy, not stdin
        try:
            transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
        except BaseException:
            pipe.close()
            raise
        self._transport = transport
        return lambda: reader.read(_LIST_CHUNK)

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
    A line longer than ``max_line`` bytes (``Limits.max_line``) ends the list
    with an error quoting its first bytes only; a UTF-8 byte order mark at the
    start is skipped.
    """

    def __init__(self, source: str, max_line: int = 64 * 1024) -> None:
        self.source = source
        self.max_line = max_line
        self.opened = source != "-"
        self._transport: asyncio.ReadTransport | None = None
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

    def _overlong(self, start: bytes) -> TransferError:
        # the line's first bytes only: a 200 MB line is not echoed
        where = "standard input" if self.source == "-" else self.source
        return TransferError(f"URL list {where} line {self.lineno + 1} is longer than {self.max_line} bytes "
                             f"(Limits.max_line); it starts {start[:60]!r}")

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
            raise self._overlong(line)
        if self.lineno == 0:
            line = line.removeprefix(_BOM)
        self.lineno += 1
        return [Listed(url, self.lineno, self.source) for url in _urls_in(line)]

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
            urls, error = self._listed_lines(self._read_all().split(b"\n"))
            yield urls
            if error is not None:
                raise error
            return
        pending: list[bytes] = []  # the start of a line not ended yet
        held = 0  # its length
        while True:
            try:
                chunk = os.read(self.fd, _LIST_CHUNK) if read is None else await read()
            except OSError as exc:
                raise self._fail(exc) from exc
            if not chunk:
                break
            pending.append(chunk)
            if b"\n" not in chunk:
                held += len(chunk)
                if held > self.max_line:  # no end in sight (-i /dev/zero): not held, not echoed whole
                    raise self._overlong(pending[0])
                continue
            *lines, rest = b"".join(pending).split(b"\n")
            pending = [rest]
            held = len(rest)
            urls, error = self._listed_lines(lines)
            yield urls
            if error is not None:  # (the URLs of the lines before it are downloaded first)
                raise error
        yield self._listed(b"".join(pending))

    def _listed_lines(self, lines: list[bytes]) -> tuple[list[str], TransferError | None]:
        """The URLs of *lines*, up to an overlong one (its error second)."""
        out: list[str] = []
        try:
            for line in lines:
                out += self._listed(line)
        except TransferError as exc:
            return out, exc
        return out, None

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

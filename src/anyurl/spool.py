"""A captured body's bytes as they arrive: in memory up to a threshold, then in a temporary file.

A capture keeps a body until it is written to a WARC file; a large one (``get --warc`` of a
4 GB file) would otherwise hold all of it in memory. :class:`Spool` moves the pieces to an
anonymous temporary file once they pass :data:`THRESHOLD` bytes, and :meth:`Spool.reader`
hands them out again as a seekable stream (what warcio reads a record's payload from),
optionally framed by a prefix and a suffix (HTTP's chunk framing) without copying the body.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterable
from typing import IO

__all__ = ["THRESHOLD", "Spool", "SpoolReader"]

#: bytes kept in memory before a capture's body moves to a temporary file
THRESHOLD = 1 << 20


class Spool:
    """The pieces of one body, appended as they arrive (``append``/``extend``, as a list)."""

    __slots__ = ("_file", "_parts", "size", "threshold")

    def __init__(self, threshold: int = THRESHOLD) -> None:
        self.threshold = threshold
        self.size = 0
        self._parts: list[bytes] = []
        self._file: IO[bytes] | None = None

    def append(self, data: bytes) -> None:
        self.size += len(data)
        f = self._file
        if f is not None:
            f.write(data)
            return
        self._parts.append(data)
        if self.size > self.threshold:
            self._spill()

    def extend(self, pieces: Iterable[bytes]) -> None:
        for piece in pieces:
            self.append(piece)

    def clear(self) -> None:
        """Forget the pieces (a driver that starts the body again)."""
        self.close()
        self._parts = []
        self.size = 0

    def _spill(self) -> None:
        import tempfile  # here: only a large capture needs it

        f = tempfile.TemporaryFile(prefix="anyurl-capture-")  # noqa: SIM115 - closed by close()
        for piece in self._parts:
            f.write(piece)
        self._parts = []
        self._file = f

    @property
    def spooled(self) -> bool:
        """True once the pieces are in the temporary file."""
        return self._file is not None

    def getvalue(self) -> bytes:
        """All the bytes, in memory (for a spooled body: read back from the file)."""
        f = self._file
        if f is None:
            parts = self._parts
            return parts[0] if len(parts) == 1 else b"".join(parts)
        f.flush()
        return os.pread(f.fileno(), self.size, 0) if self.size else b""

    def reader(self, prefix: bytes = b"", suffix: bytes = b"") -> SpoolReader:
        """A seekable stream of *prefix*, the bytes, *suffix* (the spool stays open)."""
        if self._file is not None:
            self._file.flush()
        return SpoolReader(prefix, self, suffix)

    def pread(self, n: int, pos: int) -> bytes:
        """At most *n* bytes from offset *pos* (no shared position: readers do not collide)."""
        f = self._file
        if f is None:
            return self.getvalue()[pos:pos + n]
        return os.pread(f.fileno(), n, pos)

    def close(self) -> None:
        """Delete the temporary file, if any."""
        f, self._file = self._file, None
        if f is not None:
            f.close()

    def __del__(self) -> None:  # a capture dropped unwritten: its file goes with it
        self.close()


class SpoolReader(io.RawIOBase):
    """Reads ``prefix + spool + suffix`` with its own position (``os.pread`` on the file)."""

    def __init__(self, prefix: bytes, spool: Spool, suffix: bytes) -> None:
        super().__init__()
        self._prefix = prefix
        self._suffix = suffix
        self._spool = spool
        self._memory = None if spool.spooled else spool.getvalue()
        self.length = len(prefix) + spool.size + len(suffix)
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self._pos, 2: self.length}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, buffer: memoryview | bytearray) -> int:  # type: ignore[override]
        want = min(len(buffer), self.length - self._pos)
        done = 0
        while done < want:  # across the parts' boundaries: a read is short only at the end
            data = self._read(self._pos, want - done)
            if not data:
                break
            buffer[done:done + len(data)] = data
            done += len(data)
            self._pos += len(data)
        return done

    def _read(self, pos: int, n: int) -> bytes:
        head = len(self._prefix)
        if pos < head:
            return self._prefix[pos:pos + n]
        pos -= head
        size = self._spool.size
        if pos < size:
            n = min(n, size - pos)
            if self._memory is not None:
                return self._memory[pos:pos + n]
            return self._spool.pread(n, pos)
        pos -= size
        return self._suffix[pos:pos + n]

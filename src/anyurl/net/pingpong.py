"""The command/reply connection FTP's control connection and NNTP's connection share.

curl's ``pingpong.c`` serves FTP, IMAP, POP3 and SMTP with one engine: a stream pair, a
command written whole within a deadline, replies read for the protocol's parser, the
connection's end. :class:`CommandConnection` is that engine here; what a reply means stays
in each protocol's sans-I/O session (:mod:`anyurl.protocols.ftpsession`,
:mod:`anyurl.protocols.nntpsession`), which the subclass runs. Errors are worded by
:mod:`anyurl.net.connect`'s table.
"""

from __future__ import annotations

import asyncio

from ..errors import AnyURLError, ConnectError, FetchTimeout
from .connect import lost

__all__ = ["CommandConnection", "bytes_waiting"]


def bytes_waiting(reader: asyncio.StreamReader) -> bool:
    """Whether *reader* holds bytes nobody read yet (or its EOF or an error). StreamReader has no
    public way to ask: start a read of one byte by hand, without the event loop. It returns
    at once when something is there (then the byte is gone: the caller drops the connection);
    else it stops at its first wait, and is closed there, leaving the reader as it was.
    (~3 us; asyncio.timeout(0) around the read costs ~27 us, a loop turn and a cancellation.)"""
    step = reader.read(1)
    try:
        step.send(None)
    except (StopIteration, OSError):
        return True
    except BaseException:  # any other error the reader holds: not usable either
        step.close()
        return True
    step.close()
    return False


class CommandConnection:
    """A stream pair that carries commands and replies (see the module's docstring)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    async def write(self, data: bytes, what: str, url: object, timeout: float | None) -> None:  # noqa: ASYNC109
        """Write *data* (the command *what*, or several); wait while the kernel's buffer is
        full, at most *timeout* s (a server that stops reading must not hold us)."""
        writer = self.writer
        try:
            writer.write(data)
            if writer.transport.get_write_buffer_size():  # only then can drain block
                async with asyncio.timeout(timeout):
                    await writer.drain()
        except TimeoutError as exc:
            raise FetchTimeout(f"timed out sending {what}", url=url) from exc
        except OSError as exc:
            raise lost(exc, url, f"sending {what}") from exc
        except RuntimeError as exc:  # uvloop's write on a closed transport
            raise ConnectError(f"connection lost while sending {what}: {exc}", url=url) from exc

    def write_nowait(self, data: bytes, what: str, url: object) -> None:
        """Write *data* without waiting (a few bytes: the transport buffers them)."""
        try:
            self.writer.write(data)
        except OSError as exc:
            raise lost(exc, url, f"sending {what}") from exc
        except RuntimeError as exc:  # uvloop's write on a closed transport
            raise ConnectError(f"connection lost while sending {what}: {exc}", url=url) from exc

    async def read(self, size: int, url: object, doing: str) -> bytes:
        """Up to *size* bytes, b"" at EOF; a lost connection is ConnectError. A deadline is the
        caller's (a TimeoutError passes through: the caller names what it waited for)."""
        try:
            return await self.reader.read(size)
        except OSError as exc:
            if isinstance(exc, (TimeoutError, AnyURLError)):
                raise
            raise lost(exc, url, doing) from exc

    def stale(self) -> bool:
        """The server closed this idle connection, or sent something nobody asked for."""
        return self.writer.transport.is_closing() or bytes_waiting(self.reader)

    def abort(self) -> None:
        """Close at once, without a word to the server."""
        self.writer.transport.abort()

    async def hang_up(self, goodbye: bytes = b"") -> None:
        """Write *goodbye* (QUIT) unless the connection is gone, then close, waiting at most
        2 s for the close; never raises (closing must not hide the error that led here)."""
        try:
            if goodbye and not self.writer.transport.is_closing():
                self.writer.write(goodbye)
        except (OSError, RuntimeError):
            pass
        self.writer.close()
        try:
            async with asyncio.timeout(2):
                await self.writer.wait_closed()
        except (OSError, TimeoutError, RuntimeError):
            pass

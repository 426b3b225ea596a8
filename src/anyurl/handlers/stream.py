"""The one reader for bulk data (FTP data connections, gopher replies).

:class:`BulkReader` is an ``asyncio.BufferedProtocol``: the kernel copies
straight into our buffer (``recv_into``), and each chunk handed out is one
copy of what arrived. It works on any event loop whose transports have the
asyncio API (uvloop's are not ``asyncio.Transport`` subclasses, so nothing
here checks the class).

Costs are per transfer, not per chunk: one idle watchdog enforces the read
timeout (no timer per wait); the consumer is woken when half a buffer has
arrived, or after :data:`BulkReader.LINGER` seconds for a trickle. The
buffer starts at 64 KiB and grows (x4) to ``chunk_size`` only while reads
keep filling it, so a small reply never pays for a large buffer; finished
transfers give their buffer back to a small cache for the next one instead
of allocating (and zero-filling) a new one. Reading pauses while two chunks
wait unread, so memory stays bounded by the consumer's pace.

:meth:`BulkReader.splice_into` moves the rest of a plain (not TLS) stream
into a file or /dev/null with Linux ``splice(2)``: socket -> pipe -> file,
driven by loop readiness on a duplicate of the socket's descriptor (the
transport is paused; uvloop refuses ``add_reader`` on a transport's own
descriptor). The pages never pass through Python: for 100 MiB from
gophernicus that saves ~15-20 ms of CPU into /dev/null and nothing into a
file (the kernel's copy to the page cache stays); the wall time is set by
the server and Python's start-up, not the copy (bench/ab_gopher_big.py).
"""

from __future__ import annotations

import asyncio
import collections
import errno
import os
import socket
import stat
import threading
from collections.abc import Callable
from typing import cast

from .base import prime_allocator

__all__ = ["BulkReader", "SinkWriteError", "can_splice_into"]

_START = 1 << 16
_splice = getattr(os, "splice", None)  # Linux, Python 3.10+
_PIPE = 1 << 20  # the splice pipe's size (Linux's default limit for unprivileged processes)
# pipe -> file refused by the target's filesystem or driver: drained through Python instead
_NO_SPLICE_OUT = frozenset({errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EXDEV})
_null_rdev: int | None = None


class SinkWriteError(OSError):
    """Writing into the target descriptor failed (disk full, ...), not the connection."""


def can_splice_into(fd: int) -> bool:
    """True when splice(2) is here and *fd* is a regular file or /dev/null: targets whose
    writes never wait on a reader (a pipe or terminal could block the event loop)."""
    global _null_rdev
    if _splice is None:
        return False
    try:
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode):
            return True
        if not stat.S_ISCHR(st.st_mode):
            return False
        if _null_rdev is None:
            _null_rdev = os.stat(os.devnull).st_rdev
        return st.st_rdev == _null_rdev
    except OSError:
        return False


class _Buffers:
    """Spare receive buffers, largest kept; shared by every reader (thread-safe)."""

    def __init__(self, keep: int = 4) -> None:
        self._spare: list[bytearray] = []
        self._keep = keep
        self._lock = threading.Lock()

    def take(self, most: int, above: int = 0) -> bytearray:
        """The largest spare buffer of more than *above* and at most *most* bytes, else a
        new one: 64 KiB to start, four times *above* to grow."""
        with self._lock:
            for i in range(len(self._spare) - 1, -1, -1):
                if above < len(self._spare[i]) <= most:
                    return self._spare.pop(i)
        return bytearray(min(most, max(_START, above * 4)))

    def give(self, buf: bytearray) -> None:
        if len(buf) < _START:
            return
        with self._lock:
            self._spare.append(buf)
            self._spare.sort(key=len)
            del self._spare[:-self._keep]


_buffers = _Buffers()


def _write_all(fd: int, data: bytes | memoryview) -> int:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    return len(data)


class BulkReader(asyncio.BufferedProtocol):
    """Receives a connection's data, handing out chunks of at most *size* bytes.

    ``await next_chunk(timeout)``: the next chunk, None at the end of the data,
    TimeoutError after *timeout* seconds with nothing received, or the error
    the connection was lost with. *rcvbuf*: a socket receive buffer to ask for.
    *loop*: the running loop, when the caller has it.
    """

    LINGER = 0.002

    def __init__(self, size: int, *, rcvbuf: int | None = None,
                 loop: asyncio.AbstractEventLoop | None = None) -> None:
        if size > 1 << 17:
            prime_allocator(size)
        self._max = max(size, 1 << 12)
        self._buf = _buffers.take(self._max)
        self._view = memoryview(self._buf)
        self._pos = 0
        self._rcvbuf = rcvbuf
        self._chunks: collections.deque[bytes] = collections.deque()
        self._eof = False
        self._exc: BaseException | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._paused = False
        # the caller's loop when it has it at hand (asking for the running loop costs a getpid)
        self._loop = loop if loop is not None else asyncio.get_running_loop()
        self._linger: asyncio.TimerHandle | None = None
        self._watchdog: asyncio.TimerHandle | None = None
        self._timeout: float | None = None
        self._last = self._loop.time()
        self.received = 0
        self.transport: asyncio.Transport | None = None
        self._tls = False
        self.closed = self._loop.create_future()

    # -- the protocol side -------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # same API on uvloop
        # asked now: asyncio's TLS transport answers no questions once closed
        self._tls = transport.get_extra_info("ssl_object") is not None
        if self._rcvbuf:
            sock = transport.get_extra_info("socket")
            if sock is not None:
                try:  # room for whole chunks per receive: fewer wake-ups on bulk transfers
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self._rcvbuf)
                except OSError:
                    pass

    def get_buffer(self, sizehint: int) -> memoryview:
        if self._pos >= len(self._buf):
            self._flush()
        return self._view[self._pos:]

    def buffer_updated(self, nbytes: int) -> None:
        self._pos += nbytes
        self.received += nbytes
        self._last = self._loop.time()
        if self._pos >= len(self._buf):
            self._flush()
        if self._waiter is None:
            return
        if self._chunks or self._pos * 2 >= len(self._buf):
            self._wake()
        elif self._linger is None:
            self._linger = self._loop.call_later(self.LINGER, self._wake)

    def eof_received(self) -> bool | None:
        self._eof = True
        self._wake()
        return False  # close: the data ends here

    def connection_lost(self, exc: Exception | None) -> None:
        self._eof = True
        self._exc = exc
        self._wake()
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        if not self.closed.done():
            self.closed.set_result(None)
        if self._pos:
            self._flush()
        # No more writes into the buffer can come: the next transfer may use it.
        self._view.release()
        _buffers.give(self._buf)
        self._buf = bytearray()
        self._view = memoryview(self._buf)

    # -- internals -----------------------------------------------------------------

    def _flush(self) -> None:
        if self._pos:
            self._chunks.append(bytes(self._view[:self._pos]))
            if self._pos == len(self._buf) and len(self._buf) < self._max:
                # A full buffer in one go: the stream is fast, take a bigger one.
                self._view.release()
                old, self._buf = self._buf, _buffers.take(self._max, above=len(self._buf))
                _buffers.give(old)
                self._view = memoryview(self._buf)
            self._pos = 0
        if len(self._chunks) >= 2 and not self._paused and not self._eof and self.transport is not None:
            self._paused = True
            self.transport.pause_reading()

    def _wake(self) -> None:
        if self._linger is not None:
            self._linger.cancel()
            self._linger = None
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def _check_idle(self) -> None:
        """The watchdog: fail the waiting consumer when nothing arrived for the timeout."""
        self._watchdog = None
        if self._timeout is None or self._waiter is None or self._waiter.done():
            return
        due = self._last + self._timeout
        if self._loop.time() >= due:
            self._waiter.set_exception(TimeoutError())
        else:
            self._watchdog = self._loop.call_at(due, self._check_idle)

    # -- the consumer side -----------------------------------------------------------

    async def next_chunk(self, timeout: float | None) -> bytes | None:  # noqa: ASYNC109 - one watchdog
        """The next chunk, or None at the end of the data; TimeoutError after
        *timeout* seconds without data."""
        woken = False
        while not self._chunks:
            if self._pos and (self._eof or woken or self._pos * 2 >= len(self._buf)):
                self._flush()  # hand over what arrived rather than wait for more
                break
            if self._eof:
                if self._exc is not None:
                    raise self._exc
                return None
            self._timeout = timeout
            if timeout is not None and self._watchdog is None:
                self._watchdog = self._loop.call_at(self._last + timeout, self._check_idle)
            if self._pos and self._linger is None:  # data is here already: wait only briefly
                self._linger = self._loop.call_later(self.LINGER, self._wake)
            self._waiter = self._loop.create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
                if self._linger is not None:
                    self._linger.cancel()
                    self._linger = None
            woken = True
        chunk = self._chunks.popleft()
        if self._paused and len(self._chunks) < 2 and self.transport is not None:
            self._paused = False
            self.transport.resume_reading()
        return chunk

    async def splice_into(self, fd: int, held: bytes, timeout: float | None,  # noqa: ASYNC109 - the watchdog
                          most: int | None = None) -> int | None:
        """Write *held* (bytes the caller took but did not use), then the rest of the
        data, into *fd*; the number of bytes written, or None when splice cannot be
        used here (nothing is consumed then: read on with :meth:`next_chunk`).

        Stops at the end of the data, or once *most* bytes were written. Waits end as
        in :meth:`next_chunk`: TimeoutError after *timeout* seconds without data, the
        connection's error when it fails; a failed write raises :class:`SinkWriteError`.
        Check *fd* with :func:`can_splice_into` first.
        """
        transport = self.transport
        if _splice is None or self._tls or transport is None:
            return None
        sock = transport.get_extra_info("socket")
        if sock is None:
            return None
        if not self._eof:
            transport.pause_reading()  # from here on the data is read through the duplicate only
            self._paused = True
        if self._pos:
            self._flush()
        moved = 0
        try:
            for part in (held, *self._chunks):
                if most is not None:
                    part = part[:most - moved]
                moved += _write_all(fd, part)
        except OSError as exc:
            raise SinkWriteError(exc.errno, exc.strerror) from exc
        self._chunks.clear()
        if self._eof or (most is not None and moved >= most):
            if self._eof and self._exc is not None:
                raise self._exc
            return moved
        sfd = os.dup(sock.fileno())
        try:
            r, w = os.pipe()
        except OSError:
            os.close(sfd)
            raise
        try:
            return moved + await self._splice(sfd, r, w, fd, timeout, None if most is None else most - moved)
        finally:
            os.close(sfd)
            os.close(r)
            os.close(w)

    async def _splice(self, sfd: int, r: int, w: int, fd: int, timeout: float | None,  # noqa: ASYNC109
                      most: int | None) -> int:
        import fcntl

        try:
            size = fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, _PIPE)
        except OSError:
            size = 1 << 16  # the default pipe
        splice = cast("Callable[..., int]", _splice)
        loop = self._loop
        flags = os.SPLICE_F_MOVE | os.SPLICE_F_NONBLOCK
        moved = 0
        out = True  # pipe -> fd by splice (else read + write)
        done = self._waiter = loop.create_future()

        def drain(n: int) -> None:
            nonlocal out
            while n:
                if out:
                    try:
                        k = splice(r, fd, n, flags=os.SPLICE_F_MOVE)
                    except OSError as exc:
                        if exc.errno not in _NO_SPLICE_OUT:
                            raise
                        out = False
                        continue
                else:
                    k = _write_all(fd, os.read(r, n))
                if k <= 0:
                    raise OSError(errno.EIO, "splice moved nothing")
                n -= k

        def readable() -> None:
            nonlocal moved
            if done.done():
                return
            want = size if most is None else min(size, most - moved)
            try:
                n = splice(sfd, w, want, flags=flags)
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                done.set_exception(exc)
                return
            if n == 0:
                self._eof = True
                done.set_result(None)
                return
            self._last = loop.time()
            self.received += n
            try:
                drain(n)
            except OSError as exc:
                err = SinkWriteError(exc.errno, exc.strerror)
                err.__cause__ = exc
                done.set_exception(err)
                return
            moved += n
            if most is not None and moved >= most:
                done.set_result(None)

        self._timeout = timeout
        if timeout is not None and self._watchdog is None:
            self._watchdog = loop.call_at(self._last + timeout, self._check_idle)
        loop.add_reader(sfd, readable)
        try:
            await done
        finally:
            loop.remove_reader(sfd)
            self._waiter = None
            if self._watchdog is not None:
                self._watchdog.cancel()
                self._watchdog = None
        return moved

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()
            if self._tls:
                # TLS close() sends close_notify, then holds the socket until the peer answers
                # (up to 30 s, past the Client and its loop): the data needs no answer
                self.transport.abort()

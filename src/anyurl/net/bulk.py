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
"""

from __future__ import annotations

import asyncio
import collections
import socket
import threading
from typing import cast

__all__ = ["BulkReader"]

_START = 1 << 16


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

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()
            if self._tls:
                # TLS close() sends close_notify, then holds the socket until the peer answers
                # (up to 30 s, past the Client and its loop): the data needs no answer
                self.transport.abort()


_primed = 0


def prime_allocator(chunk_size: int) -> None:
    """Free one large block so glibc's malloc serves chunk-sized buffers from its heap.

    glibc maps every allocation above its (dynamic) mmap threshold, 128 KiB at
    start, and unmaps it on free: each 1 MiB chunk of a transfer then costs
    ~256 page faults. Freeing one mapped block raises the threshold to its size
    (glibc's documented adjustment, capped at 32 MiB), after which chunk
    buffers are reused from the heap. In bench/suites/http.py this cut the page
    faults of a 1 GiB download from 30,000-290,000 to ~8,500 and made its CPU
    time steady. Other allocators just see one short-lived allocation.
    """
    global _primed
    size = min(32 << 20, max(4 << 20, 4 * chunk_size))
    if size > _primed:
        _primed = size
        block = bytes(size)  # calloc: mapped, never touched
        del block

"""The two bases every hostile test double stands on; each double says only what it sends.

- :class:`ThreadServer`: threads of the test process with a shared stop flag and a
  time cap, a loopback listener on a free port whose connections go to
  :meth:`ThreadServer.answer` one at a time, used as ``with srv:``; exit stops the
  loops, joins the threads and closes the connections it held open.
- :class:`AsyncServer`: an asyncio server on a free loopback port, used as
  ``async with srv:``; each connection runs :meth:`AsyncServer.serve` under a
  deadline, ends quietly when the client goes away, and has its writer closed.
  Exit stops accepting, lets the handlers still running finish for ``settle``
  seconds, then cancels them.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from types import TracebackType
from typing import Any, Self

HOST = "127.0.0.1"
# what a client going away (or a deadline) looks like inside a handler
_GONE = (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, OSError)


class ThreadServer:
    """Threads with a shared stop flag and a time cap."""

    def __init__(self, max_seconds: float = 60.0) -> None:
        self.stop = threading.Event()
        self.max_seconds = max_seconds
        self.started = time.monotonic()
        self._threads: list[threading.Thread] = []
        self.host = HOST
        self.port = 0
        self.listener: socket.socket | None = None
        self.held: list[socket.socket] = []  # connections kept open until exit

    def _tcp_listener(self, host: str = HOST) -> socket.socket:
        """A listener on a free port (self.port), its accept() bounded so loops see stop."""
        listener = socket.create_server((host, 0))
        listener.settimeout(0.2)
        self.host = host
        self.port = listener.getsockname()[1]
        self.listener = listener
        return listener

    def _spawn(self, target: object, *args: object) -> None:
        t = threading.Thread(target=target, args=args, daemon=True)  # type: ignore[arg-type]
        t.start()
        self._threads.append(t)

    concurrent = False  # True: each connection answered in a thread of its own

    def running(self) -> bool:
        return not self.stop.is_set() and time.monotonic() - self.started < self.max_seconds

    def _run(self) -> None:
        """The main loop, in its own thread from ``__enter__`` on: by default, accept
        connections on ``listener`` until stopped and :meth:`answer` each in turn."""
        assert self.listener is not None
        with self.listener:
            while self.running():
                try:
                    conn, _ = self.listener.accept()
                except TimeoutError:
                    continue
                if self.concurrent:
                    self._spawn(self.answer, conn)  # a slow answer never holds up the others
                else:
                    self.answer(conn)

    @staticmethod
    def read_until(conn: socket.socket, end: bytes, max_bytes: int) -> bytes:
        """What the client sent until *end* (or it stopped, or *max_bytes* came), 5 s per read."""
        conn.settimeout(5)
        data = b""
        while end not in data and len(data) < max_bytes:
            more = conn.recv(4096)
            if not more:
                break
            data += more
        return data

    def answer(self, conn: socket.socket) -> None:
        """Serve one connection (close it, or keep it in ``held`` to close at exit)."""
        raise NotImplementedError

    def close(self) -> None:
        self.stop.set()

    def __enter__(self) -> Self:
        self._spawn(self._run)
        return self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
        for t in self._threads:
            t.join(5)
        for conn in self.held:
            conn.close()


class AsyncServer:
    """An asyncio server on a free loopback port; subclasses write :meth:`serve`."""

    #: each connection's deadline (seconds), all of it
    deadline: float = 60.0

    def __init__(self, *, settle: float = 0.0) -> None:
        self.port = 0
        self.connections = 0
        self.settle = settle
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raise NotImplementedError

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.connections += 1
        try:
            async with asyncio.timeout(self.deadline):
                await self.serve(reader, writer)
        except (*_GONE, asyncio.CancelledError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError, asyncio.CancelledError):
                await writer.wait_closed()
            self._tasks.discard(task)

    async def __aenter__(self) -> Self:
        self._server = await asyncio.start_server(self._handle, HOST, 0, limit=64 * 1024)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        assert self._server is not None
        self._server.close()
        if self._tasks and self.settle:  # handlers that end once the client is gone
            await asyncio.wait(list(self._tasks), timeout=self.settle)
        for t in list(self._tasks):
            t.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()


async def nntp_quit_or_unknown(verb: str, writer: asyncio.StreamWriter) -> bool:
    """The NNTP fakes' last branch: QUIT answered 205 (True: end the session), any other verb 500."""
    if verb == "QUIT":
        writer.write(b"205 bye\r\n")
        await writer.drain()
        return True
    writer.write(b"500 unknown command\r\n")
    return False


async def serve_on_loopback(handle: Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]) -> None:
    """A fault server run as its own process: *handle* on a free loopback port, the port printed
    on the first line of standard output for the test that started it, served until killed."""
    server = await asyncio.start_server(handle, HOST, 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


def run_until_interrupted(main: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """``asyncio.run(main())``; SIGINT, how such a process is stopped, exits 0."""
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)

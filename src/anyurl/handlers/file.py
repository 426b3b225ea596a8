"""The file: scheme (RFC 1738 section 3.10): files on this machine.

A file URL names a file on one particular host. Only ``file:///p``,
``file://localhost/p`` and this machine's own host name (compared with
:func:`socket.gethostname`, never looked up in DNS) are read; any other host
is refused with :class:`~anyurl.errors.UnsafeURL`, because reading the local
path instead would silently read the wrong file.

Reads of regular files run in daemon worker threads so the event loop is
never blocked, one ``client.limits.chunk_size`` block at a time; each call
waits at most ``Timeouts.read``, and a call stuck in the kernel (a dead
network mount) is abandoned without holding up interpreter exit. FIFOs,
sockets and character devices are opened with ``O_NONBLOCK`` (an
``open()`` of a FIFO with no writer would otherwise block for good) and read
as the event loop reports them readable, under the same ``Timeouts.read``.
"""

from __future__ import annotations

import asyncio
import errno
import os
import queue
import socket
import stat
import threading
from collections.abc import AsyncIterator, Callable
from typing import IO, TYPE_CHECKING, Any, TypeVar

from ..errors import (
    AccessDenied,
    ConfigurationError,
    FetchTimeout,
    ResourceNotFound,
    TransferError,
    UnsafeURL,
)
from ..response import Body, Entry, Stat, guess_content_type
from ..urls import URL, FileURL
from .base import Handler, Request, apply_length, prime_allocator, render_entries

if TYPE_CHECKING:
    from datetime import UTC, datetime
else:
    try:  # the C module itself: the same classes without datetime.py's pure-Python copy (~1 ms of start-up)
        from _datetime import UTC, datetime
    except ImportError:  # not CPython
        from datetime import UTC, datetime

__all__ = ["FileHandler", "file_url_for", "local_path"]

T = TypeVar("T")


def file_url_for(path: str) -> str:
    """The ``file:///...`` URL of absolute local *path*, percent-encoded as the serializer does."""
    return str(FileURL("file", "", path.lstrip("/")))


def local_path(url: FileURL) -> str:
    """The local path *url* names: its decoded path under "/" (non-UTF-8 octets kept as surrogates)."""
    return "/" + url.path


def _is_this_machine(host: str) -> bool:
    """Empty, "localhost" or our own host name; no DNS lookup, ever."""
    h = host.strip().rstrip(".").lower()
    if h in ("", "localhost"):
        return True
    return h == socket.gethostname().rstrip(".").lower()


def _translate(exc: OSError, url: object, path: str) -> TransferError:
    """An OSError from the file system as an anyurl error naming the path."""
    # the system's words, not as a reply: no server said them ("server said: ..." read oddly)
    why = exc.strerror or str(exc)
    if isinstance(exc, FileNotFoundError) or exc.errno in (errno.ENOENT, errno.ENOTDIR):
        detail = "" if exc.errno == errno.ENOENT else f" ({why})"
        return ResourceNotFound(f"no such file: {path}{detail}", url=url)
    if isinstance(exc, PermissionError) or exc.errno in (errno.EACCES, errno.EPERM):
        return AccessDenied(f"permission denied: {path}", url=url)
    return TransferError(f"cannot read {path}: {why}", url=url)


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISDIR(mode):
        return "directory"
    return "file"


def _list_directory(path: str, limit: int, url: object) -> list[Entry]:
    """Sorted entries of directory *path* (runs in a worker thread)."""
    entries: list[Entry] = []
    with os.scandir(path) as it:
        for de in it:
            if len(entries) >= limit:
                raise TransferError(f"directory has more than {limit} entries (Limits.max_entries)", url=url)
            here = file_url_for(os.path.join(path, de.name))
            try:
                lst = de.stat(follow_symlinks=False)
            except OSError:
                entries.append(Entry(de.name, here, "file", meta={"kind_known": False}))
                continue
            kind = _kind(lst.st_mode)
            size: int | None = lst.st_size
            meta: dict[str, Any] = {}
            key = None
            if kind == "symlink":
                # the OS resolves the link: its target, and the URL of what it leads to (the key)
                try:
                    meta["target"] = os.readlink(de.path)
                    real = os.path.realpath(de.path)
                    st = os.stat(real)
                    is_dir = stat.S_ISDIR(st.st_mode)
                    meta["target_kind"] = "directory" if is_dir else "file"
                    key = file_url_for(real) + ("/" if is_dir and not real.endswith("/") else "")
                    size = None if is_dir else st.st_size  # a link's useful size is its target's
                except OSError:
                    size = None  # a dangling (or unreadable) link
            elif kind == "directory":
                size = None
            entries.append(Entry(
                name=de.name,
                url=here + ("/" if kind == "directory" else ""),
                kind=kind,
                size=size,
                modified=datetime.fromtimestamp(lst.st_mtime, UTC),
                key=key,
                meta=meta,
            ))
    entries.sort(key=lambda e: e.name)
    return entries


def _open_at(path: str, offset: int) -> tuple[IO[bytes], os.stat_result]:
    """Open regular file *path* for reading and seek to *offset* (runs in a worker thread).

    O_NONBLOCK: if *path* was swapped for a FIFO since it was checked, this open
    must still return at once; the type is then checked on the open descriptor.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    f = open(fd, "rb", buffering=0)  # noqa: SIM115 - closed by the body's generator
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory")
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EAGAIN, "changed from a regular file while being opened")
        os.set_blocking(fd, True)
        if offset:
            f.seek(offset)
    except BaseException:
        f.close()
        raise
    return f, st


class _Workers:
    """Daemon threads for blocking file-system calls.

    Unlike ``asyncio.to_thread`` (whose threads ``asyncio.run`` and interpreter
    exit wait for), a call that never returns (a FIFO, a dead NFS mount) can be
    abandoned at its deadline: its thread is a daemon and holds nothing up.
    Idle threads are kept for reuse and end after a while.
    """

    IDLE_SECONDS = 30.0

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle = 0
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], asyncio.AbstractEventLoop,
                                            asyncio.Future[Any], Callable[[Any], None] | None]]
        self._jobs = queue.SimpleQueue()

    async def run(self, fn: Callable[[], T], *, abandoned: Callable[[T], None] | None = None) -> T:
        """``fn()`` in a worker; *abandoned* gets a result that arrives after the caller gave up."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[T] = loop.create_future()
        with self._lock:
            if self._idle:
                self._idle -= 1
            else:
                threading.Thread(target=self._work, name="anyurl-file", daemon=True).start()
        self._jobs.put((fn, loop, fut, abandoned))
        return await fut

    def _work(self) -> None:
        while True:
            try:
                fn, loop, fut, abandoned = self._jobs.get(timeout=self.IDLE_SECONDS)
            except queue.Empty:
                with self._lock:
                    if self._idle:  # nobody counts on this thread: end it
                        self._idle -= 1
                        return
                continue  # a job was promised to the idle threads: stay for it
            try:
                result, error = fn(), None
            except BaseException as exc:  # handed to the waiting task
                result, error = None, exc
            try:
                loop.call_soon_threadsafe(_settle, fut, result, error, abandoned)
            except RuntimeError:  # the loop is closed: nobody waits any more
                if error is None and abandoned is not None:
                    abandoned(result)
            with self._lock:
                self._idle += 1


def _settle(fut: asyncio.Future[Any], result: Any, error: BaseException | None,
            abandoned: Callable[[Any], None] | None) -> None:
    if fut.done():  # the caller timed out or was cancelled
        if error is None and abandoned is not None:
            abandoned(result)
    elif error is not None:
        fut.set_exception(error)
    else:
        fut.set_result(result)


_workers = _Workers()


async def _bounded(fn: Callable[[], T], wait: float | None, doing: str, url: URL, path: str,
                   abandoned: Callable[[T], None] | None = None) -> T:
    """``fn()`` in a worker, given up after *wait* s (Timeouts.read) with FetchTimeout."""
    try:
        async with asyncio.timeout(wait):
            return await _workers.run(fn, abandoned=abandoned)
    except TimeoutError as exc:
        raise FetchTimeout(f"{doing} {path} took longer than {wait or 0:g} s (Timeouts.read)", url=url) from exc
    except OSError as exc:
        raise _translate(exc, url, path) from exc


def _close_file(opened: tuple[IO[bytes], os.stat_result]) -> None:
    opened[0].close()


async def _wait_readable(fd: int) -> bool:
    """Wait until the event loop sees *fd* readable; False if it cannot watch *fd*
    (/dev/zero and the like do not poll: they are always ready)."""
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    try:
        loop.add_reader(fd, wake)
    except (PermissionError, ValueError):
        return False
    try:
        await ready
    finally:
        loop.remove_reader(fd)
    return True


class FileHandler(Handler):
    """Reads ``file:`` URLs from the local file system."""

    def _checked_path(self, url: URL) -> str:
        """The local path of *url*, after the policy and RFC 1738 host checks."""
        if not isinstance(url, FileURL):
            raise ConfigurationError(f"FileHandler cannot open a {type(url).__name__}", url=url)
        if not self.context.policy.allow_file_urls:
            raise UnsafeURL("file URLs are disabled by the policy (Policy.allow_file_urls=False)", url=url)
        if not _is_this_machine(url.host):
            raise UnsafeURL(
                "file URLs name files on one machine (RFC 1738 section 3.10): "
                f"host {url.host!r} is not this machine", url=url)
        path = local_path(url)
        if "\0" in path:
            raise UnsafeURL("path contains NUL after decoding", url=url)
        return path

    async def open(self, req: Request) -> Body:
        """Stream the file at ``req.url`` from byte ``req.offset``, or list a directory."""
        url, offset = req.url, req.offset
        path = self._checked_path(url)
        wait = req.read_timeout

        async def call(fn: Callable[[], T], doing: str,
                       abandoned: Callable[[T], None] | None = None) -> T:
            return await _bounded(fn, wait, doing, url, path, abandoned)

        st = await call(lambda: os.stat(path), "looking up")
        meta: dict[str, Any] = {"path": path, "modified": datetime.fromtimestamp(st.st_mtime, UTC)}
        if stat.S_ISDIR(st.st_mode):
            entries = await call(lambda: _list_directory(path, req.limits.max_entries, url), "listing")
            listing = render_entries(entries)[offset:]
            return Body.from_bytes(url, listing, content_type="text/plain", charset="utf-8",
                                   entries=entries, meta=meta, offset=offset)
        chunk = req.limits.chunk_size
        if not stat.S_ISREG(st.st_mode):
            return apply_length(await self._open_special(req, path, st, meta), req.length)
        f, st = await call(lambda: _open_at(path, offset), "opening", _close_file)
        prime_allocator(chunk)
        size = max(st.st_size - offset, 0)

        async def chunks() -> AsyncIterator[bytes]:
            try:
                while True:
                    data = await call(lambda: f.read(chunk), "reading")
                    if not data:
                        return
                    yield data
            finally:
                f.close()

        async def on_close() -> None:
            f.close()  # also when the body was never iterated

        body = Body(url, chunks(), content_type=lambda: guess_content_type(path), size=size, meta=meta,
                    offset=offset, on_close=on_close, resumable=True)
        return apply_length(body, req.length)

    async def stat(self, req: Request) -> Stat:
        """One stat(2) of the local file: size, mtime, type; nothing is opened."""
        url = req.url
        path = self._checked_path(url)
        st = await _bounded(lambda: os.stat(path), req.read_timeout, "looking up", url, path)
        if stat.S_ISDIR(st.st_mode):
            kind, ctype = "directory", "text/plain"
        else:
            kind, ctype = "file", guess_content_type(path)
        regular = stat.S_ISREG(st.st_mode)  # a FIFO or device is a "file" too: meta["mode"] says which
        return Stat(url=str(url), kind=kind, size=st.st_size if regular else None,
                    modified=datetime.fromtimestamp(st.st_mtime, UTC), content_type=ctype,
                    meta={"path": path, "mode": stat.filemode(st.st_mode)})
    async def _open_special(self, req: Request, path: str, st: os.stat_result,
                            meta: dict[str, Any]) -> Body:
        """A FIFO, socket or device: opened without blocking, read as data arrives,
        each wait bounded by ``Timeouts.read``; *offset* bytes are read and dropped."""
        url, offset = req.url, req.offset
        wait = req.read_timeout
        chunk = req.limits.chunk_size
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as exc:
            raise _translate(exc, url, path) from exc
        meta["file_type"] = ("fifo" if stat.S_ISFIFO(st.st_mode) else "socket" if stat.S_ISSOCK(st.st_mode)
                             else "device")

        def close() -> None:
            nonlocal fd
            if fd >= 0:
                os.close(fd)
                fd = -1

        pollable = True

        async def read() -> bytes:
            nonlocal pollable
            while True:
                if not pollable:  # /dev/zero and the like never wait: read them like a file
                    return await _bounded(lambda: os.read(fd, chunk), wait, "reading", url, path)
                # wait first: a FIFO whose writer has not come yet reads as EOF, but does
                # not poll readable until a writer came (and wrote, or went)
                try:
                    async with asyncio.timeout(wait):
                        pollable = await _wait_readable(fd)
                except TimeoutError as exc:
                    raise FetchTimeout(f"no data from {path} within {wait:g} s (Timeouts.read)",
                                       url=url) from exc
                if not pollable:
                    continue
                try:
                    return os.read(fd, chunk)
                except BlockingIOError:
                    continue  # woken, but another reader took the data
                except OSError as exc:
                    raise _translate(exc, url, path) from exc

        async def chunks() -> AsyncIterator[bytes]:
            try:
                skip = offset
                while True:
                    data = await read()
                    if not data:
                        return
                    if skip:
                        dropped = min(skip, len(data))
                        skip -= dropped
                        data = data[dropped:]
                        if not data:
                            continue
                    yield data
            finally:
                close()

        async def on_close() -> None:
            close()

        return Body(url, chunks(), content_type=lambda: guess_content_type(path), size=None, meta=meta,
                    offset=offset, on_close=on_close)

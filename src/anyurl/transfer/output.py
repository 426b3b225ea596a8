"""The one place anyurl opens a local file to write a download into.

A name anyurl chose (``mirror``, ``get -d``/``-O``, the part files of every download) is
never opened through a symlink: the final component is opened with ``O_NOFOLLOW``, and
below a mirror's DIR every directory between DIR and the file is opened the same way, so
a symlink planted in DIR (to a FIFO, a device, a file or a directory outside it) is
refused, not written through. Only a path the user named (``get -o PATH``,
``download(client, url, PATH)``) may be a symlink or a device: that is their choice.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from typing import TYPE_CHECKING

from ..errors import AnyURLError, TransferError

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

__all__ = ["SymlinkRefused", "is_special", "open_output", "open_unnamed", "save_part"]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC


class SymlinkRefused(OSError):
    """A path anyurl chose leads through a symlink: never written through."""


def _refused(path: str) -> SymlinkRefused:
    return SymlinkRefused(errno.ELOOP, "is a symlink (or leads through one): never written through", path)


def _open_dir_chain(root: str, path: str) -> int:
    """A descriptor of *path*'s directory, opened component by component from *root*
    (which the user named, so it may itself be a symlink) without following any symlink."""
    rel = os.path.relpath(os.path.dirname(path) or ".", root)
    fd = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC)
    if rel == ".":
        return fd
    if rel == ".." or rel.startswith("../"):
        os.close(fd)
        raise _refused(path)  # not below root: never expected, refused all the same
    try:
        for part in rel.split("/"):
            try:
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise _refused(path) from None
                raise
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_output(path: str, *, truncate: bool = False, create: bool = True, follow: bool = False,
                below: str | None = None, mode: int = 0o666) -> int:
    """Open *path* for writing; the descriptor.

    *follow*: the user named *path*, which may be a symlink or a device. Otherwise the last
    component is never a symlink (:class:`SymlinkRefused`, an OSError), and with *below*
    (a directory the user named) no directory between it and *path* is one either.
    """
    flags = os.O_WRONLY | _CLOEXEC | (os.O_CREAT if create else 0) | (os.O_TRUNC if truncate else 0)
    if follow:
        return os.open(path, flags, mode)
    flags |= _NOFOLLOW
    if below is None:
        try:
            return os.open(path, flags, mode)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise _refused(path) from None
            raise
    dfd = _open_dir_chain(below, path)
    try:
        return os.open(os.path.basename(path), flags, mode, dir_fd=dfd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _refused(path) from None
        raise
    finally:
        os.close(dfd)


def is_special(path: str, *, follow: bool = False) -> bool:
    """True when *path* exists and is neither a regular file nor a directory (a FIFO, a device,
    a terminal: written into in place). Without *follow*, a symlink is not special: it is a
    name that is taken, and :func:`open_output` refuses to write through it."""
    try:
        mode = (os.stat if follow else os.lstat)(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode))


_TMPFILE_FLAGS = getattr(os, "O_TMPFILE", 0) | os.O_RDWR | _CLOEXEC


def open_unnamed(directory: str) -> int:
    """An unnamed file (Linux ``O_TMPFILE``) in *directory*, linked into place once whole."""
    return os.open(directory, _TMPFILE_FLAGS, 0o666)


async def save_part(part: str, path: str, chunks: AsyncIterator[bytes], url: object, *, below: str,
                    place: Callable[[str, str], bool], mtime: float | None = None) -> tuple[int, bool]:
    """Write *chunks* to the part file *part* (made anew inside *below*, never through a symlink),
    date it *mtime*, then ``place(part, path)``: (the bytes written, what *place* said). No part
    stays behind a failure. An OS error reads "cannot write PATH: reason"; anyurl's own errors
    (a transfer cut mid-body, a refusal of *place*) pass as they are, though some are OSErrors."""
    try:
        fd = open_output(part, truncate=True, below=below)
    except (SymlinkRefused, OSError) as exc:
        raise TransferError(f"cannot write {part}: {exc.strerror or exc}", url=url) from exc
    done = 0
    placed = False
    try:
        try:
            async for chunk in chunks:
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd, view):]
                done += len(chunk)
            if mtime is not None:  # the remote date, so that -N works next time
                os.utime(fd, (mtime, mtime))
        finally:
            os.close(fd)
        written = place(part, path)
        placed = True
    except OSError as exc:
        if isinstance(exc, AnyURLError):
            raise
        raise TransferError(f"cannot write {path}: {exc.strerror or exc}", url=url) from exc
    finally:
        if not placed:
            with contextlib.suppress(OSError):
                os.unlink(part)
    return done, written

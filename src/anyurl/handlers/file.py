"""The file: scheme (RFC 1738 section 3.10): files on this machine.

A file URL names a file on one particular host. Only ``file:///p``,
``file://localhost/p`` and this machine's own host name (compared with
:func:`socket.gethostname`, never looked up in DNS) are read; any other host
is refused with :class:`~anyurl.errors.UnsafeURL`, because reading the local
path instead would silently read the wrong file.

Reads run in a worker thread (``asyncio.to_thread``) so the event loop is
never blocked, one ``client.limits.chunk_size`` block at a time.
"""

from __future__ import annotations

import asyncio
import errno
import os
import socket
import stat
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import IO, Any

from ..errors import (
    AccessDenied,
    ConfigurationError,
    ResourceNotFound,
    TransferError,
    UnsafeURL,
)
from ..response import Body, Entry, Stat, guess_content_type
from ..urls import URL, FileURL
from .base import Handler, Request, apply_length, prime_allocator, render_entries

__all__ = ["FileHandler", "file_url_for", "local_path"]


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
    why = exc.strerror or str(exc)
    if isinstance(exc, FileNotFoundError) or exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return ResourceNotFound(f"no such file: {path}", url=url, reply=why)
    if isinstance(exc, PermissionError) or exc.errno in (errno.EACCES, errno.EPERM):
        return AccessDenied(f"permission denied: {path}", url=url, reply=why)
    return TransferError(f"cannot read {path}: {why}", url=url, reply=why)


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "link"
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
            try:
                lst = de.stat(follow_symlinks=False)
            except OSError:
                entries.append(Entry(de.name, file_url_for(os.path.join(path, de.name)), "unknown"))
                continue
            kind = _kind(lst.st_mode)
            size: int | None = lst.st_size
            if kind == "link":
                try:  # a link's useful size is its target's
                    size = os.stat(de.path).st_size
                except OSError:
                    size = None
            elif kind == "directory":
                size = None
            entries.append(Entry(
                name=de.name,
                url=file_url_for(os.path.join(path, de.name)) + ("/" if kind == "directory" else ""),
                kind=kind,
                size=size,
                modified=datetime.fromtimestamp(lst.st_mtime, UTC),
            ))
    entries.sort(key=lambda e: e.name)
    return entries


def _open_at(path: str, offset: int) -> tuple[IO[bytes], os.stat_result]:
    """Open *path* for reading and seek to *offset* (runs in a worker thread)."""
    f = open(path, "rb", buffering=0)  # noqa: SIM115 - closed by the body's generator
    try:
        st = os.fstat(f.fileno())
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory")
        if offset:
            f.seek(offset)
    except BaseException:
        f.close()
        raise
    return f, st


class FileHandler(Handler):
    """Reads ``file:`` URLs from the local file system."""

    def _checked_path(self, url: URL) -> str:
        """The local path of *url*, after the policy and RFC 1738 host checks."""
        if not isinstance(url, FileURL):
            raise ConfigurationError(f"FileHandler cannot open a {type(url).__name__}", url=url)
        if not self.client.policy.allow_file_urls:
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
        try:
            st = await asyncio.to_thread(os.stat, path)
        except OSError as exc:
            raise _translate(exc, url, path) from exc
        meta: dict[str, Any] = {"path": path, "modified": datetime.fromtimestamp(st.st_mtime, UTC)}
        if stat.S_ISDIR(st.st_mode):
            try:
                entries = await asyncio.to_thread(_list_directory, path, req.limits.max_entries, url)
            except OSError as exc:
                raise _translate(exc, url, path) from exc
            listing = render_entries(entries)[offset:]
            return Body.from_bytes(url, listing, content_type="text/plain", charset="utf-8",
                                   entries=entries, meta=meta, offset=offset)
        try:
            f, st = await asyncio.to_thread(_open_at, path, offset)
        except OSError as exc:
            raise _translate(exc, url, path) from exc
        regular = stat.S_ISREG(st.st_mode)
        prime_allocator(req.limits.chunk_size)
        size = max(st.st_size - offset, 0) if regular else None
        chunk = req.limits.chunk_size

        async def chunks() -> AsyncIterator[bytes]:
            try:
                while True:
                    try:
                        data = await asyncio.to_thread(f.read, chunk)
                    except OSError as exc:
                        raise _translate(exc, url, path) from exc
                    if not data:
                        return
                    yield data
            finally:
                f.close()

        async def on_close() -> None:
            f.close()  # also when the body was never iterated

        body = Body(url, chunks(), content_type=guess_content_type(path), size=size, meta=meta,
                    offset=offset, on_close=on_close, resumable=regular)
        return apply_length(body, req.length)

    async def stat(self, req: Request) -> Stat:
        """One stat(2) of the local file: size, mtime, type; nothing is opened."""
        url = req.url
        path = self._checked_path(url)
        try:
            st = await asyncio.to_thread(os.stat, path)
        except OSError as exc:
            raise _translate(exc, url, path) from exc
        if stat.S_ISDIR(st.st_mode):
            kind, ctype = "directory", "text/plain"
        else:
            kind, ctype = ("file" if stat.S_ISREG(st.st_mode) else "special"), guess_content_type(path)
        return Stat(url=str(url), kind=kind, size=st.st_size if kind == "file" else None,
                    modified=datetime.fromtimestamp(st.st_mtime, UTC), content_type=ctype,
                    meta={"path": path, "mode": stat.filemode(st.st_mode)})

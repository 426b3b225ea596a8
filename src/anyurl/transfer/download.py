"""Download a URL to a local file safely: write to a temporary file, rename on success.

``await download(client, url, dest)`` streams the resource into
``.<name>.anyurl-part`` next to *dest* and renames it into place with
:func:`os.replace` only once every byte arrived, so a failed or interrupted
download never leaves a partial file under the final name. (On Linux, a
download without ``resume`` writes an unnamed ``O_TMPFILE`` file in *dest*'s
directory instead and links it into place at the end: the same guarantee,
fewer directory updates, nothing to clean up after a failure.) With
``resume=True`` a failed download keeps its part file, and the next
``resume=True`` call continues from the part file's size
(``client.open(url, offset=size)``); when the server cannot resume, the
download restarts from byte 0.

:func:`safe_name` and :func:`name_for_url` (from :mod:`anyurl.transfer.names`) turn names
from URLs and listings (which a hostile server controls) into plain local file names.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import (
    AccessDenied,
    AnyURLError,
    ConnectError,
    FetchTimeout,
    ResourceNotFound,
    TransferError,
    TruncatedTransfer,
    UnsafeURL,
    UnsupportedScheme,
    URLSyntaxError,
)
from ..response import Body, translate_errors
from ..urls import URL
from .names import MAX_NAME_BYTES, PART_SUFFIX, name_for_url, safe_name
from .output import SymlinkRefused, is_special, open_output, open_unnamed

if TYPE_CHECKING:
    from pathlib import Path  # (imported where used: pathlib and urllib.parse are 3% of a batch's CPU)

    from ..client import Client

__all__ = [
    "PART_SUFFIX",
    "Progress",
    "WouldOverwrite",
    "download",
    "download_file",
    "name_for_url",
    "part_path",
    "safe_name",
    "same_content",
]


#: ``progress(done, total)``: bytes of the file so far (including a resumed
#: prefix) and the expected final size, or None when unknown. Called once when
#: the transfer starts and after every chunk.
Progress = Callable[[int, "int | None"], None]

class WouldOverwrite(TransferError, FileExistsError):
    """The destination exists with other content; it was left as it was (``overwrite=True`` replaces it)."""


# Errors that would happen the same way from offset 0: never worth a restart.
_NO_RESTART = (ResourceNotFound, AccessDenied, ConnectError, FetchTimeout, URLSyntaxError,
               UnsupportedScheme, UnsafeURL)


def refuse_symlink(dest: str, u: URL | str) -> None:
    """Raise :class:`WouldOverwrite` when *dest*, a name anyurl chose, is a symlink: it is never
    written through (to a FIFO, a device or a file outside the directory) nor counted unchanged."""
    try:
        st = os.lstat(dest)
    except OSError:
        return
    if stat.S_ISLNK(st.st_mode):
        raise WouldOverwrite(f"{dest} is a symlink; it was left as it is and never written through "
                             "(--force replaces the link itself)", url=u)


async def _download_special(client: Client, u: URL, dest: str, progress: Progress | None,
                            max_size: int | None, on_open: Callable[[Body], None] | None,
                            options: dict[str, Any]) -> None:
    try:
        fd = open_output(dest, create=False, follow=True)  # a device the user named
    except OSError as exc:
        raise TransferError(f"cannot write {dest}: {exc.strerror or exc}", url=u) from exc
    try:
        await _transfer(client, u, fd, 0, progress, max_size, on_open, options, fresh=False)
    except AnyURLError:
        raise
    except Exception as exc:  # OS errors while writing: translated, never leaked
        raise translate_errors(exc, u) from exc
    finally:
        os.close(fd)


# The last directory's NAME_MAX: one statfs per directory, not one per file
# (failures are not kept: the directory may not exist yet).
_name_max_seen: tuple[str, int] = ("", MAX_NAME_BYTES)


def _name_max(directory: str) -> int:
    global _name_max_seen
    if _name_max_seen[0] == directory:
        return _name_max_seen[1]
    try:
        limit = int(os.pathconf(directory, "PC_NAME_MAX"))
    except (OSError, ValueError):  # no such directory yet, or no answer: the usual limit
        return MAX_NAME_BYTES
    _name_max_seen = (directory, limit)
    return limit


def _part_name(dest: str) -> str:
    """:func:`part_path` on plain strings (the per-file path of the CLI and mirror)."""
    head, sep, name = dest.rpartition("/")  # os.path.split's parts, without its frames
    part = f".{name}{PART_SUFFIX}"
    limit = _name_max(head or sep or ".")
    if (len(part) if part.isascii() else len(os.fsencode(part))) <= limit:
        return f"{head}{sep}{part}"
    head, name = os.path.split(dest)
    import hashlib  # only for names too long for the part suffix

    digest = hashlib.sha256(os.fsencode(name)).hexdigest()[:16]
    tail = f"~{digest}{PART_SUFFIX}"
    budget = limit - 1 - len(tail)
    short = os.fsencode(name)[:budget].decode("utf-8", "ignore")  # whole characters only
    while len(os.fsencode(short)) > budget:  # surrogate-escaped names
        short = short[:-1]
    return os.path.join(head, f".{short}{tail}")


def part_path(dest: str | os.PathLike[str]) -> Path:
    """The temporary file a download to *dest* is written to: ``DIR/.NAME.anyurl-part``.

    When that would pass the file system's name limit (NAME is 243 bytes or
    more), NAME is shortened and a hash of the whole name keeps it unique and
    the same on every call (so ``resume`` finds it again).
    """
    from pathlib import Path

    return Path(_part_name(os.fspath(dest)))


async def download(
    client: Client,
    url: URL | str,
    dest: str | os.PathLike[str],
    *,
    resume: bool = False,
    progress: Progress | None = None,
    max_size: int | None = None,
    on_open: Callable[[Body], None] | None = None,
    overwrite: bool = False,
    **options: Any,
) -> Path:
    """Stream *url* into the file *dest* atomically and return its path.

    The data goes to :func:`part_path` (*dest*'s directory, so the final
    :func:`os.replace` is atomic), or without *resume* on Linux to an unnamed
    file there; it is renamed (linked) to *dest* only when the whole body
    arrived. A short body (fewer bytes than the size announced) raises
    :class:`TruncatedTransfer`. On any failure the part file is removed, unless
    *resume* is true: then it is kept, and a later ``resume=True`` call asks
    the handler for the rest (``offset`` = the part file's size). If the
    handler cannot resume (it raises, or ``Body.offset`` says it restarted),
    the file is rewritten from byte 0.

    *max_size* refuses a resource larger than that many bytes (before the
    transfer when the size is announced). *on_open* is called with the
    :class:`Body` once the transfer starts (the CLI uses it for its progress
    bars). Extra keyword *options* go to :meth:`Client.open`.

    An existing *dest* is never replaced by other content unless *overwrite*
    is true: the download then fails with :class:`WouldOverwrite` and *dest*
    keeps its bytes. The same content is not an error (the file is left alone).
    """
    # plain os calls on str paths: per small file, pathlib and extra stat calls cost more than the transfer
    from pathlib import Path

    u = client.parse(url)
    target = os.fspath(dest)
    result = dest if isinstance(dest, Path) else Path(target)
    await download_file(client, u, target, resume, progress, max_size, on_open, overwrite, options)
    return result


# A batch into one directory (the CLI's -d) lists it once: names it did not hold need no
# lookup per file, and a lookup that fails costs about as much as writing a 4 KiB file.
# Past this many entries the per-file lookups are cheaper than the set.
_LISTING_LIMIT = 50_000


class DirNames:
    """One listing of *directory*, taken before a batch writes there.

    ``new(name)`` is true when the listing held neither *name* nor any part file:
    then :func:`download_file` skips the stat of the destination (a device or FIFO to
    stream into) and the removal of a stale part file. A name made by someone else
    after the listing is still safe: linking onto it fails and the file is compared.
    """

    __slots__ = ("names", "parts")

    def __init__(self, directory: str) -> None:
        self.names: frozenset[str] = frozenset()
        self.parts = True  # unknown: look up every file
        try:
            with os.scandir(directory or ".") as it:
                names = []
                for entry in it:
                    names.append(entry.name)
                    if len(names) > _LISTING_LIMIT:
                        return
        except OSError:
            return
        self.names = frozenset(names)
        self.parts = any(n.endswith(PART_SUFFIX) for n in names)

    def new(self, name: str) -> bool:
        return not self.parts and name not in self.names


async def download_file(client: Client, u: URL, target: str, resume: bool, progress: Progress | None,
                        max_size: int | None, on_open: Callable[[Body], None] | None, overwrite: bool,
                        options: dict[str, Any], new: bool = False, *, follow: bool = True,
                        below: str | None = None) -> None:
    """:func:`download` on a parsed URL and a str path (what the CLI's workers call);
    *new*: the caller knows neither *target* nor its part file existed (:class:`DirNames`).
    *follow*: the user named *target* (it may be a symlink or a device); false for names
    anyurl chose (``get -d``/``-O``, mirror), which are never written through a symlink.
    *below*: the directory the user named above *target* (see :func:`open_output`)."""
    if not new and not follow and not overwrite:
        refuse_symlink(target, u)
    if not new and is_special(target, follow=follow):
        # /dev/null, a FIFO, a terminal: renaming onto it would replace the device
        # node itself, so stream straight into it (no atomicity to keep there)
        await _download_special(client, u, target, progress, max_size, on_open, options)
        return
    if not resume:
        fd = _anonymous(target)
        if fd >= 0:  # (_download_anonymous, inline: a coroutine less per file)
            try:
                await _transfer(client, u, fd, 0, progress, max_size, on_open, options, fresh=True)
                _place_fd(fd, target, overwrite, u)
                if not new:
                    try:  # a part file of an earlier resumable try is stale now
                        os.unlink(_part_name(target))
                    except OSError:  # (try, not contextlib.suppress: three calls less per file)
                        pass
            except AnyURLError:
                raise
            except Exception as exc:  # OS errors while writing: translated, never leaked
                raise translate_errors(exc, u) from exc
            finally:
                os.close(fd)  # an unnamed file that was never linked goes away with it
            return
    part = _part_name(target)
    offset = 0
    if resume:
        with contextlib.suppress(FileNotFoundError):
            st = os.lstat(part)
            offset = st.st_size if stat.S_ISREG(st.st_mode) else 0
    fd = -1
    done = False
    try:
        try:
            # without resume, O_TRUNC leaves an empty file at offset 0: _transfer need not check
            fd = open_output(part, truncate=not resume, below=below)
        except SymlinkRefused as exc:
            done = True  # the link is not ours to remove
            raise WouldOverwrite(f"cannot write {part}: {exc.strerror}", url=u) from exc
        except OSError as exc:
            raise TransferError(f"cannot write {part}: {exc.strerror or exc}", url=u) from exc
        await _transfer(client, u, fd, offset, progress, max_size, on_open, options, fresh=not resume)
        os.close(fd)
        fd = -1
        try:
            _place(part, target, overwrite, u)
        except WouldOverwrite:
            with contextlib.suppress(OSError):
                os.unlink(part)
            done = True  # nothing left to clean up
            raise
        except OSError as exc:
            raise TransferError(f"cannot rename {part} to {target}: {exc.strerror or exc}",
                                url=u) from exc
        done = True
    except AnyURLError:
        raise
    except Exception as exc:  # OS errors while writing: translated, never leaked
        raise translate_errors(exc, u) from exc
    finally:
        if fd >= 0:
            os.close(fd)
        if not done:
            # with resume, keep what arrived for the next try (an empty file is not worth keeping)
            with contextlib.suppress(OSError):
                if not resume or os.stat(part).st_size == 0:
                    os.unlink(part)


# Linux: a file without a name (O_TMPFILE) until the download is whole, then linked into
# place through /proc/self/fd: one directory entry per file instead of three (part file
# created, linked, unlinked), and a failure leaves nothing to remove. Off after the first
# failure to link that way (no /proc); file systems without O_TMPFILE fail the open.
_use_tmpfile = bool(getattr(os, "O_TMPFILE", 0)) and os.path.isdir("/proc/self/fd")
_proc_fd = -1  # this process's /proc/self/fd, opened on first use


def _forget_proc_fd() -> None:
    global _proc_fd
    # a forked child holds its parent's directory (other descriptors): open its own
    if _proc_fd >= 0:
        with contextlib.suppress(OSError):
            os.close(_proc_fd)
    _proc_fd = -1


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_proc_fd)


def _link_fd(fd: int, dest: str) -> None:
    """Hard-link the open file *fd* as *dest* (linkat with AT_SYMLINK_FOLLOW on /proc/self/fd/N:
    a plain link() of that path would link the magic symlink itself, EXDEV)."""
    global _proc_fd
    if _proc_fd < 0:
        flags = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)
        _proc_fd = os.open("/proc/self/fd", flags)
    os.link(str(fd), dest, src_dir_fd=_proc_fd, follow_symlinks=True)


def _anonymous(target: str) -> int:
    """An unnamed file in *target*'s directory, or -1 (then the part file is used)."""
    if not _use_tmpfile:
        return -1
    head, sep, _ = target.rpartition("/")  # (os.path.dirname's answer for open, without its calls)
    try:
        return open_unnamed(head or sep or ".")
    except OSError:  # no O_TMPFILE here, no such directory...: the part file path says why
        return -1


def _place_fd(fd: int, dest: str, overwrite: bool, u: URL) -> None:
    """Give the finished unnamed file *fd* the name *dest* (see :func:`_place`)."""
    global _use_tmpfile
    try:
        if not overwrite:
            try:
                _link_fd(fd, dest)  # atomic: fails when dest exists, even if it appeared just now
                return
            except FileExistsError:
                pass
            if _same_as_fd(fd, dest):
                return  # nothing to change: the file already holds these bytes
            raise WouldOverwrite(f"{dest} exists with different content and was left as it is "
                                 "(--force replaces it)", url=u)
        part = _part_name(dest)  # a name of our own, then renamed over dest
        with contextlib.suppress(FileNotFoundError):
            os.unlink(part)  # a stale part file of an earlier run
        _link_fd(fd, part)
    except WouldOverwrite:
        raise
    except OSError as exc:
        if isinstance(exc, FileExistsError) or not os.path.isdir(os.path.dirname(dest) or "."):
            raise TransferError(f"cannot create {dest}: {exc.strerror or exc}", url=u) from exc
        # linking through /proc failed (not mounted, other rules): copy into a part file once,
        # and use part files from now on
        _use_tmpfile = False
        part = _part_name(dest)
        out = open_output(part, truncate=True)
        try:
            _copy_fd(fd, out)
        finally:
            os.close(out)
        try:
            _place(part, dest, overwrite, u)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(part)
            raise
        return
    try:
        os.replace(part, dest)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(part)
        raise TransferError(f"cannot rename {part} to {dest}: {exc.strerror or exc}", url=u) from exc


def _copy_fd(src: int, dst: int, block: int = 1 << 20) -> None:
    offset = 0
    while data := os.pread(src, block, offset):
        view = memoryview(data)
        while view:
            view = view[os.write(dst, view):]
        offset += len(data)


def _same_as_fd(fd: int, dest: str, block: int = 1 << 20) -> bool:
    """True when the regular file *dest* (not a symlink) holds the same bytes as *fd*."""
    try:
        sd = os.lstat(dest)
    except OSError:
        return False
    if not stat.S_ISREG(sd.st_mode) or sd.st_size != os.fstat(fd).st_size:
        return False
    offset = 0
    with open(dest, "rb") as f:
        while True:
            x, y = os.pread(fd, block, offset), f.read(block)
            if x != y:
                return False
            if not x:
                return True
            offset += len(x)


def same_content(a: str | os.PathLike[str], b: str | os.PathLike[str], block: int = 1 << 20) -> bool:
    """True when the regular files *a* and *b* hold the same bytes (a symlink *b* never matches)."""
    try:
        sa, sb = os.lstat(a), os.lstat(b)
    except OSError:
        return False
    if not (stat.S_ISREG(sa.st_mode) and stat.S_ISREG(sb.st_mode)) or sa.st_size != sb.st_size:
        return False
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            x, y = fa.read(block), fb.read(block)
            if x != y:
                return False
            if not x:
                return True


def _place(part: str, dest: str, overwrite: bool, u: URL) -> None:
    """Move the finished part file to *dest*; without *overwrite*, never over other content."""
    if overwrite:
        os.replace(part, dest)
        return
    try:
        os.link(part, dest)  # atomic: fails when dest exists, even if it appeared just now
    except FileExistsError:
        pass
    except OSError:  # no hard links here (some FUSE/SMB mounts): check, then rename
        if not os.path.lexists(dest):
            os.replace(part, dest)
            return
    else:
        os.unlink(part)
        return
    if same_content(part, dest):
        os.unlink(part)  # nothing to change: the file already holds these bytes
        return
    raise WouldOverwrite(f"{dest} exists with different content and was left as it is "
                         "(--force replaces it)", url=u)


async def _transfer(client: Client, u: URL, fd: int, offset: int, progress: Progress | None,
                    max_size: int | None, on_open: Callable[[Body], None] | None,
                    options: dict[str, Any], *, fresh: bool) -> None:
    """Stream the body into *fd*; *fresh*: fd is a just-truncated regular file (size 0, at offset 0)."""
    try:
        # Client.open without its context manager (the same request, opened and closed here)
        # the limit goes along: a handler that learns the size first (FTP SIZE) refuses before the transfer
        body = await client._open(client.request(
            u, offset=offset, max_size=None if max_size is None else max(max_size - offset, 0), **options))
    except _NO_RESTART:
        raise
    except AnyURLError:
        if offset == 0:
            raise
        # this handler (or server) cannot resume: start over
        offset = 0
        body = await client._open(client.request(u, max_size=max_size, **options))
    try:
        start = body.offset if isinstance(body.offset, int) else 0
        if start > offset:
            raise TransferError(f"server resumed at byte {start}, but only {offset} bytes are here", url=u)
        # whatever the handler did (resumed, or restarted at 0), write from where it starts
        st = None if fresh and start == 0 else os.fstat(fd)
        if st is not None and stat.S_ISREG(st.st_mode):
            os.lseek(fd, start, os.SEEK_SET)
            # only when needed: on ext4 a truncate arms auto_da_alloc, which makes
            # close() flush the whole file (0.4 s per GiB here)
            if st.st_size != start:
                os.ftruncate(fd, start)
        total = start + body.size if body.size is not None else None
        if max_size is not None and total is not None and total > max_size:
            raise TransferError(f"resource is {total} bytes, larger than the limit of {max_size}", url=u)
        if on_open is not None:
            on_open(body)
        done = start
        if progress is not None:
            progress(done, total)
        write = os.write
        async for chunk in body:
            n = write(fd, chunk)
            if n < len(chunk):  # a short write: the rest, without copies
                view = memoryview(chunk)[n:]
                while view:
                    view = view[write(fd, view):]
            done += len(chunk)
            if max_size is not None and done > max_size:
                raise TransferError(f"resource larger than the limit of {max_size} bytes", url=u)
            if progress is not None:
                progress(done, total)
        if total is not None and done < total:
            raise TruncatedTransfer(f"got {done - start} of {total - start} bytes", url=u)
    except BaseException as exc:
        if body.capture is not None:  # (--warc) a limit's cut is archived marked truncated
            body.capture.ended_by(exc)
        await body.aclose()
        raise
    await body.aclose()

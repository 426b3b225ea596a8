"""Mirror a directory tree (FTP, file:, gopher, news, HTTP listings...) into a local directory.

``await mirror(client, url, "DIR")`` walks *url* with :func:`anyurl.transfer.walk.walk`
and downloads every file into DIR, keeping the tree: directories become local
directories, files are written atomically (:func:`anyurl.transfer.download.download`),
byte-exact (FTP files are fetched as ``;type=i``), several at once through the
one Client.

Local names are the decoded remote names, decoded once. They never lead
outside DIR: "/" and NUL become ``%2F`` and ``%00``, "." and ".." become
``%2E`` and ``%2E%2E``, and an over-long name is shortened. When two remote
names map to one local name, the one listed later in their directory is renamed
(``name~2.ext``; fixed when the directory is listed, not by which transfer ends
first) and the rename is reported in :attr:`MirrorResult.renamed` (in tree
order). An existing file with other content is never replaced unless
``force=True``, or ``newer=True`` and the remote file is newer (size and date,
from the listing or ``client.stat``).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fnmatch
import os
import stat
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import AnyURLError, ResourceNotFound, TransferError, TruncatedTransfer
from ..protocols.ftp import directory_text
from ..response import Entry, translate_errors
from ..urls import FTPURL, HTTPURL, URL, parse
from .download import (
    WouldOverwrite,
    download_file,
    part_path,
    refuse_symlink,
    same_content,
)
from .names import PART_SUFFIX, WEB_INDEX, local_name, name_for_url, web_names
from .output import SymlinkRefused, open_output, save_part
from .walk import SKIP_KINDS, Found, child_key, listed_dir, looks_like_page, walk

if TYPE_CHECKING:
    from ..client import Client

__all__ = ["MirrorResult", "local_name", "mirror"]

def _remote_name(found: Found) -> str:
    """The name a resource gets: its entry's ``name`` (a file name in every scheme), else from the URL."""
    entry = found.entry
    if entry is None or not entry.name:
        return name_for_url(found.url)
    return entry.name


def _same_index(a: str, b: str) -> bool:
    """"DIR/" and "DIR/index.html": the directory's page under its two URLs."""
    return a.rstrip("/") == b.rsplit("/", 1)[0] or b.rstrip("/") == a.rsplit("/", 1)[0]


def _unique(path: str, taken: dict[str, str]) -> str:
    """``name~N.ext`` for the first N that no other entry of this run holds. Not chosen by what
    is on disk: a second run picks the same names (an unrelated local file is never replaced
    without ``force``: the entry then fails like any other)."""
    folder, name = os.path.split(path)
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem:
        stem, ext = name, ""
    n = 2
    while True:
        cand = os.path.join(folder, f"{stem}~{n}" + (f".{ext}" if ext else ""))
        if cand not in taken:
            return cand
        n += 1


@dataclass
class MirrorResult:
    """What a mirror did: counts, bytes, and every problem (the mirror goes on after one)."""

    files: int = 0          # files written (new or replaced)
    unchanged: int = 0      # already there with the same bytes, or up to date (newer=True)
    excluded: int = 0       # left out by include/exclude
    directories: int = 0
    bytes: int = 0          # bytes written
    aliases: int = 0        # symlinked directories not walked twice
    links: int = 0          # server symlinks kept as local symlinks (symlinks="keep")
    copied: int = 0         # of files: a second name of a file fetched once, copied locally
    # server symlinks that lead nowhere (reported, not errors), and with symlinks="keep" the
    # links not made, with why (a target outside DIR, an absolute one, one not known)
    dangling: list[str] = field(default_factory=list)
    refused_links: list[tuple[str, str]] = field(default_factory=list)
    errors: list[tuple[str, AnyURLError]] = field(default_factory=list)  # in tree order at the end
    renamed: list[tuple[str, Path]] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """True when nothing failed."""
        return not self.errors


def _matches(rel: str, name: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(rel, p) or fnmatch.fnmatchcase(name, p) for p in patterns)


def _timestamp(value: datetime | None) -> float | None:
    if value is None:
        return None
    try:
        return value.timestamp()
    except (OverflowError, OSError, ValueError):
        return None


def _lstat(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except OSError:
        return None


def _up_to_date(local: os.stat_result, size: int | None, modified: datetime | None) -> bool:
    """The local file has the remote size and is not older than the remote date (where known)."""
    remote_ts = _timestamp(modified)
    if size is not None and size != local.st_size:
        return False
    if remote_ts is None or local.st_mtime >= remote_ts:
        return True
    # a listing dates a file to the minute (to the day when old): a copy an earlier run dated
    # so is as new as an exact date (MDTM) within that precision
    return any(local.st_mtime % grain == 0 and remote_ts - local.st_mtime < grain for grain in (60, 86400))


def _finish(path: str, modified: datetime | None) -> int:
    """Give a fresh download the remote date (so --newer works next time); its size."""
    ts = _timestamp(modified)
    if ts is not None:
        with contextlib.suppress(OSError):
            os.utime(path, (ts, ts))
    return os.lstat(path).st_size


def _make_dir(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True)


def _check_writable(path: Path) -> None:
    """Create and remove a file in *path*: a directory that is read-only (its mode, a
    read-only mount, the immutable flag, which root's access() does not see) fails here,
    before the first request, not once per file."""
    probe = path / f".anyurl-write-check-{os.getpid()}{PART_SUFFIX}"
    fd = os.open(probe, os.O_CREAT | os.O_TRUNC | os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0), 0o600)
    os.close(fd)
    os.unlink(probe)


def _own_dir(path: str) -> None:
    """Create *path*, or accept it when it is a real directory already: never a symlink,
    which could lead the files below it outside DIR."""
    try:
        os.mkdir(path)
    except FileExistsError:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            raise NotADirectoryError(errno.ENOTDIR, "exists and is not a directory (or is a symlink)",
                                     path) from None


def _part_for(path: str) -> str:
    """The part file next to *path*: download's name, without asking the file system
    for its name limit unless the name is long."""
    folder, name = os.path.split(path)
    part = f".{name}{PART_SUFFIX}"
    if len(os.fsencode(part)) <= 255:
        return os.path.join(folder, part)
    return os.fspath(part_path(path))


def _place(part: str, dest: str, overwrite: bool, url: URL | str) -> bool:
    """Move the finished *part* to *dest*: True when written, False when *dest* already
    held these bytes (left alone). Without *overwrite*, never over other content."""
    if overwrite:
        os.replace(part, dest)
        return True
    try:
        os.link(part, dest)  # atomic: fails when dest exists, even if it appeared just now
    except FileExistsError:
        pass
    except OSError:  # no hard links here: check, then rename
        if not os.path.lexists(dest):
            os.replace(part, dest)
            return True
    else:
        os.unlink(part)
        return True
    if same_content(part, dest):
        os.unlink(part)
        return False
    raise WouldOverwrite(f"{dest} exists with different content and was left as it is "
                         "(--force replaces it)", url=url)


class _Mirror:
    """One mirror run. Local paths are plain strings (os.path), not Path objects: a
    file's path is made, hashed and joined several times, and pathlib cost ~25 us a
    file for that (5% of the mirror's CPU for 2,000 files from vsftpd)."""

    def __init__(self, client: Client, dest: str | os.PathLike[str], *, parallel: int, resume: bool, newer: bool,
                 force: bool, include: Sequence[str], exclude: Sequence[str],
                 progress: Callable[[MirrorResult], None] | None, symlinks: str = "copy") -> None:
        self.client = client
        self.keep_links = symlinks == "keep"
        self.dest = os.fspath(dest)
        self.parallel = max(1, parallel)
        self.resume = resume
        self.newer = newer
        self.force = force
        self.include = tuple(include)
        self.exclude = tuple(exclude)
        self.progress = progress
        self.result = MirrorResult()
        self.dirs: dict[tuple[str, ...], str] = {}
        self.taken: dict[str, str] = {}
        self.rels: dict[tuple[str, ...], str] = {(): ""}
        # FTP: per listed directory URL, its parsed value and serialized prefix (see ftp_file)
        self.ftp_dirs: dict[str, tuple[FTPURL, str] | None] = {}
        self.web: tuple[tuple[str, str | None, int | None], str] | None = None  # http(s): origin, base path
        self.made: set[str] = set()  # directories made for a web page's links
        self.error_paths: list[tuple[str, ...]] = []  # the tree path of each result.errors item
        # (parent's tree path, child URL) -> its local path, fixed in listing order when the parent is
        # listed: sibling directories are found as their own listings end, in no fixed order
        self.reserved: dict[tuple[tuple[str, ...], str], str] = {}
        self.renamed_paths: list[tuple[str, ...]] = []  # the tree path of each result.renamed item
        self.second_names: list[tuple[Found, str]] = []  # files met before under another name
        self.left_out: set[str] = set()  # URLs excluded by include/exclude

    def ftp_file(self, found: Found) -> URL | None:
        """The ``;type=i`` URL of an FTP file whose text is exactly the serializer's for its
        name in its directory, built from the directory's URL (parsed once per directory)
        instead of parsing the file's URL; None otherwise (the caller parses)."""
        entry, parent = found.entry, found.parent
        if entry is None or parent is None:
            return None
        if parent in self.ftp_dirs:
            known = self.ftp_dirs[parent]
        else:
            try:
                listed = parse(parent)
            except AnyURLError:
                listed = None
            d = listed_dir(listed) if listed is not None else None
            known = None if d is None else (d, directory_text(d, d.cwd))
            self.ftp_dirs[parent] = known
        if known is None or child_key(found.url, entry.name, known[1]) != found.url:
            return None  # not the plain child of its directory (or a directory URL)
        d = known[0]
        return FTPURL(d.scheme, d.host, d.port, d.user, None, d.cwd, entry.name, "i")

    def place(self, found: Found) -> tuple[str, str] | None:
        """The local path of *found* and its file name (its parent directory is already placed)."""
        if self.web is not None and not found.directory:
            by_url = self._place_by_url(found)
            if by_url is not None:
                return by_url or None
        parent_key = found.path[:-1]
        parent = self.dirs.get(parent_key)
        if parent is None:
            return None  # its directory could not be made
        name = local_name(_remote_name(found))
        path = self.reserved.pop((parent_key, found.url), None) or os.path.join(parent, name)
        if os.path.basename(path) != name:  # renamed when its directory was listed
            name = os.path.basename(path)
            self.renamed(found, path)
        else:
            owner = self.taken.get(path)
            if owner is not None and owner != found.url:
                path = _unique(path, self.taken)
                name = os.path.basename(path)
                self.renamed(found, path)
        self.taken[path] = found.url
        rel = self.rels[parent_key]
        self.rels[found.path] = f"{rel}/{name}" if rel else name
        return path, name

    def _place_by_url(self, found: Found) -> tuple[str, str] | tuple[()] | None:
        """A web file's local path from its URL's path below the start's directory, so a page's
        link to ``sub/deep.txt`` lands in DIR/sub/ (a listing would give no ``sub`` directory)
        and a directory's page ``sub/`` in DIR/sub/index.html; None when the URL is not such
        a path (the listing's place is used); () for ``sub/index.html`` when ``sub/`` took that
        name already (or the other way round): one resource, one file."""
        assert self.web is not None
        try:
            u = parse(found.url)
        except AnyURLError:
            return None
        origin, base = self.web
        if (not isinstance(u, HTTPURL) or (u.scheme, u.host, u.port) != origin or u.search is not None
                or not u.path.startswith(base)):
            return None
        names = web_names(u.path[len(base):])
        folder = self.dest
        for name in names[:-1]:
            folder = os.path.join(folder, name)
            if folder not in self.made:
                try:
                    _own_dir(folder)
                except OSError as exc:
                    self.fail(found, TransferError(f"cannot create directory {folder}: {exc.strerror or exc}",
                                                       url=found.url))
                    return None
                self.made.add(folder)
        path = os.path.join(folder, names[-1])
        owner = self.taken.get(path)
        if owner is not None and owner != found.url and names[-1] == WEB_INDEX and _same_index(owner, found.url):
            return ()
        if owner is not None and owner != found.url:
            path = _unique(path, self.taken)
            names[-1] = os.path.basename(path)
            self.renamed(found, path)
        self.taken[path] = found.url
        self.rels[found.path] = "/".join(names)
        return path, names[-1]

    def reserve(self, found: Found, path: str) -> None:
        """Fix the local paths of the children of the listed directory *found* (at *path*), in
        its listing's order: of two names that map to one local name, the one listed first
        keeps it, however the walk's concurrent listings happen to end."""
        if self.web is not None or not found.entries:
            return  # a web file's place comes from its URL (_place_by_url)
        for entry in found.entries:
            url = entry.url
            if url is None or entry.kind in SKIP_KINDS or entry.rel is not None:
                continue  # never yielded by the walk
            if (found.path, url) in self.reserved:
                continue  # listed twice: the walk yields the first
            child = os.path.join(path, local_name(entry.name or name_for_url(url)))
            owner = self.taken.get(child)
            if owner is not None and owner != url:
                child = _unique(child, self.taken)
            self.taken[child] = url
            self.reserved[(found.path, url)] = child

    def renamed(self, found: Found, path: str) -> None:
        self.result.renamed.append((found.url, Path(path)))
        self.renamed_paths.append(found.path)

    def fail(self, found: Found, exc: BaseException) -> None:
        err = exc if isinstance(exc, AnyURLError) else translate_errors(exc, found.url)
        self.result.errors.append((found.url, err))
        self.error_paths.append(found.path)

    def errors_in_tree_order(self) -> None:
        """Sort the errors by the entry's path (names compared in order): the first is the same
        whichever transfer failed first, so two runs over one tree exit alike."""
        pairs = sorted(zip(self.error_paths, self.result.errors, strict=True), key=lambda p: p[0])
        self.result.errors[:] = [e for _, e in pairs]
        self.error_paths[:] = [p for p, _ in pairs]
        renames = sorted(zip(self.renamed_paths, self.result.renamed, strict=True), key=lambda p: p[0])
        self.result.renamed[:] = [r for _, r in renames]

    def directory(self, found: Found, path: str) -> None:
        try:
            _own_dir(path)
        except OSError as exc:
            self.fail(found, TransferError(f"cannot create directory {path}: {exc.strerror or exc}",
                                               url=found.url))
            return
        self.dirs[found.path] = path
        self.result.directories += 1
        self.reserve(found, path)
        self.links(found, path)

    def links(self, found: Found, path: str) -> None:
        """symlinks="keep": the listed directory's server symlinks as local symlinks."""
        if not self.keep_links or not found.entries:
            return
        for entry in found.entries:
            if entry.kind == "symlink" and entry.url and entry.rel is None:
                self.link(entry, path, (*found.path, entry.name))

    def link(self, entry: Entry, folder: str, tree_path: tuple[str, ...]) -> None:
        """Make the local symlink of *entry* in *folder* when its target stays in DIR.

        Sound without resolving anything: the link's folder is a real directory (made by
        the mirror, never a symlink), ".." may only lead the target (applied to that real
        chain, so counted as written), and it may not climb above DIR; what follows only
        descends, and every symlink it meets was made by this same rule."""
        url = entry.url or ""
        target = entry.meta.get("target")
        if not isinstance(target, str) or not target:
            self.result.refused_links.append((url, "its target is not in the listing"))
            return
        parts = target.split("/")
        ups = 0
        while ups < len(parts) and parts[ups] == "..":
            ups += 1
        rest = [p for p in parts[ups:] if p not in ("", ".")]
        if target.startswith("/") or ".." in rest or "\0" in target:
            self.result.refused_links.append((url, f"its target {target!r} may lead outside the mirror"))
            return
        depth = 0 if folder == self.dest else len(os.path.relpath(folder, self.dest).split(os.sep))
        if ups > depth:
            self.result.refused_links.append((url, f"its target {target!r} leads outside the mirror"))
            return
        local = os.path.join(folder, local_name(entry.name or name_for_url(url)))
        text = "/".join([".."] * ups + [local_name(p) for p in rest]) or "."
        try:
            os.symlink(text, local)
        except FileExistsError:
            try:
                same = os.readlink(local) == text
            except OSError:
                same = False
            if same:
                self.result.unchanged += 1
            else:
                self.fail_url(url, tree_path, WouldOverwrite(
                    f"{local} exists and is not this symlink ({text}); left as it is", url=url))
            return
        except OSError as exc:
            self.fail_url(url, tree_path, TransferError(f"cannot create symlink {local}: {exc.strerror or exc}",
                                                        url=url))
            return
        self.result.links += 1

    def fail_url(self, url: str, tree_path: tuple[str, ...], exc: AnyURLError) -> None:
        self.result.errors.append((url, exc))
        self.error_paths.append(tree_path)

    async def file(self, found: Found, path: str) -> None:
        try:
            await self._file(found, path)
        except ResourceNotFound as exc:
            if found.entry is not None and found.entry.kind == "symlink":
                self.result.dangling.append(found.url)  # a server symlink that leads nowhere: reported
            else:
                self.fail(found, exc)
        except Exception as exc:
            self.fail(found, exc)
        finally:
            if self.progress is not None:
                self.progress(self.result)

    async def _file(self, found: Found, path: str) -> None:
        if found.content is not None:  # the walk read it whole already (a web page): not fetched again
            try:
                written = self._keep(found, path)
            finally:
                found.content.close()
            if written is None:
                self.result.unchanged += 1
            else:
                self.result.files += 1
                self.result.bytes += written
            return
        u: URL | str = found.url
        if found.url.startswith(("ftp://", "ftps://")):
            if (ftp := self.ftp_file(found)) is not None:
                u = ftp  # nothing to parse
            elif ";type=" not in found.url.rpartition("/")[2]:
                u = found.url + ";type=i"  # byte-exact whatever the name's suffix (parsed once, by open)
        else:
            u = self.client.parse(found.url)
        entry = found.entry
        size = entry.size if entry is not None else None
        modified = entry.modified if entry is not None else None
        overwrite = self.force
        if self.newer and (local := _lstat(path)) is not None:
            if size is None or modified is None:
                with contextlib.suppress(AnyURLError):
                    st = await self.client.stat(u)
                    size = st.size if size is None else size
                    modified = st.modified if modified is None else modified
            if _up_to_date(local, size, modified):
                self.result.unchanged += 1
                return
            overwrite = True  # the remote file is newer or of another size
        if self.resume:  # part files kept and continued: download() knows how
            before = _lstat(path)
            if before is not None and entry is not None and entry.kind == "symlink":
                # a listing gives a link's own size, not its target's: ask (vsftpd's SIZE follows it)
                size = None
                with contextlib.suppress(AnyURLError):
                    size = (await self.client.stat(u)).size
            if (before is not None and not overwrite and stat.S_ISREG(before.st_mode) and size is not None
                    and _up_to_date(before, size, modified)):
                # complete from an earlier (interrupted) run: the remote size, not older than the
                # remote date (the date a mirror gives each file it writes); nothing to send
                self.result.unchanged += 1
                return
            await download_file(self.client, self.client.parse(u), path, True, None, None, None, overwrite, {},
                                follow=False, below=self.dest)
            after = _lstat(path)
            if before is not None and not overwrite and after is not None and \
                    after.st_mtime_ns == before.st_mtime_ns:
                self.result.unchanged += 1  # same bytes: the file was left alone
                return
            self.result.files += 1
            self.result.bytes += _finish(path, modified)
            return
        written = await self.fetch(u, path, overwrite, modified)
        if written is None:
            self.result.unchanged += 1  # same bytes: the file was left alone
            return
        self.result.files += 1
        self.result.bytes += written

    def _keep(self, found: Found, path: str) -> int | None:
        """Write the bytes the walk kept (``Found.content``) to *path* as :meth:`fetch` would:
        through a part file, placed atomically; None when *path* held them already. *newer* and
        *force* replace other content (these bytes are the remote file's as of now)."""
        assert found.content is not None
        return self._write(found.content.chunks(), found.content.size, path, found.url)

    def _write(self, chunks: Iterable[bytes], size: int, path: str, url: str, mtime: float | None = None
               ) -> int | None:
        """*chunks* (*size* bytes) into *path* through a part file (given *mtime*), placed
        atomically; None when *path* held them already."""
        part = _part_for(path)
        overwrite = self.force or self.newer
        if not overwrite:
            refuse_symlink(path, url)
        placed = False
        try:
            fd = open_output(part, truncate=True, below=self.dest)
            try:
                for chunk in chunks:
                    view = memoryview(chunk)
                    while view:
                        view = view[os.write(fd, view):]
                if mtime is not None:
                    os.utime(fd, (mtime, mtime))
            finally:
                os.close(fd)
            written = _place(part, path, overwrite, url)
            placed = True
        except AnyURLError:
            raise
        except SymlinkRefused as exc:
            raise WouldOverwrite(f"cannot write {part}: {exc.strerror}", url=url) from exc
        except OSError as exc:
            raise TransferError(f"cannot write {path}: {exc.strerror or exc}", url=url) from exc
        finally:
            if not placed:
                with contextlib.suppress(OSError):
                    os.unlink(part)
        return size if written else None

    def copy_alias(self, url: str, path: str, first: str) -> bool:
        """The second name of a file fetched once (a server symlink and its target, see
        ``Found.same_as``): a copy of the local file *first*, with its date. False when *first*
        is no regular file (the caller fetches *found* itself)."""
        try:
            fd = os.open(first, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            return False
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                return False
            here = _lstat(path)
            if here is not None and stat.S_ISREG(here.st_mode) and here.st_size == st.st_size and \
                    same_content(first, path):
                self.result.unchanged += 1  # a copy from an earlier run
                return True

            def chunks() -> Iterator[bytes]:
                at = 0
                while chunk := os.pread(fd, 256 * 1024, at):
                    at += len(chunk)
                    yield chunk

            written = self._write(chunks(), st.st_size, path, url, st.st_mtime)
        finally:
            os.close(fd)
        if written is None:
            self.result.unchanged += 1
        else:
            self.result.files += 1
            self.result.copied += 1
            self.result.bytes += written
        return True

    async def fetch(self, u: URL | str, path: str, overwrite: bool, modified: datetime | None) -> int | None:
        """Stream *u* into a part file next to *path*, give it the remote date, and
        place it (see :func:`_place`): the bytes written, or None when *path* held
        them already. A failed transfer leaves nothing behind. Plain ``os`` calls:
        open, write, futimens, close, link, unlink per file (no stat)."""
        part = _part_for(path)
        if not overwrite:
            refuse_symlink(path, u)
        try:
            fd = open_output(part, truncate=True, below=self.dest)
        except SymlinkRefused as exc:
            raise WouldOverwrite(f"cannot write {part}: {exc.strerror}", url=u) from exc
        except OSError as exc:
            raise TransferError(f"cannot write {part}: {exc.strerror or exc}", url=u) from exc
        placed = False
        try:
            try:
                done = 0
                write = os.write
                async with self.client.open(u) as body:
                    async for chunk in body:
                        n = write(fd, chunk)
                        if n < len(chunk):
                            view = memoryview(chunk)[n:]
                            while view:
                                view = view[write(fd, view):]
                        done += len(chunk)
                    if body.size is not None and done < body.size:
                        raise TruncatedTransfer(f"got {done} of {body.size} bytes", url=u)
                ts = _timestamp(modified)
                if ts is not None:  # the remote date, so that --newer works next time
                    with contextlib.suppress(OSError):
                        os.utime(fd, (ts, ts))
            finally:
                os.close(fd)
            try:
                written = _place(part, path, overwrite, u)
            except OSError as exc:
                if isinstance(exc, AnyURLError):
                    raise
                raise TransferError(f"cannot rename {part} to {path}: {exc.strerror or exc}", url=u) from exc
            placed = True
        except AnyURLError:
            raise
        except Exception as exc:  # OS errors while writing: translated, never leaked
            raise translate_errors(exc, u) from exc
        finally:
            if not placed:
                with contextlib.suppress(OSError):
                    os.unlink(part)
        return done if written else None

    async def copy_second_names(self) -> None:
        """Each second name of a file (``Found.same_as``) as a copy of the file its first name
        wrote: one transfer. Fetched itself when the first was not written (left out, failed)."""
        if not self.second_names:
            return
        path_of = {url: path for path, url in self.taken.items()}
        bad = {url for url, _ in self.result.errors} | set(self.result.dangling) | self.left_out
        for found, path in self.second_names:
            first = path_of.get(found.same_as or "")
            try:
                if first is not None and found.same_as not in bad and self.copy_alias(found.url, path, first):
                    if self.progress is not None:
                        self.progress(self.result)
                    continue
            except Exception as exc:
                self.fail(found, exc)
                continue
            await self.file(found, path)

    async def run(self, url: str | URL, walk_options: dict[str, Any]) -> MirrorResult:
        start = time.monotonic()
        # A fixed pool of workers fed through a short queue: no task per file, and the
        # walk runs at most a few files ahead of the downloads.
        queue: asyncio.Queue[tuple[Found, str] | None] = asyncio.Queue(maxsize=2 * self.parallel)

        async def worker() -> None:
            while (item := await queue.get()) is not None:
                await self.file(*item)

        workers = [asyncio.create_task(worker()) for _ in range(self.parallel)]
        try:
            async for found in walk(self.client, url, **walk_options):
                if found.same_as is not None and found.directory:
                    self.result.aliases += 1
                    continue
                if found.error is not None:
                    self.fail(found, found.error)
                    continue
                if found.depth == 0:
                    if found.directory:
                        self.dirs[()] = self.dest
                        self.reserve(found, self.dest)
                        self.links(found, self.dest)
                        continue
                    self.dirs[()] = self.dest  # a single file: DIR/<its name>
                placed = self.place(found)
                if placed is None:
                    continue
                path, name = placed
                if found.directory:
                    self.directory(found, path)
                    continue
                rel = self.rels[found.path]
                if (self.include and not _matches(rel, name, self.include)) or (
                        self.exclude and _matches(rel, name, self.exclude)):
                    self.result.excluded += 1
                    self.left_out.add(found.url)
                    continue
                if found.same_as is not None:  # a file met before under another name: copied at the end
                    self.second_names.append((found, path))
                    continue
                await queue.put((found, path))
            for _ in workers:
                await queue.put(None)
            await asyncio.gather(*workers)
            await self.copy_second_names()
        finally:
            for t in workers:
                t.cancel()
            for t in workers:
                with contextlib.suppress(BaseException):
                    await t
            self.errors_in_tree_order()
            self.result.dangling.sort()
            self.result.seconds = time.monotonic() - start
        return self.result


def _below(origin: tuple[str, str | None, int | None], base: str,
           start: HTTPURL | None = None) -> Callable[[Entry], bool]:
    """For an http(s) start: follow only what lies below its directory (wget's --no-parent),
    and of a directory's two URLs, ``DIR/`` and ``DIR/index.html``, only the one met first.

    A page links anywhere on its host ("../", "/", other trees); a mirror copies the
    files below URL, not those, which would also land at the top of DIR. FTP, gopher
    and news listings hold their own children: their scope stays walk's. ``DIR/`` and
    ``DIR/index.html`` are one local file (:func:`anyurl.transfer.names.web_names`): the
    second is never fetched (only such URLs are remembered, so memory stays small).
    """
    index: dict[str, str] = {}  # a directory's path -> the URL of its page met first
    if start is not None and start.search is None:
        index[_index_dir(start.path)] = str(start)

    def follow(entry: Entry) -> bool:
        if not entry.url:
            return True
        try:
            u = parse(entry.url)
        except AnyURLError:
            return True  # walk reports it
        if not isinstance(u, HTTPURL) or (u.scheme, u.host, u.port) != origin:
            return True  # walk's own scope rules (same host, scheme)
        # a page's image or stylesheet is fetched wherever on the host it lives (wget -p)
        if not (u.path.startswith(base) or "requisite" in entry.meta):
            return False
        if u.search is None and (u.path.endswith("/") or u.path.endswith("/" + WEB_INDEX)):
            owner = index.setdefault(_index_dir(u.path), entry.url)
            if owner != entry.url:
                return False  # the directory's page under its other URL: one file, fetched once
        return True

    return follow


def _index_dir(path: str) -> str:
    """"/docs/" for "/docs/" and "/docs/index.html" (one local file: docs/index.html)."""
    return path[: -len(WEB_INDEX)] if path.endswith("/" + WEB_INDEX) else path


_LISTED_MAX = 100_000  # listing sizes and dates kept for -N/-c under --state (the rest: asked with stat)


def _leaf(kind: str, u: URL) -> bool:
    """A resource a crawl only saves (never lists, never reads for links): what -N, -c and
    --include/--exclude decide on before it is fetched."""
    if kind in ("directory", "group", "symlink"):
        return False
    if isinstance(u, FTPURL):
        return kind == "file"
    if isinstance(u, HTTPURL):  # what the walk would not open to look at (see walk._worth_probing)
        path = u.path.lower()
        return u.search is None and not looks_like_page(u) and not path.endswith(".css")
    return False


class _StateSink:
    """mirror(state=...): the crawl's sink (files named as :class:`~anyurl.transfer.crawl.DirectorySink`
    names them) with the mirror's rules: --include/--exclude, -N and -c decided before a file is
    fetched (``ahead``), never replacing other content without --force or -N, the remote date
    on each file, and server symlinks kept as links (``symlinks="keep"``) or, when they lead to
    something inside the tree, written as copies at the end (one transfer; recorded in
    ``STATE.links`` so that a killed run's links are not forgotten)."""

    def __init__(self, job: _Mirror, start: URL, state: str, inner: Any) -> None:
        self.job = job
        self.inner = inner
        self.dest = job.dest
        self.start = str(start)
        self.top = self.start.rstrip("/") + "/"
        self.links_file = state + ".links"
        self.listed: dict[str, tuple[int | None, datetime | None]] = {}  # url -> listing's size, date
        self.web: Callable[[Entry], bool] | None = None

    # -- what is followed ----------------------------------------------------------------

    def follow(self, entry: Entry) -> bool:
        if self.web is not None and not self.web(entry):
            return False
        url = entry.url
        if url is None:
            return True
        if entry.kind == "symlink":
            return self.symlink(entry, url)
        if entry.kind == "file" and (self.job.newer or self.job.resume) and (
                entry.size is not None or entry.modified is not None):
            if len(self.listed) >= _LISTED_MAX:
                del self.listed[next(iter(self.listed))]
            self.listed[url] = (entry.size, entry.modified)
        return True

    def symlink(self, entry: Entry, url: str) -> bool:
        """Keep: the local link made now (never fetched). Copy: a link into the tree is recorded
        and not fetched (its target is); one leading elsewhere is fetched under its own name."""
        try:
            names = self.inner.names(url)
        except AnyURLError:
            return True
        if self.job.keep_links:
            try:
                folder = self.inner.folder(names[:-1], url)
            except AnyURLError as exc:
                self.job.fail_url(url, tuple(names), exc)
                return False
            self.job.link(entry, folder, tuple(names))
            return False
        target = entry.key if entry.key and entry.key != url else None
        if target is None or not target.startswith(self.top):
            return True
        try:
            first = self.inner.names(target)
        except AnyURLError:
            return True
        import json

        line = json.dumps([url, names, first]) + "\n"
        fd = os.open(self.links_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
        try:
            os.write(fd, line.encode("utf-8", "surrogateescape"))
        finally:
            os.close(fd)
        return False

    def left_out(self, names: list[str]) -> bool:
        job = self.job
        rel = "/".join(names)
        return bool((job.include and not _matches(rel, names[-1], job.include)) or (
            job.exclude and _matches(rel, names[-1], job.exclude)))

    # -- before and while a file is fetched ------------------------------------------------

    async def ahead(self, item: Any) -> int | None:
        """-N, -c and --include/--exclude on a file before it is fetched (see the crawl's Sink)."""
        job = self.job
        if item.depth == 0 or not (job.include or job.exclude or job.newer or job.resume):
            return None
        u = parse(item.url)
        if item.kind != "symlink" and not _leaf(item.kind, u):
            return None  # a page: read for its links whatever happens to its bytes
        names = self.inner.names(item.url)
        if self.left_out(names):
            job.result.excluded += 1
            return 0
        if not (job.newer or job.resume):
            return None
        path = os.path.join(self.dest, *names)
        size, modified = self.listed.get(item.url, (None, None))
        if isinstance(u, FTPURL) and u.name:
            u = FTPURL(u.scheme, u.host, u.port, u.user, u.password, u.cwd, u.name, "i")
        local = _lstat(path)
        if local is not None and stat.S_ISREG(local.st_mode):
            if size is None or modified is None or item.kind == "symlink":
                with contextlib.suppress(AnyURLError):
                    st = await job.client.stat(u)
                    size = st.size if size is None or item.kind == "symlink" else size
                    modified = st.modified if modified is None else modified
            if _up_to_date(local, size, modified):
                self.listed.pop(item.url, None)
                job.result.unchanged += 1
                return 0
        if not job.resume:
            return None  # -N: fetched by the crawl and placed by save
        path, _part = self.inner.place(item.url)
        self.listed.pop(item.url, None)
        await download_file(job.client, u, path, True, None, None, None, job.force or local is not None and job.newer,
                            {}, follow=False, below=self.dest)
        after = _lstat(path)
        if local is not None and after is not None and after.st_mtime_ns == local.st_mtime_ns:
            job.result.unchanged += 1  # the same bytes were there: left alone
            return 0
        job.result.files += 1
        written = _finish(path, modified)
        job.result.bytes += written
        return written

    async def save(self, item: Any, body: Any, chunks: AsyncIterator[bytes]) -> int:
        job = self.job
        names = self.inner.names(item.url)
        if item.depth and self.left_out(names):
            job.result.excluded += 1
            return 0  # (a page: the crawl reads the rest for its links)
        path, part = self.inner.place(item.url)
        overwrite = job.force or job.newer
        _size, modified = self.listed.pop(item.url, (None, None))
        done, written = await save_part(part, path, chunks, item.url, below=self.dest, mtime=_timestamp(modified),
                                        place=lambda part, path: _place(part, path, overwrite, item.url))
        if written:
            job.result.files += 1
            job.result.bytes += done
        else:
            job.result.unchanged += 1
        return done

    # -- at the end ----------------------------------------------------------------------

    async def second_names(self) -> None:
        """Each symlink recorded into the tree: a copy of what its target's name holds now (a
        directory: not copied twice); when the target was not written, fetched itself."""
        import json

        lines = _read_lines(self.links_file)
        job = self.job
        seen: set[str] = set()
        for line in lines:
            try:
                url, names, first = json.loads(line)
            except ValueError:
                continue  # the last line of a run killed while writing it
            if url in seen:
                continue
            seen.add(url)
            if self.left_out(names):
                job.result.excluded += 1
                continue
            target = os.path.join(self.dest, *first)
            here = _lstat(target)
            if here is not None and stat.S_ISDIR(here.st_mode):
                job.result.aliases += 1  # a symlinked directory mirrored under its own name
                continue
            try:
                path = os.path.join(self.inner.folder(names[:-1], url), names[-1])
                if here is not None and job.copy_alias(url, path, target):
                    continue
                u = parse(url)
                if isinstance(u, FTPURL) and u.name:
                    u = FTPURL(u.scheme, u.host, u.port, u.user, u.password, u.cwd, u.name, "i")
                written = await job.fetch(u, path, job.force or job.newer, None)
            except ResourceNotFound:
                job.result.dangling.append(url)
                continue
            except Exception as exc:
                job.fail_url(url, tuple(names), exc if isinstance(exc, AnyURLError) else translate_errors(exc, url))
                continue
            if written is None:
                job.result.unchanged += 1
            else:
                job.result.files += 1
                job.result.bytes += written


def _read_lines(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            return f.read().splitlines()
    except FileNotFoundError:
        return []


async def _mirror_with_state(client: Client, url: str | URL, dest: str | os.PathLike[str],
                             state: str | os.PathLike[str], job: _Mirror, max_depth: int | None,
                             walk_options: dict[str, Any]) -> MirrorResult:
    """``mirror(state=FILE)``: the mirror as a crawl of one seed (:mod:`anyurl.transfer.crawl`)
    whose frontier is kept in FILE, files named relative to DIR as a mirror names them, with
    the mirror's rules (:class:`_StateSink`)."""
    from .crawl import CrawlEvent, DirectorySink, crawl

    start = client.parse(url)
    result = job.result
    progress = job.progress
    sink = _StateSink(job, start, os.fspath(state), DirectorySink(dest, base=start))

    def count(event: CrawlEvent) -> None:
        if event.kind == "listed":
            result.directories += 1
        if progress is not None:
            progress(result)

    options = {k: v for k, v in walk_options.items() if k in ("per_host", "delay", "robots", "requisites")}
    if isinstance(start, HTTPURL):  # "DIR/" and "DIR/index.html": fetched once
        sink.web = _below((start.scheme, start.host, start.port), start.path[: start.path.rfind("/") + 1], start)
    done = await crawl(client, [start], sink=sink, state=state, parallel=job.parallel,
                       max_depth=None if max_depth is None else max_depth + 1, same_host=True, under_seed=True,
                       on_event=count, follow=sink.follow, **options)
    if not done.interrupted and done.pending == 0:
        await sink.second_names()
    crawl_errors = []
    for (where, message), code in zip(done.first_errors, done.first_exit_codes, strict=True):
        err = TransferError(message, url=where)
        err.exit_code = code  # the error's own class's code (the crawl records its text)
        crawl_errors.append((where, err))
    result.errors[:0] = crawl_errors
    result.dangling.sort()
    result.seconds = done.seconds
    return result


async def mirror(client: Client, url: str | URL, dest: str | os.PathLike[str], *, parallel: int = 8,
                 resume: bool = False, newer: bool = False, force: bool = False,
                 max_depth: int | None = None, include: Sequence[str] = (), exclude: Sequence[str] = (),
                 progress: Callable[[MirrorResult], None] | None = None, symlinks: str = "copy",
                 state: str | os.PathLike[str] | None = None, **walk_options: Any) -> MirrorResult:
    """Reproduce the tree at *url* under *dest* (see the module docstring).

    *parallel* files download at once; *max_depth* is the number of directory
    levels below *url* (0: only its own files); *resume* keeps and continues partial
    files; *newer* skips files whose local copy has the remote size and is not
    older; *force* replaces files with other content; *include*/*exclude* are
    glob patterns matched against the relative path and the file name.
    *progress* is called with the running :class:`MirrorResult` after each
    file. Other keywords go to :func:`anyurl.transfer.walk.walk`. Failures are
    collected in ``result.errors``; the mirror goes on. At the end they are in
    tree order (by the entries' paths, names compared one by one), not in the
    order they happened, so the first error does not depend on timing.

    *symlinks*: "copy" (the default) copies what a server symlink leads to; "keep" makes it
    a local symlink with the same (relative) target, as lftp does, when that target stays
    inside *dest*; others are listed in ``result.refused_links`` and never made. A server
    symlink that leads nowhere is listed in ``result.dangling``, not an error.

    *state*: a file (SQLite) that keeps the mirror's frontier (:mod:`anyurl.transfer.crawl`):
    a mirror killed or stopped continues from it when run again with the same file, and its
    memory does not grow with the tree; every file is fetched once. The other options keep
    their meaning (decided before a file is fetched; see :class:`_StateSink`).
    """
    if symlinks not in ("copy", "keep"):
        raise ValueError(f"symlinks must be 'copy' or 'keep', not {symlinks!r}")
    target = Path(dest)
    try:
        _make_dir(target)
    except OSError as exc:
        raise TransferError(f"cannot create directory {target}: {exc.strerror or exc}", url=url) from exc
    try:
        _check_writable(target)
    except OSError as exc:
        raise TransferError(f"cannot write in directory {target}: {exc.strerror or exc}", url=url) from exc
    job = _Mirror(client, target, parallel=parallel, resume=resume, newer=newer, force=force,
                  include=include, exclude=exclude, progress=progress, symlinks=symlinks)
    if state is not None:
        return await _mirror_with_state(client, url, target, state, job, max_depth, walk_options)
    walk_options.setdefault("per_host", 2)
    walk_options.setdefault("keep", True)  # a page read for its links is saved from those bytes
    start = parse(url) if isinstance(url, str) else url
    if isinstance(start, HTTPURL):  # the directory of "a/b/" and of "a/b/page.html" is "a/b/"
        job.web = (start.scheme, start.host, start.port), start.path[: start.path.rfind("/") + 1]
        walk_options.setdefault("requisites", True)  # a web site's pages with their images, styles, scripts
        below, theirs = _below(*job.web, start), walk_options.get("follow")
        walk_options["follow"] = below if theirs is None else (lambda e: below(e) and theirs(e))
    if symlinks == "keep":  # made from the listings (see _Mirror.links), never walked into
        theirs_keep = walk_options.get("follow")
        walk_options["follow"] = (lambda e: e.kind != "symlink") if theirs_keep is None else (
            lambda e: e.kind != "symlink" and theirs_keep(e))
    # levels of directories below url -> depth of the entries walked
    depth = None if max_depth is None else max_depth + 1
    return await job.run(url, {"max_depth": depth, **walk_options})

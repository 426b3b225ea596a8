"""An fsspec filesystem over anyurl: ``fsspec.open("gopher://host/0/file.txt")``.

Installed with ``pip install 'anyurl[fsspec]'``; fsspec finds it through the
``fsspec.specs`` entry points for the schemes fsspec does not serve itself
(gopher, news, nntp, nntps, wais, prospero) and for the opt-in aliases
``anyurl+ftp``, ``anyurl+ftps``, ``anyurl+file``, ``anyurl+http`` and
``anyurl+https`` (fsspec's own ftp, file and http stay the defaults). Every
scheme also answers to ``anyurl+<scheme>``: pandas hands ``gopher://`` and
``nntp://`` URLs to urllib instead of fsspec, so ``pd.read_csv`` needs
``"anyurl+gopher://..."``, an open fsspec file, or :func:`anyurl.urllib.install`.

Paths are the URLs themselves (the alias prefix removed), so every name that
``ls``/``find``/``glob`` return can be handed back to fsspec or to anyurl.
Gopher menus and news groups are not path hierarchies (a menu's items carry
their own type and selector), so ``glob``, ``find`` and recursive ``get``
match and name items by their *file names* along the chain of listings that
reached them, never by URL prefixes; links to the listing itself, to an
ancestor, or marked ``rel="parent"`` are never followed, walks stay on the
root's server, and every walk is bounded (``max_listings``).

The filesystem is read-only. Its :class:`~anyurl.Client` is created on
fsspec's event loop at first use and closed when the filesystem is garbage
collected (or by :meth:`AnyURLFileSystem.close`).
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import logging
import os
import re
import tempfile
import threading
import weakref
from datetime import datetime
from typing import Any
from urllib.parse import quote, unquote

from fsspec.asyn import AsyncFileSystem, sync, sync_wrapper
from fsspec.callbacks import DEFAULT_CALLBACK, Callback
from fsspec.spec import AbstractBufferedFile
from fsspec.utils import other_paths

from ..client import Client
from ..errors import AnyURLError, NotSupported, URLSyntaxError
from ..links import body_entries
from ..response import Entry, Stat, is_html
from ..schemes import fsspec_schemes
from ..transfer.names import (
    entry_file_name,
    file_name,
    fit_name,
    is_parent_link,
    parse_or_value_error,
    segments,
)
from ..transfer.output import open_output
from ..urls import NNTPURL, GopherURL, NewsURL, parse

__all__ = ["ALIASED_SCHEMES", "DIRECT_SCHEMES", "AnyURLFile", "AnyURLFileSystem", "is_parent_link"]

# Served under their own names: fsspec has no implementation for them.
DIRECT_SCHEMES = fsspec_schemes("direct")
# fsspec already serves these: ours only under "anyurl+<scheme>".
ALIASED_SCHEMES = fsspec_schemes("aliased")
log = logging.getLogger("anyurl.fsspec")

ALIAS_PREFIX = "anyurl+"

# Entry.kind values that are listings one may descend into.
_DIRECTORY_KINDS = frozenset({"directory", "group"})
# Entry.kind values with a retrievable body.
_FILE_KINDS = frozenset({"file", "article"})
_MAGIC = re.compile(r"[*\[?]")
# "?" starts the query of these schemes' URLs, so it is no wildcard there
_QUERY_SCHEMES = ("wais", "http", "https")
# what _resolve leaves as it is when it percent-encodes a joined path
_URL_SAFE = "/:?#[]@!$&'()*+,;=%~<>"


def has_magic(url: str) -> bool:
    """True when *url* holds glob wildcards (``*``, ``[``, and ``?`` outside a query)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, _, rest = url.partition(":")
    if scheme.lower().removeprefix(ALIAS_PREFIX) in _QUERY_SCHEMES:
        rest = rest.split("?", 1)[0]
    return bool(_MAGIC.search(rest))


def _timestamp(when: datetime | None) -> float | None:
    return when.timestamp() if when is not None else None


def _norm(url: str) -> str:
    """The key under which listings are cached: no trailing slash (but "file:///" stays)."""
    head, sep, rest = url.partition("://")
    rest = rest.rstrip("/")
    return f"{head}://{rest}" if sep and rest else url


def _close_client(loop: asyncio.AbstractEventLoop | None, client: Client) -> None:
    """weakref finalizer: close *client* on its event loop when that loop still runs."""
    if loop is None or loop.is_closed() or not loop.is_running():
        return  # nothing can be awaited any more; the sockets close with their objects
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:  # collected on the loop's own thread: schedule, cannot block
        task = loop.create_task(client.aclose())
        _pending.add(task)
        task.add_done_callback(_pending.discard)
        return
    with contextlib.suppress(Exception):
        asyncio.run_coroutine_threadsafe(client.aclose(), loop).result(timeout=5)


_pending: set[asyncio.Task[None]] = set()


class AnyURLFileSystem(AsyncFileSystem):  # type: ignore[misc]
    """fsspec ``AsyncFileSystem`` for every URL scheme anyurl reads.

    Storage options: ``client_kwargs`` (keywords for :class:`anyurl.Client`,
    e.g. ``{"timeouts": Timeouts(total=30), "news_server": "host:119"}``),
    ``block_size`` (bytes per ranged read of an open file), ``max_listings``
    (most listings one ``find``/``glob``/``walk`` fetches), ``spool_max``
    (bytes of an unknown-size file held in memory before spilling to a
    temporary file), plus fsspec's ``asynchronous``, ``loop``, ``batch_size``.
    """

    # every scheme also as "anyurl+<scheme>": pandas sends gopher://, nntp://, wais://
    # and prospero:// URLs to urllib (they are in urllib.parse.uses_netloc), not to fsspec
    protocol = (*DIRECT_SCHEMES, *(ALIAS_PREFIX + s for s in (*ALIASED_SCHEMES, *DIRECT_SCHEMES)))
    root_marker = ""
    cachable = True

    def __init__(self, *, client_kwargs: dict[str, Any] | None = None, block_size: int | None = None,
                 max_listings: int = 10_000, spool_max: int = 8 << 20, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.client_kwargs = dict(client_kwargs or {})
        self.block_size = block_size or AbstractBufferedFile.DEFAULT_BLOCK_SIZE
        self.max_listings = max_listings
        self.spool_max = spool_max
        self._client: Client | None = None
        self._client_lock = threading.Lock()

    # -- lifecycle ------------------------------------------------------------

    async def get_client(self) -> Client:
        """The filesystem's Client (made on first use, on the loop that runs fsspec's coroutines)."""
        with self._client_lock:
            if self._client is None:
                self._client = Client(**self.client_kwargs)
                loop = asyncio.get_running_loop()
                weakref.finalize(self, _close_client, loop, self._client)
            return self._client

    async def _aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    close = sync_wrapper(_aclose)

    def invalidate_cache(self, path: str | None = None) -> None:
        """Forget cached listings and file facts (all, or those at and under *path*)."""
        if path is None:
            self.dircache.clear()
            self._file_facts.clear()
            return
        key = _norm(self._strip_protocol(path))
        for cache in (self.dircache, self._file_facts):
            for k in [k for k in cache if k == key or k.startswith(key + "/")]:
                cache.pop(k, None)
        self.dircache.pop(_norm(self._parent(path)), None)

    # -- paths ----------------------------------------------------------------

    @classmethod
    def _strip_protocol(cls, path: Any) -> Any:
        if isinstance(path, list):
            return [cls._strip_protocol(p) for p in path]
        path = str(path).strip()
        if path.lower().startswith(ALIAS_PREFIX):
            path = path[len(ALIAS_PREFIX):]
        return path

    def unstrip_protocol(self, name: str) -> str:
        scheme = name.split(":", 1)[0].lower()
        return ALIAS_PREFIX + name if scheme in ALIASED_SCHEMES else name

    @staticmethod
    def _get_kwargs_from_urls(path: str) -> dict[str, Any]:
        return {}

    @classmethod
    def _parent(cls, path: str) -> str:
        """The listing that holds *path* (gopher: the menu of the selector's directory)."""
        url: str = cls._strip_protocol(path)
        try:
            u = parse(url)
        except URLSyntaxError:
            return url.rsplit("/", 1)[0]
        if isinstance(u, GopherURL):
            sel = u.selector.rstrip("/")
            head = sel.rsplit("/", 1)[0] if "/" in sel else ""
            return f"gopher://{_host(u.host)}:{u.port}/1{head}"
        if isinstance(u, NNTPURL):
            return f"{u.scheme}://{_host(u.host)}:{u.port}/{u.group}" if u.article is not None else url
        if isinstance(u, NewsURL):
            return url  # an article by message-id belongs to no one listing
        return url.rstrip("/").rsplit("/", 1)[0] + "/"

    # -- listings -------------------------------------------------------------

    def _entry_info(self, entry: Entry) -> dict[str, Any]:
        kind = entry.kind
        if kind in _DIRECTORY_KINDS:
            ftype = "directory"
        elif kind in _FILE_KINDS:
            ftype = "file"
        else:  # symlinks, pages, searches, sessions: not something to copy blindly
            ftype = "other"
        info: dict[str, Any] = {"name": entry.url, "size": entry.size, "type": ftype,
                                "mtime": _timestamp(entry.modified), "kind": kind,
                                "title": entry.title or entry.name,
                                "filename": entry_file_name(entry)}
        if entry.meta:
            info["meta"] = dict(entry.meta)
        return info

    async def _listing(self, url: str) -> list[dict[str, Any]] | None:
        """The entries of *url* as info dicts, or None when *url* is not a listing."""
        key = _norm(url)
        if key in self.dircache:
            cached: list[dict[str, Any]] = self.dircache[key]
            return cached
        client = await self.get_client()
        below: str | None = None
        async with client.open(url) as body:
            # a streamed listing fills body.entries only as it is read
            entries = None if body.entries is None else [e async for e in body.aiter_entries()]
            if entries is None and url.startswith(("http://", "https://")) and is_html(body.content_type) \
                    and url.endswith("/"):
                # an index page (nginx/Apache autoindex) is a directory, as for walk and fsspec's
                # own http; a page whose links are all "page" links is an ordinary file
                stream = body_entries(body, client.limits)
                links = [] if stream is None else [e async for e in stream]
                if any(e.kind != "page" for e in links):
                    entries, below = links, url  # only what lies below it (wget's --no-parent)
            if entries is None:
                self._remember_file(url, body.size, body.content_type)
                return None
        out: list[dict[str, Any]] = []
        seen: set[str] = set()
        for e in entries:
            if e.url is None or e.url in seen or is_parent_link(url, e):
                continue
            if below is not None and (not e.url.startswith(below) or "?" in e.url or "#" in e.url):
                continue
            seen.add(e.url)
            out.append(self._entry_info(e))
        self.dircache[key] = out
        return out

    def _remember_file(self, url: str, size: int | None, content_type: str | None) -> None:
        self._file_facts[_norm(url)] = {"name": url, "size": size, "type": "file",
                                         "content_type": content_type}

    @property
    def _file_facts(self) -> dict[str, dict[str, Any]]:
        facts: dict[str, dict[str, Any]] | None = self.__dict__.get("_facts")
        if facts is None:
            facts = self.__dict__["_facts"] = {}
        return facts

    async def _ls(self, path: str, detail: bool = True, **kwargs: Any) -> list[Any]:
        url = self._strip_protocol(path)
        listing = await self._listing(url)
        infos = listing if listing is not None else [await self._info(url)]
        return infos if detail else [i["name"] for i in infos]

    def _stat_info(self, url: str, st: Stat) -> dict[str, Any]:
        ftype = "directory" if st.kind in _DIRECTORY_KINDS else "file"
        return {"name": url, "size": st.size if ftype == "file" else 0, "type": ftype,
                "mtime": _timestamp(st.modified), "kind": st.kind, "content_type": st.content_type,
                "filename": file_name(url)}

    async def _resolve(self, url: str) -> str:
        """The URL of the item *url* names, for paths fsspec joins itself.

        ``get_mapper("gopher://h/1/data")`` joins a key to its root as a path
        (``gopher://h/1/data/table.csv``), keeping the menu's type ``1``; gopher
        servers ignore the type, but anyurl would read the item as a menu. Such a
        URL stands for the item of that selector in the parent menu, whatever its
        type. A key with characters a URL may not hold (a space) is percent-encoded.
        """
        try:
            u = parse(url)
        except URLSyntaxError:
            quoted = quote(url, safe=_URL_SAFE)
            if quoted == url:
                return url
            try:
                u, url = parse(quoted), quoted
            except URLSyntaxError:
                return url
        if not isinstance(u, GopherURL) or u.gophertype != "1" or u.search is not None \
                or not u.selector.strip("/"):
            return url
        parent = self._parent(url)
        if _norm(parent) == _norm(url):
            return url
        try:
            listing = await self._listing(parent) or []
        except (AnyURLError, FileNotFoundError, NotADirectoryError):
            return url
        for info in listing:
            with contextlib.suppress(URLSyntaxError):
                item = parse(info["name"])
                if (isinstance(item, GopherURL) and item.selector == u.selector and item.search is None
                        and (item.host, item.port) == (u.host, u.port)):
                    return str(info["name"])
        return url

    async def _info(self, path: str, **kwargs: Any) -> dict[str, Any]:
        url = self._strip_protocol(path)
        key = _norm(url)
        target = await self._resolve(url)
        if target != url:
            return dict(await self._info(target), name=url)
        client = await self.get_client()
        try:
            st = await client.stat(url)
        except NotSupported:
            pass
        else:
            if st.kind == "file" and is_html(st.content_type) and url.endswith("/") \
                    and url.startswith(("http://", "https://")) and await self._listing(url) is not None:
                return {"name": url, "size": 0, "type": "directory", "filename": file_name(url)}
            return self._stat_info(url, st)
        # No way to ask: the entry in the parent listing, else open the URL itself.
        parent = self._parent(url)
        if _norm(parent) != key:
            with contextlib.suppress(AnyURLError, FileNotFoundError, NotADirectoryError):
                for info in await self._listing(parent) or []:
                    if _norm(info["name"]) == key:
                        return dict(info, name=url)
        if key in self.dircache:
            return {"name": url, "size": 0, "type": "directory", "filename": file_name(url)}
        if key not in self._file_facts:
            listing = await self._listing(url)
            if listing is not None:
                return {"name": url, "size": 0, "type": "directory", "filename": file_name(url)}
        return dict(self._file_facts[key], name=url, filename=file_name(url))

    async def _exists(self, path: str, **kwargs: Any) -> bool:
        try:
            await self._info(path)
        except (FileNotFoundError, ValueError):
            return False
        return True

    # -- walking (bounded, parent links never followed) --------------------------

    async def _tree(self, root: str, maxdepth: int | None = None
                    ) -> list[tuple[tuple[str, ...], dict[str, Any]]]:
        """Everything under *root*, breadth first: (file-name path from root, info).

        Stays on the root's server, fetches each listing once, never more than
        ``max_listings`` listings, and names duplicates within one listing
        ``name~2``, ``name~3`` so local copies never overwrite each other.
        """
        origin = segments(parse_or_value_error(root))[0]
        visited = {_norm(root)}
        frontier: list[tuple[str, tuple[str, ...]]] = [(root, ())]
        out: list[tuple[tuple[str, ...], dict[str, Any]]] = []
        fetched = 0
        depth = 0
        while frontier and (maxdepth is None or depth < maxdepth):
            depth += 1
            nxt: list[tuple[str, tuple[str, ...]]] = []
            for url, names in frontier:
                if fetched >= self.max_listings:
                    raise AnyURLError(f"walk stopped after {self.max_listings} listings (max_listings)",
                                      url=root)
                fetched += 1
                try:
                    listing = await self._listing(url)
                except (AnyURLError, OSError) as exc:
                    if not names:
                        raise  # the root itself: the caller's error
                    # one dead link (a menu item to a missing menu) does not end the walk, as in walk()
                    log.info("fsspec walk: skipped %s: %s", url, exc)
                    continue
                if listing is None:
                    continue
                used: dict[str, int] = {}
                for info in listing:
                    # a remote name may pass the local limit (a selector, a Windows server's
                    # 255 characters): shortened as mirror shortens, before duplicates are counted
                    name = fit_name(info["filename"])
                    used[name] = used.get(name, 0) + 1
                    if used[name] > 1:
                        name = fit_name(name, f"~{used[name]}")
                    key = _norm(info["name"])
                    if key in visited or segments(parse_or_value_error(info["name"]))[0] != origin:
                        continue
                    visited.add(key)
                    out.append(((*names, name), info))
                    if info["type"] == "directory":
                        nxt.append((info["name"], (*names, name)))
            frontier = nxt
        return out

    async def _find(self, path: str, maxdepth: int | None = None, withdirs: bool = False,
                    detail: bool = False, **kwargs: Any) -> Any:
        url = self._strip_protocol(path)
        info = await self._info(url)
        found: dict[str, dict[str, Any]] = {}
        if info["type"] != "directory":
            found[url] = info
        else:
            if withdirs:
                found[url] = info
            for _names, inf in await self._tree(url, maxdepth):
                if inf["type"] == "file" or (withdirs and inf["type"] == "directory"):
                    found[inf["name"]] = inf
        names = sorted(found)
        return {n: found[n] for n in names} if detail else names

    async def _walk(self, path: str, maxdepth: int | None = None, on_error: str = "omit",
                    **kwargs: Any) -> Any:
        url = self._strip_protocol(path)
        detail = kwargs.pop("detail", False)
        try:
            tree = await self._tree(url, maxdepth)
        except (FileNotFoundError, OSError) as exc:
            if on_error == "raise":
                raise
            if callable(on_error):
                on_error(exc)
            return
        children: dict[str, list[dict[str, Any]]] = {}
        parents: dict[tuple[str, ...], str] = {(): url}
        for names, info in tree:
            parents[names] = info["name"] if info["type"] == "directory" else parents.get(names, "")
            children.setdefault(parents[names[:-1]], []).append(info)
        for dpath in [url, *(i["name"] for _n, i in tree if i["type"] == "directory")]:
            kids = children.get(dpath, [])
            dirs = {i["filename"]: i for i in kids if i["type"] == "directory"}
            files = {i["filename"]: i for i in kids if i["type"] != "directory"}
            yield dpath, (dirs if detail else list(dirs)), (files if detail else list(files))

    def _split_pattern(self, pattern: str) -> tuple[str, list[str]]:
        """(listing URL to start from, file-name patterns below it)."""
        head, sep, rest = pattern.partition("://")
        if not sep:  # news:group/pattern
            head, _, rest = pattern.partition(":")
            scheme_part = head + ":"
        else:
            scheme_part = head + "://"
        parts = rest.split("/")
        for i, part in enumerate(parts):
            if has_magic(scheme_part + part):
                start = i if i > 0 else 1
                return scheme_part + "/".join(parts[:start]), parts[start:]
        return pattern, []

    async def _glob(self, path: str, maxdepth: int | None = None, **kwargs: Any) -> Any:
        detail = kwargs.pop("detail", False)
        url = self._strip_protocol(path)
        root, patterns = self._split_pattern(url)
        if not patterns:
            try:
                info = await self._info(url)
            except FileNotFoundError:
                return {} if detail else []
            return {url: info} if detail else [url]
        # (URL, info, depth below root) of the listings matched so far
        frontier: list[tuple[str, dict[str, Any] | None, int]] = [(root, None, 0)]
        matched: dict[str, dict[str, Any]] = {}
        depth_of: dict[str, int] = {}
        for i, pat in enumerate(patterns):
            last = i == len(patterns) - 1
            nxt: list[tuple[str, dict[str, Any] | None, int]] = []
            for dir_url, dir_info, depth in frontier:
                if pat == "**":
                    left = None if maxdepth is None else maxdepth - depth
                    cands = [] if left is not None and left < 1 else await self._tree(dir_url, left)
                    for names, inf in cands:
                        if last:
                            matched[inf["name"]], depth_of[inf["name"]] = inf, depth + len(names)
                        elif inf["type"] == "directory":
                            nxt.append((inf["name"], inf, depth + len(names)))
                    if not last:  # "**" also matches no directory at all
                        nxt.append((dir_url, dir_info, depth))
                    elif dir_info is not None:
                        matched[dir_url], depth_of[dir_url] = dir_info, depth
                    continue
                with contextlib.suppress(FileNotFoundError, NotADirectoryError):
                    for inf in await self._listing(dir_url) or []:
                        if not fnmatch.fnmatchcase(inf["filename"], unquote(pat)):
                            continue
                        if last:
                            if inf["type"] != "other":
                                matched[inf["name"]], depth_of[inf["name"]] = inf, depth + 1
                        elif inf["type"] == "directory":
                            nxt.append((inf["name"], inf, depth + 1))
            frontier = nxt
        if maxdepth is not None:
            matched = {n: inf for n, inf in matched.items() if depth_of[n] <= maxdepth}
        found = sorted(matched)
        return {n: matched[n] for n in found} if detail else found

    # -- reading ------------------------------------------------------------------

    async def _cat_file(self, path: str, start: int | None = None, end: int | None = None,
                        **kwargs: Any) -> bytes:
        url = await self._resolve(self._strip_protocol(path))
        if (start is not None and start < 0) or (end is not None and end < 0):
            size = (await self._info(url))["size"]
            if size is None:
                raise ValueError(f"{url}: negative offsets need the size, and the server gives none")
            start = size + start if start is not None and start < 0 else start
            end = size + end if end is not None and end < 0 else end
        offset = max(0, start or 0)
        length = None if end is None else max(0, end - offset)
        if length == 0:
            return b""
        client = await self.get_client()
        resp = await client.fetch(url, offset=offset, length=length)
        if resp.entries is not None and "html_links" not in resp.meta:  # an HTML page's links: a file
            raise IsADirectoryError(f"{url} is a listing, not a file")
        return resp.content

    async def _get_file(self, rpath: str, lpath: str, callback: Callback = DEFAULT_CALLBACK,
                        on_error: Any = "raise", **kwargs: Any) -> None:
        """Copy one file. *on_error* for a file that is not there (a dangling link in a
        listing): "raise", or "omit"/"ignore" (skipped, logged), or a callable given the error."""
        try:
            await self._copy_file(rpath, lpath, callback)
        except FileNotFoundError as exc:
            if on_error == "raise":
                raise
            log.warning("fsspec get: skipped %s", exc)
            if callable(on_error):
                on_error(exc)

    async def _copy_file(self, rpath: str, lpath: str, callback: Callback) -> None:
        url = await self._resolve(self._strip_protocol(rpath))
        if os.path.isdir(lpath) and not (await self._info(url))["type"] == "file":  # noqa: ASYNC240 - local disk, no network wait
            return
        client = await self.get_client()
        body_marker = object()
        # a remote name may fill the name limit: the part file's name is shortened to fit
        part = os.path.join(os.path.dirname(lpath) or ".", "." + fit_name(
            os.path.basename(lpath), f".{os.getpid()}-{id(body_marker)}.anyurl-part", 254))
        async with client.open(url) as body:
            if body.entries is not None:  # a listing: its copy is a directory, never a file
                os.makedirs(lpath, exist_ok=True)
                return
            callback.set_size(body.size)
            try:
                with open(open_output(part, truncate=True), "wb") as f:  # noqa: ASYNC230 - local disk
                    async for chunk in body:
                        f.write(chunk)
                        callback.relative_update(len(chunk))
                os.replace(part, lpath)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(part)

    async def _expand_named(self, rpath: str, recursive: bool, maxdepth: int | None
                            ) -> list[tuple[str, str, dict[str, Any]]]:
        """(URL, logical path, info) for every item *rpath* names: the logical path
        is the root followed by file names, which is what the local copy is called."""
        url = self._strip_protocol(rpath)
        root_logical = url.rstrip("/")
        out: list[tuple[str, str, dict[str, Any]]] = []
        if has_magic(url):
            root, _pats = self._split_pattern(url)
            matched = await self._glob(url, maxdepth=maxdepth, detail=True)
            # A glob's matches are named relative to its literal root.
            named = {inf["name"]: names for names, inf in await self._tree(root, None)} if matched else {}
            for name, info in matched.items():
                logical = "/".join((root.rstrip("/"), *named.get(name, (info["filename"],))))
                out.append((name, logical, info))
                if recursive and info["type"] == "directory" and (maxdepth is None or maxdepth > 1):
                    for names, inf in await self._tree(name, None if maxdepth is None else maxdepth - 1):
                        out.append((inf["name"], "/".join((logical, *names)), inf))
            return out
        info = await self._info(url)
        out.append((url, root_logical, info))
        if recursive and info["type"] == "directory":
            for names, inf in await self._tree(url, maxdepth):
                out.append((inf["name"], "/".join((root_logical, *names)), inf))
        return out

    async def _get(self, rpath: Any, lpath: Any, recursive: bool = False,
                   callback: Callback = DEFAULT_CALLBACK, maxdepth: int | None = None,
                   **kwargs: Any) -> Any:
        """Copy to local disk, naming copies by the file names of the listings walked
        (decoded, never percent-encoded, shortened to the local name limit as mirror's);
        a listing becomes a directory, never a file.

        ``on_error`` says what a listed file that is not there does (a dangling link: 404,
        550): "raise", or "omit" (also "ignore": skipped and logged on ``anyurl.fsspec``, the
        rest copied), or a callable given each such error. The default is "omit" for a
        recursive copy and "raise" otherwise, as for fsspec's own ``copy``."""
        on_error = kwargs.pop("on_error", None)
        if on_error is None:
            on_error = "omit" if recursive else "raise"
        if not (callable(on_error) or on_error in ("raise", "omit", "ignore")):
            raise ValueError(f"on_error must be 'raise', 'omit', 'ignore' or a callable, not {on_error!r}")
        kwargs["on_error"] = on_error
        if isinstance(rpath, list) and isinstance(lpath, list):
            return await super()._get(rpath, lpath, callback=callback, **kwargs)
        source_is_str = isinstance(rpath, str)
        trailing = source_is_str and rpath.endswith("/") and not self._is_root(rpath)
        items: list[tuple[str, str, dict[str, Any]]] = []
        for p in [rpath] if source_is_str else list(rpath):
            items.extend(await self._expand_named(p, recursive, maxdepth))
        if source_is_str and (not recursive or maxdepth is not None):
            items = [it for it in items if it[2]["type"] != "directory"]
        unique: dict[str, tuple[str, str, dict[str, Any]]] = {}
        for it in items:  # a glob and the walk below it may name one item twice
            if it[2]["type"] != "other":
                unique.setdefault(it[0], it)
        items = list(unique.values())
        if not items:
            return None
        lpath_s = lpath if isinstance(lpath, str) else None
        magic = source_is_str and has_magic(self._strip_protocol(rpath))
        dest_is_dir = lpath_s is not None and (lpath_s.endswith("/") or os.path.isdir(lpath_s))  # noqa: ASYNC240 - local disk, no network wait
        exists = source_is_str and ((magic and len(items) == 1)
                                    or (not magic and dest_is_dir and not trailing))
        logical = [lg for _u, lg, _i in items]
        lpaths = other_paths(logical, lpath, exists=exists, flatten=not source_is_str)
        dirs = [lp for lp, it in zip(lpaths, items, strict=True) if it[2]["type"] == "directory"]
        for d in dirs:
            os.makedirs(d, exist_ok=True)
        pairs = [(it[0], lp) for lp, it in zip(lpaths, items, strict=True) if it[2]["type"] != "directory"]
        if lpath_s is not None:
            root = os.path.realpath(lpath_s)  # noqa: ASYNC240 - local disk, no network wait
            for _u, lp in pairs:
                if os.path.commonpath([root, os.path.realpath(lp)]) != root:  # noqa: ASYNC240 - local disk, no network wait
                    raise ValueError(f"{lp!r} would be written outside {lpath_s!r}")
        if not pairs:
            return None
        return await super()._get([u for u, _ in pairs], [lp for _, lp in pairs], callback=callback,
                                  **kwargs)

    @staticmethod
    def _is_root(url: str) -> bool:
        return url.split("://", 1)[-1].strip("/").count("/") == 0

    def _open(self, path: str, mode: str = "rb", block_size: int | None = None,
              autocommit: bool = True, cache_type: str = "readahead",
              cache_options: dict[str, Any] | None = None, size: int | None = None,
              **kwargs: Any) -> Any:
        if mode != "rb":
            raise NotImplementedError(f"{type(self).__name__} is read-only (mode {mode!r})")
        url = self._strip_protocol(path)
        info = sync(self.loop, self._info, url) if size is None else {"size": size, "type": "file"}
        if info["type"] == "directory":
            raise IsADirectoryError(f"{url} is a listing, not a file")
        if info.get("size") is None:
            return sync(self.loop, self._spooled, url)
        return AnyURLFile(self, url, mode=mode, block_size=block_size or self.block_size,
                          cache_type=cache_type, cache_options=cache_options, size=info["size"])

    async def _spooled(self, url: str) -> Any:
        """A size-less resource read once into a spooled temporary file (random access after)."""
        url = await self._resolve(url)
        client = await self.get_client()
        spool = tempfile.SpooledTemporaryFile(max_size=self.spool_max)  # noqa: SIM115 - returned open
        try:
            async with client.open(url) as body:
                if body.entries is not None:
                    raise IsADirectoryError(f"{url} is a listing, not a file")
                async for chunk in body:
                    spool.write(chunk)
        except BaseException:
            spool.close()
            raise
        size = spool.tell()
        spool.seek(0)
        self._remember_file(url, size, None)
        return spool

    async def _modified(self, path: str) -> datetime:
        info = await self._info(path)
        if info.get("mtime") is None:
            raise NotSupported("the server gives no modification time", url=info["name"])
        return datetime.fromtimestamp(info["mtime"]).astimezone()

    modified = sync_wrapper(_modified)

    # -- read-only: every write refuses plainly -------------------------------------

    async def _pipe_file(self, path: str, value: bytes, **kwargs: Any) -> None:
        raise NotImplementedError(f"{type(self).__name__} is read-only")

    async def _put_file(self, lpath: str, rpath: str, **kwargs: Any) -> None:
        raise NotImplementedError(f"{type(self).__name__} is read-only")

    async def _rm_file(self, path: str, **kwargs: Any) -> None:
        raise NotImplementedError(f"{type(self).__name__} is read-only")


def _host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


class AnyURLFile(AbstractBufferedFile):  # type: ignore[misc]
    """A read-only random-access file whose blocks are ranged reads (HTTP Range,
    FTP REST, file seek; gopher and news skip to the offset client-side)."""

    def _fetch_range(self, start: int, end: int) -> bytes:
        data: bytes = self.fs.cat_file(self.path, start, end)  # fsspec's sync face of _cat_file
        return data

    def _upload_chunk(self, final: bool = False) -> bool:
        raise NotImplementedError("read-only")


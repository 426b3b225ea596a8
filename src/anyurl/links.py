"""A body's entries: a listing's, or an HTML page's links, parsed as the page streams
(``body_entries``: :meth:`anyurl.Client.ls`, walk, the CLI) or, for ``fetch``, when
``Response.entries`` is first read (``PageResponse``). The parsing itself is pure
(:mod:`anyurl.protocols.html`); this module feeds it the bytes.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from contextlib import suppress
from typing import Any

from .errors import AnyURLError, FetchTimeout
from .response import Body, Entry, Response, is_html
from .settings import Limits
from .urls import parse

__all__ = ["THREAD_PARSE_BYTES", "PageMeta", "PageResponse", "body_entries", "is_css", "page_base_url", "parse_page_in_thread"]


def page_base_url(body: Body) -> str:
    """The URL a page's relative links resolve against: where redirects led, else the body's."""
    final = body.meta.get("url")
    if isinstance(final, str) and final:
        with suppress(AnyURLError):
            return str(parse(final))
    return str(body.url)


def body_entries(body: Body, limits: Limits | None = None, *, requisites: bool = False
                 ) -> AsyncIterator[Entry] | None:
    """The entries of an open body: a listing's, or an HTML page's links parsed as the
    page streams in (bounded by *limits*); None for any other resource.

    With *requisites*, a style sheet (text/css) gives its ``url()`` and ``@import``
    references too. Reading them consumes the body. An HTML page stays a file (``body.entries``
    is None), so whatever saves bodies saves its bytes unchanged.
    """
    if body.entries is not None:
        return body.aiter_entries()
    if requisites and is_css(body.content_type):  # a style sheet's url() and @import
        return _page_entries(body, limits or Limits(), True, stylesheet=True)
    if not is_html(body.content_type):
        return None
    return _page_entries(body, limits or Limits(), requisites)


def is_css(content_type: str | None) -> bool:
    """True for a style sheet's media type (text/css)."""
    return (content_type or "").split(";", 1)[0].strip().lower() == "text/css"


async def _page_entries(body: Body, limits: Limits, requisites: bool = False,
                        stylesheet: bool = False) -> AsyncIterator[Entry]:
    from .protocols.html import MAX_PAGE_BYTES, PageLinks  # html.parser only for pages

    links = PageLinks(page_base_url(body), charset=body.charset, max_bytes=limits.max_size or MAX_PAGE_BYTES,
                      max_entries=limits.max_entries, requisites=requisites, stylesheet=stylesheet,
                      max_entries_bytes=limits.max_entries_bytes)
    async for chunk in body:
        for entry in links.feed(chunk):
            yield entry
    for entry in links.close():
        yield entry


# fetch() parses a page larger than this in a worker thread before it returns (html.parser
# reads ~9 MB/s here: 1 MiB is ~0.1 s, a pause the loop can take); smaller pages parse lazily.
THREAD_PARSE_BYTES = 1024 * 1024


def _links_of_content(page_url: str, charset: str | None, content: bytes, max_entries: int,
                      max_bytes: int | None = None, stop_at: float | None = None, late: str = "",
                      max_entries_bytes: int | None = None) -> tuple[list[Entry], dict[str, Any]]:
    """``fetch`` of an HTML page: its links as entries from at most *max_bytes* of it
    (``Limits.max_size`` or MAX_PAGE_BYTES); a page past the limits keeps those found
    before it and says why in ``meta["html_links_error"]`` (the bytes are what counts).
    Past *stop_at* (``time.monotonic()``) the parse stops there too: the links so far, and
    ``html_links_error`` says where and why (*late*: the limit that ran out)."""
    from .protocols.html import MAX_PAGE_BYTES, PageLinks

    bound = max_bytes or MAX_PAGE_BYTES
    links = PageLinks(page_url, charset=charset, max_bytes=None, max_entries=max_entries,
                      max_entries_bytes=max_entries_bytes)
    entries: list[Entry] = []
    meta: dict[str, Any] = {}
    view = memoryview(content)[:bound]  # no copy of a large page
    try:
        step = 64 * 1024   # ~10 ms of parsing: how late a deadline is noticed
        for i in range(0, len(view), step):
            if stop_at is not None and time.monotonic() > stop_at:
                # the bytes arrived whole: the page is returned with the links found so far
                meta["html_links_error"] = (f"links cut after {i} of {len(content)} bytes: parsing the page "
                                            f"took longer than {late or 'the deadline'} allows")
                break
            entries.extend(links.feed(bytes(view[i:i + step])))
        else:
            entries.extend(links.close())
        if len(content) > bound and "html_links_error" not in meta:
            meta["html_links_error"] = (f"HTML page larger than {bound} bytes: not parsed for links "
                                        f"past that (Limits.max_size)")
    except AnyURLError as exc:
        meta["html_links_error"] = exc.message
    meta["html_links"] = "autoindex" if links.autoindex else "page"
    return entries, meta


_LINK_KEYS = ("html_links", "html_links_error")


class PageMeta(dict[str, Any]):
    """A page's ``meta``: asking for ``html_links``/``html_links_error`` parses the page first."""

    owner: PageResponse | None = None

    def _resolve(self, key: object) -> bool:
        if key in _LINK_KEYS and self.owner is not None:
            self.owner.parse_links()
            return True
        return False

    def __missing__(self, key: str) -> Any:
        if self._resolve(key) and key in self.keys():
            return dict.__getitem__(self, key)
        raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        self._resolve(key)
        return dict.__contains__(self, key)

    def get(self, key: str, default: Any = None) -> Any:  # noqa: D102 - dict's
        self._resolve(key)
        return dict.get(self, key, default)

    def _everything(self) -> None:
        if self.owner is not None:
            self.owner.parse_links()

    def __iter__(self) -> Iterator[str]:
        self._everything()
        return dict.__iter__(self)

    def keys(self) -> Any:  # noqa: D102 - dict's
        self._everything()
        return dict.keys(self)

    def items(self) -> Any:  # noqa: D102 - dict's
        self._everything()
        return dict.items(self)

    def values(self) -> Any:  # noqa: D102 - dict's
        self._everything()
        return dict.values(self)

    def __len__(self) -> int:
        self._everything()
        return dict.__len__(self)

    def __eq__(self, other: object) -> bool:
        self._everything()
        return dict.__eq__(self, other)

    __hash__ = None

    def __repr__(self) -> str:
        self._everything()
        return dict.__repr__(self)


class PageResponse(Response):
    """``fetch`` of an HTML page: its links are parsed on first use of ``entries`` (or of
    ``meta["html_links"]``), not for every page fetched (~50 us a link)."""

    def __init__(self, *args: Any, links: tuple[str, int, int | None, int | None] | None = None,
                 **kwargs: Any) -> None:
        self._links = links
        self._entries: list[Entry] | None = None
        super().__init__(*args, **kwargs)
        if isinstance(self.__dict__.get("meta"), PageMeta):
            self.__dict__["meta"].owner = self

    def parse_links(self, stop_at: float | None = None, late: str = "") -> None:
        """Parse the page's links now (once; ``entries`` and ``meta`` do it on first use);
        past *stop_at* (``time.monotonic()``) the links are cut there (``meta["html_links_error"]``
        names *late*, the limit)."""
        links, self._links = self._links, None
        if links is None:
            return
        meta = self.__dict__["meta"]
        meta.owner = None
        self._entries, extra = _links_of_content(links[0], self.charset, self.content, links[1], links[2], stop_at,
                                                 late, links[3])
        meta.update(extra)

    @property
    def entries(self) -> list[Entry] | None:
        self.parse_links()
        return self._entries

    @entries.setter
    def entries(self, value: list[Entry] | None) -> None:
        self._entries = value


async def parse_page_in_thread(page: PageResponse, deadline: float | None, read_timeout: float) -> None:
    """``fetch`` of a page over THREAD_PARSE_BYTES: parse its links now, in a worker thread,
    by the request's deadline (``Timeouts.total``), or within ``Timeouts.read`` when it has
    none; past it the links are cut there and ``meta["html_links_error"]`` says so: the
    page's bytes arrived whole and are returned. A thread cannot be cancelled: it checks
    the time between 64 KiB pieces and stops; should it not (a piece that never ends),
    the wait for it ends a second after the deadline with :class:`FetchTimeout` naming
    the URL."""
    import asyncio  # here: only fetch of a large page

    loop = asyncio.get_running_loop()
    if deadline is None:
        budget, limit = read_timeout, f"Timeouts.read ({read_timeout:g} s; the fetch had no total)"
    else:
        budget, limit = max(0.0, deadline - loop.time()), "Timeouts.total"
    try:
        async with asyncio.timeout(budget + 1.0):
            await asyncio.to_thread(page.parse_links, time.monotonic() + budget, limit)
    except TimeoutError as exc:
        raise FetchTimeout(f"parsing the HTML page ({len(page.content)} bytes) for links took longer than "
                           f"{limit} allows", url=page.url) from exc

"""The entries of an open body: a listing's, or an HTML page's links parsed as the page streams.

Used by :meth:`anyurl.Client.ls`, walk and the CLI. The parsing itself is pure
(:mod:`anyurl.protocols.html`); this module feeds it a body's chunks.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import suppress

from .errors import AnyURLError
from .response import Body, Entry, is_html
from .settings import Limits
from .urls import parse

__all__ = ["body_entries"]


def _page_url(body: Body) -> str:
    """The URL a page's relative links resolve against: where redirects led, else the body's."""
    final = body.meta.get("url")
    if isinstance(final, str) and final:
        with suppress(AnyURLError):
            return str(parse(final))
    return str(body.url)


def body_entries(body: Body, limits: Limits | None = None) -> AsyncIterator[Entry] | None:
    """The entries of an open body: a listing's, or an HTML page's links parsed as the
    page streams in (bounded by *limits*); None for any other resource.

    Reading them consumes the body. An HTML page stays a file (``body.entries``
    is None), so whatever saves bodies saves its bytes unchanged.
    """
    if body.entries is not None:
        return body.aiter_entries()
    if not is_html(body.content_type):
        return None
    return _page_entries(body, limits or Limits())


async def _page_entries(body: Body, limits: Limits) -> AsyncIterator[Entry]:
    from .protocols.html import MAX_PAGE_BYTES, PageLinks  # html.parser only for pages

    links = PageLinks(_page_url(body), charset=body.charset, max_bytes=limits.max_size or MAX_PAGE_BYTES,
                      max_entries=limits.max_entries)
    async for chunk in body:
        for entry in links.feed(chunk):
            yield entry
    for entry in links.close():
        yield entry

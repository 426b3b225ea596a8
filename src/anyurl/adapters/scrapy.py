"""A Scrapy download handler that fetches through anyurl: gopher, ftp, news, nntp...

Install with ``pip install 'anyurl[scrapy]'`` and name it per scheme in the
project settings::

    DOWNLOAD_HANDLERS = {
        "gopher": "anyurl.scrapy.AnyURLDownloadHandler",
        "ftp": "anyurl.scrapy.AnyURLDownloadHandler",
        "news": "anyurl.scrapy.AnyURLDownloadHandler",
        "nntp": "anyurl.scrapy.AnyURLDownloadHandler",
    }
    ANYURL_CLIENT_KWARGS = {"news_server": "news.example.org:119"}   # optional

It needs Scrapy's asyncio reactor (the default since Scrapy 2.13).

What a spider receives:

- a file, article or item: a ``Response`` of the class Scrapy picks for its
  type (``TextResponse`` for text), status 200, with ``Content-Type`` and
  ``Content-Length`` headers;
- a listing (gopher menu, FTP directory, news group): an ``HtmlResponse``
  whose body is a ``<ul>`` of ``<a href="URL" data-kind=".." data-size="..">``
  links (so ``response.follow_all(css="a")`` and link extractors work), and
  ``response.meta["anyurl_entries"]``: the entries as dicts (``name``,
  ``url``, ``href`` (the URL to request), ``kind``, ``size``, ``modified``,
  ``title``, ``rel``/``key`` where set, ``meta``; see docs/entries.md).
  Links back to the listing itself or to an ancestor carry ``rel="parent"``
  and are left out of ``anyurl_entries``; so is a telnet item (kind
  "session"), listed as text with its URL in ``data-url``, never a link to follow;
- ``response.meta["anyurl_meta"]``: the scheme facts of the body (gopher
  type, article number, ...).

Scrapy accepts only URLs with "://" and a host, so an RFC 1738 ``news:X``
URL is written in a spider as RFC 5538 does, naming the server:
``news://news.example.org:119/comp.lang.python`` or
``news://news.example.org/<message-id without brackets>``. The handler reads it
as ``news:X`` on that server, and writes the links of news listings in that
form too (``anyurl_entries`` keep anyurl's ``news:X`` in ``url`` and the
Scrapy form in ``href``).

A missing resource answers status 404 and a refused login 403, as Scrapy's
own FTP handler does; other failures raise anyurl's errors (``ConnectError``
and ``FetchTimeout`` are ``OSError``s, which Scrapy's retry middleware retries).

Settings mapped to the :class:`~anyurl.Client`: ``DOWNLOAD_TIMEOUT`` (and the
``download_timeout`` request meta) bounds each download as ``Timeouts.total``;
``CONCURRENT_REQUESTS_PER_DOMAIN`` is ``Limits.per_host``; ``DOWNLOAD_MAXSIZE``
/ ``DOWNLOAD_WARNSIZE`` (and their meta keys) stop or warn about large
bodies; ``USER_AGENT`` is the Client's user agent. ``ANYURL_CLIENT_KWARGS``
passes any other :class:`~anyurl.Client` keyword.
"""

from __future__ import annotations

import html
import logging
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import Headers, HtmlResponse, Response
from scrapy.responsetypes import responsetypes

from ..client import Client
from ..errors import AccessDenied, ResourceNotFound
from ..settings import Limits, Timeouts
from ..transfer.names import is_parent_link

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler

    from ..response import Entry

__all__ = ["AnyURLDownloadHandler"]

log = logging.getLogger("anyurl.scrapy")


def split_news(url: str) -> tuple[str | None, str]:
    """(news server or None, anyurl URL) for a Scrapy request URL:
    ``news://host:port/X`` (RFC 5538) is ``news:X`` on host:port."""
    if url[:7].lower() == "news://":
        server, _, rest = url[7:].partition("/")
        return unquote(server) or None, "news:" + unquote(rest)
    return None, url


def to_scrapy(url: str, server: str | None) -> str:
    """The URL a Scrapy Request accepts for an anyurl URL (``news:X`` -> ``news://server/X``)."""
    if server and url[:5].lower() == "news:" and url[5:7] != "//":
        return f"news://{server}/{url[5:]}"
    return url


class AnyURLDownloadHandler:
    """Scrapy download handler (Scrapy >= 2.13 coroutine API) backed by one anyurl Client."""

    lazy = False

    def __init__(self, crawler: Crawler) -> None:
        from scrapy.utils.reactor import is_asyncio_reactor_installed

        if not is_asyncio_reactor_installed():
            raise NotConfigured("AnyURLDownloadHandler needs TWISTED_REACTOR = "
                                "'twisted.internet.asyncioreactor.AsyncioSelectorReactor'")
        settings = crawler.settings
        self.crawler = crawler
        self.timeout = settings.getfloat("DOWNLOAD_TIMEOUT", 180.0)
        self.maxsize = settings.getint("DOWNLOAD_MAXSIZE", 0)
        self.warnsize = settings.getint("DOWNLOAD_WARNSIZE", 0)
        kwargs: dict[str, Any] = dict(settings.getdict("ANYURL_CLIENT_KWARGS"))
        per_host = settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN", 8)
        if per_host > 0:
            kwargs.setdefault("limits", Limits(per_host=per_host))
        kwargs.setdefault("timeouts", self._timeouts(self.timeout))
        user_agent = settings.get("USER_AGENT")
        if user_agent:
            kwargs.setdefault("user_agent", str(user_agent))
        self.client_kwargs = kwargs
        self._clients: dict[str | None, Client] = {}

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> AnyURLDownloadHandler:
        """Scrapy's constructor hook."""
        return cls(crawler)

    @staticmethod
    def _timeouts(total: float) -> Timeouts:
        # connect/read waits never longer than the whole download may take
        return Timeouts(connect=min(30.0, total), read=min(60.0, total), total=total)

    @property
    def client(self) -> Client:
        """The Client (made on first use, on the reactor's asyncio loop)."""
        return self.client_for(None)

    def client_for(self, news_server: str | None) -> Client:
        """The Client for URLs naming *news_server* (None: the configured one)."""
        client = self._clients.get(news_server)
        if client is None:
            kwargs = dict(self.client_kwargs)
            if news_server:
                kwargs["news_server"] = news_server
            client = self._clients[news_server] = Client(**kwargs)
        return client

    async def download_request(self, request: Request) -> Response:
        """Fetch *request.url* and build the Response a spider sees."""
        timeout = float(request.meta.get("download_timeout", self.timeout))
        maxsize = int(request.meta.get("download_maxsize", self.maxsize))
        warnsize = int(request.meta.get("download_warnsize", self.warnsize))
        server, url = split_news(request.url)
        try:
            async with self.client_for(server).open(url, timeouts=self._timeouts(timeout)) as body:
                if body.entries is not None:
                    entries = [e async for e in body.aiter_entries()]  # streamed listings fill as read
                    return self._listing_response(request, url, server, entries, body.meta)
                if maxsize and body.size is not None and body.size > maxsize:
                    raise IgnoreRequest(f"{url}: {body.size} bytes announced, more than "
                                        f"DOWNLOAD_MAXSIZE={maxsize}")
                parts: list[bytes] = []
                got = 0
                warned = False
                async for chunk in body:
                    got += len(chunk)
                    if maxsize and got > maxsize:
                        raise IgnoreRequest(f"{url}: more than DOWNLOAD_MAXSIZE={maxsize} bytes; stopped")
                    if warnsize and got > warnsize and not warned:
                        warned = True
                        log.warning("%s: more than DOWNLOAD_WARNSIZE=%d bytes", url, warnsize)
                    parts.append(chunk)
                content_type, charset, meta = body.content_type, body.charset, body.meta
        except ResourceNotFound as exc:
            return Response(request.url, status=404, body=str(exc).encode(), request=request)
        except AccessDenied as exc:
            return Response(request.url, status=403, body=str(exc).encode(), request=request)
        data = b"".join(parts)
        ctype = content_type + (f"; charset={charset}" if charset and "charset=" not in content_type else "")
        headers = Headers({"Content-Type": ctype, "Content-Length": str(len(data))})
        request.meta["anyurl_meta"] = dict(meta)
        cls = responsetypes.from_args(headers=headers, url=url, body=data)
        response: Response = cls(url=request.url, status=200, headers=headers, body=data, request=request,
                                 protocol=url.split(":", 1)[0])
        return response

    def _listing_response(self, request: Request, url: str, server: str | None, entries: list[Entry],
                          meta: dict[str, Any]) -> Response:
        items: list[str] = []
        kept: list[dict[str, Any]] = []
        for e in entries:
            if e.url is None:
                items.append(f"<li class=\"{html.escape(e.kind)}\">{html.escape(e.title or e.name)}</li>")
                continue
            parent = is_parent_link(url, e)
            href = to_scrapy(e.url, server)
            if e.kind == "session":
                # a telnet item: an interactive login, nothing a spider can fetch; shown, never a link
                items.append(f'<li class="session" data-url="{html.escape(href)}">{html.escape(e.title or e.name)}</li>')
                continue
            attrs = (f'href="{html.escape(href)}" data-kind="{html.escape(e.kind)}"'
                     + (f' data-size="{e.size}"' if e.size is not None else "")
                     + (' rel="parent"' if parent else ""))
            items.append(f"<li><a {attrs}>{html.escape(e.title or e.name)}</a></li>")
            if not parent:
                kept.append({**e.as_dict(), "href": href})
        page = ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>"
                f"{html.escape(url)}</title></head><body><ul>\n" + "\n".join(items) + "\n</ul></body></html>\n")
        request.meta["anyurl_entries"] = kept
        request.meta["anyurl_meta"] = dict(meta)
        return HtmlResponse(url=request.url, status=200, body=page.encode("utf-8"), encoding="utf-8", request=request,
                            headers=Headers({"Content-Type": "text/html; charset=utf-8"}),
                            protocol=url.split(":", 1)[0])

    async def close(self) -> None:
        """Close the Client's connections (Scrapy calls this when the crawl ends)."""
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.aclose()

"""A Scrapy spider for the integration tests: ``scrapy runspider`` it over anyurl URLs.

It starts at the ``roots`` (comma-separated), follows every listing link that
stays on a root's server (never ``rel="parent"``), and yields one item per
retrieved file: url, sha256, size, status and the Response class. Links
containing ``deny`` are not followed. ``probe`` URLs are fetched with
``download_maxsize`` = ``probe_maxsize`` and yield an item naming the error
they end with.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import urlsplit

import scrapy
from scrapy.http import Response

HANDLER = "anyurl.adapters.scrapy.AnyURLDownloadHandler"
FILE_KINDS = {"file", "article"}


def origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}:{parts.netloc}"


class AnyURLSpider(scrapy.Spider):
    name = "anyurl-test"
    custom_settings = {
        "DOWNLOAD_HANDLERS": {s: HANDLER for s in ("gopher", "ftp", "news", "nntp", "http")},
        "TWISTED_REACTOR": "twisted.internet.asyncioreactor.AsyncioSelectorReactor",
        "ROBOTSTXT_OBEY": False,
        "RETRY_ENABLED": False,
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": "INFO",
    }

    def __init__(self, roots: str = "", probe: str = "", probe_maxsize: str = "1000", deny: str = "",
                 **kw: Any) -> None:
        super().__init__(**kw)
        self.deny = deny
        self.roots = [r for r in roots.split(",") if r]
        self.probes = [p for p in probe.split(",") if p]
        self.probe_maxsize = int(probe_maxsize)
        self.origins = {origin(r) for r in self.roots}

    async def start(self) -> AsyncIterator[Any]:
        for root in self.roots:
            yield scrapy.Request(root, callback=self.parse)
        for url in self.probes:
            yield scrapy.Request(url, callback=self.parse, errback=self.failed,
                                 meta={"download_maxsize": self.probe_maxsize}, dont_filter=True)

    def parse(self, response: Response) -> Iterator[Any]:
        entries = response.meta.get("anyurl_entries")
        if entries is None:
            yield {"url": response.url, "sha256": hashlib.sha256(response.body).hexdigest(),
                   "size": len(response.body), "status": response.status, "class": type(response).__name__}
            return
        # the HTML carries the same links as the entries (plus rel="parent" ones)
        hrefs = set(response.css("a:not([rel=parent])::attr(href)").getall())
        assert hrefs == {e["href"] for e in entries}, (response.url, hrefs)
        for e in entries:
            if origin(e["href"]) not in self.origins or (self.deny and self.deny in e["href"]):
                continue
            if e["kind"] in ("directory", "group") or e["kind"] in FILE_KINDS:
                yield scrapy.Request(e["href"], callback=self.parse)

    def failed(self, failure: Any) -> dict[str, Any]:
        return {"url": failure.request.url, "error": type(failure.value).__name__, "message": str(failure.value)}

"""Issue 25 item 7, Scrapy part: a telnet item of a gopher menu (type 8) is not a link a
spider follows (was: an <a href="telnet://..."> in the listing page Scrapy parses)."""

from __future__ import annotations

import pytest

pytest.importorskip("scrapy")

from fixtures.launcher import Launcher  # noqa: E402
from scrapy.http import Request  # noqa: E402

from anyurl.adapters.scrapy import AnyURLDownloadHandler  # noqa: E402
from anyurl.client import Client  # noqa: E402


@pytest.mark.parametrize("name", ["pygopherd", "gophernicus"])
async def test_a_telnet_item_is_no_followable_link(servers: Launcher, name: str) -> None:
    ep = servers.get(name)
    url = f"gopher://{ep.host}:{ep.port}/1/types"
    async with Client() as client:
        entries = (await client.fetch(url)).entries or []
    assert any(e.kind == "session" for e in entries)  # the menu has one
    resp = AnyURLDownloadHandler._listing_response(None, Request(url), url, None, entries, {})  # type: ignore[arg-type]
    hrefs = resp.css("a::attr(href)").getall()
    assert hrefs and not [h for h in hrefs if h.startswith(("telnet:", "tn3270:"))], hrefs
    assert "A telnet session" in resp.text  # still shown, as text
    # the entries are the links (what a spider follows), as for parent links
    assert not any(e["kind"] == "session" for e in resp.meta["anyurl_entries"])
    assert 'data-url="telnet://' in resp.text

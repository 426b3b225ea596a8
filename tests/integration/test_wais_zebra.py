"""wais: URLs against Zebra (fixtures/servers/zebra.py): real records stored as UTF-8.

yaz-ztest's made-up records are ASCII; Zebra serves what it indexed, so these
tests see whether the octets of a record arrive unchanged (issue 11: a SUTRS
record holding "Café" came back as ``Caf\\xc3\\x83\\xc2\\xa9``).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from fixtures.launcher import Endpoint

import anyurl
from anyurl.client import Client
from anyurl.urls import percent_encode


@pytest.fixture(scope="module")
def zebra(servers: object) -> Endpoint:
    return servers.get("zebra")  # type: ignore[attr-defined, no-any-return]


def search_url(ep: Endpoint, term: str) -> str:
    return ep.url("wais", f"/Default?{percent_encode(term, safe='')}")


def logged_searches(ep: Endpoint, needle: str) -> list[str]:
    path = Path(ep.info["log"])
    for _ in range(50):  # Zebra logs a request after answering it
        lines = [ln for ln in path.read_text(encoding="utf-8", errors="replace").splitlines()
                 if "[request] Search" in ln and needle in ln]
        if lines:
            return lines
        time.sleep(0.02)
    return []


async def test_utf8_sutrs_record_arrives_as_stored(zebra: Endpoint) -> None:
    title = zebra.info["records"]["cafe.grs"]["title"]
    async with Client() as client:
        listing = await client.fetch(search_url(zebra, "café"))
        assert listing.meta["count"] == 1 and listing.entries is not None
        url = listing.entries[0].url
        assert url is not None
        doc = await client.fetch(url)
    assert doc.meta["syntax"] == "SUTRS" and doc.content_type == "text/plain"
    assert f"title: {title}".encode() in doc.content  # b"Caf\xc3\xa9 cr\xc3\xa8me", not re-encoded
    assert "Zürich".encode() in doc.content
    assert b"\xc3\x83" not in doc.content  # the mark of UTF-8 encoded twice
    if "log" in zebra.info:  # a local server (not under docker compose): its log shows the term
        assert logged_searches(zebra, "café"), "Zebra did not log a search for café"


async def test_characters_beyond_latin1_and_xml(zebra: Endpoint) -> None:
    rec = zebra.info["records"]["greek.grs"]
    res = await anyurl.fetch(search_url(zebra, "snowman"))
    assert res.meta["count"] == 1 and res.entries is not None and res.entries[0].url
    sutrs = await anyurl.fetch(res.entries[0].url)
    assert rec["abstract"].encode() in sutrs.content
    assert sutrs.text().count("☃") == 1
    xml = await anyurl.fetch(res.entries[0].url.replace("/TEXT/", "/XML/"))
    assert xml.content_type == "application/xml"
    assert f"<Title>{rec['title']}</Title>".encode() in xml.content


async def test_listing_sizes_count_the_octets_as_received(zebra: Endpoint) -> None:
    res = await anyurl.fetch(search_url(zebra, "brötchen"))
    assert res.meta["count"] == 1 and res.entries is not None
    entry = res.entries[0]
    assert entry.url is not None
    doc = await anyurl.fetch(entry.url)
    assert entry.size == len(doc.content)  # no octets added on the way
    assert "Brötchen".encode() in doc.content

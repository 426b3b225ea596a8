"""Body listings: entries stream one at a time, bytes are their rendering, read() collects."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from anyurl.errors import NotSupported, ProtocolError
from anyurl.handlers.base import apply_length, render_entries
from anyurl.response import Body, Entry

ENTRIES = [Entry(f"item {i}", f"gopher://h/0/{i}", "file", size=i) for i in range(5000)]


class Source:
    """An entry iterator that records how far it was read and whether it was closed."""

    def __init__(self, entries: list[Entry], fail_after: int | None = None) -> None:
        self.entries = entries
        self.fail_after = fail_after
        self.produced = 0
        self.closed = False

    async def gen(self) -> AsyncIterator[Entry]:
        try:
            for e in self.entries:
                if self.fail_after is not None and self.produced >= self.fail_after:
                    raise ProtocolError("connection lost mid-listing")
                self.produced += 1
                yield e
        finally:
            self.closed = True


async def test_entries_stream_without_being_kept() -> None:
    src = Source(ENTRIES)
    body = Body.listing("gopher://h/1/", src.gen())
    assert body.entries == [] and body.streams_entries
    seen = 0
    async for e in body.aiter_entries():
        assert src.produced == seen + 1  # pulled one at a time, as the caller asks
        seen += 1
        assert e is ENTRIES[seen - 1]
    assert seen == len(ENTRIES) and body.complete and src.closed
    assert body.entries == []  # nothing was collected


async def test_bytes_are_the_rendering_and_read_collects() -> None:
    body = Body.listing("gopher://h/1/", Source(ENTRIES).gen())
    chunks = [c async for c in body]
    assert b"".join(chunks) == render_entries(ENTRIES) and len(chunks) > 1  # in pieces
    assert body.entries == []  # streaming bytes keeps no entries
    collected = Body.listing("gopher://h/1/", Source(ENTRIES).gen())
    assert await collected.read() == render_entries(ENTRIES)
    assert collected.entries == ENTRIES  # what fetch() returns as Response.entries


async def test_closing_early_closes_the_source() -> None:
    src = Source(ENTRIES)
    body = Body.listing("gopher://h/1/", src.gen())
    async for _ in body.aiter_entries():
        break
    await body.aclose()
    assert src.closed and src.produced == 1
    never = Source(ENTRIES).gen()
    body = Body.listing("gopher://h/1/", never)
    await body.aclose()  # the entry source holds the connection even if never started
    with pytest.raises(StopAsyncIteration):
        await never.__anext__()  # closed


async def test_errors_mid_listing_reach_the_caller() -> None:
    body = Body.listing("gopher://h/1/", Source(ENTRIES, fail_after=3).gen())
    got = []
    with pytest.raises(ProtocolError, match="mid-listing"):
        async for e in body.aiter_entries():
            got.append(e)
    assert got == ENTRIES[:3]


async def test_a_list_body_replays_its_entries_and_others_are_not_listings() -> None:
    body = Body.from_bytes("ftp://h/", render_entries(ENTRIES[:3]), entries=ENTRIES[:3])
    assert not body.streams_entries
    assert [e async for e in body.aiter_entries()] == ENTRIES[:3]
    plain = Body.from_bytes("ftp://h/file", b"data")
    with pytest.raises(NotSupported, match="no entries"):
        async for _ in plain.aiter_entries():
            pass


async def test_a_byte_range_of_a_listing_is_bytes_only() -> None:
    body = apply_length(Body.listing("gopher://h/1/", Source(ENTRIES).gen()), 100)
    assert not body.streams_entries  # the cut applies to the rendering
    assert await body.read() == render_entries(ENTRIES)[:100]

"""A hostile NNTP server: 1,000,000 OVER lines for a 1,000-article request, and a
1,000,000-group LIST ACTIVE, both generated lazily.

Before, the handler kept every OVER line (parsed) and sliced the newest
``listing_limit`` at the end: 563 MB for this reply. Now it keeps only lines
numbered inside the range it asked for, at most ``listing_limit``, and parses
only those. A group list now streams entry by entry. The client runs in a
child process (listing_child.py) so its peak RSS is measured alone.
"""

from __future__ import annotations

import asyncio

import pytest
from tests.hostile.fakes.base import AsyncServer
from tests.hostile.fakes.listing_child import read_listing

LINES = 1_000_000
LIMIT = 1000  # NewsOptions.listing_limit's default
MAX_RSS_MB = 100  # measured: 32 MB (a fresh interpreter with anyurl imported: ~30 MB)
MAX_SECONDS = 240  # under 20 s of CPU; the rest is slack for a shared, loaded 2-core machine

pytestmark = pytest.mark.timeout(MAX_SECONDS + 10)


def over_line(n: int) -> bytes:
    return (b"%d\tSubject of article %d\tposter@example.org\tMon, 01 Jan 2024 00:00:00 +0000\t"
            b"<%d@huge.example>\t\t%d\t10\r\n" % (n, n, n, 1000 + n))


def active_line(n: int) -> bytes:
    return b"huge.group%07d %d 1 y\r\n" % (n, n)


async def _stream(writer: asyncio.StreamWriter, make: object, count: int) -> None:
    assert callable(make)
    for start in range(1, count + 1, 2000):
        writer.write(b"".join(make(n) for n in range(start, min(count, start + 1999) + 1)))
        await writer.drain()
    writer.write(b".\r\n")


class HostileNewsServer(AsyncServer):
    """OVER ignores the range and sends every article 1..LINES; LIST ACTIVE sends LINES
    groups. ``received``: the commands, in order."""

    deadline = MAX_SECONDS

    def __init__(self) -> None:
        super().__init__()
        self.received: list[bytes] = []

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"200 hostile news server ready\r\n")
        while line := await reader.readline():
            self.received.append(line.rstrip(b"\r\n"))
            words = line.split()
            cmd = words[0].upper() if words else b""
            if cmd == b"CAPABILITIES":
                writer.write(b"101 caps\r\nVERSION 2\r\nREADER\r\nOVER\r\nLIST ACTIVE NEWSGROUPS\r\n.\r\n")
            elif cmd == b"GROUP":
                writer.write(b"211 %d 1 %d %s\r\n" % (LINES, LINES, words[1]))
            elif cmd == b"OVER":
                writer.write(b"224 overview follows\r\n")
                await _stream(writer, over_line, LINES)
            elif cmd == b"LIST" and words[1:2] == [b"NEWSGROUPS"]:
                writer.write(b"215 descriptions\r\nhuge.group0000001 The first group\r\n.\r\n")
            elif cmd == b"LIST":
                writer.write(b"215 active\r\n")
                await _stream(writer, active_line, LINES)
            elif cmd == b"QUIT":
                writer.write(b"205 bye\r\n")
                return
            else:
                writer.write(b"500 what?\r\n")
            await writer.drain()


async def test_million_over_lines_keep_only_the_newest_listing_limit() -> None:
    async with HostileNewsServer() as srv:
        res, took = await read_listing(f"nntp://127.0.0.1:{srv.port}/huge.group", "fetch", MAX_SECONDS)
    assert [c for c in srv.received if c != b"QUIT"][-1] == b"OVER %d-%d" % (LINES - LIMIT + 1, LINES)
    assert res["maxrss_mb"] < MAX_RSS_MB, res
    assert took < MAX_SECONDS
    assert res["count"] == LIMIT
    assert res["first"]["meta"]["number"] == LINES - LIMIT + 1
    assert res["last"]["meta"]["number"] == LINES
    assert res["last"]["title"] == f"Subject of article {LINES}" and res["last"]["size"] == 1000 + LINES
    assert res["last"]["name"] == str(LINES)  # the article number: its file name
    assert res["meta"]["ignored_lines"] == LINES - LIMIT  # sent outside the range asked for


async def test_million_group_list_streams_in_bounded_memory() -> None:
    async with HostileNewsServer() as srv:
        res, took = await read_listing(f"nntp://127.0.0.1:{srv.port}/", "entries", MAX_SECONDS)
    assert [c for c in srv.received if c != b"QUIT"][-2:] == [b"LIST NEWSGROUPS", b"LIST ACTIVE"]
    assert res["count"] == LINES
    assert res["first"]["name"] == "huge.group0000001"
    assert res["first"]["title"] == "The first group"
    assert res["last"]["name"] == f"huge.group{LINES:07d}" and res["last"]["meta"]["high"] == LINES
    assert res["meta"]["groups"] == LINES
    assert res["maxrss_mb"] < MAX_RSS_MB, res
    assert took < MAX_SECONDS

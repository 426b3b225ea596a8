"""robots.txt cannot hold a walk: its Crawl-delay is capped, its fetch has a deadline (issue 25 item 12)."""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixtures.launcher import Endpoint, Launcher
from tests.hostile.fakes.base import AsyncServer

from anyurl.client import Client, Timeouts
from anyurl.transfer import walk as walk_module


@pytest.fixture
def nginx_robots(servers: Launcher) -> Iterator[tuple[Endpoint, Path]]:
    """nginx with a robots.txt a test writes; the one before it is put back after."""
    ep = servers.get("nginx")
    robots = Path(ep.info["www"]) / "robots.txt"
    before = robots.read_bytes() if robots.exists() else None
    try:
        yield ep, robots
    finally:
        if before is None:
            robots.unlink(missing_ok=True)
        else:
            robots.write_bytes(before)


async def test_a_huge_crawl_delay_is_capped(nginx_robots: tuple[Endpoint, Path],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    ep, robots = nginx_robots
    robots.write_text("User-agent: *\nCrawl-delay: 1000000000\n")
    os.chmod(robots, 0o644)
    top = Path(ep.info["www"]) / f"crawl-{uuid.uuid4().hex[:8]}"
    for d in "abc":
        (top / d).mkdir(parents=True)
        (top / d / "x.txt").write_text(d)
    os.chmod(top, 0o755)
    for d in "abc":
        os.chmod(top / d, 0o755)
        os.chmod(top / d / "x.txt", 0o644)
    monkeypatch.setattr(walk_module, "CRAWL_DELAY_MAX", 0.3)  # the cap, small for the test
    t0 = time.monotonic()
    async with asyncio.timeout(60), Client(timeouts=Timeouts(connect=5, read=10)) as client:
        found = [f async for f in client.walk(f"http://{ep.host}:{ep.port}/{top.name}/")]
    took = time.monotonic() - t0
    assert sorted(f.url.rsplit("/", 2)[-2] + "/" + f.name for f in found if f.name == "x.txt") == [
        "a/x.txt", "b/x.txt", "c/x.txt"]
    assert took >= 0.3  # the capped delay still spaces the listings of a/, b/ and c/


class TrickledRobots(AsyncServer):
    """An HTTP server whose robots.txt comes one byte a second; "/" is a page with two links."""

    deadline = 600.0  # the trickle outlasts the test

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        async with asyncio.timeout(10):
            head = await reader.readuntil(b"\r\n\r\n")
        path = head.split(b" ")[1]
        if path == b"/robots.txt":
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100000\r\n\r\n")
            for _ in range(100_000):
                writer.write(b"#")
                await writer.drain()
                await asyncio.sleep(1)
            return
        page = b'<html><body><a href="/one.txt">1</a> <a href="/two.txt">2</a></body></html>'
        if path != b"/":
            page = b"x"
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n"
                     b"Content-Length: %d\r\n\r\n%s" % (len(page), page))
        await writer.drain()


async def test_a_trickled_robots_txt_ends_at_the_read_timeout() -> None:
    async with TrickledRobots() as srv:
        t0 = time.monotonic()
        async with asyncio.timeout(60), Client(timeouts=Timeouts(connect=5, read=3)) as client:
            found = [f async for f in client.walk(f"http://127.0.0.1:{srv.port}/")]
        took = time.monotonic() - t0
    assert {f.url.rsplit("/", 1)[-1] for f in found} == {"", "one.txt", "two.txt"}
    assert took < 30  # the robots.txt fetch ended at its deadline (3 s), and counted as none

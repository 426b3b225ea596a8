"""Issue 25 item 7: ``Client.close()``, the blocking ``aclose()`` for code outside a running
loop (fsspec's and urllib's callers): the kept-alive connection to nginx is closed, on the
loop it belongs to, whether that loop runs in another thread or is stopped."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Iterator

import pytest
from fixtures.launcher import Launcher

from anyurl.client import Client
from anyurl.errors import ConfigurationError


def sockets() -> int:
    n = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            n += os.readlink(f"/proc/self/fd/{fd}").startswith("socket:")
        except OSError:
            pass
    return n


@pytest.fixture
def url(servers: Launcher) -> str:
    ep = servers.get("nginx")
    return f"http://{ep.host}:{ep.port}/hello.txt"


@pytest.fixture
def thread_loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    t = threading.Thread(target=loop.run_forever, daemon=True)
    t.start()
    try:
        yield loop
    finally:
        loop.call_soon_threadsafe(loop.stop)
        t.join(10)
        loop.close()


def test_close_from_outside_a_loop_running_in_another_thread(url: str, thread_loop: asyncio.AbstractEventLoop) -> None:
    client = Client()
    before = sockets()
    body = asyncio.run_coroutine_threadsafe(client.fetch(url), thread_loop).result(30)
    assert body.content and sockets() == before + 1  # kept alive in the pool
    client.close()
    assert sockets() == before
    with pytest.raises(ConfigurationError):
        asyncio.run_coroutine_threadsafe(client.fetch(url), thread_loop).result(30)
    client.close()  # again: nothing to do


def test_close_after_the_loop_stopped(url: str) -> None:
    loop = asyncio.new_event_loop()
    try:
        client = Client()
        before = sockets()
        loop.run_until_complete(client.fetch(url))
        assert sockets() == before + 1
        client.close()
        assert sockets() == before
    finally:
        loop.close()


async def test_close_inside_a_running_loop_says_to_await_aclose(url: str) -> None:
    client = Client()
    await client.fetch(url)
    with pytest.raises(ConfigurationError, match="aclose"):
        client.close()
    await client.aclose()

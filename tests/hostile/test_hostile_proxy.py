"""A proxy that swallows the request: the aiohttp path's waits stay within anyurl's timeouts.

The wait for a new connection through a proxy (the CONNECT and its answer, then TLS) is
``Timeouts.connect``, timed by anyurl through aiohttp's public TraceConfig hooks
(handlers/http.py, ``_Waits``); a plain http request through it waits ``Timeouts.read``.
"""

from __future__ import annotations

import time

import pytest
from tests.hostile.fakes.mute_proxy import MuteProxy

from anyurl import Client, FetchTimeout, Timeouts


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)


async def test_an_unanswered_connect_is_a_connect_timeout_naming_the_proxy() -> None:
    async with MuteProxy() as proxy, Client(proxy=proxy.url, trust_env=False, use_netrc=False,
                                            timeouts=Timeouts(connect=0.5, read=30)) as c:
        start = time.monotonic()
        with pytest.raises(FetchTimeout, match=rf"connecting to 127.0.0.1:9 \(through proxy {proxy.url}\) timed out"):
            await c.fetch("https://127.0.0.1:9/x")
        assert time.monotonic() - start < 10
    assert proxy.heads and proxy.heads[0].startswith(b"CONNECT 127.0.0.1:9 HTTP/1.1\r\n")


async def test_an_unanswered_request_through_a_proxy_is_a_read_timeout() -> None:
    async with MuteProxy() as proxy, Client(proxy=proxy.url, trust_env=False, use_netrc=False,
                                            timeouts=Timeouts(connect=30, read=0.5)) as c:
        start = time.monotonic()
        with pytest.raises(FetchTimeout):
            await c.fetch("http://127.0.0.1:9/x")
        assert time.monotonic() - start < 10
    assert proxy.heads and proxy.heads[0].startswith(b"GET http://127.0.0.1:9/x HTTP/1.1\r\n")

"""A refused connection reads the same on asyncio's own loop as on uvloop (what the CLI runs on)."""

from __future__ import annotations

import asyncio
import socket

import pytest

import anyurl


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("scheme", ["ftp", "nntp", "http", "gopher"])
def test_a_refused_connection_says_connection_refused_on_the_asyncio_loop(scheme: str) -> None:
    # was "cannot connect to 127.0.0.1:P: Connect call failed ('127.0.0.1', P)" (asyncio's text)
    port = _closed_port()
    url = f"{scheme}://127.0.0.1:{port}/" + {"nntp": "g/1", "gopher": "0x"}.get(scheme, "x")
    with pytest.raises(anyurl.ConnectError) as info:
        asyncio.run(anyurl.fetch(url))  # asyncio.run: asyncio's own loop
    assert str(info.value) == f"{url}: cannot connect to 127.0.0.1:{port}: Connection refused"


def test_a_name_that_does_not_resolve_keeps_the_resolver_s_words() -> None:
    with pytest.raises(anyurl.ConnectError) as info:
        asyncio.run(anyurl.fetch("ftp://nonexistent.invalid/x"))
    assert str(info.value).startswith("ftp://nonexistent.invalid/x: cannot connect to nonexistent.invalid:21: ")
    assert "Unknown error" not in str(info.value)

"""A refused connection reads the same on asyncio's own loop as on uvloop (net.connect, the one table)."""

# anyurl.net.connect is the one place connect errors are worded.

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


def _causes(exc: BaseException) -> list[BaseException]:
    """*exc* and its ``__cause__`` chain, stopping at the first repeat (a loop)."""
    chain: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and all(cur is not seen for seen in chain) and len(chain) < 20:
        chain.append(cur)
        cur = cur.__cause__
    assert cur is None, f"the cause chain loops back to {cur!r}: {chain!r}"
    return chain


def test_an_http_connect_error_s_cause_chain_ends_at_the_os_error() -> None:
    # the HTTP request loop re-raised its own ConnectError "from" itself: a loop in the chain
    port = _closed_port()
    url = f"http://127.0.0.1:{port}/x"
    with pytest.raises(anyurl.ConnectError) as info:
        asyncio.run(anyurl.fetch(url))
    chain = _causes(info.value)
    assert isinstance(chain[-1], ConnectionRefusedError), chain
    assert not any(isinstance(c, anyurl.AnyURLError) for c in chain[1:]), chain

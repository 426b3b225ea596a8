"""No socket outlives its Client, even over TLS to a server that never answers close_notify.

The CI flake this pins down: ``test_status_mapping[404]`` failed on a ResourceWarning for
an unclosed plain TCP transport. The https tests just before it closed their Clients; the
lean path's TLS close sent close_notify and then (asyncio's and uvloop's TLS transports
both) kept the TCP socket until nginx answered. On a loaded machine the test's event loop
closed first, and the socket was only found by the garbage collector, tests later.
Here the server never answers, so the old behaviour fails every time, on both loops.
Each test runs its own loop so that it can look for leftovers once that loop is closed.
"""

from __future__ import annotations

import asyncio
import gc
import ssl
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest
from fixtures.servers.aiosmtpd_server import make_cert
from tests.hostile.fakes.tls_mute import TLSMute

from anyurl import Client
from anyurl.handlers.http import HTTPOptions


def _loop_factory(name: str) -> Callable[[], asyncio.AbstractEventLoop]:
    if name == "uvloop":
        return pytest.importorskip("uvloop").new_event_loop  # type: ignore[no-any-return]
    return asyncio.new_event_loop


@pytest.fixture(scope="module")
def cert_key(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return make_cert(tmp_path_factory.mktemp("tls"))


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_https_socket_is_closed_with_the_client_when_the_server_never_answers_close_notify(
        loop: str, cert_key: tuple[Path, Path]) -> None:
    factory = _loop_factory(loop)
    cert, key = cert_key
    ctx = ssl.create_default_context(cafile=str(cert))

    async def fetch_then_close(url: str) -> float:
        client = Client(http=HTTPOptions(ssl_context=ctx))
        try:
            assert (await client.fetch(url)).content == b"ok"  # the connection stays in the pool
        finally:
            t0 = time.monotonic()
            await client.aclose()
        return time.monotonic() - t0

    gc.collect()  # garbage from earlier tests warns here, as it would anywhere, not in the record
    with TLSMute(cert, key) as srv:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with asyncio.Runner(loop_factory=factory) as runner:
                took = runner.run(fetch_then_close(srv.url))
            gc.collect()  # what the loop left open is garbage now: its __del__ warns
        assert srv.close_notify.wait(5), "the client closed without a TLS close_notify"
    leaks = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    assert leaks == []
    assert took < 1  # no wait for an answer that never comes


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_a_tls_data_reader_closed_early_leaves_no_socket(loop: str, cert_key: tuple[Path, Path]) -> None:
    """The shared bulk reader (FTPS data connections): a body dropped before the server
    has finished sends close_notify and does not wait for an answer that never comes."""
    from anyurl.net.bulk import BulkReader

    factory = _loop_factory(loop)
    cert, key = cert_key
    ctx = ssl.create_default_context(cafile=str(cert))

    async def read_one_chunk_then_close(port: int) -> bytes | None:
        running = asyncio.get_running_loop()
        transport, reader = await running.create_connection(
            lambda: BulkReader(1 << 16), "127.0.0.1", port, ssl=ctx, server_hostname="localhost")
        transport.write(b"GET /x HTTP/1.1\r\nHost: localhost\r\n\r\n")
        chunk = await reader.next_chunk(5)
        reader.close()  # the server reads on and never answers close_notify
        return chunk

    gc.collect()
    with TLSMute(cert, key) as srv:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with asyncio.Runner(loop_factory=factory) as runner:
                chunk = runner.run(read_one_chunk_then_close(srv.port))
            gc.collect()
        assert srv.close_notify.wait(5), "the reader closed without a TLS close_notify"
    assert chunk is not None and chunk.endswith(b"ok")
    leaks = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    assert leaks == []

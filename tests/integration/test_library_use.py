"""anyurl used as a library the way a crawler embeds it: one Client shared across calls,
event loops and failures, checked against real servers (what came back, what the
server logged, which descriptors stayed open)."""

from __future__ import annotations

import asyncio
import gc
import os
import time
import warnings
from pathlib import Path

import pytest
from fixtures.launcher import Endpoint, Launcher
from fixtures.servers import _ftp_seed as seed
from fixtures.servers import vsftpd

from anyurl import AnyURLError, Client, FetchTimeout, Limits, Retry, Timeouts
from anyurl.errors import ConfigurationError, TransferError


def _sockets() -> set[str]:
    out = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:"):
            out.add(target)
    return out


@pytest.fixture()
def ftp(servers: Launcher) -> Endpoint:
    return servers.get("vsftpd")


def test_client_left_open_serves_a_second_asyncio_run(ftp: Endpoint) -> None:
    """asyncio.run twice with one Client nobody closed: the end of each run closes its pooled
    connections (QUIT logged, no socket left, no ResourceWarning), and the second run works on
    fresh ones (it failed with "unexpected error: RuntimeError: Event loop is closed")."""
    url = ftp.url("ftp", "/pub/hello.txt")
    client = Client()
    before = _sockets()

    async def once() -> bytes:
        return (await client.fetch(url)).content

    for _ in range(2):
        mark = os.path.getsize(ftp.info["log"])
        assert asyncio.run(once()) == seed.HELLO
        logged = vsftpd.commands_through(ftp.info["log"], mark)
        assert logged[:1] == ["USER anonymous"] and "RETR hello.txt" in logged and logged[-1] == "QUIT"
        assert _sockets() <= before


async def test_client_busy_on_a_running_loop_refuses_another(ftp: Endpoint) -> None:
    """A Client whose loop still runs cannot serve a second loop (in another thread): a clear
    anyurl error, not a RuntimeError from deep in asyncio."""
    url = ftp.url("ftp", "/pub/hello.txt")
    async with Client() as client:
        assert (await client.fetch(url)).content == seed.HELLO

        def other_loop() -> BaseException | None:
            try:
                asyncio.run(client.fetch(url))
            except BaseException as exc:  # noqa: BLE001 - returned for the assertion
                return exc
            return None

        exc = await asyncio.to_thread(other_loop)
        assert isinstance(exc, ConfigurationError) and isinstance(exc, AnyURLError)
        assert "in use on another event loop" in str(exc) and str(exc).startswith(url)
        # and this loop's pool is untouched
        assert (await client.fetch(url)).content == seed.HELLO


async def test_reading_a_body_after_its_block_is_an_error_not_empty_bytes(ftp: Endpoint) -> None:
    """`async with client.open(url) as body: ...` then `await body.read()` outside the block gave
    b"" (and `async for` nothing), which looks like an empty file."""
    async with Client() as client:
        async with client.open(ftp.url("ftp", "/pub/blob.bin")) as body:
            first = await anext(aiter(body))
        with pytest.raises(TransferError, match=r"the body was closed after \d+ bytes, before its end"):
            await body.read()
        with pytest.raises(TransferError):
            async for _ in body:
                pass
        assert first == seed.blob()[:len(first)]
        # a body read to its end and then closed was consumed: reading it again says so
        async with client.open(ftp.url("ftp", "/pub/hello.txt")) as body:
            assert await body.read() == seed.HELLO
        with pytest.raises(TransferError, match="already read to its end"):
            await body.read()
        assert (await client.fetch(ftp.url("ftp", "/pub/hello.txt"))).content == seed.HELLO


def _local_file(where: Path, data: bytes) -> Path:
    (where / "x.txt").write_bytes(data)
    return where / "x.txt"


@pytest.mark.parametrize("scheme", ["ftp", "http", "gopher", "file"])
async def test_reading_a_consumed_body_again_raises_not_empty_bytes(servers: Launcher, scheme: str,
                                                                    tmp_path: Path) -> None:
    """issue 33 item 6: a second `await body.read()` returned b"" silently (an empty file, to the
    caller); a body is read once, and reading it again raises as reading a closed one does."""
    if scheme == "ftp":
        url, want = servers.get("vsftpd").url("ftp", "/pub/hello.txt"), seed.HELLO
    elif scheme == "http":
        url, want = servers.get("nginx").url("http", "/hello.txt"), None
    elif scheme == "gopher":
        url, want = servers.get("pygopherd").url("gopher", "/0/hello.txt"), None
    else:
        url, want = f"file://{_local_file(tmp_path, b'local bytes')}", b"local bytes"
    async with Client() as client:
        async with client.open(url) as body:
            first = await body.read()
            assert first and (want is None or first == want)
            with pytest.raises(TransferError, match=r"already read to its end \(\d+ bytes\)") as info:
                await body.read()
            assert str(info.value).startswith(url.split("://")[0])
            with pytest.raises(TransferError, match="already read to its end"):
                async for _ in body:
                    pass
        with pytest.raises(TransferError, match="already read to its end"):
            await body.read()


@pytest.mark.parametrize("retry", [1, 2])
async def test_total_timeout_bounds_a_stream_read_by_a_slow_consumer(ftp: Endpoint, retry: int) -> None:
    """docs/client.md: for open() the deadline bounds the whole stream, the caller's time between
    chunks included. The chunks of a fast server were already buffered, so the wait for each
    never reached the deadline: Timeouts(total=0.5) let a slow reader go on for 15 s."""
    vsftpd.ensure_big(ftp.info, 20_000_000)
    url = ftp.url("ftp", "/pub/big.bin")
    async with Client(timeouts=Timeouts(total=0.5), limits=Limits(chunk_size=1 << 16),
                      retry=Retry(attempts=retry)) as client:
        t0 = time.monotonic()
        got = 0
        with pytest.raises(FetchTimeout) as info:
            async with client.open(url) as body:
                async for chunk in body:
                    got += len(chunk)
                    await asyncio.sleep(0.05)
        took = time.monotonic() - t0
        assert str(info.value) == f"{url}: transfer took longer than the total timeout 0.5 s"
        assert 0.45 < took < 2.0 and 0 < got < 20_000_000
        # the pool is sane afterwards
        assert (await client.fetch(ftp.url("ftp", "/pub/hello.txt"))).content == seed.HELLO


def test_client_moves_from_a_stopped_loop_that_was_never_closed(ftp: Endpoint) -> None:
    """loop.run_until_complete on one loop, then on another, the first left unclosed: the
    first loop runs nothing any more, so the Client moves on (not "in use on another loop"),
    and the first loop's end later does not close the connections of the second."""
    url = ftp.url("ftp", "/pub/hello.txt")
    first, second = asyncio.new_event_loop(), asyncio.new_event_loop()
    client = Client()

    async def once() -> bytes:
        return (await client.fetch(url)).content

    # the first loop's pooled connection is abandoned with it: its socket closes when
    # collected, with the ResourceWarning an unclosed loop deserves
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        try:
            assert first.run_until_complete(once()) == seed.HELLO
            assert second.run_until_complete(once()) == seed.HELLO
            first.run_until_complete(first.shutdown_asyncgens())  # the first loop's end
            mark = os.path.getsize(ftp.info["log"])
            # the second loop's idle connection survived it: reused, no new login
            assert second.run_until_complete(once()) == seed.HELLO
            assert "USER anonymous" not in vsftpd.commands(ftp.info["log"], mark)
            second.run_until_complete(client.aclose())
        finally:
            second.close()
            first.close()
            gc.collect()

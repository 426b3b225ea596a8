"""The aiohttp path's waits, timed by anyurl (anyurl.handlers.http, ``_Waits``): aiohttp's public
TraceConfig hooks say when a request queues for a free connection and when one is being
opened; one timer bounds each wait (``Timeouts.pool``, ``Timeouts.connect``). No network."""

from __future__ import annotations

import asyncio

from anyurl.handlers.http import _trace_config, _Waits


async def test_a_request_queued_again_keeps_its_first_pool_deadline() -> None:
    loop = asyncio.get_running_loop()
    async with asyncio.timeout(None) as timer:
        waits = _Waits(timer, pool=5.0, connect=1.0)
        waits.start("pool")
        first = timer.when()
        assert first is not None and abs(first - (loop.time() + 5.0)) < 0.5
        waits.end()
        assert timer.when() is None and waits.phase == ""
        await asyncio.sleep(0.05)
        waits.start("pool")  # aiohttp queues a request again when another took the freed connection
        assert timer.when() == first and waits.phase == "pool"
        waits.end()
        waits.start("connect")
        when = timer.when()
        assert when is not None and when < first and waits.phase == "connect"
        waits.end()


async def test_no_limit_means_no_deadline() -> None:
    async with asyncio.timeout(None) as timer:
        waits = _Waits(timer, pool=None, connect=None)
        waits.start("pool")
        assert timer.when() is None
        waits.start("connect")
        assert timer.when() is None
        await asyncio.sleep(0)  # (nothing to time out here)


async def test_the_hooks_drive_only_anyurls_waits() -> None:
    config = _trace_config()
    ctx_ours, ctx_other = config.trace_config_ctx(None), config.trace_config_ctx({"someone": "else"})
    async with asyncio.timeout(None) as timer:
        waits = _Waits(timer, pool=2.0, connect=1.0)
        ctx_ours.trace_request_ctx = waits
        for hook in config.on_connection_queued_start:
            await hook(None, ctx_ours, None)
            await hook(None, ctx_other, None)  # not ours: left alone
        assert waits.phase == "pool" and timer.when() is not None
        for hook in config.on_connection_queued_end:
            await hook(None, ctx_ours, None)
        assert waits.phase == "" and timer.when() is None
        for hook in config.on_connection_create_start:
            await hook(None, ctx_ours, None)
        assert waits.phase == "connect"

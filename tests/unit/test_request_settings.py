"""Typed per-request settings, retries and the total deadline at the public boundary (no servers).

A scripted handler stands in for a server so each failure happens at a known byte.
"""

from __future__ import annotations

import time

import pytest
from tests.doubles import scripted

import anyurl
from anyurl import (
    Client,
    ConfigurationError,
    ConnectError,
    FetchTimeout,
    NotSupported,
    ResourceNotFound,
    Retry,
    TemporaryFailure,
    Timeouts,
    TruncatedTransfer,
)

Scripted, URL = scripted("x-script")  # DATA in 500-byte chunks; each test scripts its opens
DATA = Scripted.data


@pytest.fixture(autouse=True)
def _reset() -> None:
    Scripted.reset()


def test_unknown_keywords_raise_type_error_naming_them() -> None:
    with pytest.raises(TypeError, match="timeout"):
        Client(timeout=5)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="bogus_option"):
        Client(bogus_option=1)  # type: ignore[call-arg]


async def test_unknown_call_keywords_raise_type_error() -> None:
    async with Client() as c:
        with pytest.raises(TypeError, match="bogus_option"):
            await c.fetch(URL, bogus_option=1)  # type: ignore[call-arg]
        with pytest.raises(TypeError, match="timeout"):
            await c.fetch(URL, timeout=1)  # type: ignore[call-arg]
        with pytest.raises(TypeError, match="timeouts= must be a Timeouts"):
            await c.fetch(URL, timeouts=5)  # type: ignore[arg-type]


def test_wrong_scheme_options_type_is_refused_at_construction() -> None:
    from anyurl.handlers.gopher import GopherOptions

    with pytest.raises(ConfigurationError, match="Client\\(ftp=...\\) must be a FTPOptions, not GopherOptions"):
        Client(ftp=GopherOptions())


def test_settings_are_validated() -> None:
    with pytest.raises(ConfigurationError, match="read must be > 0"):
        Timeouts(read=0)
    with pytest.raises(ConfigurationError, match="per_host must be > 0"):
        anyurl.Limits(per_host=0)
    with pytest.raises(ConfigurationError, match="attempts"):
        Retry(attempts=0)


def test_backoff_is_exponential_capped_and_honours_retry_after() -> None:
    r = Retry(attempts=5, backoff=0.5, backoff_max=3.0)
    assert [r.delay(n) for n in (2, 3, 4, 5)] == [0.5, 1.0, 2.0, 3.0]
    assert r.delay(2, TemporaryFailure("busy", retry_after=2.5)) == 2.5
    assert r.delay(2, TemporaryFailure("busy", retry_after=99)) == 3.0
    assert r.retries(ConnectError("refused")) and not r.retries(ResourceNotFound("gone"))


async def test_retry_on_open_then_success() -> None:
    Scripted.steps = ["refuse", "refuse", "ok"]
    async with Client(retry=Retry(attempts=3, backoff=0.01)) as c:
        r = await c.fetch(URL)
    assert r.content == DATA
    assert Scripted.opened == [(0, None)] * 3


async def test_no_retry_by_default() -> None:
    Scripted.steps = ["refuse"]
    async with Client() as c:
        with pytest.raises(TemporaryFailure):
            await c.fetch(URL)
    assert len(Scripted.opened) == 1


async def test_per_request_retry_overrides_client() -> None:
    Scripted.steps = ["refuse", "ok"]
    async with Client() as c:
        assert (await c.fetch(URL, retry=Retry(attempts=2, backoff=0))).content == DATA


async def test_resumes_from_the_byte_reached_when_the_scheme_can() -> None:
    Scripted.steps = ["cut", "ok"]
    async with Client(retry=Retry(attempts=2, backoff=0)) as c:
        r = await c.fetch(URL)
    assert r.content == DATA  # byte-exact: nothing repeated, nothing lost
    assert Scripted.opened == [(0, None), (1000, None)]


async def test_resumed_range_keeps_its_length() -> None:
    Scripted.steps = ["cut", "ok"]
    async with Client(retry=Retry(attempts=2, backoff=0)) as c:
        r = await c.fetch(URL, offset=100, length=2000)
    assert r.content == DATA[100:2100]
    assert Scripted.opened == [(100, 2000), (1100, 1000)]


async def test_never_restarts_a_body_already_handed_over_when_it_cannot_resume() -> None:
    Scripted.steps = ["cut", "ok"]
    Scripted.resumable = False
    async with Client(retry=Retry(attempts=3, backoff=0)) as c:
        with pytest.raises(TruncatedTransfer):
            await c.fetch(URL)
    assert len(Scripted.opened) == 1


async def test_total_timeout_bounds_an_open_stream() -> None:
    Scripted.steps = ["stall"]
    got = 0
    t0 = time.monotonic()
    async with Client(timeouts=Timeouts(total=0.3)) as c, c.open(URL) as body:
        with pytest.raises(FetchTimeout, match="total timeout"):
            async for chunk in body:
                got += len(chunk)
    assert got == 1000 and time.monotonic() - t0 < 2


async def test_per_request_timeouts_apply_to_that_request_only() -> None:
    async with Client() as c:
        Scripted.steps = ["stall"]
        with pytest.raises(FetchTimeout):
            await c.fetch(URL, timeouts=Timeouts(total=0.2))
        Scripted.steps = ["ok"]
        assert (await c.fetch(URL)).content == DATA


async def test_retry_waits_never_run_past_the_total() -> None:
    Scripted.steps = ["refuse"] * 10
    t0 = time.monotonic()
    async with Client(timeouts=Timeouts(total=0.5), retry=Retry(attempts=10, backoff=0.2)) as c:
        with pytest.raises(TemporaryFailure):
            await c.fetch(URL)
    assert time.monotonic() - t0 < 1.0


async def test_stat_and_unsupported_stat() -> None:
    async with Client() as c:
        st = await c.stat(URL)
        assert st.size == len(DATA) and st.as_dict()["size"] == len(DATA)
        with pytest.raises(NotSupported, match="telnet URLs have no way"):
            await c.stat("telnet://127.0.0.1/")


async def test_final_error_carries_its_tries_at_open_and_mid_stream() -> None:
    # the message stays the server's; how many tries were made is in the history
    Scripted.steps = ["refuse"] * 3
    async with Client(retry=Retry(attempts=3, backoff=0)) as c:
        with pytest.raises(TemporaryFailure) as info:
            await c.fetch(URL)
        assert info.value.message == "421 too many users" and len(info.value.history) == 3
        Scripted.steps = ["cut"] * 3  # each try hands over 1000 more bytes, then breaks
        with pytest.raises(TruncatedTransfer) as cut:
            await c.fetch(URL)
        assert str(cut.value) == f"{URL}: connection closed mid-transfer" and len(cut.value.history) == 3
        Scripted.steps = ["refuse"]
        with pytest.raises(TemporaryFailure) as once:
            await c.fetch(URL, retry=Retry(attempts=1))
        assert once.value.message == "421 too many users" and once.value.history == ()
    assert Scripted.opened[3:6] == [(0, None), (1000, None), (2000, None)]

"""The one retry rule (anyurl.settings.Retry.increment) and the Client's one loop around it
(anyurl.client), on the suite's stand-in handler: the history of tries is kept in the value
and carried by the final error, whose message is never rewritten."""

from __future__ import annotations

import dataclasses
import pickle
import socket

import pytest
from tests.doubles import scripted

from anyurl import Client, ConnectError, FetchTimeout, ResourceNotFound, Retry, TemporaryFailure, Timeouts
from anyurl.errors import TruncatedTransfer
from anyurl.registry import register
from anyurl.settings import Attempt
from anyurl.urls import GenericURL

Tried, URL = scripted("x-tried")
DATA = Tried.data


@pytest.fixture(autouse=True)
def _reset() -> None:
    Tried.reset()


def _unknown_name() -> ConnectError:
    try:
        try:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        except OSError as exc:
            raise ConnectError("cannot connect to nowhere.invalid:21: Name or service not known") from exc
    except ConnectError as err:
        return err


# -- the value -------------------------------------------------------------------------------


def test_increment_returns_a_new_value_with_one_more_attempt() -> None:
    policy = Retry(attempts=3, backoff=0.5)
    first, second, third = (ConnectError(f"refused {n}") for n in (1, 2, 3))
    once = policy.increment(first)
    assert policy.history == () and policy.next_delay is None  # the value itself never changes
    assert once.history == (Attempt(first, 0.5),) and once.next_delay == 0.5
    twice = once.increment(second)
    assert [a.delay for a in twice.history] == [0.5, 1.0]
    done = twice.increment(third)
    assert [(a.error, a.delay) for a in done.history] == [(first, 0.5), (second, 1.0), (third, None)]
    assert done.next_delay is None  # attempts used up
    assert (done.attempts, done.backoff, done.on) == (policy.attempts, policy.backoff, policy.on)


def test_increment_ends_at_once_on_what_a_retry_cannot_mend() -> None:
    policy = Retry(attempts=5, backoff=0.1)
    assert policy.increment(ResourceNotFound("gone")).next_delay is None  # not a class in `on`
    assert policy.increment(_unknown_name()).next_delay is None  # the resolver's final answer
    again = ConnectError("cannot connect")
    again.__cause__ = socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
    assert policy.increment(again).next_delay == 0.1  # "try again later" is retried
    assert policy.increment(ConnectError("cut"), repeatable=False).next_delay is None  # bytes handed out
    assert policy.increment(ConnectError("late"), remaining=0.1).next_delay is None  # wait reaches the deadline
    assert policy.increment(ConnectError("late"), remaining=0.11).next_delay == 0.1
    assert Retry(attempts=1).increment(ConnectError("once")).next_delay is None


def test_a_server_delay_is_recorded_as_the_wait() -> None:
    busy = TemporaryFailure("503 busy", retry_after=2.0)
    assert Retry(attempts=2, backoff=0.1).increment(busy).history == (Attempt(busy, 2.0),)


def test_history_is_part_of_the_value() -> None:
    exc = ConnectError("refused")
    grown = Retry(attempts=2).increment(exc)
    assert grown != Retry(attempts=2) and grown == Retry(attempts=2, history=(Attempt(exc, 0.5),))
    assert pickle.loads(pickle.dumps(grown)).history[0].delay == 0.5
    assert dataclasses.replace(grown, history=()) == Retry(attempts=2)
    with pytest.raises(AttributeError):
        grown.history[0].delay = 1.0


# -- the Client's loop, on the stand-in ------------------------------------------------------


async def test_open_failures_end_with_the_history_and_the_original_message() -> None:
    Tried.steps = ["refuse"] * 3
    async with Client(retry=Retry(attempts=3, backoff=0.01)) as c:
        with pytest.raises(TemporaryFailure) as info:
            await c.fetch(URL)
    exc = info.value
    assert str(exc) == f"{URL}: 421 too many users" and exc.args == ("421 too many users",)
    assert len(exc.history) == 3 and exc.history[-1] == Attempt(exc, None)
    # each wait: the back-off, or the server's own 0.01 s when longer
    assert [a.delay for a in exc.history] == [0.01, 0.02, None]
    assert all(a.error.message == "421 too many users" for a in exc.history)
    assert len({id(a.error) for a in exc.history}) == 3  # one error per try, none reused
    assert Tried.opened == [(0, None)] * 3


async def test_a_success_after_failures_returns_the_data() -> None:
    Tried.steps = ["refuse", "refuse"]
    async with Client(retry=Retry(attempts=3, backoff=0)) as c:
        assert (await c.fetch(URL)).content == DATA


async def test_reopenings_mid_stream_count_against_the_same_attempts() -> None:
    # A cut body reopened, then refused twice: three tries in all for attempts=3. (The
    # reopening used to start a count of its own: four opens, and the call succeeded.)
    Tried.steps = ["cut", "refuse", "refuse"]
    async with Client(retry=Retry(attempts=3, backoff=0)) as c:
        with pytest.raises(TemporaryFailure) as info:
            await c.fetch(URL)
    assert Tried.opened == [(0, None), (1000, None), (1000, None)]
    history = info.value.history
    assert [type(a.error) for a in history] == [TruncatedTransfer, TemporaryFailure, TemporaryFailure]
    assert [a.delay for a in history] == [0.0, 0.01, None]


async def test_a_body_that_cannot_resume_ends_after_bytes_were_handed_out() -> None:
    Tried.reset(resumable=False)
    Tried.steps = ["cut"]
    async with Client(retry=Retry(attempts=3, backoff=0)) as c, c.open(URL) as body:
        got = bytearray()
        with pytest.raises(TruncatedTransfer) as info:
            async for chunk in body:
                got += chunk
    assert bytes(got) == DATA[:1000] and len(Tried.opened) == 1
    assert info.value.message == "connection closed mid-transfer"
    assert info.value.history == (Attempt(info.value, None),)


async def test_stat_retries_under_the_same_rule() -> None:
    calls: list[int] = []

    class Flaky(Tried):
        async def stat(self, req):  # type: ignore[no-untyped-def]
            calls.append(1)
            if len(calls) < 3:
                raise ConnectError("refused", url=req.url)
            return await super().stat(req)

    register("x-tried-stat", Flaky)
    url = GenericURL(scheme="x-tried-stat", schemepart="thing")
    async with Client(retry=Retry(attempts=3, backoff=0)) as c:
        assert (await c.stat(url)).size == len(DATA)
        calls.clear()
        with pytest.raises(ConnectError) as info:
            await c.stat(url, retry=Retry(attempts=2, backoff=0))
    assert info.value.message == "refused" and len(info.value.history) == 2 and len(calls) == 2


async def test_the_deadline_ends_the_call_with_the_tries_so_far() -> None:
    Tried.steps = ["refuse", "stall"]
    async with Client(retry=Retry(attempts=5, backoff=0), timeouts=Timeouts(total=0.5)) as c:
        with pytest.raises(FetchTimeout) as info:
            await c.fetch(URL)
    history = info.value.history
    assert [type(a.error) for a in history] == [TemporaryFailure, FetchTimeout]
    assert history[-1] == Attempt(info.value, None) and "tries" not in str(info.value)


async def test_without_retries_nothing_is_recorded() -> None:
    Tried.steps = ["refuse"]
    async with Client(timeouts=Timeouts(total=5)) as c:
        with pytest.raises(TemporaryFailure) as info:
            await c.fetch(URL)
    assert info.value.history == ()

"""Body iteration (a class, not an async generator): counts, ends once, translates foreign errors."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from anyurl import AnyURLError
from anyurl.response import Body


async def test_chunks_are_counted_and_the_end_is_seen_once() -> None:
    async def chunks() -> AsyncIterator[bytes]:
        yield b"ab"
        yield b"cde"

    body = Body("x:y", chunks())
    it = aiter(body)
    assert [c async for c in it] == [b"ab", b"cde"]
    assert body.bytes_read == 5 and body.complete
    with pytest.raises(StopAsyncIteration):
        await anext(it)


async def test_a_foreign_error_is_translated_and_the_body_stays_incomplete() -> None:
    calls = 0

    async def chunks() -> AsyncIterator[bytes]:
        nonlocal calls
        calls += 1
        yield b"ab"
        raise OSError("disk on fire")

    body = Body("x:y", chunks())
    it = aiter(body)
    assert await anext(it) == b"ab"
    with pytest.raises(AnyURLError) as info:
        await anext(it)
    assert isinstance(info.value.__cause__, OSError) and "disk on fire" in str(info.value)
    with pytest.raises(StopAsyncIteration):  # over after the error: nothing read again
        await anext(it)
    assert not body.complete and body.bytes_read == 2 and calls == 1

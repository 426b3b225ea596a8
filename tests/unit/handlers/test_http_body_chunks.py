"""An HTTP body whose every byte arrived before it is read (the lean path's small bodies):
``async for`` gets it as one piece (decoded output still in pieces of at most the chunk
size), checked against the announced length, and the response released at once."""

from __future__ import annotations

import gzip
from collections.abc import Callable

import pytest

from anyurl import OverlongTransfer, ProtocolError, TruncatedTransfer
from anyurl.handlers.http import _BodyChunks, _Decoder
from anyurl.protocols.http1 import Headers
from anyurl.response import Body

URL = "http://h.example/f"


class ArrivedResponse:
    """A response whose body pieces all arrived (LeanResponse's buffered_body); records
    what the body did with it."""

    def __init__(self, pieces: list[bytes], length: int | None) -> None:
        self.pieces = pieces
        self.status = 200
        self.reason = "OK"
        self.headers = Headers()
        self.content_length = length
        self.content_type = "text/plain"
        self.charset = None
        self.calls: list[str] = []

    @property
    def buffered_body(self) -> Callable[[], list[bytes] | None]:
        def take() -> list[bytes] | None:
            self.calls.append("buffered")
            pieces, self.pieces = self.pieces, []
            return pieces
        return take

    async def read_chunk(self, size: int) -> bytes:
        self.calls.append("read")
        return self.pieces.pop(0) if self.pieces else b""

    def widen(self, chunk_size: int) -> None:
        pass

    async def release(self) -> None:
        self.calls.append("release")

    def release_now(self) -> bool:  # (LeanResponse's with a kept connection: released, no coroutine)
        self.calls.append("release")
        return True

    async def close(self) -> None:
        self.calls.append("close")


def body_of(resp: ArrivedResponse, expected: int | None, decoder: _Decoder | None = None,
            chunk_size: int = 1 << 16) -> Body:
    chunks = _BodyChunks(resp, URL, chunk_size, expected, 0, 0, decoder)  # type: ignore[arg-type]
    return Body(URL, chunks)


async def test_a_whole_small_body_is_one_piece_and_released_with_it() -> None:
    resp = ArrivedResponse([b"abc", b"def"], 6)
    body = body_of(resp, 6)
    it = aiter(body)
    assert await anext(it) == b"abcdef"
    # released with the piece: nothing read through the response, the body complete already
    assert resp.calls == ["buffered", "release"] and body.complete and body.bytes_read == 6
    with pytest.raises(StopAsyncIteration):
        await anext(it)
    assert resp.calls == ["buffered", "release"]


async def test_a_whole_gzip_body_is_decoded_in_pieces_of_at_most_the_chunk_size() -> None:
    plain = bytes(range(256)) * 40  # 10 KiB
    packed = gzip.compress(plain)
    resp = ArrivedResponse([packed], len(packed))
    body = body_of(resp, len(packed), _Decoder("gzip", URL, 1024), chunk_size=1024)
    pieces = [p async for p in body]
    assert b"".join(pieces) == plain and max(map(len, pieces)) <= 1024 and len(pieces) == 10
    assert resp.calls[0] == "buffered" and resp.calls.count("release") >= 1 and "close" not in resp.calls
    assert body.complete and body.bytes_read == len(plain)


async def test_a_small_gzip_body_is_one_piece() -> None:
    packed = gzip.compress(b"x" * 4096)
    resp = ArrivedResponse([packed[:10], packed[10:]], len(packed))
    body = body_of(resp, len(packed), _Decoder("gzip", URL, 1 << 16))
    assert [p async for p in body] == [b"x" * 4096]
    assert resp.calls == ["buffered", "release"] and body.complete


async def test_an_empty_whole_body_ends_at_once() -> None:
    resp = ArrivedResponse([], 0)
    body = body_of(resp, 0)
    assert [p async for p in body] == [] and body.complete and resp.calls == ["buffered", "release"]


@pytest.mark.parametrize("pieces, expected, error, match", [
    ([b"abcdefg"], 6, OverlongTransfer, "more than the 6 bytes"),
    ([b"abc"], 6, TruncatedTransfer, "after 3 of 6 bytes"),
])
async def test_a_whole_body_of_the_wrong_length_is_refused(pieces: list[bytes], expected: int,
                                                           error: type[Exception], match: str) -> None:
    resp = ArrivedResponse(pieces, expected)
    body = body_of(resp, expected)
    with pytest.raises(error, match=match) as info:
        await anext(aiter(body))
    assert info.value.url == URL  # type: ignore[attr-defined]
    assert resp.calls == ["buffered", "close"] and not body.complete


async def test_a_broken_whole_gzip_body_is_refused() -> None:
    packed = gzip.compress(b"x" * 4096)
    for broken in (packed[:-12], b"not gzip at all"):
        resp = ArrivedResponse([broken], len(broken))
        body = body_of(resp, len(broken), _Decoder("gzip", URL, 1 << 16))
        with pytest.raises((TruncatedTransfer, ProtocolError)):
            [p async for p in body]
        assert resp.calls[-1] == "close" and "release" not in resp.calls and not body.complete

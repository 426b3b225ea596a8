"""Pipelined responses through anyurl.protocols.http1: bytes of several responses, split
anywhere, each reach the reader of its own request (``ResponseReader.next``), and a
broken one is the error of the response it belongs to, not of the one before."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anyurl import OverlongTransfer, ProtocolError
from anyurl.protocols.http1 import ResponseReader


def _response(body: bytes, chunked: bool) -> bytes:
    if chunked:
        return (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                + (b"%x\r\n%s\r\n" % (len(body), body) if body else b"") + b"0\r\n\r\n")
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)


def _chain(n: int) -> list[ResponseReader]:
    readers = [ResponseReader("GET") for _ in range(n)]
    for a, b in zip(readers, readers[1:], strict=False):
        a.next = b
    return readers


def _feed(first: ResponseReader, data: bytes, got: dict[int, list[bytes]]) -> ResponseReader:
    """What a connection does with the bytes of a pipeline (as H1Connection._route)."""
    r = first
    while True:
        if r.complete:
            assert r.next is not None
            r = r.next
        got.setdefault(id(r), []).extend(r.feed(data))
        rest, r.rest = r.rest, b""
        for f in r.forwarded():
            got.setdefault(id(f), []).extend(f.take())
            r = f
        if r.error is not None:
            raise r.error
        if not rest:
            return r
        data = rest


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0, 1, 7, 300, 5000]), st.booleans()), min_size=1, max_size=6),
       st.lists(st.integers(1, 9000), min_size=1, max_size=30))
def test_each_response_reaches_its_reader_however_the_bytes_are_split(
        shapes: list[tuple[int, bool]], cuts: list[int]) -> None:
    bodies = [bytes([65 + i]) * size for i, (size, _) in enumerate(shapes)]
    stream = b"".join(_response(b, chunked) for b, (_, chunked) in zip(bodies, shapes, strict=True))
    readers = _chain(len(bodies))
    got: dict[int, list[bytes]] = {}
    r, pos, i = readers[0], 0, 0
    while pos < len(stream):
        step = cuts[i % len(cuts)]
        i += 1
        r = _feed(r, stream[pos:pos + step], got)
        pos += step
    for reader, body in zip(readers, bodies, strict=True):
        assert reader.complete and reader.reusable
        assert b"".join(got.get(id(reader), [])) == body
        assert reader.received == len(body)


def test_garbage_after_a_whole_response_is_the_next_ones_error() -> None:
    first, second = _chain(2)
    got: dict[int, list[bytes]] = {}
    try:
        _feed(first, _response(b"whole", True) + b"no HTTP at all\r\n\r\n", got)
    except ProtocolError as exc:
        assert exc.url is second.url
    else:
        raise AssertionError("no error")
    assert first.complete and b"".join(got[id(first)]) == b"whole"
    assert not second.head_done


def test_a_response_nobody_asked_for_is_overlong() -> None:
    first, second = _chain(2)
    got: dict[int, list[bytes]] = {}
    extra = _response(b"x", False)
    try:
        _feed(first, _response(b"a", True) + _response(b"b", True) + extra, got)
    except OverlongTransfer:
        pass
    else:
        raise AssertionError("no error")
    assert first.complete and second.complete


def test_bytes_after_a_content_length_body_wait_for_the_next_reader() -> None:
    first, second = _chain(2)
    assert first.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n") == []
    assert first.feed(b"abcHTTP/1.1 200 OK\r\n") == [b"abc"]
    assert first.complete and first.rest == b"HTTP/1.1 200 OK\r\n"
    # without a next reader, the same bytes are an error (nothing was asked)
    alone = ResponseReader("GET")
    alone.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n")
    try:
        alone.feed(b"abcHTTP/1.1 200 OK\r\n")
    except OverlongTransfer:
        pass
    else:
        raise AssertionError("no error")


def test_a_deep_pipeline_of_chunked_responses_costs_no_walk_down_the_chain(monkeypatch: pytest.MonkeyPatch) -> None:
    # each callback of the shared parser goes straight to the reader of the response being
    # parsed: two calls per header field, however deep the pipeline (the walk down the chain
    # of readers cost the depth squared: 64 responses at once, ~2,000 calls per field)
    calls = [0]
    real = ResponseReader.on_header

    def counted(self: ResponseReader, name: bytes, value: bytes) -> None:
        calls[0] += 1
        real(self, name, value)

    monkeypatch.setattr(ResponseReader, "on_header", counted)
    n = 64
    readers = _chain(n)
    got: dict[int, list[bytes]] = {}
    _feed(readers[0], b"".join(_response(b"body %d" % i, True) for i in range(n)), got)
    assert [b"".join(got[id(r)]) for r in readers] == [b"body %d" % i for i in range(n)]
    assert calls[0] <= 2 * n, calls[0]

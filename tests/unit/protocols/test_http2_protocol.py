"""GoawayFilter: every frame but GOAWAY passed on byte for byte, whatever the cuts between receives."""

from __future__ import annotations

import random

import pytest

from anyurl import ProtocolError
from anyurl.protocols.http2 import GoawayFilter


def frame(kind: int, sid: int, payload: bytes) -> bytes:
    return len(payload).to_bytes(3, "big") + bytes([kind, 0]) + sid.to_bytes(4, "big") + payload


def goaway(last: int, code: int, debug: bytes = b"") -> bytes:
    return frame(7, 0, last.to_bytes(4, "big") + code.to_bytes(4, "big") + debug)


def test_whole_frames_without_goaway_are_the_same_bytes_object() -> None:
    data = frame(4, 0, b"") + frame(1, 1, b"head") + frame(0, 1, b"body")
    out, found = GoawayFilter().feed(data)
    assert out is data and found == []


def test_goaway_is_taken_out_and_what_follows_passed_on() -> None:
    data = frame(0, 1, b"abc") + goaway(3, 0, b"bye") + frame(0, 3, b"def")
    out, found = GoawayFilter().feed(data)
    assert out == frame(0, 1, b"abc") + frame(0, 3, b"def") and found == [(3, 0, b"bye")]


def test_any_cuts_between_receives() -> None:
    rng = random.Random(7)
    for _ in range(500):
        wire, expected, goaways = b"", b"", []
        for _ in range(rng.randint(0, 8)):
            if rng.random() < 0.3:
                g = (rng.randint(0, 99), rng.randint(0, 13), bytes(rng.randint(0, 20)))
                wire += goaway(*g)
                goaways.append(g)
            else:
                f = frame(rng.choice([0, 1, 3, 4, 8, 9]), rng.randint(0, 9), rng.randbytes(rng.randint(0, 40)))
                wire += f
                expected += f
        gf = GoawayFilter()
        out, found, i = b"", [], 0
        while i < len(wire):
            j = i + rng.randint(1, 30)
            piece, got = gf.feed(wire[i:j])
            out += piece
            found += got
            i = j
        assert out == expected and found == goaways


@pytest.mark.parametrize("data, match", [
    ((1 << 14 | 1).to_bytes(3, "big") + bytes([0, 0]) + bytes(4), "more than the 16384"),
    (frame(7, 0, bytes(4)), "shorter than 8 bytes"),
])
def test_a_frame_too_large_or_a_short_goaway_is_a_protocol_error(data: bytes, match: str) -> None:
    with pytest.raises(ProtocolError, match=match):
        GoawayFilter().feed(data)

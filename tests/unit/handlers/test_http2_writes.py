"""anyurl.handlers.http2's writes: a loop turn that starts many streams writes every
_WRITE_EVERY requests as it goes, so the first leave while the rest are encoded."""

from __future__ import annotations

import asyncio
from typing import Any

from anyurl.handlers import http2


class _Transport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []

    def write(self, data: Any) -> None:
        self.writes.append(bytes(data))

    def is_closing(self) -> bool:
        return False

    def get_write_buffer_size(self) -> int:
        return 0


def _fields(i: int) -> list[tuple[bytes, bytes]]:
    return [(b":method", b"GET"), (b":scheme", b"https"), (b":authority", b"example.org"),
            (b":path", f"/f{i}".encode()), (b"user-agent", b"anyurl")]


async def test_many_streams_started_in_one_turn_are_written_in_batches_before_the_turn_ends() -> None:
    http2._load_h2()
    conn = http2.H2Connection(("https", "example.org", 443), None, window=1 << 16,  # type: ignore[arg-type]
                              max_header_list=1 << 16)
    t = _Transport()
    conn.connection_made(t)
    await asyncio.sleep(0)  # the preface and SETTINGS go out
    assert len(t.writes) == 1
    for i in range(3 * http2._WRITE_EVERY + 2):  # one turn: no await between the streams
        conn.open_stream(_fields(i), None)
    assert len(t.writes) == 1 + 3  # three batches written before the turn ends
    await asyncio.sleep(0)
    assert len(t.writes) == 1 + 4  # the last two at the turn's end, in one write

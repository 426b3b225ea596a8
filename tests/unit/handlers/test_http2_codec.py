"""anyurl.handlers.http2 on the library it picked (jh2 by default, h2 under ANYURL_H2_LIBRARY=h2,
both run by `make test`): a request's :path goes never-indexed, responses decode through the strict
decoder, and the library forgets closed streams though anyurl counts the open ones itself."""

from __future__ import annotations

import asyncio
from typing import Any

import h2.config
import h2.connection
import h2.events

from anyurl.handlers import http2


class _Transport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.out = bytearray()

    def write(self, data: Any) -> None:
        self.out += data

    def is_closing(self) -> bool:
        return False

    def get_write_buffer_size(self) -> int:
        return 0


class _Client:
    """What a connection tells its H2Client: nothing to do here."""

    max_idle = 60.0

    def settings(self, key: object, max_streams: int) -> None:
        pass

    def stream_done(self, conn: object) -> None:
        pass

    def retire(self, conn: object) -> None:
        pass

    def gone(self, conn: object) -> None:
        pass


def _fields(i: int) -> list[tuple[bytes, bytes]]:
    return [(b":method", b"GET"), (b":scheme", b"https"), (b":authority", b"example.org"),
            (b":path", f"/f{i}".encode()), (b"user-agent", b"anyurl")]


async def test_a_thousand_streams_through_one_connection() -> None:
    http2._load_h2()
    if http2.LIBRARY == "jh2":
        from anyurl.protocols.hpack import StrictDecoder

    conn = http2.H2Connection(("https", "example.org", 443), _Client(), window=1 << 16,  # type: ignore[arg-type]
                              max_header_list=1 << 16)
    if http2.LIBRARY == "jh2":
        assert isinstance(conn.h2.decoder, StrictDecoder)
    t = _Transport()
    conn.connection_made(t)
    # the server: pure-Python h2 (what hpack decodes is the reference)
    srv = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False, header_encoding=None))
    srv.initiate_connection()
    conn.data_received(srv.data_to_send())
    streams = []
    most = 0
    for batch in range(20):
        for i in range(50):
            streams.append(conn.open_stream(_fields(50 * batch + i), None))
        conn._write()
        events = srv.receive_data(bytes(t.out))
        t.out.clear()
        for ev in events:
            if isinstance(ev, h2.events.RequestReceived):
                path = ev.headers[3]
                assert path[0] == b":path" and path.indexable is False  # never in HPACK's table
                srv.send_headers(ev.stream_id, [(b":status", b"200"), (b"content-length", b"2"),
                                                (b"etag", f'"{ev.stream_id}"'.encode())])
                srv.send_data(ev.stream_id, b"ok", end_stream=True)
        conn.data_received(srv.data_to_send())
        for s in streams[-50:]:
            assert s.fields is not None and s.ended and s.error is None
            assert dict(s.fields)[b"etag"] == f'"{s.sid}"'.encode()
            conn.finish(s)
        most = max(most, len(conn.h2.streams))
    assert len(conn.streams) == 0
    # the library forgot the closed streams as it went (its own scan every _SCAN_EVERY streams)
    assert most <= 50 + http2._SCAN_EVERY + 1

"""Per-request CPU of anyurl's HTTP/2 client side alone, robust on a loaded machine.

    PYTHONPATH=SRC python bench/ab/h2_micro.py [--requests N] [--batch N] [--repeats N] [--profile FILE]

One anyurl H2Connection (anyurl.handlers.http2) on a transport that only keeps what
is written: per request open_stream (h2's send_headers, HPACK encoding), the
response's frames fed to data_received (recorded once beforehand from an h2 server
sending the head nginx 1.22 sends: literals, Huffman, not indexed, then a small
DATA frame), take and finish (the window handed back). No sockets, TLS or event
loop I/O: what is left is the h2/HPACK work and the driver's own. The figure is the
minimum over the repeats (the least disturbed run). Run it once per source tree
(PYTHONPATH) to compare trees; --profile writes a cProfile of the same loop.

Measured 2026-11-27 (2 cores shared, load 3-4): main da8dc85 227-233 us per request,
h2-cpu (h2's inbound header validation off, our own head check) 213-225 us. Of that
(cProfile of the loop): sending 36% (HPACK encoding 15%, h2's count of the open
streams on every new stream 6%), receiving 56% (HPACK decoding 31%, its Huffman
decoder 13%; the head check 2%), taking the data and finishing 1%.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import time
from typing import Any

import h2.config
import h2.connection
import h2.events
import h2.settings
from hpack import NeverIndexedHeaderTuple as _N

from anyurl.handlers import http2


class _Transport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.buf: list[bytes] = []

    def write(self, data: Any) -> None:
        self.buf.append(bytes(data))

    def is_closing(self) -> bool:
        return False

    def get_write_buffer_size(self) -> int:
        return 0


class _Client:
    """The few H2Client callbacks an H2Connection makes."""

    log = None
    max_idle = 60.0

    def settings(self, *args: Any) -> None:
        pass

    def stream_done(self, conn: Any) -> None:
        pass

    def retire(self, conn: Any) -> None:
        pass


HEAD = [(b":status", b"200"), _N(b"server", b"nginx/1.22.1"), _N(b"date", b"Fri, 27 Nov 2026 04:30:00 GMT"),
        _N(b"content-type", b"text/plain"), _N(b"last-modified", b"Fri, 27 Nov 2026 04:10:00 GMT"),
        _N(b"etag", b'W/"6566a1b8-1000"'), _N(b"content-encoding", b"gzip")]
BODY = b"x" * 40
FIELDS = [(b":method", b"GET"), (b":scheme", b"https"), (b":authority", b"127.0.0.1:443"),
          (b":path", b"/many/f0000.txt"), (b"user-agent", b"anyurl/0.1"), (b"accept-encoding", b"gzip, deflate"),
          (b"accept", b"*/*")]


def _fields(i: int) -> list[tuple[bytes, bytes]]:
    f = list(FIELDS)
    f[3] = (b":path", b"/many/f%04d.txt" % i)
    return f


async def _run(n: int, batch: int, recorded: list[bytes] | None = None) -> tuple[float, list[bytes]]:
    """One connection through *n* requests (s per request); with no *recorded* bytes an h2
    server answers, and what it sent is returned for the timed runs."""
    srv = None
    if recorded is None:
        srv = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False, header_encoding=None))
        srv.initiate_connection()
        srv.update_settings({h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: batch})
        rec = [srv.data_to_send()]
    else:
        rec = recorded
    c = http2.H2Connection(("https", "h", 443), _Client(), window=1 << 16,  # type: ignore[arg-type]
                           max_header_list=1 << 16)
    t = _Transport()
    c.connection_made(t)
    c.data_received(rec[0])
    await asyncio.sleep(0)
    if srv is not None:
        srv.receive_data(b"".join(t.buf))
    t.buf.clear()
    t0 = time.perf_counter()
    for k in range(n // batch):
        streams = [c.open_stream(_fields(i), None) for i in range(batch)]
        await asyncio.sleep(0)
        if srv is not None:
            for e in srv.receive_data(b"".join(t.buf)):
                if isinstance(e, h2.events.RequestReceived):
                    srv.send_headers(e.stream_id, HEAD)
                    srv.send_data(e.stream_id, BODY, end_stream=True)
            rec.append(srv.data_to_send())
        t.buf.clear()
        c.data_received(rec[k + 1])
        for s in streams:
            while s.chunks:
                c.take(s, 1 << 20)
            c.finish(s)
        await asyncio.sleep(0)
        if srv is not None:
            srv.receive_data(b"".join(t.buf))
        t.buf.clear()
    return (time.perf_counter() - t0) / n, rec


async def _main(args: argparse.Namespace) -> None:
    http2._load_h2()
    _, rec = await _run(args.requests, args.batch)
    prof = cProfile.Profile() if args.profile else None
    if prof is not None:
        prof.enable()
    best = min([(await _run(args.requests, args.batch, rec))[0] for _ in range(args.repeats)])
    if prof is not None:
        prof.disable()
        prof.dump_stats(args.profile)
    print(f"{best * 1e6:.1f} us per request (client side: open_stream, the response, take, finish; "
          f"{args.batch} streams at a time, min of {args.repeats})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=500)
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=25)
    ap.add_argument("--profile", help="write a cProfile of the timed runs here")
    asyncio.run(_main(ap.parse_args()))


if __name__ == "__main__":
    main()

"""h2: per-request CPU of anyurl's HTTP/2 client side alone, robust on a loaded machine.

    bench/.venv/bin/python -m bench.run h2 [--rounds N] [--tree DIR ...]
    python -m bench.suites.h2 probe [--requests N] [--batch N] [--repeats N] [--profile FILE]

The probe: one anyurl H2Connection (anyurl.handlers.http2) on a transport that only keeps what
is written: per request open_stream (HPACK encoding), the response's frames fed to
data_received (recorded once beforehand from an h2 server sending the head nginx 1.22 sends:
literals, Huffman, not indexed, then a small DATA frame), take and finish (the window handed
back). No sockets, TLS or event loop I/O: what is left is the h2/HPACK work and the driver's
own. Its figure is the minimum over the repeats (the least disturbed run); --profile writes a
cProfile of the same loop. The group runs the probe from the installed anyurl and from each
--tree in interleaved rounds and prints each one's median and min-max over the rounds.

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
import re
import statistics
import subprocess
import sys
import time
from typing import Any

from bench import harness
from bench.harness import bench_env, python_cmd, record, tree_env, wanted


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


def _head() -> list[Any]:
    from hpack import NeverIndexedHeaderTuple as _N

    return [(b":status", b"200"), _N(b"server", b"nginx/1.22.1"), _N(b"date", b"Fri, 27 Nov 2026 04:30:00 GMT"),
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
    import h2.config
    import h2.connection
    import h2.events
    import h2.settings

    from anyurl.handlers import http2

    head = _head()
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
                    srv.send_headers(e.stream_id, head)
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
    from anyurl.handlers import http2

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


def probe(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.suites.h2 probe")
    ap.add_argument("--requests", type=int, default=500)
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=25)
    ap.add_argument("--profile", help="write a cProfile of the timed runs here")
    asyncio.run(_main(ap.parse_args(argv)))


def run(launcher: object, quick: bool) -> None:
    title = "h2: anyurl's HTTP/2 connection alone, CPU per request (no sockets, no TLS)"
    if not wanted(title):
        return
    argv = python_cmd("-m", "bench.suites.h2", "probe", "--repeats", "10" if quick else "25")
    who = [("anyurl (installed)", bench_env())] + [(f"anyurl [{t.name or t}]", tree_env(t)) for t in harness.TREES]
    # --variant (e.g. h2:ANYURL_H2_LIBRARY=h2, pure-Python h2 beside jh2)
    who += [(f"anyurl [{label}]", {**bench_env(), **extra}) for label, extra in harness.VARIANTS]
    got: dict[str, list[float]] = {name: [] for name, _ in who}
    for i in range(harness.ROUNDS):
        k = i % len(who)
        for name, env in who[k:] + who[:k]:
            proc = subprocess.run(argv, env=env, cwd=harness.ROOT, capture_output=True, text=True, check=False)
            m = re.match(r"([0-9.]+) us per request", proc.stdout)
            if proc.returncode or m is None:
                raise RuntimeError(f"h2 probe ({name}) failed: {proc.stderr[-800:]}")
            got[name].append(float(m.group(1)))
    print(f"\n== {title}\n   {harness.ROUNDS} interleaved rounds, each the minimum of the probe's repeats; "
          f"load average {harness.load1():.2f}")
    md = [f"\n### {title}\n", "| anyurl | µs/request median | min-max |", "|---|---:|---:|"]
    for name, vals in got.items():
        print(f"   {name:<44} {statistics.median(vals):8.1f} {min(vals):8.1f}-{max(vals):.1f}", flush=True)
        md.append(f"| {name} | {statistics.median(vals):.1f} | {min(vals):.1f}-{max(vals):.1f} |")
    record(title, md, {"us_per_request": got, "load": harness.load1()})


if __name__ == "__main__":
    if sys.argv[1:2] == ["probe"]:
        probe(sys.argv[2:])
    else:
        from bench.run import run_with_servers

        run_with_servers(run, "--quick" in sys.argv)

"""qh3 against aioquic for anyurl's HTTP/3 (issue 34 item 4): import cost, and the client's CPU
for one QUIC handshake plus 200 small GETs against the same server.

Both libraries have the same sans-I/O API (qh3 is a fork of aioquic whose packet core, TLS and
crypto are compiled), so one client loop serves both: a UDP socket, the library's QuicConnection
and H3Connection, the 200 requests sent at once as streams of the one connection, every body
read whole. Rounds alternate the libraries in one process (each round a fresh connection);
the import cost is measured in a fresh interpreter per round.

    python -m bench.probes.h3_libraries HOST PORT CAFILE [ROUNDS]

against an HTTP/3 server with /many/f0000.txt ... f0199.txt (fixtures/servers/hypercorn_h3.py).
Prints min/median/max of each figure and the load average.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import socket
import statistics
import subprocess
import sys
import time
from typing import Any

LIBRARIES = ("qh3", "aioquic")
WINDOW = 100


def _modules(lib: str) -> tuple[Any, Any, Any, Any]:
    quic = importlib.import_module(f"{lib}.quic.connection")
    config = importlib.import_module(f"{lib}.quic.configuration")
    h3 = importlib.import_module(f"{lib}.h3.connection")
    events = importlib.import_module(f"{lib}.h3.events")
    return quic, config, h3, events


async def fetch_many(lib: str, host: str, port: int, cafile: str, n: int) -> int:
    quic, config_mod, h3_mod, events = _modules(lib)
    loop = asyncio.get_running_loop()
    config = config_mod.QuicConfiguration(is_client=True, alpn_protocols=["h3"])
    config.load_verify_locations(cafile)
    config.server_name = "localhost"
    conn = quic.QuicConnection(configuration=config)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setblocking(False)
    sock.connect((host, port))
    h3 = h3_mod.H3Connection(conn)
    pending: dict[int, list[bytes]] = {}
    done = loop.create_future()
    finished = 0
    timer: asyncio.TimerHandle | None = None

    def flush() -> None:
        nonlocal timer
        for data, _addr in conn.datagrams_to_send(now=loop.time()):
            try:
                sock.send(data)
            except BlockingIOError:
                pass
        if timer is not None:
            timer.cancel()
        at = conn.get_timer()
        timer = None if at is None else loop.call_at(at, on_timer)

    def on_timer() -> None:
        conn.handle_timer(now=loop.time())
        flush()

    def readable() -> None:
        nonlocal finished
        while True:
            try:
                data = sock.recv(65536)
            except BlockingIOError:
                break
            conn.receive_datagram(data, (host, port), now=loop.time())
        while (ev := conn.next_event()) is not None:
            for h in h3.handle_event(ev):
                if isinstance(h, events.DataReceived):
                    pending[h.stream_id].append(h.data)
                if getattr(h, "stream_ended", False):
                    finished += 1
                    if finished == n and not done.done():
                        done.set_result(None)
            if type(ev).__name__ == "HandshakeCompleted" and not started.done():
                started.set_result(None)
        while started.done() and sent[0] < n and room():
            send_one()
        flush()

    sent = [0]

    def room() -> bool:
        # qh3 refuses a stream past the peer's MAX_STREAMS (aioquic queues it): ask it first
        limit = getattr(conn, "max_concurrent_bidi_streams", None)
        return sent[0] - finished < WINDOW and (
            limit is None or (conn.get_next_available_stream_id() >> 2) < limit)

    def send_one() -> None:  # at most WINDOW streams at once
        sid = conn.get_next_available_stream_id()
        pending[sid] = []
        h3.send_headers(sid, [(b":method", b"GET"), (b":scheme", b"https"),
                              (b":authority", f"localhost:{port}".encode()),
                              (b":path", f"/many/f{sent[0] % 200:04d}.txt".encode())], end_stream=True)
        sent[0] += 1

    started = loop.create_future()
    loop.add_reader(sock.fileno(), readable)
    conn.connect((host, port), now=loop.time())
    flush()
    try:
        await asyncio.wait_for(started, 10)
        while sent[0] < n and room():
            send_one()
        flush()
        await asyncio.wait_for(done, 30)
    finally:
        conn.close()
        flush()
        loop.remove_reader(sock.fileno())
        sock.close()
        if timer is not None:
            timer.cancel()
    return sum(len(b"".join(p)) for p in pending.values())


def import_ms(lib: str) -> float:
    code = (f"import time; t = time.perf_counter(); import {lib}.quic.connection, {lib}.h3.connection; "
            "print((time.perf_counter() - t) * 1000)")
    return float(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                                text=True).stdout)


def main(argv: list[str]) -> None:
    host, port, cafile = argv[0], int(argv[1]), argv[2]
    rounds = int(argv[3]) if len(argv) > 3 else 7
    cpu: dict[str, list[float]] = {lib: [] for lib in LIBRARIES}
    imp: dict[str, list[float]] = {lib: [] for lib in LIBRARIES}
    for lib in LIBRARIES:  # warm: imported, first connection made
        asyncio.run(fetch_many(lib, host, port, cafile, 200))
    for r in range(rounds):
        for lib in LIBRARIES if r % 2 == 0 else reversed(LIBRARIES):
            t = time.process_time()
            got = asyncio.run(fetch_many(lib, host, port, cafile, 200))
            cpu[lib].append((time.process_time() - t) * 1000)
            assert got == 200 * 4096, got
            imp[lib].append(import_ms(lib))
    print(f"load average {os.getloadavg()[0]:.1f}; {rounds} rounds, interleaved")
    for lib in LIBRARIES:
        c, i = sorted(cpu[lib]), sorted(imp[lib])
        print(f"{lib:8} handshake + 200 GETs CPU ms min/median/max {c[0]:.0f}/{statistics.median(c):.0f}/{c[-1]:.0f}"
              f"   import ms {i[0]:.0f}/{statistics.median(i):.0f}/{i[-1]:.0f}")
    ratio = sorted(a / b for a, b in zip(cpu["aioquic"], cpu["qh3"], strict=True))
    print(f"aioquic/qh3 CPU ratio min/median/max {ratio[0]:.2f}/{statistics.median(ratio):.2f}/{ratio[-1]:.2f}")


if __name__ == "__main__":
    main(sys.argv[1:])

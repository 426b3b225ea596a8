"""HTTPS small files, HTTP/2 against --http1.1: the anyurl CLI and curl -Z, interleaved rounds.

    python bench/ab/http2.py [--rounds N] [--count N] [--parallel N] [--rtt MS]

One nginx (fixtures/launcher.py; its https listener offers h2) serves COUNT files
of 4 KiB (/many/). Every round runs each case once: ``anyurl get -q --parallel N
-d DIR URL...`` with and without ``--http1.1``, and ``curl -Z --parallel-max N``
with ``--http2`` and ``--http1.1``. With ``--rtt MS`` the URLs go through a small
relay of this file that delays each direction by MS/2 and the connect to nginx by
one round trip (the TCP handshake); bench/'s WAN group, when it lands, is the
better yardstick. Each run's output is checked (count and sizes); the figures
are the medians, minimum and maximum of the wall times.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from fixtures.launcher import Launcher  # noqa: E402

SIZE = 4096


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float) -> None:
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

    async def send() -> None:
        while True:
            due, data = await queue.get()
            if due > loop.time():
                await asyncio.sleep(due - loop.time())
            if not data:
                writer.close()
                return
            writer.write(data)
            await writer.drain()

    sender = asyncio.ensure_future(send())
    try:
        while True:
            data = await reader.read(1 << 16)
            queue.put_nowait((loop.time() + delay, data))
            if not data:
                break
        await sender
    except OSError:
        sender.cancel()


async def relay(listen: int, target: int, delay: float) -> None:
    """Forward 127.0.0.1:*listen* to 127.0.0.1:*target*, *delay* s each way (until killed)."""
    async def handle(cr: asyncio.StreamReader, cw: asyncio.StreamWriter) -> None:
        await asyncio.sleep(2 * delay)  # SYN, SYN-ACK
        try:
            sr, sw = await asyncio.open_connection("127.0.0.1", target)
        except OSError:
            cw.close()
            return
        await asyncio.gather(_pump(cr, sw, delay), _pump(sr, cw, delay), return_exceptions=True)

    server = await asyncio.start_server(handle, "127.0.0.1", listen)
    async with server:
        await server.serve_forever()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--parallel", type=int, default=8)
    ap.add_argument("--rtt", type=float, default=0.0, help="round trip added by a relay, in ms")
    ap.add_argument("--relay", nargs=3, type=float, help=argparse.SUPPRESS)  # (the relay child)
    args = ap.parse_args()
    if args.relay:
        listen, target, delay = args.relay
        asyncio.run(relay(int(listen), int(target), delay))
        return
    launcher = Launcher()
    child = None
    try:
        ep = launcher.get("nginx")
        port = ep.info["tls_port"]
        if args.rtt:
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
            child = subprocess.Popen([sys.executable, __file__, "--relay", str(port), str(ep.info["tls_port"]),
                                      str(args.rtt / 2000)])
            time.sleep(0.5)
        urls = [f"https://127.0.0.1:{port}/many/f{i:04d}.txt" for i in range(args.count)]
        env = {**os.environ, "SSL_CERT_FILE": ep.info["ca"]}
        anyurl = [sys.executable, "-m", "anyurl", "get", "-q", "--parallel", str(args.parallel)]

        def curl(flag: str, out: str) -> list[str]:
            return ["curl", "-sS", "-Z", "--parallel-max", str(args.parallel), flag, "--cacert", ep.info["ca"],
                    "--output-dir", out, *[x for u in urls for x in ("-o", u.rsplit("/", 1)[1], u)]]

        cases = {
            "anyurl (HTTP/2)": lambda out: [*anyurl, "-d", out, *urls],
            "anyurl --http1.1": lambda out: [*anyurl, "--http1.1", "-d", out, *urls],
            "curl -Z --http2": lambda out: curl("--http2", out),
            "curl -Z --http1.1": lambda out: curl("--http1.1", out),
        }
        times: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.rounds):
            for name, argv in cases.items():
                out = tempfile.mkdtemp(dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
                try:
                    started = time.perf_counter()
                    proc = subprocess.run(argv(out), env=env, capture_output=True, text=True)
                    times[name].append(time.perf_counter() - started)
                    assert proc.returncode == 0, (name, proc.stderr[-500:])
                    names = os.listdir(out)
                    assert len(names) == args.count, name
                    assert all(os.path.getsize(os.path.join(out, n)) == SIZE for n in names), name
                finally:
                    shutil.rmtree(out)
        print(f"{args.count} x 4 KiB over https, --parallel {args.parallel}, RTT {args.rtt:g} ms, "
              f"{args.rounds} interleaved rounds (s)")
        for name, ts in times.items():
            print(f"  {name:20s} median {statistics.median(ts):6.3f}  min {min(ts):6.3f}  max {max(ts):6.3f}")
    finally:
        if child is not None:
            child.terminate()
            child.wait()
        launcher.stop_all()


if __name__ == "__main__":
    main()

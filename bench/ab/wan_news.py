"""NNTP at a WAN round trip: 200 articles of one group from INN through a delaying relay
on loopback, one connection, anyurl pipelined vs unpipelined vs Python's nntplib.

``python -m bench.ab.wan_news [RTT_MS] [N] [ROUNDS]`` (defaults 50 ms, 200, 3): interleaved
rounds, median and spread of each. The relay (:class:`Relay`) holds every chunk half a round trip
in each direction and connects upstream one round trip after accepting (so the server
speaks first 1.5 round trips after the client's connect, as over a real handshake).
A stand-in until the WAN group of issue 24.1 lands in bench/.
"""

from __future__ import annotations

import asyncio
import socket
import statistics
import sys
import threading
import time
import warnings
from collections.abc import Callable


class Relay:
    """A loopback TCP relay adding *rtt*/2 seconds per direction."""

    def __init__(self, upstream: tuple[str, int], rtt: float) -> None:
        self.upstream, self.rtt = upstream, rtt
        self.port = 0
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        threading.Thread(target=self._run, daemon=True).start()
        self._ready.wait(10)

    def _run(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._loop.run_until_complete(self._serve())

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                    source: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def deliver() -> None:
            while True:
                due, data = await queue.get()
                delay = due - loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
                if not data:
                    writer.close()
                    return
                writer.write(data)
                await writer.drain()

        task = asyncio.create_task(deliver())
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # the relay adds no Nagle wait
        while True:
            # nor a delayed-ACK stall of its own (the delay it models is the rtt)
            source.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)
            data = await reader.read(1 << 16)
            queue.put_nowait((loop.time() + self.rtt / 2, data))
            if not data:
                break
        await task

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(self.rtt)  # the SYN and SYN-ACK the kernel answered at once on loopback
        up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        try:
            await asyncio.gather(self._pump(reader, up_writer, writer.get_extra_info("socket")),
                                 self._pump(up_reader, writer, up_writer.get_extra_info("socket")))
        except OSError:
            pass
        finally:
            writer.close()
            up_writer.close()

    async def _serve(self) -> None:
        server = await asyncio.start_server(self._client, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        async with server:
            await server.serve_forever()


def nntplib_case(port: int, group: str, n: int) -> dict[int, bytes]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import nntplib
    got = {}
    with nntplib.NNTP("127.0.0.1", port, readermode=False) as s:
        s.group(group)
        for i in range(1, n + 1):
            _, info = s.article(i)
            got[i] = b"\r\n".join(info.lines) + b"\r\n"
    return got


def anyurl_case(port: int, group: str, n: int, pipeline: int, parallel: int) -> dict[int, bytes]:
    import anyurl
    from anyurl.handlers.news import NewsOptions
    from anyurl.settings import Limits

    async def main() -> dict[int, bytes]:
        got = {}
        async with anyurl.Client(limits=Limits(per_host=1), news=NewsOptions(pipeline=pipeline)) as client:
            sem = asyncio.Semaphore(parallel)

            async def one(i: int) -> None:
                async with sem:
                    got[i] = (await client.fetch(f"nntp://127.0.0.1:{port}/{group}/{i}")).content

            async with asyncio.TaskGroup() as tg:
                for i in range(1, n + 1):
                    tg.create_task(one(i))
        return got

    return asyncio.run(main())


def cli_case(port: int, group: str, n: int, parallel: int) -> dict[int, bytes]:
    """``anyurl get -d DIR --parallel N`` of the n URLs (the CLI's batch path)."""
    import subprocess
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory(prefix="anyurl-wan-news-") as out:
        urls = [f"nntp://127.0.0.1:{port}/{group}/{i}" for i in range(1, n + 1)]
        subprocess.run([sys.executable, "-m", "anyurl", "get", "-q", "-d", out, "--parallel", str(parallel),
                        *urls], check=True)
        return {i: (Path(out) / f"{group}.{i}").read_bytes() for i in range(1, n + 1)}


def main(argv: list[str]) -> int:
    from fixtures.launcher import Launcher

    from bench.bench_news import _setup

    rtt = (float(argv[0]) if argv else 50.0) / 1000
    n = int(argv[1]) if len(argv) > 1 else 200
    rounds = int(argv[2]) if len(argv) > 2 else 3
    launcher = Launcher()
    try:
        host, port, group, mean = _setup(launcher, n)
        relay = Relay((host, port), rtt)
        cases: dict[str, Callable[[], dict[int, bytes]]] = {
            "nntplib (1 connection)": lambda: nntplib_case(relay.port, group, n),
            "anyurl unpipelined (pipeline=1, 1 connection)": lambda: anyurl_case(relay.port, group, n, 1, n),
            "anyurl pipelined (pipeline=32, 1 connection)": lambda: anyurl_case(relay.port, group, n, 32, n),
            "anyurl pipelined (pipeline=100, 1 connection)": lambda: anyurl_case(relay.port, group, n, 100, n),
            "anyurl get --parallel 100 (CLI)": lambda: cli_case(relay.port, group, n, 100),
        }
        times: dict[str, list[float]] = {name: [] for name in cases}
        reference: dict[int, bytes] | None = None
        for _ in range(rounds):
            for name, case in cases.items():
                t0 = time.perf_counter()
                got = case()
                times[name].append(time.perf_counter() - t0)
                if reference is None:
                    reference = got
                # every case got every article, byte for byte the same
                assert got == reference, name
        base = statistics.median(times["nntplib (1 connection)"])
        print(f"NNTP {n} articles (~{mean} B) at {rtt * 1000:.0f} ms RTT, medians of {rounds} interleaved rounds:")
        for name, ts in times.items():
            med = statistics.median(ts)
            print(f"  {name:48s} {med:7.3f} s  (spread {min(ts):.3f}-{max(ts):.3f})  {base / med:5.1f}x nntplib")
    finally:
        launcher.stop_all()
        launcher.remove()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""CPU per small HTTP/1.1 response at each layer of the lean path, in one process, interleaved.

    python -m bench.probes.http_layers [--rounds 5] URL...

URLs: many small files on one plain-http host:port (bench/suites/http.py's seed_lots, from
nginx), fetched 32 at a time over 32 keep-alive connections, every body read into memory and
dropped (no files written). Each round runs every level once on all the URLs and prints the
process CPU (user+sys) per request, min and median over the rounds:

* ``raw``: an asyncio.Protocol with httptools and a future per request (the asyncio ceiling's
  loop, bench/reference/http_asyncio.py, without its file writes);
* ``h1``: ``Client.request`` and ``H1Client.request``, the response's buffered body, its release;
* ``handler``: ``HTTPHandler.open`` and ``Body.read`` (redirect policy, checks, Body);
* ``open``: ``Client._open`` and ``Body.read`` (what ``Client.open``/``fetch`` run).

The difference of two levels is what the layers between them cost per request (docs/benchmarks.md,
issue 34 item 3). On uvloop when installed.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any
from urllib.parse import urlsplit

import httptools

from anyurl import Client, Limits

LEVELS = ("raw", "h1", "handler", "open")
PARALLEL = 32


class _Conn(asyncio.Protocol):
    def __init__(self) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.parts: list[bytes] = []
        self.done: asyncio.Future[None] | None = None
        self.transport: Any = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.parser.feed_data(data)

    def on_body(self, body: bytes) -> None:
        self.parts.append(body)

    def on_message_complete(self) -> None:
        assert self.done is not None
        self.done.set_result(None)


async def _raw(urls: list[str]) -> None:
    loop = asyncio.get_running_loop()
    first = urlsplit(urls[0])
    todo = [urlsplit(u).path.encode() for u in reversed(urls)]
    host = f"Host: {first.netloc}\r\n\r\n".encode()

    async def worker() -> None:
        _, conn = await loop.create_connection(_Conn, first.hostname, first.port)
        while todo:
            target = todo.pop()
            conn.parts = []
            conn.done = loop.create_future()
            conn.transport.write(b"GET " + target + b" HTTP/1.1\r\n" + host)
            await conn.done
            b"".join(conn.parts)
        conn.transport.close()

    await asyncio.gather(*(worker() for _ in range(PARALLEL)))


async def _layer(client: Client, urls: list[str], level: str) -> None:
    todo = list(reversed(urls))
    wire = [("User-Agent", "anyurl"), ("Accept-Encoding", "gzip"), ("Accept", "*/*")]

    async def worker() -> None:
        while todo:
            u = todo.pop()
            if level == "open":
                body = await client._open(client.request(u))
                await body.read()
                continue
            req = client.request(u)
            handler: Any = client.handler(req.url)
            if level == "handler":
                body = await handler.open(req)
                await body.read()
                continue
            h1 = handler._h1 or handler._lean()
            url: Any = req.url
            resp = await h1.request(req, "GET", "http", url.host, url.port, "/" + url.path,
                                    f"{url.host}:{url.port}", wire, url)
            if resp.buffered_body() is None:
                while await resp.read_chunk():
                    pass
            if not resp.release_now():
                await resp.release()

    await asyncio.gather(*(worker() for _ in range(PARALLEL)))


async def measure(urls: list[str], rounds: int) -> dict[str, list[float]]:
    """CPU µs per request of each level, one figure per round."""
    out: dict[str, list[float]] = {k: [] for k in LEVELS}
    async with Client(limits=Limits(per_host=PARALLEL)) as client:
        await _layer(client, urls, "open")  # the connections made and warm
        for _ in range(rounds):
            for level in LEVELS:
                t = time.process_time()
                await (_raw(urls) if level == "raw" else _layer(client, urls, level))
                out[level].append((time.process_time() - t) / len(urls) * 1e6)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.probes.http_layers")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("urls", nargs="+")
    args = ap.parse_args()
    try:
        import uvloop
    except ImportError:
        res = asyncio.run(measure(args.urls, args.rounds))
    else:
        res = uvloop.run(measure(args.urls, args.rounds))
    for level, v in res.items():
        print(f"{level:8} CPU per request: min {min(v):6.1f} µs, median {statistics.median(v):6.1f} µs")


if __name__ == "__main__":
    main()

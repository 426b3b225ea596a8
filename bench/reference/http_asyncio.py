"""The yardstick for many small HTTP transfers: the leanest asyncio client we could write.

    python -m bench.reference.http_asyncio [--parallel N] [--gzip] -d DIR URL...

uvloop when installed, httptools to parse, N keep-alive connections to the
URLs' one host:port (each a worker taking the next URL as soon as its last
response ended), every body written to DIR/<last segment> with plain os calls.
``--gzip`` asks for gzip and undoes it (what anyurl asks of a server that
compresses text). No timeouts, redirects, retries or checks beyond the
parser's own: what the event loop, the parser and the file writes cost
without any library around them, the ceiling for an asyncio process.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import zlib
from urllib.parse import urlsplit

import httptools

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)


class _Conn(asyncio.Protocol):
    """One keep-alive connection: a parser and the body of the response in flight."""

    def __init__(self) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.transport: asyncio.Transport | None = None
        self.parts: list[bytes] = []
        self.gzip = False
        self.done: asyncio.Future[None] | None = None
        self.lost: BaseException | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.parser.feed_data(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = exc or ConnectionError("closed")
        if self.done is not None and not self.done.done():
            self.done.set_exception(self.lost)

    def on_header(self, name: bytes, value: bytes) -> None:
        if len(name) == 16 and name.lower() == b"content-encoding":
            self.gzip = value.strip().lower() == b"gzip"

    def on_body(self, body: bytes) -> None:
        self.parts.append(body)

    def on_message_complete(self) -> None:
        if self.done is not None:
            self.done.set_result(None)


async def _worker(loop: asyncio.AbstractEventLoop, host: str, port: int, todo: list[tuple[bytes, str]],
                  outdir: str, accept: bytes) -> None:
    _, conn = await loop.create_connection(_Conn, host, port)
    write = conn.transport.write  # type: ignore[union-attr]
    hostline = f"Host: {host}:{port}\r\n".encode()
    try:
        while todo:
            target, name = todo.pop()
            conn.parts = []
            conn.gzip = False
            conn.done = loop.create_future()
            write(b"GET " + target + b" HTTP/1.1\r\n" + hostline + accept)
            await conn.done
            if conn.parser.get_status_code() != 200:
                raise RuntimeError(f"{target.decode()}: status {conn.parser.get_status_code()}")
            data = b"".join(conn.parts)
            if conn.gzip:
                data = zlib.decompress(data, 31)
            fd = os.open(os.path.join(outdir, name), _FLAGS, 0o644)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
    finally:
        conn.transport.close()  # type: ignore[union-attr]


async def _main(urls: list[str], outdir: str, parallel: int, gzip: bool) -> None:
    first = urlsplit(urls[0])
    host, port = first.hostname or "127.0.0.1", first.port or 80
    todo = []
    for u in reversed(urls):
        s = urlsplit(u)
        todo.append(((s.path or "/").encode(), s.path.rsplit("/", 1)[-1] or "index"))
    accept = b"Accept-Encoding: gzip\r\n\r\n" if gzip else b"\r\n"
    loop = asyncio.get_running_loop()
    await asyncio.gather(*(_worker(loop, host, port, todo, outdir, accept)
                           for _ in range(min(parallel, len(urls)))))


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.reference.http_asyncio")
    ap.add_argument("--parallel", type=int, default=32)
    ap.add_argument("--gzip", action="store_true", help="ask for gzip and decode it")
    ap.add_argument("-d", dest="dir", required=True)
    ap.add_argument("urls", nargs="+")
    args = ap.parse_args(argv)
    os.makedirs(args.dir, exist_ok=True)
    try:
        import uvloop
    except ImportError:
        asyncio.run(_main(args.urls, args.dir, args.parallel, args.gzip))
    else:
        uvloop.run(_main(args.urls, args.dir, args.parallel, args.gzip))


if __name__ == "__main__":
    main(sys.argv[1:])

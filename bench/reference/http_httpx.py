"""A Python peer: httpx's AsyncClient with ``http2=True`` (HTTP/2 by ALPN over TLS; HTTP/1.1 on
plain http, where it has no prior-knowledge h2), as its docs recommend for concurrent requests:
one client, ``Limits(max_connections=N)``, ``asyncio.gather`` over the URLs, at most N requests
in flight (a semaphore: httpx's pool otherwise times queued requests out after 5 s). A request
whose HTTP/2 connection was closed under it is sent once more: nginx ends an HTTP/2 connection
after 1,000 requests (GOAWAY), and httpx 0.28 then fails the streams it had queued on it with
LocalProtocolError or RemoteProtocolError instead of opening a new connection.

    python -m bench.reference.http_httpx --parallel N -d DIR [--cacert CA] (-i LIST | URL...)

Each body written out as the CLI writes a file (bench/reference/peer_io.py).
"""

from __future__ import annotations

import asyncio
import sys

import httpx

from bench.reference.peer_io import parse, save, ssl_context


async def main(argv: list[str]) -> None:
    args = parse("python -m bench.reference.http_httpx", argv)
    limits = httpx.Limits(max_connections=args.parallel, max_keepalive_connections=args.parallel)
    sem = asyncio.Semaphore(args.parallel)
    async with httpx.AsyncClient(http2=True, limits=limits, verify=ssl_context(args.cacert)) as client:

        async def one(url: str) -> None:
            async with sem:
                try:
                    r = await client.get(url)
                except (httpx.LocalProtocolError, httpx.RemoteProtocolError):
                    r = await client.get(url)
            r.raise_for_status()
            save(args.dir, url, r.content)

        await asyncio.gather(*(one(u) for u in args.urls))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))

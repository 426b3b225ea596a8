"""A Python peer: niquests' AsyncSession, as its docs show many concurrent requests: one session
with a pool of N connections (``pool_maxsize``), ``asyncio.gather`` over the URLs, at most N
requests in flight; over TLS it negotiates HTTP/2 by ALPN.

    python -m bench.reference.http_niquests --parallel N -d DIR [--cacert CA] (-i LIST | URL...)

Its lazy responses (``multiplexed=True``, then ``gather()``), which its docs recommend for
HTTP/2, failed here on the 10,000-file HTTPS row: nginx ends an HTTP/2 connection after 1,000
requests, and niquests 3.21 then raised ConnectionError ("Remote end closed connection without
response") instead of sending the rest on a new connection. Each body is written out as the CLI
writes a file (bench/reference/peer_io.py).
"""

from __future__ import annotations

import asyncio
import sys

import niquests

from bench.reference.peer_io import parse, save


async def main(argv: list[str]) -> None:
    args = parse("python -m bench.reference.http_niquests", argv)
    # the CA goes with each request: niquests 3.21's AsyncSession did not use a session-wide
    # verify=PATH here (the certificate check failed), while verify= on the request works
    verify = args.cacert or True
    sem = asyncio.Semaphore(args.parallel)
    async with niquests.AsyncSession(pool_connections=1, pool_maxsize=args.parallel) as session:

        async def one(url: str) -> None:
            async with sem:
                r = await session.get(url, verify=verify)
            r.raise_for_status()
            save(args.dir, url, r.content)

        await asyncio.gather(*(one(u) for u in args.urls))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))

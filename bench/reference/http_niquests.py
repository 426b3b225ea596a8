"""A Python peer: niquests' AsyncSession, as its docs show many concurrent requests: one session
with a pool of N connections (``pool_maxsize``), ``asyncio.gather`` over the URLs, at most N
requests in flight; over TLS it negotiates HTTP/2 by ALPN. ``--multiplexed`` uses the
session's lazy responses instead (``multiplexed=True``, N requests issued, then ``gather()``),
what its docs recommend for HTTP/2.

    python -m bench.reference.http_niquests --parallel N -d DIR [--cacert CA] [--multiplexed] (-i LIST | URL...)

Each body written out as the CLI writes a file (bench/reference/peer_io.py).
"""

from __future__ import annotations

import asyncio
import sys

import niquests

from bench.reference.peer_io import parse, save


async def main(argv: list[str]) -> None:
    multiplexed = "--multiplexed" in argv
    args = parse("python -m bench.reference.http_niquests", [a for a in argv if a != "--multiplexed"])
    # the CA goes with each request: niquests 3.21's AsyncSession did not use a session-wide
    # verify=PATH here (the certificate check failed), while verify= on the request works
    verify = args.cacert or True
    async with niquests.AsyncSession(pool_connections=1, pool_maxsize=args.parallel,
                                     multiplexed=multiplexed) as session:
        if multiplexed:
            urls = args.urls
            for i in range(0, len(urls), args.parallel):
                batch = urls[i:i + args.parallel]
                responses = [await session.get(u, verify=verify) for u in batch]
                await session.gather(*responses)
                for url, r in zip(batch, responses, strict=True):
                    r.raise_for_status()
                    save(args.dir, url, r.content)
            return
        sem = asyncio.Semaphore(args.parallel)

        async def one(url: str) -> None:
            async with sem:
                r = await session.get(url, verify=verify)
            r.raise_for_status()
            save(args.dir, url, r.content)

        await asyncio.gather(*(one(u) for u in args.urls))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))

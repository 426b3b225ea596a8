"""A Python peer: curl_cffi's AsyncSession (libcurl through cffi, on asyncio), as its docs show
concurrent requests: one session, ``asyncio.gather`` over the URLs, ``max_clients`` = N (the
session's pool of curl handles: at most N transfers in flight).

    python -m bench.reference.http_curl_cffi --parallel N -d DIR [--cacert CA] (-i LIST | URL...)

No browser impersonation (plain libcurl defaults: HTTP/2 over TLS where offered); each body
written out as the CLI writes a file (bench/reference/peer_io.py).
"""

from __future__ import annotations

import asyncio
import sys

from curl_cffi.requests import AsyncSession

from bench.reference.peer_io import parse, save


async def main(argv: list[str]) -> None:
    args = parse("python -m bench.reference.http_curl_cffi", argv)
    async with AsyncSession(max_clients=args.parallel, verify=args.cacert or True) as session:

        async def one(url: str) -> None:
            r = await session.get(url)
            r.raise_for_status()
            save(args.dir, url, r.content)

        await asyncio.gather(*(one(u) for u in args.urls))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))

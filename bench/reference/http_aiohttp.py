"""The raw-library reference and Python peer: aiohttp alone, no anyurl.

    python -m bench.reference.http_aiohttp URL FILE                  one download (FILE "-": stdout)
    python -m bench.reference.http_aiohttp --parallel N -d DIR [--cacert CA] (-i LIST | URL...)
                                                                     many downloads, N at a time
    python -m bench.reference.http_aiohttp --parallel N --null URL... the same, each to /dev/null

A plain ClientSession with a connector of N connections per host and at most N requests in
flight (its docs' way for many concurrent requests: one session, ``asyncio.gather``); one
download streamed by ``iter_chunked`` with large chunks and blocking writes (what a careful
script would do), many small ones read whole and written out as the CLI writes a file
(bench/reference/peer_io.py). HTTP/1.1 only (aiohttp has no HTTP/2).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

import aiohttp

from bench.reference.peer_io import read_list, save, ssl_context

CHUNK = 1 << 20


async def _get(session: aiohttp.ClientSession, url: str, dest: str) -> None:
    async with session.get(url) as resp:
        resp.raise_for_status()
        fd = 1 if dest == "-" else os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            async for chunk in resp.content.iter_chunked(CHUNK):
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd, view):]
        finally:
            if fd != 1:
                os.close(fd)


async def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.reference.http_aiohttp")
    ap.add_argument("urls", nargs="*")
    ap.add_argument("-i", "--input", help="a file of URLs, one a line")
    ap.add_argument("--cacert", help="the CA file to verify https servers with")
    ap.add_argument("-d", "--dir")
    ap.add_argument("--null", action="store_true", help="write every download to /dev/null")
    ap.add_argument("--parallel", type=int, default=1)
    args = ap.parse_args(argv)
    if args.input:
        args.urls += read_list(args.input)
    connector = aiohttp.TCPConnector(limit=0, limit_per_host=max(args.parallel, 1),
                                     ssl=ssl_context(args.cacert) if args.cacert else True)
    async with aiohttp.ClientSession(connector=connector, read_bufsize=CHUNK) as session:
        if args.dir is None and not args.null:
            url, dest = args.urls
            await _get(session, url, dest)
            return
        sem = asyncio.Semaphore(args.parallel)

        async def one(url: str) -> None:
            async with sem:
                if args.null:
                    await _get(session, url, os.devnull)
                    return
                async with session.get(url) as resp:
                    resp.raise_for_status()
                    data = await resp.read()
            save(args.dir, url, data)

        await asyncio.gather(*(one(u) for u in args.urls))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))

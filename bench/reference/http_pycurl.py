"""A Python peer: pycurl's CurlMulti (libcurl, in C), as pycurl's own retriever-multi example does it.

    python -m bench.reference.http_pycurl --parallel N -d DIR [--cacert CA] (-i LIST | URL...)

N easy handles, reused from transfer to transfer, in one CurlMulti driven by perform /
info_read / select, the loop of pycurl's retriever-multi example with two changes that halve its
time at 50 ms: a freed handle gets its next URL at once (the example first waits in select for
another transfer), and select waits as long as curl_multi_timeout says; each body collected by WRITEFUNCTION and written out as the CLI writes a
file (bench/reference/peer_io.py). libcurl's defaults otherwise: HTTP/2 over TLS where the
server offers it, multiplexed, with PIPEWAIT set as curl -Z sets it (wait for a connection
that can multiplex rather than open another).
"""

from __future__ import annotations

import sys

import pycurl

from bench.reference.peer_io import parse, save


def main(argv: list[str]) -> int:
    args = parse("python -m bench.reference.http_pycurl", argv)
    queue = list(reversed(args.urls))
    multi = pycurl.CurlMulti()
    free = []
    for _ in range(min(args.parallel, len(queue))):
        c = pycurl.Curl()
        c.setopt(pycurl.NOSIGNAL, 1)
        c.setopt(pycurl.PIPEWAIT, 1)
        if args.cacert:
            c.setopt(pycurl.CAINFO, args.cacert)
        free.append(c)
    active = 0
    while queue or active:
        while queue and free:
            c = free.pop()
            c.url = queue.pop()
            c.parts = []
            c.setopt(pycurl.URL, c.url)
            c.setopt(pycurl.WRITEFUNCTION, c.parts.append)
            multi.add_handle(c)
            active += 1
        while multi.perform()[0] == pycurl.E_CALL_MULTI_PERFORM:
            pass
        while True:
            left, ok, failed = multi.info_read()
            for c in ok:
                code = c.getinfo(pycurl.RESPONSE_CODE)
                if code != 200:
                    raise SystemExit(f"{c.url}: HTTP {code}")
                save(args.dir, c.url, b"".join(c.parts))
                multi.remove_handle(c)
                free.append(c)
                active -= 1
            for c, errno, msg in failed:
                raise SystemExit(f"{c.url}: curl error {errno}: {msg}")
            if not left:
                break
        if queue and free:
            continue  # start the next transfers at once, not after select (pycurl's example waits)
        if active:
            # wait as long as libcurl asks (curl_multi_timeout): select() on no descriptor
            # (a connection still waiting to multiplex) would otherwise sleep the whole second
            wait = multi.timeout()
            multi.select(1.0 if wait < 0 else min(wait, 1000) / 1000)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

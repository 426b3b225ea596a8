"""The raw reference for bench_gopher: the fastest asyncio process we know for one gopher item.

    python -m bench.reference.gopher_asyncio URL FILE     (FILE "-": standard output)
    python -m bench.reference.gopher_asyncio --loop asyncio URL FILE
    python -m bench.reference.gopher_asyncio --connect-first URL FILE   (connect before importing asyncio)

No anyurl: parse ``gopher://host:port/T/selector`` by hand, connect, send the
selector, and write every received block to FILE from inside the protocol's
``buffer_updated`` (one reused 1 MiB buffer, ``recv_into`` then ``os.write``
of a memoryview: no copy, no task switch per block). uvloop's loop by default.
It has no timeouts and no error handling worth the name: it is the ceiling
an asyncio-based Python process reaches on this machine, not a client.
"""

from __future__ import annotations

import os
import sys

BUF = 1 << 20


def _target(url: str) -> tuple[str, int, bytes]:
    rest = url.split("://", 1)[1]
    hostport, _, path = rest.partition("/")
    host, _, port = hostport.rpartition(":") if ":" in hostport else (hostport, "", "70")
    selector = path[1:] if path else ""  # drop the type character
    return host, int(port or 70), selector.encode() + b"\r\n"


def main(argv: list[str]) -> int:
    loop_name = "uvloop"
    early = None
    if argv[:1] == ["--loop"]:
        loop_name, argv = argv[1], argv[2:]
    if argv[:1] == ["--connect-first"]:
        argv = argv[1:]
        if len(argv) == 2:
            # connect and send before importing asyncio: the server's start-up overlaps ours
            import socket

            host, port, request = _target(argv[0])
            early = socket.create_connection((host, port))
            early.sendall(request)
            early.setblocking(False)
    if len(argv) != 2:
        print("usage: python -m bench.reference.gopher_asyncio [--loop asyncio|uvloop] [--connect-first] URL FILE",
              file=sys.stderr)
        return 2
    url, dest = argv
    import asyncio

    if loop_name == "uvloop":
        import uvloop

        loop = uvloop.new_event_loop()
    else:
        loop = asyncio.new_event_loop()
    fd = 1 if dest == "-" else os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    buf = bytearray(BUF)
    view = memoryview(buf)
    done = loop.create_future()
    write = os.write

    class Sink(asyncio.BufferedProtocol):
        def get_buffer(self, sizehint: int) -> memoryview:
            return view

        def buffer_updated(self, nbytes: int) -> None:
            part = view[:nbytes]
            while part:
                part = part[write(fd, part):]

        def eof_received(self) -> bool:
            return False

        def connection_lost(self, exc: Exception | None) -> None:
            if not done.done():
                done.set_result(None)

    async def fetch() -> None:
        if early is not None:
            await loop.create_connection(Sink, sock=early)
        else:
            host, port, request = _target(url)
            transport, _ = await loop.create_connection(Sink, host, port)
            transport.write(request)
        await done

    loop.run_until_complete(fetch())
    loop.close()
    if fd != 1:
        os.close(fd)
    import gc

    gc.freeze()  # the exit-time collections then skip every module (as the anyurl program does)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

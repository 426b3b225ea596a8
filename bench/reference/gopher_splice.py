"""Raw prototypes beside bench/reference/gopher_asyncio.py: one gopher item, asyncio readiness on a plain socket.

    python -m bench.reference.gopher_splice [--mode splice|recv] [--loop uvloop|asyncio] [--rcvbuf N] [--pipe N]
                               [--connect-first 1] URL FILE

No transport and no protocol: the data connection is a plain non-blocking
socket watched with ``loop.add_reader`` (uvloop refuses ``add_reader`` on a
socket a transport owns, so a bulk body read this way must not be opened as
a transport). On each readiness call:

* ``splice``: ``os.splice`` socket -> pipe (up to the pipe's size), then
  pipe -> FILE until the pipe is empty. The pages never pass through Python.
* ``recv``: ``recv_into`` one reused buffer, then ``os.write`` of a memoryview.

``--connect-first 1`` connects and sends the selector before importing
asyncio, so the server starts (and the kernel buffers up to the receive
window) while the interpreter imports. FILE "-" is standard output. No timeouts, no error handling: a ceiling, not a client.
"""

from __future__ import annotations

import os
import sys

from bench.reference.gopher_asyncio import _target


def main(argv: list[str]) -> int:
    opts = {"--mode": "splice", "--loop": "uvloop", "--rcvbuf": "0", "--pipe": str(1 << 20), "--connect-first": ""}
    while argv[:1] and argv[0] in opts and len(argv) > 1:
        opts[argv[0]], argv = argv[1], argv[2:]
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    url, dest = argv
    mode, size, rcvbuf = opts["--mode"], int(opts["--pipe"]), int(opts["--rcvbuf"])
    import socket

    host, port, request = _target(url)
    early = None
    if opts["--connect-first"]:
        early = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            early.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        early.connect((host, port))
        early.sendall(request)
        early.setblocking(False)
    import asyncio

    if opts["--loop"] == "uvloop":
        import uvloop

        loop = uvloop.new_event_loop()
    else:
        loop = asyncio.new_event_loop()
    fd = 1 if dest == "-" else os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)

    async def fetch() -> None:
        if early is not None:
            sock = early
        else:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            if rcvbuf:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
            sock.setblocking(False)
            await loop.sock_connect(sock, (host, port))
            await loop.sock_sendall(sock, request)
        done = loop.create_future()
        sfd = sock.fileno()
        if mode == "splice":
            import fcntl

            r, w = os.pipe()
            try:
                size_ = fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, size)
            except OSError:
                size_ = 1 << 16
            splice = os.splice
            flags = os.SPLICE_F_MOVE | os.SPLICE_F_NONBLOCK

            def readable() -> None:
                try:
                    n = splice(sfd, w, size_, flags=flags)
                except BlockingIOError:
                    return
                if n == 0:
                    loop.remove_reader(sfd)
                    done.set_result(None)
                    return
                while n:
                    n -= splice(r, fd, n, flags=os.SPLICE_F_MOVE)
        else:
            buf = bytearray(size)
            view = memoryview(buf)
            write = os.write
            recv_into = sock.recv_into

            def readable() -> None:
                try:
                    n = recv_into(buf)
                except BlockingIOError:
                    return
                if n == 0:
                    loop.remove_reader(sfd)
                    done.set_result(None)
                    return
                part = view[:n]
                while part:
                    part = part[write(fd, part):]

        loop.add_reader(sfd, readable)
        await done
        sock.close()

    loop.run_until_complete(fetch())
    loop.close()
    if fd != 1:
        os.close(fd)
    import gc

    gc.freeze()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The ceiling for one gopher item from ANY Python process: a blocking socket, no asyncio.

    python -S bench/reference/gopher_sync.py [--mode recv|splice] [--buf N] [--rcvbuf N] URL FILE

Parse ``gopher://host:port/T/selector`` by hand, connect, send the selector,
then until the server closes:

* ``recv`` (default): ``recv_into`` one reused N-byte buffer (``--buf``,
  default 256 KiB), ``os.write`` of a memoryview of what arrived;
* ``splice``: ``os.splice`` socket -> pipe (N bytes, the pipe's size), then
  pipe -> FILE: the pages never pass through Python.

``--rcvbuf N`` sets SO_RCVBUF before connecting (0, the default, leaves the
kernel's autotuning). FILE "-" is standard output. Only builtin modules
(_socket, fcntl for the pipe's size); leaves through os._exit. No timeouts:
a ceiling, not a client.

Measured (an A/B script since folded into the gopher group, 7 interleaved rounds, 100 MiB from
gophernicus to a file on ext4, ratio = curl's time / this one's, median):
recv 64 KiB 1.15, 256 KiB 1.23, 1 MiB 1.23, 256 KiB with SO_RCVBUF 4 MiB 1.22,
splice through a 64 KiB pipe 0.98, through a 1 MiB pipe 0.78. So the default
is recv_into 256 KiB with the kernel's autotuning: splice saves the copy but
costs two calls and a pipe's worth of page moves per block.
"""

import os
import sys
from _socket import AF_INET, SO_RCVBUF, SOCK_STREAM, SOL_SOCKET, socket


def main(argv: list[str]) -> None:
    opts = {"--mode": "recv", "--buf": str(256 << 10), "--rcvbuf": "0"}
    while argv[:1] and argv[0] in opts and len(argv) > 1:
        opts[argv[0]], argv = argv[1], argv[2:]
    if len(argv) != 2 or opts["--mode"] not in ("recv", "splice"):
        os.write(2, (__doc__ or "").encode())
        os._exit(2)
    url, dest = argv
    rest = url.split("://", 1)[1]
    hostport, _, path = rest.partition("/")
    host, _, port = hostport.partition(":")
    request = path[1:].encode() + b"\r\n"  # the selector: the path without its type character
    size, rcvbuf = int(opts["--buf"]), int(opts["--rcvbuf"])

    s = socket(AF_INET, SOCK_STREAM)
    if rcvbuf:
        s.setsockopt(SOL_SOCKET, SO_RCVBUF, rcvbuf)
    s.connect((host, int(port or 70)))
    s.sendall(request)
    fd = 1 if dest == "-" else os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
    write, got = os.write, 0
    if opts["--mode"] == "recv":
        buf = bytearray(size)
        view = memoryview(buf)
        recv_into = s.recv_into
        while n := recv_into(buf):
            got += n
            done = write(fd, view[:n])
            while done < n:
                done += write(fd, view[done:n])
    else:
        import fcntl

        r, w = os.pipe()
        try:
            size = fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, size)
        except OSError:
            size = 1 << 16
        splice, sfd, move = os.splice, s.fileno(), os.SPLICE_F_MOVE
        while n := splice(sfd, w, size, flags=move):
            got += n
            while n:
                n -= splice(r, fd, n, flags=move)
    if fd != 1:
        os.close(fd)
    s.close()
    if not got:
        os.write(2, f"raw_gopher_sync: {url}: nothing received\n".encode())
        os._exit(1)
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])

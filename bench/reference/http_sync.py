"""The ceiling for many small HTTP transfers from ANY Python process: no asyncio at all.

    python -S bench/reference/http_sync.py [--parallel N] -d DIR URL...
    python -S -m bench.reference.http_sync [--parallel N] -d DIR URL...

N keep-alive HTTP/1.1 connections (no pipelining: one request in flight per
connection, as curl does) to the URLs' one host:port, non-blocking sockets
watched by one epoll, each connection asking for the next URL as soon as its
last response has ended, every body written to DIR/<last segment> with
os.open/os.write/os.close. Framing is Content-Length only: any status but
200, a Transfer-Encoding, a connection the server closes, bytes past the
body or a short write fails loudly. Imports only builtin modules (_socket,
select), no argparse or urllib, and leaves through os._exit (nothing to
flush: every file was closed by os.close). No timeouts beyond a 30 s cap on
each epoll wait: a ceiling, not a client.

Per response it makes five system calls (recvfrom, sendto, openat, write,
close; one epoll_wait per ~20 responses) where curl -Z makes about 18
(strace -c). Started as ``python -S PATH``: ``-m``, with site, or ``-I`` read
the same within the noise (an A/B script since folded into the http group).
"""

import os
import sys
from _socket import AF_INET, IPPROTO_TCP, SOCK_STREAM, TCP_NODELAY, socket
from select import EPOLLIN, epoll

FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC
MAX_HEAD = 1 << 16  # a response head larger than this fails
CRLF = b"\r\n"
RECV = 1 << 18  # one recv_into takes a whole 4 KiB response, head and body


def fail(msg: str) -> None:
    os.write(2, f"raw_http_sync: {msg}\n".encode())
    os._exit(1)


def main(argv: list[str]) -> None:
    parallel, outdir, i = 32, "", 0
    while i < len(argv) and argv[i].startswith("-"):
        if argv[i] == "--parallel" and i + 1 < len(argv):
            parallel = int(argv[i + 1])
        elif argv[i] == "-d" and i + 1 < len(argv):
            outdir = argv[i + 1]
        else:
            fail(f"usage: [--parallel N] -d DIR URL... (no {argv[i]!r}: --gzip is not supported)")
        i += 2
    urls = argv[i:]
    if not outdir or not urls:
        fail("usage: [--parallel N] -d DIR URL...")
    first = urls[0]
    if not first.startswith("http://"):
        fail(f"{first}: only http:// URLs")
    hostport = first[7:].split("/", 1)[0]
    host, _, port = hostport.partition(":")
    prefix = "http://" + hostport + "/"
    tail = b" HTTP/1.1\r\nHost: " + hostport.encode() + b"\r\n\r\n"
    base = outdir + "/"
    todo = []  # (request, output path), popped from the end
    for u in reversed(urls):
        if not u.startswith(prefix):
            fail(f"{u}: not on {hostport}")
        path = u[len(prefix) - 1:]
        todo.append((b"GET " + path.encode() + tail, base + (path.rsplit("/", 1)[-1] or "index")))
    total = len(todo)
    os.makedirs(outdir, exist_ok=True)

    ep = epoll()
    socks, recvs, bufs, dests = {}, {}, {}, {}
    addr = (host or "127.0.0.1", int(port or 80))
    for _ in range(min(parallel, total)):
        s = socket(AF_INET, SOCK_STREAM)
        s.setsockopt(IPPROTO_TCP, TCP_NODELAY, 1)
        s.connect(addr)  # loopback: the handshake completes inside the call
        s.setblocking(False)
        fd = s.fileno()
        req, dest = todo.pop()
        s.send(req)  # a few dozen bytes into an empty send buffer: never short
        socks[fd], recvs[fd], bufs[fd], dests[fd] = s, s.recv_into, b"", dest
        ep.register(fd, EPOLLIN)

    poll, write, close, opn = ep.poll, os.write, os.close, os.open
    # one receive buffer for every connection, reused: a fresh bytes object per recv() of
    # this size costs glibc an mmap, mremap and munmap per response (strace -c)
    buf = bytearray(RECV)
    view = memoryview(buf)
    done = 0
    while done < total:
        events = poll(30)
        if not events:
            fail(f"no response for 30 s ({done} of {total} done)")
        for fd, _ev in events:
            try:
                n = recvs[fd](buf)
            except BlockingIOError:
                continue
            if not n:
                fail(f"{dests[fd]}: the server closed the connection")
            held = bufs[fd]
            if held:  # the rest of a response that came in pieces
                data = held + view[:n]
                n = len(data)
            else:
                data = buf
            h = data.find(b"\r\n\r\n", 0, n)
            if h < 0:
                if n > MAX_HEAD:
                    fail(f"{dests[fd]}: response head over {MAX_HEAD} bytes")
                bufs[fd] = bytes(data[:n])
                continue
            if not data.startswith(b"HTTP/1.1 200 "):
                fail(f"{dests[fd]}: {bytes(data[:n]).split(CRLF, 1)[0]!r}")
            head = data[:h].lower()
            k = head.find(b"\r\ncontent-length:")
            if k < 0 or head.find(b"\r\ntransfer-encoding:") >= 0 or head.find(b"\r\nconnection: close") >= 0:
                fail(f"{dests[fd]}: framing other than Content-Length on a kept-alive connection: {head!r}")
            e = head.find(b"\r\n", k + 17)
            length = int(head[k + 17:e if e > 0 else h])
            end = h + 4 + length
            if n < end:
                bufs[fd] = bytes(data[:n])
                continue
            if n > end:
                fail(f"{dests[fd]}: {n - end} bytes after the body")
            bufs[fd] = b""
            dest = dests[fd]
            if todo:  # ask for the next one before writing this one: the server works meanwhile
                req, dests[fd] = todo.pop()
                if socks[fd].send(req) != len(req):
                    fail("short send")
            else:
                ep.unregister(fd)
                socks.pop(fd).close()
            out = opn(dest, FLAGS, 0o644)
            if write(out, view[h + 4:end] if data is buf else data[h + 4:end]) != length:
                fail(f"{dest}: short write")
            close(out)
            done += 1
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])

"""What the Python peer scripts (bench/reference/http_*.py) share: one command line and one
way of writing a body out, the CLI's.

    python -m bench.reference.http_PEER --parallel N -d DIR [--cacert CA] (-i LIST | URL...)

Every body goes to DIR/<the URL's last segment> as ``anyurl get -d DIR`` writes it on Linux
(anyurl/transfer/download.py): an unnamed file (O_TMPFILE) in DIR, the bytes written, then
linked into place through /proc/self/fd, so no peer pays more or less for its files than the
CLI does. A response other than 200 ends the script with an error (a benchmark run must be a
complete one; the harness also counts the files).
"""

from __future__ import annotations

import argparse
import os
import ssl

_DIR = os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC
_proc_fd = -1


def parse(prog: str, argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog=prog)
    ap.add_argument("urls", nargs="*")
    ap.add_argument("-i", "--input", help="a file of URLs, one a line")
    ap.add_argument("-d", "--dir", required=True)
    ap.add_argument("--parallel", type=int, default=8, help="transfers in flight (default 8)")
    ap.add_argument("--cacert", help="the CA file to verify https servers with")
    args = ap.parse_args(argv)
    if args.input:
        args.urls += read_list(args.input)
    return args


def read_list(path: str) -> list[str]:
    """The URLs of a list file, one a line."""
    with open(path) as f:
        return [line.strip() for line in f if line.strip()]


def ssl_context(cacert: str | None) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=cacert)


def save(outdir: str, url: str, data: bytes) -> None:
    """*data* as DIR/<last segment of url>, written the way the anyurl CLI writes a file."""
    global _proc_fd
    fd = os.open(outdir, os.O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if _proc_fd < 0:
            _proc_fd = os.open("/proc/self/fd", _DIR)
        os.link(str(fd), os.path.join(outdir, url.rsplit("/", 1)[-1]), src_dir_fd=_proc_fd, follow_symlinks=True)
    finally:
        os.close(fd)

"""The filesystem anchor of the small-file groups: write the same files the clients
write, with nothing but os.open/os.write/os.close in one process.

    python -S -m bench.reference.fs_anchor DIR SIZE NAME...     (SIZE bytes into each DIR/NAME)
    python -S -m bench.reference.fs_anchor --tree MANIFEST DIR  (MANIFEST: JSON [[relpath, hex], ...])

Its time in a group's table is what the filesystem costs each client for those files
(plus about 8 ms of interpreter start): on tmpfs about 0.01 s for 1,000 x 4 KiB, on
this machine's ext4 0.03 s or, in the state docs/benchmarks.md describes, 0.3-0.7 s.
"""

import os
import sys

FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC


def write(path: str, data: bytes) -> None:
    fd = os.open(path, FLAGS, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--tree"] and len(argv) == 3:
        import json

        with open(argv[1]) as f:
            entries = json.load(f)
        made = set()
        for rel, hexdata in entries:
            path = os.path.join(argv[2], rel)
            parent = os.path.dirname(path)
            if parent not in made:
                os.makedirs(parent, exist_ok=True)
                made.add(parent)
            write(path, bytes.fromhex(hexdata))
        return 0
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    outdir, size = argv[0], int(argv[1])
    data = b"a" * size
    for name in argv[2:]:
        write(os.path.join(outdir, name), data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""start-up benchmark: what one ``anyurl`` process costs before it moves a byte.

``python -m bench.run startup`` times, in interleaved rounds, the bare interpreter
(``python -c pass``, the reference), ``anyurl --version``, ``anyurl parse URL``, the
asyncio + uvloop import every transfer pays (``python -c "import asyncio, uvloop"``)
and ``anyurl get`` of a 1-byte local file, which is that import plus anyurl's own.
Issue 13's goal: ``--version`` and ``parse`` within 2x of ``python -c pass``, i.e. a
ratio of at least 0.5 in this table.
"""

from __future__ import annotations

import os
from pathlib import Path

from bench import harness
from bench.harness import Case, anyurl_cmd, compare, python_cmd


def run(launcher: object, quick: bool) -> None:
    scratch = harness.ROOT / "bench" / ".scratch"
    scratch.mkdir(exist_ok=True)
    src = scratch / "startup-one-byte"
    src.write_bytes(b"x")
    out = scratch / "startup-out"

    def clear() -> None:
        out.unlink(missing_ok=True)

    def check() -> None:
        if out.read_bytes() != b"x":
            raise RuntimeError(f"anyurl get wrote {out.read_bytes()!r}")

    try:
        compare("startup: one process, nothing transferred (python -c pass = 1)", [
            Case("python -c pass", python_cmd("-c", "pass")),
            Case("anyurl --version", anyurl_cmd("--version")),
            Case("anyurl parse URL", anyurl_cmd("parse", "ftp://user@host.example/pub/a%20b;type=i")),
            Case("python -c 'import asyncio, uvloop'", python_cmd("-c", "import asyncio, uvloop")),
            Case("anyurl get -q file:///1-byte", anyurl_cmd("get", "-q", "-o", str(out), Path(src).as_uri()),
                 before=clear, after=check),
        ], "python -c pass", rounds=max(harness.ROUNDS * 3, 9))
    finally:
        for p in (src, out):
            if os.path.lexists(p):
                p.unlink()


if __name__ == "__main__":
    from bench.run import run_with_servers

    run_with_servers(run, False)

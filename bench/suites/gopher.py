"""gopher: anyurl vs curl on the same gophernicus server, side by side in one run.

``python -m bench.run gopher [--quick]``:

1. one 100 MiB binary item (type 9; 16 MiB with --quick) to a file:
   ``anyurl get -o FILE`` vs ``curl -s -o FILE``;
2. the same item to /dev/null (curl and the CLI write to standard output, which is
   /dev/null; the API script writes to /dev/null);
3. 500 small text items (200 with --quick) at concurrency 32 (gophernicus runs one
   process per connection under socat, so this group is bound by the server's forks):
   ``anyurl get --parallel 32 -d DIR`` vs ``curl --parallel --parallel-max 32``
   (the CLI keeps the Client's default of 8 connections per host; the API
   script case uses Limits(per_host=32)); once with the output on tmpfs and once on
   disk, each with the filesystem anchor (bench/harness.py).

curl sends the selector of ``gopher://h:p/9/big.bin`` as ``/big.bin`` (it drops
the "/" and the type character), exactly as anyurl does. Ratios > 1 mean
faster than curl. ``python -m bench.suites.gopher fetch URL FILE`` is the
anyurl API (no CLI) used as a third case for the big item; bench/reference/gopher_asyncio.py
(asyncio + uvloop, no anyurl, one reused buffer written from the protocol
callback) is the fourth, bench/reference/gopher_splice.py (the same, the copy done by splice(2))
the fifth: the ceilings for an asyncio-based Python process, whose interpreter
start and ``import asyncio`` alone cost about half of curl's whole run.
bench/reference/gopher_sync.py (a blocking socket, no asyncio, python -S) is the
sixth: the ceiling for any Python process.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from pathlib import Path

from bench.harness import Case, ManyFiles, anyurl_cmd, check_size, compare, outputs, python_cmd, wanted

CONCURRENCY = 32
# The anchor: no anyurl, the fastest asyncio process we know for one item (bench/reference/gopher_asyncio.py).
RAW = "raw asyncio+uvloop (ceiling)"
# The same with the copy left to the kernel: plain socket + add_reader + splice (bench/reference/gopher_splice.py).
RAW_SPLICE = "raw asyncio+uvloop, splice"
# No asyncio at all: a blocking socket, python -S (bench/reference/gopher_sync.py): the ceiling for any Python process.
SYNC = "raw Python, no asyncio (any-Python ceiling)"
SYNC_SCRIPT = Path(__file__).resolve().parents[1] / "reference" / "gopher_sync.py"
SYNC_OPTS: list[str] = []  # its defaults (recv_into 256 KiB) measured best here


def _big_file(root: Path, size: int) -> Path:
    path = root / f"big{size >> 20}.bin"
    if not path.exists() or path.stat().st_size != size:
        block = bytes(range(256)) * 4096  # 1 MiB, deterministic
        with open(path, "wb") as f:
            for _ in range(size >> 20):
                f.write(block)
        os.chmod(path, 0o644)
    return path


def run(launcher: object, quick: bool) -> None:
    size = (16 if quick else 100) << 20
    n_small = 200 if quick else 500
    ep = launcher.get("gophernicus")  # type: ignore[attr-defined]
    root = Path(ep.info["root"])
    big = _big_file(root, size)
    base = f"gopher://{ep.host}:{ep.port}"
    url = f"{base}/9/{big.name}"
    work = Path(tempfile.mkdtemp(prefix="bench-gopher-"))
    out = work / "big.out"
    curl = shutil.which("curl") or "curl"

    def rm_out() -> None:
        out.unlink(missing_ok=True)

    def check_out() -> None:
        check_size(out, size)

    mib = size >> 20
    compare(f"gopher: one {mib} MiB binary item to a file (gophernicus)", [
        Case("curl -o FILE", [curl, "-s", "-o", str(out), url], rm_out, check_out),
        Case("anyurl get -o FILE", anyurl_cmd("get", "-q", "-o", str(out), url), rm_out, check_out),
        Case("anyurl API (script)", python_cmd("-m", "bench.suites.gopher", "fetch", url, str(out)),
             rm_out, check_out),
        Case(RAW, python_cmd("-m", "bench.reference.gopher_asyncio", url, str(out)), rm_out, check_out),
        Case(RAW_SPLICE, python_cmd("-m", "bench.reference.gopher_splice", url, str(out)), rm_out, check_out),
        Case(SYNC, python_cmd("-S", str(SYNC_SCRIPT), *SYNC_OPTS, url, str(out)), rm_out, check_out),
    ], "curl -o FILE", unit_work=(mib, "MiB"))
    compare(f"gopher: one {mib} MiB binary item to /dev/null (gophernicus)", [
        Case("curl > /dev/null", [curl, "-s", url]),
        Case("anyurl get > /dev/null", anyurl_cmd("get", "-q", url)),
        Case("anyurl API (script)", python_cmd("-m", "bench.suites.gopher", "fetch", url, os.devnull)),
        Case(RAW, python_cmd("-m", "bench.reference.gopher_asyncio", url, "-")),
        Case(RAW_SPLICE, python_cmd("-m", "bench.reference.gopher_splice", url, "-")),
        Case(SYNC, python_cmd("-S", str(SYNC_SCRIPT), *SYNC_OPTS, url, "-")),
    ], "curl > /dev/null", unit_work=(mib, "MiB"))

    urls = [f"{base}/0/many/t{i:04d}.txt" for i in range(n_small)]
    # items differ in size: the anchor writes each the mean size, the check counts files
    mean = sum((root / "many" / f"t{i:04d}.txt").stat().st_size for i in range(n_small)) // n_small
    for output in outputs():
        title = f"gopher: {n_small} small text items, concurrency {CONCURRENCY} (gophernicus), output on {output.label}"
        if not wanted(title):
            continue
        many = ManyFiles.prepare(output, "gopher", urls, mean, exact=False)
        dest, clean, check_many = many.outdir, many.fresh, many.check
        compare(title, [
            Case(f"curl --parallel-max {CONCURRENCY}",
                 [curl, "-s", "--parallel", "--parallel-max", str(CONCURRENCY), "--output-dir", str(dest),
                  "--remote-name-all", *urls], clean, check_many),
            Case(f"anyurl get --parallel {CONCURRENCY}",
                 anyurl_cmd("get", "-q", "--parallel", str(CONCURRENCY), "-d", str(dest), *urls), clean, check_many),
            Case(f"anyurl API, {CONCURRENCY} concurrent (script)",
                 python_cmd("-m", "bench.suites.gopher", "many", str(dest), str(CONCURRENCY), *urls), clean,
                 check_many),
            many.anchor(),
        ], f"curl --parallel-max {CONCURRENCY}", unit_work=(n_small, "requests"), note=many.note())
    shutil.rmtree(work, ignore_errors=True)
    big.unlink(missing_ok=True)


async def _fetch(url: str, path: str) -> None:
    from anyurl.client import Client

    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        async with Client() as client, client.open(url) as body:
            async for chunk in body:
                os.write(fd, chunk)
    finally:
        os.close(fd)


def _write(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)


async def _many(dest: str, concurrency: int, urls: list[str]) -> None:
    from anyurl.client import Client, Limits

    sem = asyncio.Semaphore(concurrency)
    async with Client(limits=Limits(per_host=concurrency)) as client:

        async def one(url: str) -> None:
            async with sem:
                r = await client.fetch(url)
            _write(os.path.join(dest, url.rsplit("/", 1)[1]), r.content)

        async with asyncio.TaskGroup() as tg:
            for u in urls:
                tg.create_task(one(u))


def main(argv: list[str]) -> int:
    if argv[:1] == ["fetch"] and len(argv) == 3:
        asyncio.run(_fetch(argv[1], argv[2]))
        return 0
    if argv[:1] == ["many"] and len(argv) > 3:
        asyncio.run(_many(argv[1], int(argv[2]), argv[3:]))
        return 0
    if argv[:1] == ["run"]:
        from bench.run import run_with_servers

        run_with_servers(run, "--quick" in argv)
        return 0
    print("usage: python -m bench.suites.gopher run [--quick] | fetch URL FILE", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""http benchmark: anyurl vs curl vs raw aiohttp against a local nginx.

    .venv/bin/python -m bench.run http [--quick]
    .venv/bin/python -m bench.bench_http run [--quick]      (the same, standalone)

Groups (each command is a whole process; median of 5 runs, peak RSS):
  * one large file (1 GiB; 128 MiB with --quick) to a file on disk,
  * the same file to /dev/null (network and parsing cost only),
  * 1,000 small files (4 KiB each) at concurrency 32 into a directory.

anyurl runs as its CLI (``anyurl get``) when src/anyurl/cli.py exists, and
also as a small library script (this module's ``get``/``many`` commands: one
Client, ``Client.open`` streamed to a file) so the library's data path can be
told apart from the CLI's start-up and settings.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from bench.harness import ManyFiles, Result, Run, anyurl_cmd, check_size, python_cmd, report

MIB = 1 << 20

# CPU seconds (user + system) of each run, by case name: the machine is shared,
# so wall times swing with other people's load; CPU time per case is steadier.
CPU: dict[str, list[float]] = {}


def measure(name: str, argv: Sequence[str], repeat: int = 5, *,
            before: Callable[[], None] | None = None,
            after: Callable[[], None] | None = None) -> Result:
    """harness.measure, also keeping each run's CPU time (from the same wait4)."""
    res = Result(name)
    for _ in range(repeat):
        if before:
            before()
        t0 = time.perf_counter()
        proc = subprocess.Popen(list(argv), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - t0
        code = os.waitstatus_to_exitcode(status)
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        if proc.stderr:
            proc.stderr.close()
        if code != 0:
            raise RuntimeError(f"{' '.join(argv)} failed ({code}): {err[-500:]}")
        res.runs.append(Run(elapsed, usage.ru_maxrss, code))
        CPU.setdefault(name, []).append(usage.ru_utime + usage.ru_stime)
        if after:
            after()
    return res


def report_cpu(title: str, results: list[Result], reference: str) -> None:
    """Median CPU seconds per case and the ratio reference/this (> 1: less CPU than the reference)."""
    ref = statistics.median(CPU[reference])
    print(f"   CPU (user+sys, median) for {title}:")
    for r in results:
        cpu = statistics.median(CPU[r.name])
        print(f"   {r.name:<40} {cpu:9.3f} s {ref / cpu if cpu else float('inf'):22.2f}")


def _make_big(path: Path, mib: int) -> None:
    """*mib* MiB of incompressible data, every MiB different."""
    block = os.urandom(MIB)
    with open(path, "wb") as f:
        for i in range(mib):
            f.write(i.to_bytes(4, "big") + block[4:])
    path.chmod(0o644)


def run(launcher: object, quick: bool) -> None:
    """Start nginx through *launcher*, create the files and print the three groups."""
    ep = launcher.get("nginx")  # type: ignore[attr-defined]
    www = Path(ep.info["www"])
    mib = 128 if quick else 1024
    repeat = 5
    big = www / "bench-big.bin"
    _make_big(big, mib)
    size = mib * MIB
    url = f"http://{ep.host}:{ep.port}/bench-big.bin"
    have_cli = importlib.util.find_spec("anyurl.cli") is not None
    scratch = Path(tempfile.mkdtemp(prefix="anyurl-bench-http-"))
    out = scratch / "out.bin"
    try:
        def clean() -> None:
            out.unlink(missing_ok=True)

        def verify() -> None:
            check_size(out, size)
            out.unlink()

        results: list[Result] = [
            measure("curl -o FILE", ["curl", "-sf", "-o", str(out), url], repeat, after=verify),
            measure("raw aiohttp (iter_chunked 1 MiB)",
                    python_cmd("-m", "bench.raw_aiohttp", url, str(out)), repeat, after=verify),
        ]
        if have_cli:
            results.append(measure("anyurl get -o FILE", anyurl_cmd("get", "-q", url, "-o", str(out)),
                                   repeat, before=clean, after=verify))
        results.append(measure("anyurl library (Client.open)",
                               python_cmd("-m", "bench.bench_http", "get", url, str(out)), repeat,
                               after=verify))
        report(f"http: one {mib} MiB file from nginx to disk", results, "curl -o FILE", (mib, "MiB"))
        report_cpu("to disk", results, "curl -o FILE")

        results = [
            measure("curl -o /dev/null", ["curl", "-sf", "-o", "/dev/null", url], repeat),
            measure("raw aiohttp (iter_chunked 1 MiB)",
                    python_cmd("-m", "bench.raw_aiohttp", url, "/dev/null"), repeat),
        ]
        if have_cli:
            results.append(measure("anyurl get -o - >/dev/null", anyurl_cmd("get", "-q", url, "-o", "-"),
                                   repeat))
        results.append(measure("anyurl library (Client.open)",
                               python_cmd("-m", "bench.bench_http", "get", url, "/dev/null"), repeat))
        report(f"http: one {mib} MiB file from nginx to /dev/null", results, "curl -o /dev/null",
               (mib, "MiB"))
        report_cpu("to /dev/null", results, "curl -o /dev/null")
        big.unlink()

        n = 1000
        urls = [f"http://{ep.host}:{ep.port}/many/f{i:04d}.txt" for i in range(n)]
        many = ManyFiles.prepare(scratch, urls, 4096)
        outdir, cfg, fresh, count = many.outdir, many.curl_config, many.fresh, many.check

        results = [
            measure("curl -Z --parallel-max 32", [
                "curl", "-sf", "-Z", "--parallel-max", "32", "--output-dir", str(outdir),
                "--remote-name-all", "-K", str(cfg)], repeat, before=fresh, after=count),
            measure("raw aiohttp, 32 at a time",
                    python_cmd("-m", "bench.raw_aiohttp", "--parallel", "32", "-d", str(outdir), *urls),
                    repeat, before=fresh, after=count),
        ]
        if have_cli:
            results.append(measure("anyurl get --parallel 32 -d DIR",
                                   anyurl_cmd("get", "-q", "--parallel", "32", "-d", str(outdir), *urls),
                                   repeat, before=fresh, after=count))
        results.append(measure("anyurl library, 32 at a time",
                               python_cmd("-m", "bench.bench_http", "many", "--parallel", "32",
                                          str(outdir), *urls), repeat, before=fresh, after=count))
        report(f"http: {n} files of 4 KiB at concurrency 32", results, "curl -Z --parallel-max 32",
               (n, "files"))
        report_cpu("small files", results, "curl -Z --parallel-max 32")
    finally:
        big.unlink(missing_ok=True)
        shutil.rmtree(scratch, ignore_errors=True)


# -- the library script the benchmark runs (python -m bench.bench_http ...) --------


async def _get(url: str, dest: str) -> None:
    from anyurl import Client

    async with Client() as client, client.open(url) as body:
        fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            async for chunk in body:
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd, view):]
        finally:
            os.close(fd)


async def _many(outdir: str, urls: list[str], parallel: int) -> None:
    from anyurl import Client, Limits

    sem = asyncio.Semaphore(parallel)
    async with Client(limits=Limits(per_host=parallel)) as client:

        async def one(url: str) -> None:
            async with sem, client.open(url) as body:
                data = await body.read()
            fd = os.open(os.path.join(outdir, url.rsplit("/", 1)[-1]),
                         os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)

        await asyncio.gather(*(one(u) for u in urls))


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.bench_http")
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("get", help="download one URL to FILE with anyurl's library")
    g.add_argument("url")
    g.add_argument("file")
    m = sub.add_parser("many", help="download URLs into DIR, N at a time, with one Client")
    m.add_argument("--parallel", type=int, default=32)
    m.add_argument("dir")
    m.add_argument("urls", nargs="+")
    r = sub.add_parser("run", help="run the benchmark (as bench.run does)")
    r.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    if args.cmd == "run":
        from bench.run import run_with_servers

        run_with_servers(run, args.quick)
    elif args.cmd == "get":
        asyncio.run(_get(args.url, args.file))
    else:
        asyncio.run(_many(args.dir, args.urls, args.parallel))


if __name__ == "__main__":
    main(sys.argv[1:])

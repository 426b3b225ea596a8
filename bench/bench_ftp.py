"""ftp benchmark: anyurl vs curl vs lftp vs Python ftplib against a local vsftpd.

    .venv/bin/python -m bench.run ftp [--quick]
    .venv/bin/python -m bench.bench_ftp run [--quick]      (the same, standalone)

Groups (each command is a whole process; median of 5 runs, peak RSS):
  * one large file (1 GiB; 128 MiB with --quick) RETR to a file on disk,
  * the same file to /dev/null,
  * 1,000 files of 4 KiB (200 with --quick) from one directory, 8 connections,
    plus anyurl over one connection and with a new connection per file.

anyurl runs as its CLI (``anyurl get``) and as a small library script (this
module's ``get``/``many`` commands) so the library's data path can be told apart
from the CLI's start-up.
"""

from __future__ import annotations

import argparse
import asyncio
import ftplib
import importlib.util
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.harness import ManyFiles, Result, anyurl_cmd, check_size, measure, python_cmd, report

MIB = 1 << 20


def run(launcher: object, quick: bool) -> None:
    """Start vsftpd through *launcher*, seed the files and print the three groups."""
    from fixtures.servers import vsftpd

    ep = launcher.get("vsftpd")  # type: ignore[attr-defined]
    mib = 128 if quick else 1024
    count = 200 if quick else 1000
    repeat = 5
    size = mib * MIB
    big = vsftpd.ensure_big(ep.info, size, "bench-big.bin")
    many_dir = vsftpd.ensure_many(ep.info, count, 4096, f"bench{count}")
    host, port = ep.host, ep.port
    url = f"ftp://{host}:{port}/pub/bench-big.bin"
    have_cli = (Path(__file__).resolve().parent.parent / "src" / "anyurl" / "cli.py").exists()
    have_uvloop = importlib.util.find_spec("uvloop") is not None
    scratch = Path(tempfile.mkdtemp(prefix="anyurl-bench-ftp-"))
    out = scratch / "out.bin"
    lftp_open = f"set cmd:interactive no; set xfer:clobber on; open -p {port} {host}"
    try:
        def clean() -> None:
            out.unlink(missing_ok=True)

        def verify() -> None:
            check_size(out, size)
            out.unlink()

        results: list[Result] = [
            measure("curl -o FILE", ["curl", "-sf", "-o", str(out), url], repeat, before=clean, after=verify),
            measure("lftp get", ["lftp", "-c", f"{lftp_open}; get /pub/bench-big.bin -o {out}"], repeat,
                    before=clean, after=verify),
            measure("ftplib retrbinary 1 MiB blocks",
                    python_cmd("-m", "bench.bench_ftp", "ftplib", host, str(port), "/pub/bench-big.bin",
                               str(out), str(MIB)), repeat, before=clean, after=verify),
        ]
        if have_cli:
            results.append(measure("anyurl get -o FILE", anyurl_cmd("get", "-q", url, "-o", str(out)),
                                   repeat, before=clean, after=verify))
        results.append(measure("anyurl library (Client.open)",
                               python_cmd("-m", "bench.bench_ftp", "get", url, str(out)), repeat,
                               before=clean, after=verify))
        if have_uvloop:
            results.append(measure("anyurl library + uvloop",
                                   python_cmd("-m", "bench.bench_ftp", "get", "--uvloop", url, str(out)),
                                   repeat, before=clean, after=verify))
        report(f"ftp: one {mib} MiB file from vsftpd to disk", results, "curl -o FILE", (mib, "MiB"))

        results = [
            measure("curl -o /dev/null", ["curl", "-sf", "-o", "/dev/null", url], repeat),
            measure("ftplib retrbinary 256 KiB blocks",
                    python_cmd("-m", "bench.bench_ftp", "ftplib", host, str(port), "/pub/bench-big.bin",
                               "/dev/null", str(256 << 10)), repeat),
        ]
        if have_cli:
            results.append(measure("anyurl get -o - >/dev/null", anyurl_cmd("get", "-q", url, "-o", "-"),
                                   repeat))
        results.append(measure("anyurl library (Client.open)",
                               python_cmd("-m", "bench.bench_ftp", "get", url, "/dev/null"), repeat))
        if have_uvloop:
            results.append(measure("anyurl library + uvloop",
                                   python_cmd("-m", "bench.bench_ftp", "get", "--uvloop", url, "/dev/null"),
                                   repeat))
        report(f"ftp: one {mib} MiB file from vsftpd to /dev/null", results, "curl -o /dev/null",
               (mib, "MiB"))

        names = sorted(p.name for p in many_dir.iterdir())
        rel = f"/pub/{many_dir.name}"
        urls = [f"ftp://{host}:{port}{rel}/{n}" for n in names]
        many = ManyFiles.prepare(scratch, urls, 4096)
        outdir, cfg, fresh, check = many.outdir, many.curl_config, many.fresh, many.check

        results = [
            measure("lftp mget -P 8", ["lftp", "-c", f"{lftp_open}; lcd {outdir}; mget -P 8 {rel}/*"],
                    repeat, before=fresh, after=check),
            measure("curl -Z --parallel-max 8", [
                "curl", "-sf", "-Z", "--parallel-max", "8", "--output-dir", str(outdir),
                "--remote-name-all", "-K", str(cfg)], repeat, before=fresh, after=check),
        ]
        if have_cli:
            results.append(measure("anyurl get --parallel 8 -d DIR",
                                   anyurl_cmd("get", "-q", "--parallel", "8", "-d", str(outdir), *urls),
                                   repeat, before=fresh, after=check))
        variants = [("anyurl library, 8 connections", ["--parallel", "8"])]
        if have_uvloop:
            variants.append(("anyurl library + uvloop, 8 connections", ["--parallel", "8", "--uvloop"]))
        for label, extra in [*variants,
                             ("anyurl library, 1 connection", ["--parallel", "1"]),
                             ("anyurl library, new connection per file (8)", ["--parallel", "8", "--no-reuse"])]:
            results.append(measure(label, python_cmd("-m", "bench.bench_ftp", "many", *extra, str(outdir), *urls),
                                   repeat, before=fresh, after=check))
        report(f"ftp: {count} files of 4 KiB from one directory", results, "lftp mget -P 8", (count, "files"))
    finally:
        big.unlink(missing_ok=True)
        shutil.rmtree(scratch, ignore_errors=True)


# -- the scripts the benchmark runs (python -m bench.bench_ftp ...) ----------------


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


async def _get(url: str, dest: str) -> None:
    from anyurl import Client

    async with Client() as client, client.open(url) as body:
        fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            async for chunk in body:
                _write_all(fd, chunk)
        finally:
            os.close(fd)


async def _many(outdir: str, urls: list[str], parallel: int, reuse: bool) -> None:
    from anyurl import Client, Limits
    from anyurl.handlers.ftp import FTPOptions

    sem = asyncio.Semaphore(parallel)
    async with Client(limits=Limits(per_host=parallel), ftp=FTPOptions(reuse=reuse)) as client:

        def save(name: str, data: bytes) -> None:
            fd = os.open(os.path.join(outdir, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                _write_all(fd, data)
            finally:
                os.close(fd)

        async def one(url: str) -> None:
            async with sem, client.open(url) as body:
                data = await body.read()
            save(url.rsplit("/", 1)[-1], data)  # as curl and lftp do: in the one thread

        await asyncio.gather(*(one(u) for u in urls))


def _ftplib(host: str, port: int, path: str, dest: str, block: int) -> None:
    ftp = ftplib.FTP()
    ftp.connect(host, port)
    ftp.login()
    with open(dest, "wb") as f:
        ftp.retrbinary(f"RETR {path}", f.write, blocksize=block)
    ftp.quit()


def _run(coro: Any, use_uvloop: bool) -> None:
    if use_uvloop:
        import uvloop

        uvloop.run(coro)
    else:
        asyncio.run(coro)


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.bench_ftp")
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("get", help="download one URL to FILE with anyurl's library")
    g.add_argument("--uvloop", action="store_true")
    g.add_argument("url")
    g.add_argument("file")
    m = sub.add_parser("many", help="download URLs into DIR, N at a time, with one Client")
    m.add_argument("--parallel", type=int, default=8)
    m.add_argument("--no-reuse", action="store_true")
    m.add_argument("--uvloop", action="store_true")
    m.add_argument("dir")
    m.add_argument("urls", nargs="+")
    f = sub.add_parser("ftplib", help="RETR with Python's ftplib")
    f.add_argument("host")
    f.add_argument("port", type=int)
    f.add_argument("path")
    f.add_argument("file")
    f.add_argument("block", type=int)
    r = sub.add_parser("run", help="run the benchmark (as bench.run does)")
    r.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    if args.cmd == "run":
        from bench.run import run_with_servers

        run_with_servers(run, args.quick)
    elif args.cmd == "get":
        _run(_get(args.url, args.file), args.uvloop)
    elif args.cmd == "ftplib":
        _ftplib(args.host, args.port, args.path, args.file, args.block)
    else:
        _run(_many(args.dir, args.urls, args.parallel, not args.no_reuse), args.uvloop)


if __name__ == "__main__":
    main(sys.argv[1:])

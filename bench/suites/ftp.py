"""ftp benchmark: anyurl vs curl, lftp, Python's ftplib and aioftp against a local vsftpd.

    bench/.venv/bin/python -m bench.run ftp [--quick]
    bench/.venv/bin/python -m bench.suites.ftp run [--quick]      (the same, standalone)

Groups (interleaved rounds, see bench/harness.py):
  * one large file (1 GiB; 128 MiB with --quick) RETR to a file on disk,
  * the same file to /dev/null,
  * 1,000 files of 4 KiB (200 with --quick) from one directory, 8 connections,
    plus anyurl over one connection and with a new connection per file; once with
    the output on tmpfs and once on disk, each with the filesystem anchor.

anyurl runs as its CLI (``anyurl get``) and as a small library script (this
module's ``get``/``many`` commands) so the library's data path can be told apart
from the CLI's start-up. ftplib reads 256 KiB blocks (with 1 MiB blocks every
recv allocates and shrinks a 1 MiB buffer, which makes it several times slower
and a broken anchor). aioftp (a dependency anyurl does not use for its client)
runs the same work through its own Client: one download stream for the big
file, and for the small files a pool of 8 clients, because one aioftp Client
cannot run two transfers at once. Its rows show why anyurl has its own client.
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

from bench.harness import Case, ManyFiles, anyurl_cmd, check_size, compare, outputs, python_cmd, wanted

MIB = 1 << 20
BLOCK = 256 << 10  # ftplib's and aioftp's read size


def run(launcher: object, quick: bool) -> None:
    """Start vsftpd through *launcher*, seed the files and print the three groups."""
    from fixtures.servers import vsftpd

    ep = launcher.get("vsftpd")  # type: ignore[attr-defined]
    mib = 128 if quick else 1024
    count = 200 if quick else 1000
    size = mib * MIB
    big_titles = [f"ftp: one {mib} MiB file from vsftpd to disk", f"ftp: one {mib} MiB file from vsftpd to /dev/null"]
    big = (vsftpd.ensure_big(ep.info, size, "bench-big.bin") if any(map(wanted, big_titles))
           else Path(ep.info["anon_root"]) / "pub" / "bench-big.bin")
    many_dir = vsftpd.ensure_many(ep.info, count, 4096, f"bench{count}")
    host, port = ep.host, ep.port
    url = f"ftp://{host}:{port}/pub/bench-big.bin"
    have_uvloop = importlib.util.find_spec("uvloop") is not None
    scratch = Path(tempfile.mkdtemp(prefix="anyurl-bench-ftp-"))
    out = scratch / "out.bin"
    lftp_open = f"set cmd:interactive no; set xfer:clobber on; open -p {port} {host}"
    me = ("-m", "bench.suites.ftp")
    try:
        def clean() -> None:
            out.unlink(missing_ok=True)

        def verify() -> None:
            check_size(out, size)
            out.unlink()

        cases = [
            Case("curl -o FILE", ["curl", "-sf", "-o", str(out), url], clean, verify),
            Case("lftp get", ["lftp", "-c", f"{lftp_open}; get /pub/bench-big.bin -o {out}"], clean, verify),
            Case("ftplib retrbinary 256 KiB blocks",
                 python_cmd(*me, "ftplib", host, str(port), "/pub/bench-big.bin", str(out)), clean, verify),
            Case("aioftp download_stream 256 KiB blocks",
                 python_cmd(*me, "aioftp", host, str(port), "/pub/bench-big.bin", str(out)), clean, verify),
            Case("anyurl get -o FILE", anyurl_cmd("get", "-q", url, "-o", str(out)), clean, verify),
            Case("anyurl library (Client.open)", python_cmd(*me, "get", url, str(out)), clean, verify),
        ]
        if have_uvloop:
            cases.append(Case("anyurl library + uvloop", python_cmd(*me, "get", "--uvloop", url, str(out)),
                              clean, verify))
        compare(big_titles[0], cases, "curl -o FILE", unit_work=(mib, "MiB"))

        cases = [
            Case("curl -o /dev/null", ["curl", "-sf", "-o", "/dev/null", url]),
            Case("ftplib retrbinary 256 KiB blocks",
                 python_cmd(*me, "ftplib", host, str(port), "/pub/bench-big.bin", "/dev/null")),
            Case("aioftp download_stream 256 KiB blocks",
                 python_cmd(*me, "aioftp", host, str(port), "/pub/bench-big.bin", "/dev/null")),
            Case("anyurl get -o - >/dev/null", anyurl_cmd("get", "-q", url, "-o", "-")),
            Case("anyurl library (Client.open)", python_cmd(*me, "get", url, "/dev/null")),
        ]
        if have_uvloop:
            cases.append(Case("anyurl library + uvloop", python_cmd(*me, "get", "--uvloop", url, "/dev/null")))
        compare(big_titles[1], cases, "curl -o /dev/null",
                unit_work=(mib, "MiB"))

        names = sorted(p.name for p in many_dir.iterdir())
        rel = f"/pub/{many_dir.name}"
        urls = [f"ftp://{host}:{port}{rel}/{n}" for n in names]
        for output in outputs():
            title = f"ftp: {count} files of 4 KiB from one directory, output on {output.label}"
            if not wanted(title):
                continue
            many = ManyFiles.prepare(output, "ftp", urls, 4096)
            outdir, cfg, fresh, check = many.outdir, many.curl_config, many.fresh, many.check
            cases = [
                Case("lftp mget -P 8", ["lftp", "-c", f"{lftp_open}; lcd {outdir}; mget -P 8 {rel}/*"],
                     fresh, check),
                Case("curl -Z --parallel-max 8", [
                    "curl", "-sf", "-Z", "--parallel-max", "8", "--output-dir", str(outdir),
                    "--remote-name-all", "-K", str(cfg)], fresh, check),
                Case("aioftp, 8 clients", python_cmd(*me, "aioftp-many", host, str(port), "8", str(outdir),
                                                     *[f"{rel}/{n}" for n in names]), fresh, check),
                Case("anyurl get --parallel 8 -d DIR",
                     anyurl_cmd("get", "-q", "--parallel", "8", "-d", str(outdir), *urls), fresh, check),
            ]
            variants = [("anyurl library, 8 connections", ["--parallel", "8"])]
            if have_uvloop:
                variants.append(("anyurl library + uvloop, 8 connections", ["--parallel", "8", "--uvloop"]))
            for label, extra in [*variants,
                                 ("anyurl library, 1 connection", ["--parallel", "1"]),
                                 ("anyurl library, new connection per file (8)",
                                  ["--parallel", "8", "--no-reuse"])]:
                cases.append(Case(label, python_cmd(*me, "many", *extra, str(outdir), *urls), fresh, check))
            cases.append(many.anchor())
            compare(title, cases, "lftp mget -P 8", unit_work=(count, "files"), note=many.note())
    finally:
        big.unlink(missing_ok=True)
        shutil.rmtree(scratch, ignore_errors=True)


# -- the scripts the benchmark runs (python -m bench.suites.ftp ...) ----------------


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


def _ftplib(host: str, port: int, path: str, dest: str) -> None:
    ftp = ftplib.FTP()
    ftp.connect(host, port)
    ftp.login()
    with open(dest, "wb") as f:
        ftp.retrbinary(f"RETR {path}", f.write, blocksize=BLOCK)
    ftp.quit()


async def _aioftp_get(host: str, port: int, path: str, dest: str) -> None:
    import aioftp

    fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        async with aioftp.Client.context(host, port) as client, client.download_stream(path) as stream:
            async for block in stream.iter_by_block(BLOCK):
                _write_all(fd, block)
    finally:
        os.close(fd)


async def _aioftp_many(host: str, port: int, clients: int, outdir: str, paths: list[str]) -> None:
    """*clients* aioftp Clients taking paths from one queue (one Client runs one transfer at a time)."""
    import aioftp

    queue = list(reversed(paths))

    async def worker() -> None:
        async with aioftp.Client.context(host, port) as client:
            while queue:
                path = queue.pop()
                chunks = []
                async with client.download_stream(path) as stream:
                    async for block in stream.iter_by_block(BLOCK):
                        chunks.append(block)
                fd = os.open(os.path.join(outdir, path.rsplit("/", 1)[-1]),
                             os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                try:
                    _write_all(fd, b"".join(chunks))
                finally:
                    os.close(fd)

    async with asyncio.TaskGroup() as tg:
        for _ in range(clients):
            tg.create_task(worker())


def _run(coro: Any, use_uvloop: bool) -> None:
    if use_uvloop:
        import uvloop

        uvloop.run(coro)
    else:
        asyncio.run(coro)


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.suites.ftp")
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
    a = sub.add_parser("aioftp", help="RETR with aioftp's Client (one download stream)")
    a.add_argument("host")
    a.add_argument("port", type=int)
    a.add_argument("path")
    a.add_argument("file")
    am = sub.add_parser("aioftp-many", help="download paths into DIR with N aioftp Clients")
    am.add_argument("host")
    am.add_argument("port", type=int)
    am.add_argument("clients", type=int)
    am.add_argument("dir")
    am.add_argument("paths", nargs="+")
    r = sub.add_parser("run", help="run the benchmark (as bench.run does)")
    r.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    if args.cmd == "run":
        from bench.run import run_with_servers

        run_with_servers(run, args.quick)
    elif args.cmd == "get":
        _run(_get(args.url, args.file), args.uvloop)
    elif args.cmd == "ftplib":
        _ftplib(args.host, args.port, args.path, args.file)
    elif args.cmd == "aioftp":
        asyncio.run(_aioftp_get(args.host, args.port, args.path, args.file))
    elif args.cmd == "aioftp-many":
        asyncio.run(_aioftp_many(args.host, args.port, args.clients, args.dir, args.paths))
    else:
        _run(_many(args.dir, args.urls, args.parallel, not args.no_reuse), args.uvloop)


if __name__ == "__main__":
    main(sys.argv[1:])

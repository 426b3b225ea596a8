"""http benchmark: anyurl vs curl vs raw aiohttp against a local nginx.

    bench/.venv/bin/python -m bench.run http [--quick]
    bench/.venv/bin/python -m bench.suites.http run [--quick]      (the same, standalone)

Groups (interleaved rounds, see bench/harness.py):
  * one large file (1 GiB; 128 MiB with --quick) to a file on disk,
  * the same file to /dev/null (network and parsing cost only),
  * 1,000 small files (4 KiB each) at concurrency 32 into a directory, once with the
    directory on tmpfs and once on disk, each with the filesystem anchor (bench/harness.py)
    the asyncio ceiling (bench/reference/http_asyncio.py: uvloop, httptools, keep-alive, nothing else)
    and the ceiling for any Python process (bench/reference/http_sync.py: epoll, no asyncio, python -S),
  * 10,000 small files (4 KiB, served uncompressed) at concurrency 32 into a directory on
    tmpfs, start-up paid once (issue 24's loopback goal): curl -Z as the anchor, the asyncio
    ceiling and the CLI, each also run on the first 1,000 of the URLs in the same rounds, so
    that per-request CPU = (CPU of 10,000 - CPU of 1,000) / 9,000 per round (start-up cancelled
    out) and the CLI's ratio to the ceiling come from the same run (``per_request``),
  * 128 concurrent transfers of a 16 MiB file to /dev/null: peak RSS.

anyurl runs as its CLI (``anyurl get``) and as a small library script (this
module's ``get``/``many``/``stream`` commands: one Client, ``Client.open``
streamed to a file) so the library's data path can be told apart from the
CLI's start-up and settings. The library rows run twice in the /dev/null,
small-files and streams groups: on the lean HTTP/1.1 path (the default) and
through aiohttp (``--aiohttp``: ``HTTPOptions(lean=False)``, what every request
used before the lean path).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from bench.harness import (
    Case,
    ManyFiles,
    anyurl_cmd,
    check_size,
    compare,
    cpu_slopes,
    load1,
    outputs,
    python_cmd,
    record,
    wanted,
)

MIB = 1 << 20
# The fastest client any Python process can be, asyncio or not (bench/reference/http_sync.py).
SYNC = "raw Python, no asyncio (any-Python ceiling)"
SYNC_SCRIPT = Path(__file__).resolve().parents[1] / "reference" / "http_sync.py"
STREAMS, STREAM_MIB = 128, 16
# the start-up-paid-once row: LOTS files, and the FEW of them whose run is subtracted
LOTS, FEW = 10_000, 1_000
LOTS_DIR = "many10k"
CEILING = "raw asyncio+httptools keep-alive (ceiling)"
CLI = "anyurl get --parallel 32 -d DIR"


def seed_lots(www: Path, count: int = LOTS, size: int = 4096) -> list[str]:
    """*count* files of *size* bytes under www/many10k/ (kept when already there); their paths.
    Named .bin: this nginx gzips only text, so every client fetches the same 4 KiB."""
    d = www / LOTS_DIR
    d.mkdir(exist_ok=True)
    d.chmod(0o755)
    paths = []
    for i in range(count):
        f = d / f"f{i:05d}.bin"
        if not f.exists() or f.stat().st_size != size:
            f.write_bytes(bytes([65 + i % 26]) * size)
            f.chmod(0o644)
        paths.append(f"/{LOTS_DIR}/{f.name}")
    return paths


def per_request(group: dict[str, object], pairs: list[tuple[str, str]], n_lots: int, n_few: int,
                ceiling: str, cli: str) -> dict[str, object]:
    """Per-request CPU (µs) of each (LOTS case, FEW case) pair of one compare() group: per round,
    (CPU of the LOTS run - CPU of the FEW run) / (n_lots - n_few), so start-up cancels out;
    medians and min-max over the rounds, and the CLI's per-round ratio to the ceiling."""
    per = cpu_slopes(group, pairs, n_lots, n_few)
    ratios = [c / r if r > 0 else float("inf") for c, r in zip(per[cli], per[ceiling], strict=True)]
    title = f"{group['title']}: per-request CPU"
    lines = [f"\n== {title}",
             f"   (CPU of {n_lots} - CPU of {n_few}) / {n_lots - n_few} per round, user+sys, µs;"
             f" load average {load1():.2f}"]
    md = [f"\n### {title}\n", f"(CPU of {n_lots} - CPU of {n_few}) / {n_lots - n_few} per round (user+sys);"
          f" {cli} / ceiling per round\n", "| command | µs/request median | min-max |", "|---|---:|---:|"]
    for name, vals in per.items():
        lines.append(f"   {name:<44} {statistics.median(vals):8.1f} {min(vals):8.1f}-{max(vals):.1f}")
        md.append(f"| {name} | {statistics.median(vals):.1f} | {min(vals):.1f}-{max(vals):.1f} |")
    lines.append(f"   {'CLI / ceiling (per round)':<44} {statistics.median(ratios):8.2f} "
                 f"{min(ratios):8.2f}-{max(ratios):.2f}")
    md.append(f"| CLI / ceiling | {statistics.median(ratios):.2f}x | {min(ratios):.2f}-{max(ratios):.2f} |")
    print("\n".join(lines), flush=True)
    out: dict[str, object] = {"n": [n_lots, n_few], "per_request_us": per, "cli_over_ceiling": ratios}
    record(title, md, out)
    return out


def make_big(path: Path, mib: int) -> None:
    """*mib* MiB of incompressible data, every MiB different."""
    block = os.urandom(MIB)
    with open(path, "wb") as f:
        for i in range(mib):
            f.write(i.to_bytes(4, "big") + block[4:])
    path.chmod(0o644)


def run(launcher: object, quick: bool) -> None:
    """Start nginx through *launcher*, create the files and print the four groups."""
    ep = launcher.get("nginx")  # type: ignore[attr-defined]
    www = Path(ep.info["www"])
    mib = 128 if quick else 1024
    big = www / "bench-big.bin"
    mid = www / "bench-16m.bin"
    size = mib * MIB
    url = f"http://{ep.host}:{ep.port}/bench-big.bin"
    scratch = Path(tempfile.mkdtemp(prefix="anyurl-bench-http-"))
    out = scratch / "out.bin"
    try:
        def clean() -> None:
            out.unlink(missing_ok=True)

        def verify() -> None:
            check_size(out, size)
            out.unlink()

        if wanted(f"http: one {mib} MiB file from nginx to disk") or wanted(
                f"http: one {mib} MiB file from nginx to /dev/null"):
            make_big(big, mib)
        compare(f"http: one {mib} MiB file from nginx to disk", [
            Case("curl -o FILE", ["curl", "-sf", "-o", str(out), url], clean, verify),
            Case("raw aiohttp (iter_chunked 1 MiB)",
                 python_cmd("-m", "bench.reference.http_aiohttp", url, str(out)), clean, verify),
            Case("anyurl get -o FILE", anyurl_cmd("get", "-q", url, "-o", str(out)), clean, verify),
            Case("anyurl library (Client.open)",
                 python_cmd("-m", "bench.suites.http", "get", url, str(out)), clean, verify),
        ], "curl -o FILE", unit_work=(mib, "MiB"))

        compare(f"http: one {mib} MiB file from nginx to /dev/null", [
            Case("curl -o /dev/null", ["curl", "-sf", "-o", "/dev/null", url]),
            Case("raw aiohttp (iter_chunked 1 MiB)", python_cmd("-m", "bench.reference.http_aiohttp", url, "/dev/null")),
            Case("anyurl get -o - >/dev/null", anyurl_cmd("get", "-q", url, "-o", "-")),
            Case("anyurl library (Client.open)", python_cmd("-m", "bench.suites.http", "get", url, "/dev/null")),
            Case("anyurl library, aiohttp path",
                 python_cmd("-m", "bench.suites.http", "get", "--aiohttp", url, "/dev/null")),
        ], "curl -o /dev/null", unit_work=(mib, "MiB"))
        big.unlink(missing_ok=True)

        n = 1000
        urls = [f"http://{ep.host}:{ep.port}/many/f{i:04d}.txt" for i in range(n)]
        for output in outputs():
            title = f"http: {n} files of 4 KiB at concurrency 32, output on {output.label}"
            if not wanted(title):
                continue
            many = ManyFiles.prepare(output, "http", urls, 4096)
            outdir, cfg, fresh, count = many.outdir, many.curl_config, many.fresh, many.check
            compare(title, [
                Case("curl -Z --parallel-max 32", [
                    "curl", "-sf", "-Z", "--parallel-max", "32", "--output-dir", str(outdir),
                    "--remote-name-all", "-K", str(cfg)], fresh, count),
                # anyurl asks for gzip and this nginx compresses text: curl doing the same work
                Case("curl -Z --compressed (gzip, as anyurl asks)", [
                    "curl", "-sf", "-Z", "--compressed", "--parallel-max", "32", "--output-dir", str(outdir),
                    "--remote-name-all", "-K", str(cfg)], fresh, count),
                Case("raw aiohttp, 32 at a time",
                     python_cmd("-m", "bench.reference.http_aiohttp", "--parallel", "32", "-d", str(outdir), *urls),
                     fresh, count),
                # the yardstick: what an asyncio process can do at best (uvloop, httptools, nothing else)
                Case("raw asyncio+httptools keep-alive (ceiling)",
                     python_cmd("-m", "bench.reference.http_asyncio", "--parallel", "32", "-d", str(outdir), *urls),
                     fresh, count),
                # no asyncio at all: epoll, non-blocking sockets, python -S (ceiling for any Python process)
                Case(SYNC, python_cmd("-S", str(SYNC_SCRIPT), "--parallel", "32", "-d", str(outdir), *urls),
                     fresh, count),
                Case("raw asyncio+httptools keep-alive (ceiling), gzip as anyurl asks",
                     python_cmd("-m", "bench.reference.http_asyncio", "--gzip", "--parallel", "32", "-d", str(outdir),
                                *urls), fresh, count),
                Case("anyurl get --parallel 32 -d DIR",
                     anyurl_cmd("get", "-q", "--parallel", "32", "-d", str(outdir), *urls), fresh, count),
                Case("anyurl library, 32 at a time",
                     python_cmd("-m", "bench.suites.http", "many", "--parallel", "32", str(outdir), *urls),
                     fresh, count),
                Case("anyurl library, 32 at a time, on uvloop",
                     python_cmd("-m", "bench.suites.http", "many", "--uvloop", "--parallel", "32", str(outdir), *urls),
                     fresh, count),
                Case("anyurl library, 32 at a time, aiohttp path",
                     python_cmd("-m", "bench.suites.http", "many", "--aiohttp", "--parallel", "32", str(outdir),
                                *urls), fresh, count),
                many.anchor(),
            ], "curl -Z --parallel-max 32", unit_work=(n, "files"), note=many.note())

        lots_title = f"http: {LOTS} files of 4 KiB at concurrency 32, start-up paid once, output on tmpfs"
        if wanted(lots_title):
            many_lots(ep, www, lots_title)

        streams_title = f"http: {STREAMS} concurrent transfers of {STREAM_MIB} MiB to /dev/null (peak RSS)"
        if wanted(streams_title):
            make_big(mid, STREAM_MIB)
        murls = [f"http://{ep.host}:{ep.port}/{mid.name}?n={i}" for i in range(STREAMS)]
        mcfg = scratch / "curl-null.cfg"
        mcfg.write_text("".join(f'url = "{u}"\noutput = "/dev/null"\n' for u in murls))
        compare(streams_title, [
            Case(f"curl -Z --parallel-max {STREAMS}",
                 ["curl", "-sf", "-Z", "--parallel-max", str(STREAMS), "-K", str(mcfg)]),
            Case(f"raw aiohttp, {STREAMS} at a time",
                 python_cmd("-m", "bench.reference.http_aiohttp", "--parallel", str(STREAMS), "--null", *murls)),
            Case(f"anyurl library, {STREAMS} streams",
                 python_cmd("-m", "bench.suites.http", "stream", "--parallel", str(STREAMS), *murls)),
            Case(f"anyurl library, {STREAMS} streams, aiohttp path",
                 python_cmd("-m", "bench.suites.http", "stream", "--aiohttp", "--parallel", str(STREAMS), *murls)),
        ], f"curl -Z --parallel-max {STREAMS}", unit_work=(STREAMS * STREAM_MIB, "MiB"))
    finally:
        big.unlink(missing_ok=True)
        mid.unlink(missing_ok=True)
        shutil.rmtree(scratch, ignore_errors=True)


def many_lots(ep: object, www: Path, title: str) -> None:
    """The 10,000-file row (issue 24: CLI >= 1.0x curl -Z; per-request CPU within 1.3x of the
    ceiling): each client on all LOTS URLs and on the first FEW, interleaved in the same rounds."""
    base = f"http://{ep.host}:{ep.port}"  # type: ignore[attr-defined]
    urls = [base + p for p in seed_lots(www)]
    tmpfs = next(o for o in outputs() if o.label == "tmpfs")
    lots = ManyFiles.prepare(tmpfs, "http-lots", urls, 4096)
    few = ManyFiles.prepare(tmpfs, "http-few", urls[:FEW], 4096)
    cases: list[Case] = []
    for m, tag in ((lots, ""), (few, f" [{FEW}]")):
        out = str(m.outdir)
        listing = m.outdir.parent / "urls.txt"  # the CLI reads the list as a user's 10,000 would be given
        listing.write_text("".join(u + "\n" for u in urls[:m.count]))
        cases += [
            Case("curl -Z --parallel-max 32" + tag, [
                "curl", "-sf", "-Z", "--parallel-max", "32", "--output-dir", out,
                "--remote-name-all", "-K", str(m.curl_config)], m.fresh, m.check),
            Case(CEILING + tag, python_cmd("-m", "bench.reference.http_asyncio", "--parallel", "32", "-d", out,
                                           *urls[:m.count]), m.fresh, m.check),
            Case(CLI + tag, anyurl_cmd("get", "-q", "--parallel", "32", "-d", out, "-i", str(listing)),
                 m.fresh, m.check),
        ]
    cases.append(lots.anchor())
    group = compare(title, cases, "curl -Z --parallel-max 32", unit_work=(LOTS, "files"),
                    note=lots.note() + f"; rows marked [{FEW}] fetch the first {FEW} URLs only (for the slope)")
    if group:
        per_request(group, [(n, n + f" [{FEW}]") for n in ("curl -Z --parallel-max 32", CEILING, CLI)],
                    LOTS, FEW, CEILING, CLI)


# -- the library script the benchmark runs (python -m bench.suites.http ...) --------


def _options(aiohttp: bool) -> dict[str, object]:
    """Client keywords: the aiohttp path when asked (``--aiohttp``), else the default."""
    if not aiohttp:
        return {}
    from anyurl.handlers.http import HTTPOptions

    return {"http": HTTPOptions(lean=False)}


async def _get(url: str, dest: str, aiohttp: bool = False) -> None:
    from anyurl import Client

    async with Client(**_options(aiohttp)) as client, client.open(url) as body:  # type: ignore[arg-type]
        fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            async for chunk in body:
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd, view):]
        finally:
            os.close(fd)


async def _many(outdir: str, urls: list[str], parallel: int, aiohttp: bool = False) -> None:
    from anyurl import Client, Limits

    sem = asyncio.Semaphore(parallel)
    async with Client(limits=Limits(per_host=parallel), **_options(aiohttp)) as client:  # type: ignore[arg-type]

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


async def _stream(urls: list[str], parallel: int, size: int, aiohttp: bool = False) -> None:
    """Stream every URL to /dev/null, *parallel* at a time; each must deliver *size* bytes."""
    from anyurl import Client, Limits

    sem = asyncio.Semaphore(parallel)
    fd = os.open(os.devnull, os.O_WRONLY)
    async with Client(limits=Limits(per_host=parallel), **_options(aiohttp)) as client:  # type: ignore[arg-type]

        async def one(url: str) -> None:
            got = 0
            async with sem, client.open(url) as body:
                async for chunk in body:
                    got += os.write(fd, chunk)
            if got != size:
                raise RuntimeError(f"{url}: {got} bytes, expected {size}")

        await asyncio.gather(*(one(u) for u in urls))
    os.close(fd)


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.suites.http")
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("get", help="download one URL to FILE with anyurl's library")
    g.add_argument("--aiohttp", action="store_true", help="through aiohttp (HTTPOptions(lean=False))")
    g.add_argument("url")
    g.add_argument("file")
    m = sub.add_parser("many", help="download URLs into DIR, N at a time, with one Client")
    m.add_argument("--parallel", type=int, default=32)
    m.add_argument("--aiohttp", action="store_true")
    m.add_argument("--uvloop", action="store_true", help="run on uvloop's loop (as the CLI does)")
    m.add_argument("dir")
    m.add_argument("urls", nargs="+")
    st = sub.add_parser("stream", help="stream URLs to /dev/null, N at a time, with one Client")
    st.add_argument("--parallel", type=int, default=STREAMS)
    st.add_argument("--aiohttp", action="store_true")
    st.add_argument("--size", type=int, default=STREAM_MIB * MIB)
    st.add_argument("urls", nargs="+")
    r = sub.add_parser("run", help="run the benchmark (as bench.run does)")
    r.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    if args.cmd == "run":
        from bench.run import run_with_servers

        run_with_servers(run, args.quick)
    elif args.cmd == "get":
        asyncio.run(_get(args.url, args.file, args.aiohttp))
    elif args.cmd == "stream":
        asyncio.run(_stream(args.urls, args.parallel, args.size, args.aiohttp))
    elif args.uvloop:
        import uvloop

        uvloop.run(_many(args.dir, args.urls, args.parallel, args.aiohttp))
    else:
        asyncio.run(_many(args.dir, args.urls, args.parallel, args.aiohttp))


if __name__ == "__main__":
    main(sys.argv[1:])

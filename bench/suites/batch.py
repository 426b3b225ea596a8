"""The batch group: the library's batch engine (anyurl.batch) against ``anyurl get`` on the
same work, so that a program gets the CLI's scheduling (issue 30: within 5% of the CLI).

    bench/.venv/bin/python -m bench.run batch [--quick] [--rounds N] [--only "loopback"]

Rows, in interleaved rounds:

* the WAN rows of bench/suites/wan.py at 50 ms (bench/relay.py): HTTP 200 x 4 KiB (nginx),
  FTP 100 x 4 KiB (vsftpd), NNTP 200 articles (INN), each with 8 connections per host and 1;
* the 10,000-file loopback row of bench/suites/http.py (4 KiB files from nginx, 32 at once,
  the URLs read from a list file) on tmpfs.

The library side is this module's ``lib`` command, a program as a user would write it: one
Client given get's limits (``Limits(per_host=N, per_host_requests=stream_workers(N))``) and
``Batch(client, urls, Directory(DIR), parallel=N).run()``, with the URLs read lazily from the
arguments or the list; it runs on the loop the CLI picks (uvloop when installed). The CLI also
starts its first connections while it imports (cli/early.py); a program cannot.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bench.harness import Case

WAN_RTT = 50
SIZE = 4096


def _lib_cmd(parallel: str, outdir: str, *urls: str) -> list[str]:
    from bench.harness import python_cmd

    return python_cmd("-m", "bench.suites.batch", "lib", parallel, outdir, *urls)


def _lib_cases(name: str, argv: list[str], before: Callable[[], None], after: Callable[[], None]) -> list[Case]:
    """The library case, and its copy run from each ``--tree`` (beside the CLI's copies)."""
    from bench.harness import TREES, Case, tree_env

    return [Case(name, argv, before, after),
            *(Case(f"{name} [{tree.name or tree}]", argv, before, after, tree_env(tree)) for tree in TREES)]


def _wan(launcher: object, quick: bool) -> None:
    from fixtures.launcher import free_ports
    from fixtures.servers import vsftpd

    from bench.harness import Case, ManyFiles, Relay, anyurl_cmd, outputs, wanted
    from bench.suites.news import _setup
    from bench.suites.wan import FTP_N, HTTP_N, NEWS_N, title

    titles = {(w, c): "batch: " + title(w, WAN_RTT, c) for w in ("HTTP", "FTP", "NNTP") for c in (8, 1)}
    if not any(wanted(t) for t in titles.values()):
        return
    nginx = launcher.get("nginx")  # type: ignore[attr-defined]
    ftp = launcher.get("vsftpd_wan")  # type: ignore[attr-defined]
    news_host, news_port, group, mean = _setup(launcher, NEWS_N)
    many_dir = vsftpd.ensure_many(ftp.info, FTP_N, SIZE, "wan")
    wan = ftp.info["wan_host"]
    lo, hi = ftp.info["pasv"]
    http_p, nntp_p = free_ports(2)
    specs = [f"127.0.0.1:{http_p}=127.0.0.1:{nginx.port}", f"127.0.0.1:{nntp_p}={news_host}:{news_port}",
             f"{wan}:{ftp.port}=127.0.0.1:{ftp.port}", f"{wan}:{lo}-{hi}=127.0.0.1:{lo}"]
    urls = {
        "HTTP": [f"http://127.0.0.1:{http_p}/many/f{i:04d}.txt" for i in range(HTTP_N)],
        "FTP": [f"ftp://{wan}:{ftp.port}/pub/{many_dir.name}/{p.name}" for p in sorted(many_dir.iterdir())],
        "NNTP": [f"nntp://127.0.0.1:{nntp_p}/{group}/{i}" for i in range(1, NEWS_N + 1)],
    }
    out = next((o for o in outputs() if o.label == "tmpfs"), outputs()[0])
    relay = Relay(WAN_RTT, specs)
    try:
        for conns in (8, 1):
            p = str(conns)
            for work in ("HTTP", "FTP", "NNTP"):
                name = titles[(work, conns)]
                if not wanted(name):
                    continue
                if work == "NNTP":
                    m = ManyFiles.prepare(out, "batch-news", urls[work], mean, exact=False)
                else:
                    m = ManyFiles.prepare(out, f"batch-{work.lower()}", urls[work], SIZE)
                relay.compare(name, [
                    Case(f"anyurl get --parallel {p}",
                         anyurl_cmd("get", "-q", "--parallel", p, "-d", str(m.outdir), *urls[work]), m.fresh, m.check),
                    *_lib_cases(f"library Batch(parallel={p})", _lib_cmd(p, str(m.outdir), *urls[work]),
                                m.fresh, m.check),
                ])
    finally:
        relay.stop()


def _loopback(launcher: object, quick: bool) -> None:
    from pathlib import Path

    from bench.harness import Case, ManyFiles, anyurl_cmd, compare, outputs, wanted
    from bench.suites.http import LOTS, seed_lots

    name = f"batch: loopback HTTP {LOTS:,} x 4 KiB (nginx), 32 at once, into tmpfs"
    if not wanted(name):
        return
    ep = launcher.get("nginx")  # type: ignore[attr-defined]
    urls = [f"http://{ep.host}:{ep.port}{p}" for p in seed_lots(Path(ep.info["www"]))]
    tmpfs = next(o for o in outputs() if o.label == "tmpfs")
    m = ManyFiles.prepare(tmpfs, "batch-lots", urls, SIZE)
    listing = m.outdir.parent / "urls.txt"
    listing.write_text("".join(u + "\n" for u in urls))
    compare(name, [
        Case("anyurl get --parallel 32 -i LIST", anyurl_cmd("get", "-q", "--parallel", "32", "-d", str(m.outdir),
                                                             "-i", str(listing)), m.fresh, m.check),
        *_lib_cases("library Batch(parallel=32), the list read lazily",
                    _lib_cmd("32", str(m.outdir), "-i", str(listing)), m.fresh, m.check),
    ], "anyurl get --parallel 32 -i LIST", unit_work=(LOTS, "files"), note=m.note())


def run(launcher: object, quick: bool) -> None:
    t0 = time.monotonic()
    _wan(launcher, quick)
    _loopback(launcher, quick)
    print(f"   (batch group: {time.monotonic() - t0:.0f} s)", flush=True)


# -- the program the library rows run (python -m bench.suites.batch lib N DIR URL... | -i LIST) --


def _urls(args: list[str]) -> Iterator[str]:
    if args[:1] == ["-i"]:
        with open(args[1]) as f:  # read as the workers take them
            for line in f:
                line = line.strip()
                if line and not line.startswith("#"):
                    yield line
    else:
        yield from args


async def _lib(parallel: int, outdir: str, args: list[str]) -> int:
    from anyurl import Client, Limits
    from anyurl.batch import Batch, Directory, stream_workers

    limits = Limits(per_host=parallel, per_host_requests=max(Limits().per_host_requests, stream_workers(parallel)))
    async with Client(limits=limits) as client:
        batch = Batch(client, _urls(args), Directory(outdir), parallel=parallel,
                      on_result=lambda r: None if r.ok else print(r.given, r.error, file=sys.stderr))
        await batch.run()
    return 1 if batch.failed else 0


def lib(argv: list[str]) -> int:
    import asyncio

    try:
        import uvloop
    except ImportError:
        factory = None
    else:
        factory = uvloop.new_event_loop
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(_lib(int(argv[0]), argv[1], argv[2:]))


def main(argv: list[str]) -> int:
    if argv[:1] == ["lib"]:
        return lib(argv[1:])
    from bench.run import run_with_servers

    run_with_servers(run, "--quick" in argv)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

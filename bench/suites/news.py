"""Fetch N articles of one group from INN: anyurl (one reused connection, and
in parallel) vs Python's nntplib, all on the same server in the same run.

``python -m bench.run news [--quick]``: 1,000 articles (200 with --quick),
injected into a fresh group at setup, at most 3 interleaved rounds. Every case writes each article to its
own file, so the work is the same (once on tmpfs, once on disk, each with the filesystem
anchor of bench/harness.py). Ratios > 1 mean faster than nntplib.

The client roles run as their own processes through this module:
``python -m bench.suites.news nntplib|anyurl|anyurl4 HOST PORT GROUP N DIR``;
``python -m bench.suites.news run [--quick]`` runs the whole benchmark.
"""

from __future__ import annotations

import asyncio
import sys
import time
import warnings
from pathlib import Path

from bench import harness
from bench.harness import Case, ManyFiles, anyurl_cmd, compare, outputs, python_cmd, wanted

BODY_LINES = 40  # about 2.5 KB per article, a typical text posting


def _setup(launcher: object, n: int) -> tuple[str, int, str, int]:
    """Inject *n* articles into a new group: (host, port, group, mean article size)."""
    from fixtures.servers import inn

    ep = launcher.get("inn")  # type: ignore[attr-defined]
    group = f"{ep.info['prefix']}.bench{n}"
    inn.new_group(group)
    tag = f"{ep.info['tag']}b{n}"
    body = "".join(f"benchmark line {i:03d} " + "lorem ipsum dolor sit amet " * 2 + "\n"
                   for i in range(BODY_LINES))
    arts = [inn.article(group, f"<bench{i}.{tag}@{inn.DOMAIN}>", f"Benchmark article {i}",
                        f".dot line in article {i}\n" + body) for i in range(1, n + 1)]
    t0 = time.perf_counter()
    for start in range(0, n, 1000):  # rnews batches of 1000
        inn.inject(arts[start:start + 1000], {group: min(n, start + 1000)}, timeout=300)
    print(f"   injected {n} articles into {group} in {time.perf_counter() - t0:.1f} s", flush=True)
    mean = sum(len(a) for a in arts) // n
    return ep.host, ep.port, group, mean


def run(launcher: object, quick: bool) -> None:
    n = 200 if quick else 1000
    # plain nntplib is latency-bound (about 45 ms per article against nnrpd, see docs/news.md):
    # at most 3 rounds keep the group near 2.5 minutes
    rounds = min(harness.ROUNDS, 3)
    host, port, group, mean = _setup(launcher, n)
    urls = [f"nntp://{host}:{port}/{group}/{i}" for i in range(1, n + 1)]
    role = python_cmd("-m", "bench.suites.news")
    for output in outputs():
        title = f"news: fetch {n} articles of one group from INN, output on {output.label}"
        if not wanted(title):
            continue
        # files are named by article number; sizes differ, so the check counts them
        many = ManyFiles.prepare(output, "news", urls, mean, exact=False)
        out, clean, check = many.outdir, many.fresh, many.check
        args = [host, str(port), group, str(n), str(out)]
        compare(title, [
            Case("nntplib (one connection)", role + ["nntplib", *args], clean, check),
            Case("nntplib + TCP_QUICKACK (patched)", role + ["nntplib-quickack", *args], clean, check),
            Case("anyurl API, sequential (reuse)", role + ["anyurl", *args], clean, check),
            Case("anyurl API, 4 concurrent", role + ["anyurl4", *args], clean, check),
            Case("anyurl get -d --parallel 1", anyurl_cmd("get", "-q", "--parallel", "1", "-d", str(out), *urls),
                 clean, check),
            Case("anyurl get -d --parallel 4", anyurl_cmd("get", "-q", "--parallel", "4", "-d", str(out), *urls),
                 clean, check),
            many.anchor(),
        ], "nntplib + TCP_QUICKACK (patched)", rounds=rounds, unit_work=(n, "articles"), note=many.note())


# -- the client roles ------------------------------------------------------------


def _nntplib(host: str, port: int, group: str, n: int, out: Path, quickack: bool = False) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import nntplib
    cls = nntplib.NNTP
    if quickack:
        import socket

        class QuickAck(nntplib.NNTP):
            """nntplib with anyurl's TCP_QUICKACK trick: ACK each reply at once."""

            def _getline(self, strip_crlf: bool = True) -> bytes:
                self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)
                line: bytes = super()._getline(strip_crlf)  # type: ignore[misc]
                return line

        cls = QuickAck
    with cls(host, port, readermode=False) as s:
        s.group(group)
        for i in range(1, n + 1):
            _, info = s.article(i)
            (out / str(i)).write_bytes(b"\r\n".join(info.lines) + b"\r\n")


async def _anyurl(host: str, port: int, group: str, n: int, out: Path, concurrency: int) -> None:
    import anyurl
    from anyurl.client import Limits

    async with anyurl.Client(limits=Limits(per_host=concurrency)) as client:
        sem = asyncio.Semaphore(concurrency)

        async def one(i: int) -> None:
            async with sem:
                r = await client.fetch(f"nntp://{host}:{port}/{group}/{i}")
            (out / str(i)).write_bytes(r.content)

        if concurrency == 1:
            for i in range(1, n + 1):
                await one(i)
        else:
            async with asyncio.TaskGroup() as tg:
                for i in range(1, n + 1):
                    tg.create_task(one(i))


def main(argv: list[str]) -> int:
    if argv[:1] == ["run"]:  # the same as ``python -m bench.run news [--quick]``
        from bench.run import run_with_servers

        run_with_servers(run, "--quick" in argv)
        return 0
    role, host, port, group, n, out = argv
    if role.startswith("nntplib"):
        _nntplib(host, int(port), group, int(n), Path(out), quickack=role == "nntplib-quickack")
    else:
        asyncio.run(_anyurl(host, int(port), group, int(n), Path(out), 4 if role == "anyurl4" else 1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

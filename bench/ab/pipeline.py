"""Plain-http small files, HTTP/1.1 pipelining on and off: the anyurl CLI, curl -Z and wget2, interleaved rounds.

    python bench/ab/pipeline.py [--rounds N] [--count N] [--parallel N] [--rtt MS]

One nginx (fixtures/launcher.py) serves COUNT files of 4 KiB (/many/), through
bench/relay.py when ``--rtt`` is above 0 (the WAN group's relay: the handshake
modelled, each direction delayed RTT/2). Every round runs each case once:
``anyurl get -q --parallel N -d DIR URL...`` (pipelining on, the default, and
``--pipeline 0``), ``curl -Z --parallel-max N`` and ``wget2 --max-threads N``.
Each run's output is checked (count and sizes); the figures are the medians,
minimum and maximum of the wall times.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from fixtures.launcher import Launcher  # noqa: E402

from bench.ab.common import download_rounds, print_rounds, relayed  # noqa: E402

SIZE = 4096


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--parallel", type=int, default=8)
    ap.add_argument("--rtt", type=float, default=50.0, help="round trip added by the relay, in ms (0: none)")
    args = ap.parse_args()
    launcher = Launcher()
    try:
        ep = launcher.get("nginx")
        with relayed(ep.port, args.rtt) as port:
            urls = [f"http://127.0.0.1:{port}/many/f{i:04d}.txt" for i in range(args.count)]
            p = str(args.parallel)
            anyurl = [sys.executable, "-m", "anyurl", "get", "-q", "--parallel", p]
            cases = {
                "anyurl (pipelined)": lambda out: [*anyurl, "-d", out, *urls],
                "anyurl --pipeline 0": lambda out: [*anyurl, "--pipeline", "0", "-d", out, *urls],
                "curl -Z": lambda out: ["curl", "-sS", "-Z", "--parallel-max", p, "--output-dir", out,
                                        *[x for u in urls for x in ("-o", u.rsplit("/", 1)[1], u)]],
                "wget2": lambda out: ["wget2", "-q", "--no-config", "--no-hsts", "--max-threads", p, "-P", out,
                                      *urls],
            }
            times = download_rounds(cases, args.rounds, args.count, SIZE)
        print_rounds(f"{args.count} x 4 KiB over http, --parallel {args.parallel}, RTT {args.rtt:g} ms, "
                     f"{args.rounds} interleaved rounds (s)", times)
    finally:
        launcher.stop_all()


if __name__ == "__main__":
    main()

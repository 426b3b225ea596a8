"""HTTPS small files, HTTP/2 against --http1.1: the anyurl CLI and curl -Z, interleaved rounds.

    python bench/ab/http2.py [--rounds N] [--count N] [--parallel N] [--rtt MS]

One nginx (fixtures/launcher.py; its https listener offers h2) serves COUNT files
of 4 KiB (/many/). Every round runs each case once: ``anyurl get -q --parallel N
-d DIR URL...`` with and without ``--http1.1``, and ``curl -Z --parallel-max N``
with ``--http2`` and ``--http1.1``. With ``--rtt MS`` the URLs go through
bench/relay.py (the WAN group's relay: the handshake modelled, each direction
delayed RTT/2). Each run's output is checked (count and sizes); the figures are
the medians, minimum and maximum of the wall times.
"""

from __future__ import annotations

import argparse
import os
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
    ap.add_argument("--rtt", type=float, default=0.0, help="round trip added by the relay, in ms (0: none)")
    args = ap.parse_args()
    launcher = Launcher()
    try:
        ep = launcher.get("nginx")
        with relayed(ep.info["tls_port"], args.rtt) as port:
            urls = [f"https://127.0.0.1:{port}/many/f{i:04d}.txt" for i in range(args.count)]
            env = {**os.environ, "SSL_CERT_FILE": ep.info["ca"]}
            anyurl = [sys.executable, "-m", "anyurl", "get", "-q", "--parallel", str(args.parallel)]

            def curl(flag: str, out: str) -> list[str]:
                return ["curl", "-sS", "-Z", "--parallel-max", str(args.parallel), flag, "--cacert", ep.info["ca"],
                        "--output-dir", out, *[x for u in urls for x in ("-o", u.rsplit("/", 1)[1], u)]]

            cases = {
                "anyurl (HTTP/2)": lambda out: [*anyurl, "-d", out, *urls],
                "anyurl --http1.1": lambda out: [*anyurl, "--http1.1", "-d", out, *urls],
                "curl -Z --http2": lambda out: curl("--http2", out),
                "curl -Z --http1.1": lambda out: curl("--http1.1", out),
            }
            times = download_rounds(cases, args.rounds, args.count, SIZE, env)
        print_rounds(f"{args.count} x 4 KiB over https, --parallel {args.parallel}, RTT {args.rtt:g} ms, "
                     f"{args.rounds} interleaved rounds (s)", times)
    finally:
        launcher.stop_all()


if __name__ == "__main__":
    main()

"""get's own CPU per URL, without the transfers: two anyurl source trees, interleaved rounds.

    python bench/ab/cli_overhead.py A_TREE B_TREE [--rounds N] [--count N] [--few M]

``anyurl get -q --parallel 32 -d DIR -i LIST`` runs in a child with
``anyurl.transfer.download.download_file`` replaced by a coroutine that does nothing, so
what is timed is the batch's own work per URL: reading the list, parsing and
naming each URL, the workers' turns. No server: the URLs (http://127.0.0.1:9/...)
are never fetched. CPU time (user+sys, the child's own process_time) for COUNT and
FEW URLs; per URL = the difference / (COUNT - FEW), paired per round (start-up
cancelled out). The rest of a request's CPU is the library's: bench/ab/http_small.py.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# the child: the tree's anyurl with download_file a no-op, its own CPU time on stderr
CHILD = """
import sys, time
import anyurl.transfer.download as dl
async def _nothing(*args, **kwargs):
    return None
dl.download_file = _nothing
from anyurl.__main__ import main
t = time.process_time()
code = main(sys.argv[1:])
sys.stderr.write(f"cpu {time.process_time() - t}\\n")
sys.exit(code)
"""


def one(tree: Path, listing: Path, out: Path, scratch: Path, tag: str) -> float:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
    env["PYTHONPATH"] = str(tree / "src")
    env["PYTHONPYCACHEPREFIX"] = str(scratch / f"pyc-{tag}")
    proc = subprocess.run([sys.executable, "-c", CHILD, "get", "-q", "--parallel", "32", "-d", str(out),
                           "-i", str(listing)], env=env, capture_output=True, text=True, check=False)
    last = proc.stderr.strip().splitlines()[-1:] or [""]
    if proc.returncode != 0 or not last[0].startswith("cpu "):
        raise RuntimeError(f"{tree}: exit {proc.returncode}: {proc.stderr[-500:]}")
    return float(last[0].split()[1])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("a", type=Path)
    ap.add_argument("b", type=Path)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--count", type=int, default=10000)
    ap.add_argument("--few", type=int, default=1000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="ab-cli-overhead-") as tmp:
        scratch = Path(tmp)
        out = scratch / "out"
        lists = {}
        for n in (args.count, args.few):
            lists[n] = scratch / f"urls-{n}.txt"
            lists[n].write_text("".join(f"http://127.0.0.1:9/many10k/f{i:05d}.bin\n" for i in range(n)))
        trees = {"A": args.a.resolve(), "B": args.b.resolve()}
        cases = [(tag, n) for tag in trees for n in (args.count, args.few)]
        for tag, n in cases:  # warm-up: bytecode
            one(trees[tag], lists[n], out, scratch, tag)
        cpu: dict[tuple[str, int], list[float]] = {c: [] for c in cases}
        for r in range(args.rounds):
            k = r % len(cases)
            for tag, n in cases[k:] + cases[:k]:
                cpu[(tag, n)].append(one(trees[tag], lists[n], out, scratch, tag))
        print(f"{args.rounds} interleaved rounds; load average {os.getloadavg()[0]:.2f}; "
              f"get's own CPU per URL (transfers stubbed out), ({args.count} - {args.few}) / {args.count - args.few}")
        for tag, tree in trees.items():
            per = sorted((x - y) * 1e6 / (args.count - args.few)
                         for x, y in zip(cpu[(tag, args.count)], cpu[(tag, args.few)], strict=True))
            print(f"  {tag} {tree}: {statistics.median(per):.1f} µs/URL [{per[0]:.1f}-{per[-1]:.1f}]; "
                  f"{args.count} URLs {statistics.median(cpu[(tag, args.count)]):.3f} s CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())

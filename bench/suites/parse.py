"""parse benchmark: ``anyurl.parse`` vs ``urllib.parse.urlsplit`` on a 100,000-URL corpus.

``python -m bench.run parse [--quick]`` runs ``python -m bench.probes.parse_corpus N ROUNDS --json``
as one process (the bench venv's compiled anyurl): each round times both over the
same corpus (bench/probes/parse_corpus.py), alternating which goes first. The table shows
per-round times; ratio = urlsplit time / parse time (so the time ratio
parse/urlsplit is its inverse). urlsplit only splits; parse validates each scheme's
full RFC 1738 syntax, so it is expected to be slower. Then ``extract_urls`` on the four
mixes of bench/probes/extract_text.py (N URLs each), CPU time per URL found.
"""

from __future__ import annotations

import json
import subprocess

from bench import harness
from bench.harness import Case, Run, python_cmd, report


def run(launcher: object, quick: bool) -> None:
    n = 20_000 if quick else 100_000
    rounds = harness.ROUNDS + 2
    load0 = harness.load1()
    out = subprocess.run(python_cmd("-m", "bench.probes.parse_corpus", str(n), str(rounds), "--json"),
                         capture_output=True, text=True, check=True, env=harness.bench_env(), cwd=harness.ROOT)
    pairs = json.loads(out.stdout)
    ours = Case("anyurl.parse", [])
    theirs = Case("urllib.parse.urlsplit", [])
    for o, t in pairs:
        ours.runs.append(Run(o, 0, o))
        theirs.runs.append(Run(t, 0, t))
    group = report(f"parse: {n:,} URLs of every scheme, in one process", [theirs, ours],
                   "urllib.parse.urlsplit", unit_work=(n, "URLs"), load=(load0, harness.load1()), rss=False)
    rows = group["results"]
    assert isinstance(rows, list)
    print(f"   parse() time / urlsplit() time: {1 / rows[1]['ratio']:.2f} "
          f"({1 / rows[1]['ratio_max']:.2f}-{1 / rows[1]['ratio_min']:.2f})")
    # extract_urls on free text of four mixes (issue 25 item 18), the same installed anyurl
    ext = subprocess.run(python_cmd("-m", "bench.probes.extract_text", str(n), "3"), capture_output=True,
                         text=True, check=True, env=harness.bench_env(), cwd=harness.ROOT)
    print("   extract_urls, CPU per URL found (best of 3; python -m bench.probes.extract_text):")
    for line in ext.stdout.splitlines():
        print("     " + line)


if __name__ == "__main__":
    from bench.run import run_with_servers

    run_with_servers(run, False)

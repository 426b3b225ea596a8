"""One Markdown row per benchmark group, from bench/results/latest.jsonl:

    python -m bench.summary [results.jsonl]

For each group title the newest entry counts. Each cell is the median of the
per-round speed ratios against the group's reference (reference time / this
time; > 1 is faster) with the min-max over rounds, and peak RSS where it was
measured; the load average column is the group's 1-minute load before/after.
Small-file groups run once per output filesystem (titles end "output on tmpfs" /
"output on disk"); their filesystem anchor shows as seconds beside the
reference's seconds: the part of every row that is the filesystem's.
This is the table the README's benchmark section is regenerated from.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from bench.harness import ANCHOR, RESULTS


def _kind(name: str) -> str:
    if name.startswith(("anyurl get", "anyurl send")):
        return "cli"
    if name.startswith("anyurl"):
        return "lib"
    return "other"


def _cell(row: dict[str, Any], label: bool, ref: dict[str, Any] | None = None) -> str:
    if row["name"] == ANCHOR and ref is not None:
        return f"fs anchor (os calls only): {row['median_s']:.3f} s vs {ref['median_s']:.3f} s for the reference"
    text = f"{row['ratio']:.2f}× ({row['ratio_min']:.2f}-{row['ratio_max']:.2f})"
    if row.get("peak_rss_mib"):
        text += f", {row['peak_rss_mib']:.0f} MiB"
    return f"{row['name']}: {text}" if label else text


def table(groups: list[dict[str, Any]]) -> str:
    out = ["| group (ratio vs reference) | anyurl CLI | anyurl library | others | load |",
           "|---|---|---|---|---|"]
    for g in groups:
        ref = next(r for r in g["results"] if r["name"] == g["reference"])
        by: dict[str, list[str]] = {"cli": [], "lib": [], "other": []}
        for r in g["results"]:
            if r is not ref:
                k = _kind(r["name"])
                by[k].append(_cell(r, label=k != "cli" or len([x for x in g["results"]
                                                                 if _kind(x["name"]) == "cli"]) > 1, ref=ref))
        ref_note = f"{g['reference']}" + (f", {ref['peak_rss_mib']:.0f} MiB" if ref.get("peak_rss_mib") else "")
        out.append(f"| {g['title']} (vs {ref_note}) | {'; '.join(by['cli'])} | {'; '.join(by['lib'])} | "
                   f"{'; '.join(by['other'])} | {g['load_before']:.1f}/{g['load_after']:.1f} |")
    return "\n".join(out)


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else RESULTS / "latest.jsonl"
    newest: dict[str, dict[str, Any]] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            g = json.loads(line)
            if "rounds" in g:  # entries of the older harness lack the per-round data
                newest.pop(g["title"], None)
                newest[g["title"]] = g
    # a small-file group measured per output filesystem replaces its older single title
    split = {t.split(", output on ")[0] for t in newest if ", output on " in t}
    print(table([g for t, g in newest.items() if t not in split]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

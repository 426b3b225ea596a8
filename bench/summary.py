"""One Markdown row per benchmark group, from bench/results/latest.jsonl:

    python -m bench.summary [results.jsonl]

For each group title the newest entry counts. Each cell is the median of the
per-round speed ratios against the group's reference (reference time / this
time; > 1 is faster) with the min-max over rounds, and peak RSS where it was
measured; the load average column is the group's 1-minute load before/after.
This is the table the README's benchmark section is regenerated from.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from bench.harness import RESULTS


def _kind(name: str) -> str:
    if name.startswith(("anyurl get", "anyurl send")):
        return "cli"
    if name.startswith("anyurl"):
        return "lib"
    return "other"


def _cell(row: dict[str, Any], label: bool) -> str:
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
                                                                 if _kind(x["name"]) == "cli"]) > 1))
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
    print(table(list(newest.values())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

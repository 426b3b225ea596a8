"""bench/suites/http.py's start-up-paid-once row: the per-request CPU it reports is the slope
between two runs of each client in the same round, and the files it serves are the same size."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench import harness
from bench.suites import http


def _group(cpu: dict[str, list[float]]) -> dict[str, object]:
    return {"title": "t", "results": [{"name": n, "runs": [{"cpu_seconds": c} for c in v]} for n, v in cpu.items()]}


def test_per_request_is_the_slope_per_round(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(harness, "RESULTS", tmp_path)
    # start-up 0.1 s (ceiling) and 0.3 s (CLI) cancel out; 50 and 100 µs per request
    group = _group({"ceil": [0.1 + 10_000 * 50e-6, 0.9], "ceil [1000]": [0.1 + 1_000 * 50e-6, 0.45],
                    "cli": [0.3 + 10_000 * 100e-6, 2.1], "cli [1000]": [0.3 + 1_000 * 100e-6, 1.2]})
    out = http.per_request(group, [("ceil", "ceil [1000]"), ("cli", "cli [1000]")], 10_000, 1_000, "ceil", "cli")
    per = out["per_request_us"]
    assert isinstance(per, dict)
    assert per["ceil"] == pytest.approx([50.0, 50.0])
    assert per["cli"] == pytest.approx([100.0, 100.0])
    assert out["cli_over_ceiling"] == pytest.approx([2.0, 2.0])
    stored = json.loads((tmp_path / "latest.jsonl").read_text().splitlines()[-1])
    assert stored["n"] == [10_000, 1_000]
    assert "| CLI / ceiling | 2.00x |" in (tmp_path / "latest.md").read_text()


def test_seed_lots_makes_equal_files_once(tmp_path: Path) -> None:
    paths = http.seed_lots(tmp_path, count=30, size=64)
    assert paths[0] == "/many10k/f00000.bin" and len(paths) == 30
    files = sorted((tmp_path / "many10k").iterdir())
    assert len(files) == 30 and {f.stat().st_size for f in files} == {64}
    before = files[0].stat().st_mtime_ns
    http.seed_lots(tmp_path, count=30, size=64)  # kept, not rewritten
    assert files[0].stat().st_mtime_ns == before

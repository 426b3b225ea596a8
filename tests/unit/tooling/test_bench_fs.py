"""The bench's small-file scaffolding (bench/harness.py ManyFiles, bench/reference/fs_anchor.py,
bench/summary.py): what a reader of the tables relies on, checked on real directories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench import harness, summary


@pytest.fixture
def disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> harness.Output:
    monkeypatch.setattr(harness, "DISK_FRESH", "spread")
    monkeypatch.setattr(harness, "_REMOVE_LATER", [])
    monkeypatch.setattr(harness, "_TO_EMPTY", [])
    return harness.Output("disk", tmp_path)


def test_anchor_writes_the_same_files_the_clients_would(disk: harness.Output) -> None:
    urls = [f"http://h/many/f{i:04d}.txt" for i in range(20)]
    many = harness.ManyFiles.prepare(disk, "t", urls, 4096)
    case = many.anchor()
    assert case.before is not None and case.after is not None
    case.before()
    run = harness.run_once(case.argv)
    case.after()  # raises unless 20 files of 4096 bytes
    assert sorted(p.name for p in many.outdir.iterdir()) == [f"f{i:04d}.txt" for i in range(20)]
    assert run.seconds > 0 and run.max_rss_kib > 0
    assert 'url = "http://h/many/f0000.txt"' in many.curl_config.read_text()


def test_check_refuses_a_short_run(disk: harness.Output) -> None:
    many = harness.ManyFiles.prepare(disk, "t", ["http://h/a", "http://h/b"], 10)
    many.fresh()
    (many.outdir / "a").write_bytes(b"x" * 10)
    with pytest.raises(RuntimeError, match="expected 2 files of 10 bytes"):
        many.check()
    (many.outdir / "b").write_bytes(b"x" * 9)
    with pytest.raises(RuntimeError):
        many.check()


def test_disk_fresh_deletes_the_files_keeps_the_emptied_directory_and_makes_a_new_one(
        disk: harness.Output) -> None:
    many = harness.ManyFiles.prepare(disk, "t", ["http://h/a"], 1)
    many.fresh()
    (many.outdir / "a").write_bytes(b"x")
    (many.outdir / "sub").mkdir()
    (many.outdir / "sub" / "b").write_bytes(b"y")
    first = many.outdir.stat().st_ino
    many.fresh()
    assert list(many.outdir.iterdir()) == []
    assert many.outdir.stat().st_ino != first
    kept = many.outdir.with_name("many.1")
    assert kept.stat().st_ino == first and list(kept.iterdir()) == []
    (many.outdir / "a").write_bytes(b"x")
    harness.cleanup()  # the last run's files go, the directories stay for a later run to prune
    assert list(many.outdir.iterdir()) == [] and kept.is_dir()
    harness.prune(disk.root)
    assert many.outdir.parent.is_dir()
    harness.prune(disk.root, older_than=-1)
    assert list(disk.root.iterdir()) == []


def test_rmtree_mode_reuses_the_same_path(disk: harness.Output, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(harness, "DISK_FRESH", "rmtree")
    many = harness.ManyFiles.prepare(disk, "t", ["http://h/a"], 1)
    many.fresh()
    (many.outdir / "a").write_bytes(b"x")
    many.fresh()
    assert list(many.outdir.iterdir()) == [] and not many.outdir.with_name("many.1").exists()
    assert "deleted and re-made" in many.note()
    old = harness.default_outputs(["disk"], Path("/dev/shm"), disk.root / "old")
    assert [o.label for o in old] == ["disk, rmtree per run"] and not old[0].spread


def test_tree_anchor_writes_the_tree_byte_for_byte(disk: harness.Output) -> None:
    files = {"a/b/c.txt": b"one\r\n", "x y;%.bin": bytes(range(256)), "a/empty": b""}
    many = harness.ManyFiles.tree(disk, "mirror", files)
    case = many.anchor(after=lambda: None)
    assert case.before is not None
    case.before()
    harness.run_once(case.argv)
    for rel, data in files.items():
        assert (many.outdir / rel).read_bytes() == data


def test_compare_skips_groups_the_filter_leaves_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(harness, "ONLY", ["files of 4 KiB"])
    assert harness.wanted("http: 1000 files of 4 KiB at concurrency 32, output on disk")
    assert not harness.wanted("http: one 1024 MiB file from nginx to disk")
    ran = []
    case = harness.Case("x", ["true"], before=lambda: ran.append(1))
    assert harness.compare("http: one 1024 MiB file from nginx to disk", [case]) == {}
    assert ran == []


def _group(title: str, when: str, rows: list[tuple[str, float]]) -> dict[str, object]:
    ref = rows[0][1]
    return {"title": title, "reference": rows[0][0], "rounds": 5, "load_before": 1.0, "load_after": 1.5,
            "time": when, "results": [{"name": n, "median_s": s, "ratio": ref / s, "ratio_min": ref / s,
                                       "ratio_max": ref / s, "peak_rss_mib": 10.0} for n, s in rows]}


def test_summary_rows_per_output_with_the_anchor_in_seconds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = _group("http: 1000 files of 4 KiB at concurrency 32", "t0", [("curl", 1.8), ("anyurl get -q", 2.5)])
    new = [_group(f"http: 1000 files of 4 KiB at concurrency 32, output on {o}", "t1",
                  [("curl", 0.2), ("anyurl get -q", 0.5), (harness.ANCHOR, 0.04)]) for o in ("tmpfs", "disk")]
    results = tmp_path / "r.jsonl"
    results.write_text("".join(json.dumps(g) + "\n" for g in [old, *new]))
    assert summary.main([str(results)]) == 0
    rows = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("| http")]
    assert [r.split(" (vs")[0] for r in rows] == [
        "| http: 1000 files of 4 KiB at concurrency 32, output on tmpfs",
        "| http: 1000 files of 4 KiB at concurrency 32, output on disk"]
    assert "fs anchor (os calls only): 0.040 s vs 0.200 s for the reference" in rows[0]
    assert "0.40×" in rows[0]

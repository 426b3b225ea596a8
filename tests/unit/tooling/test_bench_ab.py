"""The bench's A/B cases (bench.run --tree/--variant, harness.with_trees) and the Python peers'
shared file writer (bench/reference/peer_io.py): what the tables' rows rely on."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from bench import harness
from bench.reference import peer_io
from bench.run import parse_variant


def test_trees_and_variants_follow_each_cli_case_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = tmp_path / "main"
    monkeypatch.setattr(harness, "TREES", [tree])
    monkeypatch.setattr(harness, "VARIANTS", [("asyncio", {"ANYURL_LOOP": "asyncio"})])
    cli = harness.Case("anyurl get", harness.anyurl_cmd("get", "-q", "URL"), env={"SSL_CERT_FILE": "ca.pem"})
    curl = harness.Case("curl", ["curl", "URL"])
    cases = harness.with_trees([curl, cli])
    assert [c.name for c in cases] == ["curl", "anyurl get", "anyurl get [main]", "anyurl get [asyncio]"]
    from_tree, variant = cases[2], cases[3]
    assert from_tree.argv == [sys.executable, "-m", "anyurl", "get", "-q", "URL"]
    assert from_tree.env is not None and from_tree.env["PYTHONPATH"].startswith(f"{tree}/src:")
    assert from_tree.env["SSL_CERT_FILE"] == "ca.pem"  # the case's own environment is kept
    assert from_tree.env["PYTHONPYCACHEPREFIX"] == harness.tree_env(tree)["PYTHONPYCACHEPREFIX"]
    assert variant.argv == cli.argv and variant.env is not None
    assert variant.env["ANYURL_LOOP"] == "asyncio" and variant.env["SSL_CERT_FILE"] == "ca.pem"
    assert harness.with_trees([curl]) == [curl]


def test_parse_variant() -> None:
    assert parse_variant("late:ANYURL_EARLY_CONNECT=0") == ("late", {"ANYURL_EARLY_CONNECT": "0"})
    assert parse_variant("x:A=1,B=") == ("x", {"A": "1", "B": ""})
    for bad in ("ANYURL_LOOP=asyncio", "x:", "x:A", ":A=1"):
        with pytest.raises(ValueError, match="NAME:ENV=VALUE"):
            parse_variant(bad)


def test_peer_save_writes_the_whole_body_under_the_last_segment(tmp_path: Path) -> None:
    body = bytes(range(256)) * 64
    peer_io.save(str(tmp_path), "http://h:1/many10k/f00001.bin", body)
    assert [p.name for p in tmp_path.iterdir()] == ["f00001.bin"]
    assert (tmp_path / "f00001.bin").read_bytes() == body
    with pytest.raises(FileExistsError):  # as the CLI: never over an existing file
        peer_io.save(str(tmp_path), "http://h:1/many10k/f00001.bin", b"other")
    assert (tmp_path / "f00001.bin").read_bytes() == body


def test_peer_command_line_reads_a_list(tmp_path: Path) -> None:
    listing = tmp_path / "urls.txt"
    listing.write_text("http://h/a\n\nhttp://h/b\n")
    args = peer_io.parse("p", ["--parallel", "32", "-d", str(tmp_path), "-i", str(listing), "http://h/c"])
    assert args.urls == ["http://h/c", "http://h/a", "http://h/b"] and args.parallel == 32


def test_run_once_counts_the_childrens_cpu() -> None:
    burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.055: pass"
    run = harness.run_once(["sh", "-c", f'{sys.executable} -c "{burn}"'])
    assert run.cpu_seconds >= 0.055  # the grandchild's CPU, counted
    assert run.max_rss_kib > 0


def test_peers_table_pairs_each_client_with_its_few_run_and_anyurl(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from bench.suites import peers

    monkeypatch.setattr(harness, "RESULTS", tmp_path)
    # CPU: start-up 0.1 s; curl 50 µs and anyurl 100 µs per request (a tree copy 80 µs); walls 1 s / 2 s
    runs = {"curl -Z": (0.1 + 1000 * 50e-6, 1.0), "curl -Z [100]": (0.1 + 100 * 50e-6, 0.2),
            "anyurl get": (0.1 + 1000 * 100e-6, 2.0), "anyurl get [100]": (0.1 + 100 * 100e-6, 0.3),
            "anyurl get [main]": (0.1 + 1000 * 80e-6, 1.5), "anyurl get [100] [main]": (0.1 + 100 * 80e-6, 0.3)}
    group = {"title": "t", "results": [{"name": k, "runs": [{"cpu_seconds": c, "seconds": w}]}
                                       for k, (c, w) in runs.items()]}
    peers.against_anyurl(group, 1000, 100)
    import json

    got = json.loads((tmp_path / "latest.jsonl").read_text().splitlines()[-1])["clients"]
    assert list(got) == ["curl -Z", "anyurl get", "anyurl get [main]"]
    assert got["curl -Z"]["cpu_us"] == pytest.approx([50.0])
    assert got["curl -Z"]["cpu_over_anyurl"] == pytest.approx([0.5])  # curl ahead: below 1
    assert got["curl -Z"]["wall_over_anyurl"] == pytest.approx([0.5])
    assert got["anyurl get [main]"]["cpu_us"] == pytest.approx([80.0])
    # a round whose anyurl slope is not above zero (noise) is left out of the CPU ratio
    group["results"][3]["runs"][0]["cpu_seconds"] = 0.5
    peers.against_anyurl(group, 1000, 100)
    got = json.loads((tmp_path / "latest.jsonl").read_text().splitlines()[-1])["clients"]
    assert got["curl -Z"]["cpu_over_anyurl"] == [] and got["curl -Z"]["wall_over_anyurl"] == pytest.approx([0.5])
    assert "| curl -Z | 50.0 | 50.0-50.0 | 0.50 | 0.50-0.50 | n/a | n/a |" in (tmp_path / "latest.md").read_text()


def test_skip_leaves_out_cases_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(harness, "SKIP", ["HTTPX"])
    monkeypatch.setattr(harness, "RESULTS", tmp_path)
    cases = [harness.Case("httpx http2=True", ["false"]), harness.Case("curl", ["true"])]
    group = harness.compare("t", cases, "curl", rounds=1)
    assert [r["name"] for r in group["results"]] == ["curl"]  # type: ignore[index]

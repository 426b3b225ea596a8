"""`anyurl stat` and `--retry` as a user runs them (real processes; file:, nginx, a flaky server)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.hostile.fakes.flaky_http import flaky_http


def run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "anyurl", *args], capture_output=True, text=True,
                          timeout=timeout)


def test_stat_of_a_local_file_and_directory(tmp_path: Path) -> None:
    f = tmp_path / "data.csv"
    f.write_bytes(b"a,b\n1,2\n")
    proc = run("stat", f.as_uri())
    assert proc.returncode == 0, proc.stderr
    assert "size: 8" in proc.stdout and "kind: file" in proc.stdout and "content_type: text/csv" in proc.stdout
    proc = run("stat", "--json", tmp_path.as_uri() + "/")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["kind"] == "directory" and data["size"] is None and data["modified"]


def test_stat_where_the_scheme_has_no_way_exits_7() -> None:
    proc = run("stat", "telnet://127.0.0.1:9/")
    assert proc.returncode == 7
    assert "telnet URLs have no way to ask for metadata" in proc.stderr


def test_retry_gets_past_transient_failures(tmp_path: Path) -> None:
    body = bytes(range(256)) * 64
    with flaky_http(body, failures=2) as srv:
        out = tmp_path / "thing.bin"
        proc = run("get", "--retry", "3", "--retry-delay", "0.05", "-o", str(out), srv.url)
        assert proc.returncode == 0, proc.stderr
        assert out.read_bytes() == body
        assert srv.log == ["GET /thing.bin HTTP/1.1"] * 3


def test_without_retry_the_first_failure_stands(tmp_path: Path) -> None:
    with flaky_http(b"x", failures=1) as srv:
        proc = run("get", "-o", str(tmp_path / "t"), srv.url)
        assert proc.returncode == 16, proc.stderr  # TemporaryFailure
        assert len(srv.log) == 1
        assert not (tmp_path / "t").exists()


def test_retries_are_bounded_by_the_count(tmp_path: Path) -> None:
    with flaky_http(b"x", failures=10) as srv:
        proc = run("get", "--retry", "2", "--retry-delay", "0", "-o", str(tmp_path / "t"), srv.url)
        assert proc.returncode == 16
        assert len(srv.log) == 3

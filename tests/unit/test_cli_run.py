"""The ``anyurl`` program's exit (``cli.run``): files complete, stdout flushed, exit codes kept,
even though the last garbage collections are skipped (``gc.freeze``)."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest

import anyurl
from anyurl import cli
from anyurl.errors import ResourceNotFound

SRC = str(Path(anyurl.__file__).parent.parent)


def _anyurl(*args: str) -> subprocess.CompletedProcess[bytes]:
    """``python -m anyurl ARGS`` in a fresh interpreter (the same path as the console script)."""
    env = {**os.environ, "PYTHONPATH": SRC}
    return subprocess.run([sys.executable, "-m", "anyurl", *args], capture_output=True, timeout=60, env=env)


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "src.bin"
    path.write_bytes(os.urandom(3 << 20) + b"tail")  # several chunks, odd length
    return path


def test_file_written_by_the_program_is_complete(source: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.bin"
    proc = _anyurl("get", "-q", "-o", str(out), source.as_uri())
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes() == source.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.bin", "src.bin"]  # no part file left


def test_stdout_is_flushed_at_exit(source: Path) -> None:
    proc = _anyurl("get", "-q", source.as_uri())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == source.read_bytes()


def test_exit_code_of_a_failure_is_kept(tmp_path: Path) -> None:
    missing = (tmp_path / "nope.bin").as_uri()
    proc = _anyurl("get", "-q", "-o", str(tmp_path / "x"), missing)
    assert proc.returncode == ResourceNotFound.exit_code
    assert b"nope.bin" in proc.stderr
    assert not (tmp_path / "x").exists()


def test_run_returns_main_code_and_freezes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli, "main", lambda argv=None: 7)
    before = gc.get_freeze_count()
    try:
        assert cli.run() == 7
        assert gc.get_freeze_count() > before  # what was alive left the collector's reach
    finally:
        gc.unfreeze()  # give this test process its collector back

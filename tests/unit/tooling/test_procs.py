"""tests/procs.py: the suite's one way to start a child, and the rule that every test uses it
(issue 25 item 19: a child left unreaped by a failing test fails a later one with its
ResourceWarning)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from tests.procs import spawn

ROOT = Path(__file__).resolve().parents[3]
# the one place that calls Popen, and the launcher, which stops its servers in stop_all()
ALLOWED = {Path("tests/procs.py"), Path("fixtures/launcher.py")}


def _popen_calls(path: Path) -> list[int]:
    """The lines of *path* that call ``subprocess.Popen(...)`` or a bare ``Popen(...)``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
            if name == "Popen":
                lines.append(node.lineno)
    return lines


def test_no_test_spawns_with_bare_popen() -> None:
    found = []
    for top in ("tests", "fixtures"):
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT)
            if rel not in ALLOWED:
                found += [f"{rel}:{line}" for line in _popen_calls(path)]
    assert found == [], "start children with tests.procs.spawn (always reaped): " + ", ".join(found)


def test_the_scan_sees_a_popen_call(tmp_path: Path) -> None:
    src = tmp_path / "t.py"
    src.write_text("import subprocess\nfrom subprocess import Popen\n"
                   "p = subprocess.Popen(['true'])\nq = Popen(['true'])\n")
    assert _popen_calls(src) == [3, 4]


def test_spawn_reaps_a_running_child_when_the_body_fails() -> None:
    with pytest.raises(RuntimeError, match="the test failed"):
        with spawn([sys.executable, "-c", "import time; time.sleep(60)"], stdout=subprocess.PIPE) as proc:
            raise RuntimeError("the test failed")
    assert proc.returncode is not None  # killed and waited for: no zombie, no ResourceWarning
    assert proc.stdout is not None and proc.stdout.closed

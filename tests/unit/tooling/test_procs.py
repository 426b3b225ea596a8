"""tests/procs.py: the suite's one way to start a child, and the rule that every test uses it
(issue 25 item 19: a child left unreaped by a failing test fails a later one with its
ResourceWarning; asyncio's subprocess transport warns the same way)."""

from __future__ import annotations

import ast
import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
from tests.procs import arun, aspawn, spawn

ROOT = Path(__file__).resolve().parents[3]
# the one place that starts children, and the launcher, which stops its servers in stop_all()
ALLOWED = {Path("tests/procs.py"), Path("fixtures/launcher.py")}
SPAWNERS = {"Popen", "create_subprocess_exec", "create_subprocess_shell"}


def _popen_calls(path: Path) -> list[int]:
    """The lines of *path* that call ``subprocess.Popen(...)``, a bare ``Popen(...)`` or
    asyncio's ``create_subprocess_exec``/``_shell``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
            if name in SPAWNERS:
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
                   "p = subprocess.Popen(['true'])\nq = Popen(['true'])\n"
                   "async def f():\n    await asyncio.create_subprocess_exec('true')\n")
    assert _popen_calls(src) == [3, 4, 6]


def test_spawn_reaps_a_running_child_when_the_body_fails() -> None:
    with pytest.raises(RuntimeError, match="the test failed"):
        with spawn([sys.executable, "-c", "import time; time.sleep(60)"], stdout=subprocess.PIPE) as proc:
            raise RuntimeError("the test failed")
    assert proc.returncode is not None  # killed and waited for: no zombie, no ResourceWarning
    assert proc.stdout is not None and proc.stdout.closed


async def test_aspawn_reaps_a_running_child_when_the_body_fails() -> None:
    with pytest.raises(RuntimeError, match="the test failed"):
        async with aspawn([sys.executable, "-c", "import time; print('up', flush=True); time.sleep(60)"],
                          stdout=asyncio.subprocess.PIPE) as proc:
            assert proc.stdout is not None and await proc.stdout.readline() == b"up\n"
            raise RuntimeError("the test failed")
    assert proc.returncode is not None and proc.stdout is not None and proc.stdout.at_eof()


async def test_arun_kills_a_child_past_its_time() -> None:
    assert await arun([sys.executable, "-c", "import sys; sys.stderr.write('e'); print('o')"], within=30) == (
        0, b"o\n", b"e")
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    with pytest.raises(TimeoutError):
        await arun([sys.executable, "-c", "import time; time.sleep(60)"], within=0.5)
    assert loop.time() - t0 < 20  # killed, not waited for

"""Packaging: ``python -m build`` makes a wheel and an sdist that ``twine check`` accepts;
the wheel declares the fsspec entry points and the SPDX license, the sdist carries tests and docs."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("build")
pytest.importorskip("twine")
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_build_wheel_and_sdist_pass_twine_check(tmp_path: Path) -> None:
    src = tmp_path / "src"
    # .containers holds the container runs' state (a Debian root with device nodes): never copied
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(".git", ".venv", "build", "*.egg-info", "__pycache__",
                                                             ".*_cache", "results", ".containers"))
    out = tmp_path / "dist"
    proc = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(src)],
                          capture_output=True, text=True, timeout=280)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "SetuptoolsDeprecationWarning" not in proc.stdout + proc.stderr
    wheel, = out.glob("*.whl")
    sdist, = out.glob("*.tar.gz")
    check = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist)],
                           capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr
    with zipfile.ZipFile(wheel) as z:
        info = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        meta = z.read(info).decode()
        eps = z.read(info.replace("METADATA", "entry_points.txt")).decode()
    assert "License-Expression: MIT" in meta and "Classifier: Programming Language :: Python :: 3.13" in meta
    assert "gopher = anyurl.fsspec:AnyURLFileSystem" in eps
    with tarfile.open(sdist) as t:
        names = t.getnames()
    assert any(n.endswith("tests/integration/test_fsspec.py") for n in names)
    assert any(n.endswith("docs/ecosystem.md") for n in names) and any(n.endswith("/LICENSE") for n in names)


def test_readme_links_work_on_a_package_index_page() -> None:
    """The index page shows README.md without the repository around it: a relative link is dead there."""
    text = (ROOT / "README.md").read_text()
    links = re.findall(r"\]\(([^)\s]+)", text) + re.findall(r'(?:href|src)="([^"]+)"', text)
    relative = [u for u in links if not re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", u)]
    assert not relative, relative

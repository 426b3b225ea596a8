"""Every anyurl name the README and docs show can be imported as shown.

Dotted names (``anyurl.walk.Found``) and ``from anyurl... import a, b`` lines are read from
README.md and docs/*.md; each must resolve to a module or an attribute. So a move inside
the package cannot silently break a documented import path.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# names in the docs that are not Python names: log file globs, news groups of the bench's servers
_NOT_PYTHON = re.compile(r"^anyurl\.(t\d|t$)")
_LOGGERS = {"anyurl.http", "anyurl.ftp", "anyurl.news"}


def _documented() -> set[str]:
    names: set[str] = set()
    for doc in DOCS:
        text = doc.read_text()
        for m in re.finditer(r"\banyurl(?:\.[A-Za-z_][A-Za-z0-9_]*)+", text):
            if not _NOT_PYTHON.match(m.group()):
                names.add(m.group())
        for m in re.finditer(r"from (anyurl[\w.]*) import ([\w, ]+)", text):
            names.update(f"{m.group(1)}.{n.strip()}" for n in m.group(2).split(",") if n.strip())
    return names


def _resolve(dotted: str) -> object:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError as exc:
            if exc.name and not exc.name.startswith("anyurl"):  # the module is there; a dependency is not
                pytest.skip(f"{dotted} needs {exc.name}, an optional dependency not installed here")
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ModuleNotFoundError(dotted)


@pytest.mark.parametrize("dotted", sorted(_documented()))
def test_documented_name_imports(dotted: str) -> None:
    if dotted in _LOGGERS:
        pytest.skip("a logger's name (logging.getLogger), not a module")
    assert _resolve(dotted) is not None


def test_the_documented_paths_are_there() -> None:
    names = _documented()
    for expected in ("anyurl.Client", "anyurl.fsspec.AnyURLFileSystem", "anyurl.urllib.install",
                     "anyurl.scrapy.AnyURLDownloadHandler", "anyurl.walk.Found", "anyurl.mirror.mirror",
                     "anyurl.download.download"):
        assert expected in names

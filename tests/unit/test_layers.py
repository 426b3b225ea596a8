"""The package's floors: what each part of src/anyurl may import (docs/internals.md, "Layout").

Read from the source with ast, so a lazy import inside a function counts as much as one at
the top; imports under ``if TYPE_CHECKING:`` count too (a type is a dependency of the reader).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "anyurl"

# part -> floor; a module may import its own part and any part on a lower floor
FLOORS: dict[str, int] = {
    "errors": 0, "_record": 0, "schemes": 0,
    "urls": 1,
    "settings": 2, "response": 2,
    "protocols": 3,
    "net": 4,
    "handlers": 5,
    "registry": 6, "links": 6,
    "client": 7,
    "transfer": 8,
    "adapters": 9, "cli": 9,
    "__init__": 10, "__main__": 10, "fsspec": 10, "scrapy": 10, "urllib": 10,
    "download": 10, "mirror": 10, "walk": 10,
}
# (importer part, imported module) pairs allowed against the floors, each for a stated reason
EXCEPTIONS = {
    ("client", "anyurl.transfer.walk"),  # Client.walk (public API) delegates to transfer.walk, imported on call
    ("registry", "anyurl.handlers.base"),  # the Handler type only; handlers are imported by name on first use
}


def _part(path: Path) -> str:
    rel = path.relative_to(SRC)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def _module(path: Path) -> str:
    rel = path.relative_to(SRC).with_suffix("")
    parts = ["anyurl", *rel.parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    here = _module(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("anyurl"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if not target.startswith("anyurl"):
                continue
            if node.module is None or target == "anyurl":  # from . import name: the names may be modules
                for a in node.names:
                    sub = f"{target}.{a.name}"
                    found.add(sub if (SRC.parent / sub.replace(".", "/")).with_suffix(".py").exists()
                              or (SRC.parent / sub.replace(".", "/")).is_dir() else target)
            else:
                found.add(target)
    return found


def _floor_of(module: str) -> tuple[str, int]:
    parts = module.split(".")
    part = parts[1] if len(parts) > 1 else "__init__"
    return part, FLOORS[part]


MODULES = sorted(SRC.rglob("*.py"))


def test_every_part_has_a_floor() -> None:
    assert sorted({_part(p) for p in MODULES} - FLOORS.keys()) == []


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(SRC)))
def test_imports_go_down_the_floors(path: Path) -> None:
    part = _part(path)
    mine = FLOORS[part]
    wrong = []
    for target in sorted(_imports(path)):
        if target == "anyurl":  # the package's face: __version__ and the errors it names
            continue
        their_part, theirs = _floor_of(target)
        if their_part == part or theirs < mine or (part, target) in EXCEPTIONS:
            continue
        wrong.append(f"{target} (floor {theirs})")
    assert wrong == [], f"{path.relative_to(SRC)} (floor {mine}) imports {', '.join(wrong)}"


def test_the_library_never_imports_the_command_line() -> None:
    for path in MODULES:
        if _part(path) in ("cli", "__main__"):
            continue
        assert not {t for t in _imports(path) if t == "anyurl.cli" or t.startswith("anyurl.cli.")}, path


def _layout_block() -> str:
    readme = (SRC.parents[1] / "README.md").read_text()
    section = readme.split("## Layout", 1)[1]
    return section.split("```", 2)[1]


def test_readme_layout_names_every_module() -> None:
    block = _layout_block()
    words = set(re.findall(r"[\w.]+", block))
    missing = []
    for path in MODULES:
        rel = path.relative_to(SRC)
        if len(rel.parts) == 1:
            if rel.name not in words:
                missing.append(str(rel))
        else:
            folder = rel.parts[0] + "/"
            if folder not in block:
                missing.append(folder)
            elif rel.stem != "__init__" and rel.stem not in words:
                missing.append(str(rel))
    assert missing == [], f"README's Layout does not name {missing}"


def test_unit_tests_mirror_the_parts() -> None:
    # A part's pure tests sit in the folder of the same name; the root's at the top.
    tests = SRC.parents[1] / "tests"
    parts = {p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    folders = {p.name for p in (tests / "unit").iterdir() if p.is_dir() and not p.name.startswith("__")}
    assert folders - parts == {"tooling"}, sorted(folders - parts)
    for folder in folders - {"tooling"}:
        for test in (tests / "unit" / folder).glob("test_*.py"):
            text = test.read_text()
            assert f"anyurl.{folder}" in text, f"{test.name} tests nothing of anyurl.{folder}"


def test_hostile_keeps_only_tests_beside_its_fakes() -> None:
    hostile = SRC.parents[1] / "tests" / "hostile"
    loose = [p.name for p in hostile.glob("*.py") if not p.name.startswith("test_") and p.name != "__init__.py"]
    assert loose == [], f"helpers belong in tests/hostile/fakes/: {loose}"
    assert not list(hostile.rglob("*_test.py")), "a helper named like a test"

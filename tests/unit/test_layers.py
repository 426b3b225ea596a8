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
    "errors": 0, "_record": 0, "schemes": 0, "version": 0,
    "urls": 1,
    "spool": 1,
    "settings": 2, "response": 2,
    "protocols": 3,
    "net": 4,
    "handlers": 5,
    "registry": 6, "links": 6,
    "client": 7,
    "transfer": 8,
    "adapters": 9, "cli": 9,
    "__init__": 10, "__main__": 10, "fsspec": 10, "scrapy": 10, "urllib": 10,
    "batch": 10, "download": 10, "mirror": 10, "walk": 10, "warc": 10,
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


# -- private attributes stay private (issue 23 step 7) ---------------------------------------
# `X._name` (or getattr(X, "_name")) where X is not the object itself: self, cls, super(),
# type(self), an instance a classmethod just made with cls(...), nor a module (a module's
# private names are its own business, here or in a dependency). Dunders and _sunder_ names
# are protocol, and namedtuple's _replace/_asdict/... are its public API.
_NAMEDTUPLE_API = {"_replace", "_asdict", "_fields", "_make", "_field_defaults"}

# Sites left for a stated reason, as "path: expression" -> how many; a fixed site must leave
# this list (the test fails on a stale entry), so it only shrinks.
PRIVATE_READS_ALLOWED: dict[str, int] = {
    # DataclassFields is Record's own descriptor: it reads the owner class's bookkeeping
    "_record.py: owner._field_names": 1, "_record.py: owner._fields_init": 1,
    "_record.py: owner._not_compared": 1, "_record.py: owner._factories": 2, "_record.py: owner._frozen": 1,
    # transfer/download needs a public Client.open of a prepared Request (max_size included);
    # client.py is being edited elsewhere this session
    "transfer/download.py: client._open": 2,
    # files other engineers own this session: to fix there
    "client.py: client._close_on_stopped_loop": 1, "client.py: client._open": 1,
    "client.py: self.client._call": 1,
    "cli/get.py: client._open": 1, "cli/progress.py: self.owner._advance": 1,
    "cli/progress.py: self.owner._retotal": 1, "cli/quick.py: url._field_names": 1,
    "handlers/http.py: url._path": 1,
    "handlers/http1.py: conn._chunks": 3, "handlers/http1.py: conn._queued": 1,
    "handlers/http1.py: lease._conn": 1, "handlers/http1.py: conn._paused": 1,
    "handlers/http1.py: r._after_end": 1, "handlers/http1.py: self.headers._lower": 1,
    "handlers/http1.py: conn._pop": 1, "handlers/http1.py: conn._exc": 4, "handlers/http1.py: conn._lost": 1,
    "handlers/http1.py: self.pool._hosts": 1, "handlers/http1.py: conn._arm": 1,
    "net/pool.py: pool._keep": 1, "net/pool.py: pool._lent": 1, "net/pool.py: self.pool._lent": 2,
    "net/pool.py: self.pool._release": 1, "net/pool.py: self.pool._give_back": 1,
    "net/pool.py: getattr(transport, '_call_connection_lost')": 1, "net/pool.py: getattr(transport, '_sock')": 1,
    "protocols/http1.py: h._lower": 3,
}


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and not (len(name) > 2 and name.endswith("_")) \
        and name not in _NAMEDTUPLE_API


def _is_module(dotted: str) -> bool:
    import importlib.util

    if dotted == "anyurl" or dotted.startswith("anyurl."):
        path = SRC.parent / dotted.replace(".", "/")
        return path.with_suffix(".py").exists() or path.is_dir()
    try:
        return importlib.util.find_spec(dotted) is not None
    except (ImportError, ValueError):
        return False


def _module_names(tree: ast.Module, path: Path) -> set[str]:
    """The names this module binds to modules (import x, import x as y, from p import module)."""
    here = _module(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.asname or a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            names.update(a.asname or a.name for a in node.names if _is_module(f"{target}.{a.name}"))
    return names


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return None if head is None else f"{head}.{node.attr}"
    return None


def _private_reads(path: Path, text: str | None = None) -> list[str]:
    tree = ast.parse(path.read_text() if text is None else text, str(path))
    modules = _module_names(tree, path)
    made_by_cls: set[tuple[ast.AST, str]] = set()  # (function, name) for `name = cls(...)`
    owner: dict[ast.AST, ast.AST] = {}  # node -> its innermost function
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                owner[node] = fn  # inner functions come later in the walk and win
                if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                        and isinstance(node.value.func, ast.Name) and node.value.func.id == "cls"):
                    made_by_cls.update((fn, t.id) for t in node.targets if isinstance(t, ast.Name))

    def own_or_module(value: ast.expr, at: ast.AST) -> bool:
        if isinstance(value, ast.Name) and (value.id in ("self", "cls") or (owner.get(at), value.id) in made_by_cls):
            return True
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and (
                value.func.id == "super" or (value.func.id == "type" and len(value.args) == 1
                                             and isinstance(value.args[0], ast.Name) and value.args[0].id == "self")):
            return True
        dotted = _dotted(value)
        return dotted is not None and (dotted in modules or (dotted.split(".")[0] in modules and _is_module(dotted)))

    rel = path.relative_to(SRC).as_posix()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_private(node.attr) and not own_or_module(node.value, node):
            found.append(f"{rel}: {ast.unparse(node)}")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("getattr", "setattr", "hasattr", "delattr") and len(node.args) >= 2
              and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)
              and _is_private(node.args[1].value) and not own_or_module(node.args[0], node)):
            found.append(f"{rel}: {node.func.id}({ast.unparse(node.args[0])}, {node.args[1].value!r})")
    return found


def test_no_reads_of_other_objects_private_attributes() -> None:
    from collections import Counter

    found = Counter(site for path in MODULES for site in _private_reads(path))
    new = {site: n - PRIVATE_READS_ALLOWED.get(site, 0) for site, n in found.items()
           if n > PRIVATE_READS_ALLOWED.get(site, 0)}
    stale = {site: n - found.get(site, 0) for site, n in PRIVATE_READS_ALLOWED.items() if n > found.get(site, 0)}
    assert not new, f"another object's private attribute (add a method or property instead): {new}"
    assert not stale, f"fixed: remove these from PRIVATE_READS_ALLOWED: {stale}"


def test_the_private_read_check_sees_what_it_should() -> None:
    code = ("import os\nimport urllib.request\nclass A:\n"
            "    @classmethod\n    def make(cls):\n        a = cls()\n        a._x = 1\n        return a\n"
            "    def f(self, other):\n        self._a, super()._b, type(self)._c, os._exit, urllib.request._opener\n"
            "        getattr(self, '_d'), other.__len__, other._e_, other._replace\n"
            "        return other._y, self.peer._z, getattr(other, '_w', None)\n")
    sites = [s.partition(": ")[2] for s in _private_reads(SRC / "probe.py", code)]
    assert sorted(sites) == sorted(["other._y", "self.peer._z", "getattr(other, '_w')"])


# -- no private name of a dependency (issue 23 step 6) ----------------------------------------
# A dependency's private names change in any release without notice: anyurl uses its public API
# only. Caught here: importing a private name or module of a dependency; reading `dep._x` of a
# dependency module; in a subclass of a dependency's class, overriding a private method it has or
# reading a private attribute the subclass does not set itself (`self._conns` in a TCPConnector);
# `x._y` (or getattr(x, "_y")) where x is annotated as a dependency's type (a parameter, an
# attribute set from one, a local) or `_y` is a private attribute of a dependency's class that
# anyurl never defines for itself.
DEPENDENCIES = ("aiohttp", "asyncio", "h2", "hpack", "httptools", "jh2", "yarl", "multidict", "ssl")

# Sites left, "path: expression" -> how many, each with its owner; the list only shrinks.
DEPENDENCY_PRIVATES_ALLOWED: dict[str, int] = {
    # closing an idle socket after its event loop was closed (Pool.abort_idle): asyncio's selector
    # transport has no public way; not in this branch's part of net/pool.py
    "net/pool.py: getattr(transport, '_call_connection_lost')": 1,
}


def _is_dependency(dotted: str) -> bool:
    return dotted.split(".")[0] in DEPENDENCIES


def _dependency_class_privates() -> frozenset[str]:
    """Private names the dependencies' classes define (methods and class attributes)."""
    import importlib
    import inspect
    import sys

    for name in ("aiohttp", "asyncio", "h2.connection", "httptools", "yarl", "multidict", "ssl"):
        importlib.import_module(name)
    found: set[str] = set()
    for mod_name, mod in list(sys.modules.items()):
        if mod is None or not _is_dependency(mod_name):
            continue
        for obj in list(vars(mod).values()):
            if inspect.isclass(obj) and (obj.__module__ or "").split(".")[0] in DEPENDENCIES:
                found.update(n for n in vars(obj) if _is_private(n))
    return frozenset(found)


def _own_privates(tree: ast.AST) -> set[str]:
    """The private names this code defines itself: `x._y = ...`, `def _y`, `_y = ...` and
    `__slots__` entries in a class body."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _is_private(node.name):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for sub in ast.walk(t):
                    if isinstance(sub, ast.Attribute) and _is_private(sub.attr):
                        names.add(sub.attr)
        elif isinstance(node, ast.ClassDef):
            for stmt in node.body:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else (
                    [stmt.target] if isinstance(stmt, ast.AnnAssign) else [])
                for t in targets:
                    if isinstance(t, ast.Name):
                        if _is_private(t.id):
                            names.add(t.id)
                        if t.id == "__slots__" and isinstance(stmt, ast.Assign):
                            names.update(c.value for c in ast.walk(stmt.value)
                                         if isinstance(c, ast.Constant) and isinstance(c.value, str))
    return names


def _imported(tree: ast.Module, path: Path) -> dict[str, str]:
    """Local name -> the dotted name it stands for (modules and imported names)."""
    here = _module(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                names[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            for a in node.names:
                names[a.asname or a.name] = f"{target}.{a.name}"
    return names


def _resolve(node: ast.expr, imported: dict[str, str]) -> str | None:
    dotted = _dotted(node)
    if dotted is None:
        return None
    head, _, rest = dotted.partition(".")
    if head not in imported:
        return None
    return imported[head] + ("." + rest if rest else "")


def _names_dependency_type(annotation: ast.expr | None, imported: dict[str, str]) -> bool:
    if annotation is None:
        return False
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return False
    for sub in ast.walk(annotation):
        if isinstance(sub, (ast.Name, ast.Attribute)):
            full = _resolve(sub, imported)
            if full is not None and _is_dependency(full) and "." in full:
                return True
    return False


def _dependency_privates(path: Path, text: str | None = None, *,
                         class_privates: frozenset[str] | None = None) -> list[str]:
    import importlib

    tree = ast.parse(text, str(path)) if text is not None else _tree(path)
    imported = _imported(tree, path)
    class_privates = _dependency_class_privates() if class_privates is None else class_privates
    module_own = _own_privates(tree) if text is not None else _own_of(path)
    ours = module_own if text is not None else _all_own_privates()
    rel = path.relative_to(SRC).as_posix()
    found: list[str] = []

    def report(node: ast.AST, what: str) -> None:
        found.append(f"{rel}: {what}")

    def dependency_class(base: ast.expr) -> type | None:
        full = _resolve(base, imported)
        if full is None or not _is_dependency(full):
            return None
        module, _, name = full.rpartition(".")
        try:
            obj = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            return None
        return obj if isinstance(obj, type) else None

    # imports of a dependency's private module or name
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and not node.level and _is_dependency(node.module or ""):
            module = node.module or ""
            for a in node.names:
                if any(_is_private(p) for p in module.split(".")) or _is_private(a.name):
                    report(node, f"from {module} import {a.name}")
        elif isinstance(node, ast.Import):
            for a in node.names:
                if _is_dependency(a.name) and any(_is_private(p) for p in a.name.split(".")):
                    report(node, f"import {a.name}")

    # subclasses of a dependency's class
    for cls in ast.walk(tree):
        if not isinstance(cls, ast.ClassDef):
            continue
        bases = [b for b in (dependency_class(x) for x in cls.bases) if b is not None]
        if not bases:
            continue
        own = module_own  # what this module's classes define (a subclass of this one may)
        for node in ast.walk(cls):
            if (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _is_private(node.name)
                    and any(hasattr(b, node.name) for b in bases)):
                report(node, f"{cls.name} overrides {node.name}")
            elif isinstance(node, ast.Attribute) and _is_private(node.attr):
                on_super = (isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name)
                            and node.value.func.id == "super")
                on_self = isinstance(node.value, ast.Name) and node.value.id == "self"
                if (on_self and node.attr not in own) or (on_super and any(hasattr(b, node.attr) for b in bases)):
                    report(node, f"{cls.name}: {ast.unparse(node)}")

    # receivers typed as a dependency's class: parameters, attributes set from them, locals
    functions: dict[ast.AST, ast.AST | None] = {}  # node -> its innermost function (one walk)

    def assign(node: ast.AST, fn: ast.AST | None) -> None:
        for child in ast.iter_child_nodes(node):
            functions[child] = fn
            assign(child, child if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else fn)

    assign(tree, None)
    typed: dict[ast.AST | None, set[str]] = {}  # function -> its names holding a dependency's object
    typed_attrs: set[str] = set()  # self.<name> holding one (per module: enough)
    for node, fn in functions.items():
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
            typed.setdefault(node, set()).update(
                a.arg for a in args if _names_dependency_type(a.annotation, imported))
        elif isinstance(node, ast.AnnAssign) and _names_dependency_type(node.annotation, imported):
            if isinstance(node.target, ast.Name):
                typed.setdefault(fn, set()).add(node.target.id)
            elif isinstance(node.target, ast.Attribute) and _dotted(node.target.value) == "self":
                typed_attrs.add(node.target.attr)
    for node, fn in functions.items():
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in typed.get(fn, ()):
            typed_attrs.update(t.attr for t in node.targets
                               if isinstance(t, ast.Attribute) and _dotted(t.value) == "self")
    for node, fn in functions.items():
        receiver, name = None, None
        if isinstance(node, ast.Attribute) and _is_private(node.attr):
            receiver, name = node.value, node.attr
            what = ast.unparse(node)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("getattr", "setattr", "hasattr", "delattr") and len(node.args) >= 2
              and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)
              and _is_private(node.args[1].value)):
            receiver, name = node.args[0], node.args[1].value
            what = f"{node.func.id}({ast.unparse(receiver)}, {name!r})"
        if receiver is None or name is None:
            continue
        dotted = _dotted(receiver)
        full = _resolve(receiver, imported)
        if full is not None:  # an imported module or name
            if _is_dependency(full):
                report(node, what)  # a dependency module's (or class's) private name
            continue  # another module's: the check above is the general one
        if dotted in ("self", "cls") or (isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Name)
                                         and receiver.func.id in ("super", "type")):
            continue  # the object's own (subclasses of a dependency's class: above)
        if ((isinstance(receiver, ast.Name) and receiver.id in typed.get(fn, ()))
                or (isinstance(receiver, ast.Attribute) and _dotted(receiver.value) == "self"
                    and receiver.attr in typed_attrs)
                or (name in class_privates and name not in ours)):
            report(node, what)
    return found


_trees: dict[Path, ast.Module] = {}
_owns: dict[Path, set[str]] = {}


def _tree(path: Path) -> ast.Module:
    if path not in _trees:
        _trees[path] = ast.parse(path.read_text(), str(path))
    return _trees[path]


def _own_of(path: Path) -> set[str]:
    if path not in _owns:
        _owns[path] = _own_privates(_tree(path))
    return _owns[path]


_all_own: list[set[str]] = []


def _all_own_privates() -> set[str]:
    """Every private name src/anyurl defines for itself."""
    if not _all_own:
        _all_own.append(set().union(*(_own_of(path) for path in MODULES)))
    return _all_own[0]


def test_no_private_name_of_a_dependency() -> None:
    from collections import Counter

    privates = _dependency_class_privates()
    found = Counter(site for path in MODULES for site in _dependency_privates(path, class_privates=privates))
    new = {site: n - DEPENDENCY_PRIVATES_ALLOWED.get(site, 0) for site, n in found.items()
           if n > DEPENDENCY_PRIVATES_ALLOWED.get(site, 0)}
    stale = {site: n - found.get(site, 0) for site, n in DEPENDENCY_PRIVATES_ALLOWED.items()
             if n > found.get(site, 0)}
    assert not new, f"a dependency's private name (use its public API, or do it ourselves): {new}"
    assert not stale, f"fixed: remove these from DEPENDENCY_PRIVATES_ALLOWED: {stale}"


def test_the_dependency_check_sees_what_it_should() -> None:
    # the bridge this check was written against (handlers/http.py before issue 23 step 6), and
    # the other shapes it catches; own names and public ones pass
    code = '''
import asyncio
from asyncio import _get_running_loop
from aiohttp import TCPConnector
from aiohttp._http_parser import HttpResponseParser


def connector(pool):
    import aiohttp

    class SlotConnector(aiohttp.TCPConnector):
        async def _create_connection(self, req, traces, timeout):
            return await super()._create_connection(req, traces, timeout)

        def close_idle(self, address):
            for key, conns in self._conns.items():
                pass

    class Mine(TCPConnector):
        def __init__(self):
            super().__init__()
            self._mine = 1

        def _helper(self):
            return self._mine, self.limit

    return SlotConnector, Mine


class Reader:
    def __init__(self, reader: asyncio.StreamReader, other: object) -> None:
        self.reader = reader
        self.other = other
        self._buffer = bytearray()

    def pending(self, transport: asyncio.Transport) -> bool:
        return bool(getattr(self.reader, "_buffer", b"")) or transport._sock is None or self.other._x

    def own(self) -> int:
        loop = asyncio.get_running_loop()
        return len(self._buffer) + len(loop._ready) + asyncio.events._event_loop_policy
'''
    privates = frozenset({"_create_connection", "_ready", "_buffer"})
    sites = [s.partition(": ")[2] for s in _dependency_privates(SRC / "probe.py", code, class_privates=privates)]
    assert sorted(sites) == sorted([
        "from asyncio import _get_running_loop", "from aiohttp._http_parser import HttpResponseParser",
        "SlotConnector overrides _create_connection", "SlotConnector: super()._create_connection",
        "SlotConnector: self._conns",
        "getattr(self.reader, '_buffer')", "transport._sock", "loop._ready", "asyncio.events._event_loop_policy",
    ]), sites


def test_no_import_circles() -> None:
    # every import counts, lazy and TYPE_CHECKING ones too (a circle is a circle to a reader);
    # only the EXCEPTIONS above, each with its reason, are left out
    graph: dict[str, set[str]] = {}
    for path in MODULES:
        here = _module(path)
        graph[here] = {t for t in _imports(path) if t != here and (_part(path), t) not in EXCEPTIONS}
    seen: dict[str, int] = {}  # 1: on the current path, 2: done
    circles: list[str] = []

    def visit(node: str, trail: list[str]) -> None:
        seen[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if seen.get(nxt) == 1:
                circles.append(" -> ".join([*trail[trail.index(nxt):], nxt]))
            elif nxt not in seen:
                visit(nxt, [*trail, nxt])
        seen[node] = 2

    for start in sorted(graph):
        if start not in seen:
            visit(start, [start])
    assert len(graph) > 50, sorted(graph)  # the walk saw the package, not an empty tree
    assert circles == [], circles


# -- a module's _names are its own (issue 32 item 4) -------------------------------------------
# `from .other import _name`, or `other._name` where `other` is an anyurl module this one
# imported, reaches into another module's private part: the name is made public in its
# module (the 39 such imports were), or the module is private. Dunders are protocol.


def cross_module_private_names(path: Path, text: str | None = None) -> list[str]:
    """'line: module._name' for each private name of another anyurl module that *path* (or
    *text*, as if it were *path*'s) uses."""
    tree = ast.parse(path.read_text() if text is None else text, str(path))
    here = _module(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found: list[str] = []
    modules: dict[str, str] = {}  # local name -> anyurl module it stands for

    def private(name: str) -> bool:
        return name.startswith("_") and not name.endswith("__")

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if not target.startswith("anyurl") or target == here:
                continue
            for a in node.names:
                sub = f"{target}.{a.name}"
                if (SRC.parent / sub.replace(".", "/")).with_suffix(".py").exists():
                    modules[a.asname or a.name] = sub
                elif private(a.name):
                    found.append(f"{node.lineno}: {target}.{a.name}")
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("anyurl.") and a.asname:
                    modules[a.asname] = a.name
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id in modules and private(node.attr) and modules[node.value.id] != here:
            found.append(f"{node.lineno}: {modules[node.value.id]}.{node.attr}")
    return found


def test_no_module_uses_another_module_s_private_names() -> None:
    found = {str(p.relative_to(SRC)): sites for p in MODULES if (sites := cross_module_private_names(p))}
    assert not found, f"make these public names of their module (or the module private): {found}"


def test_the_private_name_check_sees_what_it_should() -> None:
    text = ("from .http1 import _content_type, H1Client\nfrom .. import urls\n"
            "from . import http2 as h\nx = urls._FPATH\ny = h._private\nz = urls.__name__\n")
    assert cross_module_private_names(SRC / "handlers" / "probe.py", text) == [
        "1: anyurl.handlers.http1._content_type", "4: anyurl.urls._FPATH", "5: anyurl.handlers.http2._private"]

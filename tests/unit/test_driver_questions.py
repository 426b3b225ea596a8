"""What the Client, the CLI, a batch (and the rest of transfer/, the adapters) ask a driver goes
through the Handler interface (handlers/base.py: each question a method with a default), never
through attribute probes: no ``getattr``/``hasattr`` on a handler or driver, no search of its
``__dict__``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from anyurl.handlers.base import Handler

SRC = Path(__file__).resolve().parents[1].parent / "src" / "anyurl"
# every part above the drivers that holds a Client: the Client itself, transfer/ (the batch,
# walk, mirror, crawl), the adapters and the CLI
CALLERS = sorted([SRC / "client.py", *(SRC / "transfer").glob("*.py"), *(SRC / "adapters").glob("*.py"),
                  *(SRC / "cli").glob("*.py")])
# the questions: a probe for one of these names is a probe on a driver, whatever its variable
QUESTIONS = {"multiplexed", "negotiated", "pipeline_depth", "pools", "pool", "abort_idle", "http_options",
             "_h1", "_h2"}
DRIVERISH = ("handler", "driver")


def _probes(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "__dict__" and ast.unparse(node.value) != "self":
            found.append(f"{path.name}:{node.lineno}: __dict__")
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "hasattr") and node.args):
            continue
        target = ast.unparse(node.args[0]).lower()
        name = node.args[1].value if len(node.args) > 1 and isinstance(node.args[1], ast.Constant) else None
        if name == "__dict__":
            found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
            continue
        if any(w in target for w in DRIVERISH) or name in QUESTIONS or target.startswith("getattr("):
            found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    return found


@pytest.mark.parametrize("path", CALLERS, ids=lambda p: str(p.relative_to(SRC)))
def test_no_attribute_probes_on_drivers(path: Path) -> None:
    assert _probes(path) == []


def test_the_scan_finds_a_probe(tmp_path: Path) -> None:
    # the scan itself: the probes this test was written to remove are found
    bad = tmp_path / "bad.py"
    bad.write_text("m = getattr(handler, 'multiplexed', None)\n"
                   "d = getattr(getattr(client.handler(u), 'http_options', None), 'pipeline', 0)\n"
                   "for part in (h, *getattr(h, '__dict__', {}).values()): pass\n"
                   "x = getattr(u, 'host', None)\n")
    assert {p.split(":")[1] for p in _probes(bad)} == {"1", "2", "3"}  # a URL's host is no driver


@pytest.mark.parametrize("name", ["multiplexed", "negotiated", "pipeline_depth", "pools", "abort_idle"])
def test_every_question_has_a_default(name: str) -> None:
    assert callable(getattr(Handler, name))


async def test_the_defaults_answer_for_a_driver_that_says_nothing() -> None:
    from anyurl import Client, parse

    async with Client() as client:
        h = Handler(client)
        u = parse("gopher://example.org/")
        assert h.multiplexed(u) is False
        assert await h.negotiated(u) is False
        assert h.pipeline_depth(u) == 0 and h.pools() == ()
        h.abort_idle()

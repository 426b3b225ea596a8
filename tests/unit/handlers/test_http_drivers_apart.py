"""Each HTTP driver speaks its version only: http1, http2 and http3 import none of each other
(the version is chosen in anyurl.handlers.http), and qh3 loads on the first QUIC connection,
not when the HTTP/3 driver is imported."""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

import anyurl.handlers.http3 as h3


def _imports(module: str) -> set[str]:
    tree = ast.parse((Path(h3.__file__).parent / f"{module}.py").read_text())
    names = set()
    for node in ast.walk(tree):  # (lazy imports and TYPE_CHECKING ones too)
        if isinstance(node, ast.ImportFrom):
            names.add(("." * node.level) + (node.module or ""))
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return names


@pytest.mark.parametrize("module", ["http1", "http2", "http3"])
def test_no_http_driver_imports_another(module: str) -> None:
    """The version is chosen in anyurl.handlers.http only (an ALPN answer of HTTP/1.1 included:
    H2Client says None and http.py goes on with the HTTP/1.1 client)."""
    others = {f".{m}" for m in ("http1", "http2", "http3", "http", "http_capture") if m != module}
    others |= {f"anyurl.handlers{m}" for m in others}
    assert not _imports(module) & others, _imports(module)


def test_importing_the_http3_driver_leaves_qh3_unloaded() -> None:
    # qh3 is optional (the [http3] extra): where it is missing, only the first half applies
    installed = importlib.util.find_spec("qh3") is not None
    code = "import sys, anyurl.handlers.http3 as m; print(any(n.startswith('qh3') for n in sys.modules))"
    if installed:
        code += "; m._load(); print('qh3.quic.connection' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == (["False", "True"] if installed else ["False"])

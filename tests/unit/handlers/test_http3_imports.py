"""The HTTP/3 driver speaks HTTP/3 only: it imports neither the HTTP/1.1 nor the HTTP/2 driver
(the version is chosen in anyurl.handlers.http), and qh3 loads on the first QUIC connection,
not when the driver is imported."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import anyurl.handlers.http3 as h3


def test_the_http3_driver_imports_no_other_http_driver() -> None:
    tree = ast.parse(Path(h3.__file__).read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names.add(("." * node.level) + (node.module or ""))
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    assert not names & {".http1", ".http2", "anyurl.handlers.http1", "anyurl.handlers.http2"}, names
    assert {".http", ".http_capture"}.isdisjoint(names)


def test_importing_the_http3_driver_leaves_qh3_unloaded() -> None:
    code = ("import sys, anyurl.handlers.http3 as m; print(any(n.startswith('qh3') for n in sys.modules)); "
            "m._load(); print('qh3.quic.connection' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True"]

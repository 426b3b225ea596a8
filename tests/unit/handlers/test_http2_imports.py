"""anyurl.handlers.http2 loads the HTTP/2 library's modules only once a connection is being made
(during its TLS handshake), so their ~17 ms are not spent before the first ClientHello; it picks
jh2 (compiled HPACK) where installed, h2 when ANYURL_H2_LIBRARY=h2 asks for it."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("jh2")


@pytest.mark.parametrize("library", ["jh2", "h2"])
def test_importing_the_http2_driver_leaves_the_http2_library_unloaded(library: str) -> None:
    code = ("import sys, anyurl.handlers.http2 as m; "
            "print(sorted(n for n in ('h2.connection', 'jh2.connection', 'hpack') if n in sys.modules)); "
            "m._load_h2(); print(m.LIBRARY, m.h2.__name__, f'{m.LIBRARY}.connection' in sys.modules, "
            "f'{m.LIBRARY}.events' in sys.modules)")
    env = {**os.environ, "ANYURL_H2_LIBRARY": library}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    assert out.split("\n")[:2] == ["[]", f"{library} {library} True True"]


def test_without_jh2_the_driver_speaks_http2_with_h2() -> None:
    # (no wheel for this platform: jh2 cannot be imported)
    code = ("import sys; sys.modules['jh2'] = None\n"
            "import anyurl.handlers.http2 as m\n"
            "m._load_h2(); print(m.LIBRARY, m._strict is None, 'hpack' in sys.modules)")
    env = {k: v for k, v in os.environ.items() if k != "ANYURL_H2_LIBRARY"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    assert out.split() == ["h2", "True", "True"]

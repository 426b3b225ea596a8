"""anyurl.handlers.http2 loads h2's modules only once a connection is being made (during its
TLS handshake), so their ~17 ms are not spent before the first ClientHello."""

from __future__ import annotations

import subprocess
import sys


def test_importing_the_http2_driver_leaves_h2_and_hpack_unloaded() -> None:
    code = ("import sys, anyurl.handlers.http2 as m; "
            "print(sorted(n for n in ('h2.connection', 'h2.events', 'hpack') if n in sys.modules)); "
            "m._load_h2(); print('h2.connection' in sys.modules, 'h2.events' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split("\n")[:2] == ["[]", "True True"]

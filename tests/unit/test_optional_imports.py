"""The ecosystem adapters stay optional: importing anyurl loads none of them."""

from __future__ import annotations

import os
import subprocess
import sys


def test_import_anyurl_loads_no_heavy_dependency() -> None:
    code = ("import sys, anyurl, anyurl.cli.commands; "
            "print(sorted(m for m in ('fsspec', 'scrapy', 'twisted', 'dask', 'distributed', 'pandas') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}, check=True)
    assert out.stdout.strip() == "[]"

"""Build the bench venv: ``python3 bench/make_venv.py`` (``make bench`` does it).

bench/.venv gets anyurl installed from this tree as a wheel (``pip install .``,
not editable), so every benchmarked process imports compiled bytecode from
site-packages, as a user's install would. The venv is created once with the
packages the benchmarks compare against (uvloop, aioftp, aiosmtpd for the
SMTP server fixture, warcio for the warc group, and the Python HTTP peers of the ``peers`` group: pycurl,
curl_cffi, httpx with HTTP/2, niquests; aiohttp comes with anyurl); anyurl itself is rebuilt and reinstalled on every call
so the benchmark always measures the current source.
"""

from __future__ import annotations

import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / "bench" / ".venv"
EXTRA = ["uvloop>=0.19", "aioftp>=0.22", "aiosmtpd>=1.4.4",
         "pycurl>=7.45", "curl_cffi>=0.7", "httpx[http2]>=0.27", "niquests>=3.9",
         "hypercorn[h3]>=0.17"]  # the h3 group's server (fixtures/servers/hypercorn_h3.py)


def main() -> int:
    py = VENV / "bin" / "python"
    pip = [str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    if not py.exists():
        venv.create(VENV, with_pip=True)
        subprocess.run([*pip, "--upgrade", "pip"], check=True)
    # pip rebuilds a local project on every install: the current source, as a wheel
    # (no editable finder, bytecode compiled at install); dependencies only when missing
    subprocess.run([*pip, f"{ROOT}[fast,fsspec,dask,http3,warc]", *EXTRA], check=True, cwd=ROOT)
    out = subprocess.run([str(py), "-c", "import anyurl; print(anyurl.__file__)"], cwd="/",
                         capture_output=True, text=True, check=True).stdout.strip()
    print(f"bench venv {VENV}: anyurl from {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

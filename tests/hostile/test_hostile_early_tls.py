"""The CLI's early TLS session (net/tlsbio.py) against a server that breaks its TLS stream
mid-body: the same one-line error and exit code as asyncio's own TLS transport gives
(ANYURL_EARLY_TLS=0), no traceback, and no file under the final name."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures.servers.aiosmtpd_server import make_cert
from tests.hostile.fakes.tls_break import TLSBreak

import anyurl

SRC = str(Path(anyurl.__file__).parent.parent)
_DROP = ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY",
         "ANYURL_EARLY_CONNECT", "ANYURL_EARLY_TLS")


@pytest.fixture(scope="module")
def cert_key(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return make_cert(tmp_path_factory.mktemp("tls"))


def _get(url: str, out: Path, cert: Path, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in _DROP}
    return subprocess.run([sys.executable, "-m", "anyurl", "-v", "get", "-q", "-o", str(out), url],
                          capture_output=True, text=True, timeout=120,
                          env={**base, "PYTHONPATH": SRC, "SSL_CERT_FILE": str(cert), **env})


@pytest.mark.parametrize("how", ["garbage", "fin", "close_notify"])
def test_a_broken_tls_stream_mid_body_reads_as_on_asyncio_s_tls(how: str, cert_key: tuple[Path, Path],
                                                                  tmp_path: Path) -> None:
    cert, key = cert_key
    with TLSBreak(cert, key, how) as srv:
        early = _get(srv.url, tmp_path / "a", cert)
        usual = _get(srv.url, tmp_path / "b", cert, ANYURL_EARLY_TLS="0")
    assert "(TLS included)" in early.stderr and "(TLS included)" not in usual.stderr
    assert early.returncode == usual.returncode != 0
    errors = [[line for line in p.stderr.splitlines() if line.startswith("anyurl: ")] for p in (early, usual)]
    assert errors[0] == [e.replace("/b", "/a") for e in errors[1]] and len(errors[0]) == 1, errors
    assert "Traceback" not in early.stderr
    # ssl's words only: no "[SSL: CODE]" and no C source line of OpenSSL's binding
    assert "_ssl.c" not in errors[0][0] and "[SSL" not in errors[0][0], errors
    assert not (tmp_path / "a").exists()

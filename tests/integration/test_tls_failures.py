"""A certificate the client does not trust reads the same on every TLS scheme.

Each case connects to a real server's TLS listener (nginx, vsftpd explicit and implicit,
INN's nntps port and its STARTTLS, aiosmtpd's SMTPS and STARTTLS) with the system's trust
store, which does not hold the fixtures' self-signed certificates. Before net/connect.py,
ftps and nntps said "cannot connect to HOST:PORT: Operation not permitted" (the SSL error's
errno read through os.strerror) where https said "[SSL: CERTIFICATE_VERIFY_FAILED] ...".
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from fixtures.launcher import Endpoint, Launcher

import anyurl
from anyurl.errors import mask_password
from anyurl.handlers.ftp import FTPOptions
from anyurl.handlers.mailto import SMTPSettings
from anyurl.handlers.news import NewsOptions

REASON = "certificate verify failed: self-signed certificate"
ONCE = anyurl.Retry(attempts=1)


def _case(servers: Launcher, scheme: str) -> tuple[str, str, dict[str, object]]:
    """(url, the peer the error names, Client keywords) for one TLS scheme."""
    if scheme == "https":
        ep = servers.get("nginx")
        port = ep.info["tls_port"]
        return f"https://{ep.host}:{port}/hello.txt", f"{ep.host}:{port}", {}
    if scheme in ("ftp-explicit", "ftps-implicit"):
        ep = servers.get("vsftpd_tls")
        if scheme == "ftp-explicit":
            return (f"ftp://{ep.host}:{ep.port}/pub/hello.txt", f"{ep.host}:{ep.port}",
                    {"ftp": FTPOptions(tls=True)})
        port = ep.info["implicit_port"]
        return f"ftps://urltest:urltest-pw@{ep.host}:{port}/private.txt", f"{ep.host}:{port}", {}
    ep = servers.get("inn")
    group = ep.info["group"]
    if scheme == "nntps":
        port = ep.info["tls_port"]
        return f"nntps://{ep.host}:{port}/{group}/1", f"{ep.host}:{port}", {}
    assert scheme == "nntp-starttls"
    port = ep.info["auth_port"]
    return f"nntp://{ep.host}:{port}/{group}/1", f"{ep.host}:{port}", {"news": NewsOptions(starttls=True)}


@pytest.mark.parametrize("scheme", ["https", "ftp-explicit", "ftps-implicit", "nntps", "nntp-starttls"])
async def test_an_untrusted_certificate_reads_the_same_on_every_scheme(servers: Launcher, scheme: str) -> None:
    url, peer, options = _case(servers, scheme)
    async with anyurl.Client(**options) as c:  # type: ignore[arg-type]
        with pytest.raises(anyurl.ConnectError) as info:
            await c.fetch(url, retry=ONCE)
    assert str(info.value) == f"{mask_password(url)}: TLS handshake with {peer} failed: {REASON}"


@pytest.mark.parametrize("kind", ["tls", "starttls"])
async def test_an_untrusted_smtp_relay_reads_the_same(servers: Launcher, kind: str) -> None:
    smtp: Endpoint = servers.get("aiosmtpd_server")
    port = smtp.info["tls_port" if kind == "tls" else "starttls_port"]
    settings = SMTPSettings(host=smtp.host, port=port, tls=kind == "tls", starttls=kind == "starttls" or None)
    async with anyurl.Client(smtp=settings) as c:
        with pytest.raises(anyurl.ConnectError) as info:
            await c.send_mail("mailto:bob@example.org", body="x", sender="alice@example.org")
    assert str(info.value) == f"mailto:bob@example.org: TLS handshake with SMTP relay {smtp.host}:{port} failed: {REASON}"


def test_the_command_line_says_it_too(servers: Launcher) -> None:
    # the report's own symptom: `anyurl get ftps://...` printed "Operation not permitted"
    url, peer, _ = _case(servers, "ftps-implicit")
    proc = subprocess.run([sys.executable, "-m", "anyurl", "get", url, "-o", "-"],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == anyurl.ConnectError.exit_code, proc.stderr
    assert proc.stderr.strip().endswith(f"TLS handshake with {peer} failed: {REASON}"), proc.stderr

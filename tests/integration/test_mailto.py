"""mailto: against a real aiosmtpd writing to a Maildir (plain, STARTTLS, SMTPS, AUTH)."""

from __future__ import annotations

import asyncio
import email
import email.policy
import mailbox
import os
import shutil
import subprocess
import sys
import time
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from fixtures.launcher import Endpoint, Launcher

import anyurl
from anyurl.errors import AccessDenied, ConnectError, ResourceNotFound, UnsafeURL
from anyurl.handlers.mailto import SMTPSettings


@pytest.fixture(scope="module")
def smtp(servers: Launcher) -> Endpoint:
    return servers.get("aiosmtpd_server")


def delivered_files(ep: Endpoint) -> list[EmailMessage]:
    """Every message file in the server's Maildir, parsed."""
    box = mailbox.Maildir(ep.info["maildir"], create=False)
    result = []
    for key in box.keys():
        with box.get_file(key) as f:
            msg = email.message_from_binary_file(f, policy=email.policy.default)
        assert isinstance(msg, EmailMessage)
        result.append(msg)
    return result


def delivered(ep: Endpoint) -> dict[str, EmailMessage]:
    """Every delivered message by Message-ID (aiosmtpd stores one file per message)."""
    return {str(m["Message-ID"]): m for m in delivered_files(ep)}


def server_log(ep: Endpoint) -> str:
    """aiosmtpd's dialogue log (every command and reply)."""
    return Path(ep.info["log"]).read_text()


def count(ep: Endpoint) -> int:
    return len(os.listdir(Path(ep.info["maildir"]) / "new"))


def plain(ep: Endpoint, **kw: Any) -> anyurl.Client:
    return anyurl.Client(smtp=SMTPSettings(host=ep.host, port=ep.port, **kw))


async def test_delivered_envelope_headers_body(smtp: Endpoint) -> None:
    url = "mailto:bob@example.org,carol@example.org?subject=Report&cc=dan@example.org&bcc=eve@example.org"
    async with plain(smtp) as client:
        sent = await client.send_mail(url, body="Hello Bob.\n.a line that starts with a dot\n",
                                      sender="alice@example.org")
    assert sent.reply.startswith("250")
    msg = delivered(smtp)[sent.message_id]
    # the envelope, as the server recorded it
    assert msg["X-MailFrom"] == "alice@example.org"
    assert msg["X-RcptTo"] == "bob@example.org, carol@example.org, dan@example.org, eve@example.org"
    assert msg["From"] == "alice@example.org"
    assert msg["To"] == "bob@example.org, carol@example.org"
    assert msg["Cc"] == "dan@example.org"
    assert msg["Bcc"] is None
    assert msg["Subject"] == "Report"
    assert email.utils.parsedate_to_datetime(str(msg["Date"])).tzinfo is not None
    body = msg.get_content().replace("\r\n", "\n")
    assert body == "Hello Bob.\n.a line that starts with a dot\n"  # dot-stuffing undone by the server
    log = server_log(smtp)
    assert "b'RCPT TO:<eve@example.org>'" in log and "b'MAIL FROM:<alice@example.org>'" in log


async def test_rfc1738_url_body_from_url(smtp: Endpoint) -> None:
    async with plain(smtp, sender="robot@example.org") as client:
        sent = await client.send_mail("mailto:%22first%20last%22@example.org?body=from%20the%20URL")
    msg = delivered(smtp)[sent.message_id]
    assert msg["X-RcptTo"] == '"first last"@example.org'
    assert msg["X-MailFrom"] == "robot@example.org"
    assert msg.get_content().strip() == "from the URL"


async def test_non_ascii_and_attachments(smtp: Endpoint, tmp_path: Path) -> None:
    blob = os.urandom(70_000)
    path = tmp_path / "blob.bin"
    path.write_bytes(blob)
    async with plain(smtp) as client:
        sent = await client.send_mail(
            "mailto:bob@example.org", subject="Grüße aus Köln ✉", body="Ünïcödé body: naïve café\n",
            sender="alice@example.org",
            attachments=[path, ("table.csv", b"a,b\n1,2\n", "text/csv")])
    msg = delivered(smtp)[sent.message_id]
    assert msg["Subject"] == "Grüße aus Köln ✉"
    assert msg.get_content_type() == "multipart/mixed"
    text = msg.get_body(("plain",))
    assert text is not None and "Ünïcödé body: naïve café" in text.get_content()
    atts = {a.get_filename(): a for a in msg.iter_attachments()}
    assert set(atts) == {"blob.bin", "table.csv"}
    assert atts["blob.bin"].get_payload(decode=True) == blob
    assert atts["table.csv"].get_content_type() == "text/csv"
    assert atts["table.csv"].get_payload(decode=True) == b"a,b\n1,2\n"


@pytest.mark.parametrize("kind", ["starttls", "tls"])
@pytest.mark.parametrize("trust", ["cafile", "no-validation"])
async def test_tls_with_auth(smtp: Endpoint, kind: str, trust: str) -> None:
    port = smtp.info["starttls_port" if kind == "starttls" else "tls_port"]
    tls_kw: dict[str, Any] = {"cafile": smtp.info["cafile"]} if trust == "cafile" else {"verify": False}
    settings = SMTPSettings(host=smtp.host, port=port, starttls=True if kind == "starttls" else None,
                            tls=kind == "tls", username="urltest", password="urltest-pw", **tls_kw)
    auth_ok = server_log(smtp).count("235 2.7.0 Authentication successful")
    starttls = server_log(smtp).count(">> b'STARTTLS'")
    async with anyurl.Client(smtp=settings) as client:
        sent = await client.send_mail("mailto:bob@example.org", subject=f"over {kind}", body="secret\n",
                                      sender="alice@example.org")
    msg = delivered(smtp)[sent.message_id]
    assert msg["Subject"] == f"over {kind}"
    text = server_log(smtp)
    assert text.count("235 2.7.0 Authentication successful") == auth_ok + 1
    assert text.count(">> b'STARTTLS'") == starttls + (kind == "starttls")


@pytest.mark.parametrize("kind", ["starttls", "tls"])
async def test_self_signed_refused_by_default(smtp: Endpoint, kind: str) -> None:
    port = smtp.info["starttls_port" if kind == "starttls" else "tls_port"]
    settings = SMTPSettings(host=smtp.host, port=port, starttls=True if kind == "starttls" else None,
                            tls=kind == "tls", username="urltest", password="urltest-pw")
    before = count(smtp)
    async with anyurl.Client(smtp=settings) as client:
        with pytest.raises(ConnectError, match="certificate verify failed: self-signed certificate"):
            await client.send_mail("mailto:bob@example.org", body="x", sender="alice@example.org")
    assert count(smtp) == before


async def test_auth_failed(smtp: Endpoint) -> None:
    settings = SMTPSettings(host=smtp.host, port=smtp.info["starttls_port"], starttls=True,
                            cafile=smtp.info["cafile"], username="urltest", password="wrong")
    before = count(smtp)
    async with anyurl.Client(smtp=settings) as client:
        with pytest.raises(AccessDenied) as info:
            await client.send_mail("mailto:bob@example.org", body="x", sender="alice@example.org")
    assert info.value.reply is not None and info.value.reply.startswith("535")
    assert count(smtp) == before


async def test_auth_required(smtp: Endpoint) -> None:
    settings = SMTPSettings(host=smtp.host, port=smtp.info["starttls_port"], starttls=True,
                            cafile=smtp.info["cafile"])
    async with anyurl.Client(smtp=settings) as client:
        with pytest.raises(AccessDenied) as info:
            await client.send_mail("mailto:bob@example.org", body="x", sender="alice@example.org")
    assert info.value.reply is not None and info.value.reply.startswith("530")


async def test_recipient_refused_nothing_delivered(smtp: Endpoint) -> None:
    before = count(smtp)
    async with plain(smtp) as client:
        with pytest.raises(ResourceNotFound) as info:
            await client.send_mail("mailto:bob@example.org,nobody@refused.example", body="x",
                                   sender="alice@example.org")
        assert "User unknown" in str(info.value) and "nobody@refused.example" in str(info.value)
        with pytest.raises(AccessDenied, match="Relay access denied"):
            await client.send_mail("mailto:someone@elsewhere.example", body="x", sender="alice@example.org")
    assert count(smtp) == before  # the accepted recipient got nothing either


@pytest.mark.parametrize("url", [
    "mailto:bob@example.org?subject=Hi%0D%0ABcc:%20victim@example.org",
    "mailto:bob@example.org?subject=Hi%0ABcc:%20victim@example.org",
    "mailto:bob@example.org%0D%0ARCPT%20TO:%3Cvictim@example.org%3E",
    "mailto:bob@example.org?cc=x@example.org%0D%0AX-Injected:%201",
    "mailto:bob@example.org?from=boss@example.org",
])
async def test_injection_refused_nothing_sent(smtp: Endpoint, url: str) -> None:
    before = count(smtp)
    peers_before = server_log(smtp).count("mail.log Peer: ")
    async with plain(smtp) as client:
        with pytest.raises(UnsafeURL):
            await client.send_mail(url, body="x", sender="alice@example.org")
    assert count(smtp) == before
    assert server_log(smtp).count("mail.log Peer: ") == peers_before  # not even a connection


async def test_injection_through_arguments_refused(smtp: Endpoint) -> None:
    before = count(smtp)
    async with plain(smtp) as client:
        with pytest.raises(UnsafeURL):
            await client.send_mail("mailto:bob@example.org", subject="x\r\nBcc: victim@example.org")
        with pytest.raises(UnsafeURL):
            await client.send_mail("mailto:bob@example.org", sender="a@example.org\r\nRCPT TO:<v@x.org>")
    assert count(smtp) == before


async def test_environment_settings(smtp: Endpoint, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANYURL_SMTP_HOST", smtp.host)
    monkeypatch.setenv("ANYURL_SMTP_PORT", str(smtp.info["tls_port"]))
    monkeypatch.setenv("ANYURL_SMTP_TLS", "1")
    monkeypatch.setenv("ANYURL_SMTP_CAFILE", smtp.info["cafile"])
    monkeypatch.setenv("ANYURL_SMTP_USER", "urltest")
    monkeypatch.setenv("ANYURL_SMTP_PASSWORD", "urltest-pw")
    monkeypatch.setenv("ANYURL_SMTP_FROM", "env-sender@example.org")
    async with anyurl.Client() as client:
        sent = await client.send_mail("mailto:bob@example.org?subject=via%20env")
    msg = delivered(smtp)[sent.message_id]
    assert msg["X-MailFrom"] == "env-sender@example.org" and msg["Subject"] == "via env"


async def test_connection_refused(smtp: Endpoint) -> None:
    from fixtures.launcher import free_ports

    async with anyurl.Client(smtp=SMTPSettings(host="127.0.0.1", port=free_ports(1)[0])) as client:
        with pytest.raises(ConnectError):
            await client.send_mail("mailto:bob@example.org", body="x", sender="alice@example.org")


def _cli(args: list[str], stdin: bytes, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    root = Path(__file__).resolve().parents[2]
    return subprocess.run([sys.executable, "-m", "anyurl", *args], input=stdin, capture_output=True,
                          timeout=60, env={**os.environ, **env}, cwd=root)


def test_cli_send_and_get(smtp: Endpoint, tmp_path: Path) -> None:
    att = tmp_path / "notes.txt"
    att.write_bytes(b"attached via the CLI\n")
    env = {"ANYURL_SMTP_HOST": smtp.host, "ANYURL_SMTP_PORT": str(smtp.info["starttls_port"]),
           "ANYURL_SMTP_STARTTLS": "1", "ANYURL_SMTP_CAFILE": smtp.info["cafile"],
           "ANYURL_SMTP_USER": "urltest", "ANYURL_SMTP_PASSWORD": "urltest-pw"}
    subject = f"cli {os.getpid()} ünïcode"
    proc = _cli(["send", "mailto:bob@example.org?cc=carol@example.org", "-s", subject,
                 "--from", "alice@example.org", "--attach", str(att)], "Body from stdin ✓\n".encode(), env)
    assert proc.returncode == 0, proc.stderr
    [msg] = [m for m in delivered(smtp).values() if m["Subject"] == subject]
    assert msg["X-MailFrom"] == "alice@example.org"
    assert msg["X-RcptTo"] == "bob@example.org, carol@example.org"
    text = msg.get_body(("plain",))
    assert text is not None and text.get_content().strip() == "Body from stdin ✓"
    [a] = list(msg.iter_attachments())
    assert a.get_filename() == "notes.txt" and a.get_payload(decode=True) == b"attached via the CLI\n"
    # fetching a mailto URL says what to do instead, with the NotRetrievable exit code
    got = _cli(["get", "mailto:bob@example.org"], b"", env)
    assert got.returncode == 5 and b"send" in got.stderr
    # injection through the CLI: refused, nothing delivered
    before = count(smtp)
    bad = _cli(["send", "mailto:bob@example.org?subject=x%0D%0ABcc:%20v@example.org"], b"x\n", env)
    assert bad.returncode == 4 and count(smtp) == before


# -- a real MTA as the second peer: Exim 4 ---------------------------------------------------


@pytest.fixture(scope="module")
def exim(servers: Launcher) -> Endpoint:
    if not servers.compose and (os.geteuid() != 0 or shutil.which("exim4") is None):
        pytest.skip("needs root and exim4-daemon-light")
    return servers.get("exim")


def wait_delivered(ep: Endpoint, message_id: str, copies: int, timeout: float = 15) -> list[EmailMessage]:
    """Exim delivers in a child process after accepting, one copy per recipient: poll the Maildir."""
    deadline = time.monotonic() + timeout
    while True:
        found = [m for m in delivered_files(ep) if m["Message-ID"] == message_id]
        if len(found) >= copies:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"{message_id} not delivered in {timeout}s")
        time.sleep(0.05)


def exim_settings(ep: Endpoint, **kw: Any) -> SMTPSettings:
    return SMTPSettings(host=ep.host, port=ep.port, cafile=ep.info["cafile"], **kw)


async def test_exim_starttls_auth_delivery(exim: Endpoint) -> None:
    settings = exim_settings(exim, starttls=True, username="urltest", password="urltest-pw")
    async with anyurl.Client(smtp=settings) as client:
        sent = await client.send_mail(
            "mailto:bob@example.org?cc=carol@example.org&bcc=dave@example.org&subject=Gr%C3%BC%C3%9Fe",
            body="Über Exim.\n.dot line\n", sender="alice@example.org", attachments=[("b.bin", bytes(range(256)))])
    assert sent.reply.startswith("250")
    copies = await asyncio.to_thread(wait_delivered, exim, sent.message_id, 3)
    # Exim records the envelope as Return-path and Envelope-to, one copy per recipient
    assert {m["Envelope-to"] for m in copies} == {"bob@example.org", "carol@example.org", "dave@example.org"}
    msg = copies[0]
    assert all(m["Return-path"] == "<alice@example.org>" for m in copies)
    assert msg["To"] == "bob@example.org" and msg["Cc"] == "carol@example.org"
    assert msg["Subject"] == "Grüße" and msg["Bcc"] is None
    text = msg.get_body(("plain",))
    assert text is not None and text.get_content().replace("\r\n", "\n") == "Über Exim.\n.dot line\n"
    [att] = list(msg.iter_attachments())
    assert att.get_payload(decode=True) == bytes(range(256))
    log = await asyncio.to_thread(server_log, exim)
    assert "A=plain_server:urltest" in log or "A=login_server:urltest" in log  # authenticated
    assert "X=TLS" in log


async def test_exim_refusals(exim: Endpoint) -> None:
    before = len(await asyncio.to_thread(delivered_files, exim))
    async with anyurl.Client(smtp=exim_settings(exim, starttls=True, username="urltest",
                                                 password="wrong")) as client:
        with pytest.raises(AccessDenied) as info:
            await client.send_mail("mailto:bob@example.org", body="x", sender="alice@example.org")
        assert info.value.reply is not None and info.value.reply.startswith("535")
    async with anyurl.Client(smtp=exim_settings(exim)) as client:
        with pytest.raises(ResourceNotFound, match="unknown user"):
            await client.send_mail("mailto:bob@example.org,nobody@refused.example", body="x",
                                   sender="alice@example.org")
        with pytest.raises(AccessDenied, match="relay not permitted"):
            await client.send_mail("mailto:x@elsewhere.example", body="x", sender="alice@example.org")
    # without a trusted certificate, the opportunistic STARTTLS upgrade fails closed
    async with anyurl.Client(smtp=SMTPSettings(host=exim.host, port=exim.port)) as client:
        with pytest.raises(ConnectError, match="certificate verify failed: self-signed certificate"):
            await client.send_mail("mailto:bob@example.org", body="x", sender="alice@example.org")
    log = await asyncio.to_thread(server_log, exim)
    assert "rejected RCPT <nobody@refused.example>" in log
    await asyncio.sleep(1)  # a (wrong) delivery would happen in this time
    assert len(await asyncio.to_thread(delivered_files, exim)) == before  # bob got nothing either

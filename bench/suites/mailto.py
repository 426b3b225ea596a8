"""mailto: anyurl vs curl and Python's smtplib, submitting to the same Exim, side by side.

``python -m bench.run mailto [--quick]``:

1. one message with an 8 MiB attachment (2 MiB with --quick):
   ``anyurl send --attach FILE`` vs a stdlib script (email + smtplib composing the
   same message) vs ``curl smtp://... -T message.eml`` (curl only uploads a message
   composed beforehand, so it does less work);
2. 50 small messages (20 with --quick), one connection each, in one process:
   ``Client.send_mail`` vs ``smtplib.SMTP.send_message``, to aiosmtpd (Exim takes
   ~0.25 s per message here, which would hide the clients' costs).

Exim (a real MTA) is the peer for the big message: aiosmtpd's fixture logs every
DATA line and would measure its own logging. Ratios > 1 mean faster than the reference.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from email.message import EmailMessage
from pathlib import Path

from bench.harness import Case, anyurl_cmd, bench_env, compare, python_cmd

SENDER, RCPT = "alice@example.org", "bob@example.org"


def _message(path: Path) -> EmailMessage:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = SENDER, RCPT, "bench"
    msg.set_content("benchmark body\n")
    msg.add_attachment(path.read_bytes(), maintype="application", subtype="octet-stream", filename=path.name)
    return msg


def run(launcher: object, quick: bool) -> None:
    ep = launcher.get("exim")  # type: ignore[attr-defined]
    host, port = ep.host, str(ep.port)
    size = (2 if quick else 8) << 20
    n_small = 20 if quick else 50
    work = Path(tempfile.mkdtemp(prefix="bench-mailto-"))
    big = work / "big.bin"
    big.write_bytes(os.urandom(size))
    body = work / "body.txt"
    body.write_text("benchmark body\n")
    eml = work / "message.eml"
    eml.write_bytes(_message(big).as_bytes())
    env = bench_env(ANYURL_SMTP_HOST=host, ANYURL_SMTP_PORT=port, ANYURL_SMTP_STARTTLS="0")
    curl = shutil.which("curl") or "curl"
    try:
        send = anyurl_cmd("send", "-q", f"mailto:{RCPT}?subject=bench", "--from", SENDER, "--attach", str(big))
        compare(f"mailto: one message with a {size >> 20} MiB attachment to Exim", [
            Case("anyurl send --attach", ["sh", "-c", f'exec "$0" "$@" < {body}', *send], env=env),
            Case("python email+smtplib", python_cmd("-m", "bench.suites.mailto", "smtplib-attach", host, port,
                                                    str(big))),
            Case("curl -T message.eml", [curl, "-sS", f"smtp://{host}:{port}", "--mail-from", SENDER,
                                         "--mail-rcpt", RCPT, "-T", str(eml)]),
        ], "python email+smtplib", unit_work=(size / (1 << 20), "MiB"))
        small = launcher.get("aiosmtpd_server")  # type: ignore[attr-defined]
        shost, sport = small.host, str(small.port)
        compare(f"mailto: {n_small} small messages, one connection each, to aiosmtpd", [
            Case("anyurl Client.send_mail x N", python_cmd("-m", "bench.suites.mailto", "api", shost, sport,
                                                            str(n_small))),
            Case("smtplib send_message x N", python_cmd("-m", "bench.suites.mailto", "smtplib", shost, sport,
                                                       str(n_small))),
        ], "smtplib send_message x N", unit_work=(n_small, "msg"))
    finally:
        shutil.rmtree(work, ignore_errors=True)


async def _api(host: str, port: int, n: int) -> None:
    import anyurl
    from anyurl.handlers.mailto import SMTPSettings

    async with anyurl.Client(smtp=SMTPSettings(host=host, port=port, starttls=False)) as client:
        for i in range(n):
            await client.send_mail(f"mailto:{RCPT}?subject=bench%20{i}", body="small body\n", sender=SENDER)


def main(argv: list[str]) -> None:
    import smtplib

    mode, host, port = argv[0], argv[1], int(argv[2])
    if mode == "api":
        asyncio.run(_api(host, port, int(argv[3])))
    elif mode == "smtplib":
        for i in range(int(argv[3])):
            msg = EmailMessage()
            msg["From"], msg["To"], msg["Subject"] = SENDER, RCPT, f"bench {i}"
            msg.set_content("small body\n")
            with smtplib.SMTP(host, port) as s:
                s.send_message(msg)
    elif mode == "smtplib-attach":
        with smtplib.SMTP(host, port) as s:
            s.send_message(_message(Path(argv[3])))
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main(sys.argv[1:])

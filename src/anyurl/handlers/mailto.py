"""mailto: compose a message for the URL's address and hand it to an SMTP relay (aiosmtplib).

A mailto URL designates a mailbox, not a data object (RFC 1738 section 3.5),
so ``open``/``fetch`` raise :class:`NotRetrievable`; use
``client.send_mail(url, subject=..., body=...)`` or ``anyurl send URL``.

The relay comes from, in this order: ``Client(smtp=SMTPSettings(...))``; the
``ANYURL_SMTP_*`` environment variables; the TOML file named by
``ANYURL_SMTP_CONFIG`` or ``~/.config/anyurl/smtp.toml``. See docs/mailto.md.
"""

from __future__ import annotations

import asyncio
import os
import ssl
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from email.message import EmailMessage
from pathlib import Path

import aiosmtplib

from ..errors import (
    AccessDenied,
    AnyURLError,
    ConfigurationError,
    ConnectError,
    FetchTimeout,
    NotRetrievable,
    ProtocolError,
    ResourceNotFound,
    TemporaryFailure,
    TransferError,
)
from ..net.connect import connect_failure
from ..net.tls import client_context
from ..protocols.mail import (
    Attachment,
    check_address,
    compose,
    envelope_recipients,
    fields_from_url,
)
from ..response import Body
from ..settings import SMTPSettings
from ..urls import URL, MailtoURL
from .base import Context, Handler, Request

__all__ = ["AttachmentSource", "MailtoHandler", "SMTPSettings", "SentMail", "load_settings"]

AttachmentSource = Attachment | str | os.PathLike[str] | tuple[str, bytes] | tuple[str, bytes, str]


@dataclass(frozen=True)
class SentMail:
    """What :meth:`MailtoHandler.send_mail` sent: ids, envelope and the relay's final reply."""

    message_id: str
    sender: str
    recipients: tuple[str, ...]
    reply: str
    message: EmailMessage


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _flag(name: str, value: str) -> bool:
    v = value.strip().lower()
    if v in _TRUE:
        return True
    if v in _FALSE:
        return False
    raise ConfigurationError(f"{name}={value!r}: expected 1/0, true/false, yes/no")


def settings_from_env(env: Mapping[str, str]) -> SMTPSettings | None:
    """SMTPSettings from ``ANYURL_SMTP_HOST`` and friends, or None without a host."""
    host = env.get("ANYURL_SMTP_HOST")
    if not host:
        return None
    port = env.get("ANYURL_SMTP_PORT")
    try:
        port_n = int(port) if port else None
    except ValueError as exc:
        raise ConfigurationError(f"ANYURL_SMTP_PORT={port!r} is not a number") from exc
    starttls = env.get("ANYURL_SMTP_STARTTLS")
    validate = env.get("ANYURL_SMTP_VALIDATE_CERTS")
    return SMTPSettings(
        host=host, port=port_n,
        starttls=_flag("ANYURL_SMTP_STARTTLS", starttls) if starttls else None,
        tls=_flag("ANYURL_SMTP_TLS", env["ANYURL_SMTP_TLS"]) if env.get("ANYURL_SMTP_TLS") else False,
        username=env.get("ANYURL_SMTP_USER") or None, password=env.get("ANYURL_SMTP_PASSWORD") or None,
        verify=_flag("ANYURL_SMTP_VALIDATE_CERTS", validate) if validate else True,
        cafile=env.get("ANYURL_SMTP_CAFILE") or None, sender=env.get("ANYURL_SMTP_FROM") or None,
    )


def config_path(env: Mapping[str, str]) -> Path:
    """``$ANYURL_SMTP_CONFIG``, else ``$XDG_CONFIG_HOME/anyurl/smtp.toml`` (~/.config by default)."""
    if env.get("ANYURL_SMTP_CONFIG"):
        return Path(env["ANYURL_SMTP_CONFIG"])
    base = env.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "anyurl" / "smtp.toml"


def settings_from_file(path: Path) -> SMTPSettings | None:
    """SMTPSettings from a TOML file whose keys are the field names; None if absent."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigurationError(f"cannot read SMTP settings from {path}: {exc}") from exc
    data = data.get("smtp", data)  # a [smtp] table or top-level keys
    known = {f.name: f.type for f in fields(SMTPSettings)}
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise ConfigurationError(f"{path}: unknown SMTP setting(s) {', '.join(unknown)}; "
                                 f"known: {', '.join(known)}")
    try:
        return SMTPSettings(**data)
    except TypeError as exc:
        raise ConfigurationError(f"{path}: {exc}") from exc


HOW_TO_CONFIGURE = (
    "no SMTP relay is configured: pass Client(smtp=anyurl.SMTPSettings(host=..., port=...)), "
    "or set ANYURL_SMTP_HOST (and ANYURL_SMTP_PORT, ANYURL_SMTP_USER, ANYURL_SMTP_PASSWORD, "
    "ANYURL_SMTP_STARTTLS, ANYURL_SMTP_TLS), or write host = \"...\" in {path}"
)


def load_settings(client_settings: SMTPSettings | None, env: Mapping[str, str] | None = None) -> SMTPSettings:
    """The first configured source: Client option, environment, config file."""
    env = os.environ if env is None else env
    if client_settings is not None and client_settings.host:
        return client_settings
    from_env = settings_from_env(env)
    if from_env is not None:
        return from_env
    path = config_path(env)
    from_file = settings_from_file(path)
    if from_file is not None and from_file.host:
        return from_file
    raise ConfigurationError(HOW_TO_CONFIGURE.format(path=path))


def _reply_text(exc: aiosmtplib.SMTPResponseException) -> str:
    return f"{exc.code} {exc.message}"


def _is_policy_refusal(code: int, text: str) -> bool:
    # 5.7.x enhanced codes are "security or policy status" (RFC 3463); 530 = authentication required
    t = text.lower()
    return code in (530, 535, 554) or " 5.7." in f" {t}" or "relay" in t or "authentication" in t


def translate(exc: BaseException, url: object, settings: SMTPSettings) -> AnyURLError:
    """An aiosmtplib/ssl/OS error as an anyurl error carrying the server's reply."""
    relay = f"{settings.host}:{settings.effective_port}"
    if isinstance(exc, aiosmtplib.SMTPAuthenticationError):
        return AccessDenied(f"SMTP authentication as {settings.username!r} failed at {relay}", url=url,
                            reply=_reply_text(exc))
    if isinstance(exc, aiosmtplib.SMTPRecipientRefused):
        text = _reply_text(exc)
        if 400 <= exc.code < 500:
            return TemporaryFailure(f"recipient <{exc.recipient}> temporarily refused", url=url, reply=text)
        if _is_policy_refusal(exc.code, exc.message):
            return AccessDenied(f"relay {relay} refused recipient <{exc.recipient}> (relaying denied or "
                                "authentication required)", url=url, reply=text)
        return ResourceNotFound(f"recipient <{exc.recipient}> refused", url=url, reply=text)
    if isinstance(exc, aiosmtplib.SMTPSenderRefused):
        text = _reply_text(exc)
        if 400 <= exc.code < 500:
            return TemporaryFailure(f"sender <{exc.sender}> temporarily refused", url=url, reply=text)
        if _is_policy_refusal(exc.code, exc.message):
            return AccessDenied(f"relay {relay} refused sender <{exc.sender}> (authentication required?)",
                                url=url, reply=text)
        return ProtocolError(f"sender <{exc.sender}> refused", url=url, reply=text)
    if isinstance(exc, aiosmtplib.SMTPNotSupported):
        return ProtocolError(f"{relay}: {exc.message}", url=url)
    if isinstance(exc, aiosmtplib.SMTPTimeoutError | TimeoutError):
        return FetchTimeout(f"SMTP relay {relay} timed out", url=url)
    if isinstance(exc, aiosmtplib.SMTPConnectError | aiosmtplib.SMTPServerDisconnected):
        cause = exc.__cause__ or exc.__context__
        if isinstance(cause, ssl.SSLError):  # aiosmtplib's own handshake: worded as every scheme's
            return connect_failure(cause, url, f"SMTP relay {relay}")
        return ConnectError(f"cannot talk to SMTP relay {relay}: {exc}", url=url)
    if isinstance(exc, aiosmtplib.SMTPResponseException):
        cls = TemporaryFailure if 400 <= exc.code < 500 else ProtocolError
        return cls(f"SMTP relay {relay} refused the message", url=url, reply=_reply_text(exc))
    if isinstance(exc, OSError):  # ssl.SSLError too
        return connect_failure(exc, url, f"SMTP relay {relay}")
    if isinstance(exc, aiosmtplib.SMTPException):
        return ProtocolError(f"SMTP relay {relay}: {exc}", url=url)
    return TransferError(f"sending through {relay} failed: {exc}", url=url)


def _make_tls_context(settings: SMTPSettings) -> ssl.SSLContext:
    return client_context(settings.verify and settings.validate_certs, settings.cafile, settings.ssl_context)


def _load_attachment(item: AttachmentSource) -> Attachment:
    if isinstance(item, Attachment):
        return item
    if isinstance(item, tuple):
        if len(item) == 3:
            return Attachment(item[0], bytes(item[1]), item[2])
        return Attachment(item[0], bytes(item[1]))
    path = Path(os.fspath(item))
    try:
        return Attachment(path.name, path.read_bytes())
    except FileNotFoundError as exc:
        raise ResourceNotFound(f"attachment {path} does not exist") from exc
    except OSError as exc:
        raise AccessDenied(f"cannot read attachment {path}: {exc.strerror or exc}") from exc


class MailtoHandler(Handler):
    """Sends mail to mailto: URLs through the configured SMTP relay."""


    def __init__(self, context: Context) -> None:
        super().__init__(context)
        self._tls_cache: dict[tuple[bool, str | None], ssl.SSLContext] = {}

    async def open(self, req: Request) -> Body:
        """Always raises NotRetrievable: a mailbox is not a data object."""
        url = req.url
        raise NotRetrievable("a mailto URL designates a mailbox, not a data object: send to it with "
                             "client.send_mail(url, subject=..., body=...) or `anyurl send URL`", url=url)

    def settings(self) -> SMTPSettings:
        """The relay settings this client uses (see :func:`load_settings`)."""
        return load_settings(self.context.options_for("smtp", SMTPSettings))

    async def send_mail(  # type: ignore[override]  # the one scheme that sends: its own fields
        self, req: Request, *, subject: str | None = None, body: str | None = "",
        sender: str | None = None, attachments: Sequence[AttachmentSource] = (),
        cc: Iterable[str] = (), bcc: Iterable[str] = (),
    ) -> SentMail:
        """Compose a message for *url* and submit it; returns what was sent.

        *subject*/*body* override the URL's ``?subject=``/``?body=`` (a body of
        ``""`` keeps the URL's). Every address and header is checked before
        any connection: CR/LF/NUL raise UnsafeURL and nothing is sent. A
        refused recipient aborts the transaction before DATA.
        """
        url = req.url
        if not isinstance(url, MailtoURL):
            raise NotRetrievable("send_mail needs a mailto URL", url=url)
        mail_fields = fields_from_url(url, subject=subject, body=body or None, cc=cc, bcc=bcc)
        try:
            settings = self.settings()
        except ConfigurationError as exc:  # the message names the URL, as every other error does
            raise ConfigurationError(exc.message, url=url) from exc
        from_addr = check_address(sender or settings.sender or self.context.anonymous_email, url=url,
                                  what="sender")
        loaded = await asyncio.to_thread(lambda: [_load_attachment(a) for a in attachments]) if attachments else []
        msg = compose(mail_fields, sender=from_addr, attachments=loaded, user_agent=self.context.user_agent)
        recipients = envelope_recipients(mail_fields)
        data = msg.as_bytes()
        reply = await self._submit(url, settings, from_addr, recipients, data)
        return SentMail(message_id=str(msg["Message-ID"]), sender=from_addr, recipients=tuple(recipients),
                        reply=reply, message=msg)

    async def _tls_context(self, settings: SMTPSettings) -> ssl.SSLContext | None:
        """The TLS context for *settings*, built once per (validate, cafile): loading the
        system CA store takes ~0.1 s, too much to repeat for every message."""
        if settings.starttls is False and not settings.tls:
            return None
        key = (settings.verify and settings.validate_certs, settings.cafile)
        if key not in self._tls_cache:
            self._tls_cache[key] = await asyncio.to_thread(_make_tls_context, settings)
        return self._tls_cache[key]

    async def _submit(self, url: URL, settings: SMTPSettings, sender: str, recipients: list[str],
                      data: bytes) -> str:
        assert settings.host is not None
        if settings.username and settings.password is None:
            asked = await self.context.ask_password(settings.username, settings.host)
            settings = replace(settings, password=asked)
        smtp = aiosmtplib.SMTP(
            hostname=settings.host, port=settings.effective_port, use_tls=settings.tls,
            start_tls=False if settings.tls else settings.starttls,
            tls_context=await self._tls_context(settings), timeout=self.context.timeouts.read,
            local_hostname=settings.local_hostname,
        )
        try:
            try:
                async with asyncio.timeout(self.context.timeouts.connect):
                    await smtp.connect()
            except TimeoutError as exc:
                raise FetchTimeout(f"connecting to SMTP relay {settings.host}:{settings.effective_port} "
                                   "timed out", url=url) from exc
            if settings.username:
                await smtp.login(settings.username, settings.password or "")
            await smtp.mail(sender)
            try:
                for rcpt in recipients:
                    await smtp.rcpt(rcpt)
            except aiosmtplib.SMTPRecipientRefused:
                # nothing is delivered unless every recipient is accepted
                try:
                    await smtp.rset()
                except (aiosmtplib.SMTPException, OSError):
                    pass  # the refusal is the error worth reporting
                raise
            response = await smtp.data(data)
            return f"{response.code} {response.message}"
        except AnyURLError:
            raise
        except (aiosmtplib.SMTPException, ssl.SSLError, OSError) as exc:
            raise translate(exc, url, settings) from exc
        finally:
            if smtp.is_connected:
                try:
                    await smtp.quit()
                except (aiosmtplib.SMTPException, OSError):
                    smtp.close()

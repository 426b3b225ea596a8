"""mailto: logic with no I/O: address checks, URL header fields, message composition.

RFC 1738 section 3.5 gives ``mailto:<rfc822-addr-spec>``; RFC 6068 adds
several comma-separated addresses and ``?name=value&...`` header fields, as
found in links on the web. :func:`fields_from_url` turns a parsed
:class:`~anyurl.urls.MailtoURL` into checked :class:`MailFields`;
:func:`compose` builds the :class:`email.message.EmailMessage` that the
handler hands to an SMTP relay.

Everything that could end up on an SMTP command line or in a header is
checked here first: CR, LF or NUL in an address or header value (for
example a ``Bcc:`` smuggled in through ``?subject=``) raises
:class:`~anyurl.errors.UnsafeURL` before anything is sent.
"""

from __future__ import annotations

import email.policy
import email.utils
import mimetypes
import re
from collections.abc import Iterable, Sequence
from email.headerregistry import Address
from email.message import EmailMessage

from .._record import Record
from ..errors import UnsafeURL, URLSyntaxError
from ..urls import MailtoURL
from .lines import refuse_controls

_set = object.__setattr__  # how a frozen Record's __init__ sets its fields

__all__ = [
    "ALLOWED_HEADERS",
    "Attachment",
    "MailFields",
    "check_address",
    "check_header_value",
    "compose",
    "envelope_recipients",
    "fields_from_url",
    "split_addresses",
]

# Header fields a mailto URL may set. RFC 6068 section 7: a URL must not be able
# to forge the origin or routing of a message (From, Sender, Received, ...),
# nor its MIME structure, so everything else is refused.
ALLOWED_HEADERS = frozenset(
    {"to", "cc", "bcc", "subject", "body", "in-reply-to", "references", "keywords", "comments"}
)

# RFC 5322 section 3.2.3: atext, dot-atom; 3.2.4: quoted-string; 3.4.1: addr-spec.
_ATEXT = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]"
_DOT_ATOM = rf"{_ATEXT}+(?:\.{_ATEXT}+)*"
_QUOTED = r'"(?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\[\x20-\x7e])*"'
_LOCAL = re.compile(rf"(?:{_DOT_ATOM}|{_QUOTED})")
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_DOMAIN = re.compile(rf"{_LABEL}(?:\.{_LABEL})*")
_LITERAL = re.compile(r"\[[\x21-\x5a\x5e-\x7e]*\]")
_HEADER_NAME = re.compile(r"[\x21-\x39\x3b-\x7e]+")  # RFC 5322 ftext: printable ASCII but ':'


def _refuse_controls(what: str, value: str, url: object) -> None:
    refuse_controls(url, what, value, decoded=False, why=" (header injection)")


def _refuse_undecodable(what: str, value: str, url: object) -> None:
    # percent_decode keeps octets that are not UTF-8 as lone surrogates; no surrogate can be sent
    if any("\ud800" <= ch <= "\udfff" for ch in value):
        raise URLSyntaxError(f"{what} is not valid UTF-8 (lone surrogate characters)", url=url)


def check_address(address: str, *, url: object = None, what: str = "address") -> str:
    """Check that *address* is one RFC 5322 addr-spec and return it.

    CR/LF/NUL raise :class:`UnsafeURL`; anything else that is not
    ``local-part@domain`` raises :class:`URLSyntaxError` (rule ``addr-spec``).
    A non-ASCII domain is converted to IDNA; a non-ASCII local part would need
    SMTPUTF8 and is refused.
    """
    _refuse_controls(what, address, url)
    _refuse_undecodable(what, address, url)
    local, at, domain = address.rpartition("@")
    if not at or not local or not domain:
        raise URLSyntaxError(f"{what} {address!r} is not local-part@domain", url=url, rule="addr-spec")
    if not local.isascii():
        raise URLSyntaxError(f"{what} {address!r} has a non-ASCII local part (SMTPUTF8 is not supported)",
                             url=url, rule="addr-spec")
    if not _LOCAL.fullmatch(local):
        raise URLSyntaxError(f"{what} {address!r}: bad local part {local!r}", url=url, rule="addr-spec")
    if not domain.isascii():
        try:
            domain = domain.encode("idna").decode("ascii")
        except UnicodeError as exc:
            raise URLSyntaxError(f"{what} {address!r}: bad internationalized domain", url=url,
                                 rule="addr-spec") from exc
    if not (_DOMAIN.fullmatch(domain) or _LITERAL.fullmatch(domain)) or len(domain) > 253:
        raise URLSyntaxError(f"{what} {address!r}: bad domain {domain!r}", url=url, rule="addr-spec")
    if len(local) > 64:
        raise URLSyntaxError(f"{what} {address!r}: local part longer than 64 octets", url=url,
                             rule="addr-spec")
    return f"{local}@{domain}"


def check_header_value(name: str, value: str, *, url: object = None) -> str:
    """Refuse a header *value* that holds CR, LF or NUL (it would start a new header)."""
    _refuse_controls(f"header {name!r}", value, url)
    _refuse_undecodable(f"header {name!r}", value, url)
    return value


def split_addresses(text: str, *, url: object = None, what: str = "address") -> list[str]:
    """The checked addr-specs of a comma-separated list (empty items are skipped)."""
    _refuse_controls(what, text, url)
    return [check_address(a.strip(), url=url, what=what) for a in text.split(",") if a.strip()]


class Attachment(Record):
    """One file to attach: its name, its bytes and (optionally) a MIME type."""

    __slots__ = ("filename", "data", "content_type")
    filename: str
    data: bytes
    content_type: str | None

    def __init__(self, filename: str, data: bytes, content_type: str | None = None) -> None:
        _set(self, "filename", filename)
        _set(self, "data", data)
        _set(self, "content_type", content_type)


class MailFields(Record):
    """What a mailto URL (plus the caller's arguments) asks to send, all checked."""

    __slots__ = ("to", "cc", "bcc", "subject", "body", "extra")
    to: tuple[str, ...]
    cc: tuple[str, ...]
    bcc: tuple[str, ...]
    subject: str | None
    body: str
    extra: tuple[tuple[str, str], ...]  # in-reply-to, references...

    def __init__(self, to: tuple[str, ...], cc: tuple[str, ...] = (), bcc: tuple[str, ...] = (),
                       subject: str | None = None, body: str = "",
                       extra: tuple[tuple[str, str], ...] = ()) -> None:
        _set(self, "to", to)
        _set(self, "cc", cc)
        _set(self, "bcc", bcc)
        _set(self, "subject", subject)
        _set(self, "body", body)
        _set(self, "extra", extra)


def envelope_recipients(fields: MailFields) -> list[str]:
    """Every RCPT TO address (to, cc and bcc), each once, in order."""
    seen: dict[str, None] = {}
    for a in (*fields.to, *fields.cc, *fields.bcc):
        seen.setdefault(a, None)
    return list(seen)


def fields_from_url(url: MailtoURL, *, subject: str | None = None, body: str | None = None,
                    cc: Iterable[str] = (), bcc: Iterable[str] = ()) -> MailFields:
    """Checked fields for *url*; the keyword arguments override/extend the URL's.

    The URL's address part may be one addr-spec (RFC 1738) or a
    comma-separated list, and ``?to=``/``?cc=``/``?bcc=`` add more
    (RFC 6068). ``?body=`` may hold line breaks; every other value may not.
    """
    to = split_addresses(url.address, url=url) if url.address else []
    url_cc: list[str] = []
    url_bcc: list[str] = []
    url_subject: str | None = None
    url_body: str | None = None
    extra: list[tuple[str, str]] = []
    for raw_name, value in url.headers:
        _refuse_controls("header name", raw_name, url)
        if not _HEADER_NAME.fullmatch(raw_name):
            raise URLSyntaxError(f"bad header name {raw_name!r}", url=url, rule="hname")
        name = raw_name.lower()
        if name not in ALLOWED_HEADERS:
            raise UnsafeURL(f"a mailto URL may not set the {raw_name!r} header (allowed: "
                            f"{', '.join(sorted(ALLOWED_HEADERS))})", url=url)
        if name == "to":
            to += split_addresses(value, url=url, what="to address")
        elif name == "cc":
            url_cc += split_addresses(value, url=url, what="cc address")
        elif name == "bcc":
            url_bcc += split_addresses(value, url=url, what="bcc address")
        elif name == "subject":
            url_subject = check_header_value("subject", value, url=url)
        elif name == "body":
            _refuse_undecodable("body", value, url)
            if "\0" in value:
                raise UnsafeURL("body contains NUL", url=url)
            url_body = value
        else:
            extra.append((raw_name, check_header_value(raw_name, value, url=url)))
    if subject is not None:
        url_subject = check_header_value("subject", subject, url=url)
    if body is not None:
        if "\0" in body:
            raise UnsafeURL("body contains NUL", url=url)
        _refuse_undecodable("body", body, url)
        url_body = body
    url_cc += [check_address(a, url=url, what="cc address") for a in cc]
    url_bcc += [check_address(a, url=url, what="bcc address") for a in bcc]
    if not to and not url_cc and not url_bcc:
        raise URLSyntaxError("the mailto URL names no recipient", url=url, rule="addr-spec")
    return MailFields(to=tuple(to), cc=tuple(url_cc), bcc=tuple(url_bcc), subject=url_subject,
                      body=url_body or "", extra=tuple(extra))


def _address_header(addrs: Sequence[str]) -> list[Address]:
    return [Address(addr_spec=a) for a in addrs]


# CRLF line ends and 7-bit-safe bodies (quoted-printable/base64), so any relay accepts
# the message whether or not it offers 8BITMIME.
POLICY = email.policy.SMTP.clone(cte_type="7bit")


def compose(fields: MailFields, *, sender: str, attachments: Sequence[Attachment] = (),
            date: str | None = None, message_id: str | None = None,
            user_agent: str | None = None) -> EmailMessage:
    """The message to send: From/To/Cc/Subject/Date/Message-ID, text body, attachments.

    Bcc recipients are envelope-only and never appear in a header. Non-ASCII
    subjects are RFC 2047-encoded and non-ASCII bodies become UTF-8
    quoted-printable or base64; attachments make a multipart/mixed message.
    """
    sender = check_address(sender, what="sender")
    msg = EmailMessage(policy=POLICY)
    msg["From"] = _address_header([sender])
    if fields.to:
        msg["To"] = _address_header(fields.to)
    if fields.cc:
        msg["Cc"] = _address_header(fields.cc)
    if fields.subject is not None:
        msg["Subject"] = fields.subject
    msg["Date"] = date or email.utils.formatdate(localtime=True)
    msg["Message-ID"] = message_id or email.utils.make_msgid(domain=sender.rpartition("@")[2])
    for name, value in fields.extra:
        msg[name] = value
    if user_agent:
        msg["User-Agent"] = check_header_value("User-Agent", user_agent)
    body = fields.body
    if body and not body.endswith("\n"):
        body += "\n"
    msg.set_content(body)
    for att in attachments:
        ctype = att.content_type or mimetypes.guess_type(att.filename)[0] or "application/octet-stream"
        maintype, _, subtype = ctype.partition("/")
        check_header_value("attachment filename", att.filename)
        if maintype == "text":
            # keep text attachments as text, but never guess at their charset
            msg.add_attachment(att.data, maintype=maintype, subtype=subtype or "plain",
                               filename=att.filename)
        else:
            msg.add_attachment(att.data, maintype=maintype, subtype=subtype or "octet-stream",
                               filename=att.filename)
    return msg

"""mailto logic with no network: address checks, URL fields, composition, settings."""

from __future__ import annotations

import email
import email.policy
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import anyurl
from anyurl.errors import ConfigurationError, NotRetrievable, UnsafeURL, URLSyntaxError
from anyurl.handlers.mailto import SMTPSettings, load_settings
from anyurl.protocols.mail import (
    Attachment,
    check_address,
    compose,
    envelope_recipients,
    fields_from_url,
)
from anyurl.urls import MailtoURL

GOOD = [
    ("a@example.org", "a@example.org"),
    ("first.last+tag@sub.example.org", "first.last+tag@sub.example.org"),
    ('"john doe"@example.org', '"john doe"@example.org'),
    ("x@[192.0.2.1]", "x@[192.0.2.1]"),
    ("user@bücher.example", "user@xn--bcher-kva.example"),
    ("o'brien@example.org", "o'brien@example.org"),
]
BAD = ["", "noat", "@example.org", "a@", "a b@example.org", "a..b@example.org", ".a@example.org",
       "a@-bad.example", "a@exa_mple.org", "a@b@c", "jörg@example.org", "x" * 65 + "@example.org",
       "Alice <a@example.org>"]
INJECT = ["a@example.org\r\nRCPT TO:<evil@x>", "a@example.org\n", "a\0@example.org"]


@pytest.mark.parametrize(("text", "expected"), GOOD)
def test_good_addresses(text: str, expected: str) -> None:
    assert check_address(text) == expected


@pytest.mark.parametrize("text", BAD)
def test_bad_addresses(text: str) -> None:
    with pytest.raises(URLSyntaxError) as info:
        check_address(text)
    assert info.value.rule == "addr-spec"


@pytest.mark.parametrize("text", INJECT)
def test_control_characters_in_addresses_are_unsafe(text: str) -> None:
    with pytest.raises(UnsafeURL):
        check_address(text)


def test_rfc1738_single_address() -> None:
    f = fields_from_url(anyurl.parse("mailto:bob.smith@example.org"))  # type: ignore[arg-type]
    assert f.to == ("bob.smith@example.org",) and f.subject is None and f.body == ""
    # "%" is encoded in mailto URLs (section 3.5): %22 quotes a local part with a space
    f = fields_from_url(anyurl.parse("mailto:%22bob%20smith%22@example.org"))  # type: ignore[arg-type]
    assert f.to == ('"bob smith"@example.org',)
    # "%40" decodes to a second "@": not an addr-spec unless quoted
    with pytest.raises(URLSyntaxError):
        fields_from_url(anyurl.parse("mailto:bob%40home@example.org"))  # type: ignore[arg-type]


def test_rfc6068_fields() -> None:
    url = anyurl.parse("mailto:a@x.example,b@y.example?subject=Hi%20there&body=l1%0D%0Al2"
                       "&cc=c@z.example&bcc=d@w.example&to=e@v.example&In-Reply-To=%3C1@x%3E")
    f = fields_from_url(url)  # type: ignore[arg-type]
    assert f.to == ("a@x.example", "b@y.example", "e@v.example")
    assert f.cc == ("c@z.example",)
    assert f.bcc == ("d@w.example",)
    assert f.subject == "Hi there"
    assert f.body == "l1\r\nl2"  # the body may hold line breaks
    assert f.extra == (("In-Reply-To", "<1@x>"),)
    assert envelope_recipients(f) == ["a@x.example", "b@y.example", "e@v.example", "c@z.example",
                                      "d@w.example"]


def test_arguments_override_url() -> None:
    url = anyurl.parse("mailto:a@x.example?subject=from-url&body=url-body")
    f = fields_from_url(url, subject="mine", body="my body", cc=["c@x.example"])  # type: ignore[arg-type]
    assert (f.subject, f.body, f.cc) == ("mine", "my body", ("c@x.example",))


@pytest.mark.parametrize("text", [
    "mailto:a@x.example?subject=hi%0D%0ABcc:%20evil@x.example",
    "mailto:a@x.example?subject=hi%0ABcc:%20evil@x.example",
    "mailto:a@x.example?cc=c@x.example%0D%0AX-Evil:%201",
    "mailto:a@x.example?in-reply-to=%3C1@x%3E%0D%0AFrom:%20boss@x.example",
    "mailto:a@x.example?from=boss@x.example",
    "mailto:a@x.example?content-type=text/html",
    "mailto:a@x.example?body=nul%00here",
])
def test_injection_refused(text: str) -> None:
    with pytest.raises(UnsafeURL):
        fields_from_url(anyurl.parse(text))  # type: ignore[arg-type]


def test_argument_injection_refused() -> None:
    url = anyurl.parse("mailto:a@x.example")
    with pytest.raises(UnsafeURL):
        fields_from_url(url, subject="x\r\nBcc: evil@x.example")  # type: ignore[arg-type]
    with pytest.raises(UnsafeURL):
        fields_from_url(url, cc=["c@x.example\r\nX: y"])  # type: ignore[arg-type]


def test_undecodable_text_refused() -> None:
    url = anyurl.parse("mailto:a@x.example?subject=%FF")  # not UTF-8: a lone surrogate after decoding
    with pytest.raises(URLSyntaxError, match="UTF-8"):
        fields_from_url(url)  # type: ignore[arg-type]
    with pytest.raises(URLSyntaxError, match="UTF-8"):
        fields_from_url(MailtoURL(scheme="mailto", address="a@x.example"), body="b\ud800")


def test_no_recipient() -> None:
    with pytest.raises(URLSyntaxError):
        fields_from_url(MailtoURL(scheme="mailto", address="", headers=(("subject", "x"),)))


def test_compose_plain_ascii() -> None:
    f = fields_from_url(anyurl.parse("mailto:a@x.example?cc=c@x.example&bcc=secret@x.example"),  # type: ignore[arg-type]
                        subject="Hello", body="line one\n.line two")
    msg = compose(f, sender="me@here.example", date="Sun, 22 Nov 2026 10:00:00 +0000",
                  message_id="<1@here.example>")
    raw = msg.as_bytes()
    assert b"\r\n" in raw and b"\n" not in raw.replace(b"\r\n", b"")
    parsed = email.message_from_bytes(raw, policy=email.policy.default)
    assert parsed["From"] == "me@here.example"
    assert parsed["To"] == "a@x.example"
    assert parsed["Cc"] == "c@x.example"
    assert parsed["Bcc"] is None and b"secret" not in raw  # Bcc is envelope-only
    assert parsed["Date"] == "Sun, 22 Nov 2026 10:00:00 +0000"
    assert parsed["Message-ID"] == "<1@here.example>"
    assert parsed.get_content().replace("\r\n", "\n") == "line one\n.line two\n"


def test_compose_generates_date_and_message_id() -> None:
    f = fields_from_url(MailtoURL(scheme="mailto", address="a@x.example"))
    msg = compose(f, sender="me@here.example")
    assert email.utils.parsedate_to_datetime(str(msg["Date"])) is not None
    assert str(msg["Message-ID"]).endswith("@here.example>")


def test_compose_non_ascii_and_attachments() -> None:
    f = fields_from_url(MailtoURL(scheme="mailto", address="a@x.example"), subject="Grüße 👋",
                        body="naïve café\n")
    blob = bytes(range(256))
    msg = compose(f, sender="me@here.example",
                  attachments=[Attachment("data.bin", blob), Attachment("notes.txt", "é\n".encode())])
    raw = msg.as_bytes()
    assert raw.isascii()  # 7-bit clean: RFC 2047 header, QP/base64 body
    assert b"=?utf-8?" in raw
    parsed = email.message_from_bytes(raw, policy=email.policy.default)
    assert parsed["Subject"] == "Grüße 👋"
    assert parsed.get_content_type() == "multipart/mixed"
    body = parsed.get_body(("plain",))
    assert body is not None and body.get_content().replace("\r\n", "\n") == "naïve café\n"
    atts = {a.get_filename(): a for a in parsed.iter_attachments()}
    assert atts["data.bin"].get_content() == blob
    assert atts["data.bin"].get_content_type() == "application/octet-stream"
    assert atts["notes.txt"].get_payload(decode=True) == "é\n".encode()


def test_compose_refuses_bad_sender() -> None:
    f = fields_from_url(MailtoURL(scheme="mailto", address="a@x.example"))
    with pytest.raises(UnsafeURL):
        compose(f, sender="me@here.example\r\nBcc: x@y")


def test_settings_precedence(tmp_path: Path) -> None:
    cfg = tmp_path / "smtp.toml"
    cfg.write_text('host = "file.example"\nport = 2525\nstarttls = true\nusername = "u"\n')
    env = {"ANYURL_SMTP_CONFIG": str(cfg)}
    s = load_settings(None, env)
    assert (s.host, s.port, s.starttls, s.username) == ("file.example", 2525, True, "u")
    env |= {"ANYURL_SMTP_HOST": "env.example", "ANYURL_SMTP_PORT": "587", "ANYURL_SMTP_TLS": "1",
            "ANYURL_SMTP_USER": "eu", "ANYURL_SMTP_PASSWORD": "pw", "ANYURL_SMTP_VALIDATE_CERTS": "0"}
    s = load_settings(None, env)
    assert (s.host, s.port, s.tls, s.username, s.password, s.verify) == \
        ("env.example", 587, True, "eu", "pw", False)
    s = load_settings(SMTPSettings(host="client.example"), env)
    assert s.host == "client.example" and s.effective_port == 25


def test_settings_missing_says_how(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError) as info:
        load_settings(None, {"XDG_CONFIG_HOME": str(tmp_path)})
    text = str(info.value)
    assert "ANYURL_SMTP_HOST" in text and "SMTPSettings" in text and str(tmp_path) in text


def test_settings_file_errors(tmp_path: Path) -> None:
    cfg = tmp_path / "smtp.toml"
    cfg.write_text('host = "x"\nhots = "typo"\n')
    with pytest.raises(ConfigurationError, match="hots"):
        load_settings(None, {"ANYURL_SMTP_CONFIG": str(cfg)})
    with pytest.raises(ConfigurationError, match="ANYURL_SMTP_PORT"):
        load_settings(None, {"ANYURL_SMTP_HOST": "h", "ANYURL_SMTP_PORT": "x"})


async def test_fetch_is_not_retrievable() -> None:
    async with anyurl.Client() as client:
        with pytest.raises(NotRetrievable, match="send_mail"):
            await client.fetch("mailto:a@x.example")


async def test_unconfigured_send_is_configuration_error(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    for k in ("ANYURL_SMTP_HOST", "ANYURL_SMTP_CONFIG"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    async with anyurl.Client() as client:
        with pytest.raises(ConfigurationError, match="no SMTP relay is configured"):
            await client.send_mail("mailto:a@x.example", body="x")


@given(st.text(max_size=80))
def test_check_address_never_passes_controls(text: str) -> None:
    try:
        out = check_address(text)
    except (UnsafeURL, URLSyntaxError):
        return
    assert not any(c in out for c in "\r\n\0") and out.count("@") >= 1 and out.isascii()

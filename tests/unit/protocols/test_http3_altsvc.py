"""anyurl.protocols.http3: Alt-Svc values (RFC 7838) as anyurl reads them, what it remembers per
origin (bounded, expiring), and the checks of an HTTP/3 response head (RFC 9114 4.2, 4.3)."""

from __future__ import annotations

import pytest

from anyurl.protocols.http3 import AltSvc, AltSvcCache, h3_port, malformed_head, parse_alt_svc


@pytest.mark.parametrize(("value", "want"), [
    ('h3=":443"', [AltSvc("h3", "", 443, 86400)]),
    ('h3=":8443"; ma=3600, h3-29=":8443"; ma=3600', [AltSvc("h3", "", 8443, 3600), AltSvc("h3-29", "", 8443, 3600)]),
    ('h2="alt.example:443"; ma=60; persist=1', [AltSvc("h2", "alt.example", 443, 60)]),
    ('h3="[::1]:443"', [AltSvc("h3", "::1", 443, 86400)]),
    ('h3=":0", h3=":70000", h3=":x", h3, =":1", h3=":444"', [AltSvc("h3", "", 444, 86400)]),
    ('h3=":443"; ma="120"', [AltSvc("h3", "", 443, 120)]),
    ('h3=":443"; ma=soon', [AltSvc("h3", "", 443, 86400)]),
    ('w%3Dx=":1"', [AltSvc("w=x", "", 1, 86400)]),
    ("", []),
])
def test_parse_alt_svc(value: str, want: list[AltSvc]) -> None:
    assert parse_alt_svc(value) == want


def test_clear_means_forget() -> None:
    assert parse_alt_svc(" clear ") is None


@pytest.mark.parametrize(("value", "host", "want"), [
    ('h3=":443"; ma=10', "example.org", (443, 10)),
    ('h3-29=":443", h3=":4433"', "example.org", (4433, 86400)),
    ('h3="example.org:4433"', "EXAMPLE.org", (4433, 86400)),
    ('h3="other.example:443"', "example.org", None),  # another host: not trusted for this origin
    ('h3=":443"; ma=0', "example.org", None),
    ('h2=":443"', "example.org", None),
])
def test_h3_port(value: str, host: str, want: tuple[int, float] | None) -> None:
    assert h3_port(value, host) == want


def test_the_cache_remembers_for_max_age_and_forgets_on_clear() -> None:
    c = AltSvcCache()
    o = ("example.org", 443)
    c.seen(o, 'h3=":8443"; ma=100', now=1000.0)
    assert c.h3_port(o, 1099.0) == 8443
    assert c.h3_port(o, 1100.0) is None and len(c) == 0  # expired: gone
    c.seen(o, 'h3=":8443"', now=0.0)
    c.seen(o, "clear", now=1.0)
    assert c.h3_port(o, 2.0) is None
    c.seen(o, 'h2=":443"', now=3.0)  # nothing about h3: nothing kept
    assert len(c) == 0


def test_a_broken_origin_goes_over_tcp_for_a_while() -> None:
    c = AltSvcCache()
    o = ("example.org", 443)
    c.seen(o, 'h3=":443"', now=0.0)
    c.mark_broken(o, now=10.0, seconds=60)
    assert c.broken(o, 69.0) and c.h3_port(o, 69.0) is None
    assert not c.broken(o, 70.0) and c.h3_port(o, 70.0) == 443


def test_the_cache_is_bounded() -> None:
    c = AltSvcCache(max_origins=3)
    for i in range(10):
        c.seen((f"h{i}", 443), 'h3=":443"', now=0.0)
        c.mark_broken((f"b{i}", 443), now=0.0)
    assert len(c) == 3
    assert [c.h3_port((f"h{i}", 443), 1.0) for i in range(10)] == [None] * 7 + [443] * 3
    assert sum(c.broken((f"b{i}", 443), 1.0) for i in range(10)) == 3


@pytest.mark.parametrize(("fields", "bad"), [
    ([(b":status", b"200"), (b"content-length", b"3")], None),
    ([], "no :status first"),
    ([(b"content-length", b"3"), (b":status", b"200")], "no :status first"),
    ([(b":status", b"20")], "bad :status b'20'"),
    ([(b":status", b"200"), (b":path", b"/")], "bad field name b':path'"),
    ([(b":status", b"200"), (b"Content-Length", b"3")], "bad field name b'Content-Length'"),
    ([(b":status", b"200"), (b"x", b"a\r\nb")], "bad value of x"),
    ([(b":status", b"200"), (b"x", b" a")], "bad value of x"),
    ([(b":status", b"200"), (b"connection", b"close")], "connection-specific field connection"),
    ([(b":status", b"200"), (b"te", b"gzip")], "connection-specific field te"),
    ([(b":status", b"200")] + [(b"x", b"y")] * 257, "more than 256 header fields"),
])
def test_malformed_head(fields: list[tuple[bytes, bytes]], bad: str | None) -> None:
    assert malformed_head(fields) == bad

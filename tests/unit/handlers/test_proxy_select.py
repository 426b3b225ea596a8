"""Proxy choice (anyurl.protocols.proxy) and the HTTP body decoder, without a network."""

from __future__ import annotations

import gzip
import zlib

import pytest

from anyurl import Client, ConfigurationError, ProtocolError, TruncatedTransfer
from anyurl.handlers.http import _Decoder, _retry_after, _stored_encoding
from anyurl.protocols.proxy import bypasses, env_proxy, normalize_proxy, select_proxy

P = "http://proxy.example:3128"


@pytest.mark.parametrize(("env", "scheme", "want"), [
    ({"http_proxy": P}, "http", P),
    ({"HTTP_PROXY": P}, "http", None),  # httpoxy: never from upper case for http
    ({"HTTPS_PROXY": P}, "https", P),
    ({"https_proxy": P, "HTTPS_PROXY": "http://other:1"}, "https", P),
    ({"ftp_proxy": P}, "ftp", P),
    ({"FTP_PROXY": P}, "ftp", P),
    ({"all_proxy": P}, "ftp", P),
    ({"http_proxy": "  "}, "http", None),
    ({"ftp_proxy": P}, "http", None),
])
def test_env_proxy(env: dict[str, str], scheme: str, want: str | None) -> None:
    assert env_proxy(scheme, env) == want


@pytest.mark.parametrize(("host", "port", "no_proxy", "want"), [
    ("www.example.org", 80, "example.org", True),
    ("www.example.org", 80, ".example.org", True),
    ("www.example.org", 80, "*.example.org", True),
    ("example.org", 80, "example.org", True),
    ("badexample.org", 80, "example.org", False),
    ("WWW.Example.ORG.", 80, "example.org", True),
    ("a.b", 80, "*", True),
    ("a.b", 80, "x.y, ,a.b", True),
    ("a.b", 80, "x.y a.b", True),
    ("127.0.0.1", 8080, "127.0.0.1:8080", True),
    ("127.0.0.1", 8081, "127.0.0.1:8080", False),
    ("10.1.2.3", 80, "10.0.0.0/8", True),
    ("11.1.2.3", 80, "10.0.0.0/8", False),
    ("::1", 80, "::1", True),
    ("[::1]", 80, "[::1]:80", True),
    ("fe80::1", 80, "fe80::/10", True),
    ("127.0.0.1", 80, "localhost", False),  # names are not resolved
    ("host", 80, "", False),
])
def test_bypasses(host: str, port: int, no_proxy: str, want: bool) -> None:
    assert bypasses(host, port, no_proxy) is want


def test_normalize_proxy() -> None:
    assert normalize_proxy("proxy:3128") == "http://proxy:3128"
    assert normalize_proxy("http://u:p@proxy:3128/") == "http://u:p@proxy:3128"
    for bad in ("socks5://h:1", "http://", "http://h:99999", "http://h:1/path", "http://h:1\r\nX: y"):
        with pytest.raises(ValueError):
            normalize_proxy(bad)


def test_select_proxy_precedence() -> None:
    env = {"http_proxy": P, "no_proxy": "example.org"}
    assert select_proxy("http", "a.example.org", 80, proxy=None, no_proxy=None, env=env) is None
    assert select_proxy("http", "a.example.org", 80, proxy=None, no_proxy="other", env=env) == P
    assert select_proxy("http", "x.net", 80, proxy=None, no_proxy=None, env=None) is None  # trust_env off
    assert select_proxy("http", "x.net", 80, proxy="h:1", no_proxy=None, env=env) == "http://h:1"
    assert select_proxy("http", "x.net", 80, proxy="", no_proxy=None, env=env) is None  # "" means none
    assert select_proxy("gopher", "x.net", 70, proxy="h:1", no_proxy=None, env=env) is None


def test_client_proxy_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ftp_proxy", P)
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    assert Client().proxy_for("ftp", "ftp.example.org", 21) == P
    assert Client(trust_env=False).proxy_for("ftp", "ftp.example.org", 21) is None
    assert Client(no_proxy="example.org").proxy_for("ftp", "ftp.example.org", 21) is None
    with pytest.raises(ConfigurationError, match="only http://"):
        Client(proxy="socks5://h:1").proxy_for("http", "x", 80)
    # an ftp URL with a proxy is served by the HTTP handler
    from anyurl.handlers.http import HTTPHandler

    c = Client()
    assert isinstance(c.handler(c.parse("ftp://ftp.example.org/pub/x")), HTTPHandler)
    assert not isinstance(Client(trust_env=False).handler(c.parse("ftp://h/x")), HTTPHandler)


# -- the decoder ------------------------------------------------------------------


def decode_all(coding: str, data: bytes, pieces: int = 7, out_max: int = 1000) -> bytes:
    d = _Decoder(coding, "http://x/", out_max)
    out = []
    step = max(1, len(data) // pieces)
    for i in range(0, len(data), step):
        for piece in d.feed(data[i:i + step]):
            assert len(piece) <= out_max
            out.append(piece)
    d.finish(len(data))
    return b"".join(out)


TEXT = b"".join(b"line %d of some text\n" % i for i in range(5000))


def test_gzip_is_decoded_in_bounded_pieces() -> None:
    bomb = gzip.compress(b"\0" * (4 << 20))  # 4 MiB from ~4 KiB
    assert decode_all("gzip", bomb, out_max=65536) == b"\0" * (4 << 20)
    assert decode_all("x-gzip", gzip.compress(TEXT)) == TEXT


def test_gzip_members_follow_each_other() -> None:
    assert decode_all("gzip", gzip.compress(b"one\n") + gzip.compress(b"two\n")) == b"one\ntwo\n"


@pytest.mark.parametrize("wbits", [15, -15])  # zlib-wrapped (RFC 9110) and raw deflate (seen in the wild)
def test_deflate_both_forms(wbits: int) -> None:
    z = zlib.compressobj(wbits=wbits)
    data = z.compress(TEXT) + z.flush()
    assert decode_all("deflate", data) == TEXT
    assert decode_all("deflate", data, pieces=len(data)) == TEXT  # one byte at a time


def test_truncated_and_corrupt_streams() -> None:
    data = gzip.compress(TEXT)
    with pytest.raises(TruncatedTransfer, match="gzip stream ended"):
        decode_all("gzip", data[: len(data) // 2])
    with pytest.raises(ProtocolError, match="bad gzip data"):
        decode_all("gzip", b"\x1f\x8b" + b"garbage" * 10)
    with pytest.raises(ProtocolError, match="data after the end"):
        decode_all("gzip", data + b"trailing")
    assert decode_all("gzip", data + b"\0\0\0") == TEXT  # zero padding is tolerated


@pytest.mark.parametrize(("coding", "ctype", "path", "stored"), [
    ("gzip", "application/x-tar", "/pub/x.tar.gz", True),
    ("gzip", "text/plain", "/notes.txt.gz", True),
    ("gzip", "application/x-gzip", "/download", True),
    ("gzip", "application/gzip", "/download", True),
    ("gzip", "text/plain", "/big.txt", False),
    ("gzip", "text/html", "/", False),
    ("deflate", "application/json", "/api", False),
    ("gzip", "image/svg+xml", "/logo.svgz", True),
])
def test_stored_encoding(coding: str, ctype: str, path: str, stored: bool) -> None:
    assert _stored_encoding(coding, ctype, path) is stored


def test_retry_after_forms() -> None:
    assert _retry_after({"Retry-After": "120"}) == 120.0
    assert _retry_after({"Retry-After": "Thu, 01 Jan 1970 00:00:00 GMT"}) == 0.0
    assert _retry_after({"Retry-After": "soon"}) is None
    assert _retry_after({}) is None


def test_proxy_errors_do_not_show_its_password() -> None:
    with pytest.raises(ValueError, match="no path") as info:
        normalize_proxy("http://user:s3cret@h:1/x")
    assert "s3cret" not in str(info.value)

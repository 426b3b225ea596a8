"""How the HTTP handler builds what goes on the wire, without a network: the fast path
from the parsed URL's fields must give the very target the careful path (urlsplit of the
rebuilt text) gives, and never let a decoded CR, LF or NUL through; the Client's proxy
answer, kept per host, must follow its settings."""

from __future__ import annotations

import pytest

from anyurl import Client, UnsafeURL
from anyurl.handlers.http import HTTPHandler
from anyurl.protocols.http1 import header_block, request_head
from anyurl.urls import HTTPURL


def careful(h: HTTPHandler, url: HTTPURL, monkeypatch: pytest.MonkeyPatch) -> object:
    with monkeypatch.context() as m:
        m.setattr(HTTPHandler, "_fast_target", staticmethod(lambda u: None))
        return h._target(url)


@pytest.mark.parametrize("text", [
    "http://a", "http://a/", "http://a:80/x", "http://a:8080/x?y", "https://a:443/p%20q?", "https://a:80/",
    "http://127.0.0.1:5/\u00e9?\u00fc", "http://u:p@h/x", "http://h/a%2Fb/%7e?%41", "http://h/a?b?c",
    "http://H.Example/", "http://h.example./x", "http://[::1]:8/x", "http://h/%0F/x", "http://h/%0B?%09",
])
def test_fast_target_is_the_careful_one(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    c = Client()
    h = HTTPHandler(c)
    url = c.parse(text)
    assert isinstance(url, HTTPURL)
    fast = h._target(url)
    slow = careful(h, url, monkeypatch)
    assert fast == slow
    assert str(fast) == str(slow)


def test_fast_path_is_taken_for_plain_urls() -> None:
    c = Client()
    for text in ("http://a/", "http://a:8080/x?y", "http://u:p@127.0.0.1/%7e%0F"):
        url = c.parse(text)
        assert isinstance(url, HTTPURL)
        assert HTTPHandler._fast_target(url) is not None


@pytest.mark.parametrize(("url", "what"), [
    (HTTPURL(scheme="http", host="h", port=80, path="a%0D%0Ab"), "path contains CR, LF"),
    (HTTPURL(scheme="http", host="h", port=80, path="a%0db"), "path contains CR"),
    (HTTPURL(scheme="http", host="h", port=80, path="x", search="q=%0aHost:%20evil"), "search contains LF"),
    (HTTPURL(scheme="http", host="h", port=80, path="a%00b"), "path contains NUL"),
    (HTTPURL(scheme="http", host="h", port=80, path="a\r\nb"), "path contains CR, LF"),
    (HTTPURL(scheme="http", host="h", port=80, path="x", search="\0"), "search contains NUL"),
    (HTTPURL(scheme="http", host="h\r\nX: 1", port=80, path="x"), "host contains CR, LF"),
    (HTTPURL(scheme="http", host="h", port=80, user="u\r\nX: 1", path="x"), "user contains CR, LF"),
    (HTTPURL(scheme="http", host="h", port=80, user="u", password="p\n", path="x"), "password contains LF"),
])
def test_decoded_controls_never_reach_the_wire(url: HTTPURL, what: str) -> None:
    with pytest.raises(UnsafeURL, match=what):
        HTTPHandler(Client())._target(url)


def test_header_block_reused_is_the_same_head() -> None:
    headers = [("User-Agent", "x/1"), ("Accept", "*/*")]
    block = header_block(headers)
    assert block == (None, "User-Agent: x/1\r\nAccept: */*\r\n")
    assert request_head("GET", "/a", "h", headers, block=block) == request_head("GET", "/a", "h", headers)
    assert header_block([("host", "o"), ("X", "1")]) == ("o", "X: 1\r\n")
    with pytest.raises(UnsafeURL, match="header X"):
        header_block([("X", "a\r\nY: 1")])
    # a kept block does not exempt the target or the Host from the checks
    with pytest.raises(UnsafeURL, match="request target"):
        request_head("GET", "/a\r\nX: 1", "h", headers, block=block)
    with pytest.raises(UnsafeURL, match="host"):
        request_head("GET", "/a", "h\n", headers, block=block)


def test_plain_headers_are_built_once_and_follow_the_user_agent() -> None:
    c = Client(user_agent="one/1")
    h = HTTPHandler(c)
    url = c.parse("http://h/x")
    assert isinstance(url, HTTPURL)
    first = h._headers(url, h.http_options, None, None)
    assert h._headers(url, h.http_options, None, None) is first
    assert first["User-Agent"] == "one/1"
    c.user_agent = "two/2"
    assert h._headers(url, h.http_options, None, None)["User-Agent"] == "two/2"
    # a Range or extra headers: a fresh dict, the kept one untouched
    ranged = h._headers(url, h.http_options, (5, None), {"X-A": "1"})
    assert ranged["Range"] == "bytes=5-" and ranged["X-A"] == "1"
    assert "Range" not in h._headers(url, h.http_options, None, None)
    c.user_agent = "bad\r\nX: 1"
    with pytest.raises(UnsafeURL, match="header User-Agent"):
        h._headers(url, h.http_options, None, None)


def test_proxy_answer_is_kept_per_host_and_follows_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "HTTPS_PROXY", "ftp_proxy", "FTP_PROXY", "all_proxy",
                 "ALL_PROXY", "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("http_proxy", "http://p.example:3128")
    monkeypatch.setenv("no_proxy", "direct.example")
    c = Client()
    assert c.proxy_for("http", "a.example", 80) == "http://p.example:3128"
    assert c.proxy_for("http", "direct.example", 80) is None
    assert c.proxy_for("https", "a.example", 443) is None  # no https_proxy
    # the environment was read at the first call
    monkeypatch.setenv("http_proxy", "http://other.example:1")
    assert c.proxy_for("http", "b.example", 80) == "http://p.example:3128"
    assert Client().proxy_for("http", "b.example", 80) == "http://other.example:1"
    # the Client's own settings, changed later, are followed
    c.no_proxy = "a.example"
    assert c.proxy_for("http", "a.example", 80) is None
    c.proxy = "http://q.example:8"
    assert c.proxy_for("http", "b.example", 80) == "http://q.example:8"
    c.trust_env = False
    c.proxy = None
    assert c.proxy_for("http", "b.example", 80) is None

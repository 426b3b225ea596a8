"""extract_urls: URLs in free text, per RFC 1738's appendix."""

from __future__ import annotations

import pytest

from anyurl.urls import extract_urls, parse

# The appendix's example, with its line breaks inside two of the wrappers.
RFC_EXAMPLE = """Yes, Jim, I found it under <URL:ftp://info.cern.ch/pub/www/doc;
type=d> but you can probably pick it up from <URL:ftp://ds.in
ternic.net/rfc>.  Note the warning in <URL:http://ds.internic.
net/instructions/overview.html#WARNING>."""


def test_rfc_appendix_example() -> None:
    assert extract_urls(RFC_EXAMPLE) == [
        "ftp://info.cern.ch/pub/www/doc;type=d",
        "ftp://ds.internic.net/rfc",
        "http://ds.internic.net/instructions/overview.html#WARNING",
    ]


def test_rfc_reference_with_break_before_slash() -> None:
    text = """protocol", University of Minnesota, July 1993.
<URL:ftp://boombox.micro.umn.edu/pub/gopher/gopher_protocol
/Gopher+/Gopher+.txt>"""
    assert extract_urls(text) == ["ftp://boombox.micro.umn.edu/pub/gopher/gopher_protocol/Gopher+/Gopher+.txt"]


def test_hyphen_at_line_break_is_kept_by_default() -> None:
    # "the hyphen may or may not actually be part of the URL": whitespace goes, the hyphen stays...
    text = "see <URL:ftp://h/draft-ietf-uri-irl-\n   fun-req-02.txt> today"
    assert extract_urls(text) == ["ftp://h/draft-ietf-uri-irl-fun-req-02.txt"]
    # ...unless the caller knows its typesetter added it.
    assert extract_urls("<URL:ftp://h/hyphen-\n ated>", drop_break_hyphens=True) == ["ftp://h/hyphenated"]
    # A hyphen not followed by a line break is never dropped.
    assert extract_urls("<URL:ftp://h/a- b>", drop_break_hyphens=True) == ["ftp://h/a-b"]


def test_plain_angle_brackets_for_known_schemes() -> None:
    assert extract_urls("mail <mailto:a@b.c> or <http://h/x\n y>") == ["mailto:a@b.c", "http://h/xy"]
    # An e-mail address in brackets is not a URL.
    assert extract_urls("From: Jim <jim@host.dom>") == []


def test_url_prefix_allows_any_scheme() -> None:
    assert extract_urls("<URL:x-foo:bar> and <x-foo:baz>") == ["x-foo:bar"]


@pytest.mark.parametrize(("text", "urls"), [
    ("See http://h.dom/a.", ["http://h.dom/a"]),
    ("(see http://h.dom/a)", ["http://h.dom/a"]),
    ("http://en.wiki.dom/Foo_(bar), ok", ["http://en.wiki.dom/Foo_(bar)"]),
    ("Try ftp://h/pub/x;type=a, gopher://h/1/ and news:comp.lang.c!", ["ftp://h/pub/x;type=a", "gopher://h/1/",
                                                                     "news:comp.lang.c"]),
    ("write to mailto:me@h.dom?subject=hi.", ["mailto:me@h.dom?subject=hi"]),
    ("\"http://h/q\"", ["http://h/q"]),
    ('<a href="http://h/page">link</a>', ["http://h/page"]),
    ("HTTPS://H/X is upper", ["HTTPS://H/X"]),
    ("xhttp://h/ is not a URL of a known scheme", []),
    ("http://h:0/ and http://%zz and ftp://h/%g1", []),
    ("http://bad host/", ["http://bad"]),
    ("no urls here: 10:30, a:b", []),
    ("telnet://h.dom/ then file:///etc/motd", ["telnet://h.dom/", "file:///etc/motd"]),
])
def test_bare_urls(text: str, urls: list[str]) -> None:
    assert extract_urls(text) == urls


def test_results_parse() -> None:
    for url in extract_urls(RFC_EXAMPLE):
        value = parse(url.split("#")[0] if not url.startswith("http") else url)
        assert url.startswith(value.scheme + ":")


def test_bad_wrapped_url_is_skipped() -> None:
    assert extract_urls("<URL:http://h:99999/> and <URL:ftp://ok.dom/>") == ["ftp://ok.dom/"]

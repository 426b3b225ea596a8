"""protocols.mime: the Content-Type to believe (the Fetch standard's rules) and HTML sniffing."""

from __future__ import annotations

import pytest

from anyurl.protocols.mime import content_type_of, looks_like_html, split_header_list


@pytest.mark.parametrize(("value", "want"), [
    (None, None),
    ("", None),
    ("text/html", ("text/html", None)),
    ('Text/HTML; Charset="utf-8"', ("text/html", "utf-8")),
    ("application/json, text/x-zoo", ("text/x-zoo", None)),  # two fields: the last valid one
    ("text/x-zoo, application/json", ("application/json", None)),
    ("text/html; charset=latin1, garbage", ("text/html", "latin1")),  # an invalid part is skipped
    ("text/plain; charset=utf-8, text/plain", ("text/plain", "utf-8")),  # same type: charset kept
    ("text/plain; charset=utf-8, text/html", ("text/html", None)),  # another type: charset dropped
    ("text/csv, */*", ("text/csv", None)),  # */* says nothing
    ("*/*", None),
    ("garbage", None),
    ("text/", None),
    ("te xt/html", None),
    ('text/html; x="a,b", text/plain', ("text/plain", None)),  # a comma in quotes splits nothing
    ('text/html; charset="a,b"', ("text/html", "a,b")),
])
def test_content_type_of(value: str | None, want: tuple[str, str | None] | None) -> None:
    assert content_type_of(value) == want


def test_split_header_list_keeps_quoted_commas() -> None:
    assert split_header_list('a, b; x="1,2", c') == ["a", 'b; x="1,2"', "c"]
    assert split_header_list('a; x="q\\"x,y", b') == ['a; x="q\\"x,y"', "b"]


@pytest.mark.parametrize(("data", "html"), [
    (b"<html><body>", True),
    (b"\r\n\t <HTML>", True),
    (b"<!DOCTYPE html>\n", True),
    (b"<!-- x -->", True),
    (b"<a href=x>", True),
    (b"<p>text", True),
    (b"<abbr>", False),  # a tag must end at a space or ">"
    (b"hello <html>", False),
    (b"", False),
    (b"\x89PNG\r\n\x1a\n", False),
    (b"<?xml version='1.0'?>", False),
])
def test_looks_like_html(data: bytes, html: bool) -> None:
    assert looks_like_html(data) is html

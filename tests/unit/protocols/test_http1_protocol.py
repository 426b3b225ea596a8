"""The lean HTTP/1.1 framing (anyurl.protocols.http1) without any network: request heads,
response framing, keep-alive decisions and the bounds on what a server controls."""

from __future__ import annotations

import pytest

from anyurl import OverlongTransfer, ProtocolError, TruncatedTransfer, UnsafeURL
from anyurl.protocols.http1 import (
    MAX_HEADERS,
    Headers,
    ResponseReader,
    header_block,
    request_head,
    request_start,
    request_tail,
)


def feed_all(r: ResponseReader, *parts: bytes) -> bytes:
    return b"".join(p for part in parts for p in r.feed(part))


def test_request_head_bytes() -> None:
    head = request_head("GET", "/a%20b?q=1", "h.example:8080", [("User-Agent", "x/1"), ("Range", "bytes=5-")])
    assert head == (b"GET /a%20b?q=1 HTTP/1.1\r\nHost: h.example:8080\r\nUser-Agent: x/1\r\n"
                    b"Range: bytes=5-\r\n\r\n")
    # a caller's Host replaces the default, still first
    assert request_head("HEAD", "/", "h", [("host", "other")]).startswith(b"HEAD / HTTP/1.1\r\nHost: other\r\n\r\n")


@pytest.mark.parametrize("target, host, headers, what", [
    ("/a\r\nX: 1", "h", [], "request target"),
    ("/a", "h\nX: 1", [], "host"),
    ("/a", "h", [("X-Note", "a\r\nX-Injected: 1")], "header X-Note"),
    ("/a", "h", [("X\0", "v")], "NUL"),
    ("/a b", "h", [], "invalid request target"),
    ("/a", "h", [("Bad Name", "v")], "invalid header name"),
])
def test_request_head_refuses_what_would_break_the_wire(target: str, host: str,
                                                       headers: list[tuple[str, str]], what: str) -> None:
    with pytest.raises(UnsafeURL, match=what):
        request_head("GET", target, host, headers, url="http://h/")


# (method, response bytes in pieces, body, complete, reusable)
FRAMING = [
    ("content-length", "GET", [b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab", b"cde"], b"abcde", True, True),
    ("chunked", "GET", [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n",
                        b"2\r\nde\r\n0\r\n\r\n"], b"abcde", True, True),
    ("chunked with trailer", "GET", [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\nX: y\r\n\r\n"],
     b"a", True, True),
    ("close asked", "GET", [b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nConnection: close\r\n\r\nx"], b"x", True, False),
    ("http/1.0 keep-alive", "GET", [b"HTTP/1.0 200 OK\r\nContent-Length: 1\r\nConnection: keep-alive\r\n\r\nx"],
     b"x", True, True),
    ("http/1.0 default close", "GET", [b"HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx"], b"x", True, False),
    ("close-delimited", "GET", [b"HTTP/1.1 200 OK\r\n\r\nabc", b"def"], b"abcdef", False, False),
    ("204 has no body", "GET", [b"HTTP/1.1 204 No Content\r\n\r\n"], b"", True, True),
    ("304 has no body", "GET", [b"HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n"], b"", True, True),
    ("HEAD has no body", "HEAD", [b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n"], b"", True, True),
    ("HEAD head split", "HEAD", [b"HTTP/1.1 200 OK\r\n", b"Content-Length: 99\r\n\r\n"], b"", True, True),
    # the last piece alone does not show where the head ended: not reused (safe side)
    ("HEAD end split", "HEAD", [b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\n", b"\r\n"], b"", True, False),
    ("HEAD with a body after it", "HEAD", [b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"], b"", True, False),
    ("HEAD, close asked", "HEAD", [b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n"], b"", True, False),
    ("1xx skipped", "GET", [b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n",
                            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"], b"ok", True, True),
    ("head split byte by byte", "GET", [bytes([b]) for b in b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"],
     b"ok", True, True),
]


@pytest.mark.parametrize("method, parts, body, complete, reusable", [f[1:] for f in FRAMING],
                         ids=[f[0] for f in FRAMING])
def test_framing(method: str, parts: list[bytes], body: bytes, complete: bool, reusable: bool) -> None:
    r = ResponseReader(method)
    assert feed_all(r, *parts) == body
    assert r.head_done and r.complete == complete and r.reusable == reusable
    if not complete:
        r.eof()  # the end of the connection ends this body
        assert r.complete and not r.reusable


def test_content_length_body_is_handed_out_without_copying() -> None:
    r = ResponseReader("GET")
    r.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n")
    piece = b"0123456789"
    [got] = r.feed(piece)
    assert got is piece and r.complete


def test_status_reason_and_headers() -> None:
    r = ResponseReader("GET")
    r.feed(b"HTTP/1.1 404 Not Found\r\nETag: \"x\"\r\nVia: a\r\nvia: b\r\nContent-Length: 0\r\n\r\n")
    assert (r.status, r.reason, r.content_length) == (404, "Not Found", 0)
    assert r.headers["etag"] == r.headers["Etag"] == '"x"' and "ETAG" in r.headers
    assert dict(r.headers) == {"ETag": '"x"', "Via": "a, b", "Content-Length": "0"}
    assert isinstance(r.headers, Headers) and r.headers.get("nope", "-") == "-"


@pytest.mark.parametrize("parts, error, match", [
    ([b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n", b"abcdef"], OverlongTransfer, "more than the response announced"),
    ([b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabcdef"], OverlongTransfer,
     "more than the response announced"),
    ([b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabcHTTP/1.1 200 OK\r\n\r\n"], OverlongTransfer,
     "after the end of the body"),
    ([b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nxyz"], OverlongTransfer, "after the end"),
    ([b"SSH-2.0-OpenSSH\r\n\r\n"], ProtocolError, "invalid HTTP response head"),
    ([b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"], ProtocolError, "body framing"),
    ([b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n"], ProtocolError, "switched protocols"),
    ([b"HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n"], ProtocolError, "invalid HTTP response head"),
])
def test_broken_responses(parts: list[bytes], error: type[Exception], match: str) -> None:
    r = ResponseReader("GET", "http://h/x")
    with pytest.raises(error, match=match) as info:
        feed_all(r, *parts)
    assert not r.reusable
    assert getattr(info.value, "url", None) == "http://h/x"


@pytest.mark.parametrize("parts, error, match", [
    ([], ProtocolError, "closed the connection before answering"),
    ([b"HTTP/1.1 200 OK\r\nConte"], ProtocolError, "middle of the response head"),
    ([b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"], TruncatedTransfer, "after 3 of 10 bytes"),
    ([b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab"], TruncatedTransfer, "after 2 bytes"),
])
def test_end_of_connection_too_early(parts: list[bytes], error: type[Exception], match: str) -> None:
    r = ResponseReader("GET")
    feed_all(r, *parts)
    with pytest.raises(error, match=match):
        r.eof()


def test_endless_head_is_bounded() -> None:
    r = ResponseReader("GET", max_head=4096)
    r.feed(b"HTTP/1.1 200 OK\r\nX-Long: ")
    with pytest.raises(ProtocolError, match="response head longer than 4096 bytes"):
        for _ in range(100):
            r.feed(b"a" * 1000)


def test_endless_interim_responses_are_bounded() -> None:
    r = ResponseReader("GET", max_head=4096)
    with pytest.raises(ProtocolError, match="longer than 4096"):
        for _ in range(1000):
            r.feed(b"HTTP/1.1 100 Continue\r\n\r\n")


def test_header_count_is_bounded() -> None:
    r = ResponseReader("GET")
    r.feed(b"HTTP/1.1 200 OK\r\n")
    with pytest.raises(ProtocolError, match=f"more than {MAX_HEADERS} header fields"):
        for i in range(MAX_HEADERS + 2):  # a field is counted when the next one starts
            r.feed(f"X-{i}: v\r\n".encode())


@pytest.mark.parametrize("start", [b"1;", b"1\r\na\r\n0\r\nX-Trailer: "], ids=["chunk extension", "trailer"])
def test_chunk_framing_that_never_ends_is_bounded(start: bytes) -> None:
    r = ResponseReader("GET", max_framing=8192)
    r.feed(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + start)
    with pytest.raises(ProtocolError, match="chunked framing .* longer than 8192 bytes"):
        for _ in range(100):
            r.feed(b"a" * 1000)


def test_chunk_size_overflow() -> None:
    r = ResponseReader("GET")
    with pytest.raises(ProtocolError):
        r.feed(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + b"f" * 40 + b"\r\n")


def test_many_small_chunks_are_progress_not_framing() -> None:
    r = ResponseReader("GET", max_framing=4096)
    r.feed(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
    got = feed_all(r, *(b"1\r\nx\r\n" * 1000 for _ in range(10)), b"0\r\n\r\n")
    assert got == b"x" * 10000 and r.complete


def test_interim_heads_leave_no_fields_and_do_not_count() -> None:
    # each head is decoded when it ends: an interim head's fields neither show nor count
    fields = "".join(f"X-{i}: v\r\n" for i in range(MAX_HEADERS - 1))
    r = ResponseReader("GET")
    body = feed_all(r, f"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n{fields}\r\n".encode(),
                    f"HTTP/1.1 200 OK\r\n{fields}Content-Length: 2\r\n\r\nok".encode())
    assert body == b"ok" and r.complete and r.status == 200
    assert "Link" not in r.headers and len(r.headers) == MAX_HEADERS


def test_content_type_answers_are_kept_for_short_values_only() -> None:
    from anyurl.protocols import mime as http1  # (every HTTP version's responses read it there)

    http1._types_seen.clear()
    assert http1.parse_content_type('Text/HTML; Charset="utf-8"') == ("text/html", "utf-8")
    assert http1.parse_content_type('Text/HTML; Charset="utf-8"') == ("text/html", "utf-8")  # from the cache
    long = "text/plain; x=" + "y" * 200
    assert http1.parse_content_type(long) == ("text/plain", None) and long not in http1._types_seen
    for i in range(300):  # a server sending a new value every time: the cache stays bounded
        http1.parse_content_type(f"text/x-{i}")
    assert len(http1._types_seen) <= 256
    # no type (or none valid): "", so that the handler sniffs the body (issue 25)
    assert http1.parse_content_type(None) == ("", None) and http1.parse_content_type("garbage") == ("", None)
    # two fields, joined: the last valid one
    assert http1.parse_content_type("application/json, text/x-zoo") == ("text/x-zoo", None)


def test_a_kept_tail_gives_the_same_head_as_request_head() -> None:
    headers = [("User-Agent", "x/1"), ("Accept-Encoding", "gzip, deflate")]
    tail = request_tail("h.example:8080", header_block(headers))
    for target in ("/a", "/b%20c?q=1"):
        assert request_start("GET", target) + tail == request_head("GET", target, "h.example:8080", headers)
    assert request_tail("h", header_block([("Host", "other")])) == b" HTTP/1.1\r\nHost: other\r\n\r\n"


@pytest.mark.parametrize("target, match", [("/a\r\nX: y", "CR, LF"), ("/a b", "invalid request target"),
                                           ("", "invalid request target"), ("/\0", "NUL")])
def test_request_start_refuses_a_target_that_would_break_the_wire(target: str, match: str) -> None:
    with pytest.raises(UnsafeURL, match=match) as info:
        request_start("GET", target, url="http://h/")
    assert "http://h/" in str(info.value)


def test_request_tail_refuses_a_host_that_would_break_the_wire() -> None:
    with pytest.raises(UnsafeURL, match="host contains CR"):
        request_tail("h\r\nX: y", (None, ""), url="http://h/")


def _reference(head: bytes) -> Headers:
    """The head's fields added one by one (Headers.add): the mapping as it was built before
    heads were decoded in one go."""
    h = Headers()
    for line in head.split(b"\r\n")[1:]:
        if line:
            name, _, value = line.partition(b":")
            h.add(name.decode("latin-1"), value.decode("latin-1").strip(" \t"))
    return h


@pytest.mark.parametrize("fields", [
    b"Server: nginx\r\nContent-Length: 0\r\nETag: \"x\"\r\n",
    b"Via: a\r\nVIA: b\r\nvia: c\r\nContent-Length: 0\r\n",  # one field, three spellings: joined, first kept
    b"Set-Cookie: a=1\r\nSet-Cookie: b=2\r\nX-Empty:\r\nContent-Length: 0\r\n",
    b"X-Latin: caf\xe9\r\nX-Space:   a b  \r\nX-Tab: \ta\tb\t\r\nContent-Length: 0\r\n",
    b"".join(b"X-%d: v%d\r\n" % (i % 7, i) for i in range(40)) + b"Content-Length: 0\r\n",
], ids=["plain", "repeated-any-case", "repeated-and-empty", "latin1-and-whitespace", "many-repeats"])
def test_a_head_decoded_at_once_is_the_mapping_built_field_by_field(fields: bytes) -> None:
    head = b"HTTP/1.1 200 OK\r\n" + fields
    r = ResponseReader("GET")
    r.feed(head + b"\r\n")
    want = _reference(head)
    assert r.complete and isinstance(r.headers, Headers)
    assert dict(r.headers) == dict(want) and list(r.headers) == list(want)
    for name in want:  # case-insensitive lookups, in and get as before
        for spelled in (name, name.lower(), name.upper()):
            assert r.headers[spelled] == want[name] and spelled in r.headers and r.headers.get(spelled) == want[name]
    assert Headers.from_fields([(b"A", b" 1 "), (b"a", b"2")]) == {"A": "1, 2"}


@pytest.mark.parametrize("value", [b"a\x00b", b"a\x7fb", b"a\x01b", b"a\rb"])
def test_a_field_with_control_bytes_is_refused(value: bytes) -> None:
    r = ResponseReader("GET", url="http://h/x")
    with pytest.raises(ProtocolError, match="invalid HTTP response head") as info:
        r.feed(b"HTTP/1.1 200 OK\r\nX-V: " + value + b"\r\nContent-Length: 0\r\n\r\n")
    assert info.value.url == "http://h/x"

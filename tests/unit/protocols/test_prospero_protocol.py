"""ARDP packets, reassembly, retransmission schedule and the Prospero v5 command language (pure)."""

from __future__ import annotations

import random
import time

import pytest

from anyurl.protocols import prospero as pp


def test_header_round_trip_short_and_full() -> None:
    short = pp.encode_packet(pp.Header(0x1234, 2, 5, 1, 3), b"data")
    assert short[0] == 11 and short[1:3] == b"\x12\x34" and short[11:] == b"data"
    assert pp.decode_packet(short) == (pp.Header(0x1234, 2, 5, 1, 3), b"data")
    full = pp.encode_packet(pp.Header(7, 1, 1, flags=pp.ACK_REQUESTED, option=pp.OPTION_RESET))
    assert full[0] == 13 and full[11] == 0x80 and full[12] == 2
    header, payload = pp.decode_packet(full)
    assert header.ack_requested and header.option == pp.OPTION_RESET and payload == b""


@pytest.mark.parametrize(("data", "header"), [
    (b"\x03\x00\x09rest", pp.Header(9, 1, 1)),  # no packet number, no total: a one-packet message
    (b"\x05\x00\x09\x00\x02x", pp.Header(9, 2, 0)),  # packet number only: total unknown
    (b"\x07\x00\x09\x00\x02\x00\x04", pp.Header(9, 2, 4)),
])
def test_absent_fields_take_defaults(data: bytes, header: pp.Header) -> None:
    assert pp.decode_packet(data)[0] == header


@pytest.mark.parametrize("data", [b"", b"\x00", b"\x0d\x00", b"\x81" + b"\x00" * 20, b"\x3f\x00\x00"])
def test_bad_packets(data: bytes) -> None:
    with pytest.raises(pp.ARDPError):
        pp.decode_packet(data)


def test_field_overflow() -> None:
    with pytest.raises(pp.ARDPError):
        pp.encode_packet(pp.Header(70000))


def test_split_message() -> None:
    packets = pp.split_message(5, b"x" * 2500, max_payload=1000)
    headers = [pp.decode_packet(p)[0] for p in packets]
    assert [(h.sequence, h.total) for h in headers] == [(1, 3), (2, 3), (3, 3)]
    assert [h.ack_requested for h in headers] == [False, False, True]
    assert b"".join(pp.decode_packet(p)[1] for p in packets) == b"x" * 2500


def test_retry_delays_back_off_to_a_ceiling() -> None:
    assert pp.retry_delays(1.0, 4) == [1.0, 2.0, 4.0, 8.0, 16.0]
    assert pp.retry_delays(5.0, 3, backoff=3.0, ceiling=20.0) == [5.0, 15.0, 20.0, 20.0]


def _reply(n: int, conn: int = 9) -> list[tuple[pp.Header, bytes]]:
    return [(pp.Header(conn, i, n, flags=pp.ACK_REQUESTED if i == n else 0), f"<{i}>".encode())
            for i in range(1, n + 1)]


def test_receiver_in_order() -> None:
    r = pp.Receiver(9)
    events = [r.feed(h, p) for h, p in _reply(3)]
    assert [e.accepted for e in events] == [True, True, True]
    assert events[-1].complete and events[-1].send_ack and not events[0].send_ack
    assert r.message() == b"<1><2><3>"
    assert pp.decode_packet(r.ack_packet())[0] == pp.Header(9, 0, 0, 3)


def test_receiver_shuffled_with_duplicates() -> None:
    packets = _reply(20) * 2
    random.Random(7).shuffle(packets)
    r = pp.Receiver(9)
    dups = sum(r.feed(h, p).duplicate for h, p in packets)
    assert dups == 20 and r.complete
    assert r.message() == b"".join(f"<{i}>".encode() for i in range(1, 21))


def test_receiver_gap_and_owed_ack() -> None:
    r = pp.Receiver(9)
    reply = _reply(4)
    # The ack-requesting last packet arrives first: acknowledge now, and again when the gap closes.
    assert r.feed(*reply[3]).send_ack
    assert r.missing() == [1, 2, 3]
    assert not r.feed(*reply[0]).send_ack
    assert not r.feed(*reply[1]).send_ack
    last = r.feed(*reply[2])
    assert last.send_ack and last.complete


def test_receiver_ignores_other_connections_and_control() -> None:
    r = pp.Receiver(9)
    assert r.feed(pp.Header(8, 1, 1), b"x").ignored
    assert r.feed(pp.Header(9, 0, 0, 0, wait=5), b"").wait == 5
    assert r.feed(pp.Header(9, 0, 0, 0, option=pp.OPTION_CANCEL), b"").refused
    with pytest.raises(pp.ARDPError):
        r.message()


def test_receiver_limits() -> None:
    with pytest.raises(pp.ARDPError, match="exceeds"):
        pp.Receiver(9, max_packets=10).feed(pp.Header(9, 1, 11), b"")
    r = pp.Receiver(9, max_bytes=5)
    r.feed(pp.Header(9, 1, 2), b"abc")
    with pytest.raises(pp.ARDPError, match="larger"):
        r.feed(pp.Header(9, 2, 2), b"def")
    with pytest.raises(pp.ARDPError, match="beyond"):
        pp.Receiver(9).feed(pp.Header(9, 3, 2), b"")


@pytest.mark.parametrize(("tokens", "line"), [
    (["LIST", "ATTRIBUTES"], "LIST ATTRIBUTES"),
    (["AUTHENTICATE", "", "UNAUTHENTICATED", "me"], "AUTHENTICATE '' UNAUTHENTICATED me"),
    (["DIRECTORY", "ASCII", "/a dir/it's"], "DIRECTORY ASCII '/a dir/it''s'"),
])
def test_tokens_round_trip(tokens: list[str], line: str) -> None:
    assert pp.join_tokens(tokens) == line
    assert pp.split_tokens(line) == tokens


@pytest.mark.parametrize(("line", "tokens"), [
    ("  LIST\t ATTRIBUTES  COMPONENTS\t", ["LIST", "ATTRIBUTES", "COMPONENTS"]),
    ("a 'b c'd", ["a", "b c", "d"]),
    ("x\x0by", ["x\x0by"]),  # only space and tab separate tokens
])
def test_split_tokens_whitespace(line: str, tokens: list[str]) -> None:
    assert pp.split_tokens(line) == tokens


def test_token_errors() -> None:
    with pytest.raises(pp.ARDPError):
        pp.join_tokens(["DIRECTORY", "a\nLIST"])
    with pytest.raises(pp.ARDPError):
        pp.split_tokens("LINK 'open")


def test_build_list_sends_fields() -> None:
    msg = pp.build_list("/pub/x y", (("OBJECT-VERSION", "3"), ("UID", "42")), user="joe").decode()
    assert msg.splitlines() == ["VERSION 5 anyurl", "AUTHENTICATE '' UNAUTHENTICATED joe",
                                "DIRECTORY ASCII '/pub/x y' VERSION 3 ID UID 42", "LIST ATTRIBUTES COMPONENTS"]
    info = pp.build_get_object_info("/f").decode()
    assert info.splitlines()[-1] == "GET-OBJECT-INFO OBJECT-TYPE+ACCESS-METHOD ASCII /f"


REPLY = b"""LINK L DIRECTORY sub INTERNET-D host.example(1600) ASCII /pub/sub
LINK L EXTERNAL 'read me' INTERNET-D ftp.example.org ASCII '/pub/READ ME' VERSION 2 ID UID 7
ATTRIBUTE OBJECT INTRINSIC ACCESS-METHOD SEQUENCE AFTP '' '' '' '' TEXT
ATTRIBUTE LINK FIELD DESCRIPTION 'a file'
LINK L EXTERNAL menu INTERNET-D gopher.example.org(7070) ASCII '/x y'
ATTRIBUTE OBJECT INTRINSIC ACCESS-METHOD SEQUENCE GOPHER '' '' '' '' 1
LINK L EXTERNAL web INTERNET-D ignored ASCII ignored
ATTRIBUTE OBJECT INTRINSIC ACCESS-METHOD SEQUENCE HTTP INTERNET-D www.example.org(8080) ASCII /a/b.html
ATTRIBUTE OBJECT INTRINSIC ACCESS-METHOD SEQUENCE AFS '' '' '' ''
"""


def test_parse_links_and_access_methods() -> None:
    reply = pp.parse_reply(REPLY)
    sub, readme, menu, web = reply.links
    assert (sub.target, sub.name, sub.host, sub.hsoname) == ("DIRECTORY", "sub", "host.example(1600)", "/pub/sub")
    assert readme.name == "read me" and readme.hsoname == "/pub/READ ME"
    assert readme.version == "2" and readme.ids == (("UID", "7"),)
    assert readme.attributes == (("DESCRIPTION", ("a file",)),)
    assert pp.access_url(readme.access[0]) == "ftp://ftp.example.org/pub/READ%20ME;type=a"
    assert pp.access_url(menu.access[0]) == "gopher://gopher.example.org:7070/1/x%20y"
    assert [pp.access_url(m) for m in web.access] == ["http://www.example.org:8080/a/b.html", None]


def test_parse_failures_and_object_info() -> None:
    assert pp.parse_reply(b"FAILURE NOT-FOUND /x\n").failure == ("NOT-FOUND", "/x")
    assert pp.parse_reply(b"VERSION-NOT-SUPPORTED 5\n").error == "VERSION-NOT-SUPPORTED 5"
    assert pp.parse_reply(b"NONE-FOUND\n").none_found
    info = pp.parse_reply(b"OBJECT-INFO FILE\nATTRIBUTE OBJECT INTRINSIC ACCESS-METHOD SEQUENCE LOCAL '' '' ASCII "
                          b"/tmp/a b\n")
    assert info.object_type == "FILE"
    assert pp.access_url(info.access[0]) == "file:///tmp/a"
    with pytest.raises(pp.ARDPError):
        pp.parse_reply(b"LINK L FILE too short\n")
    with pytest.raises(pp.ARDPError):
        pp.parse_reply(b"LINK L FILE a b c d e\nLINK L FILE a b c d e\n", max_links=1)


def test_attribute_lines_of_one_link_are_bounded() -> None:
    msg = b"LINK L FILE f INTERNET-D h ASCII /f\n" + b"ATTRIBUTE LINK FIELD X 1\n" * 11
    with pytest.raises(pp.ARDPError, match="more than 10 attributes"):
        pp.parse_reply(msg, max_attributes=10)
    assert len(pp.parse_reply(msg, max_attributes=11).links[0].attributes) == 11
    orphan = b"ATTRIBUTE OBJECT INTRINSIC ACCESS-METHOD SEQUENCE LOCAL '' '' ASCII /x\n" * 3
    with pytest.raises(pp.ARDPError, match="more than 2 access methods"):
        pp.parse_reply(orphan, max_attributes=2)


def test_parse_is_linear_in_attribute_lines() -> None:
    # 50,000 attribute lines on one link took 13 s when each line rebuilt the link's tuple
    msg = b"LINK L FILE f INTERNET-D h ASCII /f\n" + b"ATTRIBUTE LINK FIELD X 1\n" * 50_000
    t0 = time.perf_counter()
    reply = pp.parse_reply(msg, max_attributes=50_000)
    assert len(reply.links[0].attributes) == 50_000
    assert time.perf_counter() - t0 < 2.0


def test_wais_and_ftp_directory_urls() -> None:
    wais = pp.AccessMethod("WAIS", "INTERNET-D", "wais.example(2100)", "ASCII", "Default")
    assert pp.access_url(wais) == "wais://wais.example:2100/Default"
    ftpdir = pp.AccessMethod("AFTP", "INTERNET-D", "ftp.example", "ASCII", "/pub")
    assert pp.access_url(ftpdir, target="DIRECTORY") == "ftp://ftp.example/pub;type=d"

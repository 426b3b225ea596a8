"""Z39.50 APDU encoding/decoding and the BER codec under it (pure, no network)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from anyurl.handlers.wais import make_docid, parse_docid
from anyurl.protocols import ber, z3950
from anyurl.protocols.ber import CONTEXT, UNIVERSAL

# Made once with the asn1tools codec this module replaced: see the file's "note".
GOLDEN = json.loads((Path(__file__).parent / "z3950_golden.json").read_text())


def plain(value: Any) -> Any:
    """A decoded result as the JSON the golden file stores (options sorted, bytes as hex)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {"type": type(value).__name__}
        for f in dataclasses.fields(value):
            out[f.name] = plain(getattr(value, f.name))
        return out
    if isinstance(value, frozenset):
        return sorted(value)
    if isinstance(value, (bytes, bytearray)):
        return {"hex": bytes(value).hex()}
    if isinstance(value, (tuple, list)):
        return [plain(x) for x in value]
    return value


def _kwargs(raw: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in raw.items():
        if isinstance(value, dict) and "hex" in value:
            value = bytes.fromhex(value["hex"])
        elif isinstance(value, dict) and "repeat" in value:
            value = value["repeat"] * value["times"]
        elif isinstance(value, dict) and "range256_times" in value:
            value = bytes(range(256)) * value["range256_times"]
        out[key] = value
    return out


@pytest.mark.parametrize("case", GOLDEN["encode"], ids=lambda c: f"{c['func']}")
def test_encoders_match_asn1tools_bytes(case: dict[str, Any]) -> None:
    func = getattr(z3950, case["func"])
    if "error" in case:
        with pytest.raises(z3950.Z3950Error):
            func(**_kwargs(case["kwargs"]))
        return
    data = func(**_kwargs(case["kwargs"]))
    if "hex" in case:
        assert data.hex() == case["hex"]
    else:
        assert (len(data), data[:32].hex(), data[-32:].hex()) == (case["length"], case["head"], case["tail"])
        assert hashlib.sha256(data).hexdigest() == case["sha256"]
    assert z3950.apdu_length(data) == len(data)
    assert ber.decode(data).raw == data


def test_golden_file_covers_each_apdu_and_yaz_reply() -> None:
    # the parity tests above and below cannot pass by comparing nothing
    assert {c["func"] for c in GOLDEN["encode"]} == {"encode_init", "encode_search", "encode_present", "encode_close"}
    assert len(GOLDEN["encode"]) > 70
    sources = [c["source"] for c in GOLDEN["decode"]]
    assert sum(s.startswith("yaz-ztest") for s in sources) >= 40
    kinds = {c["value"]["type"] if isinstance(c.get("value"), dict) else "other" for c in GOLDEN["decode"]}
    assert {"InitResult", "SearchResult", "PresentResult"} <= kinds


@pytest.mark.parametrize("case", GOLDEN["decode"], ids=lambda c: c["source"].replace(" ", "-"))
def test_decoder_gives_the_values_asn1tools_gave(case: dict[str, Any]) -> None:
    data = bytes.fromhex(case["hex"])
    expected = case.get("now", case)  # "now": a deliberate difference, explained in case["why"]
    if "error" in expected:
        with pytest.raises(z3950.Z3950Error):
            z3950.decode_apdu(data)
        return
    assert plain(z3950.decode_apdu(data)) == expected["value"]


def _request(data: bytes) -> ber.Element:
    kind, top = z3950.decode_apdu(data)  # type: ignore[misc]
    assert isinstance(top, ber.Element)
    return top


def _member(element: ber.Element, number: int) -> ber.Element:
    (found,) = [c for c in element.children if c.is_(CONTEXT, number)]
    return found


def test_init_request_bytes() -> None:
    data = z3950.encode_init(message_size=1024, record_size=2048)
    assert data[0] == 0xB4  # [20] constructed, context class
    assert z3950.decode_apdu(data)[0] == "initRequest"  # type: ignore[index]
    top = _request(data)
    assert _member(top, 3).bit_string() == (b"\xe0", 3)
    assert _member(top, 5).integer() == 1024 and _member(top, 6).integer() == 2048
    assert _member(top, 111).octets() == b"anyurl"
    assert _member(top, 4).bit_string() == (b"\xc0\x02", 15)  # search, present, namedResultSets


def test_search_request_rpn_term_and_attributes() -> None:
    top = _request(z3950.encode_search("computer", "Default", use_attribute=4, record_syntax="SUTRS"))
    assert [c.octets() for c in _member(top, 18).children] == [b"Default"]
    assert _member(top, 104).oid() == "1.2.840.10003.5.101"
    rpn = _member(_member(top, 21), 1)  # query [21] -> type-1 [1]
    assert rpn.children[0].oid() == z3950.OID_BIB1
    apt = _member(_member(rpn, 0), 102)
    assert _member(apt, 45).octets() == b"computer"
    (attr,) = _member(apt, 44).children
    assert [_member(attr, 120).integer(), _member(attr, 121).integer()] == [1, 4]


def test_numeric_term() -> None:
    top = _request(z3950.encode_search("42", "db", numeric_term=True))
    apt = _member(_member(_member(_member(top, 21), 1), 0), 102)
    assert _member(apt, 215).integer() == 42
    with pytest.raises(z3950.Z3950Error, match="not a numeric term"):
        z3950.encode_search("forty", "db", numeric_term=True)


def test_present_request_and_unknown_syntax() -> None:
    top = _request(z3950.encode_present(3, 2, record_syntax="USMARC", element_set="F"))
    assert (_member(top, 30).integer(), _member(top, 29).integer()) == (3, 2)
    assert _member(top, 104).oid() == "1.2.840.10003.5.10"
    assert _member(_member(top, 19), 0).octets() == b"F"
    with pytest.raises(z3950.Z3950Error, match="unknown record syntax"):
        z3950.encode_present(1, 1, record_syntax="NOPE")


def test_close_uses_high_tag_number() -> None:
    data = z3950.encode_close()
    assert data[:2] == b"\xbf\x30"  # [48] needs the high-tag-number form
    assert z3950.decode_apdu(data) == ("close", (0, ""))


def test_text_a_general_string_cannot_carry_is_refused() -> None:
    with pytest.raises(z3950.Z3950Error, match="Latin-1"):
        z3950.encode_search("t", "snow \u2603")


def _ctx(number: int, content: bytes, constructed: bool = False) -> bytes:
    return ber.tlv(CONTEXT, number, content, constructed)


def _seq(*members: bytes) -> bytes:
    return ber.tlv(UNIVERSAL, 16, b"".join(members), True)


def _present_response(records: bytes) -> bytes:
    body = _ctx(24, b"\x01") + _ctx(25, b"\x02") + _ctx(27, b"\x00") + _ctx(28, records, True)
    return _ctx(25, body, True)


def _sutrs_record(payload: bytes, name: bytes = b"Default") -> bytes:
    external = ber.tlv(UNIVERSAL, 8, ber.tlv(UNIVERSAL, 6, ber.oid_content("1.2.840.10003.5.101"))
                       + _ctx(0, payload, True), True)
    return _seq(_ctx(0, name), _ctx(1, _ctx(1, external, True), True))


@pytest.mark.parametrize("octets", ["Café ☃".encode(), "Caf\u00e9".encode("latin-1"), bytes(range(256))])
def test_sutrs_record_octets_arrive_unchanged(octets: bytes) -> None:
    # a GeneralString carries octets in the target's character set: never decoded and re-encoded
    sutrs = bytes([0x1B, 0x82]) + len(octets).to_bytes(2, "big") + octets
    result = z3950.decode_apdu(_present_response(_sutrs_record(sutrs, "Caf\u00e9".encode("latin-1"))))
    assert isinstance(result, z3950.PresentResult)
    assert result.records[0].data == octets
    assert result.records[0].database == "Caf\u00e9"


def test_indefinite_lengths_decode_like_definite_ones() -> None:
    # YAZ writes some replies with indefinite lengths; X.690 8.1.3.6 allows them on constructed elements
    definite = _present_response(_sutrs_record(ber.tlv(UNIVERSAL, 27, b"hello")))
    record = b"\x30\x80" + _ctx(0, b"db") + b"\xa1\x80\xa1\x80\x28\x80" \
        + ber.tlv(UNIVERSAL, 6, ber.oid_content("1.2.840.10003.5.101")) \
        + b"\xa0\x80" + ber.tlv(UNIVERSAL, 27, b"hello") + b"\x00\x00" * 5
    indefinite = b"\xb9\x80" + _ctx(24, b"\x01") + _ctx(25, b"\x02") + _ctx(27, b"\x00") \
        + b"\xbc\x80" + record + b"\x00\x00" * 2
    assert z3950.apdu_length(indefinite) == len(indefinite)
    a, b = z3950.decode_apdu(definite), z3950.decode_apdu(indefinite)
    assert isinstance(a, z3950.PresentResult) and isinstance(b, z3950.PresentResult)
    assert a.records[0].data == b.records[0].data == b"hello"
    assert b.records[0].database == "db"


def _large_indefinite_present_response(records: int) -> bytes:
    # the indefinite-length layout of test_indefinite_lengths_decode_like_definite_ones, many records
    record = b"\x30\x80" + _ctx(0, b"db") + b"\xa1\x80\xa1\x80\x28\x80" \
        + ber.tlv(UNIVERSAL, 6, ber.oid_content("1.2.840.10003.5.101")) \
        + b"\xa0\x80" + ber.tlv(UNIVERSAL, 27, b"record text " * 4) + b"\x00\x00" * 5
    return b"\xb9\x80" + _ctx(24, bytes([records >> 8, records & 255])) + _ctx(25, b"\x02") \
        + _ctx(27, b"\x00") + b"\xbc\x80" + record * records + b"\x00\x00" * 2


def test_indefinite_reply_fed_byte_by_byte_is_scanned_in_linear_work() -> None:
    # The session asks where the APDU ends after every read; the scan resumes where it stopped,
    # so a reply arriving one byte at a time costs O(n) steps (headers and end-of-contents
    # checks), not one scan from the start per read (O(n^2): ~n^2/20 steps for this layout).
    for records in (250, 1000):
        data = _large_indefinite_present_response(records)
        scanner = z3950.APDUScanner(len(data))
        buffer = bytearray()
        found = []
        for i in range(len(data)):
            buffer.append(data[i])
            n = scanner.length(buffer)
            if n is not None:
                found.append(i + 1)
        assert found and found[0] == len(data)  # known exactly when its last byte arrived
        assert scanner.length(buffer) == len(data)
        # one step per call that waits for a byte, plus about one per element header or end
        headers = data.count(b"\x00\x00") + 2 * records  # generous: EOCs, plus the definite leaves
        assert scanner.scanner.steps <= len(data) + 2 * headers, (records, scanner.scanner.steps)
        result = z3950.decode_apdu(bytes(buffer))
        assert isinstance(result, z3950.PresentResult) and len(result.records) == records
        assert result.records[-1].data == b"record text " * 4


def test_apdu_scanner_stays_bounded_on_an_endless_indefinite_reply() -> None:
    # an indefinite-length APDU that never ends is refused once the buffer passes the limit
    scanner = z3950.APDUScanner(4096)
    buffer = bytearray(b"\xbc\x80")
    with pytest.raises(z3950.Z3950Error, match="longer than the 4096-byte limit"):
        for _ in range(10_000):
            buffer += b"\x30\x80\x04\x01x\x00\x00"
            assert scanner.length(buffer) is None
    assert len(buffer) <= 4096 + 8


def test_apdu_scanner_reset_for_the_next_apdu() -> None:
    # two APDUs in one read: after the first is taken, reset() and the second is found
    first = _large_indefinite_present_response(3)
    second = z3950.encode_close()
    buffer = bytearray(first + second[:2])
    scanner = z3950.APDUScanner(1 << 20)
    assert scanner.length(buffer) == len(first)
    del buffer[:len(first)]
    scanner.reset()
    assert scanner.length(buffer) is None or scanner.length(buffer) == len(second)
    buffer += second[2:]
    assert scanner.length(buffer) == len(second)


def test_segmented_record_is_refused() -> None:
    fragment = _seq(_ctx(1, _ctx(3, b"\x04\x01x", True), True))
    with pytest.raises(z3950.Z3950Error, match="segmented"):
        z3950.decode_apdu(_present_response(fragment))


@pytest.mark.parametrize(("data", "problem"), [
    (_ctx(23, _ctx(24, b"\x00") + _ctx(25, b"\x00") + _ctx(22, b"\xff"), True), r"mandatory member \[23\]"),
    (_ctx(21, _ctx(3, b"\x05\xe0"), True), r"mandatory member \[4\]"),
    (_ctx(48, _ctx(211, b"\x00") + _ctx(211, b"\x01"), True), "repeats"),
    (_ctx(48, _ctx(211, b""), True), "no contents"),
    (_ctx(26, b"", True), r"unexpected APDU \[26\]"),
    (b"\x30\x03\x02\x01\x05", r"unexpected APDU \[UNIVERSAL 16\]"),
    (_ctx(23, _ctx(23, b"\x00") + _ctx(24, b"\x00") + _ctx(25, b"\x00") + _ctx(22, b"\xff\xff"), True),
     "BOOLEAN"),
])
def test_malformed_apdus_name_the_problem(data: bytes, problem: str) -> None:
    with pytest.raises(z3950.Z3950Error, match=problem):
        z3950.decode_apdu(data)


def test_init_response_options_and_version() -> None:
    body = (_ctx(3, ber.bit_string_content(b"\xc0", 2)) + _ctx(4, ber.bit_string_content(b"\xc0\x00", 15))
            + _ctx(5, b"\x01") + _ctx(6, b"\x02") + _ctx(12, b"\xff") + _ctx(111, b"T"))
    result = z3950.decode_apdu(_ctx(21, body, True))
    assert isinstance(result, z3950.InitResult)
    assert result.accepted and result.version == 2 and result.options == {"search", "present"}
    assert result.implementation_name == "T"


@pytest.mark.parametrize(("data", "expected"), [
    (b"", None),
    (b"\xb5", None),
    (b"\xb5\x03abc", 5),
    (b"\xb5\x82\x01", None),
    (b"\xb5\x82\x01\x00", 4 + 256),
    (b"\xbf\x30\x03", 6),
    (b"\xbf", None),
    (b"\xb5\x80\x02\x01\x05\x00", None),  # indefinite, end-of-contents not yet seen
    (b"\xb5\x80\x02\x01\x05\x00\x00", 7),
    (b"\xb5\x80\xa1\x80\x02\x01\x05\x00\x00\x00\x00", 11),
])
def test_apdu_length(data: bytes, expected: int | None) -> None:
    assert z3950.apdu_length(data) == expected


@pytest.mark.parametrize("data", [b"\xb5\x89" + b"\x01" * 9, b"\x02\x80\x00\x00", b"\xbf\xff\xff\xff\xff\xff\xff\x01"])
def test_apdu_length_malformed(data: bytes) -> None:
    with pytest.raises(z3950.Z3950Error):
        z3950.apdu_length(data)


def test_apdu_length_limit() -> None:
    with pytest.raises(z3950.Z3950Error, match="limit"):
        z3950.apdu_length(b"\xb5\x84\x7f\xff\xff\xff", limit=1 << 20)
    with pytest.raises(z3950.Z3950Error, match="limit"):
        z3950.apdu_length(b"\xb5\x80" + b"\x04\x01x" * 10, limit=16)  # indefinite, never ends


def test_render_marc() -> None:
    fields = [("001", b"  123 "), ("245", b"10\x1faHow to program\x1fcJack")]
    directory = b""
    body = b""
    for tag, value in fields:
        value += b"\x1e"
        directory += f"{tag}{len(value):04d}{len(body):05d}".encode()
        body += value
    base = 24 + len(directory) + 1
    total = base + len(body) + 1
    record = f"{total:05d}nam  22{base:05d}   4500".encode() + directory + b"\x1e" + body + b"\x1d"
    text = z3950.render_marc(record)
    assert "001   123 " in text
    assert "245 10 $a How to program $c Jack" in text
    with pytest.raises(z3950.Z3950Error):
        z3950.render_marc(b"not marc")


def test_docid_round_trip() -> None:
    assert parse_docid(make_docid(12, "a:b c")) == (12, "a:b c")
    assert parse_docid("z1:0:x") is None
    assert parse_docid("opaque-id") is None

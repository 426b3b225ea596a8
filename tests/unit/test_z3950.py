"""Z39.50 APDU encoding/decoding (pure, no network)."""

from __future__ import annotations

from typing import Any

import pytest

from anyurl.handlers.wais import make_docid, parse_docid
from anyurl.protocols import z3950


def codec() -> Any:
    return z3950._compiled()


def test_init_request_bytes() -> None:
    data = z3950.encode_init(message_size=1024, record_size=2048)
    assert data[0] == 0xB4  # [20] constructed, context class
    kind, value = codec().decode("PDU", data)
    assert kind == "initRequest"
    assert value["protocolVersion"] == (b"\xe0", 3)
    assert value["preferredMessageSize"] == 1024 and value["exceptionalRecordSize"] == 2048
    assert value["implementationName"] == "anyurl"
    assert z3950.apdu_length(data) == len(data)


def test_search_request_rpn_term_and_attributes() -> None:
    data = z3950.encode_search("computer", "Default", use_attribute=4, record_syntax="SUTRS")
    kind, value = codec().decode("PDU", data)
    assert kind == "searchRequest"
    assert value["databaseNames"] == ["Default"]
    assert value["preferredRecordSyntax"] == "1.2.840.10003.5.101"
    qkind, rpn = value["query"]
    assert qkind == "type-1" and rpn["attributeSet"] == z3950.OID_BIB1
    term = rpn["rpn"][1][1]
    assert term["term"] == ("general", b"computer")
    assert term["attributes"] == [{"attributeType": 1, "attributeValue": ("numeric", 4)}]


def test_numeric_term() -> None:
    kind, value = codec().decode("PDU", z3950.encode_search("42", "db", numeric_term=True))
    assert value["query"][1]["rpn"][1][1]["term"] == ("numeric", 42)


def test_present_request_and_unknown_syntax() -> None:
    kind, value = codec().decode("PDU", z3950.encode_present(3, 2, record_syntax="USMARC", element_set="F"))
    assert kind == "presentRequest"
    assert (value["resultSetStartPoint"], value["numberOfRecordsRequested"]) == (3, 2)
    assert value["preferredRecordSyntax"] == "1.2.840.10003.5.10"
    assert value["recordComposition"] == ("simple", ("genericElementSetName", "F"))
    with pytest.raises(z3950.Z3950Error, match="unknown record syntax"):
        z3950.encode_present(1, 1, record_syntax="NOPE")


def test_close_uses_high_tag_number() -> None:
    data = z3950.encode_close()
    assert data[:2] == b"\xbf\x30"  # [48] needs the high-tag-number form
    assert z3950.decode_apdu(data) == ("close", (0, ""))


def _encode(kind: str, value: dict[str, Any]) -> bytes:
    return bytes(codec().encode("PDU", (kind, value)))


def test_search_response_with_diagnostic() -> None:
    data = _encode("searchResponse", {
        "resultCount": 0, "numberOfRecordsReturned": 0, "nextResultSetPosition": 0, "searchStatus": False,
        "records": ("nonSurrogateDiagnostic", {"diagnosticSetId": z3950.OID_DIAG_BIB1, "condition": 109,
                                               "addinfo": ("v2Addinfo", "NoSuchDb")}),
    })
    result = z3950.decode_apdu(data)
    assert isinstance(result, z3950.SearchResult)
    assert not result.success and result.count == 0
    assert str(result.diagnostics[0]) == "[109] Database unavailable -- NoSuchDb"


def test_present_response_records_in_each_encoding() -> None:
    sutrs = bytes(codec().encode("GeneralText", "hello record"))
    data = _encode("presentResponse", {
        "numberOfRecordsReturned": 2, "nextResultSetPosition": 3, "presentStatus": 0,
        "records": ("responseRecords", [
            {"name": "Default", "record": ("retrievalRecord", {
                "direct-reference": "1.2.840.10003.5.101", "encoding": ("single-ASN1-type", sutrs)})},
            {"name": "Default", "record": ("retrievalRecord", {
                "direct-reference": "1.2.840.10003.5.109.10", "encoding": ("octet-aligned", b"<x/>")})},
            {"record": ("surrogateDiagnostic", ("defaultFormat", {
                "diagnosticSetId": z3950.OID_DIAG_BIB1, "condition": 14}))},
        ]),
    })
    result = z3950.decode_apdu(data)
    assert isinstance(result, z3950.PresentResult)
    a, b, c = result.records
    assert (a.syntax, a.data, a.database) == ("SUTRS", b"hello record", "Default")
    assert (b.syntax, b.data) == ("XML", b"<x/>")
    assert c.diagnostic is not None and c.diagnostic.condition == 14


@pytest.mark.parametrize("octets", ["Café ☃".encode(), "Caf\u00e9".encode("latin-1"), bytes(range(256))])
def test_sutrs_record_octets_arrive_unchanged(octets: bytes) -> None:
    # a GeneralString carries octets in the target's character set: never decoded and re-encoded
    sutrs = bytes([0x1B, 0x82]) + len(octets).to_bytes(2, "big") + octets
    data = _encode("presentResponse", {
        "numberOfRecordsReturned": 1, "nextResultSetPosition": 2, "presentStatus": 0,
        "records": ("responseRecords", [
            {"name": "Caf\u00e9", "record": ("retrievalRecord", {
                "direct-reference": "1.2.840.10003.5.101", "encoding": ("single-ASN1-type", sutrs)})}]),
    })
    result = z3950.decode_apdu(data)
    assert isinstance(result, z3950.PresentResult)
    assert result.records[0].data == octets


def test_init_response_options_and_version() -> None:
    data = _encode("initResponse", {
        "protocolVersion": (b"\xc0", 2), "options": (b"\xc0\x00", 15),
        "preferredMessageSize": 1, "exceptionalRecordSize": 2, "result": True, "implementationName": "T",
    })
    result = z3950.decode_apdu(data)
    assert isinstance(result, z3950.InitResult)
    assert result.accepted and result.version == 2 and result.options == {"search", "present"}


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


def test_garbage_is_an_error() -> None:
    with pytest.raises(z3950.Z3950Error):
        z3950.decode_apdu(b"\x30\x03\x02\x01\x05")


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


def test_preparsed_asn1_is_current() -> None:
    import asn1tools

    from anyurl.protocols._z3950_parsed import PARSED

    assert asn1tools.parse_string(z3950._ASN1) == PARSED, "run z3950.regenerate_parsed()"

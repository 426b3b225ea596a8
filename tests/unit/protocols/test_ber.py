"""The BER (X.690) codec under Z39.50: encodings, limits, and fuzzing (pure, no network)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import anyurl
from anyurl.errors import ProtocolError
from anyurl.protocols import ber, z3950
from anyurl.protocols.ber import APPLICATION, CONTEXT, PRIVATE, UNIVERSAL

GOLDEN = json.loads((Path(__file__).parent / "z3950_golden.json").read_text())
APDUS = [bytes.fromhex(c["hex"]) for c in GOLDEN["decode"] if c["hex"]]


@pytest.mark.parametrize(("cls", "number", "constructed", "octets"), [
    (UNIVERSAL, 2, False, "02"),
    (CONTEXT, 20, True, "b4"),
    (CONTEXT, 30, False, "9e"),
    (CONTEXT, 31, False, "9f1f"),
    (CONTEXT, 48, True, "bf30"),
    (CONTEXT, 127, False, "9f7f"),
    (CONTEXT, 128, False, "9f8100"),
    (CONTEXT, 215, False, "9f8157"),
    (APPLICATION, 1, True, "61"),
    (PRIVATE, 16383, False, "dfff7f"),
])
def test_tag_octets(cls: int, number: int, constructed: bool, octets: str) -> None:
    assert ber.tag_octets(cls, number, constructed).hex() == octets
    element = ber.decode(ber.tlv(cls, number, b"", constructed))
    assert (element.cls, element.number, element.constructed) == (cls, number, constructed)


@pytest.mark.parametrize(("length", "octets"), [
    (0, "00"), (127, "7f"), (128, "8180"), (255, "81ff"), (256, "820100"), (65536, "83010000"),
])
def test_length_octets_are_the_shortest_form(length: int, octets: str) -> None:
    assert ber.length_octets(length).hex() == octets


@pytest.mark.parametrize(("value", "octets"), [
    (0, "00"), (127, "7f"), (128, "0080"), (-1, "ff"), (-128, "80"), (-129, "ff7f"), (256, "0100"),
    (2**31 - 1, "7fffffff"), (2**32, "0100000000"),
])
def test_integer_content(value: int, octets: str) -> None:
    assert ber.integer_content(value).hex() == octets
    assert ber.decode(ber.tlv(UNIVERSAL, 2, bytes.fromhex(octets))).integer() == value


@given(st.integers(min_value=-(2**120), max_value=2**120))
def test_integer_round_trip(value: int) -> None:
    assert ber.decode(ber.tlv(UNIVERSAL, 2, ber.integer_content(value))).integer() == value


@given(st.integers(0, 2), st.integers(0, 39), st.lists(st.integers(0, 2**63), max_size=8))
def test_oid_round_trip(first: int, second: int, rest: list[int]) -> None:
    dotted = ".".join(map(str, [first, second, *rest]))
    assert ber.decode(ber.tlv(UNIVERSAL, 6, ber.oid_content(dotted))).oid() == dotted


def test_oid_known_encoding_and_bad_values() -> None:
    assert ber.oid_content("1.2.840.10003.3.1").hex() == "2a8648ce130301"
    for bad in ["1", "3.1", "1.40", "1.-2", "a.b"]:
        with pytest.raises(ValueError):
            ber.oid_content(bad)


@pytest.mark.parametrize(("data", "nbits", "octets"), [
    (b"\xe0", 3, "05e0"), (b"\xff\xff", 15, "01fffe"), (b"", 0, "00"), (b"\xab", 8, "00ab"),
])
def test_bit_string_content(data: bytes, nbits: int, octets: str) -> None:
    assert ber.bit_string_content(data, nbits).hex() == octets


@pytest.mark.parametrize(("data", "problem"), [
    (b"", "cut short"),
    (b"\x04", "cut short"),
    (b"\x04\x05abc", "claims 5 bytes but only 3 remain"),
    (b"\x04\x84\xff\xff\xff\xff", "claims 4294967295 bytes"),
    (b"\x04\x89" + b"\x01" * 9, "absurd"),
    (b"\x04\xff", "reserved length"),
    (b"\x04\x80abc\x00\x00", "indefinite length on primitive"),
    (b"\x30\x80\x02\x01\x05", "cut short"),
    (b"\x04\x01ab", "1 bytes follow"),
    (b"\x00\x00", "end-of-contents"),
    (b"\x30\x04\x00\x00\x02\x00", "end-of-contents"),
    (b"\x30\x03\x04\x05abc", "runs past the end"),
    (b"\x9f\x80\x01\x00", "padding"),
    (b"\x9f\xff\xff\x7f\x00", "exceeds the limit"),
    (b"\x9f\x81", "cut short"),
])
def test_malformed_encodings_name_the_problem(data: bytes, problem: str) -> None:
    with pytest.raises(ber.BERError, match=problem):
        ber.decode(data)


def test_limits() -> None:
    nested = b""
    for _ in range(70):
        nested = ber.tlv(UNIVERSAL, 16, nested, True)
    with pytest.raises(ber.BERError, match="deeper than 64"):
        ber.decode(nested)
    assert ber.decode(nested, max_depth=80).constructed
    with pytest.raises(ber.BERError, match="deeper than 64"):
        ber.element_length(b"\x30\x80" * 70)
    with pytest.raises(ber.BERError, match="over the 16-byte limit"):
        ber.decode(ber.tlv(UNIVERSAL, 4, b"x" * 17), max_length=16)
    with pytest.raises(ber.BERError, match="longer than the 16-byte limit"):
        ber.decode(b"\x30\x80" + b"\x04\x01x" * 10 + b"\x00\x00", max_length=16)
    with pytest.raises(ber.BERError, match="exceeds the limit of 100"):
        ber.decode(ber.tlv(CONTEXT, 101, b""), max_tag=100)


@pytest.mark.parametrize(("data", "problem"), [
    (b"\x02\x00", "no contents"),
    (b"\x02\x11" + b"\x01" * 17, "too large"),
    (b"\x01\x02\xff\xff", "not 1"),
    (b"\x06\x00", "empty or cut short"),
    (b"\x06\x02\x2a\x86", "empty or cut short"),
    (b"\x06\x03\x2a\x80\x01", "padded arc"),
    (b"\x06\x0c\x2a" + b"\xff" * 10 + b"\x7f", "arc too large"),
    (b"\x03\x00", "unused-bits"),
    (b"\x03\x02\x08\x00", "unused-bits"),
    (b"\x03\x01\x03", "unused-bits"),
    (b"\x22\x03\x03\x01\x00", "constructed where a primitive"),
])
def test_bad_values_name_the_problem(data: bytes, problem: str) -> None:
    element = ber.decode(data)
    reader = {1: element.boolean, 2: element.integer, 6: element.oid, 3: element.bit_string}[element.number]
    with pytest.raises(ber.BERError, match=problem):
        reader()


def test_constructed_octet_string_segments() -> None:
    data = b"\x24\x80\x04\x02ab\x24\x03\x04\x01c\x00\x00"
    assert ber.decode(data).octets() == b"abc"


def test_errors_are_protocol_errors() -> None:
    assert issubclass(ber.BERError, ProtocolError) and issubclass(z3950.Z3950Error, ber.BERError)


def test_element_length_on_partial_buffers() -> None:
    apdu = APDUS[-1]
    for cut in range(len(apdu)):
        n = ber.element_length(apdu[:cut])
        assert n is None or n == len(apdu)
    assert ber.element_length(apdu) == len(apdu)


def _decode_or_protocol_error(data: bytes) -> None:
    """Only ProtocolError escapes the decoder and the framing; and where the decoder takes
    *data* as one APDU, the framing (what the reader waits for) ends it at its last byte."""
    try:
        z3950.decode_apdu(data)
        decoded = True
    except ProtocolError:
        decoded = False
    try:
        n = z3950.apdu_length(data, 1 << 20)
    except ProtocolError:
        assert not decoded, "the reader refuses an APDU the decoder takes"
        return
    assert n is None or n > 0
    if decoded:
        assert n == len(data), (n, len(data))


FUZZ = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _length_or_error(scanner: ber.Scanner, data: bytes) -> object:
    try:
        return scanner.length(data)
    except ber.BERError as exc:
        return exc.message


@FUZZ
@given(st.sampled_from(APDUS + [b"\xbf\x30\x80" + a + b"\x00\x00" for a in APDUS]), st.data())
def test_fuzz_scanner_resumed_equals_a_scan_from_the_start(apdu: bytes, draw: st.DataObject) -> None:
    # A Scanner fed a growing buffer answers at every step what a fresh scan of that buffer
    # answers (the length, None, or the same error), mutated or not, under any limit.
    data = bytearray(apdu)
    for _ in range(draw.draw(st.integers(0, 3))):
        pos = draw.draw(st.integers(0, len(data) - 1))
        data[pos] = draw.draw(st.sampled_from([0x00, 0x80, 0x7F, 0xFF, 0x1F, 0x84, 0x30, 0xBF, data[pos] ^ 1]))
    limit = draw.draw(st.sampled_from([None, 64, 300, 1 << 20]))
    scanner = ber.Scanner(limit)
    cut = 0
    while cut < len(data):
        cut = min(len(data), cut + draw.draw(st.integers(1, 64)))
        got = _length_or_error(scanner, bytes(data[:cut]))
        assert got == _length_or_error(ber.Scanner(limit), bytes(data[:cut])), cut
        if got is not None:
            break


@FUZZ
@given(st.binary(max_size=300))
@example(b"\xbf\x30\x80" * 40)
def test_fuzz_random_bytes_raise_only_protocol_error(data: bytes) -> None:
    _decode_or_protocol_error(data)


@FUZZ
@given(st.sampled_from(APDUS), st.data())
def test_fuzz_truncated_and_mutated_apdus_raise_only_protocol_error(apdu: bytes, draw: st.DataObject) -> None:
    data = bytearray(apdu)
    for _ in range(draw.draw(st.integers(0, 4))):
        pos = draw.draw(st.integers(0, len(data) - 1))
        action = draw.draw(st.sampled_from(["flip", "set", "insert", "delete"]))
        if action == "flip":
            data[pos] ^= 1 << draw.draw(st.integers(0, 7))
        elif action == "set":
            data[pos] = draw.draw(st.sampled_from([0x00, 0x80, 0x7F, 0xFF, 0x1F, 0x84, 0x30, 0x1B]))
        elif action == "insert":
            data[pos:pos] = draw.draw(st.binary(min_size=1, max_size=4))
        elif len(data) > 1:
            del data[pos]
    cut = draw.draw(st.integers(0, len(data)))
    _decode_or_protocol_error(bytes(data[:cut]))
    _decode_or_protocol_error(bytes(data))


def test_wais_path_imports_neither_asyncio_in_protocols_nor_asn1tools() -> None:
    code = ("import sys\nimport anyurl.protocols.z3950\nassert 'asyncio' not in sys.modules\n"
            "import anyurl.handlers.wais\nprint(sorted(m for m in ('asn1tools', 'pyparsing', 'aiohttp') "
            "if m in sys.modules))")
    env = {**os.environ, "PYTHONPATH": str(Path(anyurl.__file__).parent.parent)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env,
                         check=True)
    assert out.stdout.strip() == "[]"

"""Z39.50-1995 (ANSI/NISO Z39.50, version 3) APDUs for the wais: scheme (pure, no I/O).

The BER encoding is done by asn1tools, compiled from the subset of the
Z39-50-APDU-1995 ASN.1 module below (written for this project from the
standard: only the APDUs a retrieving client needs, with ``...`` so that
members this subset does not name are skipped when decoding).

What the client uses: InitializeRequest/Response, SearchRequest with a
Type-1 (RPN) query of one term with Bib-1 attributes, SearchResponse,
PresentRequest with a preferred record syntax, PresentResponse (records or
diagnostics) and Close.

:func:`apdu_length` tells the driver how many bytes one APDU needs, from its
tag and length octets alone, so it can refuse an over-long APDU before
reading it.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import asn1tools

__all__ = [
    "BIB1_DIAGNOSTICS",
    "OID_BIB1",
    "OID_DIAG_BIB1",
    "RECORD_SYNTAXES",
    "Diagnostic",
    "InitResult",
    "PresentResult",
    "Record",
    "SearchResult",
    "Z3950Error",
    "apdu_length",
    "decode_apdu",
    "encode_close",
    "encode_init",
    "encode_present",
    "encode_search",
    "render_marc",
]

OID_BIB1 = "1.2.840.10003.3.1"
OID_DIAG_BIB1 = "1.2.840.10003.4.1"
# Record syntax object identifiers (Z39.50 appendix REC).
RECORD_SYNTAXES: dict[str, str] = {
    "USMARC": "1.2.840.10003.5.10",
    "SUTRS": "1.2.840.10003.5.101",
    "XML": "1.2.840.10003.5.109.10",
    "OPAC": "1.2.840.10003.5.102",
    "GRS-1": "1.2.840.10003.5.105",
}
_SYNTAX_NAMES = {v: k for k, v in RECORD_SYNTAXES.items()}
_SYNTAX_NAMES["1.2.840.10003.5.109.3"] = "XML"  # text/xml as well as application/xml

# The Bib-1 diagnostics a client most often meets (the full list is long).
BIB1_DIAGNOSTICS: dict[int, str] = {
    1: "Permanent system error",
    2: "Temporary system error",
    3: "Unsupported search",
    13: "Present request out of range",
    14: "System error in presenting records",
    16: "Record exceeds Exceptional-record-size",
    17: "Record exceeds Preferred-message-size",
    23: "Combination of specified databases not supported",
    30: "Specified result set does not exist",
    108: "Malformed query",
    109: "Database unavailable",
    114: "Unsupported Use attribute",
    235: "Database does not exist",
    238: "Record not available in requested syntax",
    239: "Record syntax not supported",
}

_ASN1 = r"""
Z39-50-APDU-SUBSET DEFINITIONS ::= BEGIN

PDU ::= CHOICE {
  initRequest      [20] IMPLICIT InitializeRequest,
  initResponse     [21] IMPLICIT InitializeResponse,
  searchRequest    [22] IMPLICIT SearchRequest,
  searchResponse   [23] IMPLICIT SearchResponse,
  presentRequest   [24] IMPLICIT PresentRequest,
  presentResponse  [25] IMPLICIT PresentResponse,
  close            [48] IMPLICIT Close,
  ...
}

InternationalString ::= GeneralString
ReferenceId ::= [2] IMPLICIT OCTET STRING
ProtocolVersion ::= [3] IMPLICIT BIT STRING
Options ::= [4] IMPLICIT BIT STRING
DatabaseName ::= [105] IMPLICIT InternationalString
ResultSetId ::= [31] IMPLICIT InternationalString
PresentStatus ::= [27] IMPLICIT INTEGER

External ::= [UNIVERSAL 8] IMPLICIT SEQUENCE {
  direct-reference OBJECT IDENTIFIER OPTIONAL,
  indirect-reference INTEGER OPTIONAL,
  encoding CHOICE {
    single-ASN1-type [0] ANY,
    octet-aligned    [1] IMPLICIT OCTET STRING,
    arbitrary        [2] IMPLICIT BIT STRING
  }
}

OtherInformation ::= [201] IMPLICIT SEQUENCE OF SEQUENCE {
  category [1] IMPLICIT SEQUENCE { categoryTypeId [0] IMPLICIT OBJECT IDENTIFIER OPTIONAL,
                                   categoryValue [1] IMPLICIT INTEGER } OPTIONAL,
  information CHOICE {
    characterInfo [2] IMPLICIT InternationalString,
    binaryInfo [3] IMPLICIT OCTET STRING,
    externallyDefinedInfo [4] IMPLICIT External,
    oid [5] IMPLICIT OBJECT IDENTIFIER
  }
}

InitializeRequest ::= SEQUENCE {
  referenceId ReferenceId OPTIONAL,
  protocolVersion ProtocolVersion,
  options Options,
  preferredMessageSize [5] IMPLICIT INTEGER,
  exceptionalRecordSize [6] IMPLICIT INTEGER,
  implementationId [110] IMPLICIT InternationalString OPTIONAL,
  implementationName [111] IMPLICIT InternationalString OPTIONAL,
  implementationVersion [112] IMPLICIT InternationalString OPTIONAL,
  ...
}

InitializeResponse ::= SEQUENCE {
  referenceId ReferenceId OPTIONAL,
  protocolVersion ProtocolVersion,
  options Options,
  preferredMessageSize [5] IMPLICIT INTEGER,
  exceptionalRecordSize [6] IMPLICIT INTEGER,
  result [12] IMPLICIT BOOLEAN,
  implementationId [110] IMPLICIT InternationalString OPTIONAL,
  implementationName [111] IMPLICIT InternationalString OPTIONAL,
  implementationVersion [112] IMPLICIT InternationalString OPTIONAL,
  userInformationField [11] External OPTIONAL,
  otherInfo OtherInformation OPTIONAL,
  ...
}

ElementSetNames ::= CHOICE {
  genericElementSetName [0] IMPLICIT InternationalString
}

SearchRequest ::= SEQUENCE {
  referenceId ReferenceId OPTIONAL,
  smallSetUpperBound [13] IMPLICIT INTEGER,
  largeSetLowerBound [14] IMPLICIT INTEGER,
  mediumSetPresentNumber [15] IMPLICIT INTEGER,
  replaceIndicator [16] IMPLICIT BOOLEAN,
  resultSetName [17] IMPLICIT InternationalString,
  databaseNames [18] IMPLICIT SEQUENCE OF DatabaseName,
  smallSetElementSetNames [100] ElementSetNames OPTIONAL,
  mediumSetElementSetNames [101] ElementSetNames OPTIONAL,
  preferredRecordSyntax [104] IMPLICIT OBJECT IDENTIFIER OPTIONAL,
  query [21] Query
}

Query ::= CHOICE {
  type-1 [1] IMPLICIT RPNQuery,
  type-101 [101] IMPLICIT RPNQuery
}

RPNQuery ::= SEQUENCE {
  attributeSet OBJECT IDENTIFIER,
  rpn RPNStructure
}

RPNStructure ::= CHOICE {
  op [0] Operand
}

Operand ::= CHOICE {
  attrTerm AttributesPlusTerm
}

AttributesPlusTerm ::= [102] IMPLICIT SEQUENCE {
  attributes [44] IMPLICIT SEQUENCE OF AttributeElement,
  term Term
}

AttributeElement ::= SEQUENCE {
  attributeSet [1] IMPLICIT OBJECT IDENTIFIER OPTIONAL,
  attributeType [120] IMPLICIT INTEGER,
  attributeValue CHOICE { numeric [121] IMPLICIT INTEGER }
}

Term ::= CHOICE {
  general [45] IMPLICIT OCTET STRING,
  numeric [215] IMPLICIT INTEGER,
  characterString [216] IMPLICIT InternationalString
}

DefaultDiagFormat ::= SEQUENCE {
  diagnosticSetId OBJECT IDENTIFIER,
  condition INTEGER,
  addinfo CHOICE { v2Addinfo VisibleString, v3Addinfo InternationalString } OPTIONAL,
  ...
}

DiagRec ::= CHOICE {
  defaultFormat DefaultDiagFormat,
  externallyDefined External
}

NamePlusRecord ::= SEQUENCE {
  name [0] IMPLICIT InternationalString OPTIONAL,
  record [1] CHOICE {
    retrievalRecord [1] External,
    surrogateDiagnostic [2] DiagRec,
    startingFragment [3] ANY,
    intermediateFragment [4] ANY,
    finalFragment [5] ANY
  }
}

Records ::= CHOICE {
  responseRecords [28] IMPLICIT SEQUENCE OF NamePlusRecord,
  nonSurrogateDiagnostic [130] IMPLICIT DefaultDiagFormat,
  multipleNonSurDiagnostics [205] IMPLICIT SEQUENCE OF DiagRec
}

SearchResponse ::= SEQUENCE {
  referenceId ReferenceId OPTIONAL,
  resultCount [23] IMPLICIT INTEGER,
  numberOfRecordsReturned [24] IMPLICIT INTEGER,
  nextResultSetPosition [25] IMPLICIT INTEGER,
  searchStatus [22] IMPLICIT BOOLEAN,
  resultSetStatus [26] IMPLICIT INTEGER OPTIONAL,
  presentStatus PresentStatus OPTIONAL,
  records Records OPTIONAL,
  ...
}

PresentRequest ::= SEQUENCE {
  referenceId ReferenceId OPTIONAL,
  resultSetId ResultSetId,
  resultSetStartPoint [30] IMPLICIT INTEGER,
  numberOfRecordsRequested [29] IMPLICIT INTEGER,
  recordComposition CHOICE { simple [19] ElementSetNames } OPTIONAL,
  preferredRecordSyntax [104] IMPLICIT OBJECT IDENTIFIER OPTIONAL
}

PresentResponse ::= SEQUENCE {
  referenceId ReferenceId OPTIONAL,
  numberOfRecordsReturned [24] IMPLICIT INTEGER,
  nextResultSetPosition [25] IMPLICIT INTEGER,
  presentStatus PresentStatus,
  records Records OPTIONAL,
  ...
}

Close ::= SEQUENCE {
  referenceId ReferenceId OPTIONAL,
  closeReason [211] IMPLICIT INTEGER,
  diagnosticInformation [3] IMPLICIT InternationalString OPTIONAL,
  ...
}

GeneralText ::= GeneralString

END
"""

_codec: Any = None


def _compiled() -> Any:
    # Compiled once, on first use, from the pre-parsed module (see _z3950_parsed.py).
    global _codec
    if _codec is None:
        from ._z3950_parsed import PARSED

        # compile_dict modifies its argument: keep the module's copy pristine.
        _codec = asn1tools.compile_dict(copy.deepcopy(PARSED), "ber")
    return _codec


def regenerate_parsed() -> None:
    """Rewrite _z3950_parsed.py after editing the ASN.1 text (a development helper)."""
    import pprint
    from pathlib import Path

    body = pprint.pformat(asn1tools.parse_string(_ASN1), width=110, sort_dicts=True)
    target = Path(__file__).with_name("_z3950_parsed.py")
    head = target.read_text().split("PARSED: dict[str, Any] = ", 1)[0]
    target.write_text(f"{head}PARSED: dict[str, Any] = {body}\n")


class Z3950Error(ValueError):
    """Bytes that are not a valid APDU of this subset (the driver maps it to ProtocolError)."""


@dataclass(frozen=True)
class Diagnostic:
    """A Bib-1 (or other set's) diagnostic: ``condition`` code and ``addinfo`` text."""

    condition: int
    addinfo: str = ""
    diagset: str = OID_DIAG_BIB1

    @property
    def meaning(self) -> str:
        """The standard text for the code, when this module knows it."""
        return BIB1_DIAGNOSTICS.get(self.condition, "diagnostic")

    def __str__(self) -> str:
        text = f"[{self.condition}] {self.meaning}"
        return f"{text} -- {self.addinfo}" if self.addinfo else text


@dataclass(frozen=True)
class Record:
    """One retrieved record. ``data`` is the record's bytes (SUTRS text is UTF-8/Latin-1 text)."""

    syntax: str  # "SUTRS", "XML", "USMARC"... or the OID when unknown
    data: bytes
    database: str | None = None
    diagnostic: Diagnostic | None = None  # a surrogate diagnostic instead of the record


@dataclass(frozen=True)
class InitResult:
    """What the target said in its InitializeResponse."""

    accepted: bool
    version: int  # highest protocol version both sides speak
    options: frozenset[str]
    implementation_id: str | None = None
    implementation_name: str | None = None
    implementation_version: str | None = None
    preferred_message_size: int = 0
    exceptional_record_size: int = 0
    diagnostic: Diagnostic | None = None  # some targets explain a refusal in userInformationField


@dataclass(frozen=True)
class SearchResult:
    """A SearchResponse: hit count, and the diagnostic when the search failed."""

    count: int
    success: bool
    diagnostics: tuple[Diagnostic, ...] = ()
    records: tuple[Record, ...] = ()


@dataclass(frozen=True)
class PresentResult:
    """A PresentResponse: records, or diagnostics."""

    records: tuple[Record, ...] = ()
    next_position: int = 0
    status: int = 0
    diagnostics: tuple[Diagnostic, ...] = field(default=())


# Option bits of InitializeRequest (Z39.50-1995 section 3.2.1.1.4).
_OPTION_NAMES = ["search", "present", "delSet", "resourceReport", "triggerResourceCtrl", "resourceCtrl",
                 "accessCtrl", "scan", "sort", "reserved", "extendedServices", "level-1Segmentation",
                 "level-2Segmentation", "concurrentOperations", "namedResultSets"]
_WANTED_OPTIONS = {"search", "present", "namedResultSets"}


def _bits(names: list[str], wanted: set[str]) -> tuple[bytes, int]:
    n = len(names)
    value = 0
    for i, name in enumerate(names):
        if name in wanted:
            value |= 1 << (n - 1 - i)
    nbytes = (n + 7) // 8
    value <<= nbytes * 8 - n
    return value.to_bytes(nbytes, "big"), n


def _bit_set(bits: tuple[bytes, int], index: int) -> bool:
    data, n = bits
    if index >= n:
        return False
    return bool(data[index // 8] & (0x80 >> (index % 8)))


def _encode(choice: str, value: dict[str, Any]) -> bytes:
    try:
        return bytes(_compiled().encode("PDU", (choice, value)))
    except Exception as exc:  # asn1tools raises its own errors for bad values
        raise Z3950Error(f"cannot encode {choice}: {exc}") from exc


def encode_init(*, message_size: int, record_size: int, name: str = "anyurl",
                version: str = "0.1", reference_id: bytes | None = None) -> bytes:
    """An InitializeRequest offering protocol versions 1-3 and search + present."""
    value: dict[str, Any] = {
        "protocolVersion": (b"\xe0", 3),  # versions 1, 2 and 3
        "options": _bits(_OPTION_NAMES, _WANTED_OPTIONS),
        "preferredMessageSize": message_size,
        "exceptionalRecordSize": record_size,
        "implementationId": "anyurl",
        "implementationName": name,
        "implementationVersion": version,
    }
    if reference_id is not None:
        value["referenceId"] = reference_id
    return _encode("initRequest", value)


def encode_search(term: str, database: str, *, result_set: str = "default",
                  use_attribute: int | None = None, numeric_term: bool = False,
                  record_syntax: str | None = None) -> bytes:
    """A SearchRequest: one Type-1 (RPN) term with Bib-1 attributes against *database*.

    No records are piggy-backed (small set bound 0): the client asks for them
    with Present, so it controls the record syntax and how many arrive.
    """
    attributes: list[dict[str, Any]] = []
    if use_attribute is not None:
        attributes.append({"attributeType": 1, "attributeValue": ("numeric", use_attribute)})
    term_value: tuple[str, Any]
    if numeric_term:
        term_value = ("numeric", int(term))
    else:
        term_value = ("general", term.encode("utf-8"))
    value: dict[str, Any] = {
        "smallSetUpperBound": 0,
        "largeSetLowerBound": 1,
        "mediumSetPresentNumber": 0,
        "replaceIndicator": True,
        "resultSetName": result_set,
        "databaseNames": [database],
        "query": ("type-1", {
            "attributeSet": OID_BIB1,
            "rpn": ("op", ("attrTerm", {"attributes": attributes, "term": term_value})),
        }),
    }
    if record_syntax is not None:
        value["preferredRecordSyntax"] = _syntax_oid(record_syntax)
    return _encode("searchRequest", value)


def _syntax_oid(syntax: str) -> str:
    oid = RECORD_SYNTAXES.get(syntax.upper(), syntax)
    if not all(part.isdigit() for part in oid.split(".")):
        raise Z3950Error(f"unknown record syntax {syntax!r}")
    return oid


def encode_present(start: int, count: int, *, result_set: str = "default",
                   record_syntax: str | None = None, element_set: str | None = "F") -> bytes:
    """A PresentRequest for *count* records from position *start* (1-based)."""
    value: dict[str, Any] = {
        "resultSetId": result_set,
        "resultSetStartPoint": start,
        "numberOfRecordsRequested": count,
    }
    if element_set:
        value["recordComposition"] = ("simple", ("genericElementSetName", element_set))
    if record_syntax is not None:
        value["preferredRecordSyntax"] = _syntax_oid(record_syntax)
    return _encode("presentRequest", value)


def encode_close(reason: int = 0) -> bytes:
    """A Close APDU (reason 0: finished)."""
    return _encode("close", {"closeReason": reason})


def apdu_length(buffer: bytes | bytearray, limit: int | None = None) -> int | None:
    """Total bytes (tag + length + contents) of the APDU at the start of *buffer*,
    or None if more bytes are needed to tell.

    Definite lengths are read from the header alone; an indefinite length
    (which YAZ uses for some responses) needs the nested elements scanned up
    to their end-of-contents octets. Raises Z3950Error on a malformed header
    or when the APDU is longer than *limit* bytes.
    """
    try:
        end = _tlv_end(buffer, 0, 0)
    except _NeedMore:
        if limit is not None and len(buffer) > limit:
            raise Z3950Error(f"APDU longer than the {limit}-byte limit") from None
        return None
    if limit is not None and end > limit:
        raise Z3950Error(f"APDU of {end} bytes is longer than the {limit}-byte limit")
    return end


class _NeedMore(Exception):
    pass


def _tlv_end(buf: bytes | bytearray, pos: int, depth: int) -> int:
    # Returns the offset just past the element starting at *pos*.
    if depth > 64:
        raise Z3950Error("BER nesting deeper than 64 levels")
    if pos >= len(buf):
        raise _NeedMore
    constructed = bool(buf[pos] & 0x20)
    tag_high = buf[pos] & 0x1F == 0x1F
    pos += 1
    if tag_high:
        for count in range(6):
            if pos >= len(buf):
                raise _NeedMore
            octet = buf[pos]
            pos += 1
            if not octet & 0x80:
                break
            if count == 5:
                raise Z3950Error("tag number too long")
    if pos >= len(buf):
        raise _NeedMore
    first = buf[pos]
    pos += 1
    if first < 0x80:
        return pos + first
    n = first & 0x7F
    if n == 0:
        if not constructed:
            raise Z3950Error("indefinite length on a primitive element")
        while True:  # elements until the end-of-contents octets 00 00
            if pos + 2 > len(buf):
                raise _NeedMore
            if buf[pos] == 0 and buf[pos + 1] == 0:
                return pos + 2
            pos = _tlv_end(buf, pos, depth + 1)
    if n > 8:
        raise Z3950Error(f"length of {n} octets is absurd")
    if pos + n > len(buf):
        raise _NeedMore
    return pos + n + int.from_bytes(buf[pos:pos + n], "big")


def _octets(value: Any) -> bytes:
    """The octets of a decoded string: asn1tools returns a GeneralString as
    text decoded from Latin-1, which gives the octets back one for one."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    text = str(value) if value is not None else ""
    try:
        return text.encode("latin-1")
    except UnicodeEncodeError:  # not from a GeneralString: already real text
        return text.encode("utf-8", "surrogateescape")


def _text(value: Any) -> str:
    # Targets send UTF-8 today (Zebra, YAZ); older ones Latin-1, kept as it came.
    raw = _octets(value)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _diag(value: Any) -> Diagnostic:
    # DiagRec is a CHOICE; DefaultDiagFormat is the bare dict.
    if isinstance(value, tuple):
        kind, inner = value
        if kind != "defaultFormat":
            return Diagnostic(0, "externally defined diagnostic")
        value = inner
    addinfo = value.get("addinfo")
    text = _text(addinfo[1]) if isinstance(addinfo, tuple) else ""
    return Diagnostic(int(value.get("condition", 0)), text, str(value.get("diagnosticSetId", "")))


def _record(npr: dict[str, Any]) -> Record:
    name = npr.get("name")
    database = _text(name) if name is not None else None
    kind, inner = npr["record"]
    if kind == "surrogateDiagnostic":
        return Record("diagnostic", b"", database, _diag(inner))
    if kind != "retrievalRecord":
        raise Z3950Error("segmented (fragmented) records are not supported")
    oid = str(inner.get("direct-reference", ""))
    syntax = _SYNTAX_NAMES.get(oid, oid)
    enc_kind, payload = inner["encoding"]
    if enc_kind == "octet-aligned":
        data = bytes(payload)
    elif enc_kind == "single-ASN1-type":
        data = _single_asn1(bytes(payload))
    else:
        data = bytes(payload[0])
    return Record(syntax, data, database)


def _single_asn1(payload: bytes) -> bytes:
    # SUTRS travels as a GeneralString; other syntaxes as their own ASN.1 type,
    # which is returned undecoded (BER bytes).
    if payload[:1] == b"\x1b":
        try:
            return _octets(_compiled().decode("GeneralText", payload))  # as received, never re-encoded
        except Exception:
            pass
    return payload


def _records(value: Any) -> tuple[tuple[Record, ...], tuple[Diagnostic, ...]]:
    if value is None:
        return (), ()
    kind, inner = value
    if kind == "responseRecords":
        return tuple(_record(r) for r in inner), ()
    if kind == "nonSurrogateDiagnostic":
        return (), (_diag(inner),)
    return (), tuple(_diag(d) for d in inner)


def decode_apdu(data: bytes) -> InitResult | SearchResult | PresentResult | Diagnostic | tuple[str, Any]:
    """Decode one whole APDU.

    Returns InitResult, SearchResult, PresentResult; a Close becomes
    ``("close", (reason, text))``; any other APDU ``(name, decoded value)``.
    """
    try:
        kind, value = _compiled().decode("PDU", data)
    except Exception as exc:
        raise Z3950Error(f"undecodable APDU ({len(data)} bytes): {exc}") from exc
    if kind not in _KNOWN_APDUS:
        raise Z3950Error(f"unexpected APDU {kind!r}")
    try:
        return _interpret(kind, value)
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise Z3950Error(f"malformed {kind}: {exc}") from exc


_KNOWN_APDUS = {"initRequest", "initResponse", "searchRequest", "searchResponse", "presentRequest",
                "presentResponse", "close"}


def _interpret(kind: str, value: Any) -> InitResult | SearchResult | PresentResult | tuple[str, Any]:
    if kind == "initResponse":
        versions = value["protocolVersion"]
        version = max((i + 1 for i in range(versions[1]) if _bit_set(versions, i)), default=0)
        opts = frozenset(n for i, n in enumerate(_OPTION_NAMES) if _bit_set(value["options"], i))
        diag = None
        uif = value.get("userInformationField")
        if uif is not None and not value["result"]:
            diag = Diagnostic(0, "target refused the Init")
        return InitResult(
            accepted=bool(value["result"]), version=version, options=opts,
            implementation_id=_opt_text(value.get("implementationId")),
            implementation_name=_opt_text(value.get("implementationName")),
            implementation_version=_opt_text(value.get("implementationVersion")),
            preferred_message_size=int(value["preferredMessageSize"]),
            exceptional_record_size=int(value["exceptionalRecordSize"]),
            diagnostic=diag,
        )
    if kind == "searchResponse":
        records, diags = _records(value.get("records"))
        return SearchResult(int(value["resultCount"]), bool(value["searchStatus"]), diags, records)
    if kind == "presentResponse":
        records, diags = _records(value.get("records"))
        return PresentResult(records, int(value["nextResultSetPosition"]), int(value["presentStatus"]),
                             diags)
    if kind == "close":
        return ("close", (int(value["closeReason"]), _opt_text(value.get("diagnosticInformation")) or ""))
    return (kind, value)


def _opt_text(value: Any) -> str | None:
    return None if value is None else _text(value)


def render_marc(data: bytes) -> str:
    """A readable rendering of an ISO 2709 (USMARC) record: one line per field,
    ``245 10 $a Title $c Author``. Raises Z3950Error when *data* is not ISO 2709."""
    try:
        if len(data) < 24:
            raise ValueError("shorter than a leader")
        leader = data[:24].decode("ascii")
        base = int(leader[12:17])
        directory = data[24:base - 1]
        lines = [f"LDR {leader}"]
        for i in range(0, len(directory) - 11, 12):
            entry = directory[i:i + 12].decode("ascii")
            tag, length, start = entry[:3], int(entry[3:7]), int(entry[7:12])
            raw = data[base + start:base + start + length].rstrip(b"\x1e")
            if tag < "010":
                lines.append(f"{tag} {raw.decode('utf-8', 'replace')}")
                continue
            indicators = raw[:2].decode("utf-8", "replace")
            subfields = [s for s in raw[2:].split(b"\x1f") if s]
            parts = [f"${s[:1].decode('ascii', 'replace')} {s[1:].decode('utf-8', 'replace')}"
                     for s in subfields]
            lines.append(f"{tag} {indicators} {' '.join(parts)}")
    except (ValueError, UnicodeDecodeError) as exc:
        raise Z3950Error(f"not an ISO 2709 record: {exc}") from exc
    return "\n".join(lines) + "\n"

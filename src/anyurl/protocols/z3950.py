"""Z39.50-1995 (ANSI/NISO Z39.50, version 3) APDUs for the wais: scheme (pure, no I/O).

The APDUs are encoded and decoded by hand over the small BER codec in
:mod:`.ber`, following the subset of the Z39-50-APDU-1995 ASN.1 module kept
below as ``_ASN1`` (written for this project from the standard: only what a
retrieving client needs). Decoding skips members this subset does not name,
as the ``...`` extension markers say.

What the client uses: InitializeRequest/Response, SearchRequest with a
Type-1 (RPN) query of one term with Bib-1 attributes, SearchResponse,
PresentRequest with a preferred record syntax, PresentResponse (records or
diagnostics) and Close.

:func:`apdu_length` tells the driver how many bytes one APDU needs, from its
tag and length octets alone, so it can refuse an over-long APDU before
reading it.
"""

from __future__ import annotations

from typing import Any, TypeAlias

from .._record import Record as Value
from . import ber
from .ber import CONTEXT, UNIVERSAL, Element

_set = object.__setattr__  # how a frozen Record's __init__ sets its fields

__all__ = [
    "BIB1_DIAGNOSTICS",
    "OID_BIB1",
    "OID_DIAG_BIB1",
    "RECORD_SYNTAXES",
    "APDUScanner",
    "Diagnostic",
    "InitResult",
    "PresentResult",
    "Record",
    "SearchResult",
    "Z3950Error",
    "apdu_length",
    "summarize",
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

# The subset, for reference: the encoders and decoders below follow it tag for tag.
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

class Z3950Error(ber.BERError):
    """Bytes that are not a valid APDU of this subset, or a value no APDU can carry."""


class Diagnostic(Value):
    """A Bib-1 (or other set's) diagnostic: ``condition`` code and ``addinfo`` text."""

    __slots__ = ("condition", "addinfo", "diagset")
    condition: int
    addinfo: str
    diagset: str

    def __init__(self, condition: int, addinfo: str = "", diagset: str = OID_DIAG_BIB1) -> None:
        _set(self, "condition", condition)
        _set(self, "addinfo", addinfo)
        _set(self, "diagset", diagset)

    @property
    def meaning(self) -> str:
        """The standard text for the code, when this module knows it."""
        return BIB1_DIAGNOSTICS.get(self.condition, "diagnostic")

    def __str__(self) -> str:
        text = f"[{self.condition}] {self.meaning}"
        return f"{text} -- {self.addinfo}" if self.addinfo else text


class Record(Value):
    """One retrieved record. ``data`` is the record's bytes (SUTRS text is UTF-8/Latin-1 text)."""

    __slots__ = ("syntax", "data", "database", "diagnostic")
    syntax: str  # "SUTRS", "XML", "USMARC"... or the OID when unknown
    data: bytes
    database: str | None
    diagnostic: Diagnostic | None  # a surrogate diagnostic instead of the record

    def __init__(self, syntax: str, data: bytes, database: str | None = None,
                       diagnostic: Diagnostic | None = None) -> None:
        _set(self, "syntax", syntax)
        _set(self, "data", data)
        _set(self, "database", database)
        _set(self, "diagnostic", diagnostic)


class InitResult(Value):
    """What the target said in its InitializeResponse."""

    __slots__ = ("accepted", "version", "options", "implementation_id", "implementation_name",
                 "implementation_version", "preferred_message_size", "exceptional_record_size", "diagnostic")
    accepted: bool
    version: int  # highest protocol version both sides speak
    options: frozenset[str]
    implementation_id: str | None
    implementation_name: str | None
    implementation_version: str | None
    preferred_message_size: int
    exceptional_record_size: int
    diagnostic: Diagnostic | None  # some targets explain a refusal in userInformationField

    def __init__(self, accepted: bool, version: int, options: frozenset[str],
                       implementation_id: str | None = None, implementation_name: str | None = None,
                       implementation_version: str | None = None, preferred_message_size: int = 0,
                       exceptional_record_size: int = 0, diagnostic: Diagnostic | None = None) -> None:
        _set(self, "accepted", accepted)
        _set(self, "version", version)
        _set(self, "options", options)
        _set(self, "implementation_id", implementation_id)
        _set(self, "implementation_name", implementation_name)
        _set(self, "implementation_version", implementation_version)
        _set(self, "preferred_message_size", preferred_message_size)
        _set(self, "exceptional_record_size", exceptional_record_size)
        _set(self, "diagnostic", diagnostic)


class SearchResult(Value):
    """A SearchResponse: hit count, and the diagnostic when the search failed."""

    __slots__ = ("count", "success", "diagnostics", "records")
    count: int
    success: bool
    diagnostics: tuple[Diagnostic, ...]
    records: tuple[Record, ...]

    def __init__(self, count: int, success: bool, diagnostics: tuple[Diagnostic, ...] = (),
                       records: tuple[Record, ...] = ()) -> None:
        _set(self, "count", count)
        _set(self, "success", success)
        _set(self, "diagnostics", diagnostics)
        _set(self, "records", records)


class PresentResult(Value):
    """A PresentResponse: records, or diagnostics."""

    __slots__ = ("records", "next_position", "status", "diagnostics")
    records: tuple[Record, ...]
    next_position: int
    status: int
    diagnostics: tuple[Diagnostic, ...]

    def __init__(self, records: tuple[Record, ...] = (), next_position: int = 0, status: int = 0,
                       diagnostics: tuple[Diagnostic, ...] = ()) -> None:
        _set(self, "records", records)
        _set(self, "next_position", next_position)
        _set(self, "status", status)
        _set(self, "diagnostics", diagnostics)


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


def _ctx(number: int, content: bytes, constructed: bool = False) -> bytes:
    return ber.tlv(CONTEXT, number, content, constructed)


def _int(number: int, value: int) -> bytes:
    return _ctx(number, ber.integer_content(value))


def _string(number: int, text: str) -> bytes:
    # InternationalString is a GeneralString: Latin-1 octets, as this client has always sent
    try:
        return _ctx(number, text.encode("latin-1"))
    except UnicodeEncodeError as exc:
        raise Z3950Error(f"cannot encode {text!r}: a GeneralString carries Latin-1 characters only") from exc


def _oid(number: int | None, dotted: str) -> bytes:
    try:
        content = ber.oid_content(dotted)
    except ValueError as exc:
        raise Z3950Error(str(exc)) from exc
    return ber.tlv(UNIVERSAL, 6, content) if number is None else _ctx(number, content)


def encode_init(*, message_size: int, record_size: int, name: str = "anyurl",
                version: str = "0.1", reference_id: bytes | None = None) -> bytes:
    """An InitializeRequest offering protocol versions 1-3 and search + present."""
    body = [
        _ctx(2, bytes(reference_id)) if reference_id is not None else b"",
        _ctx(3, ber.bit_string_content(b"\xe0", 3)),  # versions 1, 2 and 3
        _ctx(4, ber.bit_string_content(*_bits(_OPTION_NAMES, _WANTED_OPTIONS))),
        _int(5, message_size),
        _int(6, record_size),
        _string(110, "anyurl"),
        _string(111, name),
        _string(112, version),
    ]
    return _ctx(20, b"".join(body), True)


def encode_search(term: str, database: str, *, result_set: str = "default",
                  use_attribute: int | None = None, numeric_term: bool = False,
                  record_syntax: str | None = None) -> bytes:
    """A SearchRequest: one Type-1 (RPN) term with Bib-1 attributes against *database*.

    No records are piggy-backed (small set bound 0): the client asks for them
    with Present, so it controls the record syntax and how many arrive.
    """
    attributes = b""
    if use_attribute is not None:  # AttributeElement: type 1 (Use), a numeric value
        attributes = ber.tlv(UNIVERSAL, 16, _int(120, 1) + _int(121, use_attribute), True)
    if numeric_term:
        try:
            value = int(term)
        except ValueError as exc:
            raise Z3950Error(f"not a numeric term: {term!r}") from exc
        term_element = _int(215, value)
    else:
        term_element = _ctx(45, term.encode("utf-8"))
    apt = _ctx(102, _ctx(44, attributes, True) + term_element, True)  # AttributesPlusTerm
    rpn_query = _oid(None, OID_BIB1) + _ctx(0, apt, True)  # RPNStructure: op [0]
    body = [
        _int(13, 0),  # smallSetUpperBound
        _int(14, 1),  # largeSetLowerBound
        _int(15, 0),  # mediumSetPresentNumber
        _ctx(16, ber.boolean_content(True)),  # replaceIndicator
        _string(17, result_set),
        _ctx(18, _string(105, database), True),  # databaseNames
        _oid(104, _syntax_oid(record_syntax)) if record_syntax is not None else b"",
        _ctx(21, _ctx(1, rpn_query, True), True),  # query: type-1
    ]
    return _ctx(22, b"".join(body), True)


def _syntax_oid(syntax: str) -> str:
    oid = RECORD_SYNTAXES.get(syntax.upper(), syntax)
    if not all(part.isdigit() for part in oid.split(".")):
        raise Z3950Error(f"unknown record syntax {syntax!r}")
    return oid


def encode_present(start: int, count: int, *, result_set: str = "default",
                   record_syntax: str | None = None, element_set: str | None = "F") -> bytes:
    """A PresentRequest for *count* records from position *start* (1-based)."""
    body = [
        _string(31, result_set),
        _int(30, start),
        _int(29, count),
        _ctx(19, _string(0, element_set), True) if element_set else b"",  # simple: generic name
        _oid(104, _syntax_oid(record_syntax)) if record_syntax is not None else b"",
    ]
    return _ctx(24, b"".join(body), True)


def encode_close(reason: int = 0) -> bytes:
    """A Close APDU (reason 0: finished)."""
    return _ctx(48, _int(211, reason), True)


def summarize(result: object) -> str:
    """One readable line for a decoded APDU (what a capture's exchange shows of it)."""
    if isinstance(result, InitResult):
        name = " ".join(x for x in (result.implementation_name, result.implementation_version) if x)
        line = (f"initResponse {'accepted' if result.accepted else 'refused'} version={result.version} "
                f"options={','.join(sorted(result.options))}")
        if name:
            line += f" implementation={name!r}"
        return line + (f" diagnostic={result.diagnostic}" if result.diagnostic else "")
    if isinstance(result, SearchResult):
        line = f"searchResponse {'success' if result.success else 'failure'} count={result.count}"
        return line + "".join(f" diagnostic={d}" for d in result.diagnostics)
    if isinstance(result, PresentResult):
        line = f"presentResponse status={result.status} next={result.next_position} records={len(result.records)}"
        line += "".join(f" diagnostic={d}" for d in result.diagnostics)
        for rec in result.records:
            line += f" [{rec.syntax} {len(rec.data)} bytes]" if rec.diagnostic is None else f" [{rec.diagnostic}]"
        return line
    if isinstance(result, tuple) and result and result[0] == "close":
        return f"close reason={result[1][0]}" + (f" {result[1][1]!r}" if result[1][1] else "")
    return type(result).__name__


def apdu_length(buffer: bytes | bytearray, limit: int | None = None) -> int | None:
    """Total bytes (tag + length + contents) of the APDU at the start of *buffer*,
    or None if more bytes are needed to tell.

    Definite lengths are read from the header alone; an indefinite length
    (which YAZ uses for some responses) needs the nested elements scanned up
    to their end-of-contents octets. Raises Z3950Error on a malformed header
    or when the APDU is longer than *limit* bytes. A reader whose buffer grows
    uses an :class:`APDUScanner` instead (no rescan from the start).
    """
    return APDUScanner(limit).length(buffer)


class APDUScanner:
    """:func:`apdu_length` for a buffer that grows as bytes arrive: each call resumes
    where the last one stopped (:class:`ber.Scanner`), so a large indefinite-length
    reply read in many pieces is scanned once, not once per piece. Call :meth:`reset`
    when the APDU was taken from the front of the buffer."""

    def __init__(self, limit: int | None = None) -> None:
        self.scanner = ber.Scanner(limit)

    def length(self, buffer: bytes | bytearray) -> int | None:
        """As :func:`apdu_length`; *buffer* must extend the one of the previous call."""
        try:
            return self.scanner.length(buffer)
        except ber.BERError as exc:
            raise Z3950Error(f"bad APDU header: {exc.message}") from None

    def reset(self) -> None:
        self.scanner.reset()


def _fields(element: Element, what: str) -> dict[int, Element]:
    # A SEQUENCE's context-tagged members by tag number; other members are skipped
    if not element.constructed:
        raise Z3950Error(f"{what} is not constructed")
    found: dict[int, Element] = {}
    for child in element.children:
        if child.cls == CONTEXT:
            if child.number in found:
                raise Z3950Error(f"{what} repeats member {child.tag}")
            found[child.number] = child
    return found


def _need(fields: dict[int, Element], number: int, what: str) -> Element:
    try:
        return fields[number]
    except KeyError:
        raise Z3950Error(f"{what} lacks its mandatory member [{number}]") from None


def _only_child(element: Element, what: str) -> Element:
    # an explicit tag or a CHOICE wrapper holds exactly one element
    if not element.constructed or len(element.children) != 1:
        raise Z3950Error(f"{what} {element.tag} does not hold exactly one element")
    return element.children[0]


def _text(raw: bytes) -> str:
    # Targets send UTF-8 today (Zebra, YAZ); older ones Latin-1, kept as it came.
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _opt_text(fields: dict[int, Element], number: int) -> str | None:
    element = fields.get(number)
    return None if element is None else _text(element.octets())


def _diag(element: Element) -> Diagnostic:
    # DiagRec: DefaultDiagFormat (a SEQUENCE) or an External
    if element.is_(UNIVERSAL, 8):
        return Diagnostic(0, "externally defined diagnostic")
    if not element.is_(UNIVERSAL, 16) or not element.constructed:
        raise Z3950Error(f"a diagnostic is neither DefaultDiagFormat nor External but {element.tag}")
    diagset = ""
    condition: int | None = None
    addinfo = ""
    for child in element.children:
        if child.is_(UNIVERSAL, 6) and not diagset:
            diagset = child.oid()
        elif child.is_(UNIVERSAL, 2) and condition is None:
            condition = child.integer()
        elif child.is_(UNIVERSAL, 26) or child.is_(UNIVERSAL, 27):  # v2 VisibleString, v3 GeneralString
            addinfo = _text(child.octets())
    if condition is None:
        raise Z3950Error("DefaultDiagFormat lacks its condition")
    return Diagnostic(condition, addinfo, diagset)


def _record(npr: Element) -> Record:
    if not npr.is_(UNIVERSAL, 16):
        raise Z3950Error(f"NamePlusRecord expected, found {npr.tag}")
    fields = _fields(npr, "NamePlusRecord")
    database = _opt_text(fields, 0)
    choice = _only_child(_need(fields, 1, "NamePlusRecord"), "NamePlusRecord.record")
    if choice.cls != CONTEXT or choice.number not in (1, 2):
        if choice.cls == CONTEXT and choice.number in (3, 4, 5):
            raise Z3950Error("segmented (fragmented) records are not supported")
        raise Z3950Error(f"unknown kind of record {choice.tag}")
    inner = _only_child(choice, "NamePlusRecord.record")
    if choice.number == 2:
        return Record("diagnostic", b"", database, _diag(inner))
    if not inner.is_(UNIVERSAL, 8) or not inner.constructed:
        raise Z3950Error(f"retrievalRecord is {inner.tag}, not an EXTERNAL")
    oid = ""
    encoding: Element | None = None
    for child in inner.children:
        if child.is_(UNIVERSAL, 6) and not oid:
            oid = child.oid()
        elif child.is_(UNIVERSAL, 2):
            child.integer()  # indirect-reference: checked, unused
        elif child.cls == CONTEXT and child.number in (0, 1, 2) and encoding is None:
            encoding = child
    if encoding is None:
        raise Z3950Error("an EXTERNAL record has no encoding")
    syntax = _SYNTAX_NAMES.get(oid, oid)
    if encoding.number == 0:  # single-ASN1-type [0] ANY
        payload = _only_child(encoding, "single-ASN1-type")
        # SUTRS travels as a GeneralString: its octets as received; any other type undecoded
        data = payload.content if payload.raw[:1] == b"\x1b" else payload.raw
    elif encoding.number == 1:  # octet-aligned
        data = encoding.octets()
    else:  # arbitrary: the BIT STRING's octets
        data = encoding.bit_string()[0]
    return Record(syntax, data, database)


def _records(fields: dict[int, Element]) -> tuple[tuple[Record, ...], tuple[Diagnostic, ...]]:
    # Records CHOICE: responseRecords [28], nonSurrogateDiagnostic [130], multipleNonSurDiagnostics [205]
    if 28 in fields:
        return tuple(_record(r) for r in _sequence_of(fields[28], "responseRecords")), ()
    if 130 in fields:
        element = fields[130]
        if not element.constructed:
            raise Z3950Error("nonSurrogateDiagnostic is not constructed")
        # [130] IMPLICIT DefaultDiagFormat: the SEQUENCE's members under another tag
        return (), (_diag(_retagged_sequence(element)),)
    if 205 in fields:
        return (), tuple(_diag(d) for d in _sequence_of(fields[205], "multipleNonSurDiagnostics"))
    return (), ()


def _sequence_of(element: Element, what: str) -> list[Element]:
    if not element.constructed:
        raise Z3950Error(f"{what} is not constructed")
    return element.children


def _retagged_sequence(element: Element) -> Element:
    # Present an implicitly tagged SEQUENCE as the universal one _diag reads.
    seq = Element(b"", UNIVERSAL, True, 16, element.start, element.cstart)
    seq.children = element.children
    seq.end = element.end
    return seq


#: what decode_apdu returns: a result, ("close", (reason, text)), or (request name, Element)
Decoded: TypeAlias = InitResult | SearchResult | PresentResult | tuple[str, Any]

_APDU_NAMES = {20: "initRequest", 21: "initResponse", 22: "searchRequest", 23: "searchResponse",
               24: "presentRequest", 25: "presentResponse", 48: "close"}


def decode_apdu(data: bytes, *, max_length: int | None = None
                ) -> Decoded:
    """Decode one whole APDU.

    Returns InitResult, SearchResult, PresentResult; a Close becomes
    ``("close", (reason, text))``; a request APDU ``(name, ber.Element)``.
    *max_length* caps the length of every element. Raises Z3950Error on any
    malformed, truncated or unexpected APDU.
    """
    try:
        top = ber.decode(data, max_length=max_length)
        kind = _APDU_NAMES.get(top.number) if top.cls == CONTEXT and top.constructed else None
        if kind is None:
            raise Z3950Error(f"unexpected APDU {top.tag} ({len(data)} bytes)")
        fields = _fields(top, kind)
        return _interpret(kind, top, fields)
    except Z3950Error:
        raise
    except ber.BERError as exc:
        raise Z3950Error(f"undecodable APDU ({len(data)} bytes): {exc.message}") from None


def _interpret(kind: str, top: Element, f: dict[int, Element]
               ) -> Decoded:
    if kind == "initResponse":
        versions = _need(f, 3, kind).bit_string()
        version = max((i + 1 for i in range(versions[1]) if _bit_set(versions, i)), default=0)
        option_bits = _need(f, 4, kind).bit_string()
        opts = frozenset(n for i, n in enumerate(_OPTION_NAMES) if _bit_set(option_bits, i))
        accepted = _need(f, 12, kind).boolean()
        diag = None
        if 11 in f and not accepted:
            diag = Diagnostic(0, "target refused the Init")
        return InitResult(
            accepted=accepted, version=version, options=opts,
            implementation_id=_opt_text(f, 110),
            implementation_name=_opt_text(f, 111),
            implementation_version=_opt_text(f, 112),
            preferred_message_size=_need(f, 5, kind).integer(),
            exceptional_record_size=_need(f, 6, kind).integer(),
            diagnostic=diag,
        )
    if kind == "searchResponse":
        count = _need(f, 23, kind).integer()
        _need(f, 24, kind).integer()
        _need(f, 25, kind).integer()
        status = _need(f, 22, kind).boolean()
        records, diags = _records(f)
        return SearchResult(count, status, diags, records)
    if kind == "presentResponse":
        _need(f, 24, kind).integer()
        next_position = _need(f, 25, kind).integer()
        status_code = _need(f, 27, kind).integer()
        records, diags = _records(f)
        return PresentResult(records, next_position, status_code, diags)
    if kind == "close":
        return ("close", (_need(f, 211, kind).integer(), _opt_text(f, 3) or ""))
    return (kind, top)


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

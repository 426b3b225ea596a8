"""Basic Encoding Rules (ITU-T X.690) for the few ASN.1 types Z39.50 needs (pure, no I/O).

Encoding: :func:`tlv` builds one element from its identifier and contents,
and the ``*_content`` helpers give the contents octets of INTEGER, BOOLEAN,
OBJECT IDENTIFIER and BIT STRING values. Lengths are always definite and in
their shortest form, as DER would write them.

Decoding: :func:`decode` turns one whole element into a tree of
:class:`Element`, accepting both definite and indefinite lengths (X.690
8.1.3), constructed string segments, and high tag numbers. It is bounded:
every length is checked against the bytes that remain and an optional cap,
nesting has a depth limit, tag numbers a maximum, and anything malformed
or truncated raises :class:`BERError` (a :class:`ProtocolError`) naming the
problem and its offset. :func:`element_length` tells a reader how many bytes
the element at the start of a buffer needs before it has them all; a
:class:`Scanner` does the same for a buffer that grows, resuming each time
where it stopped (linear work however the bytes arrive).
"""

from __future__ import annotations

from ..errors import ProtocolError

__all__ = [
    "APPLICATION",
    "CONTEXT",
    "PRIVATE",
    "UNIVERSAL",
    "BERError",
    "Element",
    "Scanner",
    "bit_string_content",
    "boolean_content",
    "decode",
    "element_length",
    "integer_content",
    "length_octets",
    "oid_content",
    "tag_octets",
    "tlv",
]

# Class bits of the identifier octet (X.690 8.1.2.2).
UNIVERSAL, APPLICATION, CONTEXT, PRIVATE = 0x00, 0x40, 0x80, 0xC0
_CLASS_NAMES = {UNIVERSAL: "UNIVERSAL ", APPLICATION: "APPLICATION ", CONTEXT: "", PRIVATE: "PRIVATE "}
_CONSTRUCTED = 0x20

MAX_DEPTH = 64
MAX_TAG = 0x3FFF  # two octets of tag number: Z39.50 uses numbers below 1000
MAX_INTEGER_OCTETS = 16
MAX_ARC_OCTETS = 10  # one OID arc: up to 2**70


class BERError(ProtocolError):
    """Bytes that are not a valid BER encoding (or exceed a decoding limit)."""


class _NeedMore(Exception):
    """The buffer ends before the element does (internal: decode turns it into BERError)."""


# -- encoding ---------------------------------------------------------------------------------

def tag_octets(cls: int, number: int, constructed: bool = False) -> bytes:
    """The identifier octets for tag ``[cls number]`` (X.690 8.1.2)."""
    first = cls | (_CONSTRUCTED if constructed else 0)
    if number < 31:
        return bytes((first | number,))
    arcs = [number & 0x7F]
    number >>= 7
    while number:
        arcs.append(0x80 | (number & 0x7F))
        number >>= 7
    return bytes((first | 0x1F, *reversed(arcs)))


def length_octets(length: int) -> bytes:
    """Definite length octets, short form below 128, else the shortest long form (X.690 8.1.3)."""
    if length < 0x80:
        return bytes((length,))
    body = length.to_bytes((length.bit_length() + 7) // 8, "big")
    return bytes((0x80 | len(body),)) + body


def tlv(cls: int, number: int, content: bytes, constructed: bool = False) -> bytes:
    """One element: identifier, definite length, contents."""
    return tag_octets(cls, number, constructed) + length_octets(len(content)) + content


def integer_content(value: int) -> bytes:
    """Two's complement in the fewest octets (X.690 8.3)."""
    size = (value + (value < 0)).bit_length() // 8 + 1
    return value.to_bytes(size, "big", signed=True)


def boolean_content(value: bool) -> bytes:
    """FF for TRUE (the DER choice), 00 for FALSE."""
    return b"\xff" if value else b"\x00"


def oid_content(dotted: str) -> bytes:
    """The contents of an OBJECT IDENTIFIER given as ``1.2.840.10003``; ValueError if not one."""
    arcs = [int(part) for part in dotted.split(".")]
    if len(arcs) < 2 or arcs[0] > 2 or (arcs[0] < 2 and arcs[1] > 39) or min(arcs) < 0:
        raise ValueError(f"not an object identifier: {dotted!r}")
    out = bytearray()
    for arc in [arcs[0] * 40 + arcs[1], *arcs[2:]]:
        chunk = [arc & 0x7F]
        arc >>= 7
        while arc:
            chunk.append(0x80 | (arc & 0x7F))
            arc >>= 7
        out += bytes(reversed(chunk))
    return bytes(out)


def bit_string_content(data: bytes, nbits: int) -> bytes:
    """The first *nbits* bits of *data*, unused trailing bits cleared (X.690 8.6)."""
    whole, rest = divmod(nbits, 8)
    body = bytearray(data[:whole])
    if rest:
        body.append(data[whole] & (0xFF << (8 - rest)) & 0xFF)
        return bytes((8 - rest,)) + bytes(body)
    return b"\x00" + bytes(body)


# -- decoding ---------------------------------------------------------------------------------

class Element:
    """One decoded element: its tag, and either contents octets or child elements.

    ``start``/``end`` delimit the whole encoding in the decoded buffer (``raw``),
    ``content`` is the contents octets of a primitive element.
    """

    __slots__ = ("_data", "children", "cls", "constructed", "cstart", "end", "number", "start")

    def __init__(self, data: bytes, cls: int, constructed: bool, number: int,
                 start: int, cstart: int) -> None:
        self._data = data
        self.cls = cls
        self.constructed = constructed
        self.number = number
        self.start = start
        self.cstart = cstart
        self.end = cstart  # set by the parser
        self.children: list[Element] = []

    def __repr__(self) -> str:
        return f"<Element {self.tag} at {self.start}, {self.end - self.start} bytes>"

    @property
    def tag(self) -> str:
        """The tag as ASN.1 writes it: ``[21]``, ``[UNIVERSAL 16]``."""
        return _tag_text(self.cls, self.number)

    def is_(self, cls: int, number: int) -> bool:
        """True if this element has tag ``[cls number]``."""
        return self.cls == cls and self.number == number

    @property
    def raw(self) -> bytes:
        """The element's whole encoding, identifier to last contents (or end-of-contents) octet."""
        return self._data[self.start:self.end]

    @property
    def content(self) -> bytes:
        """The contents octets of a primitive element."""
        if self.constructed:
            raise BERError(f"{self.tag} at offset {self.start} is constructed where a primitive value belongs")
        return self._data[self.cstart:self.end]

    def octets(self) -> bytes:
        """An OCTET STRING or character string's octets, primitive or in constructed segments."""
        if not self.constructed:
            return self.content
        return b"".join(child.octets() for child in self.children)

    def integer(self) -> int:
        """An INTEGER's value."""
        body = self.content
        if not body:
            raise BERError(f"INTEGER {self.tag} at offset {self.start} has no contents octets")
        if len(body) > MAX_INTEGER_OCTETS:
            raise BERError(f"INTEGER {self.tag} at offset {self.start} of {len(body)} octets is too large")
        return int.from_bytes(body, "big", signed=True)

    def boolean(self) -> bool:
        """A BOOLEAN's value (any non-zero octet is TRUE)."""
        body = self.content
        if len(body) != 1:
            raise BERError(f"BOOLEAN {self.tag} at offset {self.start} has {len(body)} contents octets, not 1")
        return body[0] != 0

    def oid(self) -> str:
        """An OBJECT IDENTIFIER in dotted form."""
        body = self.content
        if not body or body[-1] & 0x80:
            raise BERError(f"OBJECT IDENTIFIER {self.tag} at offset {self.start} is empty or cut short")
        arcs: list[int] = []
        value = octets = 0
        for octet in body:
            if octets == 0 and octet == 0x80:
                raise BERError(f"OBJECT IDENTIFIER {self.tag} at offset {self.start} has a padded arc")
            value = (value << 7) | (octet & 0x7F)
            octets += 1
            if octets > MAX_ARC_OCTETS:
                raise BERError(f"OBJECT IDENTIFIER {self.tag} at offset {self.start} has an arc too large")
            if not octet & 0x80:
                arcs.append(value)
                value = octets = 0
        first = min(arcs[0] // 40, 2)
        return ".".join(str(arc) for arc in [first, arcs[0] - 40 * first, *arcs[1:]])

    def bit_string(self) -> tuple[bytes, int]:
        """A primitive BIT STRING as (octets, number of bits)."""
        body = self.content
        if not body or body[0] > 7 or (len(body) == 1 and body[0]):
            raise BERError(f"BIT STRING {self.tag} at offset {self.start} has a bad unused-bits octet")
        return body[1:], 8 * (len(body) - 1) - body[0]


def decode(data: bytes, *, max_length: int | None = None, max_depth: int = MAX_DEPTH,
           max_tag: int = MAX_TAG) -> Element:
    """Decode the one element that fills *data* (trailing bytes are an error).

    *max_length* caps every element's length; *max_depth* the nesting; *max_tag*
    the tag numbers. Raises BERError on anything malformed, truncated or over a limit.
    """
    parser = _Parser(bytes(data), max_length, max_depth, max_tag)
    try:
        element = parser.element(0, 0)
    except _NeedMore:
        raise BERError(f"BER encoding cut short: {len(data)} bytes end inside an element") from None
    if element.end != len(data):
        raise BERError(f"{len(data) - element.end} bytes follow the element that ends at offset {element.end}")
    return element


def element_length(buffer: bytes | bytearray, limit: int | None = None, *,
                   max_depth: int = MAX_DEPTH, max_tag: int = MAX_TAG) -> int | None:
    """Total bytes of the element at the start of *buffer*, or None if more are needed to tell.

    A definite length is read from the header alone; an indefinite one needs
    the nested elements scanned up to the end-of-contents octets. BERError if
    the header is malformed or the element is longer than *limit* bytes. For a
    buffer that grows as bytes arrive, a :class:`Scanner` resumes instead.
    """
    return Scanner(limit, max_depth=max_depth, max_tag=max_tag).length(buffer)


def _tag_text(cls: int, number: int) -> str:
    return f"[{_CLASS_NAMES[cls]}{number}]"


def _header(data: bytes | bytearray, pos: int, stop: int, max_tag: int) -> tuple[int, bool, int, int, int | None]:
    """The identifier and length octets at *pos*: (class, constructed, tag number, offset of
    the contents, length or None when indefinite). _NeedMore if they run past *stop*."""
    start = pos
    if pos >= stop:
        raise _NeedMore
    first = data[pos]
    pos += 1
    number = first & 0x1F
    if number == 0x1F:  # high tag number: base-128 octets, the last without bit 8
        number = 0
        while True:
            if pos >= stop:
                raise _NeedMore
            octet = data[pos]
            pos += 1
            if number == 0 and octet == 0x80:
                raise BERError(f"tag number at offset {start} starts with a padding octet")
            number = (number << 7) | (octet & 0x7F)
            if number > max_tag:
                raise BERError(f"tag number at offset {start} exceeds the limit of {max_tag}")
            if not octet & 0x80:
                break
    cls = first & 0xC0
    constructed = bool(first & _CONSTRUCTED)
    if cls == UNIVERSAL and number == 0:
        raise BERError(f"unexpected end-of-contents octets at offset {start}")
    if pos >= stop:
        raise _NeedMore
    lead = data[pos]
    pos += 1
    if lead == 0x80:  # indefinite: elements up to the end-of-contents octets 00 00 (X.690 8.1.3.6)
        if not constructed:
            raise BERError(f"indefinite length on primitive {_tag_text(cls, number)} at offset {start}")
        return cls, constructed, number, pos, None
    if lead & 0x80:
        count = lead & 0x7F
        if count == 0x7F:
            raise BERError(f"reserved length octet 0xFF at offset {pos - 1}")
        if count > 8:
            raise BERError(f"length of {count} octets at offset {pos - 1} is absurd")
        if pos + count > stop:
            raise _NeedMore
        return cls, constructed, number, pos + count, int.from_bytes(data[pos:pos + count], "big")
    return cls, constructed, number, pos, lead


class Scanner:
    """Where the element at the start of a growing buffer ends, found without a tree.

    :meth:`length` may be called again each time bytes were appended to the buffer
    (the bytes already seen must not change); the scan resumes where the last call
    stopped, so an indefinite-length element costs work linear in its size however
    its bytes arrive. Only the headers along indefinite-length elements are read:
    a definite length is skipped over. :meth:`reset` starts over for the next element.
    ``steps`` counts the headers and end-of-contents positions examined.
    """

    def __init__(self, limit: int | None = None, *, max_depth: int = MAX_DEPTH, max_tag: int = MAX_TAG) -> None:
        self.limit = limit
        self.max_depth = max_depth
        self.max_tag = max_tag
        self.steps = 0
        self.reset()

    def reset(self) -> None:
        self._pos = 0  # where the scan goes on: a header, or the end-of-contents check
        self._open: list[tuple[int, int, int]] = []  # (start, class, number) of each open indefinite element
        self._end: int | None = None

    def length(self, buffer: bytes | bytearray) -> int | None:
        """Total bytes of the element, or None if more are needed to tell (BERError as
        :func:`element_length`)."""
        if self._end is not None:
            return self._end
        limit = self.limit
        try:
            end = self._scan(buffer)
        except _NeedMore:
            if limit is not None and len(buffer) > limit:
                raise BERError(f"element longer than the {limit}-byte limit") from None
            return None
        if limit is not None and end > limit:
            raise BERError(f"element of {end} bytes is longer than the {limit}-byte limit")
        self._end = end
        return end

    def _scan(self, data: bytes | bytearray) -> int:
        stop = len(data)
        limit = self.limit
        opened = self._open
        pos = self._pos
        while True:
            self._pos = pos  # a _NeedMore from here on resumes at pos
            if opened:
                if pos + 2 > stop:
                    raise _NeedMore
                self.steps += 1
                if data[pos] == 0 and data[pos + 1] == 0:
                    opened.pop()
                    pos += 2
                    if not opened:
                        return pos
                    self._check_span(pos)  # the element closed is a child of the one enclosing it
                    continue
            depth = len(opened)
            if depth > self.max_depth:
                raise BERError(f"BER nesting deeper than {self.max_depth} levels at offset {pos}")
            self.steps += 1
            cls, _constructed, number, cstart, length = _header(data, pos, stop, self.max_tag)
            if length is None:
                opened.append((pos, cls, number))
                pos = cstart
                continue
            if limit is not None and length > limit:
                raise BERError(f"{_tag_text(cls, number)} at offset {pos} claims {length} bytes, over the "
                               f"{limit}-byte limit")
            pos = cstart + length
            if not opened:
                return pos
            self._check_span(pos)

    def _check_span(self, pos: int) -> None:
        start, cls, number = self._open[-1]
        if self.limit is not None and pos - start > self.limit:
            raise BERError(f"{_tag_text(cls, number)} at offset {start} is longer than the "
                           f"{self.limit}-byte limit")


class _Parser:
    def __init__(self, data: bytes, max_length: int | None, max_depth: int, max_tag: int) -> None:
        self.data = data
        self.max_length = max_length
        self.max_depth = max_depth
        self.max_tag = max_tag

    def _short(self, stop: int, start: int) -> Exception:
        # Past the buffer: more bytes may come. Past an enclosing element: malformed.
        if stop >= len(self.data):
            return _NeedMore()
        return BERError(f"the element at offset {start} runs past the end of the element enclosing it")

    def element(self, pos: int, depth: int, stop: int | None = None) -> Element:
        data = self.data
        if stop is None:
            stop = len(data)
        if depth > self.max_depth:
            raise BERError(f"BER nesting deeper than {self.max_depth} levels at offset {pos}")
        start = pos
        try:
            cls, constructed, number, pos, length = _header(data, pos, stop, self.max_tag)
        except _NeedMore:
            raise self._short(stop, start) from None
        element = Element(data, cls, constructed, number, start, pos)
        if length is None:
            while True:
                if pos + 2 > stop:
                    raise self._short(stop, start)
                if data[pos] == 0 and data[pos + 1] == 0:
                    element.end = pos + 2
                    return element
                child = self.element(pos, depth + 1, stop)
                element.children.append(child)
                pos = child.end
                if self.max_length is not None and pos - start > self.max_length:
                    raise BERError(f"{element.tag} at offset {start} is longer than the "
                                   f"{self.max_length}-byte limit")
        if self.max_length is not None and length > self.max_length:
            raise BERError(f"{element.tag} at offset {start} claims {length} bytes, over the "
                           f"{self.max_length}-byte limit")
        element.end = pos + length
        if element.end > stop:
            if stop < len(data):
                raise self._short(stop, start)
            raise BERError(f"{element.tag} at offset {start} claims {length} bytes but only "
                           f"{stop - pos} remain")
        if constructed:
            while pos < element.end:
                child = self.element(pos, depth + 1, element.end)
                element.children.append(child)
                pos = child.end
        return element

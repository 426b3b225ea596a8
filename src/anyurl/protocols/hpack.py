"""HPACK header blocks (RFC 7541) held to the pure-Python hpack library's rules before and after a
compiled decoder decodes them.

anyurl decodes response heads with jh2's compiled HPACK decoder where it is installed (8-18x
faster than hpack). That decoder lets through some blocks hpack refuses (a dynamic table size
update after a field, RFC 7541 4.2; Huffman padding longer than 7 bits or not all ones, 5.2) and
reports truncated ones by panicking, which prints to stderr before the error reaches Python.
:class:`StrictDecoder` wraps it: :func:`check_block` walks the block's representations first (no
string is decoded: the integers, the string lengths, where each table size update stands) and
refuses what hpack refuses there, so a truncated block never reaches the compiled code; after the
decode, :func:`huffman_fits` checks each Huffman-coded string against its decoded text: the codes
of the decoded bytes must fill the string's bytes but for 0-7 bits of padding, all ones.

Nothing here imports asyncio or the codec: the decoder and its error class are handed in.
"""

from __future__ import annotations

from typing import Any

__all__ = ["BlockError", "HUFFMAN_BITS", "StrictDecoder", "check_block", "huffman_fits"]

#: the length in bits of each byte's Huffman code (RFC 7541 Appendix B), indexed by the byte
HUFFMAN_BITS = bytes((
    13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28,
    28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28,
    6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6,
    5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10,
    13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
    7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6,
    15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5,
    6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28,
    20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23,
    24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24,
    22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23,
    21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23,
    26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25,
    19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27,
    20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23,
    26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26,
))
#: an integer's continuation bytes hpack reads at most (the fifth must end it)
_MAX_CONTINUATION = 5


class BlockError(ValueError):
    """A header block hpack would refuse (the message says why)."""


def _integer(data: bytes, i: int, mask: int) -> tuple[int, int]:
    """The integer whose prefix (the low bits *mask* of data[i]) starts at *i*: (value, next index).
    At most five continuation bytes, as hpack reads."""
    value = data[i] & mask
    i += 1
    if value < mask:
        return value, i
    shift = 0
    n = len(data)
    for _ in range(_MAX_CONTINUATION):
        if i >= n:
            raise BlockError("truncated integer")
        b = data[i]
        i += 1
        value += (b & 0x7F) << shift
        if b < 0x80:
            return value, i
        shift += 7
    raise BlockError("integer representation too long")


def check_block(data: bytes) -> list[tuple[int, int, int]]:
    """Walk a header block's representations (RFC 7541 6) as hpack does, without decoding a
    string: a truncated integer or string, an integer of more than five continuation bytes or a
    table size update after a field raises :class:`BlockError`. The Huffman-coded strings, as
    ``(2 * field number + (0 for the name, 1 for the value), start, end)``, for :func:`huffman_fits`."""
    n = len(data)
    i = 0
    field = 0
    coded: list[tuple[int, int, int]] = []
    while i < n:
        b = data[i]
        if b & 0x80:  # indexed field
            if b != 0xFF:
                i += 1
            else:
                _, i = _integer(data, i, 0x7F)
            field += 1
            continue
        if b & 0x40:
            mask = 0x3F
        elif b & 0x20:  # dynamic table size update: only before the first field (RFC 7541 4.2)
            if field:
                raise BlockError("table size update not at the start of the block")
            _, i = _integer(data, i, 0x1F)
            continue
        else:
            mask = 0x0F
        index = b & mask
        if index == mask:
            _, i = _integer(data, i, mask)
        else:
            i += 1
        for part in ((0, 1) if index == 0 else (1,)):  # a literal name, then the value
            if i >= n:
                raise BlockError("truncated header block")
            c = data[i]
            length = c & 0x7F
            if length < 0x7F:
                i += 1
            else:
                length, i = _integer(data, i, 0x7F)
            end = i + length
            if end > n:
                raise BlockError("truncated header block")
            if c & 0x80 and length:
                coded.append((2 * field + part, i, end))
            i = end
        field += 1
    return coded


def huffman_fits(decoded: bytes, coded: bytes) -> bool:
    """Whether *coded* is exactly *decoded*'s Huffman codes plus 0-7 bits of padding, all ones
    (RFC 7541 5.2: longer padding, padding not of ones, or an EOS inside is a decoding error).
    A prefix code decodes one way only: the decoded text's code lengths fix where the padding starts."""
    bits = sum(decoded.translate(HUFFMAN_BITS))
    pad = 8 * len(coded) - bits
    if not 0 <= pad <= 7:
        return False
    ones = (1 << pad) - 1
    return coded[-1] & ones == ones


class StrictDecoder:
    """A compiled HPACK decoder (``decode(data, raw)`` giving ``(name, value, sensitive)``
    triples, as jh2's) that refuses what hpack refuses: :func:`check_block` before it decodes,
    :func:`huffman_fits` after. A refusal raises *error* (the codec's own HPACKError, which the
    HTTP/2 connection turns into a connection error); the decoder's table is not used again then."""

    __slots__ = ("inner", "error")

    def __init__(self, inner: Any, error: type[Exception]) -> None:
        self.inner = inner
        self.error = error

    def decode(self, data: bytes, raw: bool | None = None) -> Any:
        try:
            coded = check_block(data)
        except BlockError as exc:
            raise self.error(f"Error decoding header block: {exc}") from None
        fields = self.inner.decode(data, raw)
        bits = HUFFMAN_BITS
        for key, start, end in coded:
            # huffman_fits, inline (six strings in each of nginx's heads)
            pad = 8 * (end - start) - sum(fields[key >> 1][key & 1].translate(bits))
            if not 0 <= pad <= 7 or data[end - 1] & ((1 << pad) - 1) != (1 << pad) - 1:
                raise self.error("Error decoding header block: invalid Huffman string")
        return fields

    # the settings the HTTP/2 connection sets and reads, passed through
    @property
    def header_table_size(self) -> int:
        return int(self.inner.header_table_size)

    @header_table_size.setter
    def header_table_size(self, value: int) -> None:
        self.inner.header_table_size = value

    @property
    def max_allowed_table_size(self) -> int:
        return int(self.inner.max_allowed_table_size)

    @max_allowed_table_size.setter
    def max_allowed_table_size(self, value: int) -> None:
        self.inner.max_allowed_table_size = value

    @property
    def max_header_list_size(self) -> int:
        return int(self.inner.max_header_list_size)

    @max_header_list_size.setter
    def max_header_list_size(self, value: int) -> None:
        self.inner.max_header_list_size = value

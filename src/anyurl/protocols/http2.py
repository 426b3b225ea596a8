"""HTTP/2 pieces without I/O that the h2 library does not give: GOAWAY taken out of the byte stream.

h2 closes its connection state machine when a GOAWAY frame arrives, so
the frames that follow for streams the server still finishes (RFC 9113
6.8: streams up to the GOAWAY's last stream id are processed) would be
refused. :class:`GoawayFilter` splits the server's bytes into frames,
hands every frame but GOAWAY on to h2 as it came, and returns each GOAWAY
as ``(last_stream_id, error_code, debug_data)`` for the driver: it stops
opening streams there and lets the processed ones end.

Frames are never larger than *max_frame* (SETTINGS_MAX_FRAME_SIZE, 16 KiB
unless the client announced more): a larger one is a protocol error
before its payload is buffered (only a GOAWAY's payload is kept here).
"""

from __future__ import annotations

import re

from ..errors import ProtocolError
from .http1 import MAX_HEADERS

__all__ = ["GOAWAY", "GoawayFilter", "malformed_head"]

GOAWAY = 0x7
_HEADER = 9


class GoawayFilter:
    """Feed the server's bytes; get back the bytes for h2 and the GOAWAY frames taken out."""

    __slots__ = ("max_frame", "url", "_head", "_left", "_goaway", "_payload")

    def __init__(self, max_frame: int = 1 << 14, url: object = None) -> None:
        self.max_frame = max_frame
        self.url = url
        self._head = b""  # a frame header not yet whole
        self._left = 0  # payload bytes of the current frame still to come
        self._goaway = False  # the current frame is a GOAWAY (its payload kept, not passed on)
        self._payload = b""

    def feed(self, data: bytes) -> tuple[bytes, list[tuple[int, int, bytes]]]:
        """(the bytes to give h2, the GOAWAY frames found as (last stream id, error code, debug)).
        Nothing is copied unless a GOAWAY (or a frame header cut by the end of *data*) is met."""
        n = len(data)
        i = 0
        keep: list[bytes] = []  # the pieces passed on, once something was cut out
        cut = False
        mark = 0  # where the current run of passed-on bytes began (-1: inside a GOAWAY)
        found: list[tuple[int, int, bytes]] = []
        while i < n:
            left = self._left
            if left:
                take = min(left, n - i)
                if self._goaway:
                    self._payload += data[i:i + take]
                    cut = True
                    mark = -1
                self._left = left - take
                i += take
                if self._goaway and not self._left:
                    found.append(self._parse_goaway(self._payload))
                    self._goaway = False
                    self._payload = b""
                    mark = i
                continue
            start = i
            had = self._head
            piece = data[i:i + _HEADER - len(had)]
            i += len(piece)
            if len(had) + len(piece) < _HEADER:  # a header cut by the end of the data: held back
                if mark >= 0:
                    keep.append(data[mark:start])
                self._head = had + piece
                cut = True
                mark = -1
                break
            head = had + piece
            self._head = b""
            length = int.from_bytes(head[:3], "big")
            if length > self.max_frame:
                raise ProtocolError(f"HTTP/2 frame of {length} bytes, more than the {self.max_frame} "
                                    "allowed (SETTINGS_MAX_FRAME_SIZE)", url=self.url)
            if head[3] == GOAWAY:
                if length < 8:
                    raise ProtocolError("HTTP/2 GOAWAY frame shorter than 8 bytes", url=self.url)
                if mark >= 0:
                    keep.append(data[mark:start])
                cut = True
                mark = -1
                self._goaway = True
                self._payload = b""
            elif had:  # the header's first bytes came with the previous data, held back: now passed on
                if mark >= 0:
                    keep.append(data[mark:start])
                keep.append(had)
                cut = True
                mark = start
            self._left = length
        if not cut:
            return data, found
        if mark >= 0:
            keep.append(data[mark:])
        return b"".join(keep), found

    def _parse_goaway(self, payload: bytes) -> tuple[int, int, bytes]:
        if len(payload) < 8:
            raise ProtocolError("HTTP/2 GOAWAY frame shorter than 8 bytes", url=self.url)
        last = int.from_bytes(payload[:4], "big") & 0x7FFFFFFF
        code = int.from_bytes(payload[4:8], "big")
        return last, code, payload[8:]


# a response head's checks (RFC 9113 8.2, 8.3): h2's own walk every byte in Python, in seven
# chained generators per field (a fifth of the CPU of a small response); these are two regexes
_FIELD_NAME = re.compile(rb"[!#$%&'*+\-.^_`|~0-9a-z]+")  # a token in lower case
_BAD_VALUE = re.compile(rb"[\0\r\n]|^[ \t]|[ \t]$")
_CONNECTION_FIELDS = frozenset({b"connection", b"keep-alive", b"proxy-connection", b"transfer-encoding", b"upgrade"})


def malformed_head(fields: list[tuple[bytes, bytes]]) -> str | None:
    """What makes an HTTP/2 or HTTP/3 response head malformed (RFC 9113 8.1.1, 8.2, 8.3; RFC 9114
    4.1.2, 4.2, 4.3 asks the same), or None: :status first, three
    digits, and the only pseudo-field; names lower-case tokens; no connection-specific field,
    no TE but "trailers"; no NUL, CR or LF in a value, no white space around it; at most
    MAX_HEADERS fields."""
    if len(fields) > MAX_HEADERS + 1:
        return f"more than {MAX_HEADERS} header fields"
    if not fields or fields[0][0] != b":status":
        return "no :status first"
    status = fields[0][1]
    if len(status) != 3 or not status.isdigit():
        return f"bad :status {status[:20]!r}"
    name_ok = _FIELD_NAME.fullmatch
    bad_value = _BAD_VALUE.search
    for i in range(1, len(fields)):
        name, value = fields[i]
        if name_ok(name) is None:
            return f"bad field name {name[:40]!r}"
        if value and bad_value(value) is not None:
            return f"bad value of {name[:40].decode('ascii')}"
        if name in _CONNECTION_FIELDS or (name == b"te" and value.lower() != b"trailers"):
            return f"connection-specific field {name.decode('ascii')}"
    return None

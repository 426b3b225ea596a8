"""Prospero Directory Service, protocol version 5, over ARDP (pure: no sockets, no asyncio).

Two layers, both written from ISI's documents ("The Prospero Protocol,
version 5" and "ARDP, version 0"; see docs/prospero.md for the points
where our reading had to fill a gap):

**ARDP v0**, the reliable datagram layer over UDP. Each packet starts with
a header whose first octet holds the version (two high bits, 0) and the
header length (six low bits); then, big-endian 16-bit fields: connection
id (octets 1-2), packet number (3-4; 0 = unsequenced control packet), total
packets of the message (5-6), received-through (7-8), expected wait in
seconds (9-10); then a flags octet (11; 0x80 = please acknowledge) and an
option octet (12; 1 = cancel / connection refused, 2 = reset
received-through). Absent trailing fields take their defaults.
:class:`Receiver` reassembles a multi-packet reply, dropping duplicates
and accepting any order, and says when to acknowledge;
:func:`retry_delays` is the retransmission schedule with backoff.

**The command language**: a request is lines of tokens (``VERSION 5``,
``AUTHENTICATE``, ``DIRECTORY ASCII <hsoname>``, ``LIST``,
``GET-OBJECT-INFO``); tokens holding spaces or quotes are written in single
quotes, with a quote doubled inside. The reply's ``LINK`` lines become
:class:`Link` values and their ``ATTRIBUTE ... ACCESS-METHOD`` lines become
:class:`AccessMethod` values, which :func:`access_url` turns into the URL of
the underlying access method (ftp, gopher, http, wais, file).
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field, replace

from .._record import Record
from ..urls import percent_encode

_set = object.__setattr__  # how a frozen Record's __init__ sets its fields

__all__ = [
    "ACK_REQUESTED",
    "OPTION_CANCEL",
    "OPTION_RESET",
    "AccessMethod",
    "ARDPError",
    "Header",
    "Link",
    "PacketEvent",
    "ProsperoReply",
    "Receiver",
    "ReplyParser",
    "access_url",
    "authority",
    "build_get_object_info",
    "build_list",
    "decode_packet",
    "encode_packet",
    "join_tokens",
    "parse_reply",
    "reply_lines",
    "retry_delays",
    "split_message",
    "split_tokens",
]

ARDP_VERSION = 0
ACK_REQUESTED = 0x80  # octet 11: the sender wants an acknowledgement
OPTION_CANCEL = 1  # octet 12: client->server cancel; server->client connection refused
OPTION_RESET = 2  # octet 12: reset the peer's received-through count
FULL_HEADER = 13
SHORT_HEADER = 11
MAX_PAYLOAD = 1400  # keeps a packet inside one Ethernet frame
PROTOCOL_VERSION = "5"


class ARDPError(ValueError):
    """A packet or reply that breaks the protocol (the driver maps it to ProtocolError)."""


class Header(Record):
    """An ARDP v0 header. ``sequence`` 0 marks an unsequenced control packet."""

    __slots__ = ("connection_id", "sequence", "total", "received_through", "wait", "flags", "option")
    connection_id: int
    sequence: int
    total: int
    received_through: int
    wait: int
    flags: int
    option: int

    def __init__(self, connection_id: int, sequence: int = 1, total: int = 0, received_through: int = 0,
                       wait: int = 0, flags: int = 0, option: int = 0) -> None:
        _set(self, "connection_id", connection_id)
        _set(self, "sequence", sequence)
        _set(self, "total", total)
        _set(self, "received_through", received_through)
        _set(self, "wait", wait)
        _set(self, "flags", flags)
        _set(self, "option", option)

    @property
    def ack_requested(self) -> bool:
        return bool(self.flags & ACK_REQUESTED)


def encode_packet(header: Header, payload: bytes = b"") -> bytes:
    """One datagram: the header (11 octets, or 13 when flags/option are set) then *payload*."""
    length = FULL_HEADER if (header.flags or header.option) else SHORT_HEADER
    fields = (header.connection_id, header.sequence, header.total, header.received_through, header.wait)
    for value in fields:
        if not 0 <= value <= 0xFFFF:
            raise ARDPError(f"header field {value} does not fit in 16 bits")
    raw = bytes([(ARDP_VERSION << 6) | length]) + struct.pack(">5H", *fields)
    if length == FULL_HEADER:
        raw += bytes([header.flags & 0xFF, header.option & 0xFF])
    return raw + payload


def decode_packet(data: bytes) -> tuple[Header, bytes]:
    """Split a datagram into its header (with defaults for absent fields) and payload."""
    if not data:
        raise ARDPError("empty datagram")
    version, length = data[0] >> 6, data[0] & 0x3F
    if version != ARDP_VERSION:
        raise ARDPError(f"ARDP version {version} packets are not supported")
    if length < 1 or length > len(data):
        raise ARDPError(f"header length {length} does not fit a {len(data)}-octet datagram")

    def field16(offset: int, default: int) -> int:
        if length >= offset + 2:
            return int.from_bytes(data[offset:offset + 2], "big")
        return default

    sequence = field16(3, 1)
    total = field16(5, 0)
    if length < 5:  # neither packet number nor total given: a one-packet message
        total = 1
    header = Header(
        connection_id=field16(1, 0),
        sequence=sequence,
        total=total,
        received_through=field16(7, 0),
        wait=field16(9, 0),
        flags=data[11] if length > 11 else 0,
        option=data[12] if length > 12 else 0,
    )
    return header, data[length:]


def split_message(connection_id: int, message: bytes, max_payload: int = MAX_PAYLOAD,
                  *, received_through: int = 0) -> list[bytes]:
    """A request message as its datagrams; the last one asks for an acknowledgement."""
    chunks = [message[i:i + max_payload] for i in range(0, len(message), max_payload)] or [b""]
    if len(chunks) > 0xFFFF:
        raise ARDPError("message too long for ARDP")
    total = len(chunks)
    return [encode_packet(Header(connection_id, i, total, received_through,
                                 flags=ACK_REQUESTED if i == total else 0), chunk)
            for i, chunk in enumerate(chunks, start=1)]


def retry_delays(initial: float, retries: int, backoff: float = 2.0, ceiling: float = 60.0) -> list[float]:
    """Seconds to wait before each retransmission: initial, initial*backoff, ... capped at *ceiling*."""
    delays = []
    delay = initial
    for _ in range(retries + 1):
        delays.append(min(delay, ceiling))
        delay *= backoff
    return delays


class PacketEvent(Record):
    """What the driver should do after feeding a packet to the :class:`Receiver`."""

    __slots__ = ("accepted", "duplicate", "ignored", "send_ack", "complete", "wait", "refused")
    accepted: bool  # a new packet of the message was stored
    duplicate: bool
    ignored: bool  # another connection's packet, or a packet we cannot use
    send_ack: bool
    complete: bool
    wait: int | None  # the server asks for this many seconds of patience
    refused: bool  # the server refused or cancelled the request

    def __init__(self, accepted: bool = False, duplicate: bool = False, ignored: bool = False,
                       send_ack: bool = False, complete: bool = False, wait: int | None = None,
                       refused: bool = False) -> None:
        _set(self, "accepted", accepted)
        _set(self, "duplicate", duplicate)
        _set(self, "ignored", ignored)
        _set(self, "send_ack", send_ack)
        _set(self, "complete", complete)
        _set(self, "wait", wait)
        _set(self, "refused", refused)


class Receiver:
    """Reassembles one multi-packet reply: any order, duplicates dropped, bounded size."""

    def __init__(self, connection_id: int, *, max_packets: int = 4096, max_bytes: int = 16 << 20) -> None:
        self.connection_id = connection_id
        self.max_packets = max_packets
        self.max_bytes = max_bytes
        self.total = 0  # 0: not yet known
        self.received_through = 0
        self.packets: dict[int, bytes] = {}
        self.size = 0
        self._ack_owed = False

    def feed(self, header: Header, payload: bytes) -> PacketEvent:
        """Take one decoded packet; raises ARDPError when the reply grows past the limits."""
        if header.connection_id != self.connection_id:
            return PacketEvent(ignored=True)
        if header.option == OPTION_CANCEL:
            return PacketEvent(refused=True)
        if header.sequence == 0:  # control packet: a wait notice or an acknowledgement
            return PacketEvent(ignored=not header.wait, wait=header.wait or None)
        if header.total:
            if header.total > self.max_packets:
                raise ARDPError(f"reply of {header.total} packets exceeds the limit of {self.max_packets}")
            self.total = header.total
        if header.sequence > self.max_packets or (self.total and header.sequence > self.total):
            raise ARDPError(f"packet {header.sequence} is beyond the end of the reply")
        if header.sequence in self.packets or header.sequence <= self.received_through:
            # Acknowledge again only if asked: the sender may have missed our acknowledgement.
            return PacketEvent(duplicate=True, send_ack=header.ack_requested, complete=self.complete)
        self.size += len(payload)
        if self.size > self.max_bytes:
            raise ARDPError(f"reply larger than {self.max_bytes} bytes")
        self.packets[header.sequence] = payload
        while self.received_through + 1 in self.packets:
            self.received_through += 1
        caught_up = self.received_through == max(self.packets)
        ack = self.complete or header.ack_requested
        if header.ack_requested and not caught_up:
            # Asked for an acknowledgement while earlier packets are still on the
            # way (reordering): acknowledge now, and again once the gap closes.
            self._ack_owed = True
        elif self._ack_owed and caught_up:
            self._ack_owed = False
            ack = True
        return PacketEvent(accepted=True, complete=self.complete, send_ack=ack, wait=header.wait or None)

    @property
    def complete(self) -> bool:
        return self.total > 0 and self.received_through >= self.total

    def missing(self) -> list[int]:
        """Packet numbers not yet received (those known to exist)."""
        end = self.total or max(self.packets, default=0)
        return [i for i in range(1, end + 1) if i not in self.packets]

    def ack_packet(self) -> bytes:
        """The unsequenced control packet that acknowledges everything received so far."""
        return encode_packet(Header(self.connection_id, 0, 0, self.received_through))

    def message(self) -> bytes:
        """The reassembled reply (only once complete)."""
        if not self.complete:
            raise ARDPError("reply not complete")
        return b"".join(self.packets[i] for i in range(1, self.total + 1))


# -- the command language ------------------------------------------------------


def _quote(token: str) -> str:
    if token and not any(c in token for c in " \t'"):
        return token
    return "'" + token.replace("'", "''") + "'"


def join_tokens(tokens: list[str]) -> str:
    """One protocol line from *tokens*, quoting those that need it."""
    for t in tokens:
        if any(c in t for c in "\r\n\0"):
            raise ARDPError("a token holds a line break or NUL")
    return " ".join(_quote(t) for t in tokens)


# a token: 'quoted, with '' for a quote' or a bare run of non-blanks (which may hold quotes)
_TOKEN = re.compile(r"'((?:[^']+|'')*)'|([^ \t'][^ \t]*)")
_TOKENS_ONLY = re.compile(r"(?:[ \t]+|'(?:[^']+|'')*'|[^ \t'][^ \t]*)*")


def split_tokens(line: str) -> list[str]:
    """The tokens of one protocol line (single quotes group, a doubled quote is a quote)."""
    if "'" not in line:  # the common case
        return [t for t in line.replace("\t", " ").split(" ") if t]
    if not _TOKENS_ONLY.fullmatch(line):
        raise ARDPError(f"unterminated quote in {line!r}")
    # a bare token is never empty, so an empty one is a quoted ''
    return [bare or quoted.replace("''", "'") for quoted, bare in _TOKEN.findall(line)]


def _preamble(user: str) -> list[str]:
    return [join_tokens(["VERSION", PROTOCOL_VERSION, "anyurl"]),
            join_tokens(["AUTHENTICATE", "", "UNAUTHENTICATED", user])]


def _object_tokens(hsoname: str, fields: tuple[tuple[str, str], ...]) -> list[str]:
    # The URL's fields identify the target: OBJECT-VERSION is the link's VERSION
    # token; any other field travels as an ID <type> <value> pair.
    tokens = ["ASCII", hsoname]
    for name, value in fields:
        if name.upper() == "OBJECT-VERSION":
            tokens += ["VERSION", value]
        else:
            tokens += ["ID", name, value]
    return tokens


def build_list(hsoname: str, fields: tuple[tuple[str, str], ...] = (), *, user: str = "anonymous") -> bytes:
    """The request listing directory *hsoname* with each link's attributes."""
    lines = _preamble(user) + [
        join_tokens(["DIRECTORY", *_object_tokens(hsoname, fields)]),
        join_tokens(["LIST", "ATTRIBUTES", "COMPONENTS"]),
    ]
    return ("\n".join(lines) + "\n").encode("utf-8", "surrogateescape")


def build_get_object_info(hsoname: str, fields: tuple[tuple[str, str], ...] = (), *,
                          user: str = "anonymous") -> bytes:
    """The request for an object's type and access methods."""
    lines = _preamble(user) + [
        join_tokens(["GET-OBJECT-INFO", "OBJECT-TYPE+ACCESS-METHOD", *_object_tokens(hsoname, fields)]),
    ]
    return ("\n".join(lines) + "\n").encode("utf-8", "surrogateescape")


class AccessMethod(Record):
    """One ACCESS-METHOD value: method, host, hsoname and the method's extra elements."""

    __slots__ = ("method", "host_type", "host", "hsoname_type", "hsoname", "extra")
    method: str
    host_type: str
    host: str
    hsoname_type: str
    hsoname: str
    extra: tuple[str, ...]

    def __init__(self, method: str, host_type: str, host: str, hsoname_type: str, hsoname: str,
                       extra: tuple[str, ...] = ()) -> None:
        _set(self, "method", method)
        _set(self, "host_type", host_type)
        _set(self, "host", host)
        _set(self, "hsoname_type", hsoname_type)
        _set(self, "hsoname", hsoname)
        _set(self, "extra", extra)


class Link(Record):
    """One LINK line of a listing, with the ATTRIBUTE lines that followed it."""

    __slots__ = ("link_type", "target", "name", "host_type", "host", "hsoname_type", "hsoname", "version",
                 "ids", "access", "attributes")
    link_type: str  # L (normal) or U (union)
    target: str  # FILE, DIRECTORY, EXTERNAL, SYMBOLIC, OBJECT...
    name: str
    host_type: str
    host: str
    hsoname_type: str
    hsoname: str
    version: str | None
    ids: tuple[tuple[str, str], ...]
    access: tuple[AccessMethod, ...]
    attributes: tuple[tuple[str, tuple[str, ...]], ...]

    def __init__(self, link_type: str, target: str, name: str, host_type: str, host: str, hsoname_type: str,
                       hsoname: str, version: str | None = None, ids: tuple[tuple[str, str], ...] = (),
                       access: tuple[AccessMethod, ...] = (),
                       attributes: tuple[tuple[str, tuple[str, ...]], ...] = ()) -> None:
        _set(self, "link_type", link_type)
        _set(self, "target", target)
        _set(self, "name", name)
        _set(self, "host_type", host_type)
        _set(self, "host", host)
        _set(self, "hsoname_type", hsoname_type)
        _set(self, "hsoname", hsoname)
        _set(self, "version", version)
        _set(self, "ids", ids)
        _set(self, "access", access)
        _set(self, "attributes", attributes)


@dataclass
class ProsperoReply:
    """A parsed reply: links (LIST), object type and access methods (GET-OBJECT-INFO), or a failure."""

    links: list[Link] = field(default_factory=list)
    object_type: str | None = None
    access: list[AccessMethod] = field(default_factory=list)
    failure: tuple[str, str] | None = None  # (kind, text): NOT-FOUND, NOT-A-DIRECTORY, ...
    error: str | None = None  # ERROR / VERSION-NOT-SUPPORTED / NOT-AUTHORIZED text
    none_found: bool = False


def _access(values: list[str], link: Link | None) -> AccessMethod:
    if len(values) < 5:
        raise ARDPError(f"ACCESS-METHOD needs at least 5 elements, got {values!r}")
    method, host_type, host, hso_type, hso, *extra = values
    # '' means "the same as the link's" (saves bytes on the wire).
    if link is not None:
        host_type = host_type or link.host_type
        host = host or link.host
        hso_type = hso_type or link.hsoname_type
        hso = hso or link.hsoname
    return AccessMethod(method.upper(), host_type, host, hso_type, hso, tuple(extra))


class ReplyParser:
    """Parses a reply line by line, so a driver can pause between lines.

    Linear in the size of the reply; every list a server's lines feed is
    bounded: ``max_links`` LINK lines, ``max_attributes`` ATTRIBUTE lines per
    link (and for the object itself).
    """

    def __init__(self, *, max_links: int = 1_000_000, max_attributes: int = 10_000) -> None:
        self.max_links = max_links
        self.max_attributes = max_attributes
        self.reply = ProsperoReply()
        self._link: Link | None = None
        # the current link's ATTRIBUTE lines, collected in lists: a tuple rebuilt per line is quadratic
        self._access: list[AccessMethod] = []
        self._attributes: list[tuple[str, tuple[str, ...]]] = []

    def _close_link(self) -> None:
        if self._link is not None:
            self.reply.links.append(replace(self._link, access=tuple(self._access),
                                            attributes=tuple(self._attributes)))
        self._link = None
        self._access = []
        self._attributes = []

    def feed(self, raw: str) -> None:
        """One line of the reply (without its line break)."""
        line = raw.rstrip("\r")
        if not line.strip():
            return
        tokens = split_tokens(line)
        keyword = tokens[0].upper()
        reply = self.reply
        if keyword == "LINK":
            self._close_link()
            if len(reply.links) >= self.max_links:
                raise ARDPError(f"more than {self.max_links} links")
            self._link = _link(tokens)
        elif keyword == "ATTRIBUTE":
            name, values = _attribute(tokens)
            if name == "ACCESS-METHOD" and self._link is None:
                if len(reply.access) >= self.max_attributes:
                    raise ARDPError(f"more than {self.max_attributes} access methods")
                reply.access.append(_access(values, None))
            elif self._link is not None:
                if len(self._access) + len(self._attributes) >= self.max_attributes:
                    raise ARDPError(f"link {self._link.name!r} has more than {self.max_attributes} attributes")
                if name == "ACCESS-METHOD":
                    self._access.append(_access(values, self._link))
                else:
                    self._attributes.append((name, tuple(values)))
        elif keyword == "OBJECT-INFO":
            reply.object_type = tokens[1] if len(tokens) > 1 else ""
        elif keyword == "FAILURE":
            reply.failure = (tokens[1].upper() if len(tokens) > 1 else "", " ".join(tokens[2:]))
        elif keyword in ("ERROR", "VERSION-NOT-SUPPORTED", "NOT-AUTHORIZED"):
            reply.error = line.strip()
        elif keyword == "NONE-FOUND":
            reply.none_found = True
        # Other lines (VERSION, FORWARDED, UNRESOLVED...) carry nothing this client uses.

    def finish(self) -> ProsperoReply:
        """The parsed reply, once every line was fed."""
        self._close_link()
        return self.reply


def reply_lines(message: bytes) -> list[str]:
    """The lines of a reassembled reply message, for :meth:`ReplyParser.feed`."""
    return message.decode("utf-8", "surrogateescape").split("\n")


def parse_reply(message: bytes, *, max_links: int = 1_000_000, max_attributes: int = 10_000) -> ProsperoReply:
    """Parse a whole (reassembled) reply message."""
    parser = ReplyParser(max_links=max_links, max_attributes=max_attributes)
    for line in reply_lines(message):
        parser.feed(line)
    return parser.finish()


def _link(tokens: list[str]) -> Link:
    if len(tokens) < 8:
        raise ARDPError(f"LINK line needs 7 fields, got {len(tokens) - 1}: {tokens!r}")
    _, link_type, target, name, host_type, host, hso_type, hso, *rest = tokens
    version = None
    ids: list[tuple[str, str]] = []
    i = 0
    while i < len(rest):
        key = rest[i].upper()
        if key == "VERSION" and i + 1 < len(rest):
            version = rest[i + 1]
            i += 2
        elif key == "ID" and i + 2 < len(rest):
            ids.append((rest[i + 1], rest[i + 2]))
            i += 3
        else:
            i += 1
    return Link(link_type.upper(), target.upper(), name, host_type, host, hso_type, hso, version, tuple(ids))


def _attribute(tokens: list[str]) -> tuple[str, list[str]]:
    # ATTRIBUTE <applies-to> FIELD <name> <value>
    # ATTRIBUTE <applies-to> (APPLICATION|INTRINSIC) <name> <value-type> <value>...
    if len(tokens) < 4:
        raise ARDPError(f"short ATTRIBUTE line: {tokens!r}")
    namespace, name = tokens[2].upper(), tokens[3].upper()
    if namespace == "FIELD":
        return name, tokens[4:]
    return name, tokens[5:]


def _host_port(host: str) -> tuple[str, int | None]:
    # Prospero writes a port as host(port).
    if host.endswith(")") and "(" in host:
        name, _, port = host[:-1].partition("(")
        if port.isdigit():
            return name, int(port)
    if host.count(":") == 1:
        name, _, port = host.partition(":")
        if port.isdigit():
            return name, int(port)
    return host, None


def authority(host: str, default: int) -> str:
    """``host[:port]`` for a URL from a Prospero host name (``name(port)`` or ``name:port``)."""
    name, port = _host_port(host)
    if ":" in name:
        name = f"[{name}]"
    return f"{name}:{port}" if port is not None and port != default else name


def _path(path: str, safe: str = "/") -> str:
    return percent_encode(path, safe=safe + "-._~!$&'()*+,=:@")


def access_url(method: AccessMethod, *, target: str = "FILE") -> str | None:
    """The URL of the underlying access method, or None for methods without one (AFS, NFS...)."""
    m = method.method
    hso = method.hsoname
    if m in ("AFTP", "FTP"):
        kind = (method.extra[0].upper() if method.extra else "")
        typecode = {"BINARY": ";type=i", "TEXT": ";type=a"}.get(kind, "")
        if target == "DIRECTORY":
            typecode = ";type=d"
        return f"ftp://{authority(method.host, 21)}/{_path(hso.lstrip('/'))}{typecode}"
    if m == "GOPHER":
        gtype = method.extra[0] if method.extra and method.extra[0] else ("1" if target == "DIRECTORY" else "0")
        return f"gopher://{authority(method.host, 70)}/{_path(gtype[0])}{_path(hso, safe='/')}"
    if m in ("HTTP", "WWW"):
        return f"http://{authority(method.host, 80)}/{_path(hso.lstrip('/'))}"
    if m == "WAIS":
        return f"wais://{authority(method.host, 210)}/{_path(hso.lstrip('/'), safe='')}"
    if m == "LOCAL":
        return f"file:///{_path(hso.lstrip('/'))}"
    return None

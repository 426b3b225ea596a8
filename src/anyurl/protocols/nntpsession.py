"""An NNTP reader session as a state machine, with no I/O (never imports asyncio).

:class:`Session` holds what one connection knows (the capabilities, OVER or XOVER, the
group selected, whether it logged in) and turns each step of a request into its RFC 3977
conversation: the greeting, CAPABILITIES, STARTTLS (RFC 4642), MODE READER, AUTHINFO
USER/PASS on a 480 (RFC 4643), GROUP, ARTICLE, STAT + HEAD (+ OVER for a size), OVER with
the XOVER fallback, LIST NEWSGROUPS + LIST ACTIVE, and the error each reply stands for.

Each conversation is a generator ("an op"), as in :mod:`anyurl.protocols.ftpsession`. It
yields events and is sent the answers:

* :class:`Send` - write this command line; a data block follows a reply whose code is
  in ``block``. The answer is None.
* :data:`READ` - the answer is the next :class:`~anyurl.protocols.nntp.Reply`.
* :class:`Block` - the answer is the data block's bytes (dot-unstuffed), at most ``limit``.
* :data:`LINE` - the answer is the block's next line (bytes, without its line end), or None
  after the block's end.
* :data:`START_TLS` - the server said 382: wrap the connection in TLS now.
* :class:`AskLogin` - a 480 asked for a login: answered with (user, password) or None.

A failure of the driver's I/O is thrown into the op at its ``yield``; the op's value is its
``StopIteration`` value. The driver, :mod:`anyurl.handlers.news`, moves the bytes;
``tests/unit/protocols/test_nntp_session.py`` plays conversations on bytes with :func:`play`.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any, Final, TypeVar

from .._record import Record
from ..errors import AccessDenied, ConnectError, ProtocolError, TemporaryFailure
from . import nntp
from .nntp import (
    ARTICLE_CODES,
    CAPABILITIES_CODES,
    LIST_CODES,
    NO_BLOCK,
    OVER_CODES,
    Data,
    End,
    GroupStatus,
    Reply,
    ReplyReader,
)

__all__ = ["LINE", "READ", "START_TLS", "AskLogin", "Block", "Event", "Op", "Send", "Session", "play"]

_set = object.__setattr__  # how a frozen Record's __init__ sets its fields
T = TypeVar("T")


class Send(Record):
    """Write this command line; a data block follows a reply whose code is in *block*."""

    __slots__ = ("block", "line")
    line: bytes
    block: frozenset[int]

    def __init__(self, line: bytes, block: frozenset[int] = NO_BLOCK) -> None:
        _set(self, "line", line)
        _set(self, "block", block)


class Block(Record):
    """Answered with the data block's bytes; more than *limit* is a ProtocolError."""

    __slots__ = ("limit",)
    limit: int

    def __init__(self, limit: int) -> None:
        _set(self, "limit", limit)


class AskLogin(Record):
    """A 480: answered with (user, password) for *host*:*port*, or None when there is none."""

    __slots__ = ("host", "port", "reply")
    host: str
    port: int
    reply: Reply

    def __init__(self, host: str, port: int, reply: Reply) -> None:
        _set(self, "host", host)
        _set(self, "port", port)
        _set(self, "reply", reply)


class _Marker:
    __slots__ = ("__doc__", "name")

    def __init__(self, name: str, doc: str) -> None:
        self.name = name
        self.__doc__ = doc

    def __repr__(self) -> str:
        return self.name


READ: Final = _Marker("READ", "Answered with the next Reply.")
LINE: Final = _Marker("LINE", "Answered with the data block's next line, or None after its end.")
START_TLS: Final = _Marker("START_TLS", "STARTTLS was accepted (382): wrap the connection in TLS.")

Event = Send | Block | AskLogin | _Marker
Op = Generator[Event, Any, T]


class Session:
    """What one NNTP connection knows, and the ops that talk on it."""

    def __init__(self, host: str, port: int) -> None:
        self.host = host
        self.port = port
        self.caps: dict[str, list[str]] = {}
        self.over_verb = "OVER"
        self.group: str | None = None
        self.authenticated = False

    # -- login -----------------------------------------------------------------

    def login(self, starttls: bool) -> Op[None]:
        """The greeting, CAPABILITIES, STARTTLS when asked for, MODE READER when needed."""
        greeting = yield READ
        if greeting.code == 400:
            raise TemporaryFailure("the news server is temporarily unavailable", reply=greeting.line)
        if greeting.code == 502:
            raise ConnectError("the news server refuses service to this client", reply=greeting.line)
        if greeting.code not in (200, 201):
            raise ProtocolError("unexpected greeting from the news server", reply=greeting.line)
        yield from self.capabilities()
        if starttls:
            if "STARTTLS" not in self.caps:
                raise ProtocolError("STARTTLS was requested but the news server does not offer it")
            reply = yield from self.exchange(nntp.simple_cmd("STARTTLS"))
            if reply.code != 382:
                raise nntp.error_for(reply, "STARTTLS")
            yield START_TLS
            yield from self.capabilities()  # RFC 4642: capabilities may change after TLS
        if "READER" not in self.caps and ("MODE-READER" in self.caps or not self.caps):
            reply = yield from self.command(nntp.simple_cmd("MODE", "READER"))
            if reply.code not in (200, 201, 500, 501):  # 5xx: an old server without the command
                raise nntp.error_for(reply, "MODE READER")

    def capabilities(self) -> Op[None]:
        """CAPABILITIES; RFC 977-era servers know only XOVER, RFC 3977 ones announce OVER."""
        reply = yield from self.exchange(nntp.simple_cmd("CAPABILITIES"), CAPABILITIES_CODES)
        self.caps = nntp.parse_capabilities((yield Block(1 << 20))) if reply.code == 101 else {}
        self.over_verb = "OVER" if "OVER" in self.caps else "XOVER"

    def authenticate(self, first: Reply) -> Op[None]:
        """AUTHINFO USER/PASS after the 480 *first*, with the login the driver finds."""
        login = yield AskLogin(self.host, self.port, first)
        if login is None:
            host, port = self.host, self.port
            raise AccessDenied(
                f"{host}:{port} requires authentication: pass Client(credentials="
                f"{{'{host}:{port}': (user, password)}}) or add 'machine {host}' to ~/.netrc",
                reply=first.line)
        user, password = login
        reply = yield from self.exchange(nntp.authinfo_cmd("USER", user))
        if reply.code == 381:
            reply = yield from self.exchange(nntp.authinfo_cmd("PASS", password))
        if reply.code != 281:
            raise AccessDenied(f"the news server rejected the login of {user!r}", reply=reply.line)
        self.authenticated = True

    # -- commands --------------------------------------------------------------

    @staticmethod
    def exchange(line: bytes, block: frozenset[int] = NO_BLOCK) -> Op[Reply]:
        """Send *line*, read its reply."""
        yield Send(line, block)
        reply: Reply = yield READ
        return reply

    def command(self, line: bytes, block: frozenset[int] = NO_BLOCK) -> Op[Reply]:
        """Send *line*; on 480 log in once and send it again."""
        reply = yield from self.exchange(line, block)
        if reply.code == 480 and not self.authenticated:
            yield from self.authenticate(reply)
            reply = yield from self.exchange(line, block)
        return reply

    def select(self, group: str) -> Op[GroupStatus]:
        """GROUP *group*."""
        reply = yield from self.command(nntp.group_cmd(group))
        if reply.code != 211:
            self.group = None
            raise nntp.error_for(reply, f"GROUP {group}")
        self.group = group
        return nntp.parse_group_reply(reply)

    def enter(self, group: str | None) -> Op[None]:
        """GROUP *group* unless it is selected already (None: any group will do)."""
        if group is not None and self.group != group:
            yield from self.select(group)

    # -- requests ----------------------------------------------------------------

    def article(self, group: str | None, ref: int | str) -> Op[Reply]:
        """ARTICLE *ref* (in *group*): the 220 reply; the article's block follows."""
        yield from self.enter(group)
        reply = yield from self.command(nntp.article_cmd(ref), ARTICLE_CODES)
        if reply.code != 220:
            raise nntp.error_for(reply, f"ARTICLE {ref}")
        return reply

    def stat(self, group: str | None, ref: int | str,
             max_head: int) -> Op[tuple[int | None, str | None, bytes, int | None]]:
        """STAT and HEAD of *ref*, and OVER for the size when the head has no Bytes: field:
        (number, message-id, head, size from the overview)."""
        yield from self.enter(group)
        reply = yield from self.command(nntp.article_cmd(ref, "STAT"))
        if reply.code != 223:
            raise nntp.error_for(reply, f"STAT {ref}")
        number, mid = nntp.parse_stat_reply(reply)
        reply = yield from self.command(nntp.article_cmd(ref, "HEAD"), ARTICLE_CODES)
        if reply.code != 221:
            raise nntp.error_for(reply, f"HEAD {ref}")
        head: bytes = yield Block(max_head)
        size = (yield from self.over_size(ref)) if self.needs_size(ref, head) else None
        return number, mid, head, size

    def needs_size(self, ref: int | str, head: bytes) -> bool:
        """No Bytes: header, and the overview can tell: by number, or by message-id where the
        server offers "OVER MSGID"."""
        by_id = isinstance(ref, str) and "MSGID" in self.caps.get("OVER", [])
        return b"\nbytes:" not in b"\n" + head.lower() and (isinstance(ref, int) or by_id)

    def over_size(self, ref: int | str) -> Op[int | None]:
        """The ``:bytes`` of *ref*'s overview line (one short command), or None."""
        line = nntp.over_cmd(ref, ref, self.over_verb) if isinstance(ref, int) else nntp.article_cmd(ref, "OVER")
        reply = yield from self.command(line, OVER_CODES)
        size = None
        if reply.code == 224:
            while (over := (yield LINE)) is not None:
                try:
                    size = nntp.parse_overview(over).size
                except ProtocolError:
                    pass
        return size

    def overview(self, group: str, limit: int) -> Op[tuple[GroupStatus, dict[int, bytes], int]]:
        """GROUP, then OVER (XOVER on older servers) of the newest *limit* articles:
        (status, overview line per number, lines ignored). Only lines numbered inside the
        range asked for are kept, the last one per number: at most *limit*, whatever the
        server sends."""
        status = yield from self.select(group)
        if status.count == 0 or status.high < status.low or status.high == 0:
            return status, {}, 0
        first = max(status.low, status.high - limit + 1)
        reply = yield from self.command(nntp.over_cmd(first, status.high, self.over_verb), OVER_CODES)
        if reply.code in (500, 501) and self.over_verb == "OVER":
            self.over_verb = "XOVER"
            reply = yield from self.command(nntp.over_cmd(first, status.high, "XOVER"), OVER_CODES)
        if reply.code in (420, 423):  # no articles in that range
            return status, {}, 0
        if reply.code != 224:
            raise nntp.error_for(reply, f"{self.over_verb} {first}-{status.high}")
        kept: dict[int, bytes] = {}
        ignored = 0
        while (line := (yield LINE)) is not None:
            number = nntp.overview_number(line)
            if number is None or not first <= number <= status.high:
                ignored += 1
                continue
            kept[number] = line
        return status, kept, ignored

    def groups(self, max_descriptions: int) -> Op[tuple[dict[str, str], bool]]:
        """LIST NEWSGROUPS (descriptions, kept up to *max_descriptions* bytes), then LIST
        ACTIVE: (descriptions, whether some were left out); the active list's block follows."""
        descriptions: dict[str, str] = {}
        cut = False
        reply = yield from self.command(nntp.simple_cmd("LIST", "NEWSGROUPS"), LIST_CODES)
        if reply.code == 215:
            budget = max_descriptions
            while (line := (yield LINE)) is not None:
                if budget <= 0:
                    continue  # drain the rest: the entries go without descriptions
                try:
                    name, text = nntp.parse_newsgroups(line)
                except ProtocolError:
                    continue
                descriptions[name] = text
                budget -= len(name) + len(text) + 64
                cut = cut or budget <= 0
        reply = yield from self.command(nntp.simple_cmd("LIST", "ACTIVE"), LIST_CODES)
        if reply.code != 215:
            raise nntp.error_for(reply, "LIST ACTIVE")
        return descriptions, cut


def play(session: Session, op: Op[T], replies: bytes,
         answer: Callable[[Event], Any] | None = None) -> tuple[bytes, T]:
    """Run *op* against the server's *replies* (bytes, as they would arrive); returns (every
    command byte the op wrote, its value). :class:`AskLogin` and :data:`START_TLS` go to
    *answer* (default: None). Replies left over, or an op still waiting when they run out,
    are errors (AssertionError)."""
    sent = bytearray()
    reader = ReplyReader()
    reader.feed(replies)
    reader.feed_eof()
    lines: list[bytes] = []  # the block's lines not yet handed out
    value: Any = None
    while True:
        try:
            event = op.send(value)
        except StopIteration as stop:
            assert not reader.buffered, f"replies left unread: {replies[-reader.buffered:]!r}"
            return bytes(sent), stop.value
        value = None
        if type(event) is Send:
            sent += event.line
            reader.expect(event.block)
        elif event is READ:
            assert reader.buffered, f"the op waits for a reply after sending {bytes(sent)!r}"
            value = reader.next_event()
            assert isinstance(value, Reply), value
        elif type(event) is Block:
            parts = []
            while not isinstance(ev := reader.next_event(), End):
                assert isinstance(ev, Data), ev
                parts.append(ev.data)
            value = b"".join(parts)
            if len(value) > event.limit:
                raise ProtocolError(f"data block larger than {event.limit} bytes")
        elif event is LINE:
            while not lines:
                ev = reader.next_event()
                if isinstance(ev, End):
                    break
                assert isinstance(ev, Data), ev
                lines = ev.data.splitlines()
            value = lines.pop(0) if lines else None
        else:
            value = answer(event) if answer is not None else None


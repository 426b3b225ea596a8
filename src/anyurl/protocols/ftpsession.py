"""An FTP control session as a state machine, with no I/O (never imports asyncio).

:class:`Session` holds what one control connection knows (login directory, the
directory it stands in, the TYPE in force, FEAT, whether EPSV and SIZE work,
whether it is still in step) and turns each request into its RFC 1738 section
3.2 conversation: login (USER, PASS; a 332 asks for ACCT, which is refused),
one CWD per segment, TYPE, then RETR, NLST or the best listing, with the 550
fallback from RETR to a listing, EPSV before PASV, and the error each reply
stands for.

Each conversation is a generator ("an op"). It yields events and is sent the
answers, in the manner of h11:

* :class:`Send` - write these commands (one write; several are pipelined).
  The answer is None.
* :data:`READ` - the answer is the next :class:`~anyurl.protocols.ftp.Reply`.
* data-connection events (:class:`DataPort`, :class:`DataListen`,
  :class:`DataEarly`, :data:`DATA_CHECK`, :class:`DataOpen`, :data:`DATA_CLOSE`,
  :class:`Receive`, :data:`SEND_DATA`) and :data:`START_TLS`,
  :class:`AskPassword`: work only the driver can do, each documented below.

A failure of the driver's I/O is thrown into the op at its ``yield`` (so the
op's own handlers run, as they would around an ``await``); the op's value is
its ``StopIteration`` value. The driver, :mod:`anyurl.handlers.ftp`, moves
the bytes; ``tests/unit/protocols/test_ftp_session.py`` plays whole conversations on
bytes with :func:`play`.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any, Final, TypeVar

from .._record import Record
from ..errors import (
    AccessDenied,
    AnyURLError,
    ConnectError,
    FetchTimeout,
    NotSupported,
    ProtocolError,
    ResourceNotFound,
    TransferError,
    TruncatedTransfer,
)
from .ftp import (
    LineSplitter,
    Plan,
    Reply,
    ReplyReader,
    absolute_cwd,
    error_for,
    format_command,
    parse_150_size,
    parse_epsv,
    parse_mdtm,
    parse_mlst,
    parse_pasv,
    parse_pwd,
    parse_size,
    retry_stor_name,
    upload_names,
)

if TYPE_CHECKING:
    from datetime import datetime
    from typing import Protocol

    from ..urls import FTPURL, URL
    from .ftplist import ListItem, ListParser

    class Options(Protocol):
        """The FTPOptions fields a session reads (anyurl.settings.FTPOptions)."""

        cwd_strategy: str
        passive: bool
        epsv: bool
        use_size: bool
        use_mlsd: bool
        pipeline: bool

__all__ = [
    "DATA_CHECK",
    "DATA_CLOSE",
    "READ",
    "SEND_DATA",
    "START_TLS",
    "TURN",
    "AskPassword",
    "Behind",
    "DataEarly",
    "DataListen",
    "DataOpen",
    "DataPort",
    "Listed",
    "Listing",
    "Op",
    "Receive",
    "Send",
    "Session",
    "Started",
    "StatFacts",
    "play",
    "show",
]

_set = object.__setattr__  # how a frozen Record's __init__ sets its fields
T = TypeVar("T")


# ---------------------------------------------------------------------------
# Events
# ---------------------------------------------------------------------------


class Send(Record):
    """Write these (verb, argument) commands in one write; answered with None."""

    __slots__ = ("commands",)
    commands: tuple[tuple[str, str | None], ...]

    def __init__(self, commands: tuple[tuple[str, str | None], ...]) -> None:
        _set(self, "commands", commands)

    def data(self) -> bytes:
        """The wire bytes (UnsafeURL for an argument holding CR, LF or NUL)."""
        return b"".join(format_command(v, a) for v, a in self.commands)


class _Marker:
    __slots__ = ("name", "__doc__")

    def __init__(self, name: str, doc: str) -> None:
        self.name = name
        self.__doc__ = doc

    def __repr__(self) -> str:
        return self.name


READ: Final = _Marker("READ", "Answered with the next complete Reply.")
START_TLS: Final = _Marker("START_TLS", "AUTH TLS was accepted: wrap the control connection in TLS.")
DATA_CHECK: Final = _Marker("DATA_CHECK", "Answered with the error of the connect DataEarly started, or None.")
DATA_CLOSE: Final = _Marker("DATA_CLOSE", "The transfer command was refused: close the data connection.")
TURN: Final = _Marker("TURN", "Queued commands were written behind another request's transfer: wait until "
                              "every reply before theirs is read (the connection is handed over), then go on.")
SEND_DATA: Final = _Marker("SEND_DATA", "STOR's 1xx came: connect, send the upload and close the data "
                                        "connection; answered with the OSError that cut it short, or None.")


class DataPort(Record):
    """Passive: connect to *port* on the control connection's peer (never an address from a
    reply), for *use*: "retr", "list" or "stor"."""

    __slots__ = ("port", "use")
    port: int
    use: str

    def __init__(self, port: int, use: str) -> None:
        _set(self, "port", port)
        _set(self, "use", use)


class DataListen(Record):
    """Active: listen for the data connection of *use* ("retr", "list", "stor"); answered
    with (IPv6?, local address, port)."""

    __slots__ = ("use",)
    use: str

    def __init__(self, use: str) -> None:
        _set(self, "use", use)


class DataEarly(Record):
    """Pipelined passive: start a non-blocking connect to *port*; answered with its OSError or None."""

    __slots__ = ("port",)
    port: int

    def __init__(self, port: int) -> None:
        _set(self, "port", port)


class DataOpen(Record):
    """RETR's 1xx came: open the data connection for reading (*announced*: the size, if known)."""

    __slots__ = ("announced",)
    announced: int | None

    def __init__(self, announced: int | None) -> None:
        _set(self, "announced", announced)


class Receive(Record):
    """A listing's 1xx came: read its data connection to the end into *listing*; answered with None."""

    __slots__ = ("listing",)
    listing: Listing

    def __init__(self, listing: Listing) -> None:
        _set(self, "listing", listing)


class AskPassword(Record):
    """The server wants a password the URL did not give; answered with one, or None."""

    __slots__ = ("user", "host")
    user: str
    host: str

    def __init__(self, user: str, host: str) -> None:
        _set(self, "user", user)
        _set(self, "host", host)


Event = Send | _Marker | DataPort | DataListen | DataEarly | DataOpen | Receive | AskPassword
Op = Generator[Event, Any, T]


# ---------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------


class Started(Record):
    """A RETR whose data connection is open: its 1xx ``reply``, ``total`` (the size SIZE
    or the 150 reply gave, None if neither) and ``skip``: the bytes to drop before the
    offset asked for, when the server has no REST and sends the file from its start."""

    __slots__ = ("reply", "total", "skip")
    reply: Reply
    total: int | None
    skip: int

    def __init__(self, reply: Reply, total: int | None, skip: int = 0) -> None:
        _set(self, "reply", reply)
        _set(self, "total", total)
        _set(self, "skip", skip)


class Listed(Record):
    """A listing: the ``items`` of ``directory`` (URL segments), where they came from
    (``source``: "ftp_listing" or "nlst") and ``notes`` for the log (lines in no known format)."""

    __slots__ = ("directory", "items", "source", "notes")
    directory: tuple[str, ...]
    items: list[ListItem]
    source: str
    notes: tuple[str, ...]

    def __init__(self, directory: tuple[str, ...], items: list[ListItem], source: str,
                 notes: tuple[str, ...] = ()) -> None:
        _set(self, "directory", directory)
        _set(self, "items", items)
        _set(self, "source", source)
        _set(self, "notes", notes)


class StatFacts(Record):
    """What stat learnt: ``kind``, and either the MLST ``item`` or ``size``/``modified``
    with the SIZE ``reply`` text."""

    __slots__ = ("kind", "item", "size", "modified", "reply")
    kind: str
    item: ListItem | None
    size: int | None
    modified: datetime | None
    reply: str | None

    def __init__(self, kind: str, item: ListItem | None = None, size: int | None = None,
                 modified: datetime | None = None, reply: str | None = None) -> None:
        _set(self, "kind", kind)
        _set(self, "item", item)
        _set(self, "size", size)
        _set(self, "modified", modified)
        _set(self, "reply", reply)


class Listing:
    """A listing being received: the items kept, the line count and the first line (NLST of
    a file name answers with just that name). Memory grows with the entries kept (at most
    *max_entries*), not with what the server sends: beyond that, ProtocolError."""

    __slots__ = ("items", "lines", "first", "parser", "_splitter", "_max_entries")

    def __init__(self, parser: ListParser, max_line: int = 64 * 1024, max_entries: int = 1_000_000) -> None:
        self.items: list[ListItem] = []
        self.lines = 0
        self.first: str | None = None
        self.parser = parser  # what it read: entries, lines in no known format (logged)
        self._splitter = LineSplitter(max_line)
        self._max_entries = max_entries

    def feed(self, data: bytes) -> None:
        """Bytes from the data connection."""
        self._take(self._splitter.feed(data))

    def flush(self) -> None:
        """The data connection closed: the last line, even without its line end."""
        self._take(self._splitter.flush())
        self._keep(self.parser.flush())

    def _take(self, lines: list[str]) -> None:
        most = self._max_entries
        for line in lines:
            self.lines += 1
            if self.first is None:
                self.first = line
            elif self.lines > 2 * most + 16:  # endless lines we cannot parse
                raise ProtocolError(f"listing has more than {2 * most + 16} lines "
                                    f"and at most {most} entries are allowed")
            self._keep(self.parser.feed(line))

    def _keep(self, items: list[ListItem | None]) -> None:
        for item in items:
            if item is not None:
                if len(self.items) >= self._max_entries:
                    raise ProtocolError(f"listing has more than {self._max_entries} entries")
                self.items.append(item)


def _unread(parser: ListParser) -> tuple[str, ...]:
    """The log note of a listing with lines in no known format (each kept as an "info" entry)."""
    if not parser.unread:
        return ()
    return (f"{parser.unread} {parser.command} line(s) in no known format, listed as kind 'info' entries "
            f"(first {parser.samples[0]!r})",)


def show(verb: str, arg: str | None) -> str:
    """A command as logged and quoted in errors (the password masked)."""
    if verb == "PASS":
        return "PASS <password>"
    return verb if arg is None else f"{verb} {arg}"


class Behind(Exception):  # noqa: N818 - not an error the caller sees
    """A request whose RETR did not start needs more commands on its connection, but another
    request's commands are queued behind it (:attr:`Session.behind`): the connection goes on
    to that request, and this one is made again on another connection. Raised with the
    connection in step (every reply to this request read); never reaches a caller."""


def queues_commands(greeting: Reply) -> bool:
    """True for a server known to read the next command only once a transfer is over, so that
    commands sent during a transfer wait for its 226 and are then answered in order: vsftpd
    (greeting "(vsFTPd x.y.z)", unless its ftpd_banner hides it). Others act at once on a
    command that arrives mid-transfer: pyftpdlib's EPSV closes the transfer's data connection
    and its 226 never comes, ProFTPD answers nothing more, aioftp.Server runs commands
    concurrently; a server not known is treated that way."""
    return "(vsFTPd " in greeting.first


def _through_link(item: ListItem) -> bool:
    """True when an MLST entry may describe a symlink rather than what it leads to: a
    symlink type, or (ProFTPD) type=file with a link's mode, 0777."""
    if item.kind == "symlink":
        return True
    return item.kind == "file" and dict(item.facts).get("unix.mode", "").lstrip("0") == "777"


# ---------------------------------------------------------------------------
# The session
# ---------------------------------------------------------------------------

_UNSUPPORTED = (500, 501, 502, 504)  # the command is unknown or not implemented

#: a RETR is queued behind another only when that one is known or expected (the last transfer on
#: its connection) to be at most this many bytes: the queued request waits for it to end
FOLLOW_MAX: Final = 1 << 20


class Session:
    """The state of one control connection and the conversations that change it.

    *url*: the URL being served (errors name it); the driver sets it per request.
    """

    def __init__(self, url: URL | None = None, max_line: int = 64 * 1024, max_lines: int = 10_000) -> None:
        self.url = url
        self.replies = ReplyReader(max_line, max_lines)
        self.login_dir: str | None = None  # None: not logged in, or PWD unreadable (then no reuse)
        self.cwd_path: tuple[str, ...] | None = ()  # CWDs applied since login; None: unknown
        self.type: str | None = None  # the TYPE in force
        self.features: set[str] | None = None
        self.tls_data = False  # PROT P: data connections are TLS
        self.size_in_150 = False  # the server's 150 replies carry "(N bytes)": SIZE is redundant
        self.size_ok = True
        self.rest_ok = True  # False once REST was refused as not implemented (Twisted: 502)
        self.epsv_ok = True
        # a 229 to an EPSV of its own came on this connection: EPSV may be pipelined with RETR (not
        # before: aioftp.Server answers a RETR sent along with the connection's first EPSV first)
        self.epsv_seen = False
        self.jump_refused: tuple[str, ...] | None = None  # reset's one CWD for these failed just now
        # a reply came that cannot answer the command it stood for: the server does not answer
        # pipelined commands in order (it runs them at once): the driver stops pipelining to it
        self.out_of_step = False
        self.broken = False  # out of step (or lost): never reused
        # the greeting says the server reads commands only between transfers (queues_commands)
        self.queues = False
        # the RETR of the request in progress is written and only replies remain to be read:
        # another request's [SIZE,] EPSV, RETR may be written behind it (:meth:`can_follow`)
        self.awaiting_end = False
        # another request's commands were written behind the request in progress: this one
        # sends nothing more (:class:`Behind`), and its end must be a 226 or 250
        self.behind = False
        # the size of the RETR in progress once known (SIZE, 150), else of the last one that ended
        # on this connection: a request queues behind a transfer expected to be small only
        self.expected: int | None = None
        # the error of a refusing reply that completed its command: after it the connection
        # is still in step and may be reused (a 550 on RETR, CWD...)
        self.refused: AnyURLError | None = None
        self.listing_limits = (max_line, 1_000_000)  # (max_line, max_entries): the driver sets them per request

    # -- replies and errors ----------------------------------------------------

    def receive_line(self, line: bytes) -> Reply | None:
        """One control line as read; the Reply it completes, if any."""
        return self.replies.feed(line)

    def refuse(self, reply: Reply, what: str, url: URL | None = None) -> AnyURLError:
        """The error for *reply*, which ended its command's reply sequence: the connection
        stays in step and is kept after a permanent refusal (5xx: a missing file...). A
        transient one (4xx: closing, busy) or a lost login (530) drops it, so that a
        retry starts on a fresh session."""
        err = error_for(reply, what, url or self.url)
        if reply.kind == 5 and reply.code not in (530, 532):
            self.refused = err
        return err

    def ended(self, reply: Reply, what: str, url: URL | None = None) -> AnyURLError:
        """The error for *reply*, the last of a transfer's sequence, sent once the data
        connection closed (426, 451, 452, 552 after STOR: a full disk, a quota): the
        transfer failed, not the session, so the connection is kept, after a 4xx too,
        unless the server is closing it (421) or the login is gone (530, 532)."""
        err = error_for(reply, what, url or self.url)
        if reply.kind in (4, 5) and reply.code not in (421, 530, 532):
            self.refused = err
        return err

    def in_step_after(self, exc: BaseException) -> bool:
        """True when *exc* came from a refusal that left the connection in step."""
        return exc is self.refused and not self.broken

    # -- small steps -------------------------------------------------------------

    def cmd(self, verb: str, arg: str | None = None) -> Op[Reply]:
        """One command and its reply."""
        yield Send(((verb, arg),))
        reply: Reply = yield READ
        return reply

    def expect(self, verb: str, arg: str | None = None, ok: tuple[int, ...] = (2,)) -> Op[Reply]:
        """A command; its error from the tree unless the reply's first digit is in *ok*."""
        reply = yield from self.cmd(verb, arg)
        if reply.kind not in ok:
            raise self.refuse(reply, show(verb, arg))
        return reply

    def change_dirs(self, cwds: tuple[str, ...]) -> Op[None]:
        """The URL's CWD sequence, from the login directory, or from where the
        connection stands when that is part of the way (skipped when already there)."""
        here = self.cwd_path
        if here == cwds:
            return
        start = len(here) if here is not None and cwds[:len(here)] == here else 0
        self.cwd_path = None
        for cwd in cwds[start:]:
            yield from self.expect("CWD", cwd)
        self.cwd_path = cwds

    def set_type(self, type_: str) -> Op[None]:
        """TYPE, unless already in force on this connection."""
        if self.type != type_:
            self.type = None
            yield from self.expect("TYPE", type_)
            self.type = type_

    def features_list(self) -> Op[set[str]]:
        """FEAT's keywords (asked once per connection; empty when refused)."""
        if self.features is None:
            reply = yield from self.cmd("FEAT")
            feats: set[str] = set()
            if reply.code == 211:
                for line in reply.lines[1:-1] if len(reply.lines) > 2 else ():
                    word = line.strip().split(" ", 1)[0].upper()
                    if word:
                        feats.add(word)
            self.features = feats
        return self.features

    # -- login and reuse ---------------------------------------------------------

    def login(self, plan: Plan, host: str, port: int, mode: str, *, pipeline: bool = False) -> Op[None]:
        """Greeting (120: wait for the next), [AUTH TLS], USER/PASS, [PBSZ 0, PROT P], PWD.
        *mode*: "plain", "explicit" (AUTH TLS) or "implicit" (TLS from the start). With
        *pipeline* and the password known, everything after the greeting (and TLS) goes in
        one write (:meth:`pipelined_login`)."""
        url = self.url
        greeting: Reply = yield READ
        while greeting.kind == 1:  # 120: ready in a moment
            greeting = yield READ
        if greeting.kind != 2:
            raise error_for(greeting, f"connecting to {host}:{port}", url)
        self.queues = queues_commands(greeting)
        if mode == "explicit":
            yield from self.expect("AUTH", "TLS")
            yield START_TLS
        if pipeline and plan.password is not None:
            return (yield from self.pipelined_login(plan, host, mode))
        yield from self.authenticate(plan, host)
        if mode != "plain":
            yield from self.expect("PBSZ", "0")
            yield from self.expect("PROT", "P")
        self.tls_data = mode != "plain"
        pwd = yield from self.cmd("PWD")
        self.login_dir = parse_pwd(pwd)

    def pipelined_login(self, plan: Plan, host: str, mode: str) -> Op[None]:
        """USER, PASS, [PBSZ 0, PROT P,] PWD in one write, the replies read in order: one
        round trip where there were three (five with TLS). A server that logs the user in
        at USER (230: aioftp's and Pure-FTPd's anonymous login) answers the PASS it did not
        need ("503 already logged in", or 230): read and let go. A server that answered PWD
        before that PASS is seen by the 257 (its place is used); a PWD reply that cannot
        be read leaves the login directory unknown, so the connection is not reused."""
        url = self.url
        after: tuple[tuple[str, str | None], ...] = (("PBSZ", "0"), ("PROT", "P")) if mode != "plain" else ()
        yield Send((("USER", plan.user), ("PASS", plan.password), *after, ("PWD", None)))
        reply: Reply = yield READ
        spare: Reply | None = None
        if reply.code == 230:
            spare = yield READ
            if spare.code == 421:
                raise error_for(spare, "PASS", url)
        else:
            self._check_user(reply, plan, host)
            reply = yield READ
            self._check_pass(reply, plan, host)
        for verb, arg in after:
            reply = yield READ
            if reply.kind != 2:
                raise self.refuse(reply, show(verb, arg))
        self.tls_data = mode != "plain"
        pwd: Reply = yield READ
        if pwd.code != 257 and spare is not None and spare.code == 257 and not after:
            pwd = spare  # answered out of turn: PWD's reply came where the spare PASS's was due
        self.login_dir = parse_pwd(pwd)

    def _check_user(self, reply: Reply, plan: Plan, host: str) -> None:
        """The error for USER's reply unless it asks for a password (3xx) or logged in (2xx)."""
        if reply.code in (530, 332) or reply.kind not in (2, 3):
            if reply.kind == 4:
                raise error_for(reply, "USER", self.url)
            raise AccessDenied(f"login refused for user {plan.user!r} at {host}", url=self.url, reply=reply.text)

    def _check_pass(self, reply: Reply, plan: Plan, host: str) -> None:
        """The error for PASS's reply unless it logged in."""
        if reply.kind == 2:
            return
        who = f"user {plan.user!r} at {host}"
        if reply.kind == 4:
            raise error_for(reply, "PASS", self.url)
        if reply.code == 332:
            raise AccessDenied(f"the server wants an account (ACCT) for {who}; not supported",
                               url=self.url, reply=reply.text)
        raise AccessDenied(f"login refused for {who}", url=self.url, reply=reply.text)

    def authenticate(self, plan: Plan, host: str) -> Op[None]:
        """USER, then PASS when asked (331); 230 after USER needs none (Pure-FTPd's anonymous)."""
        url = self.url
        who = f"user {plan.user!r} at {host}"
        reply = yield from self.cmd("USER", plan.user)
        if reply.code == 230:
            return
        self._check_user(reply, plan, host)
        password = plan.password
        if password is None:
            password = yield AskPassword(plan.user, host)
            if password is None:
                raise AccessDenied(f"the server asks a password for {who}; none in the URL, "
                                   "from the password callback or in ~/.netrc", url=url,
                                   reply=reply.text)
            if any(c in password for c in "\r\n\0"):
                raise AccessDenied(f"the password given for {who} contains control characters", url=url)
        reply = yield from self.cmd("PASS", password)
        self._check_pass(reply, plan, host)

    def reset(self, target: tuple[str, ...], joinable: bool = True) -> Op[bool]:
        """Prepare for reuse by a URL whose CWDs are *target*: back to the login
        directory (section 3.2.5), unless the connection already stands where
        *target* leads (as curl does) or on the way there (the rest of the CWDs
        follow). With *joinable* (cwd_strategy "auto"), on a server with Unix paths, one
        CWD to the absolute path stands for "back to the login directory, then each
        segment"; where that fails, the sequence itself runs (and fails where the RFC's
        would). False when the connection cannot be brought back reliably."""
        if self.broken or self.login_dir is None:
            return False
        self.jump_refused = None
        here = self.cwd_path
        if here == target or here == ():
            return True
        try:
            if here is not None and target[:len(here)] == here:
                return True  # deeper down the same path: change_dirs sends the rest
            jump = absolute_cwd(self.login_dir, target) if joinable else None
            if jump is not None:
                self.cwd_path = None
                if (yield from self.cmd("CWD", jump)).code == 250:
                    self.cwd_path = target
                    return True
                self.jump_refused = target  # (prepare_retr does not ask it again)
            reply = yield from self.cmd("CWD", self.login_dir)
        except AnyURLError:
            return False
        if reply.code != 250:
            return False
        self.cwd_path = ()
        return True

    # -- data connections ----------------------------------------------------------

    def passive(self, epsv: bool) -> Op[int]:
        """EPSV (while the server takes it), else PASV: the data port. A 4xx other than
        425 is the server's trouble, not EPSV's: raised. Any other refusal of EPSV
        means PASV from now on."""
        if epsv and self.epsv_ok:
            reply = yield from self.cmd("EPSV")
            if reply.code == 229:
                port = parse_epsv(reply)
                self.epsv_seen = True
                return port
            if reply.kind == 4 and reply.code != 425:
                raise self.refuse(reply, "EPSV")
            self.epsv_ok = False  # e.g. 500/502: not supported, use PASV from now on
        reply = yield from self.expect("PASV")
        return parse_pasv(reply)  # the address is ignored on purpose

    def active(self, ipv6: bool, local: str, port: int) -> Op[None]:
        """EPRT, else (IPv4 only) PORT, for a listener at *local*:*port*."""
        reply = yield from self.cmd("EPRT", f"|{2 if ipv6 else 1}|{local}|{port}|")
        if reply.kind != 2:
            if ipv6:
                raise error_for(reply, "EPRT", self.url)
            h = local.replace(".", ",")
            yield from self.expect("PORT", f"{h},{port >> 8},{port & 255}")

    def open_data(self, opts: Options, use: str) -> Op[None]:
        """Set up the data connection for *use* before the transfer command."""
        if opts.passive:
            port = yield from self.passive(opts.epsv)
            yield DataPort(port, use)
        else:
            ipv6, local, port = yield DataListen(use)
            yield from self.active(ipv6, local, port)

    # -- retrieval -------------------------------------------------------------------

    def open(self, plan: Plan, url: FTPURL, opts: Options, *, offset: int = 0, length: int | None = None,
             limit: int | None = None) -> Op[Started | Listed]:
        """Everything after login for *plan*: the CWDs, then RETR (Started, or Listed by the
        550 fallback), NLST or the best listing (Listed)."""
        if plan.action == "RETR" and opts.pipeline:
            yield from self.prepare_retr(plan, url)
        else:
            yield from self.change_dirs(plan.cwds)
        if plan.action == "NLST":
            return (yield from self.nlst(plan, url, opts))
        if plan.action == "LIST":
            return (yield from self.listing(url, plan.argument or None, url.cwd, opts))
        return (yield from self.retrieve(plan, url, opts, offset=offset, length=length, limit=limit))

    def prepare_retr(self, plan: Plan, url: FTPURL) -> Op[None]:
        """The CWD and TYPE a RETR needs on this connection, in one write (one round trip
        where there were two or more); :meth:`retrieve` then sends [SIZE,] EPSV and RETR in
        one more. Several CWDs go as one CWD to the absolute path where :func:`absolute_cwd`
        allows, never as a pipelined chain (a server running commands at once, as
        aioftp.Server does, could take the second before the first moved it); where that CWD
        fails, the RFC's sequence runs. Each reply must fit its command (250 to CWD, 200 to
        TYPE, or a refusal); one that does not means the server answers out of step:
        ProtocolError, the connection is dropped and :attr:`out_of_step` tells the driver to
        stop pipelining to this server."""
        cwds = plan.cwds
        here = self.cwd_path
        cwd: str | None = None
        jump = False  # cwd is the absolute path standing for the rest of the sequence
        if here != cwds:
            start = len(here) if here is not None and cwds[:len(here)] == here else 0
            rest = cwds[start:]
            if len(rest) > 1 and plan.joinable and self.login_dir and self.jump_refused != cwds:
                cwd = absolute_cwd(self.login_dir, cwds)
                jump = cwd is not None
            elif len(rest) == 1:
                cwd = rest[0]
        if cwd is None or self.type == plan.type:  # nothing to pipeline
            if jump:
                assert cwd is not None
                self.cwd_path = None
                if (yield from self.cmd("CWD", cwd)).code == 250:
                    self.cwd_path = cwds
                else:
                    self.cwd_path = here  # it failed and left us here: the RFC's sequence
            yield from self.change_dirs(cwds)
            yield from self.set_type(plan.type)
            return
        yield Send((("CWD", cwd), ("TYPE", plan.type)))
        self.cwd_path = self.type = None
        replies: list[Reply] = []
        try:
            for verb, arg, due in (("CWD", cwd, 250), ("TYPE", plan.type, 200)):
                reply: Reply = yield READ
                if reply.code == 421:  # closing: nothing more will be answered
                    raise error_for(reply, show(verb, arg), url)
                if reply.code != due and reply.kind not in (4, 5):
                    self.out_of_step = True
                    raise ProtocolError(f"reply out of step: {reply.text!r} where the answer to "
                                        f"{show(verb, arg)} was due (pipelined)", url=url, reply=reply.text)
                replies.append(reply)
        except BaseException:
            self.broken = True
            raise
        cwd_reply, type_reply = replies
        if cwd_reply.code == 250:
            self.cwd_path = cwds
        elif not jump:
            raise self.refuse(cwd_reply, show("CWD", cwd), url)
        else:
            self.cwd_path = here  # the one CWD failed and left us here: the RFC's sequence
        if type_reply.code != 200:
            raise self.refuse(type_reply, show("TYPE", plan.type), url)
        self.type = plan.type
        yield from self.change_dirs(cwds)

    def _size(self, name: str) -> Op[int | None]:
        reply = yield from self.cmd("SIZE", name)
        if reply.code in (500, 502):
            self.size_ok = False
        return parse_size(reply)

    def retrieve(self, plan: Plan, url: FTPURL, opts: Options, *, offset: int = 0, length: int | None = None,
                 limit: int | None = None) -> Op[Started | Listed]:
        """TYPE, [SIZE], the data connection, [REST], RETR; on a 550 without a typecode,
        the listing fallback. With *limit*, a file SIZE says is larger fails before RETR."""
        yield from self.set_type(plan.type)
        total: int | None = None
        want_size = (plan.type == "I" and opts.use_size and self.size_ok
                     and not (self.size_in_150 and not offset and limit is None))
        if want_size and limit is not None:
            # the caller's limit is checked before RETR: SIZE on its own, never pipelined with RETR
            want_size = False
            total = yield from self._size(plan.argument)
            if total is not None:
                self.check_limit(url, total, offset, length, limit)
        reply: Reply | None = None
        skip = 0
        # (the connection's first EPSV waits for its 229 before RETR, except on a server that queues
        # commands: aioftp.Server answers a RETR sent along with it first; vsftpd takes them in turn)
        if (opts.pipeline and opts.passive and opts.epsv and (self.epsv_seen or self.queues) and self.epsv_ok
                and not self.tls_data
                and not offset):
            total, reply = yield from self.pipelined_retr(plan, url, want_size)
            want_size = False  # asked already
        if reply is None:
            if want_size:
                total = yield from self._size(plan.argument)
            yield from self.open_data(opts, "retr")
            if offset:
                skip = yield from self.restart(offset)
            yield Send((("RETR", plan.argument),))
            self.awaiting_end = True  # (only replies are due now: a request may queue behind)
            reply = yield READ
        return (yield from self._started(plan, url, opts, reply, total, skip))

    def _started(self, plan: Plan, url: FTPURL, opts: Options, reply: Reply, total: int | None,
                 skip: int = 0) -> Op[Started | Listed]:
        """RETR's reply: its data connection opened (Started), or the 550 fallback, or its error."""
        if reply.kind != 1:
            self.awaiting_end = False  # (a follower checks this: nothing may be queued behind what comes now)
            if reply.code == 550 and plan.fallback:
                yield DATA_CLOSE
                if self.behind:  # CWD + listing would be answered after the queued request's replies
                    raise Behind
                return (yield from self.fallback_listing(plan, url, opts, reply))
            raise self.refuse(reply, f"RETR {plan.argument}", url)
        size150 = parse_150_size(reply)
        self.expected = total if total is not None else size150
        yield DataOpen(total if total is not None else size150)
        if size150 is not None and plan.type == "I":
            self.size_in_150 = True
        return Started(reply, total if total is not None else size150, skip)

    def handed_over(self) -> None:
        """The request in progress read its last reply; the one queued behind it (:meth:`follow`)
        has the connection now, with every command written: another may queue behind it."""
        self.behind = False
        self.awaiting_end = True

    def open_to_follow(self) -> bool:
        """True when a RETR may be queued behind the one in progress (:meth:`can_follow` without
        its request): the server queues commands, only replies are due, nothing queued yet,
        and the transfer is known or expected (the last one here) to be at most
        :data:`FOLLOW_MAX` bytes, so that a request queued behind it does not wait long."""
        expected = self.expected
        return (self.queues and self.awaiting_end and not self.behind and not self.broken
                and expected is not None and expected <= FOLLOW_MAX)

    def can_follow(self, plan: Plan, opts: Options, offset: int = 0, limit: int | None = None) -> bool:
        """True when *plan*'s [SIZE,] EPSV, RETR may be written now, behind the RETR in progress,
        to be answered after its 226 (:meth:`follow`): the server queues commands during a
        transfer (:attr:`queues`), only replies remain for the request in progress, nothing is
        queued behind it yet, and the new request needs no CWD, TYPE, REST or lone SIZE."""
        return (self.open_to_follow() and plan.action == "RETR" and opts.pipeline and opts.passive and opts.epsv
                and self.epsv_ok and self.epsv_seen and not self.tls_data and not offset
                and limit is None and self.cwd_path == plan.cwds and self.type == plan.type)

    def follow(self, plan: Plan, url: FTPURL, opts: Options) -> Op[Started | Listed]:
        """RETR of *plan* queued behind the transfer in progress (:meth:`can_follow` said so):
        [SIZE,] EPSV and RETR are written at once; the server reads them once that transfer is
        over, so its 226 and this request's 229 come one after the other and the round trip
        between them is saved. :data:`TURN` waits for the request in progress to read its
        replies (the driver hands the connection over); then as :meth:`retrieve`."""
        want_size = plan.type == "I" and opts.use_size and self.size_ok and not self.size_in_150
        yield self._retr_batch(plan, want_size)
        self.behind = True
        yield TURN  # (the driver calls handed_over() as it gives the connection to this request)
        total, reply = yield from self._retr_replies(plan, url, want_size)
        if reply is None:  # EPSV refused this time: the rest goes one command at a time
            if self.behind:
                raise Behind
            yield from self.open_data(opts, "retr")
            reply = yield from self.cmd("RETR", plan.argument)
        return (yield from self._started(plan, url, opts, reply, total))

    def restart(self, offset: int) -> Op[int]:
        """REST *offset*: 0, or *offset* when the server has no REST (500, 502, 504): the
        file then comes from its start and the client drops the first bytes, as it does
        when an HTTP server ignores Range."""
        if self.rest_ok:
            reply = yield from self.cmd("REST", str(offset))
            if reply.kind == 3:
                return 0
            if reply.code not in (500, 502, 504):
                raise self.refuse(reply, f"REST {offset}")
            self.rest_ok = False
        return offset

    def check_limit(self, url: FTPURL, total: int, offset: int, length: int | None, limit: int) -> None:
        """The caller's TransferError for a file SIZE says is over its limit, before any RETR
        (the connection stays in step and is kept)."""
        size = max(total - offset, 0) if length is None else min(max(total - offset, 0), length)
        if size <= limit:
            return
        part = f" ({size} of them from byte {offset})" if offset or length is not None else ""
        self.refused = err = TransferError(
            f"resource is {total} bytes{part}, larger than the limit of {limit} bytes "
            "(SIZE said so; not retrieved)", url=url)
        raise err

    def pipelined_retr(self, plan: Plan, url: FTPURL, want_size: bool) -> Op[tuple[int | None, Reply | None]]:
        """[SIZE,] EPSV and RETR in one write, on a connection where EPSV worked before:
        one round trip less per file. Servers accept the data connection when the transfer
        command arrives, so it may come before we connect. A server that answers out of
        turn, or starts the RETR after refusing EPSV, sets :attr:`out_of_step`. Returns (size,
        RETR's reply); the reply is None when EPSV failed this time (every reply read,
        nothing started): the caller goes on without pipelining."""
        yield self._retr_batch(plan, want_size)
        self.awaiting_end = True
        total, reply = yield from self._retr_replies(plan, url, want_size)
        if reply is None:
            self.awaiting_end = False
            if self.behind:  # PASV and RETR would be answered after the queued request's replies
                raise Behind
        return total, reply

    @staticmethod
    def _retr_batch(plan: Plan, want_size: bool) -> Send:
        arg = plan.argument
        size_cmd: tuple[tuple[str, str | None], ...] = (("SIZE", arg),) if want_size else ()
        return Send((*size_cmd, ("EPSV", None), ("RETR", arg)))

    def _retr_replies(self, plan: Plan, url: FTPURL, want_size: bool) -> Op[tuple[int | None, Reply | None]]:
        """The replies to :meth:`_retr_batch` (see :meth:`pipelined_retr`)."""
        arg = plan.argument
        total: int | None = None
        in_step = False  # True once every reply to what was sent has been read
        try:
            if want_size:
                reply: Reply = yield READ
                if reply.code == 421:  # closing: the rest will not be answered
                    raise error_for(reply, f"SIZE {arg}", url)
                total = parse_size(reply)
                if reply.code in (500, 502):
                    self.size_ok = False
            epsv: Reply = yield READ
            if epsv.code == 421:
                raise error_for(epsv, "EPSV", url)
            if epsv.code != 229 and epsv.kind not in (4, 5):
                # a 1xx, or a 2xx/3xx other than 229, cannot answer EPSV: the server answered the
                # pipelined commands out of turn, and every later reply would be read one place off
                self.out_of_step = True
                raise ProtocolError(f"reply out of turn: {epsv.text!r} where the answer to EPSV was due",
                                    url=url, reply=epsv.text)
            if epsv.code != 229:
                retr: Reply = yield READ  # the server's answer to a RETR without a data port
                if retr.kind == 1:  # a transfer to RFC 959's default data port, say: not pipelined again
                    self.out_of_step = True
                    raise ProtocolError(f"the server started RETR after refusing EPSV ({epsv.text})", url=url)
                if retr.kind not in (4, 5):  # (a 229: RETR was answered before EPSV)
                    self.out_of_step = True
                    raise ProtocolError(f"reply out of turn: {retr.text!r} where the answer to RETR was due",
                                        url=url, reply=retr.text)
                in_step = True
                self.epsv_seen = False
                if epsv.kind == 4 and epsv.code != 425:
                    raise error_for(epsv, "EPSV", url)
                self.epsv_ok = epsv.kind == 4  # e.g. 500/502: use PASV from now on
                return total, None
            port = parse_epsv(epsv)
            self.epsv_seen = True
            connect_error: OSError | None = yield DataEarly(port)
            retr = yield READ
            in_step = retr.kind != 1
            if not in_step and connect_error is None:
                connect_error = yield DATA_CHECK
            if connect_error is not None and not in_step:
                # the server waits for a data connection that failed
                raise ConnectError(f"cannot open the data connection to port {port}: {connect_error}",
                                   url=url) from connect_error
            in_step = True
        except BaseException:
            if not in_step:
                self.broken = True
            raise
        return total, retr

    def end_of_retr(self, url: FTPURL, received: int, expected: int | None) -> Op[None]:
        """The reply that ends a RETR whose data connection closed after *received* bytes
        (*expected*: the announced size)."""
        try:
            final: Reply = yield READ
        except (ConnectError, FetchTimeout) as exc:
            raise TruncatedTransfer(f"no end-of-transfer reply after {received} bytes "
                                    f"(226 missing): {exc.message}", url=url) from exc
        if self.behind and final.code not in (226, 250) and final.kind not in (4, 5):
            # not the end of this transfer: the server answered the commands queued behind it
            # while the transfer ran (it does not queue them after all)
            # (TruncatedTransfer: its end never came, so it is not known complete; Retry may retry it)
            self.out_of_step = self.broken = True
            raise TruncatedTransfer(f"no end-of-transfer reply after {received} bytes: {final.text!r} came "
                                    f"instead (the server answered commands queued behind the transfer, "
                                    f"out of step)", url=url, reply=final.text)
        if final.kind != 2:
            if final.code in (426, 451, 551, 552) or final.kind == 4:
                raise TruncatedTransfer(f"transfer aborted after {received} bytes: {final.text}",
                                        url=url, reply=final.text)
            raise error_for(final, "RETR", url)
        if expected is not None and received < expected:
            raise TruncatedTransfer(f"data connection closed after {received} of {expected} bytes",
                                    url=url, reply=final.text)
        self.expected = received  # what the next transfer here is expected to be like

    def abort(self) -> Op[bool]:
        """Stop a transfer we no longer want (RFC 959 ABOR), its data connection already
        closed; True when the control connection is known to be back in step.

        Servers that only read commands between transfers (vsftpd without
        async_abor_enable) fail their write on the closed data connection and answer
        426, and the ABOR reply (225/226) follows. Which replies come depends on
        whether the transfer had already ended, so a NOOP is sent along: its 200 marks
        the end. With another request's commands queued behind the transfer, their replies
        would come first: nothing is sent, and the connection is not reused."""
        if self.behind:
            self.broken = True
            return False
        yield Send((("ABOR", None),))
        yield Send((("NOOP", None),))
        # 426 + 226, or 226 (transfer) + 225/226 (ABOR), then NOOP's 200. ABOR's own reply
        # always comes first, so a 200 in first place (a server answering ABOR with 200) is not NOOP's.
        for i in range(5):
            reply: Reply = yield READ
            if reply.code == 200 and i > 0:
                return True
            if reply.kind not in (2, 4):
                return False
        return False

    # -- listings ----------------------------------------------------------------------

    def read_listing(self, url: FTPURL, verb: str, arg: str | None, opts: Options,
                     listing: Listing) -> Op[Reply]:
        """One listing command, *listing* filled as the data arrives; the command's reply
        (a failed one is returned, not raised)."""
        yield from self.open_data(opts, "list")
        reply = yield from self.cmd(verb, arg)
        if reply.kind != 1:
            yield DATA_CLOSE
            return reply
        yield Receive(listing)
        try:
            final: Reply = yield READ
        except (ConnectError, FetchTimeout) as exc:
            raise TruncatedTransfer(f"listing ended without its 226 reply: {exc.message}", url=url) from exc
        if final.kind != 2:
            raise TruncatedTransfer(f"listing aborted: {final.text}", url=url, reply=final.text)
        return reply

    def listing(self, url: FTPURL, arg: str | None, directory: tuple[str, ...], opts: Options,
                not_found: Reply | None = None) -> Op[Listed]:
        """The best listing the server offers: MLSD (if FEAT has it), else LIST, else NLST."""
        from .ftplist import ListParser  # listings only: not imported at start-up

        bounds = self.listing_limits
        items: list[ListItem] | None = None
        reply: Reply | None = None
        notes: tuple[str, ...] = ()
        feats = (yield from self.features_list()) if opts.use_mlsd else set()
        if feats & {"MLST", "MLSD"}:  # RFC 3659 advertises MLST; MLSD comes with it
            # no TYPE A: MLSD's format does not depend on TYPE (RFC 3659's examples list under
            # BINARY), so a connection that moves files keeps its TYPE I
            listing = Listing(ListParser("MLSD"), *bounds)
            reply = yield from self.read_listing(url, "MLSD", arg, opts, listing)
            if reply.kind == 1:
                items, notes = listing.items, _unread(listing.parser)
        if items is None and (reply is None or reply.code in _UNSUPPORTED):
            yield from self.set_type("A")  # LIST and NLST are ASCII (RFC 959)
            listing = Listing(ListParser("LIST"), *bounds)
            reply = yield from self.read_listing(url, "LIST", arg, opts, listing)
            if reply.kind == 1:
                items, notes = listing.items, _unread(listing.parser)
                parsed = listing.parser
                if parsed.unread and not parsed.entries:
                    # no line in a format we read: NLST at least names every entry
                    names = Listing(ListParser("NLST"), *bounds)
                    nlst_reply = yield from self.read_listing(url, "NLST", arg, opts, names)
                    if nlst_reply.kind == 1 and names.items:
                        return Listed(directory, names.items, "nlst", (
                            f"no line of the LIST reply in a known format ({parsed.unread} lines, first "
                            f"{parsed.samples[0]!r}): names from NLST instead",))
        if items is None and reply is not None and reply.code in _UNSUPPORTED:
            listing = Listing(ListParser("NLST"), *bounds)
            reply = yield from self.read_listing(url, "NLST", arg, opts, listing)
            if reply.kind == 1:
                items = listing.items
        if items is None:
            assert reply is not None
            raise self.refuse(not_found or reply, "listing", url)
        return Listed(directory, items, "ftp_listing", notes)

    def nlst(self, plan: Plan, url: FTPURL, opts: Options) -> Op[Listed]:
        """typecode d: NLST with the name (section 3.2.2)."""
        yield from self.set_type("A")
        arg = plan.argument or None
        from .ftplist import ListParser

        listing = Listing(ListParser("NLST"), *self.listing_limits)
        reply = yield from self.read_listing(url, "NLST", arg, opts, listing)
        if reply.kind != 1:
            raise self.refuse(reply, show("NLST", arg), url)
        directory = url.cwd
        if url.name and not (listing.lines == 1 and listing.first == url.name):
            directory = (*url.cwd, url.name)
        return Listed(directory, listing.items, "nlst")

    def fallback_listing(self, plan: Plan, url: FTPURL, opts: Options, retr_reply: Reply) -> Op[Listed]:
        """RETR said 550 and there was no typecode: maybe the name is a directory (as urllib, Lynx)."""
        if opts.cwd_strategy == "nocwd":
            return (yield from self.listing(url, plan.argument, (*url.cwd, url.name), opts,
                                            not_found=retr_reply))
        self.cwd_path = None
        reply = yield from self.cmd("CWD", url.name)
        if reply.code != 250:
            raise self.refuse(retr_reply, f"RETR {plan.argument}", url)
        return (yield from self.listing(url, None, (*url.cwd, url.name), opts))

    # -- stat ----------------------------------------------------------------------------

    def stat(self, plan: Plan, url: FTPURL, opts: Options) -> Op[StatFacts]:
        """Size, time and kind without a transfer: MLST when FEAT offers it, else
        TYPE I + SIZE + MDTM; a name SIZE does not know that CWD accepts is a directory."""
        yield from self.change_dirs(plan.cwds)
        name = plan.argument
        if not url.name:  # "ftp://host/dir/": a directory if the CWDs (or, nocwd, one CWD) succeed
            feats = (yield from self.features_list()) if opts.use_mlsd else set()
            item = None
            if "MLST" in feats or (opts.use_mlsd and not feats):
                reply = yield from self.cmd("MLST", name or None)
                item = parse_mlst(reply)
                if item is None and reply.kind == 5 and reply.code not in _UNSUPPORTED:
                    raise self.refuse(reply, show("MLST", name or None), url)
            if item is None and name:
                self.cwd_path = None
                yield from self.expect("CWD", name)
            return StatFacts("directory", item)
        feats = (yield from self.features_list()) if opts.use_mlsd else set()
        # FEAT with nothing in it (or refused, as aioftp.Server does) says nothing: MLST may still work.
        if "MLST" in feats or (opts.use_mlsd and not feats):
            reply = yield from self.cmd("MLST", name)
            item = parse_mlst(reply)
            if item is not None:
                if _through_link(item) and "SIZE" in feats:
                    item = yield from self._target_size(name, item)
                return StatFacts(item.kind, item)
            if reply.kind == 5 and reply.code not in _UNSUPPORTED:
                raise self.refuse(reply, f"MLST {name}", url)
        # SIZE counts bytes of the binary representation (RFC 3659 4); some servers refuse it under A.
        yield from self.set_type("I")
        # Some servers answer SIZE and MDTM for a directory too (Twisted: "213 4096"): CWD tells,
        # asked in the same write (no round trip more). A CWD that fails leaves us where we were.
        yield Send((("SIZE", name), ("MDTM", name), ("CWD", name)))
        replies: list[Reply] = []
        try:
            for _ in range(3):
                reply = yield READ
                if reply.code == 421:  # closing: the rest will not be answered
                    raise error_for(reply, show(*(("SIZE", "MDTM", "CWD")[len(replies)], name)), url)
                replies.append(reply)
        except BaseException:
            self.broken = True
            raise
        size_reply, mdtm_reply, cwd_reply = replies
        if cwd_reply.code == 250:
            self.cwd_path = None  # inside the directory now
            refused = parse_size(size_reply) is None and size_reply.code not in (500, 502, 504)
            return StatFacts("directory", reply=size_reply.text if refused else None)
        size = parse_size(size_reply)
        if size is None and size_reply.code not in (500, 502, 504):
            raise self.refuse(size_reply, f"SIZE {name}", url)
        modified = parse_mdtm(mdtm_reply)
        if size is None and modified is None:
            if mdtm_reply.code not in (500, 502, 504):
                raise self.refuse(mdtm_reply, f"MDTM {name}", url)
            raise NotSupported(f"the server has neither MLST, SIZE nor MDTM ({mdtm_reply.text})", url=url)
        return StatFacts("file", size=size, modified=modified, reply=size_reply.text)

    def _target_size(self, name: str, item: ListItem) -> Op[ListItem]:
        """*item* with the size SIZE gives: MLST of a name reached through a symlink may
        describe the link (ProFTPD: the link's own 9 bytes), SIZE the file it leads to."""
        yield from self.set_type("I")
        size = parse_size((yield from self.cmd("SIZE", name)))
        if size is None:
            return item
        facts = tuple((k, str(size) if k == "size" else v) for k, v in item.facts)
        return item.__replace__(kind="file", size=size, facts=facts, known=True)

    # -- upload ----------------------------------------------------------------------------

    def upload(self, plan: Plan, url: FTPURL, opts: Options, *, atomic: bool, token: str) -> Op[str]:
        """The CWDs, TYPE I, then :meth:`store` of the name; the method used."""
        yield from self.change_dirs(plan.cwds)
        yield from self.set_type("I")
        return (yield from self.store(url, plan.argument, opts, atomic=atomic, token=token))

    def store(self, url: FTPURL, final: str, opts: Options, *, atomic: bool, token: str) -> Op[str]:
        """STOR under each temporary name the server accepts (*token* makes it unique),
        then RNFR/RNTO; the method used: "temp-dot", "temp" or "direct"."""
        if not atomic:
            yield from self.stor(url, final, opts)
            return "direct"
        for method, temp in upload_names(final, token):
            if temp is None:
                break
            try:
                yield from self.stor(url, temp, opts, discard=True)
            except (ProtocolError, AccessDenied, ResourceNotFound) as exc:
                # Pure-FTPd answers 553 to dot names for anonymous users, ProFTPD's PathDenyFilter
                # 550: try the next pattern, and in the end the name itself.
                if not retry_stor_name(exc.reply):
                    raise
                continue
            asked = f"RNFR {temp}"
            reply = yield from self.cmd("RNFR", temp)
            if reply.code == 350:
                asked = f"RNTO {final}"
                reply = yield from self.cmd("RNTO", final)
                if reply.kind == 2:
                    return method
            if reply.code == 421:  # closing: nothing more will be answered
                raise self.refuse(reply, asked, url)
            # No renaming here (none at all, or not for this user: Pure-FTPd's anonymous
            # "550 ... not allowed to move/rename files"): drop the copy, store under the name.
            yield from self.discard(temp)
            break
        yield from self.stor(url, final, opts)
        return "direct"

    def stor(self, url: FTPURL, name: str, opts: Options, *, discard: bool = False) -> Op[None]:
        """STOR *name*; with *discard* (a temporary name), a transfer that failed with the
        connection in step is followed by DELE of what the server kept of it."""
        sent = False
        try:
            yield from self.open_data(opts, "stor")
            reply = yield from self.cmd("STOR", name)
            if reply.kind != 1:
                raise self.refuse(reply, f"STOR {name}", url)
            sent = True
            lost: OSError | None = yield SEND_DATA
            try:
                final: Reply = yield READ
            except (ConnectError, FetchTimeout) as exc:
                if lost is None:
                    raise
                raise TruncatedTransfer(f"data connection failed during STOR: {lost}; "
                                        f"no reply after it: {exc.message}", url=url) from lost
            if final.kind == 2 and lost is not None:
                self.refused = err = TruncatedTransfer(  # the reply came: in step
                    f"data connection failed during STOR {name}: {lost} (the server said {final.text})",
                    url=url, reply=final.text)
                raise err
            if final.kind != 2:
                raise self.ended(final, f"STOR {name}", url)
        except AnyURLError as exc:
            if sent and discard and self.in_step_after(exc):
                yield from self.discard(name)
            raise

    def discard(self, name: str) -> Op[None]:
        """DELE the part a failed STOR left under a temporary name (best effort: the STOR's
        error is the one reported; a DELE that fails to complete drops the connection)."""
        try:
            yield from self.cmd("DELE", name)
        except AnyURLError:
            pass


# ---------------------------------------------------------------------------
# Playing an op on bytes (tests, and anyone checking a conversation)
# ---------------------------------------------------------------------------


def play(session: Session, op: Op[T], replies: bytes,
         answer: Callable[[Event], Any] | None = None) -> tuple[bytes, T]:
    """Run *op* against the server's *replies* (bytes, as they would arrive); returns
    (every command byte the op wrote, its value). Events other than Send and READ are
    given to *answer* (default: None for each). Replies left over, or an op still
    waiting when they run out, are errors (AssertionError)."""
    sent = bytearray()
    lines = replies.splitlines(keepends=True)
    value: Any = None
    while True:
        try:
            event = op.send(value)
        except StopIteration as stop:
            assert not lines, f"replies left unread: {b''.join(lines)!r}"
            return bytes(sent), stop.value
        value = None
        if isinstance(event, Send):
            sent += event.data()
        elif event is READ:
            reply = None
            while reply is None:
                assert lines, f"the op waits for a reply after sending {bytes(sent)!r}"
                reply = session.receive_line(lines.pop(0))
            value = reply
        else:
            value = answer(event) if answer is not None else None

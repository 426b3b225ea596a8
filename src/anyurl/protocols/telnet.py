"""Telnet (RFC 854/855) option negotiation as a state machine with no I/O.

Feed the bytes that arrive to :meth:`TelnetProtocol.receive_data`; it
returns the application data (commands stripped, ``IAC IAC`` unescaped,
``CR NUL`` turned into ``CR``) and queues the replies the negotiation needs,
which :meth:`TelnetProtocol.data_to_send` hands out. Application data going
the other way passes through :meth:`TelnetProtocol.send_data`.

Negotiation follows the "Q method" of RFC 1143 (each side of each option is
``no``/``yes``/``wantyes``/``wantno``), so the protocol never answers a
request that does not change the state and cannot loop. What we agree to:

========  =================  ==========================================
option    the server may     we will
========  =================  ==========================================
ECHO      WILL (echo for us)  never echo for the server
SGA       WILL               WILL (no go-aheads either way)
TTYPE     -                  WILL, and answer SEND with our type (RFC 1091)
NAWS      -                  WILL, and report the window size (RFC 1073)
BINARY    WILL (if asked)    WILL (if asked)
========  =================  ==========================================

Every other option is refused (DONT/WONT).
"""

from __future__ import annotations

import enum
from collections import deque
from dataclasses import dataclass, field

__all__ = [
    "BINARY", "DO", "DONT", "ECHO", "IAC", "NAWS", "SB", "SE", "SGA", "TTYPE", "WILL", "WONT",
    "OPTION_NAMES", "TelnetProtocol", "command_name",
]

# RFC 854 commands
SE, NOP, DM, BRK, IP, AO, AYT, EC, EL, GA, SB = range(240, 251)
WILL, WONT, DO, DONT, IAC = 251, 252, 253, 254, 255
# options
BINARY, ECHO, SGA, STATUS, TM = 0, 1, 3, 5, 6
TTYPE, NAWS, TSPEED, LFLOW, LINEMODE, XDISPLOC, ENVIRON, AUTHENTICATION, ENCRYPT, NEW_ENVIRON = \
    24, 31, 32, 33, 34, 35, 36, 37, 38, 39
TTYPE_IS, TTYPE_SEND = 0, 1

OPTION_NAMES = {
    BINARY: "BINARY", ECHO: "ECHO", SGA: "SGA", STATUS: "STATUS", TM: "TIMING-MARK", TTYPE: "TTYPE",
    NAWS: "NAWS", TSPEED: "TSPEED", LFLOW: "LFLOW", LINEMODE: "LINEMODE", XDISPLOC: "XDISPLOC",
    ENVIRON: "ENVIRON", AUTHENTICATION: "AUTHENTICATION", ENCRYPT: "ENCRYPT", NEW_ENVIRON: "NEW-ENVIRON",
}
_COMMAND_NAMES = {WILL: "WILL", WONT: "WONT", DO: "DO", DONT: "DONT", SB: "SB", SE: "SE"}

MAX_SUBNEGOTIATION = 1024  # bytes of one SB ... SE; longer ones are dropped
MAX_LOG = 1000  # entries kept in each negotiation log (the most recent ones)


def command_name(cmd: int, opt: int | None = None) -> str:
    """``"DO TTYPE"`` for (253, 24): for logs and error messages."""
    name = _COMMAND_NAMES.get(cmd, str(cmd))
    if opt is None:
        return name
    return f"{name} {OPTION_NAMES.get(opt, str(opt))}"


class Q(enum.Enum):
    """RFC 1143 state of one side of one option."""

    NO = "no"
    YES = "yes"
    WANTNO = "wantno"
    WANTYES = "wantyes"


class _S(enum.Enum):
    DATA = 0
    IAC = 1
    OPTION = 2  # after IAC WILL/WONT/DO/DONT
    SB = 3
    SB_IAC = 4
    CR = 5


@dataclass
class TelnetProtocol:
    """Client side of a Telnet connection, without I/O.

    ``terminal_type``: sent when the server asks (None: refuse TTYPE).
    ``window_size``: (columns, rows) for NAWS (None: refuse NAWS).
    ``max_log``: how many of the latest entries ``received``, ``sent`` and
    ``subnegotiations`` keep (a server may negotiate without end).
    """

    terminal_type: str | None = "xterm"
    window_size: tuple[int, int] | None = (80, 24)
    accept_binary: bool = False
    max_log: int = MAX_LOG
    # what happened, for tests and ``--debug``: the latest (command, option) received and sent
    received: deque[tuple[int, int]] = field(init=False)
    sent: deque[tuple[int, int]] = field(init=False)
    subnegotiations: deque[bytes] = field(init=False)

    def __post_init__(self) -> None:
        # bounded: a flood of IAC WILL x must not grow memory (each entry outlives its 3 bytes)
        self.received = deque(maxlen=max(0, self.max_log))
        self.sent = deque(maxlen=max(0, self.max_log))
        self.subnegotiations = deque(maxlen=max(0, self.max_log))
        self._us: dict[int, Q] = {}  # options we perform (WILL/WONT)
        self._him: dict[int, Q] = {}  # options the server performs
        self._out = bytearray()
        self._state = _S.DATA
        self._cmd = 0
        self._sb = bytearray()
        self._sb_overflow = False

    # -- what the negotiation agreed ----------------------------------------

    def local_enabled(self, opt: int) -> bool:
        """True when we perform *opt* (we said WILL and the server agreed)."""
        return self._us.get(opt, Q.NO) is Q.YES

    def remote_enabled(self, opt: int) -> bool:
        """True when the server performs *opt* (e.g. ECHO: the server echoes)."""
        return self._him.get(opt, Q.NO) is Q.YES

    @property
    def options(self) -> dict[str, list[str]]:
        """Enabled options by side: ``{"local": [...], "remote": [...]}`` (names)."""
        return {
            "local": sorted(OPTION_NAMES.get(o, str(o)) for o, q in self._us.items() if q is Q.YES),
            "remote": sorted(OPTION_NAMES.get(o, str(o)) for o, q in self._him.items() if q is Q.YES),
        }

    # -- policy: what we accept ---------------------------------------------

    def _we_will(self, opt: int) -> bool:
        if opt == TTYPE:
            return self.terminal_type is not None
        if opt == NAWS:
            return self.window_size is not None
        if opt == BINARY:
            return self.accept_binary
        return opt == SGA

    def _he_may(self, opt: int) -> bool:
        return opt in (ECHO, SGA) or (opt == BINARY and self.accept_binary)

    # -- sending --------------------------------------------------------------

    def _send_cmd(self, cmd: int, opt: int) -> None:
        self._out += bytes((IAC, cmd, opt))
        self.sent.append((cmd, opt))

    def _send_sb(self, opt: int, payload: bytes) -> None:
        self._out += bytes((IAC, SB, opt)) + payload.replace(b"\xff", b"\xff\xff") + bytes((IAC, SE))
        self.sent.append((SB, opt))

    def data_to_send(self) -> bytes:
        """Bytes queued for the server (negotiation replies, escaped data); clears the queue."""
        out = bytes(self._out)
        self._out.clear()
        return out

    def request(self, cmd: int, opt: int) -> None:
        """Ask for an option ourselves (``request(DO, SGA)``, ``request(WILL, NAWS)``)."""
        table, want_on = (self._us, cmd == WILL) if cmd in (WILL, WONT) else (self._him, cmd == DO)
        state = table.get(opt, Q.NO)
        if want_on and state is Q.NO:
            table[opt] = Q.WANTYES
            self._send_cmd(cmd, opt)
        elif not want_on and state is Q.YES:
            table[opt] = Q.WANTNO
            self._send_cmd(cmd, opt)

    def send_data(self, data: bytes) -> None:
        """Queue application data: IAC doubled; outside BINARY a bare CR becomes CR NUL
        and a bare LF becomes CR LF (RFC 854's NVT line ends)."""
        data = data.replace(b"\xff", b"\xff\xff")
        if not self.local_enabled(BINARY):
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\r\0").replace(b"\n", b"\r\n")
        self._out += data

    def set_window_size(self, columns: int, rows: int) -> None:
        """Record a new window size and report it if NAWS is on."""
        self.window_size = (columns, rows)
        if self.local_enabled(NAWS):
            self._send_naws()

    def _send_naws(self) -> None:
        assert self.window_size is not None
        cols, rows = (max(0, min(v, 0xFFFF)) for v in self.window_size)
        self._send_sb(NAWS, cols.to_bytes(2, "big") + rows.to_bytes(2, "big"))

    # -- receiving ------------------------------------------------------------

    def receive_data(self, data: bytes) -> bytes:
        """Process bytes from the server; returns the application data among them."""
        app = bytearray()
        state = self._state
        for b in data:
            if state is _S.DATA:
                if b == IAC:
                    state = _S.IAC
                elif b == 13:
                    app.append(b)
                    state = _S.CR
                else:
                    app.append(b)
            elif state is _S.CR:
                # CR NUL means a bare CR; CR LF stays as it is
                if b == IAC:
                    state = _S.IAC
                elif b == 0:
                    state = _S.DATA
                else:
                    app.append(b)
                    state = _S.CR if b == 13 else _S.DATA
            elif state is _S.IAC:
                if b == IAC:
                    app.append(IAC)
                    state = _S.DATA
                elif b in (WILL, WONT, DO, DONT):
                    self._cmd = b
                    state = _S.OPTION
                elif b == SB:
                    self._sb.clear()
                    self._sb_overflow = False
                    state = _S.SB
                else:
                    state = _S.DATA  # NOP, GA, DM, AYT...: nothing to do for a client
            elif state is _S.OPTION:
                self._negotiate(self._cmd, b)
                state = _S.DATA
            elif state is _S.SB:
                if b == IAC:
                    state = _S.SB_IAC
                elif len(self._sb) < MAX_SUBNEGOTIATION:
                    self._sb.append(b)
                else:
                    self._sb_overflow = True
            else:  # SB_IAC
                if b == SE:
                    if not self._sb_overflow:
                        self._subnegotiation(bytes(self._sb))
                    state = _S.DATA
                elif b == IAC:
                    if len(self._sb) < MAX_SUBNEGOTIATION:
                        self._sb.append(IAC)
                    state = _S.SB
                else:
                    # IAC x inside SB is a protocol error; end the SB there (RFC 855 is silent)
                    state = _S.DATA
        self._state = state
        return bytes(app)

    def _negotiate(self, cmd: int, opt: int) -> None:
        self.received.append((cmd, opt))
        if cmd in (WILL, WONT):
            self._on_remote(opt, cmd == WILL)
        else:
            self._on_local(opt, cmd == DO)

    def _on_remote(self, opt: int, will: bool) -> None:
        state = self._him.get(opt, Q.NO)
        if will:
            if state is Q.NO:
                if self._he_may(opt):
                    self._him[opt] = Q.YES
                    self._send_cmd(DO, opt)
                else:
                    self._send_cmd(DONT, opt)
            elif state is Q.WANTYES:
                self._him[opt] = Q.YES
            elif state is Q.WANTNO:
                self._him[opt] = Q.NO  # he answered our DONT with WILL: a broken peer; stay off
        else:
            if state is Q.YES:
                self._him[opt] = Q.NO
                self._send_cmd(DONT, opt)
            elif state in (Q.WANTYES, Q.WANTNO):
                self._him[opt] = Q.NO

    def _on_local(self, opt: int, do: bool) -> None:
        state = self._us.get(opt, Q.NO)
        if do:
            if state is Q.NO:
                if self._we_will(opt):
                    self._us[opt] = Q.YES
                    self._send_cmd(WILL, opt)
                    self._enabled(opt)
                else:
                    self._send_cmd(WONT, opt)
            elif state is Q.WANTYES:
                self._us[opt] = Q.YES
                self._enabled(opt)
            elif state is Q.WANTNO:
                self._us[opt] = Q.NO
        else:
            if state is Q.YES:
                self._us[opt] = Q.NO
                self._send_cmd(WONT, opt)
            elif state in (Q.WANTYES, Q.WANTNO):
                self._us[opt] = Q.NO

    def _enabled(self, opt: int) -> None:
        if opt == NAWS and self.window_size is not None:
            self._send_naws()  # RFC 1073: report the size as soon as NAWS is agreed

    def _subnegotiation(self, payload: bytes) -> None:
        self.subnegotiations.append(payload)
        if not payload:
            return
        self.received.append((SB, payload[0]))
        if payload[0] == TTYPE and payload[1:2] == bytes((TTYPE_SEND,)) and self.local_enabled(TTYPE):
            assert self.terminal_type is not None
            # sent as given: servers copy it into TERM, which terminfo looks up case-sensitively
            name = self.terminal_type.encode("ascii", "replace")
            self._send_sb(TTYPE, bytes((TTYPE_IS,)) + name)

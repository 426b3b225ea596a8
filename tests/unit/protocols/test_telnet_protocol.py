"""Telnet negotiation state machine, with no network: bytes in, data and replies out."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from anyurl.errors import NotRetrievable, UnsafeURL
from anyurl.handlers.telnet import check_telnet_url
from anyurl.protocols.telnet import (
    BINARY,
    DO,
    DONT,
    ECHO,
    IAC,
    NAWS,
    SB,
    SE,
    SGA,
    TTYPE,
    WILL,
    WONT,
    TelnetProtocol,
    command_name,
)
from anyurl.urls import TelnetURL

LINEMODE, NEW_ENVIRON, STATUS, AUTH = 34, 39, 5, 37


def cmd(c: int, o: int) -> bytes:
    return bytes((IAC, c, o))


# (what the server sends, what we answer) for a fresh client with TTYPE and NAWS (80x24)
NEGOTIATION = [
    (cmd(WILL, ECHO), cmd(DO, ECHO)),
    (cmd(WILL, SGA), cmd(DO, SGA)),
    (cmd(DO, SGA), cmd(WILL, SGA)),
    (cmd(DO, TTYPE), cmd(WILL, TTYPE)),
    (cmd(DO, NAWS), cmd(WILL, NAWS) + bytes((IAC, SB, NAWS, 0, 80, 0, 24, IAC, SE))),
    (cmd(DO, ECHO), cmd(WONT, ECHO)),  # we never echo for the server
    (cmd(DO, LINEMODE), cmd(WONT, LINEMODE)),
    (cmd(DO, NEW_ENVIRON), cmd(WONT, NEW_ENVIRON)),
    (cmd(WILL, STATUS), cmd(DONT, STATUS)),
    (cmd(WILL, AUTH), cmd(DONT, AUTH)),
    (cmd(DO, BINARY), cmd(WONT, BINARY)),
    (cmd(WONT, ECHO), b""),  # already off: no answer (RFC 1143)
    (cmd(DONT, TTYPE), b""),
    (cmd(241, 0)[:2], b""),  # IAC NOP
]


@pytest.mark.parametrize(("incoming", "reply"), NEGOTIATION)
def test_negotiation_table(incoming: bytes, reply: bytes) -> None:
    p = TelnetProtocol()
    assert p.receive_data(incoming) == b""
    assert p.data_to_send() == reply


def test_no_loops_repeated_requests_answered_once() -> None:
    p = TelnetProtocol()
    p.receive_data(cmd(WILL, ECHO) + cmd(WILL, ECHO) + cmd(DO, SGA) + cmd(DO, SGA))
    assert p.data_to_send() == cmd(DO, ECHO) + cmd(WILL, SGA)
    assert p.remote_enabled(ECHO) and p.local_enabled(SGA)
    p.receive_data(cmd(WONT, ECHO))
    assert p.data_to_send() == cmd(DONT, ECHO)
    assert not p.remote_enabled(ECHO)
    p.receive_data(cmd(DONT, SGA) + cmd(DONT, SGA))
    assert p.data_to_send() == cmd(WONT, SGA)


def test_our_own_request_is_not_answered_twice() -> None:
    p = TelnetProtocol()
    p.request(DO, SGA)
    p.request(DO, SGA)  # already pending
    assert p.data_to_send() == cmd(DO, SGA)
    p.receive_data(cmd(WILL, SGA))  # the server's answer: no reply
    assert p.data_to_send() == b""
    assert p.remote_enabled(SGA)
    p.request(WILL, NAWS)
    assert p.data_to_send() == cmd(WILL, NAWS)
    p.receive_data(cmd(DO, NAWS))
    assert p.data_to_send() == bytes((IAC, SB, NAWS, 0, 80, 0, 24, IAC, SE))


def test_terminal_type_subnegotiation() -> None:
    p = TelnetProtocol(terminal_type="vt100")
    p.receive_data(cmd(DO, TTYPE) + bytes((IAC, SB, TTYPE, 1, IAC, SE)))
    assert p.data_to_send() == cmd(WILL, TTYPE) + bytes((IAC, SB, TTYPE, 0)) + b"vt100" + bytes((IAC, SE))
    # before WILL TTYPE was agreed, SEND is ignored
    q = TelnetProtocol()
    q.receive_data(bytes((IAC, SB, TTYPE, 1, IAC, SE)))
    assert q.data_to_send() == b""


def test_ttype_and_naws_refused_when_unset() -> None:
    p = TelnetProtocol(terminal_type=None, window_size=None)
    p.receive_data(cmd(DO, TTYPE) + cmd(DO, NAWS))
    assert p.data_to_send() == cmd(WONT, TTYPE) + cmd(WONT, NAWS)


def test_naws_escapes_255_and_follows_resizes() -> None:
    p = TelnetProtocol(window_size=(255, 40))
    p.receive_data(cmd(DO, NAWS))
    assert p.data_to_send() == cmd(WILL, NAWS) + bytes((IAC, SB, NAWS, 0, IAC, IAC, 0, 40, IAC, SE))
    p.set_window_size(300, 100)
    assert p.data_to_send() == bytes((IAC, SB, NAWS, 1, 44, 0, 100, IAC, SE))
    # before NAWS is agreed a resize is only recorded
    q = TelnetProtocol()
    q.set_window_size(120, 50)
    assert q.data_to_send() == b""
    q.receive_data(cmd(DO, NAWS))
    assert q.data_to_send().endswith(bytes((IAC, SB, NAWS, 0, 120, 0, 50, IAC, SE)))


def test_data_unescaping_and_line_ends() -> None:
    p = TelnetProtocol()
    data = b"a" + bytes((IAC, IAC)) + b"b\r\0c\r\nd" + cmd(WILL, ECHO) + b"e"
    assert p.receive_data(data) == b"a\xffb\rc\r\nde"
    assert p.data_to_send() == cmd(DO, ECHO)


def test_split_anywhere_gives_same_result() -> None:
    stream = (b"login: " + cmd(DO, TTYPE) + bytes((IAC, SB, TTYPE, 1, IAC, SE)) + b"x\r\0y"
              + bytes((IAC, IAC)) + cmd(WILL, SGA) + b"\r\nz")
    whole = TelnetProtocol()
    expected = (whole.receive_data(stream), whole.data_to_send())
    for cut in range(len(stream) + 1):
        p = TelnetProtocol()
        got = p.receive_data(stream[:cut]) + p.receive_data(stream[cut:])
        assert (got, p.data_to_send()) == expected, cut


@given(st.binary(max_size=300))
def test_arbitrary_bytes_never_crash_and_stay_bounded(data: bytes) -> None:
    p = TelnetProtocol()
    app = p.receive_data(data)
    assert len(app) <= len(data)
    assert len(p.data_to_send()) <= 3 * len(data) + 64


def test_subnegotiation_is_bounded() -> None:
    p = TelnetProtocol()
    p.receive_data(bytes((IAC, SB, TTYPE)) + b"x" * 100_000 + bytes((IAC, SE)) + b"after")
    assert not p.subnegotiations  # oversized: dropped
    assert p.receive_data(b"!") == b"!"


def test_negotiation_logs_keep_only_the_latest_entries() -> None:
    p = TelnetProtocol(max_log=50)
    flood = b"".join(cmd(WILL, opt) + cmd(DO, opt) for opt in range(100, 200)) * 20
    flood += bytes((IAC, SB, TTYPE, 1, IAC, SE)) * 500
    p.receive_data(flood)
    assert len(p.received) == len(p.sent) == len(p.subnegotiations) == 50
    assert p.received[-1] == (SB, TTYPE)  # the newest are kept
    assert (WONT, 199) in p.sent


def test_send_data_escapes_iac_and_cr() -> None:
    p = TelnetProtocol()
    p.send_data(b"ls\n")
    p.send_data(b"a\rb")  # a bare CR (Enter in raw mode) -> CR NUL
    p.send_data(b"x\r\ny\xff")
    assert p.data_to_send() == b"ls\r\na\r\0bx\r\ny\xff\xff"


def test_options_snapshot_and_names() -> None:
    p = TelnetProtocol()
    p.receive_data(cmd(WILL, ECHO) + cmd(WILL, SGA) + cmd(DO, NAWS) + cmd(DO, LINEMODE))
    assert p.options == {"local": ["NAWS"], "remote": ["ECHO", "SGA"]}
    assert (DO, LINEMODE) in p.received and (WONT, LINEMODE) in p.sent
    assert command_name(DO, TTYPE) == "DO TTYPE" and command_name(WILL, 200) == "WILL 200"


@pytest.mark.parametrize(("user", "password", "host"), [
    ("a\r\nb", None, "h"), ("a", "p\nq", "h"), ("a\0", None, "h"), ("a", "p\udcff", "h"),
    ("a\xff", None, "h"), (None, None, "-oProxyCommand=x"), (None, None, ""),
])
def test_unsafe_telnet_urls(user: str | None, password: str | None, host: str) -> None:
    url = TelnetURL(scheme="telnet", host=host, port=23, user=user, password=password)
    with pytest.raises(UnsafeURL):
        check_telnet_url(url)


def test_safe_telnet_url() -> None:
    check_telnet_url(TelnetURL(scheme="telnet", host="h.example", port=23, user="guest", password="pw"))


async def test_fetch_is_not_retrievable() -> None:
    import anyurl

    with pytest.raises(NotRetrievable, match="anyurl.connect"):
        await anyurl.fetch("telnet://h.example/")


def test_advisory_text_shows_but_never_types() -> None:
    from anyurl.cli.terminal import advisory_text

    url = TelnetURL(scheme="telnet", host="h", port=23, user="guest", password="secret")
    assert advisory_text(url) == ("login as guest, password secret "
                                  "(the URL suggests these; anyurl does not type them for you)")
    assert advisory_text(TelnetURL(scheme="telnet", host="h", port=23, user="guest")) is not None
    assert advisory_text(TelnetURL(scheme="telnet", host="h", port=23)) is None

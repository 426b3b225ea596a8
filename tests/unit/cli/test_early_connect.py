"""The CLI's early connect (anyurl.cli.early): which command lines start one, and the socket's fate.

The transfers over a real server's early connection are in tests/integration/test_cli_early_connect.py;
here a plain listening socket stands for "a port that accepts", "a closed port" and "a port
whose SYNs are dropped" (a full accept queue), which no real server gives on demand.
"""

from __future__ import annotations

import contextlib
import gc
import io
import os
import socket
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.procs import spawn

import anyurl
from anyurl import client
from anyurl.cli import commands as cli
from anyurl.cli import early as _early
from anyurl.cli.quick import Args
from anyurl.errors import FetchTimeout, URLSyntaxError
from anyurl.urls import parse

SRC = str(Path(anyurl.__file__).parent.parent)
_NO_PROXY_ENV = [n for n in client._PROXY_VARIABLES] + ["ANYURL_EARLY_CONNECT"]


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in _NO_PROXY_ENV:
        monkeypatch.delenv(name, raising=False)
    yield
    _early.discard()


def _args(*urls: str, command: str = "get", **options: object) -> Args:
    values: dict[str, object] = {"command": command, "proxy": None, "noproxy": None, "input_file": None}
    if command == "get":
        values["urls"] = list(urls)
    else:
        values["url"] = urls[0]
    values.update(options)
    return Args(values)


@contextlib.contextmanager
def _listener(backlog: int = 8) -> Iterator[socket.socket]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(backlog)
        yield s


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- which command lines connect early ---------------------------------------------------


@pytest.mark.parametrize(("url", "key"), [
    ("gopher://127.0.0.1:7070/9/big.bin", ("gopher", "127.0.0.1", 7070)),
    ("gopher://Example.ORG/", ("gopher", "example.org", 70)),
    ("http://127.0.0.1/x", ("http", "127.0.0.1", 80)),
    ("https://127.0.0.1/x", ("https", "127.0.0.1", 443)),  # and its TLS handshake, in a thread
    ("ftp://user:pw@[::1]:2121/pub/f", ("ftp", "::1", 2121)),
    ("nntp://news.example/comp.lang/1", ("nntp", "news.example", 119)),
    ("http://xn--bcher-kva.example/x", ("http", "xn--bcher-kva.example", 80)),  # an IDN host in its IDNA form
])
def test_a_plain_tcp_url_is_connected_early_to_its_host_and_port(url: str, key: tuple[str, str, int]) -> None:
    assert _early._target(_args(url)) == key


@pytest.mark.parametrize("url", [
    "http://bücher.example/x", "gopher://bücher.example/",  # a non-ASCII host does not parse (write its xn-- form)
    "file:///etc/hostname", "mailto:a@b.example", "news:comp.lang", "telnet://h/",
    "gopher://127.0.0.1:25/0x",  # a service port the default policy refuses before any I/O
    "gopher://127.0.0.1/0a%0D%0AQUIT",  # CR LF: refused before any I/O
    "http://[::1/x", "gopher://host:99999/", "ftp://",  # do not parse
])
def test_no_early_connect_for_urls_the_handler_would_not_connect_to_directly(url: str) -> None:
    assert _early._target(_args(url)) is None


@pytest.mark.parametrize("host", ["bücher.example", "BÜCHER.example", "ｅxample.org", "example\u3002org", "ß.de"])
@pytest.mark.parametrize("scheme", sorted(_early.SCHEMES))
def test_a_non_ascii_host_is_refused_by_the_parser_before_any_io(scheme: str, host: str) -> None:
    # docs/http.md: an IDN host is a URLSyntaxError; its IDNA (xn--) form is the one to write
    with pytest.raises(URLSyntaxError, match="in host"):
        parse(f"{scheme}://{host}/x")
    assert _early._target(_args(f"{scheme}://{host}/x")) is None


@settings(max_examples=300)
@given(st.sampled_from(sorted(_early.SCHEMES)), st.text(min_size=1, max_size=12))
def test_every_host_the_parser_accepts_is_ascii(scheme: str, host: str) -> None:
    # why early.py needs no branch for a non-ASCII host (it had one, "aiohttp applies IDNA"):
    # none gets past parse()
    try:
        url = parse(f"{scheme}://{host}:1/x")
    except ValueError:
        return
    assert getattr(url, "host", "").isascii()


def test_get_http3_connects_no_tcp_early_to_an_https_server() -> None:
    # (QUIC goes first: the TCP connection and its TLS handshake would cost both sides for nothing)
    assert _early._target(_args("https://127.0.0.1/x", http3=True)) is None
    assert _early._target(_args("http://127.0.0.1/x", http3=True)) == ("http", "127.0.0.1", 80)
    assert _early._target(_args("https://127.0.0.1/x", http3=False)) == ("https", "127.0.0.1", 443)


def test_ls_and_stat_connect_early_but_not_parse_mirror_or_a_url_list() -> None:
    url = "ftp://127.0.0.1:2121/pub/"
    assert _early._target(_args(url, command="ls")) == ("ftp", "127.0.0.1", 2121)
    assert _early._target(_args(url, command="stat")) == ("ftp", "127.0.0.1", 2121)
    assert _early._target(_args(url, command="mirror")) is None
    assert _early._target(_args(command="get", input_file="urls.txt")) is None
    assert _early._target(_args()) is None


@pytest.mark.parametrize("value", ["0", "off", "no", "false"])
def test_anyurl_early_connect_0_turns_it_off(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANYURL_EARLY_CONNECT", value)
    assert _early._target(_args("gopher://127.0.0.1/")) is None


def test_a_proxy_from_the_environment_or_the_command_line_disables_it(monkeypatch: pytest.MonkeyPatch) -> None:
    http, ftp, gopher = "http://127.0.0.1:8080/x", "ftp://127.0.0.1/f", "gopher://127.0.0.1/"
    monkeypatch.setenv("http_proxy", "http://proxy.example:3128")
    assert _early._target(_args(http)) is None
    assert _early._target(_args(ftp)) == ("ftp", "127.0.0.1", 21)  # ftp_proxy is not set
    assert _early._target(_args(gopher)) == ("gopher", "127.0.0.1", 70)  # gopher is never proxied
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    assert _early._target(_args(http)) == ("http", "127.0.0.1", 8080)  # reached directly
    monkeypatch.delenv("no_proxy")
    assert _early._target(_args(http, proxy="")) == ("http", "127.0.0.1", 8080)  # --proxy '': none
    monkeypatch.delenv("http_proxy")
    monkeypatch.setenv("ALL_PROXY", "proxy.example:3128")
    assert _early._target(_args(ftp)) is None
    monkeypatch.delenv("ALL_PROXY")
    assert _early._target(_args(ftp, proxy="proxy.example:3128")) is None  # --proxy
    assert _early._target(_args(ftp, proxy="proxy.example:3128", noproxy="*")) == ("ftp", "127.0.0.1", 21)


def test_the_proxy_variables_read_are_the_client_s() -> None:
    assert _early._PROXY_VARIABLES == client._PROXY_VARIABLES


def test_starting_imports_neither_asyncio_nor_the_handlers() -> None:
    code = ("import sys; from anyurl.cli import early as _early; from anyurl.cli.quick import Args\n"
            "_early.start(Args({'command': 'get', 'urls': ['gopher://127.0.0.1:1/9/x'], 'proxy': None,"
            " 'noproxy': None}))\n"
            "assert _early._pending is not None\n"
            "_early.discard()\n"
            "print(sorted(m for m in sys.modules if m == 'asyncio' or m.startswith(('uvloop', 'anyurl.handlers'))))")
    env = {k: v for k, v in os.environ.items() if k not in _NO_PROXY_ENV}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={**env, "PYTHONPATH": SRC})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


@pytest.mark.parametrize("http1", [False, True])
def test_https_sends_its_client_hello_before_asyncio_is_imported(http1: bool) -> None:
    # the handshake starts in a thread at once; the child waits until the hello has arrived here
    with _listener() as server:
        port = server.getsockname()[1]
        code = ("import sys; from anyurl.cli import early as _early; from anyurl.cli.quick import Args\n"
                f"_early.start(Args({{'command': 'get', 'urls': ['https://127.0.0.1:{port}/x'], 'proxy': None,"
                f" 'noproxy': None, 'http1_1': {http1}}}))\n"
                "sys.stdin.readline()\n"
                "print(sorted(m for m in sys.modules if m == 'asyncio' or m.startswith(('uvloop', 'anyurl.handlers'))))\n"
                "_early.discard()")
        env = {k: v for k, v in os.environ.items() if k not in _NO_PROXY_ENV}
        with spawn([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                   stderr=subprocess.PIPE, text=True, env={**env, "PYTHONPATH": SRC}) as proc:
            server.settimeout(60)
            peer, _ = server.accept()
            with peer:
                peer.settimeout(60)
                hello = b""
                while len(hello) < 5 or len(hello) < 5 + int.from_bytes(hello[3:5], "big"):
                    more = peer.recv(1 << 16)
                    assert more, hello
                    hello += more
                out, err = proc.communicate("go\n", timeout=60)
    assert proc.returncode == 0, err
    assert out.strip() == "[]"  # the hello went out while nothing of asyncio was loaded
    assert hello[0] == 0x16 and hello[5] == 0x01  # a TLS handshake record: ClientHello
    # ALPN as the handler's context offers it: h2 and http/1.1, or none with --http1.1
    assert (b"\x02h2" in hello) is (b"\x08http/1.1" in hello) is not http1


def test_an_https_early_handshake_nobody_takes_is_closed() -> None:
    with _listener() as server:
        port = server.getsockname()[1]
        with warnings.catch_warnings():
            warnings.simplefilter("error", ResourceWarning)
            _early.start(_args(f"https://127.0.0.1:{port}/x"))
            server.settimeout(30)
            peer, _ = server.accept()
            with peer:
                peer.settimeout(30)
                assert peer.recv(1)[:1] == b"\x16"  # the hello came
                peer.settimeout(_early.TLS_SECONDS * 0.75)
                start = time.monotonic()
                _early.discard()  # abandoned mid-handshake: the thread is woken and closes the socket
                while peer.recv(1 << 16):
                    pass
                # at once, not at the end of the thread's own wait for the server
                assert time.monotonic() - start < _early.TLS_SECONDS / 2
            gc.collect()
    assert _early._pending is None


# -- the socket's fate ----------------------------------------------------------------------


def test_an_unused_early_socket_is_closed_without_a_resource_warning() -> None:
    with _listener() as server:
        port = server.getsockname()[1]
        with warnings.catch_warnings():
            warnings.simplefilter("error", ResourceWarning)
            _early.start(_args(f"gopher://127.0.0.1:{port}/0x"))
            peer, _ = server.accept()  # the connect did happen
            with peer:
                _early.discard()
                peer.settimeout(5)
                assert peer.recv(1) == b""  # closed by us, nothing sent
            gc.collect()
    assert _early._pending is None


def test_a_socket_for_another_target_is_not_taken() -> None:
    with _listener() as server:
        port = server.getsockname()[1]
        _early.start(_args(f"gopher://127.0.0.1:{port}/0x"))
        assert _early.take("gopher", "127.0.0.1", port + 1) is None
        assert _early.take("http", "127.0.0.1", port) is None
        sock = _early.take("gopher", "127.0.0.1", port)
        assert sock is not None
        sock.close()
        assert _early.take("gopher", "127.0.0.1", port) is None  # once


def _main(*argv: str) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = cli.main(list(argv))
    return code, err.getvalue()


def test_a_refused_port_gives_the_same_error_and_exit_code_as_without_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    port = _closed_port()
    for scheme, path in (("gopher", "0x"), ("http", "x"), ("ftp", "x")):
        url = f"{scheme}://127.0.0.1:{port}/{path}"
        early = _main("get", "-q", "-o", str(tmp_path / "a"), url)
        monkeypatch.setenv("ANYURL_EARLY_CONNECT", "0")
        usual = _main("get", "-q", "-o", str(tmp_path / "b"), url)
        monkeypatch.delenv("ANYURL_EARLY_CONNECT")
        assert early == usual
        assert early == (13, f"anyurl: {url}: cannot connect to 127.0.0.1:{port}: Connection refused\n")


def test_a_connect_that_never_completes_fails_at_the_connect_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    taken: list[socket.socket | None] = []
    real_take = _early.take

    def take(scheme: str, host: str, port: int) -> socket.socket | None:
        taken.append(real_take(scheme, host, port))
        return taken[-1]

    monkeypatch.setattr(_early, "take", take)
    # a full accept queue: the kernel drops the SYNs, as a firewall that blackholes them would
    with _listener(backlog=0) as server, socket.create_connection(server.getsockname()):
        port = server.getsockname()[1]
        url = f"gopher://127.0.0.1:{port}/0x"
        start = time.monotonic()
        early = _main("get", "-q", "--connect-timeout", "0.5", url)
        took = time.monotonic() - start
        assert taken and taken[0] is not None  # the early socket was waited for...
        assert taken[0].fileno() == -1  # ...and closed at the deadline
        monkeypatch.setenv("ANYURL_EARLY_CONNECT", "0")
        usual = _main("get", "-q", "--connect-timeout", "0.5", url)
    assert early == usual == (FetchTimeout.exit_code, f"anyurl: {url}: connecting to 127.0.0.1:{port} timed out\n")
    assert 0.45 < took < 5


def test_get_parallel_n_of_http_urls_begins_n_connections_to_the_first_url_s_server() -> None:
    # --parallel 3, four URLs of the first's server and one of another: three connections
    # begun (the handler opens three at once), taken one by one; one URL alone: one
    with _listener() as server:
        port = server.getsockname()[1]
        urls = [f"http://127.0.0.1:{port}/f{i}" for i in range(4)] + ["http://127.0.0.2:1/x"]
        _early.start(_args(*urls, parallel=3))
        server.settimeout(10)
        peers = [server.accept()[0] for _ in range(3)]
        socks = [_early.take("http", "127.0.0.1", port) for _ in range(4)]
        assert all(s is not None for s in socks[:3]) and socks[3] is None
        for s in [*peers, *socks[:3]]:
            assert s is not None
            s.close()
    assert _early._count(_args(f"http://127.0.0.1:{port}/f0", parallel=8), ("http", "127.0.0.1", port)) == 1
    assert _early._count(_args(*urls[:4], parallel=1), ("http", "127.0.0.1", port)) == 1
    assert _early._count(_args(f"ftp://127.0.0.1:{port}/a", f"ftp://127.0.0.1:{port}/b", parallel=8),
                         ("ftp", "127.0.0.1", port)) == 1  # (plain http only)

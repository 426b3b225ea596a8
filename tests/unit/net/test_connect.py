"""net/connect.py: the one connect path and the one table of what went wrong.

The wording table itself is checked against real connects (refused, timed out, a TLS
server whose certificate is not trusted) and, per scheme, against the real servers' TLS
listeners in tests/integration/test_tls_failures.py. Here: the rule that keeps it one table
(no driver turns an OSError or ssl.SSLError into a ConnectError of its own), and the
table's rows on sockets of this test's own.
"""

from __future__ import annotations

import ast
import asyncio
import socket
import ssl
from pathlib import Path

import pytest

import anyurl
from anyurl.errors import tls_reason
from anyurl.net.connect import connecting, exchanging, open_stream, open_transport

SRC = Path(anyurl.__file__).resolve().parent

# the OSError family: catching any of these (or a tuple holding one) is catching a network error
_OS_ERRORS = {"OSError", "IOError", "EnvironmentError", "socket.error", "ssl.SSLError", "SSLError",
              "ssl.SSLCertVerificationError", "ConnectionError", "ConnectionResetError",
              "ConnectionRefusedError", "ConnectionAbortedError", "BrokenPipeError"}
_OS_CHECKS = _OS_ERRORS


def _names(node: ast.expr | None) -> set[str]:
    if node is None:
        return set()
    if isinstance(node, ast.Tuple):
        return set().union(*(_names(e) for e in node.elts))
    if isinstance(node, ast.BinOp):  # isinstance(x, A | B)
        return _names(node.left) | _names(node.right)
    return {ast.unparse(node)}


def _builds_connect_error(body: list[ast.stmt]) -> bool:
    return any(isinstance(n, ast.Call) and ast.unparse(n.func).split(".")[-1] == "ConnectError"
               for stmt in body for n in ast.walk(stmt))


def own_connect_errors(tree: ast.AST) -> list[int]:
    """Lines where a ConnectError is built from a caught (or isinstance-checked) OS/ssl error."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ExceptHandler) and _names(node.type) & _OS_ERRORS \
                and _builds_connect_error(node.body):
            found.append(node.lineno)
        elif isinstance(node, ast.If) and isinstance(node.test, ast.Call) \
                and ast.unparse(node.test.func) == "isinstance" and len(node.test.args) == 2 \
                and _names(node.test.args[1]) & _OS_CHECKS and _builds_connect_error(node.body):
            found.append(node.lineno)
    return found


def test_no_driver_words_a_connect_or_tls_failure_of_its_own() -> None:
    # net/connect.py is the one table (and errors.translate the general one below it)
    found = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith("net/") or rel == "errors.py":
            continue
        lines = own_connect_errors(ast.parse(path.read_text(), rel))
        if lines:
            found[rel] = lines
    assert not found, f"catch OSError/ssl.SSLError with net.connect (connecting, exchanging, lost): {found}"


def test_the_scan_sees_what_it_should() -> None:
    caught = ast.parse("try:\n    x()\nexcept (OSError, RuntimeError) as exc:\n    raise ConnectError('x')\n")
    checked = ast.parse("if isinstance(exc, ssl.SSLError):\n    return errors.ConnectError('x')\n")
    other = ast.parse("try:\n    x()\nexcept RuntimeError as exc:\n    raise ConnectError('x')\n")
    mapped = ast.parse("try:\n    x()\nexcept OSError as exc:\n    raise lost(exc, url, 'reading') from exc\n")
    assert own_connect_errors(caught) == [3]
    assert own_connect_errors(checked) == [1]
    assert own_connect_errors(other) == own_connect_errors(mapped) == []


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_refused_connect_reads_as_the_system_says() -> None:
    port = _closed_port()

    async def go() -> None:
        await open_stream("x://", "x", "127.0.0.1", port, timeout=10)

    with pytest.raises(anyurl.ConnectError) as info:
        asyncio.run(go())
    assert str(info.value) == f"x://: cannot connect to 127.0.0.1:{port}: Connection refused"
    assert isinstance(info.value.__cause__, ConnectionRefusedError)


def test_a_connect_past_its_deadline_is_a_fetch_timeout_with_one_wording() -> None:
    # a listener whose backlog is full takes no more connections: the connect waits
    async def go() -> None:
        with socket.socket() as lsock:
            lsock.bind(("127.0.0.1", 0))
            lsock.listen(0)
            port = lsock.getsockname()[1]
            with connecting("u", f"127.0.0.1:{port}"):
                async with asyncio.timeout(0.05):
                    await asyncio.sleep(10)  # the deadline is what is tested, not the backlog
            raise AssertionError("not reached")

    with pytest.raises(anyurl.FetchTimeout) as info:
        asyncio.run(go())
    assert str(info.value).startswith("u: connecting to 127.0.0.1:")
    assert str(info.value).endswith(" timed out")


def _self_signed(tmp_path: Path) -> tuple[Path, Path]:
    import subprocess

    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
                    "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)], check=True,
                   capture_output=True, timeout=120)
    return cert, key


def test_an_untrusted_certificate_reads_as_ssl_says_not_as_an_errno(tmp_path: Path) -> None:
    # the bug: ssl.SSLCertVerificationError has errno 1, and os.strerror(1) is "Operation not permitted"
    cert, key = _self_signed(tmp_path)
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(cert, key)

    async def go() -> None:
        async def serve(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            w.close()

        server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=server_ctx)
        port = server.sockets[0].getsockname()[1]
        async with server:
            try:
                await open_transport("u", "x", "127.0.0.1", port, asyncio.Protocol, timeout=30,
                                     tls=ssl.create_default_context())
            finally:
                server.close()

    with pytest.raises(anyurl.ConnectError) as info:
        asyncio.run(go())
    text = str(info.value)
    assert text.startswith("u: TLS handshake with 127.0.0.1:")
    assert text.endswith(" failed: certificate verify failed: self-signed certificate"), text
    assert isinstance(info.value.__cause__, ssl.SSLCertVerificationError)


def test_tls_reason_drops_the_code_and_the_source_line() -> None:
    exc = ssl.SSLError(1, "[SSL: WRONG_VERSION_NUMBER] wrong version number (_ssl.c:1000)")
    assert tls_reason(exc) == "wrong version number"
    assert tls_reason(ssl.SSLEOFError(8, "EOF occurred in violation of protocol (_ssl.c:2427)")) \
        == "EOF occurred in violation of protocol"


def test_a_lost_connection_names_the_step_and_a_timeout_passes_through() -> None:
    with pytest.raises(anyurl.ConnectError) as info, exchanging("u", "reading a reply"):
        raise ConnectionResetError(104, "Connection reset by peer")
    assert str(info.value) == "u: connection lost while reading a reply: Connection reset by peer"
    with pytest.raises(TimeoutError), exchanging("u", "reading"):
        raise TimeoutError  # the driver words which wait ran out
    with pytest.raises(anyurl.ProtocolError), exchanging("u", "reading"):
        raise anyurl.ProtocolError("ours already")  # never re-wrapped

"""net/tls.py's EarlyTLS and net/tlsbio.py's adopted session, against a TLS server in a thread:
the handshake runs without asyncio, then the loop carries the session on (both ways, a
BufferedProtocol fed through its buffer, the peer's close_notify as EOF, our close_notify)."""

from __future__ import annotations

import asyncio
import os
import socket
import ssl
import threading
from pathlib import Path

import pytest
from fixtures.servers.aiosmtpd_server import make_cert

from anyurl.net.tls import EarlyTLS
from anyurl.net.tlsbio import adopt

PAYLOAD = os.urandom(300_000)  # more than one TLS record and one SSLObject.read
ALPN = ("x-anyurl-test",)  # a context of this test's own (client_context keeps one per options)


@pytest.fixture(scope="module")
def cert_key(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return make_cert(tmp_path_factory.mktemp("tls"))


class Server:
    """Reads b"hello", answers PAYLOAD, then ends the TLS stream (close_notify) and records
    whether the client's own close_notify came first when *wait_close* is set."""

    def __init__(self, cert: Path, key: Path, wait_close: bool) -> None:
        self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ctx.load_cert_chain(cert, key)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.wait_close = wait_close
        self.got = b""
        self.client_closed = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        conn, _ = self.listener.accept()
        self.listener.close()
        conn.settimeout(30)
        with self.ctx.wrap_socket(conn, server_side=True) as tls:
            while len(self.got) < 5:
                self.got += tls.recv(5 - len(self.got))
            tls.sendall(PAYLOAD)
            if self.wait_close:
                self.client_closed = tls.recv(1) == b""  # the client's close_notify (a bare FIN raises)
            else:
                tls.unwrap()  # close_notify, then the client's in answer
                self.client_closed = True


def _early(port: int) -> EarlyTLS:
    sock = socket.socket()
    sock.setblocking(False)
    sock.connect_ex(("127.0.0.1", port))
    early = EarlyTLS("127.0.0.1", False, ALPN)
    early.run(sock, 30.0)  # (the CLI runs it in a thread; no event loop is needed)
    assert early.sock is not None and early.sslobj is not None and early.ctx is not None
    return early


class Buffered(asyncio.BufferedProtocol):
    def __init__(self) -> None:
        self.data = bytearray()
        self.buf = bytearray(5000)  # smaller than a read: one delivery takes several buffers
        self.eof = asyncio.get_running_loop().create_future()
        self.lost = asyncio.get_running_loop().create_future()

    def get_buffer(self, sizehint: int) -> memoryview:
        return memoryview(self.buf)

    def buffer_updated(self, nbytes: int) -> None:
        self.data += self.buf[:nbytes]

    def eof_received(self) -> bool:
        self.eof.set_result(None)
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost.set_result(exc)


class Plain(asyncio.Protocol):
    def __init__(self) -> None:
        self.data = bytearray()
        self.lost = asyncio.get_running_loop().create_future()
        self.all = asyncio.Event()

    def data_received(self, data: bytes) -> None:
        self.data += data
        if len(self.data) >= len(PAYLOAD):
            self.all.set()

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost.set_result(exc)


def test_an_adopted_session_feeds_a_buffered_protocol_and_ends_at_close_notify(cert_key: tuple[Path, Path]) -> None:
    server = Server(*cert_key, wait_close=False)
    early = _early(server.port)

    async def main() -> tuple[bytes, Exception | None, object]:
        transport, proto = await adopt(early, Buffered)
        assert transport.get_extra_info("ssl_object") is early.sslobj
        transport.write(b"hello")
        await asyncio.wait_for(proto.eof, 30)  # the server's close_notify
        exc = await asyncio.wait_for(proto.lost, 30)
        return bytes(proto.data), exc, transport.get_extra_info("socket")

    data, exc, sock = asyncio.run(main())
    server.thread.join(30)
    assert server.got == b"hello" and server.client_closed
    assert data == PAYLOAD and exc is None and sock is not None


def test_closing_an_adopted_session_sends_close_notify(cert_key: tuple[Path, Path]) -> None:
    server = Server(*cert_key, wait_close=True)
    early = _early(server.port)

    async def main() -> bytes:
        transport, proto = await adopt(early, Plain)
        transport.write(b"hel")
        transport.writelines([b"l", b"o"])
        await asyncio.wait_for(proto.all.wait(), 30)
        transport.close()
        assert transport.is_closing()
        await asyncio.wait_for(proto.lost, 30)
        return bytes(proto.data)

    assert asyncio.run(main()) == PAYLOAD
    server.thread.join(30)
    assert server.got == b"hello" and server.client_closed


def test_a_handshake_that_fails_leaves_no_session(cert_key: tuple[Path, Path]) -> None:
    # a server that accepts and closes at once: the thread reports a failure and closes its socket
    with socket.create_server(("127.0.0.1", 0)) as listener:
        sock = socket.socket()
        sock.setblocking(False)
        sock.connect_ex(listener.getsockname())
        conn, _ = listener.accept()
        conn.close()
        early = EarlyTLS("127.0.0.1", False, ALPN)
        early.run(sock, 30.0)
    assert early.done and early.sock is None and sock.fileno() == -1
    called: list[bool] = []
    early.when_done(lambda: called.append(True))  # (done already: at once)
    assert called == [True]

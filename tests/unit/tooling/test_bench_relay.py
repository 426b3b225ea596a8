"""The WAN group's latency relay (bench/relay.py): the delays it promises, on real sockets.

Lower bounds are exact (the relay must never deliver early); upper bounds are generous,
for a loaded machine."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from bench.relay import parse_spec
from tests.procs import spawn

ROOT = Path(__file__).resolve().parents[3]
RTT = 0.2  # s


def test_parse_spec_ranges() -> None:
    assert parse_spec("127.0.0.2:21=127.0.0.1:2121") == [(("127.0.0.2", 21), ("127.0.0.1", 2121))]
    assert parse_spec("127.0.0.2:30000-30002=127.0.0.1:30000") == [
        (("127.0.0.2", p), ("127.0.0.1", p)) for p in (30000, 30001, 30002)]


class Upstream:
    """A server that records when it accepted, answers each line with the line back, and
    sends a greeting first when asked."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.accepted: list[float] = []
        self.got: list[bytes] = []
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted.append(time.monotonic())
            threading.Thread(target=self.echo, args=(conn,), daemon=True).start()

    def echo(self, conn: socket.socket) -> None:
        with conn:
            conn.sendall(b"hello\n")
            data = b""
            while chunk := conn.recv(65536):
                data += chunk
                self.got.append(chunk)
                conn.sendall(chunk)
            # the client's EOF arrived: answer it with ours
            conn.shutdown(socket.SHUT_WR)


@pytest.fixture
def relayed() -> Iterator[tuple[Upstream, int]]:
    up = Upstream()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    try:
        with spawn([sys.executable, "-m", "bench.relay", "--rtt", str(RTT * 1000),
                    f"127.0.0.1:{port}=127.0.0.1:{up.port}"], stdout=subprocess.PIPE, text=True, cwd=ROOT) as proc:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
            yield up, port
    finally:
        up.sock.close()


def _read_until(sock: socket.socket, want: bytes, deadline: float) -> bytes:
    data = b""
    sock.settimeout(max(0.1, deadline - time.monotonic()))
    while want not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def test_handshake_and_round_trips(relayed: tuple[Upstream, int]) -> None:
    up, port = relayed
    t0 = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
        # the greeting: sent at the server's accept (1.5 RTT), here half an RTT later
        assert _read_until(c, b"hello\n", t0 + 10) == b"hello\n"
        greeted = time.monotonic()
        assert up.accepted and up.accepted[0] - t0 >= 1.5 * RTT
        assert 2 * RTT <= greeted - t0 < 2 * RTT + 5
        # one request, one answer: a whole round trip
        c.sendall(b"ping\n")
        assert _read_until(c, b"ping\n", greeted + 10) == b"ping\n"
        assert RTT <= time.monotonic() - greeted < RTT + 5
        # many chunks in order, and an EOF travelling both ways
        sent = b"".join(f"line {i}\n".encode() for i in range(2000))
        for i in range(0, len(sent), 1000):
            c.sendall(sent[i:i + 1000])
        c.shutdown(socket.SHUT_WR)
        back = b""
        c.settimeout(10)
        while chunk := c.recv(65536):
            back += chunk
        assert back == sent
        assert b"".join(up.got) == b"ping\n" + sent


def test_refused_upstream_closes_the_client() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]  # nothing listens there once s is closed
        s.close()
        with socket.socket() as r:
            r.bind(("127.0.0.1", 0))
            port = r.getsockname()[1]
    with spawn([sys.executable, "-m", "bench.relay", "--rtt", "20", f"127.0.0.1:{port}=127.0.0.1:{dead}"],
               stdout=subprocess.PIPE, text=True, cwd=ROOT) as proc:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
            try:
                assert c.recv(100) == b""
            except ConnectionResetError:
                pass


def test_udp_datagrams_each_way_take_half_the_round_trip() -> None:
    """``udp:LISTEN=TARGET``: an echo server's answer comes back one RTT after the datagram left,
    datagrams keep their order and their bounds, and two client addresses are two flows."""
    echo = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    echo.bind(("127.0.0.1", 0))
    arrived: list[float] = []

    def serve() -> None:
        while True:
            try:
                data, addr = echo.recvfrom(65536)
            except OSError:
                return
            arrived.append(time.monotonic())
            echo.sendto(data, addr)

    threading.Thread(target=serve, daemon=True).start()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    try:
        with spawn([sys.executable, "-m", "bench.relay", "--rtt", str(RTT * 1000),
                    f"udp:127.0.0.1:{port}=127.0.0.1:{echo.getsockname()[1]}"],
                   stdout=subprocess.PIPE, text=True, cwd=ROOT) as proc:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
            clients = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(2)]
            try:
                for c in clients:
                    c.settimeout(10)
                    c.connect(("127.0.0.1", port))
                t0 = time.monotonic()
                for i in range(20):
                    clients[i % 2].send(b"d%02d" % i + bytes(1200))
                got = [[], []]  # type: list[list[bytes]]
                for k, c in enumerate(clients):
                    while len(got[k]) < 10:
                        got[k].append(c.recv(65536))
                back = time.monotonic()
            finally:
                for c in clients:
                    c.close()
    finally:
        echo.close()
    assert [d[:3] for d in got[0]] == [b"d%02d" % i for i in range(0, 20, 2)]
    assert [d[:3] for d in got[1]] == [b"d%02d" % i for i in range(1, 20, 2)]
    assert all(len(d) == 1203 for d in got[0] + got[1])
    assert arrived and arrived[0] - t0 >= RTT / 2
    assert RTT <= back - t0 < RTT + 5

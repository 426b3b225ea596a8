"""TEST DOUBLES: small hostile servers that inject faults no real server produces.

Each runs in threads of the test process on a free loopback port, is used as a
context manager, and stops (closing its sockets, joining its threads) on exit.
Every loop is bounded by ``stop`` and by ``max_seconds`` (see
:class:`tests.hostile.fakes.base.ThreadServer`).

- :class:`TelnetNegotiationFlood`: answers a connection with an endless stream of
  ``IAC WILL x`` / ``IAC DO x`` and ``SB TTYPE SEND`` and no data.
- :class:`TelnetDeaf`: sends a prompt, then never reads a byte.
- :class:`ProsperoWaitForever`: answers every ARDP request with "wait" notices,
  forever, and never with the reply.
- :class:`ProsperoHugeReply`: answers a LIST with one link followed by N
  attribute lines (a valid but enormous reply).
"""

from __future__ import annotations

import socket
import time

from tests.hostile.fakes.base import ThreadServer

from anyurl.protocols.prospero import ARDPError, Header, decode_packet, encode_packet

IAC, SB, SE, WILL, DO = 255, 250, 240, 251, 253
TTYPE = 24


class TelnetNegotiationFlood(ThreadServer):
    """A Telnet "server" that negotiates and never sends a byte of data."""

    def __init__(self, max_seconds: float = 60.0) -> None:
        super().__init__(max_seconds)
        self._tcp_listener()
        self.bytes_sent = 0
        self.bytes_received = 0
        # one round: WILL and DO for every option, plus a terminal-type request
        burst = bytearray()
        for opt in range(256):
            burst += bytes((IAC, WILL, opt, IAC, DO, opt))
        burst += bytes((IAC, SB, TTYPE, 1, IAC, SE))
        self.burst = bytes(burst) * 16

    def answer(self, conn: socket.socket) -> None:
        conn.settimeout(0.2)
        self._spawn(self._drain, conn)
        self._spawn(self._flood, conn)

    def _drain(self, conn: socket.socket) -> None:
        # read what the client answers, so it is never held up writing
        while self.running():
            try:
                data = conn.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                return
            if not data:
                return
            self.bytes_received += len(data)

    def _flood(self, conn: socket.socket) -> None:
        with conn:
            while self.running():
                try:
                    conn.sendall(self.burst)
                except TimeoutError:
                    continue  # the client is busy: try again
                except OSError:
                    return  # the client went away
                self.bytes_sent += len(self.burst)


class TelnetDeaf(ThreadServer):
    """Sends a login prompt and then never reads, so the client's writes pile up."""

    def __init__(self, max_seconds: float = 60.0) -> None:
        super().__init__(max_seconds)
        self._tcp_listener()

    def answer(self, conn: socket.socket) -> None:
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # fill up soon
        conn.sendall(b"login: ")
        self.held.append(conn)


class _UDPServer(ThreadServer):
    def __init__(self, max_seconds: float = 60.0) -> None:
        super().__init__(max_seconds)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((self.host, 0))
        self.sock.settimeout(0.05)
        self.port = self.sock.getsockname()[1]
        self.requests = 0

    def _run(self) -> None:
        with self.sock:
            while self.running():
                try:
                    data, addr = self.sock.recvfrom(65536)
                except TimeoutError:
                    self.idle()
                    continue
                try:
                    header, _payload = decode_packet(data)
                except ARDPError:
                    continue
                self.on_packet(header, addr)

    def idle(self) -> None:
        """Called when no datagram arrived for 50 ms."""

    def on_packet(self, header: Header, addr: tuple[str, int]) -> None:
        raise NotImplementedError


class ProsperoWaitForever(_UDPServer):
    """Says "wait 30 more seconds" twice a second, forever; never replies."""

    def __init__(self, wait: int = 30, every: float = 0.5, max_seconds: float = 60.0) -> None:
        super().__init__(max_seconds)
        self.wait = wait
        self.every = every
        self.notices = 0
        self._client: tuple[int, tuple[str, int]] | None = None
        self._last = 0.0

    def on_packet(self, header: Header, addr: tuple[str, int]) -> None:
        if header.sequence:  # a request packet (not an acknowledgement)
            self.requests += 1
            self._client = (header.connection_id, addr)
            self._notify()

    def idle(self) -> None:
        if self._client and time.monotonic() - self._last >= self.every:
            self._notify()

    def _notify(self) -> None:
        assert self._client is not None
        conn_id, addr = self._client
        try:
            self.sock.sendto(encode_packet(Header(conn_id, 0, 0, 0, wait=self.wait)), addr)
        except OSError:
            return
        self.notices += 1
        self._last = time.monotonic()


class ProsperoHugeReply(_UDPServer):
    """Answers with ``LINK ...`` and *attributes* ATTRIBUTE lines, in big datagrams,
    paced so loopback does not drop them; resends what an acknowledgement says is missing."""

    def __init__(self, attributes: int = 100_000, payload: int = 8000, max_seconds: float = 60.0) -> None:
        super().__init__(max_seconds)
        lines = ["LINK L FILE big INTERNET-D files.example ASCII /pub/big"]
        lines += [f"ATTRIBUTE LINK FIELD NOTE-{i} 'value number {i}'" for i in range(attributes)]
        self.message = ("\n".join(lines) + "\n").encode()
        self.chunks = [self.message[i:i + payload] for i in range(0, len(self.message), payload)]
        self.sent_through = 0

    def on_packet(self, header: Header, addr: tuple[str, int]) -> None:
        total = len(self.chunks)
        if header.sequence:  # the request (one datagram)
            self.requests += 1
            self._send(header.connection_id, addr, 1)
        elif header.received_through < total:  # an acknowledgement with packets missing
            self._send(header.connection_id, addr, header.received_through + 1)

    def _send(self, conn_id: int, addr: tuple[str, int], first: int) -> None:
        total = len(self.chunks)
        for seq in range(first, total + 1):
            if not self.running():
                return
            flags = 0x80 if seq == total else 0
            packet = encode_packet(Header(conn_id, seq, total, 0, flags=flags), self.chunks[seq - 1])
            try:
                self.sock.sendto(packet, addr)
            except OSError:
                return
            if seq % 8 == 0:
                time.sleep(0.002)  # let the client's socket buffer drain
        self.sent_through = total

"""A latency relay on loopback: each TCP connection through it behaves as if the server
were RTT milliseconds away (the kernel here has no netem).

    python -m bench.relay --rtt MS LISTEN=TARGET [LISTEN=TARGET ...]

LISTEN and TARGET are HOST:PORT, or HOST:FIRST-LAST=HOST:FIRST for a range of ports (an
FTP server's passive ports). ``udp:LISTEN=TARGET`` relays UDP datagrams instead (QUIC: see
below). The relay prints ``ready`` once every listener is bound and runs until
SIGTERM/SIGINT, or until its parent exits.

The model, per connection:

* the handshake: the upstream connect starts 1.5 RTT after the relay accepts (SYN to the
  server, SYN-ACK back, the client's ACK: when the server's accept() returns on a real
  path). What the client sends before that waits, so a request sent at once still reaches
  the server at 1.5 RTT, as one sent after a real connect() (1 RTT) plus half an RTT would;
* every chunk read from either side is written to the other RTT/2 after it was read, in
  order, chunk by chunk (the sender's pacing kept); an EOF or a close travels the same way;
* a window: at most WINDOW bytes per direction in flight (queued here plus unsent to the
  receiver); past it the relay stops reading from the sender, as a full TCP window would.

The UDP model, per client address (one QUIC connection): the relay opens a socket of its own
towards TARGET for it; each datagram, either way, is sent on RTT/2 after it was read, in order.
No handshake is added (QUIC's handshake is datagrams, which the delay already holds back) and
no window: QUIC's own congestion control paces the sender. A datagram that cannot be sent at
once (the socket's buffer full) is dropped, as a full router queue would.

It runs one asyncio loop (uvloop when installed) with one timer per direction armed for
the oldest chunk only, so its CPU cost is one read and one write per chunk; docs/benchmarks.md
("WAN group") shows how it was checked not to be the bottleneck.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket
import sys
from collections import deque
from collections.abc import Callable
from typing import cast

WINDOW = 4 << 20  # bytes in flight per direction (a 4 MiB TCP window)
READ_LOW = WINDOW // 2
_EOF = b""  # a queued EOF (half-close)
_CLOSE = None  # a queued close (reset or error on the far side)


def _nodelay(transport: asyncio.BaseTransport) -> None:
    sock = transport.get_extra_info("socket")
    if sock is not None:
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass


class Lane:
    """One direction of one connection: chunks read from ``src`` written to ``dst`` *delay* s later."""

    def __init__(self, loop: asyncio.AbstractEventLoop, delay: float, pair: Pair) -> None:
        self.loop = loop
        self.delay = delay
        self.pair = pair
        self.queue: deque[tuple[float, bytes | None]] = deque()
        self.queued = 0
        self.src: asyncio.Transport | None = None
        self.dst: asyncio.Transport | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.src_paused = False
        self.ended = False  # EOF or close queued
        self.done = False  # EOF or close delivered

    def push(self, data: bytes | None) -> None:
        if not data:
            self.ended = True
        self.queue.append((self.loop.time() + self.delay, data))
        if data:
            self.queued += len(data)
            if self.src is not None and not self.src_paused and self.in_flight() > WINDOW:
                self.src_paused = True
                self.src.pause_reading()
        if self.timer is None:
            self.arm()

    def in_flight(self) -> int:
        return self.queued + (self.dst.get_write_buffer_size() if self.dst is not None else 0)

    def arm(self) -> None:
        if self.dst is not None and self.queue and self.timer is None:
            self.timer = self.loop.call_at(self.queue[0][0], self.flush)

    def flush(self) -> None:
        self.timer = None
        dst = self.dst
        if dst is None:
            return
        now = self.loop.time()
        # only what is due: uvloop's timers count whole milliseconds and may fire up to 1 ms
        # early (a test saw 0.1998 s for a 0.2 s round trip); arm() below waits for the rest
        while self.queue and self.queue[0][0] <= now:
            _, data = self.queue.popleft()
            if data:
                self.queued -= len(data)
                if not dst.is_closing():
                    dst.write(data)
            elif data is None:
                self.done = True
                if not dst.is_closing():
                    dst.abort()
                self.pair.closed()
                return
            else:
                self.done = True
                if not dst.is_closing():
                    if dst.can_write_eof():
                        dst.write_eof()
                    else:
                        dst.close()
                self.pair.half_closed()
        self.maybe_resume()
        self.arm()

    def maybe_resume(self) -> None:
        if self.src_paused and self.src is not None and self.in_flight() < READ_LOW:
            self.src_paused = False
            if not self.src.is_closing():
                self.src.resume_reading()


class Side(asyncio.Protocol):
    """One socket of a pair: what it reads goes into ``lane_out``; it is ``lane_in``'s receiver."""

    def __init__(self, lane_out: Lane, lane_in: Lane) -> None:
        self.lane_out = lane_out
        self.lane_in = lane_in
        self.transport: asyncio.Transport | None = None
        self.sock: socket.socket | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport = cast(asyncio.Transport, transport)  # (uvloop's is not a subclass)
        self.transport = transport
        self.sock = transport.get_extra_info("socket")
        _nodelay(transport)
        self.lane_out.src = transport
        self.lane_in.dst = transport
        self.lane_in.arm()

    def data_received(self, data: bytes) -> None:
        # ACK at once: a sender's Nagle wait on the relay's delayed ACK would add up to 40 ms
        # that the modelled path does not have (the round trip is the relay's to add)
        if self.sock is not None:
            try:
                self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)
            except OSError:
                pass
        self.lane_out.push(data)

    def eof_received(self) -> bool:
        self.lane_out.push(_EOF)
        return True  # keep writing the other direction

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.lane_out.ended:
            self.lane_out.push(_CLOSE if exc is not None else _EOF)

    def pause_writing(self) -> None:
        pass  # in_flight() counts the receiver's unsent bytes

    def resume_writing(self) -> None:
        self.lane_in.maybe_resume()


class Pair:
    """A client connection and its upstream connection."""

    def __init__(self, loop: asyncio.AbstractEventLoop, rtt: float, target: tuple[str, int]) -> None:
        self.loop = loop
        self.up = Lane(loop, rtt / 2, self)
        self.down = Lane(loop, rtt / 2, self)
        self.client = Side(self.up, self.down)
        self.server: Side | None = None
        self.target = target
        loop.call_later(1.5 * rtt, self.connect)

    def connect(self) -> None:
        self.loop.create_task(self._connect())

    async def _connect(self) -> None:
        try:
            await self.loop.create_connection(lambda: Side(self.down, self.up), *self.target)
        except OSError:
            self.down.push(_CLOSE)  # refused upstream: the client sees a reset half an RTT later
            self.down.dst = self.client.transport
            self.down.arm()

    def half_closed(self) -> None:
        if self.up.done and self.down.done:
            self.closed()

    def closed(self) -> None:
        """Both ways ended, or one side was reset: close both sockets (what is queued towards
        a reset side is dropped, as the peer's RST would)."""
        for lane in (self.up, self.down):
            if lane.timer is not None and lane.done:
                lane.timer.cancel()
                lane.timer = None
            if lane.dst is not None and not lane.dst.is_closing():
                lane.dst.close()


class Datagrams:
    """One direction of one UDP flow: datagrams sent by ``send`` *delay* s after they were read,
    in order, with one timer armed for the oldest."""

    def __init__(self, loop: asyncio.AbstractEventLoop, delay: float) -> None:
        self.loop = loop
        self.delay = delay
        self.queue: deque[tuple[float, bytes]] = deque()
        self.send: Callable[[bytes], None] | None = None  # set once the far socket is ready
        self.timer: asyncio.TimerHandle | None = None

    def push(self, data: bytes) -> None:
        self.queue.append((self.loop.time() + self.delay, data))
        if self.timer is None:
            self.arm()

    def arm(self) -> None:
        if self.send is not None and self.queue and self.timer is None:
            self.timer = self.loop.call_at(self.queue[0][0], self.flush)

    def flush(self) -> None:
        self.timer = None
        send = self.send
        now = self.loop.time()
        while send is not None and self.queue and self.queue[0][0] <= now:
            send(self.queue.popleft()[1])
        self.arm()


class UpstreamUDP(asyncio.DatagramProtocol):
    """The relay's socket towards the server for one client address."""

    def __init__(self, down: Datagrams) -> None:
        self.down = down

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        self.down.push(data)

    def error_received(self, exc: Exception) -> None:
        pass  # (an ICMP error from the server's side: the datagram is lost, as on a real path)


class ListenerUDP(asyncio.DatagramProtocol):
    """A UDP listener: one flow (two :class:`Datagrams`) per client address."""

    def __init__(self, loop: asyncio.AbstractEventLoop, rtt: float, target: tuple[str, int]) -> None:
        self.loop = loop
        self.rtt = rtt
        self.target = target
        self.transport: asyncio.DatagramTransport | None = None
        self.flows: dict[tuple[str, int], Datagrams] = {}

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.DatagramTransport, transport)

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        up = self.flows.get(addr)
        if up is None:
            up = self.flows[addr] = Datagrams(self.loop, self.rtt / 2)
            down = Datagrams(self.loop, self.rtt / 2)
            listener = self.transport

            def to_client(d: bytes, addr: tuple[str, int] = addr) -> None:
                if listener is not None and not listener.is_closing():
                    listener.sendto(d, addr)

            down.send = to_client
            self.loop.create_task(self._open(up, down))
        up.push(data)

    async def _open(self, up: Datagrams, down: Datagrams) -> None:
        transport, _ = await self.loop.create_datagram_endpoint(lambda: UpstreamUDP(down), remote_addr=self.target)
        dt = cast(asyncio.DatagramTransport, transport)

        def to_server(d: bytes) -> None:
            if not dt.is_closing():
                dt.sendto(d)

        up.send = to_server
        up.arm()

    def error_received(self, exc: Exception) -> None:
        pass


def parse_spec(spec: str) -> list[tuple[tuple[str, int], tuple[str, int]]]:
    """``HOST:PORT=HOST:PORT`` or ``HOST:FIRST-LAST=HOST:FIRST`` as (listen, target) pairs."""
    listen, _, target = spec.partition("=")
    lhost, _, lports = listen.rpartition(":")
    thost, _, tport = target.rpartition(":")
    first, _, last = lports.partition("-")
    lo, hi = int(first), int(last or first)
    return [((lhost, p), (thost, int(tport) + p - lo)) for p in range(lo, hi + 1)]


async def serve(rtt: float, pairs: list[tuple[tuple[str, int], tuple[str, int]]],
                udp: list[tuple[tuple[str, int], tuple[str, int]]] | None = None) -> None:
    loop = asyncio.get_running_loop()
    stop: asyncio.Future[None] = loop.create_future()

    def done() -> None:
        if not stop.done():
            stop.set_result(None)

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, done)
    servers = []
    for listen, target in pairs:
        def factory(target: tuple[str, int] = target) -> Side:
            return Pair(loop, rtt, target).client
        servers.append(await loop.create_server(factory, *listen, backlog=512))
    endpoints = []
    for listen, target in udp or ():
        def udp_factory(target: tuple[str, int] = target) -> ListenerUDP:
            return ListenerUDP(loop, rtt, target)
        transport, _ = await loop.create_datagram_endpoint(udp_factory, local_addr=listen)
        endpoints.append(transport)
    print("ready", flush=True)
    parent = os.getppid()

    def watch() -> None:  # stop by itself when the bench that started it is gone
        if os.getppid() != parent:
            done()
        else:
            loop.call_later(1.0, watch)

    watch()
    await stop
    for s in servers:
        s.close()
    for t in endpoints:
        t.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.relay", description=__doc__.split("\n\n")[0])
    ap.add_argument("--rtt", type=float, required=True, help="round trip added, in ms")
    ap.add_argument("specs", nargs="+", metavar="LISTEN=TARGET")
    args = ap.parse_args(argv)
    pairs = [p for spec in args.specs if not spec.startswith("udp:") for p in parse_spec(spec)]
    udp = [p for spec in args.specs if spec.startswith("udp:") for p in parse_spec(spec[4:])]
    try:
        import uvloop
    except ImportError:
        asyncio.run(serve(args.rtt / 1000, pairs, udp))
    else:
        uvloop.run(serve(args.rtt / 1000, pairs, udp))
    return 0


if __name__ == "__main__":
    sys.exit(main())

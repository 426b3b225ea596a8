"""TEST DOUBLE: a tiny Prospero v5 / ARDP v0 directory server, for tests only.

No Prospero server is packaged anywhere we can reach, so this speaks just
what the anyurl client uses (VERSION, AUTHENTICATE, DIRECTORY + LIST,
GET-OBJECT-INFO) over ARDP, written from the protocol documents — not
from the client's code, beyond the shared packet codec — and misbehaves on
request through :class:`Faults`: lost requests, lost reply packets,
duplicates, reordering, a slow reply (announced with an ARDP wait packet),
garbage datagrams. ``log`` keeps every request line it received.

Run standalone: ``python -m tests.prospero_testserver --port 1525 --http-base http://127.0.0.1:8080``.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import time
from dataclasses import dataclass, field
from typing import Any

from anyurl.protocols.prospero import (
    ACK_REQUESTED,
    ARDPError,
    Header,
    decode_packet,
    encode_packet,
    join_tokens,
    split_tokens,
)

RESEND_AFTER = 0.1  # seconds before a packet is sent again in answer to an acknowledgement


@dataclass
class Faults:
    """Misbehaviour, changeable between requests."""

    drop_requests: int = 0  # ignore this many request datagrams
    drop_reply: set[int] = field(default_factory=set)  # lose the first sending of these packet numbers
    drop_every_first: bool = False  # lose the first sending of every reply packet
    duplicate: bool = False  # send every reply packet twice
    reorder: bool = False  # send reply packets last first
    slow: float = 0.0  # announce a wait, then answer after this many seconds
    garbage: bool = False  # send an undecodable datagram before the reply
    max_payload: int = 1000  # reply octets per packet
    window: int = 16  # packets sent beyond the client's received-through
    never_answer: bool = False


@dataclass
class _Object:
    kind: str  # "DIRECTORY" or "FILE"
    lines: list[str]  # LINK/ATTRIBUTE lines (directory) or ATTRIBUTE lines (file)
    versions: dict[str, list[str]] = field(default_factory=dict)


def access_line(method: str, *elements: str) -> str:
    return join_tokens(["ATTRIBUTE", "OBJECT", "INTRINSIC", "ACCESS-METHOD", "SEQUENCE", method, *elements])


def build_tree(self_host: str, http_base: str, file_path: str) -> dict[str, _Object]:
    """The served tree. *http_base* is ``http://host:port`` of a real HTTP server (nginx)."""
    http_hostport = http_base.split("://", 1)[1].rstrip("/")
    http_host, _, http_port = http_hostport.partition(":")
    http_addr = f"{http_host}({http_port})" if http_port else http_host
    me = self_host
    pub = [
        join_tokens(["LINK", "L", "DIRECTORY", "many", "INTERNET-D", me, "ASCII", "/pub/many"]),
        join_tokens(["LINK", "L", "EXTERNAL", "hello.txt", "INTERNET-D", http_addr, "ASCII", "/hello.txt"]),
        access_line("HTTP", "", "", "", ""),
        join_tokens(["LINK", "L", "EXTERNAL", "rfc1738.txt", "INTERNET-D", "ftp.example.org", "ASCII",
                     "/pub/rfc/rfc1738.txt"]),
        access_line("AFTP", "", "", "", "", "BINARY"),
        join_tokens(["LINK", "L", "EXTERNAL", "gopher menu", "INTERNET-D", "gopher.example.org(7070)", "ASCII",
                     "/a dir"]),
        access_line("GOPHER", "", "", "", "", "1"),
        join_tokens(["LINK", "L", "FILE", "hello", "INTERNET-D", me, "ASCII", "/pub/hello", "VERSION", "2"]),
        join_tokens(["LINK", "L", "FILE", "local", "INTERNET-D", me, "ASCII", "/pub/local"]),
    ]
    many = [join_tokens(["LINK", "L", "FILE", f"file-{i:04d} with a longish name", "INTERNET-D", me,
                         "ASCII", f"/pub/many/file-{i:04d}"]) for i in range(300)]
    return {
        "/pub": _Object("DIRECTORY", pub),
        "/pub/many": _Object("DIRECTORY", many),
        "/pub/empty": _Object("DIRECTORY", []),
        "/pub/hello": _Object("FILE", [access_line("HTTP", "INTERNET-D", http_addr, "ASCII", "/hello.txt")],
                              {"1": [access_line("HTTP", "INTERNET-D", http_addr, "ASCII", "/index.html")]}),
        "/pub/local": _Object("FILE", [access_line("LOCAL", "", "", "ASCII", file_path)]),
        "/pub/afs": _Object("FILE", [access_line("AFS", "", "", "", "")]),
    }


class ProsperoTestServer(asyncio.DatagramProtocol):
    """The ARDP server side: reassemble a request, answer, retransmit on acknowledgements."""

    def __init__(self, tree: dict[str, _Object], faults: Faults | None = None) -> None:
        self.tree = tree
        self.faults = faults or Faults()
        self.log: list[str] = []  # request lines, in arrival order
        self.datagrams = 0
        self.acks = 0
        self.retransmitted = 0
        self.transport: asyncio.DatagramTransport | None = None
        self._replies: dict[tuple[Any, int], list[bytes]] = {}
        self._requests: dict[tuple[Any, int], dict[int, bytes]] = {}
        self._sent_once: set[tuple[Any, int, int]] = set()
        self._pending: set[tuple[Any, int]] = set()
        self._last_sent: dict[tuple[tuple[Any, int], int], float] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def datagram_received(self, data: bytes, addr: Any) -> None:
        self.datagrams += 1
        try:
            header, payload = decode_packet(data)
        except ARDPError:
            return
        key = (addr, header.connection_id)
        if header.sequence == 0:
            self.acks += 1
            self._on_ack(key, header, addr)
            return
        if self.faults.drop_requests > 0:
            self.faults.drop_requests -= 1
            return
        if key in self._pending:
            return  # still working on it
        if key in self._replies:  # the client retransmitted its request: it lost our reply
            self._send(key, addr, from_packet=1)
            return
        parts = self._requests.setdefault(key, {})
        parts[header.sequence] = payload
        total = header.total or 1
        if len(parts) < total:
            return
        del self._requests[key]
        self._pending.add(key)
        message = b"".join(parts[i] for i in range(1, total + 1)).decode("utf-8", "replace")
        task = asyncio.get_running_loop().create_task(self._answer(key, addr, message))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _on_ack(self, key: tuple[Any, int], header: Header, addr: Any) -> None:
        packets = self._replies.get(key)
        if packets is None:
            return
        if header.received_through >= len(packets):
            del self._replies[key]  # all delivered
            return
        # Resend what is unacknowledged, but not packets sent moments ago (they
        # may still be in flight): that keeps reordered bursts from snowballing.
        self._send(key, addr, from_packet=header.received_through + 1, min_age=RESEND_AFTER)

    async def _answer(self, key: tuple[Any, int], addr: Any, message: str) -> None:
        f = self.faults
        if f.slow:
            assert self.transport is not None
            wait = max(1, math.ceil(f.slow))
            self.transport.sendto(encode_packet(Header(key[1], 0, 0, 0, wait)), addr)
            await asyncio.sleep(f.slow)
        reply = self.respond(message).encode("utf-8")
        if f.never_answer:
            return
        chunks = [reply[i:i + f.max_payload] for i in range(0, len(reply), f.max_payload)] or [b""]
        total = len(chunks)
        # The last packet of each window asks for an acknowledgement.
        self._replies[key] = [
            encode_packet(Header(key[1], i, total, 1,
                                 flags=ACK_REQUESTED if i == total or i % f.window == 0 else 0), chunk)
            for i, chunk in enumerate(chunks, start=1)
        ]
        self._pending.discard(key)
        self._send(key, addr, from_packet=1)

    def _send(self, key: tuple[Any, int], addr: Any, from_packet: int, min_age: float = 0.0) -> None:
        assert self.transport is not None
        f = self.faults
        packets = self._replies.get(key, [])
        now = time.monotonic()
        end = min(len(packets), from_packet - 1 + f.window)
        numbers = [n for n in range(from_packet, end + 1)
                   if now - self._last_sent.get((key, n), -1e9) >= min_age]
        for n in numbers:
            self._last_sent[(key, n)] = now
        if f.reorder:
            numbers.reverse()
        if f.garbage:
            self.transport.sendto(b"\xff\x00garbage", addr)
        for n in numbers:
            first = (key[0], key[1], n) not in self._sent_once
            self._sent_once.add((key[0], key[1], n))
            if not first:
                self.retransmitted += 1
            if first and (f.drop_every_first or n in f.drop_reply):
                continue
            self.transport.sendto(packets[n - 1], addr)
            if f.duplicate:
                self.transport.sendto(packets[n - 1], addr)

    # -- the command language --------------------------------------------------

    def respond(self, message: str) -> str:
        lines = [ln for ln in message.split("\n") if ln.strip()]
        self.log.extend(lines)
        try:
            commands = [split_tokens(ln) for ln in lines]
        except ARDPError as exc:
            return f"ERROR {join_tokens([str(exc)])}\n"
        version_ok = False
        target: tuple[str, str | None] | None = None
        out: list[str] = []
        for tokens in commands:
            word = tokens[0].upper()
            if word == "VERSION":
                if len(tokens) < 2 or tokens[1] != "5":
                    return "VERSION-NOT-SUPPORTED 5\n"
                version_ok = True
            elif not version_ok:
                return "ERROR 'VERSION must come first'\n"
            elif word == "AUTHENTICATE":
                if len(tokens) < 3 or tokens[2].upper() != "UNAUTHENTICATED":
                    return "NOT-AUTHORIZED 'only UNAUTHENTICATED is accepted'\n"
            elif word == "DIRECTORY":
                target = self._target(tokens[1:])
            elif word == "LIST":
                if target is None:
                    return "ERROR 'LIST without DIRECTORY'\n"
                obj = self.tree.get(target[0])
                if obj is None:
                    return f"FAILURE NOT-FOUND {join_tokens([target[0]])}\n"
                if obj.kind != "DIRECTORY":
                    return f"FAILURE NOT-A-DIRECTORY {join_tokens([target[0]])}\n"
                out.extend(obj.lines or ["NONE-FOUND"])
            elif word == "GET-OBJECT-INFO":
                hso, version = self._target(tokens[2:])
                obj = self.tree.get(hso)
                if obj is None:
                    return f"FAILURE NOT-FOUND {join_tokens([hso])}\n"
                out.append(f"OBJECT-INFO {obj.kind}")
                if version is not None and version not in obj.versions and obj.versions:
                    return f"FAILURE NOT-FOUND {join_tokens([hso, 'VERSION', version])}\n"
                out.extend(obj.versions.get(version or "", obj.lines))
            else:
                return f"ERROR {join_tokens(['unknown command ' + word])}\n"
        return "\n".join(out) + "\n"

    def _target(self, tokens: list[str]) -> tuple[str, str | None]:
        # ASCII <hsoname> [VERSION <n>] [ID <type> <value>]...
        hso = tokens[1] if len(tokens) > 1 else ""
        version = None
        if "VERSION" in tokens[2:]:
            i = tokens.index("VERSION", 2)
            version = tokens[i + 1] if i + 1 < len(tokens) else None
        return hso, version


async def start(host: str = "127.0.0.1", port: int = 0, *, http_base: str = "http://127.0.0.1:80",
                file_path: str = "/etc/hostname", faults: Faults | None = None
                ) -> tuple[asyncio.DatagramTransport, ProsperoTestServer, int]:
    """Start the test double in the running loop; returns (transport, server, port)."""
    loop = asyncio.get_running_loop()
    holder: dict[str, ProsperoTestServer] = {}

    def factory() -> ProsperoTestServer:
        holder["s"] = ProsperoTestServer({}, faults)
        return holder["s"]

    transport, _ = await loop.create_datagram_endpoint(factory, local_addr=(host, port))
    bound = transport.get_extra_info("sockname")[1]
    server = holder["s"]
    server.tree = build_tree(f"{host}({bound})", http_base, file_path)
    return transport, server, bound


def main() -> None:
    ap = argparse.ArgumentParser(description="Prospero/ARDP TEST DOUBLE (not a real Prospero server)")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=1525)
    ap.add_argument("--http-base", default="http://127.0.0.1:80")
    args = ap.parse_args()

    async def run() -> None:
        transport, _server, port = await start(args.host, args.port, http_base=args.http_base)
        print(f"prospero test double on {args.host}:{port}", flush=True)
        try:
            await asyncio.Event().wait()
        finally:
            transport.close()

    asyncio.run(run())


if __name__ == "__main__":
    main()

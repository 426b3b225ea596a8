"""A small HTTP/2 server over TLS (ALPN "h2", the h2 library server-side) that injects
what nginx will not: GOAWAY mid-batch, RST_STREAM REFUSED_STREAM, a flood of headers,
a stalled stream, a low SETTINGS_MAX_CONCURRENT_STREAMS, answers that take a while ("paced"),
a header block of the test's own bytes ("block", by path).

Each request's answer is ``body_for(path)``: bytes a test recomputes. The server
counts connections, requests and the most streams open at once on a connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from pathlib import Path
from types import TracebackType
from typing import Self

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.settings

HOST = "127.0.0.1"


def body_for(path: str, size: int = 4096) -> bytes:
    """The body served for *path*: *size* bytes derived from it."""
    seed = path.encode()
    return (seed * (size // max(1, len(seed)) + 1))[:size]


class H2FaultServer:
    """``mode`` says the fault (see :meth:`_answer`); ``size`` the body size of each answer."""

    def __init__(self, cert: Path, key: Path, mode: str = "ok", *, size: int = 4096,
                 max_streams: int | None = None, hold: int = 4, quiet: float = 0.05,
                 blocks: dict[str, bytes] | None = None) -> None:
        self.mode = mode
        self.blocks = blocks or {}  # "block": the HPACK header block answered to each path
        self.quiet = quiet  # "slow": how long no request comes before the gathered ones are answered
        self.size = size
        self.max_streams = max_streams
        self.hold = hold  # goaway mode: requests awaited before the GOAWAY
        self.ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.ctx.load_cert_chain(cert, key)
        self.ctx.set_alpn_protocols(["h2"])
        self.port = 0
        self.connections = 0
        self.requests: list[str] = []
        self.refused: list[int] = []
        self.most_open = 0  # the most streams open at once on one connection
        self.before_first_answer = 0  # requests received before the first answer was sent
        self.answered = False
        self.sent = 0  # "flow": body bytes sent so far (as the client's windows allowed)
        self._pending: dict[int, bytes] = {}  # "flow": what each stream still has to send
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> Self:
        self._server = await asyncio.start_server(self._handle, HOST, 0, ssl=self.ctx)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, et: type[BaseException] | None, ev: BaseException | None,
                        tb: TracebackType | None) -> None:
        assert self._server is not None
        self._server.close()
        for t in list(self._tasks):
            t.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.connections += 1
        number = self.connections
        # ("malformed" sends heads h2 would refuse to send)
        bad = self.mode == "malformed"
        conn = h2.connection.H2Connection(h2.config.H2Configuration(
            client_side=False, header_encoding=None, validate_outbound_headers=not bad,
            normalize_outbound_headers=not bad))
        conn.initiate_connection()
        if self.max_streams is not None:
            conn.update_settings({h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: self.max_streams})
        if self.mode == "late-settings":  # the client's requests wait in the socket meanwhile
            await asyncio.sleep(0.5)
        writer.write(conn.data_to_send())
        open_streams: set[int] = set()
        waiting: list[tuple[int, str]] = []
        try:
            async with asyncio.timeout(60):
                while True:
                    # "slow": requests gather until none came for `quiet` seconds, then all are
                    # answered (so the most open at once is what the client sent before an answer)
                    gather = self.mode == "slow" and waiting
                    try:
                        async with asyncio.timeout(self.quiet if gather else None):
                            data = await reader.read(65536)
                    except TimeoutError:
                        data = None
                    if data == b"":
                        break
                    for ev in conn.receive_data(data or b""):
                        if isinstance(ev, h2.events.RequestReceived):
                            path = dict(ev.headers or [])[b":path"].decode()
                            self.requests.append(path)
                            open_streams.add(ev.stream_id)
                            self.most_open = max(self.most_open, len(open_streams))
                            waiting.append((ev.stream_id, path))
                        elif isinstance(ev, h2.events.StreamReset):
                            open_streams.discard(ev.stream_id)
                            self._pending.pop(ev.stream_id, None)
                    if self.mode == "flow":
                        for sid in self._send_pending(conn):
                            open_streams.discard(sid)
                    if data and self.mode == "slow":
                        writer.write(conn.data_to_send())
                        continue
                    if waiting and not self.answered:
                        self.answered = True
                        self.before_first_answer = len(self.requests)
                    done = await self._answer(conn, writer, number, waiting)
                    for sid in done:
                        open_streams.discard(sid)
                    writer.write(conn.data_to_send())
                    await writer.drain()
                    if conn.state_machine.state == h2.connection.ConnectionState.CLOSED and not open_streams:
                        break
        except (OSError, TimeoutError, asyncio.IncompleteReadError, h2.exceptions.ProtocolError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
            self._tasks.discard(task)

    def _send(self, conn: h2.connection.H2Connection, sid: int, path: str,
              extra: list[tuple[bytes, bytes]] | None = None, end: bool = True) -> None:
        body = body_for(path, self.size)
        conn.send_headers(sid, [(b":status", b"200"), (b"content-length", str(len(body)).encode()),
                                (b"content-type", b"application/octet-stream"), *(extra or [])])
        if end:
            self._data(conn, sid, body)

    def _send_pending(self, conn: h2.connection.H2Connection) -> list[int]:
        """ "flow": send what the client's windows allow now; the streams finished."""
        done = []
        for sid, rest in list(self._pending.items()):
            room = min(conn.local_flow_control_window(sid), conn.max_outbound_frame_size)
            while rest and room > 0:
                conn.send_data(sid, rest[:room])
                self.sent += min(room, len(rest))
                rest = rest[room:]
                room = min(conn.local_flow_control_window(sid), conn.max_outbound_frame_size)
            if rest:
                self._pending[sid] = rest
            else:
                conn.end_stream(sid)
                del self._pending[sid]
                done.append(sid)
        return done

    @staticmethod
    def _data(conn: h2.connection.H2Connection, sid: int, body: bytes) -> None:
        step = conn.max_outbound_frame_size
        for i in range(0, len(body), step):
            conn.send_data(sid, body[i:i + step])
        conn.end_stream(sid)

    async def _answer(self, conn: h2.connection.H2Connection, writer: asyncio.StreamWriter, number: int,
                      waiting: list[tuple[int, str]]) -> list[int]:
        """Answer what waits, by mode; the stream ids finished."""
        mode = self.mode
        done: list[int] = []
        if mode == "paced" and waiting:  # each answer takes a while (a large file, say)
            await asyncio.sleep(0.25)
        if mode == "goaway" and number == 1:
            # the first connection: wait for `hold` requests, then GOAWAY naming the second
            # one as the last processed; answer the first two after the GOAWAY, drop the rest
            if len(waiting) < self.hold:
                return done
            last = waiting[1][0]
            conn.close_connection(error_code=h2.errors.ErrorCodes.NO_ERROR, last_stream_id=last)
            writer.write(conn.data_to_send())
            await writer.drain()
            await asyncio.sleep(0.05)  # the client reads the GOAWAY before the answers
            for sid, path in waiting[:2]:
                # (h2 refuses to send after its own GOAWAY: frames written by hand would do,
                # but a fresh state machine is simpler: the bytes are those of the answer)
                self._raw_answer(writer, sid, path)
                done.append(sid)
            waiting.clear()
            await writer.drain()
            return done
        if mode == "drop-second" and number == 1 and len(self.requests) >= 2:
            raise OSError("dropping the connection without a word")  # (the handler closes it)
        for sid, path in list(waiting):
            if mode == "reset":
                conn.reset_stream(sid, h2.errors.ErrorCodes.INTERNAL_ERROR)
            elif mode == "refuse" and number == 1 and len(self.refused) < 2:
                self.refused.append(sid)
                conn.reset_stream(sid, h2.errors.ErrorCodes.REFUSED_STREAM)
            elif mode == "flood":
                extra = [(f"x-flood-{i}".encode(), b"v" * 100) for i in range(1500)]
                conn.send_headers(sid, [(b":status", b"200"), *extra], end_stream=True)
            elif mode == "malformed" and path in MALFORMED:
                conn.send_headers(sid, MALFORMED[path], end_stream=True)
            elif mode == "block" and path in self.blocks:  # HEADERS (END_STREAM, END_HEADERS) by hand
                writer.write(_frame(0x1, 0x5, sid, self.blocks[path]))
            elif mode == "many-fields":
                extra = [(f"x-f{i}".encode(), b"v") for i in range(300)]
                conn.send_headers(sid, [(b":status", b"200"), *extra], end_stream=True)
            elif mode == "flow":
                body = body_for(path, self.size)
                conn.send_headers(sid, [(b":status", b"200"), (b"content-length", str(len(body)).encode())])
                self._pending[sid] = body
                self._send_pending(conn)
                continue
            elif mode == "stall" and path.startswith("/stall"):
                self._send(conn, sid, path, end=False)
                conn.send_data(sid, b"first piece")
                continue  # never more: the stream stays open
            else:
                self._send(conn, sid, path)
            done.append(sid)
        waiting.clear()
        return done

    def _raw_answer(self, writer: asyncio.StreamWriter, sid: int, path: str) -> None:
        """HEADERS + DATA frames for *sid* written by hand (after h2's own GOAWAY closed its state)."""
        from hpack import Encoder

        body = body_for(path, self.size)
        block = Encoder().encode([(b":status", b"200"), (b"content-length", str(len(body)).encode())])
        writer.write(_frame(0x1, 0x4, sid, block))
        for i in range(0, len(body), 16384):
            piece = body[i:i + 16384]
            writer.write(_frame(0x0, 0x1 if i + 16384 >= len(body) else 0x0, sid, piece))


#: "malformed": the response heads RFC 9113 8.1.1 calls malformed, by path
MALFORMED: dict[str, list[tuple[bytes, bytes]]] = {
    "/bad-upper": [(b":status", b"200"), (b"Content-Type", b"text/plain")],
    "/bad-crlf": [(b":status", b"200"), (b"x-note", b"a\r\nset-cookie: s=1")],
    "/bad-nul": [(b":status", b"200"), (b"x-note", b"a\0b")],
    "/bad-space": [(b":status", b"200"), (b"x-note", b" padded")],
    "/bad-no-status": [(b"content-type", b"text/plain")],
    "/bad-status": [(b":status", b"20x")],
    "/bad-two-status": [(b":status", b"200"), (b":status", b"404")],
    "/bad-late-pseudo": [(b":status", b"200"), (b"x-a", b"1"), (b":path", b"/")],
    "/bad-connection": [(b":status", b"200"), (b"connection", b"close")],
    "/bad-chunked": [(b":status", b"200"), (b"transfer-encoding", b"chunked")],
    "/bad-te": [(b":status", b"200"), (b"te", b"gzip")],
    "/bad-name": [(b":status", b"200"), (b"x a", b"1")],
}


def _frame(kind: int, flags: int, sid: int, payload: bytes) -> bytes:
    return len(payload).to_bytes(3, "big") + bytes([kind, flags]) + sid.to_bytes(4, "big") + payload

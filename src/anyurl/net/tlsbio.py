"""A TLS session finished before the event loop ran, carried on as an asyncio transport.

The CLI shakes hands with the first https server in a thread while asyncio imports
(:class:`anyurl.net.tls.EarlyTLS`); asyncio's own TLS transport (and uvloop's) can only start
a handshake, never adopt one. :func:`adopt` puts the session's socket under the loop as a plain
transport and layers the session on it here: what the protocol writes is encrypted into the
socket's transport, what arrives is decrypted and handed on (to a ``BufferedProtocol`` through
its buffer). Only what the drivers use is here: write, close and abort, reading paused and
resumed, the write buffer's size and limits, ``get_extra_info`` (``ssl_object`` for ALPN,
``socket``, ``peercert``) and ``set_protocol``.

A TLS error in what arrives ends the connection with that error; a close_notify is the
peer's EOF; :meth:`_Transport.close` sends close_notify before the socket closes.
"""

from __future__ import annotations

import asyncio
import ssl
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable

    from .tls import EarlyTLS

P = TypeVar("P", bound=asyncio.BaseProtocol)

__all__ = ["adopt"]

_READ = 1 << 18  # plaintext bytes per SSLObject.read, into one buffer (a fresh 256 KiB object per read is an mmap)


async def adopt(early: EarlyTLS, factory: Callable[[], P]) -> tuple[asyncio.Transport, P]:
    """(transport, protocol) for the finished session *early*: the protocol made by *factory*
    over a transport that speaks TLS on the session's socket."""
    assert early.sock is not None and early.sslobj is not None
    app = factory()
    layer = _Layer(early, app)
    loop = asyncio.get_running_loop()
    await loop.create_connection(lambda: layer, sock=early.sock)
    return layer.app_transport, app


class _Layer(asyncio.Protocol):
    """The socket transport's protocol: TLS records in, plaintext out to the application's protocol."""

    def __init__(self, early: EarlyTLS, app: asyncio.BaseProtocol) -> None:
        assert early.sslobj is not None
        self.sslobj: ssl.SSLObject = early.sslobj
        self.ctx = early.ctx
        self.incoming = early.incoming
        self.outgoing = early.outgoing
        self.app = app
        self.raw: asyncio.Transport | None = None
        self.app_transport = _Transport(self)
        self.closing = False
        self.eof = False  # the peer's close_notify or EOF was handed on
        self.error: BaseException | None = None
        self.buf = bytearray(_READ)
        self.view = memoryview(self.buf)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.raw = transport  # type: ignore[assignment]
        self.app.connection_made(self.app_transport)
        if self.incoming.pending:  # what arrived with the handshake's last flight (SETTINGS, tickets)
            self._decrypt()

    def data_received(self, data: bytes) -> None:
        self.incoming.write(data)
        self._decrypt()

    def _decrypt(self) -> None:
        chunks: list[bytes] = []
        closed = False
        read, buf, view = self.sslobj.read, self.buf, self.view
        try:
            while True:
                n = int(read(_READ, buf))  # (the count, given a buffer)
                if not n:
                    closed = True
                    break
                chunks.append(view[:n].tobytes())
        except ssl.SSLWantReadError:
            pass
        except ssl.SSLZeroReturnError:
            closed = True
        except ssl.SSLError as exc:
            self.fail(exc)
            return
        if self.outgoing.pending:  # a post-handshake answer (a key update)
            self.send()
        if chunks:
            self._deliver(chunks[0] if len(chunks) == 1 else b"".join(chunks))
        if closed and not self.eof:  # the peer's close_notify
            self.eof = True
            if not self.app.eof_received():  # type: ignore[attr-defined]
                self.app_transport.close()  # (our close_notify in answer, RFC 8446 6.1)

    def _deliver(self, data: bytes) -> None:
        app = self.app
        if isinstance(app, asyncio.BufferedProtocol):
            view = memoryview(data)
            while view:
                buf = memoryview(app.get_buffer(len(view))).cast("B")
                n = min(len(buf), len(view))
                if n <= 0:
                    raise RuntimeError("get_buffer() returned an empty buffer")
                buf[:n] = view[:n]
                app.buffer_updated(n)
                view = view[n:]
        else:
            app.data_received(data)  # type: ignore[attr-defined]

    def eof_received(self) -> bool | None:
        if self.eof:
            return False
        self.eof = True
        return bool(self.app.eof_received())  # type: ignore[attr-defined]

    def fail(self, exc: BaseException) -> None:
        self.error = exc
        if self.raw is not None:
            self.raw.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closing = True
        error = exc if exc is not None else self.error
        self.app.connection_lost(error)  # type: ignore[arg-type]

    def pause_writing(self) -> None:
        self.app.pause_writing()

    def resume_writing(self) -> None:
        self.app.resume_writing()

    def send(self) -> None:
        data = self.outgoing.read()
        if data and self.raw is not None and not self.raw.is_closing():
            self.raw.write(data)


class _Transport(asyncio.Transport):
    """What the application's protocol sees: asyncio's transport API over the session."""

    def __init__(self, layer: _Layer) -> None:
        super().__init__()
        self._layer = layer

    def write(self, data: bytes | bytearray | memoryview) -> None:
        layer = self._layer
        if layer.closing or not data:
            return
        view = memoryview(data)
        try:
            while view:
                n = layer.sslobj.write(view)
                view = view[n:]
        except ssl.SSLError as exc:
            layer.fail(exc)
            return
        layer.send()

    def writelines(self, list_of_data: Any) -> None:
        self.write(b"".join(list_of_data))

    def can_write_eof(self) -> bool:
        return False

    def write_eof(self) -> None:
        raise NotImplementedError("TLS has no half-close")

    def is_closing(self) -> bool:
        raw = self._layer.raw
        return self._layer.closing or raw is None or raw.is_closing()

    def close(self) -> None:
        layer = self._layer
        if layer.closing:
            return
        layer.closing = True
        try:
            layer.sslobj.unwrap()  # close_notify into the outgoing buffer
        except ssl.SSLError:
            pass
        raw = layer.raw
        if raw is not None:
            data = layer.outgoing.read()
            if data and not raw.is_closing():
                raw.write(data)
            raw.close()

    def abort(self) -> None:
        layer = self._layer
        layer.closing = True
        if layer.raw is not None:
            layer.raw.abort()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        layer = self._layer
        if name == "ssl_object":
            return layer.sslobj
        if name == "sslcontext":
            return layer.ctx
        if name == "peercert":
            return layer.sslobj.getpeercert()
        if name == "cipher":
            return layer.sslobj.cipher()
        if name == "compression":
            return layer.sslobj.compression()
        raw = layer.raw
        return default if raw is None else raw.get_extra_info(name, default)

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self._layer.app = protocol

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self._layer.app

    def pause_reading(self) -> None:
        if self._layer.raw is not None:
            self._layer.raw.pause_reading()

    def resume_reading(self) -> None:
        if self._layer.raw is not None:
            self._layer.raw.resume_reading()

    def is_reading(self) -> bool:
        raw = self._layer.raw
        return raw is not None and raw.is_reading()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        if self._layer.raw is not None:
            self._layer.raw.set_write_buffer_limits(high, low)

    def get_write_buffer_size(self) -> int:
        raw = self._layer.raw
        return 0 if raw is None else raw.get_write_buffer_size()

    def get_write_buffer_limits(self) -> tuple[int, int]:
        raw = self._layer.raw
        return (0, 0) if raw is None else raw.get_write_buffer_limits()

"""prospero: URLs (the thin asyncio datagram driver; ARDP and the commands are in protocols/prospero.py).

``prospero://host:port/hsoname;field=value`` is listed with a ``LIST``
request. A directory gives ``Body.entries`` (one per link; an external
link's entry URL is the URL of its access method, per RFC 1738 section
3.11). When the server says the object is not a directory, a
``GET-OBJECT-INFO`` request asks for its access methods, and the object is
fetched by following the first one that maps to a URL, through the
registry (ftp, gopher, http, wais; never ``file:``: a remote server must
not make us read local files, whatever the options). ``follow=False`` returns
the object's description instead.
"""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

from ..errors import (
    AccessDenied,
    ConnectError,
    FetchTimeout,
    NotRetrievable,
    ProtocolError,
    ResourceNotFound,
    UnsafeURL,
    URLSyntaxError,
)
from ..net.connect import connecting
from ..net.pool import Connection, Pool
from ..protocols import prospero as pp
from ..response import Body, Capture, Entry, utc_now
from ..settings import ProsperoOptions
from ..urls import ProsperoURL, leaf_name, percent_encode
from .base import Context, Handler, Request, refuse_controls, render_entries

__all__ = ["ProsperoHandler", "ProsperoOptions"]


class _Datagrams(asyncio.DatagramProtocol):
    """Queues the datagrams of one connected UDP socket."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[bytes] = asyncio.Queue(maxsize=4096)
        self.error: OSError | None = None

    def datagram_received(self, data: bytes, addr: object) -> None:
        if not self.queue.full():  # a flood is dropped, as the network would
            self.queue.put_nowait(data)

    def error_received(self, exc: Exception) -> None:
        if isinstance(exc, OSError):
            self.error = exc
            if not self.queue.full():
                self.queue.put_nowait(b"")  # wake the reader


class ProsperoHandler(Handler):
    """Directory listings and link resolution of ``prospero://`` URLs."""

    options_name = "prospero"

    def _options(self) -> ProsperoOptions:
        return self.context.options_for("prospero", ProsperoOptions)

    def __init__(self, context: Context) -> None:
        super().__init__(context)
        self.pool: Pool[Connection] = Pool("prospero")  # UDP transactions: per-host slots only

    async def open(self, req: Request) -> Body:
        """List a directory, or resolve an object's access method and (by default) fetch it."""
        url = req.url
        if not isinstance(url, ProsperoURL):
            raise NotRetrievable("not a prospero URL", url=url)
        async with self.pool.slot(req, url.host, url.port or 1525):
            return await self._open(req, url)

    async def _open(self, req: Request, url: ProsperoURL) -> Body:
        if url.user is not None or url.password is not None:
            raise URLSyntaxError("a prospero URL may not carry a user name or password (RFC 1738 3.11)",
                                 url=url, rule="prosperourl")
        refuse_controls(url, "the hsoname", url.hsoname)
        for name, value in url.fields:
            refuse_controls(url, f"the field {name!r}", name + value)
        opts = self.options(req, ProsperoOptions)
        follow = opts.follow
        # a capture: every request and reply line; its body is the last reply as received
        cap = Capture("Prospero", str(url), started=utc_now(), body_type="text/plain") if req.capture else None
        request = pp.build_list(url.hsoname, url.fields, user=opts.user)
        reply = await self._ask(url, opts, request, cap)
        self._check_error(url, reply)
        if reply.failure is not None and reply.failure[0] in ("NOT-A-DIRECTORY", "NOT-DIRECTORY"):
            info = await self._ask(url, opts, pp.build_get_object_info(url.hsoname, url.fields, user=opts.user),
                                   cap)
            self._check_error(url, info)
            self._check_failure(url, info)
            return await self._object(url, info, follow, req, cap)
        self._check_failure(url, reply)
        entries = [self._entry(url, link) for link in reply.links[: self.context.limits.max_entries]]
        meta = {"hsoname": url.hsoname, "links": len(entries)}
        return _attach(Body.from_bytes(url, render_entries(entries), content_type="text/plain", charset="utf-8",
                                       entries=entries, meta=meta), cap)

    # -- replies -------------------------------------------------------------

    def _check_error(self, url: ProsperoURL, reply: pp.ProsperoReply) -> None:
        if reply.error is not None:
            if reply.error.upper().startswith("NOT-AUTHORIZED"):
                raise AccessDenied("the Prospero server refused the request", url=url, reply=reply.error)
            raise ProtocolError("the Prospero server reported an error", url=url, reply=reply.error)

    def _check_failure(self, url: ProsperoURL, reply: pp.ProsperoReply) -> None:
        if reply.failure is None:
            return
        kind, text = reply.failure
        message = f"FAILURE {kind} {text}".strip()
        if kind == "NOT-FOUND":
            raise ResourceNotFound(f"no object {url.hsoname!r} on the server", url=url, reply=message)
        if kind == "NOT-AUTHORIZED":
            raise AccessDenied(f"not authorized for {url.hsoname!r}", url=url, reply=message)
        raise ProtocolError(f"the server could not list {url.hsoname!r}", url=url, reply=message)

    def _entry(self, url: ProsperoURL, link: pp.Link) -> Entry:
        resolved = [u for u in (pp.access_url(m, target=link.target) for m in link.access) if u]
        meta: dict[str, Any] = {
            "target": link.target, "link_type": link.link_type, "host": link.host, "hsoname": link.hsoname,
            "access_methods": [_method_dict(m) for m in link.access],
        }
        if link.version is not None:
            meta["version"] = link.version
        if link.target == "EXTERNAL":
            # RFC 1738: external links are the URLs of their access method (of a kind known once fetched).
            return Entry(name=link.name, url=resolved[0] if resolved else None, kind="page", meta=meta)
        kind = {"DIRECTORY": "directory", "SYMBOLIC": "symlink"}.get(link.target, "file")
        host = link.host if link.host_type.upper() in ("INTERNET-D", "") else url.host
        fields = (";OBJECT-VERSION=" + percent_encode(link.version)) if link.version else ""
        target = (f"prospero://{pp.authority(host, 1525)}/"
                  f"{percent_encode(link.hsoname, safe='/-._~!$&()*+,=:@')}{fields}")
        return Entry(name=link.name, url=target, kind=kind, meta=meta)

    async def _object(self, url: ProsperoURL, info: pp.ProsperoReply, follow: bool, req: Request,
                      cap: Capture | None) -> Body:
        urls = [u for u in (pp.access_url(m) for m in info.access) if u]
        meta: dict[str, Any] = {"hsoname": url.hsoname, "object_type": info.object_type,
                                "access_methods": [_method_dict(m) for m in info.access], "resolved": urls}
        if follow:
            for target in urls:
                if target[:5].lower() == "file:":
                    continue  # a remote server never leads to local files (allow_file_targets or not)
                parsed = self.context.parse(target)
                body = await self.context.handler(parsed).open(req.replace(url=parsed, options=None))
                body.meta.setdefault("prospero", meta)
                if cap is not None and body.capture is not None:  # the lookup is archived before it
                    cap.status_line = ""
                    cap.finish()
                    body.capture.previous.insert(0, cap)
                return body
            if urls:
                raise UnsafeURL("the object's only access method is a local file: a remote "
                                "server never leads to local files", url=url)
            raise NotRetrievable("the object has no access method this client can follow "
                                 f"({', '.join(m.method for m in info.access) or 'none given'})", url=url)
        entries = [Entry(name=leaf_name(u, m.method) if u else m.method, url=u, kind="page", title=m.method,
                         meta=_method_dict(m))
                   for m, u in ((m, pp.access_url(m)) for m in info.access)]
        return _attach(Body.from_bytes(url, render_entries(entries), content_type="text/plain", charset="utf-8",
                                       entries=entries, meta=meta), cap)

    # -- the ARDP transaction --------------------------------------------------

    async def _ask(self, url: ProsperoURL, opts: ProsperoOptions, request: bytes,
                   cap: Capture | None = None) -> pp.ProsperoReply:
        if cap is not None:
            for line in request.decode("utf-8", "surrogateescape").splitlines():
                cap.sent(line)
        message = await self._transact(url, opts, request, cap)
        if cap is not None:
            cap.body = message
            for line in message.decode("utf-8", "surrogateescape").splitlines():
                cap.received(line)
        limits = self.context.limits
        parser = pp.ReplyParser(max_links=limits.max_entries, max_attributes=limits.max_reply_lines)
        try:
            for i, line in enumerate(pp.reply_lines(message), start=1):
                parser.feed(line)
                if i % 1024 == 0:
                    await asyncio.sleep(0)  # a long reply must not hold off the caller's deadline
            return parser.finish()
        except pp.ARDPError as exc:
            raise ProtocolError(f"unparsable Prospero reply: {exc}", url=url) from exc

    async def _transact(self, url: ProsperoURL, opts: ProsperoOptions, request: bytes,
                        cap: Capture | None = None) -> bytes:
        loop = asyncio.get_running_loop()
        port = url.port or 1525
        with connecting(url, f"{url.host}:{port}"):  # UDP: resolving the name is the whole connect
            async with asyncio.timeout(self.context.timeouts.connect):
                transport, proto = await loop.create_datagram_endpoint(
                    _Datagrams, remote_addr=(url.host, port))
        if cap is not None:
            cap.peer_of(transport)
        try:
            return await self._exchange(url, opts, request, transport, proto)
        finally:
            transport.close()

    async def _exchange(self, url: ProsperoURL, opts: ProsperoOptions, request: bytes,
                        transport: asyncio.DatagramTransport, proto: _Datagrams) -> bytes:
        loop = asyncio.get_running_loop()
        conn_id = secrets.randbelow(0xFFFE) + 1
        packets = pp.split_message(conn_id, request)
        receiver = pp.Receiver(conn_id, max_bytes=opts.max_reply)
        delays = pp.retry_delays(opts.timeout, opts.retries, opts.backoff)
        attempt = 0
        bad = 0
        for packet in packets:
            transport.sendto(packet)
        # Timeouts.read bounds the time without progress (a new reply packet); wait
        # notices and retransmissions may not stretch it, nor anything stretch Timeouts.total.
        idle = self.context.timeouts.read
        total = self.context.timeouts.total
        start = progress_at = loop.time()
        end = start + total if total is not None else float("inf")
        deadline = start + delays[0]
        while not receiver.complete:
            now = loop.time()
            give_up = min(progress_at + idle, end)
            if now >= give_up:
                got = f"{len(receiver.packets)} of {receiver.total or '?'} reply packets"
                why = (f"{total:g} s in all (Timeouts.total)" if give_up == end
                       else f"{idle:g} s without progress (Timeouts.read)")
                raise FetchTimeout(f"no complete reply from {url.host}:{url.port or 1525} after {why}; "
                                   f"got {got}", url=url)
            remaining = min(deadline, give_up) - now
            if remaining <= 0:
                attempt += 1
                if attempt >= len(delays):
                    got = f"{len(receiver.packets)} of {receiver.total or '?'} reply packets"
                    extra = f", {bad} undecodable datagrams" if bad else ""
                    raise FetchTimeout(f"no complete reply from {url.host}:{url.port or 1525} after "
                                       f"{attempt} retransmissions ({got}{extra})", url=url)
                if receiver.packets:
                    transport.sendto(receiver.ack_packet())  # says what is missing
                else:
                    for packet in packets:
                        transport.sendto(packet)
                deadline = loop.time() + delays[attempt]
                continue
            try:
                async with asyncio.timeout(remaining):
                    data = await proto.queue.get()
            except TimeoutError:
                continue
            if proto.error is not None:
                raise ConnectError(f"no Prospero server at {url.host}:{url.port or 1525}: "
                                   f"{proto.error.strerror or proto.error}",
                                   url=url) from proto.error
            try:
                header, payload = pp.decode_packet(data)
                event = receiver.feed(header, payload)
            except pp.ARDPError as exc:
                if "exceeds" in str(exc) or "larger" in str(exc):
                    raise ProtocolError(str(exc), url=url) from exc
                bad += 1  # a mangled datagram is like a lost one
                continue
            if event.refused:
                raise ProtocolError("the Prospero server refused or cancelled the request", url=url)
            if event.wait:
                # The server is working on it: be patient, within the read timeout.
                patience = min(float(event.wait), self.context.timeouts.read)
                deadline = max(deadline, loop.time() + patience)
            if event.accepted:
                attempt = 0  # progress: the retry budget starts again
                progress_at = loop.time()
                deadline = max(deadline, loop.time() + delays[0])
            if event.send_ack:
                transport.sendto(receiver.ack_packet())
        return receiver.message()


def _attach(body: Body, cap: Capture | None) -> Body:
    """*body* with its capture (the body: the last reply as received)."""
    if cap is not None:
        cap.kept_by_driver = True
        cap.status_line = ""  # a Prospero reply has no status line (not its last line)
        body.capture = cap
    return body


def _method_dict(m: pp.AccessMethod) -> dict[str, Any]:
    return {"method": m.method, "host": m.host, "hsoname": m.hsoname, "extra": list(m.extra),
            "url": pp.access_url(m)}

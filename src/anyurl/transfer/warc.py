"""WARC 1.1 files from captured responses (``fetch(..., capture=True)``), written with warcio.

:class:`WARCWriter` takes a :class:`~anyurl.response.Response` whose ``capture`` is set and
writes its records: for HTTP a ``request`` and a ``response`` record (an HTTP/2 exchange in
HTTP/1.1 form, its protocol in ``WARC-Protocol``), for every other scheme a ``resource``
record (the bytes as the server sent them, a listing's too) and a ``metadata`` record
holding the command exchange. A payload seen before in the same writer becomes a
``revisit``. Each file starts with a ``warcinfo`` record; each record is one gzip member,
written whole and flushed, so a crash leaves every record before it readable. A failed
fetch is logged, never archived. docs/warc.md shows the records of each scheme.

Cost (docs/warc.md, "What writing costs"): warcio frames each record (uncompressed, into a
buffer this writer reuses) and this module compresses it as one gzip member at ``level``
(6 by default, where warcio's own wrapper is fixed at 9: a third of the CPU for a few percent
more bytes). Both digests are given to warcio, computed once over bytes in hand; the HTTP
head goes in as the capture holds it, never re-parsed. ``background=True`` (what ``--warc``
uses) moves all of it to a thread fed by a queue bounded in bytes: zlib and sha1 release
the GIL, so on two cores compression overlaps the transfers.

warcio is an optional dependency (``pip install anyurl[warc]``).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import io
import logging
import os
import threading
import zlib
from collections import deque
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, BinaryIO

from ..errors import AnyURLError, ConfigurationError
from .batch import Sink

if TYPE_CHECKING:
    from datetime import datetime

    from ..client import Client
    from ..response import Body, Capture, Response
    from .batch import Item

__all__ = ["Archive", "WARCWriter", "pack_wacz"]

log = logging.getLogger("anyurl.warc")

#: a record set whose payloads pass this size is written straight to the file
_IN_MEMORY = 1 << 20
#: the media type of a capture's ``raw`` units, per protocol
_RAW_TYPES = {"Z39.50": "application/x-z39.50-apdu; encoding=ber"}

REVISIT_PROFILE = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"


#: gzip level of each record (zlib's 1-9): docs/warc.md measures 1, 6 and 9 on small pages
DEFAULT_LEVEL = 6
#: bytes of captures a background writer holds queued at most (the producer waits beyond it):
#: their bodies and :data:`_CAPTURE_BYTES` each (32 MiB of 4 KiB bodies held 43 MiB more at peak)
DEFAULT_QUEUE_BYTES = 8 << 20
#: what a queued capture holds beside its body (its fields, head, exchange), roughly
_CAPTURE_BYTES = 2048


def _sha1(data: bytes | io.RawIOBase) -> str:
    """The sha1 of *data* (a stream: read from where it is to its end, then put back)."""
    if isinstance(data, bytes):
        return _b32(hashlib.sha1(data))
    h = hashlib.sha1()
    pos = data.tell()
    while piece := data.read(1 << 20):
        h.update(piece)
    data.seek(pos)
    return _b32(h)


def _b32(h: hashlib._Hash) -> str:
    return "sha1:" + base64.b32encode(h.digest()).decode("ascii")


def _date(when: datetime | None) -> str:
    from datetime import UTC, datetime

    when = (when or datetime.now(UTC)).astimezone(UTC)
    # isoformat is C, strftime's parsing of its format costs more per call
    return when.replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def _record_id() -> str:
    # warcio's own makes a uuid.UUID object per record; the same random UUID, formatted here
    h = bytearray(os.urandom(16))
    h[6] = (h[6] & 0x0F) | 0x40  # version 4
    h[8] = (h[8] & 0x3F) | 0x80  # RFC 4122 variant
    x = h.hex()
    return f"<urn:uuid:{x[:8]}-{x[8:12]}-{x[12:16]}-{x[16:20]}-{x[20:]}>"


class WARCWriter:
    """Write captured responses to WARC 1.1 files (gzip per record).

    *path*: the file, ``name.warc.gz`` (``.warc`` for no compression). With *max_size*
    (bytes) the output rotates: ``name-00000.warc.gz``, ``name-00001.warc.gz``..., a new
    file once one reaches the size (a record never splits). *info*: fields added to each
    file's ``warcinfo`` record (the options the archive was made with). *level*: each gzip
    member's compression level (1-9, default :data:`DEFAULT_LEVEL`).

    Use as a context manager, or call :meth:`close`. :meth:`write` takes a Response
    fetched with ``capture=True``; :meth:`add` takes a batch's result (a Response, or an
    exception, which is logged and not written). By default writing is synchronous: each
    call returns once its records are in the file. *background* True: the records are built,
    compressed and written by a thread of the writer's own, the captures waiting in a queue
    of at most *queue_bytes* of bodies (a caller that outruns the disk waits); :meth:`flush`
    waits until everything queued is in the file, :meth:`close` too, and an error of the
    thread (a full disk) is raised by the next call.
    """

    def __init__(self, path: str | os.PathLike[str], *, max_size: int | None = None,
                 info: Mapping[str, object] | None = None, gzip: bool | None = None,
                 level: int = DEFAULT_LEVEL, background: bool = False,
                 queue_bytes: int = DEFAULT_QUEUE_BYTES) -> None:
        try:
            _import_warcio()  # here: only archiving needs it
        except ImportError as exc:  # pragma: no cover - depends on the installation
            raise ConfigurationError("writing WARC files needs warcio: pip install 'anyurl[warc]'") from exc
        from warcio.warcwriter import WARCWriter as _Writer
        self.path = os.fspath(path)
        self.gzip = self.path.endswith(".gz") if gzip is None else gzip
        if max_size is not None and max_size <= 0:
            raise ConfigurationError(f"max_size must be > 0 (got {max_size})")
        if not 0 <= level <= 9:
            raise ConfigurationError(f"level must be 0-9 (got {level})")
        self.max_size = max_size
        self.level = level
        self.info = dict(info or {})
        self.files: list[str] = []  # every file written, in order
        self.records = 0
        self.failures = 0
        self._out: BinaryIO | None = None
        self._size = 0
        self._seen: dict[str, tuple[str, str]] = {}  # payload digest -> (target URI, WARC-Date)
        #: payloads remembered for revisits (a crawl of more forgets the oldest: ~200 bytes each)
        self.max_seen = 1_000_000
        # one warcio writer, uncompressed, into one reused buffer: this module gzips each record
        self._writer_class = _Writer
        self._buf = io.BytesIO()
        self._w = _Writer(self._buf, gzip=False, warc_version="1.1")
        from warcio.recordloader import ArcWarcRecord
        from warcio.statusandheaders import StatusAndHeaders

        self._head = StatusAndHeaders
        self._arc_record = ArcWarcRecord
        self._queue_bytes = max(1, queue_bytes)
        self._thread: threading.Thread | None = None
        if background:
            self._queue: deque[list[tuple[Capture, str, str | None]] | None] = deque()
            self._queued = 0  # body bytes in the queue
            self._busy = False  # the thread is writing one taken from the queue
            self._error: BaseException | None = None
            self._cond = threading.Condition()
            self._thread = threading.Thread(target=self._run, name="anyurl-warc", daemon=True)
            self._thread.start()

    # -- files ----------------------------------------------------------------

    def _name(self, n: int) -> str:
        if self.max_size is None:
            return self.path
        for ext in (".warc.gz", ".warc"):
            if self.path.endswith(ext):
                return f"{self.path[:-len(ext)]}-{n:05d}{ext}"
        return f"{self.path}-{n:05d}"

    def _file(self) -> BinaryIO:
        out = self._out
        if out is not None and self.max_size is not None and self._size >= self.max_size:
            out.close()
            out = self._out = None
        if out is None:
            name = self._name(len(self.files))
            out = self._out = open(name, "wb")  # noqa: SIM115 - held across writes, closed by close()
            self._size = 0
            self.files.append(name)
            self._warcinfo(out, os.path.basename(name))
        return out

    def _warcinfo(self, out: BinaryIO, filename: str) -> None:
        from ..version import __version__

        fields: dict[str, object] = {"software": f"anyurl/{__version__}", "format": "WARC File Format 1.1",
                                     "conformsTo": "https://iso.org/standard/68004.html"}
        fields.update(self.info)
        self._emit(out, [self._w.create_warcinfo_record(filename, fields)])

    def _emit(self, out: BinaryIO, records: list[Any]) -> None:
        """Write *records*, each a whole gzip member, in one write, then flush: a crash
        leaves the file ending at a record's end (or inside the one being written). Records
        of a large body are written straight to the file, never whole in memory."""
        if sum(rec.length or 0 for rec in records) > _IN_MEMORY:
            start = out.tell()
            member = _Member(out, self.level if self.gzip else None)
            w = self._writer_class(member, gzip=False, warc_version="1.1")
            for rec in records:
                w.write_record(rec)  # (its flush ends the record's gzip member)
            out.flush()
            self._size += out.tell() - start
            self.records += len(records)
            return
        buf, w = self._buf, self._w
        parts = []
        for rec in records:
            buf.seek(0)
            buf.truncate()
            w.write_record(rec)
            if self.gzip:  # one member per record, as warcio's own gzip writes, at our level
                z = zlib.compressobj(self.level, zlib.DEFLATED, 31)  # (31: a gzip member)
                with buf.getbuffer() as view:  # (released before the buffer is truncated again)
                    parts.append(z.compress(view))
                parts.append(z.flush())
            else:
                parts.append(buf.getvalue())
        data = b"".join(parts)
        out.write(data)
        out.flush()
        self._size += len(data)
        self.records += len(records)

    def flush(self) -> None:
        """Wait until every capture handed over is in the file (background); raise the
        thread's error if it failed."""
        if self._thread is None:
            return
        with self._cond:
            while (self._queue or self._busy) and self._error is None:
                self._cond.wait()
            self._raise()

    def close(self) -> None:
        """Write what is queued (background), then close the current file."""
        thread = self._thread
        try:
            if thread is not None:
                with self._cond:
                    self._queue.append(None)  # the end: the thread leaves after the rest
                    self._cond.notify_all()
                thread.join()
                self._thread = None
                self._raise()
        finally:
            if self._out is not None:
                self._out.close()
                self._out = None

    def __enter__(self) -> WARCWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- the thread (background) -------------------------------------------------

    def _raise(self) -> None:
        err = self._error
        if err is not None:
            raise err

    def _hand_over(self, job: list[tuple[Capture, str, str | None]]) -> None:
        size = _job_size(job)
        with self._cond:
            self._raise()
            # bounded: wait while the queue holds its bytes' worth (one larger capture still goes)
            while self._queue and self._queued + size > self._queue_bytes and self._error is None:
                self._cond.wait()
            self._raise()
            self._queue.append(job)
            self._queued += size
            self._cond.notify_all()

    def _run(self) -> None:
        cond, queue = self._cond, self._queue
        while True:
            with cond:
                while not queue:
                    cond.wait()
                job = queue.popleft()
                if job is None:
                    return
                self._busy = True
            try:
                if self._error is None:  # after an error, the rest is dropped (it was raised)
                    self._write(job)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller by the next call
                self._error = exc
                log.error("WARC writer failed: %s", exc)
            finally:
                with cond:
                    self._busy = False
                    self._queued -= _job_size(job)
                    cond.notify_all()

    # -- records --------------------------------------------------------------

    def add(self, url: object, result: Response | BaseException) -> bool:
        """A batch's result: a Response is written; an error is logged, never archived, unless
        a limit cut the transfer (its ``capture``: written marked WARC-Truncated). True when
        records were written."""
        if isinstance(result, BaseException):
            self.failures += 1
            cut = getattr(result, "capture", None)
            if cut is not None and cut.truncated is not None and cut.body_size:
                log.warning("archived as truncated (%s): %s: %s", cut.truncated, url, result)
                self.captured(cut, None)
                return True
            log.warning("not archived: %s: %s", url, result)
            return False
        self.write(result)
        return True

    def write(self, response: Response | Body) -> None:
        """Write the records of *response* (fetched with ``capture=True``; or a Body read whole)."""
        cap = response.capture
        if cap is None:
            raise ConfigurationError("this response has no capture: fetch it with capture=True", url=response.url)
        self.captured(cap, response)

    def captured(self, cap: Capture, source: Response | Body | None) -> None:
        """Write the records of *cap*, the capture of *source* (its content type and charset):
        what ``Client(on_capture=writer.captured)`` calls as each body arrives whole."""
        if cap.body_size is None:
            raise ConfigurationError("the capture has no body (the response was not read whole)", url=cap.url)
        # the redirects (or the lookup) before it, in order, then it; each with its media type
        # (read here: a Response's type may be guessed lazily, never from another thread)
        job = [(c, *self._type_of(c, source)) for c in (*cap.previous, cap) if c.body_size is not None]
        if self._thread is not None:
            self._hand_over(job)
        else:
            self._write(job)

    @staticmethod
    def _type_of(cap: Capture, source: Response | Body | None) -> tuple[str, str | None]:
        if cap.protocol.startswith("HTTP/"):
            return "", None  # (an HTTP record's type is its head's)
        if source is None:  # (a cut capture an error carried: no response to ask)
            return cap.body_type or "application/octet-stream", None
        return cap.body_type or source.content_type, source.charset

    def _write(self, job: list[tuple[Capture, str, str | None]]) -> None:
        out = self._file()
        for cap, content_type, charset in job:
            if cap.protocol.startswith("HTTP/"):
                records = self._http(cap)
            else:
                records = self._resource(cap, content_type, charset)
            self._emit(out, records)

    def _base(self, cap: Capture, date: str, record_id: str | None = None) -> list[tuple[str, str]]:
        """The WARC fields every record of *cap* has, in the order written."""
        fields = [("WARC-Record-ID", _record_id()), ("WARC-Date", date), ("WARC-Target-URI", cap.url)]
        if cap.peer is not None:
            fields.append(("WARC-IP-Address", cap.peer[0]))
        if record_id is not None:
            fields.append(("WARC-Concurrent-To", record_id))
        elif not cap.complete:  # (the record of the payload only)
            fields.append(("WARC-Truncated", cap.truncated or "length"))
        return fields

    def _record(self, rec_type: str, fields: list[tuple[str, str]], content_type: str,
                payload: bytes | io.RawIOBase = b"", http: Any = None) -> Any:
        """A warcio record of fields this writer already holds, digests included: warcio writes
        it (its Content-Type and Content-Length fields, the HTTP head, the block) and has no
        digest left to reckon, no head to parse. (create_warc_record would build the same
        record with more passes over its fields.)"""
        head = self._head("", [("WARC-Type", rec_type), *fields], protocol="WARC/1.1")
        if isinstance(payload, bytes):
            stream: Any = io.BytesIO(payload)
            size = len(payload)
        else:
            stream, size = payload, payload.length  # type: ignore[attr-defined]  # (a SpoolReader)
        return self._arc_record("warc", rec_type, head, stream, http, content_type, size, payload_length=size)

    def _revisit_of(self, digest: str, cap: Capture, size: int, date: str) -> tuple[str, str] | None:
        if not size or not cap.complete:
            return None
        seen = self._seen.get(digest)
        if seen is None:
            if len(self._seen) >= self.max_seen:  # bounded: the oldest payload is forgotten
                del self._seen[next(iter(self._seen))]
            self._seen[digest] = (cap.url, date)
        return seen

    def _http(self, cap: Capture) -> list[Any]:
        size = cap.body_size or 0
        headers = cap.headers
        chunked = any(k.lower() == "transfer-encoding" and "chunked" in v.lower() for k, v in headers)
        # the capture holds the payload without its chunk framing: one chunk carries it
        prefix = f"{size:x}\r\n".encode() if chunked and size else b""
        suffix = ((b"\r\n" if size else b"") + b"0\r\n\r\n") if chunked else b""
        wire: bytes | io.RawIOBase
        if size <= _IN_MEMORY:  # bytes in hand (a larger body may be in its temporary file)
            wire = (prefix + (cap.body or b"") + suffix) if chunked else (cap.body or b"")
        else:
            wire = cap.body_reader(prefix, suffix)
        # over the payload as stored, as warcio and `warcio check` reckon it
        digest = _sha1(wire)
        reason = "" if cap.status_line is None else cap.status_line.split(" ", 2)[2:3]
        status = f"{cap.status} {reason[0] if reason else _reason(cap.status)}".strip()
        h1 = "HTTP/1.1" if cap.protocol == "HTTP/2" else cap.protocol
        http = self._head(status, headers, protocol=h1)
        date = _date(cap.started)
        fields = self._base(cap, date)
        protocol = "h2" if cap.protocol == "HTTP/2" else None
        if cap.tls_version is not None:
            protocol = ", ".join(p for p in (protocol, cap.tls_version.lower().replace("v", "/")) if p)
        if protocol:
            fields.append(("WARC-Protocol", protocol))
        if cap.tls_version is not None and cap.tls_cipher:
            fields.append(("WARC-Cipher-Suite", cap.tls_cipher))
        # the block digest: the HTTP head as warcio writes it, then the payload as stored
        http.compute_headers_buffer()
        block = hashlib.sha1(http.headers_buff)
        seen = self._revisit_of(digest, cap, size, date)
        response_type = "application/http; msgtype=response"
        if seen is not None:  # the head alone, the payload named by the first record's
            fields += [("WARC-Profile", REVISIT_PROFILE), ("WARC-Refers-To-Target-URI", seen[0]),
                       ("WARC-Refers-To-Date", seen[1]), ("WARC-Payload-Digest", digest),
                       ("WARC-Block-Digest", _b32(block))]
            resp = self._record("revisit", fields, response_type, http=http)
        else:
            _update(block, wire)
            fields += [("WARC-Payload-Digest", digest), ("WARC-Block-Digest", _b32(block))]
            resp = self._record("response", fields, response_type, wire, http)
        # the request as sent; HTTP/2's pseudo-header fields become its request line and Host
        req_headers = []
        authority = None
        for k, v in cap.request_headers:
            if k == ":authority":
                authority = v
            elif not k.startswith(":"):
                req_headers.append((k, v))
        if authority is not None and not any(k.lower() == "host" for k, _ in req_headers):
            req_headers.insert(0, ("Host", authority))
        # the request line as sent: warcio's head keeps the method where a response's protocol goes
        req_http = self._head(f"{cap.target or '/'} {h1}", req_headers, protocol=cap.method or "GET")
        req_http.compute_headers_buffer()
        req_fields = self._base(cap, date, fields[0][1])
        req_fields.append(("WARC-Block-Digest", _sha1(req_http.headers_buff)))
        request = self._record("request", req_fields, "application/http; msgtype=request", http=req_http)
        return [resp, request]

    def _resource(self, cap: Capture, content_type: str, charset: str | None) -> list[Any]:
        size = cap.body_size or 0
        body: bytes | io.RawIOBase = (cap.body or b"") if size <= _IN_MEMORY else cap.body_reader()
        digest = _sha1(body)
        date = _date(cap.started)
        fields = self._base(cap, date)
        ctype = content_type
        if cap.body_type is None and charset and "charset" not in ctype and ctype.startswith("text/"):
            ctype = f"{ctype}; charset={charset}"
        seen = self._revisit_of(digest, cap, size, date)
        if seen is not None:
            fields += [("WARC-Profile", REVISIT_PROFILE), ("WARC-Refers-To-Target-URI", seen[0]),
                       ("WARC-Refers-To-Date", seen[1]), ("WARC-Payload-Digest", digest),
                       ("WARC-Block-Digest", _sha1(b""))]
            rec = self._record("revisit", fields, "application/http; msgtype=response")
        else:
            # a resource's block is its payload
            fields += [("WARC-Payload-Digest", digest), ("WARC-Block-Digest", digest)]
            rec = self._record("resource", fields, ctype, body)
        lines = [f"protocol: {cap.protocol}"]
        if cap.peer is not None:
            lines.append(f"peer: {cap.peer[0]} {cap.peer[1]}")
        if cap.tls_version is not None:
            lines.append(f"tls: {cap.tls_version} {cap.tls_cipher or ''}".rstrip())
        if cap.status_line:
            lines.append(f"status: {cap.status_line}")
        if cap.ended is not None:
            lines.append(f"ended: {_date(cap.ended)}")
        for direction, line in cap.exchange:
            lines.append(f"{'command' if direction == '>' else 'reply'}: {line}")
        if cap.raw is not None:
            # the protocol's units as received (Z39.50's BER), beside their readable summary: in
            # this record, not one of their own, which cdxj-indexer would index (and pywb serve)
            # at the resource's URL in its place
            lines.append(f"raw-type: {_RAW_TYPES.get(cap.protocol, 'application/octet-stream')}")
            lines.append(f"raw-base64: {base64.b64encode(cap.raw).decode('ascii')}")
        text = "".join(f"{_field_line(x)}\r\n" for x in lines).encode("utf-8", "surrogateescape")
        meta_digest = _sha1(text)
        meta_fields = self._base(cap, date, fields[0][1])
        meta_fields += [("WARC-Payload-Digest", meta_digest), ("WARC-Block-Digest", meta_digest)]
        meta = self._record("metadata", meta_fields, "application/warc-fields", text)
        return [rec, meta]


class Archive(Sink):
    """A :class:`~anyurl.transfer.batch.Batch` sink that writes each resource to *writer*
    (fetched with ``capture=True``, at most *max_size* bytes) and keeps nothing: the result's
    ``response`` is None. A failed URL is logged by the writer and is the result's error::

        with WARCWriter("site.warc.gz") as w:
            await Batch(client, urls, Archive(w)).run()

    (Not with a Client whose ``on_capture`` is the same writer: each record would be written twice.)
    """

    def __init__(self, writer: WARCWriter, max_size: int | None = None) -> None:
        self.writer = writer
        self.max_size = max_size

    async def transfer(self, client: Client, item: Item) -> None:
        try:
            response = await client.fetch(item.url, max_size=self.max_size, capture=True)
        except AnyURLError as exc:
            self.writer.add(item.url, exc)
            raise
        self.writer.write(response)


def pack_wacz(warcs: Sequence[str | os.PathLike[str]], output: str | os.PathLike[str], *,
              python: str | None = None, timeout: float | None = None) -> None:
    """Package the WARC files *warcs* with their CDXJ index and a pages list as the WACZ file
    *output* (for replay in a browser: ReplayWeb.page), with the ``wacz`` package (py-wacz,
    ``pip install 'anyurl[wacz]'``) run as a process of its own under *python* (default: this
    interpreter): it prints as it works, and its failure is reported, never a traceback. The
    package is written under a temporary name and renamed once whole."""
    import subprocess
    import sys

    exe = python or sys.executable
    if python is None:
        import importlib.util

        if importlib.util.find_spec("wacz") is None:
            raise ConfigurationError("packing WACZ files needs the wacz package: pip install 'anyurl[wacz]'")
    out = os.fspath(output)
    part = out + ".part"
    why = ""
    try:
        done = subprocess.run([exe, "-m", "wacz", "create", "-o", part, "--detect-pages", *[os.fspath(w) for w in warcs]],
                              capture_output=True, text=True, timeout=timeout, check=False)
        if done.returncode != 0:
            lines = (done.stderr.strip() or done.stdout.strip()).splitlines()
            why = lines[-1] if lines else f"exit {done.returncode}"
    except (OSError, subprocess.TimeoutExpired) as exc:
        why = str(exc)
    if why:
        with contextlib.suppress(OSError):
            os.unlink(part)
        raise AnyURLError(f"packing {out} failed: {why}")
    os.replace(part, out)


def _import_warcio() -> None:
    """Import warcio's writer without fsspec: warcio.utils imports it (when installed) for its
    command-line tools' remote paths, which the writer never opens, and it costs 0.05-0.3 s of
    start-up (asyncio and more), as much as a whole ``get --warc`` of 200 small files over a
    50 ms round trip. (warcio's tools in the same process then open local paths only.)"""
    import sys

    if "warcio.utils" in sys.modules or "fsspec" in sys.modules:
        import warcio.warcwriter  # noqa: F401 - (fsspec loaded already: nothing to spare)
        return
    sys.modules["fsspec"] = None  # type: ignore[assignment]  # import fsspec -> ImportError
    try:
        import warcio.warcwriter  # noqa: F401
    finally:
        del sys.modules["fsspec"]


def _job_size(job: list[tuple[Capture, str, str | None]]) -> int:
    """The bytes a queued job holds, roughly (a spooled body's count too: bounded, if loosely)."""
    return sum((cap.body_size or 0) + _CAPTURE_BYTES for cap, _, _ in job)


def _update(h: Any, data: bytes | io.RawIOBase) -> None:
    """*h* updated with *data* (a stream: read to its end, then put back where it was)."""
    if isinstance(data, bytes):
        h.update(data)
        return
    pos = data.tell()
    while piece := data.read(1 << 20):
        h.update(piece)
    data.seek(pos)


class _Member:
    """Where warcio writes a large record: compressed on the way to *out* as one gzip member,
    which its flush (at the record's end) closes. *level* None: uncompressed."""

    def __init__(self, out: BinaryIO, level: int | None) -> None:
        self._out = out
        self._level = level
        self._z: Any = None

    def write(self, data: bytes) -> None:
        if self._level is None:
            self._out.write(data)
            return
        if self._z is None:
            self._z = zlib.compressobj(self._level, zlib.DEFLATED, 31)
        self._out.write(self._z.compress(data))

    def flush(self) -> None:
        if self._z is not None:
            self._out.write(self._z.flush())
            self._z = None


def _field_line(line: str) -> str:
    """One application/warc-fields line: no CR or LF inside (a server's line cannot break it)."""
    return line.replace("\r", "\\r").replace("\n", "\\n")


def _reason(status: int | None) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(status or 0).phrase
    except ValueError:
        return ""

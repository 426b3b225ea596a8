"""WARC 1.1 files from captured responses (``fetch(..., capture=True)``), written with warcio.

:class:`WARCWriter` takes a :class:`~anyurl.response.Response` whose ``capture`` is set and
writes its records: for HTTP a ``request`` and a ``response`` record (an HTTP/2 exchange in
HTTP/1.1 form, its protocol in ``WARC-Protocol``), for every other scheme a ``resource``
record (the bytes as the server sent them, a listing's too) and a ``metadata`` record
holding the command exchange. A payload seen before in the same writer becomes a
``revisit``. Each file starts with a ``warcinfo`` record; each record is one gzip member,
written whole and flushed, so a crash leaves every record before it readable. A failed
fetch is logged, never archived. docs/warc.md shows the records of each scheme.

warcio is an optional dependency (``pip install anyurl[warc]``).
"""

from __future__ import annotations

import base64
import hashlib
import io
import logging
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, BinaryIO

from ..errors import AnyURLError, ConfigurationError
from .batch import Sink

if TYPE_CHECKING:
    from datetime import datetime

    from ..client import Client
    from ..response import Body, Capture, Response
    from .batch import Item

__all__ = ["Archive", "WARCWriter"]

log = logging.getLogger("anyurl.warc")

#: a record set whose payloads pass this size is written straight to the file
_IN_MEMORY = 1 << 20
#: the media type of a capture's ``raw`` units, per protocol
_RAW_TYPES = {"Z39.50": "application/x-z39.50-apdu; encoding=ber"}

REVISIT_PROFILE = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"


def _sha1(data: bytes | io.RawIOBase) -> str:
    """The sha1 of *data* (a stream: read from where it is to its end, then put back)."""
    if isinstance(data, bytes):
        h = hashlib.sha1(data)
    else:
        h = hashlib.sha1()
        pos = data.tell()
        while piece := data.read(1 << 20):
            h.update(piece)
        data.seek(pos)
    return "sha1:" + base64.b32encode(h.digest()).decode("ascii")


def _date(when: datetime | None) -> str:
    from datetime import UTC, datetime

    when = when or datetime.now(UTC)
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class WARCWriter:
    """Write captured responses to WARC 1.1 files (gzip per record).

    *path*: the file, ``name.warc.gz`` (``.warc`` for no compression). With *max_size*
    (bytes) the output rotates: ``name-00000.warc.gz``, ``name-00001.warc.gz``..., a new
    file once one reaches the size (a record never splits). *info*: fields added to each
    file's ``warcinfo`` record (the options the archive was made with).

    Use as a context manager, or call :meth:`close`. :meth:`write` takes a Response
    fetched with ``capture=True``; :meth:`add` takes a batch's result (a Response, or an
    exception, which is logged and not written). Writing is synchronous: call it from the
    event loop between transfers, or from a thread.
    """

    def __init__(self, path: str | os.PathLike[str], *, max_size: int | None = None,
                 info: Mapping[str, object] | None = None, gzip: bool | None = None) -> None:
        try:
            from warcio.warcwriter import WARCWriter as _Writer  # here: only archiving needs it
        except ImportError as exc:  # pragma: no cover - depends on the installation
            raise ConfigurationError("writing WARC files needs warcio: pip install 'anyurl[warc]'") from exc
        self._writer_class = _Writer
        self.path = os.fspath(path)
        self.gzip = self.path.endswith(".gz") if gzip is None else gzip
        if max_size is not None and max_size <= 0:
            raise ConfigurationError(f"max_size must be > 0 (got {max_size})")
        self.max_size = max_size
        self.info = dict(info or {})
        self.files: list[str] = []  # every file written, in order
        self.records = 0
        self.failures = 0
        self._out: BinaryIO | None = None
        self._size = 0
        self._seen: dict[str, tuple[str, str]] = {}  # payload digest -> (target URI, WARC-Date)
        #: payloads remembered for revisits (a crawl of more forgets the oldest: ~200 bytes each)
        self.max_seen = 1_000_000

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
        w = self._writer_class(io.BytesIO(), gzip=self.gzip, warc_version="1.1")
        self._emit(out, [w.create_warcinfo_record(filename, fields)])

    def _emit(self, out: BinaryIO, records: list[Any]) -> None:
        """Write *records*, each a whole gzip member, in one write, then flush: a crash
        leaves the file ending at a record's end (or inside the one being written). Records
        of a large body are written straight to the file, never whole in memory."""
        if sum(rec.length or 0 for rec in records) > _IN_MEMORY:
            start = out.tell()
            w = self._writer_class(out, gzip=self.gzip, warc_version="1.1")
            for rec in records:
                w.write_record(rec)
            out.flush()
            self._size += out.tell() - start
            self.records += len(records)
            return
        buf = io.BytesIO()
        w = self._writer_class(buf, gzip=self.gzip, warc_version="1.1")
        for rec in records:
            w.write_record(rec)
        data = buf.getvalue()
        out.write(data)
        out.flush()
        self._size += len(data)
        self.records += len(records)

    def close(self) -> None:
        """Close the current file."""
        if self._out is not None:
            self._out.close()
            self._out = None

    def __enter__(self) -> WARCWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

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
        out = self._file()
        for hop in cap.previous:  # the redirects (or the lookup) before it, in order
            if hop.body_size is not None:
                self._emit(out, self._records(hop, source))
        self._emit(out, self._records(cap, source))

    def _records(self, cap: Capture, source: Response | Body | None) -> list[Any]:
        if cap.protocol.startswith("HTTP/"):
            return self._http(cap)
        if source is None:
            return self._resource(cap, cap.body_type or "application/octet-stream", None)
        return self._resource(cap, cap.body_type or source.content_type, source.charset)

    def _base(self, cap: Capture, record_id: str | None = None) -> dict[str, str]:
        fields = {"WARC-Date": _date(cap.started)}
        if cap.peer is not None:
            fields["WARC-IP-Address"] = cap.peer[0]
        if not cap.complete:
            fields["WARC-Truncated"] = cap.truncated or "length"
        if record_id is not None:
            fields["WARC-Concurrent-To"] = record_id
        return fields

    def _revisit_of(self, digest: str, cap: Capture, size: int) -> tuple[str, str] | None:
        if not size or not cap.complete:
            return None
        seen = self._seen.get(digest)
        if seen is None:
            if len(self._seen) >= self.max_seen:  # bounded: the oldest payload is forgotten
                del self._seen[next(iter(self._seen))]
            self._seen[digest] = (cap.url, _date(cap.started))
        return seen

    def _http(self, cap: Capture) -> list[Any]:
        from warcio.statusandheaders import StatusAndHeaders

        w = self._writer_class(io.BytesIO(), gzip=self.gzip, warc_version="1.1")
        size = cap.body_size or 0
        headers = list(cap.headers)
        wire = cap.body_reader()
        if any(k.lower() == "transfer-encoding" and "chunked" in v.lower() for k, v in headers):
            # the capture holds the payload without its chunk framing: one chunk carries it
            wire = cap.body_reader(f"{size:x}\r\n".encode() if size else b"",
                                   (b"\r\n" if size else b"") + b"0\r\n\r\n")
        # over the payload as stored, as warcio and `warcio check` reckon it
        digest = _sha1(wire)
        reason = "" if cap.status_line is None else cap.status_line.split(" ", 2)[2:3]
        status = f"{cap.status} {reason[0] if reason else _reason(cap.status)}".strip()
        http = StatusAndHeaders(status, headers, protocol="HTTP/1.1" if cap.protocol == "HTTP/2" else cap.protocol)
        fields = self._base(cap)
        if cap.protocol == "HTTP/2":
            fields["WARC-Protocol"] = "h2"
        if cap.tls_version is not None:
            fields["WARC-Protocol"] = ", ".join(p for p in (fields.get("WARC-Protocol"),
                                                           cap.tls_version.lower().replace("v", "/")) if p)
            if cap.tls_cipher:
                fields["WARC-Cipher-Suite"] = cap.tls_cipher
        seen = self._revisit_of(digest, cap, size)
        if seen is not None:
            resp = w.create_revisit_record(cap.url, digest, seen[0], seen[1], http_headers=http,
                                           warc_headers_dict=fields)
        else:
            fields["WARC-Payload-Digest"] = digest
            resp = w.create_warc_record(cap.url, "response", payload=wire, length=wire.length,
                                        http_headers=http, warc_headers_dict=fields)
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
        request_line = f"{cap.method or 'GET'} {cap.target or '/'}"
        req_http = StatusAndHeaders(request_line, req_headers, is_http_request=True,
                                    protocol="HTTP/1.1" if cap.protocol == "HTTP/2" else cap.protocol)
        req_fields = self._base(cap, resp.rec_headers.get_header("WARC-Record-ID"))
        req_fields.pop("WARC-Truncated", None)
        request = w.create_warc_record(cap.url, "request", http_headers=req_http, warc_headers_dict=req_fields)
        return [resp, request]

    def _resource(self, cap: Capture, content_type: str, charset: str | None) -> list[Any]:
        w = self._writer_class(io.BytesIO(), gzip=self.gzip, warc_version="1.1")
        body = cap.body_reader()
        digest = _sha1(body)
        fields = self._base(cap)
        ctype = content_type
        if cap.body_type is None and charset and "charset" not in ctype and ctype.startswith("text/"):
            ctype = f"{ctype}; charset={charset}"
        seen = self._revisit_of(digest, cap, body.length)
        if seen is not None:
            rec = w.create_revisit_record(cap.url, digest, seen[0], seen[1], warc_headers_dict=fields)
        else:
            fields["WARC-Payload-Digest"] = digest
            rec = w.create_warc_record(cap.url, "resource", payload=body, length=body.length,
                                       warc_content_type=ctype, warc_headers_dict=fields)
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
        meta_fields = self._base(cap, rec.rec_headers.get_header("WARC-Record-ID"))
        meta_fields.pop("WARC-Truncated", None)
        meta = w.create_warc_record(cap.url, "metadata", payload=io.BytesIO(text), length=len(text),
                                    warc_content_type="application/warc-fields", warc_headers_dict=meta_fields)
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


def _field_line(line: str) -> str:
    """One application/warc-fields line: no CR or LF inside (a server's line cannot break it)."""
    return line.replace("\r", "\\r").replace("\n", "\\n")


def _reason(status: int | None) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(status or 0).phrase
    except ValueError:
        return ""

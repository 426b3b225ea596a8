"""Capture and WARC records of WAIS (against yaz-ztest) and Prospero (against the ARDP test
double, the one fake: no Prospero server exists to run), read back with warcio's
ArchiveIterator, ``warcio check`` and cdxj-indexer."""

from __future__ import annotations

import base64
import dataclasses
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from fixtures.launcher import Endpoint, Launcher
from tests.integration.test_warc import cdxj, records, warcio_check
from tests.prospero_testserver import ProsperoTestServer, start

from anyurl import Client
from anyurl.handlers.prospero import ProsperoOptions
from anyurl.handlers.wais import APDU_TYPE, WAISOptions
from anyurl.protocols import z3950
from anyurl.warc import WARCWriter


@pytest.fixture(scope="module")
def ztest(servers: Launcher) -> Endpoint:
    return servers.get("yaz_ztest")


@pytest.fixture(scope="module")
def nginx(servers: Launcher) -> Endpoint:
    return servers.get("nginx")


def fields(payload: bytes) -> list[tuple[str, str]]:
    """The lines of an application/warc-fields block."""
    out = []
    for line in payload.decode("utf-8").split("\r\n"):
        if line:
            name, _, value = line.partition(": ")
            out.append((name, value))
    return out


def split_apdus(data: bytes) -> list[bytes]:
    out = []
    while data:
        n = z3950.apdu_length(data)
        assert n is not None and n <= len(data)
        out.append(data[:n])
        data = data[n:]
    return out


# -- WAIS ---------------------------------------------------------------------


async def test_wais_document_capture_keeps_each_apdu_summarised_and_as_received(ztest: Endpoint) -> None:
    url = ztest.url("wais", "/Default/USMARC/z1%3A1%3Acomputer")
    async with Client(wais=WAISOptions(readable_marc=True)) as c:
        r = await c.fetch(url, capture=True)
    cap = r.capture
    assert cap is not None and cap.protocol == "Z39.50" and cap.url == url
    assert r.content_type == "text/plain" and r.text().startswith("LDR ")  # the rendering stays
    # the body is the record as the target sent it (ISO 2709), not anyurl's rendering
    assert cap.body is not None and int(cap.body[:5]) == len(cap.body) and cap.body.endswith(b"\x1d")
    assert cap.body_type == "application/marc"
    sent = [line.split(" ", 1)[0] for way, line in cap.exchange if way == ">"]
    got = [line.split(" ", 1)[0] for way, line in cap.exchange if way == "<"]
    assert sent == ["initRequest", "searchRequest", "presentRequest", "close"]
    assert got == ["initResponse", "searchResponse", "presentResponse"]
    assert ("<", "searchResponse success count=23") in cap.exchange  # yaz-ztest: "computer" has 23 hits
    assert any(way == ">" and "term='computer'" in line for way, line in cap.exchange)
    assert cap.status_line is not None and cap.status_line.startswith("presentResponse status=0")
    # every APDU as received, whole: init, search and present responses, decoding as the exchange says
    assert cap.raw is not None
    apdus = split_apdus(cap.raw)
    assert len(apdus) == 3
    decoded = [z3950.decode_apdu(a) for a in apdus]
    assert isinstance(decoded[2], z3950.PresentResult) and decoded[2].records[0].data == cap.body
    assert [z3950.summarize(d) for d in decoded] == [line for way, line in cap.exchange if way == "<"]
    assert cap.peer == (ztest.host, ztest.port)
    assert cap.started is not None and cap.ended is not None and cap.started <= cap.ended


async def test_wais_search_capture_is_the_apdus_and_keeps_the_entries(ztest: Endpoint) -> None:
    async with Client(wais=WAISOptions(max_results=5)) as c:
        r = await c.fetch(ztest.url("wais", "/Default?7"), capture=True)
    cap = r.capture
    assert cap is not None and r.entries is not None and len(r.entries) == 5
    assert cap.body_type == APDU_TYPE and cap.raw is None
    apdus = split_apdus(cap.body or b"")
    present = z3950.decode_apdu(apdus[-1])
    assert isinstance(present, z3950.PresentResult)
    assert [rec.data for rec in present.records] == [
        f"This is dummy SUTRS record number {i}\n".encode() for i in range(1, 6)]


async def test_wais_records_read_back(ztest: Endpoint, tmp_path: Path) -> None:
    doc_url = ztest.url("wais", "/Default/TEXT/z1%3A2%3A7")
    search_url = ztest.url("wais", "/Default?7")
    out = tmp_path / "wais.warc.gz"
    async with Client(capture=True) as c:
        doc = await c.fetch(doc_url)
        search = await c.fetch(search_url)
    with WARCWriter(out) as w:
        w.write(doc)
        w.write(search)
    got = records(out)
    kinds = [(rec.rec_type, rec.rec_headers.get_header("WARC-Target-URI"), rec.content_type) for rec, _ in got]
    assert kinds == [
        ("warcinfo", None, "application/warc-fields"),
        ("resource", doc_url, "text/plain"),  # the type of the record syntax (SUTRS)
        ("metadata", doc_url, "application/warc-fields"),
        ("resource", search_url, APDU_TYPE),
        ("metadata", search_url, "application/warc-fields"),
    ]
    assert got[1][1] == b"This is dummy SUTRS record number 2\n" == doc.content
    meta = fields(got[2][1])
    assert ("protocol", "Z39.50") in meta and ("peer", f"{ztest.host} {ztest.port}") in meta
    assert ("command", "searchRequest database='Default' term='7'") in meta
    assert ("reply", "searchResponse success count=7") in meta
    # the BER as received, whole, beside its summary
    assert doc.capture is not None and doc.capture.raw is not None
    assert ("raw-type", APDU_TYPE) in meta
    assert base64.b64decode(dict(meta)["raw-base64"]) == doc.capture.raw
    resource_id = got[1][0].rec_headers.get_header("WARC-Record-ID")
    assert got[2][0].rec_headers.get_header("WARC-Concurrent-To") == resource_id
    assert search.capture is not None and got[3][1] == search.capture.body
    warcio_check(out)
    index = [json.loads(line.split(" ", 2)[2]) for line in cdxj(out)]
    # one record for each URL: the resource (never the metadata, which pywb would serve instead)
    assert sorted((row["url"], row["mime"]) for row in index) == sorted(
        [(doc_url, "text/plain"), (search_url, APDU_TYPE.split(";")[0])])


# -- Prospero -----------------------------------------------------------------

FAST = ProsperoOptions(timeout=0.15, retries=6)


@pytest.fixture
async def pserver(nginx: Endpoint, tmp_path: Path) -> AsyncIterator[tuple[ProsperoTestServer, int]]:
    local = tmp_path / "local.txt"
    local.write_bytes(b"a local file\n")
    transport, server, port = await start(http_base=f"http://{nginx.host}:{nginx.port}", file_path=str(local))
    try:
        yield server, port
    finally:
        transport.close()


async def test_prospero_directory_capture_is_the_reply_as_received(
        pserver: tuple[ProsperoTestServer, int]) -> None:
    server, port = pserver
    url = f"prospero://127.0.0.1:{port}//pub"
    async with Client(prospero=FAST) as c:
        r = await c.fetch(url, capture=True)
    cap = r.capture
    assert cap is not None and cap.protocol == "Prospero" and r.entries is not None and len(r.entries) == 6
    sent = [line for way, line in cap.exchange if way == ">"]
    assert sent[:4] == server.log[:4] == ["VERSION 5 anyurl", "AUTHENTICATE '' UNAUTHENTICATED anonymous",
                                          "DIRECTORY ASCII /pub", "LIST ATTRIBUTES COMPONENTS"]
    assert cap.body is not None and b"LINK L DIRECTORY many INTERNET-D" in cap.body
    assert cap.body.decode().splitlines() == [line for way, line in cap.exchange if way == "<"]
    assert cap.body_type == "text/plain" and cap.peer == ("127.0.0.1", port)


async def test_prospero_followed_link_archives_the_lookup_then_the_target(
        pserver: tuple[ProsperoTestServer, int], nginx: Endpoint, tmp_path: Path) -> None:
    _server, port = pserver
    url = f"prospero://127.0.0.1:{port}//pub/hello"
    target = f"http://{nginx.host}:{nginx.port}/hello.txt"
    out = tmp_path / "prospero.warc.gz"
    async with Client(prospero=FAST, capture=True) as c:
        followed = await c.fetch(url)
        described = await c.fetch(url, options=dataclasses.replace(FAST, follow=False))
    cap = followed.capture
    assert cap is not None and cap.protocol == "HTTP/1.1" and cap.url == target
    assert [p.protocol for p in cap.previous] == ["Prospero"]
    lookup = cap.previous[0]
    assert any("GET-OBJECT-INFO" in line for way, line in lookup.exchange if way == ">")
    assert lookup.body is not None and b"ACCESS-METHOD" in lookup.body
    with WARCWriter(out) as w:
        w.write(followed)
        w.write(described)
    got = records(out)
    kinds = [(rec.rec_type, rec.rec_headers.get_header("WARC-Target-URI")) for rec, _ in got[1:]]
    assert kinds == [("resource", url), ("metadata", url), ("response", target), ("request", target),
                     ("revisit", url), ("metadata", url)]  # the same reply twice: a revisit
    assert got[1][1] == lookup.body and got[3][1] == b"hello over http\n"
    assert ("command", "LIST ATTRIBUTES COMPONENTS") in fields(got[2][1])
    warcio_check(out)
    assert any(json.loads(line.split(" ", 2)[2])["url"] == url for line in cdxj(out))


# -- TLS on command protocols --------------------------------------------------


async def test_ftps_and_nntps_captures_name_the_tls_version_and_cipher(servers: Launcher, tmp_path: Path) -> None:
    import ssl

    from anyurl.handlers.ftp import FTPOptions
    from anyurl.handlers.news import NewsOptions

    ftps, inn = servers.get("vsftpd_tls"), servers.get("inn")
    ftp_url = f"ftp://{ftps.host}:{ftps.port}/pub/blob.bin"
    news_url = f"nntps://{inn.host}:{inn.info['tls_port']}/{inn.info['group']}/1"
    out = tmp_path / "tls.warc.gz"
    ctx = ssl.create_default_context(cafile=inn.info["cafile"])
    async with Client(ftp=FTPOptions(tls=True, cafile=ftps.info["cafile"]), news=NewsOptions(ssl_context=ctx),
                      capture=True) as c:
        got = [await c.fetch(ftp_url), await c.fetch(news_url)]
    for r in got:
        cap = r.capture
        assert cap is not None and cap.tls_version in ("TLSv1.2", "TLSv1.3") and cap.tls_cipher, r.url
    ftp_cap = got[0].capture
    assert ftp_cap is not None and ("<", "234 Proceed with negotiation.") in ftp_cap.exchange  # AUTH TLS, as sent
    with WARCWriter(out) as w:
        for r in got:
            w.write(r)
    metas = [fields(data) for rec, data in records(out) if rec.rec_type == "metadata"]
    assert len(metas) == 2
    for meta, r in zip(metas, got, strict=True):
        assert r.capture is not None
        assert ("tls", f"{r.capture.tls_version} {r.capture.tls_cipher}") in meta
    warcio_check(out)

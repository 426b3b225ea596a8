"""wais: URLs against the real yaz-ztest Z39.50 target (fixtures/servers/yaz_ztest.py)."""

from __future__ import annotations

import asyncio
import glob
import time
from pathlib import Path

import pytest
from fixtures.launcher import Endpoint

import anyurl
from anyurl.client import Client, Timeouts
from anyurl.errors import (
    FetchTimeout,
    NotRetrievable,
    ProtocolError,
    ResourceNotFound,
    TruncatedTransfer,
    UnsafeURL,
)
from anyurl.handlers.wais import WAISOptions
from anyurl.urls import WAISURL


@pytest.fixture(scope="module")
def ztest(servers: object) -> Endpoint:
    return servers.get("yaz_ztest")  # type: ignore[attr-defined, no-any-return]


def log_lines(ep: Endpoint, since: int = 0) -> list[str]:
    # yaz-ztest writes its log from forked children: give it a moment.
    path = Path(ep.info["log"])
    for _ in range(50):
        text = path.read_text(errors="replace") if path.exists() else ""
        lines = text.splitlines()[since:]
        if any("Close" in line for line in lines):
            return lines
        time.sleep(0.02)
    return lines


def apdu_logs(ep: Endpoint, needle: str) -> list[str]:
    for _ in range(50):
        logs = [Path(p).read_text(errors="replace") for p in glob.glob(ep.info["apdu_log_prefix"] + ".*")]
        mine = [t for t in logs if needle in t and "presentRequest" in t]
        if mine:
            return mine
        time.sleep(0.02)
    return []


def log_mark(ep: Endpoint) -> int:
    path = Path(ep.info["log"])
    return len(path.read_text(errors="replace").splitlines()) if path.exists() else 0


async def test_search_numeric_term_sets_hit_count(ztest: Endpoint) -> None:
    mark = log_mark(ztest)
    async with Client(wais=WAISOptions(max_results=5)) as client:
        res = await client.fetch(ztest.url("wais", "/Default?7"))
    assert res.meta["count"] == 7
    assert res.entries is not None and len(res.entries) == 5
    first = res.entries[0]
    # the headline is the title; the name is the record id, the URL's last segment
    assert (first.title, first.name) == ("This is dummy SUTRS record number 1", "z1:1:7")
    assert first.meta["rank"] == 1 and first.meta["wtype"] == "TEXT"
    assert first.size == len(b"This is dummy SUTRS record number 1\n")
    assert first.url == ztest.url("wais", "/Default/TEXT/z1%3A1%3A7")
    assert b"This is dummy SUTRS record number 5" in res.content
    lines = log_lines(ztest, mark)
    assert any("Search Default OK 7" in line and "RPN @attrset Bib-1 7" in line for line in lines), lines
    assert any("Present OK" in line and "1+5" in line for line in lines), lines


async def test_search_word_hash_count(ztest: Endpoint) -> None:
    # yaz-ztest: a non-numeric term gives hash(term) % 24 hits; "computer" gives 23.
    res = await anyurl.fetch(ztest.url("wais", "/Default?computer"))
    assert res.meta["count"] == 23
    assert res.entries is not None and len(res.entries) == 23
    assert res.entries[22].title == "This is dummy SUTRS record number 23"


async def test_search_with_no_hits(ztest: Endpoint) -> None:
    res = await anyurl.fetch(ztest.url("wais", "/Default?0"))
    assert res.meta["count"] == 0 and res.entries == [] and res.content == b""


async def test_database_description(ztest: Endpoint) -> None:
    async with Client(wais=WAISOptions(count_term="12")) as client:
        res = await client.fetch(ztest.url("wais", "/Default"))
    text = res.text()
    assert res.meta["count"] == 12 and res.meta["version"] == 3
    assert "GFS/YAZ" in res.meta["target"] and "search" in res.meta["services"]
    assert "WAIS database Default" in text and "Records matching '12': 12" in text


async def test_document_as_sutrs_from_search_entry(ztest: Endpoint) -> None:
    mark = log_mark(ztest)
    async with Client() as client:
        listing = await client.fetch(ztest.url("wais", "/Default?9"))
        assert listing.entries is not None
        url = listing.entries[3].url
        assert url is not None
        doc = await client.fetch(url)
    assert doc.content == b"This is dummy SUTRS record number 4\n"
    assert doc.content_type == "text/plain" and doc.meta["syntax"] == "SUTRS"
    lines = log_lines(ztest, mark)
    assert any("Present OK" in line and "4+1" in line for line in lines), lines


async def test_document_as_xml(ztest: Endpoint) -> None:
    doc = await anyurl.fetch(ztest.url("wais", "/Default/XML/z1%3A2%3Acomputer"))
    assert doc.content_type == "application/xml" and doc.meta["syntax"] == "XML"
    assert doc.content.startswith(b'<record xmlns="http://www.loc.gov/MARC21/slim">')
    assert b"<leader>" in doc.content


async def test_document_as_usmarc_raw_and_readable(ztest: Endpoint) -> None:
    url = ztest.url("wais", "/Default/USMARC/z1%3A1%3Acomputer")
    raw = await anyurl.fetch(url)
    assert raw.content_type == "application/marc"
    # ISO 2709: the leader's first five digits are the record length.
    assert int(raw.content[:5]) == len(raw.content) and raw.content.endswith(b"\x1d")
    async with Client(wais=WAISOptions(readable_marc=True)) as client:
        readable = await client.fetch(url)
    assert readable.content_type == "text/plain"
    text = readable.text()
    assert text.startswith("LDR ") and "\n245 10 $a How to program a computer" in text


async def test_unknown_database_is_not_found(ztest: Endpoint) -> None:
    with pytest.raises(ResourceNotFound) as info:
        await anyurl.fetch(ztest.url("wais", "/NoSuchDb?computer"))
    assert "109" in str(info.value) and "NoSuchDb" in str(info.value)
    with pytest.raises(ResourceNotFound, match="109"):
        await anyurl.fetch(ztest.url("wais", "/NoSuchDb"))


async def test_unsupported_syntax_is_protocol_error(ztest: Endpoint) -> None:
    with pytest.raises(ProtocolError) as info:
        await anyurl.fetch(ztest.url("wais", "/Default/1.2.840.10003.5.1000.81.1/z1%3A1%3Acomputer"))
    assert "[239] Record syntax not supported" in str(info.value)


async def test_out_of_range(ztest: Endpoint) -> None:
    with pytest.raises(ResourceNotFound, match="has 3 hits, not 4"):
        await anyurl.fetch(ztest.url("wais", "/Default/TEXT/z1%3A4%3A3"))
    # Asking the target directly past the end gives its diagnostic 13.
    async with Client() as client:
        url = WAISURL("wais", ztest.host, ztest.port, database="Default", wtype="TEXT", wpath="z1:1:0")
        with pytest.raises(ResourceNotFound, match=r"\[13\] Present request out of range|has 0 hits"):
            await client.fetch(url)


async def test_foreign_docid_and_wtype_refused(ztest: Endpoint) -> None:
    with pytest.raises(NotRetrievable, match="not issued by anyurl"):
        await anyurl.fetch(ztest.url("wais", "/Default/TEXT/0123abc"))
    with pytest.raises(NotRetrievable, match="WAIS type 'FOO'"):
        await anyurl.fetch(ztest.url("wais", "/Default/FOO/z1%3A1%3Ax"))


async def test_control_characters_refused_before_connecting() -> None:
    url = WAISURL("wais", "127.0.0.1", 9, database="Default", search="a\r\nb")
    with pytest.raises(UnsafeURL):
        await anyurl.fetch(url)


async def test_slow_database_times_out(ztest: Endpoint) -> None:
    async with Client(timeouts=Timeouts(read=0.3)) as client:
        with pytest.raises(FetchTimeout):
            await client.fetch(ztest.url("wais", "/Slow2?computer"))


async def test_record_larger_than_message_size(ztest: Endpoint) -> None:
    # The Init offers max_apdu as the preferred message size; the target honours it.
    async with Client(wais=WAISOptions(max_apdu=200)) as client:
        with pytest.raises(ProtocolError, match=r"\[17\] Record exceeds Preferred-message-size"):
            await client.fetch(ztest.url("wais", "/Default/USMARC/z1%3A1%3Acomputer"))


async def test_oversized_apdu_refused_before_reading_it() -> None:
    # A hostile target announcing a 2 GiB InitResponse: refused from the header alone.
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(100)
        writer.write(b"\xb5\x84\x7f\xff\xff\xff" + b"\x00" * 100)
        await writer.drain()
        await reader.read(100)
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        with pytest.raises(ProtocolError, match="limit"):
            await anyurl.fetch(f"wais://127.0.0.1:{port}/Default?x")


async def test_target_closing_mid_apdu_is_truncated() -> None:
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(100)
        writer.write(b"\xb5\x20\x83\x01")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        with pytest.raises(TruncatedTransfer):
            await anyurl.fetch(f"wais://127.0.0.1:{port}/Default?x")


async def test_apdu_log_shows_requests(ztest: Endpoint) -> None:
    await anyurl.fetch(ztest.url("wais", "/db.apdu/XML/z1%3A1%3A5"))
    mine = apdu_logs(ztest, "'db.apdu'")
    assert mine, "no APDU log of the session"
    assert "searchRequest" in mine[0] and "presentRequest" in mine[0]
    assert "preferredRecordSyntax OID: 1 2 840 10003 5 109 10" in mine[0]


async def test_partial_presents_are_continued(ztest: Endpoint) -> None:
    # A small message size makes yaz-ztest answer "Partial" with one record per Present.
    mark = log_mark(ztest)
    async with Client(wais=WAISOptions(max_apdu=300)) as client:
        res = await client.fetch(ztest.url("wais", "/Default?4"))
    assert res.entries is not None
    assert [e.title for e in res.entries] == [f"This is dummy SUTRS record number {i}" for i in range(1, 5)]
    presents = [line for line in log_lines(ztest, mark) if "Present" in line]
    assert [p.split()[-1] for p in presents] == ["1+4", "2+3", "3+2", "4+1"], presents


async def test_opac_record_in_indefinite_length_arrives_as_raw_ber(ztest: Endpoint) -> None:
    # yaz-ztest sends OPAC records as an indefinite-length single-ASN1-type; asn1tools refused
    # that (a ProtocolError), our BER codec reads it and hands over the record's own encoding.
    res = await anyurl.fetch(ztest.url("wais", "/Default/1.2.840.10003.5.102/z1%3A1%3Acomputer"))
    assert res.meta["syntax"] == "OPAC"
    assert res.content[:2] == b"\x30\x80" and res.content.endswith(b"\x00\x00")  # OPACRecord, indefinite
    assert b"nam  22" in res.content  # the bibliographic (USMARC) record inside


@pytest.mark.parametrize(("reply", "problem"), [
    (b"\xb5\x12\x83\x02\x07\x80\x84\x02\x07\x80\x85\x01\x01\x86\x01\x01\x8c\x02\xff\xff",
     r"BOOLEAN \[12\] at offset 16 has 2 contents octets"),
    (b"\xb5\x06\xa3\x03\x04\x05ab", "runs past the end of the element enclosing it"),
    (b"\xb5\x04\xa3\x03\x04\x05", "claims 3 bytes but only 2 remain"),
    (b"\xb5\x80" * 80 + b"\x00\x00" * 80, "nesting deeper than 64"),
    (b"\xb5\x04\x9f\x80\x01\x00", "padding octet"),
    (b"\xbf\x81\x00\x00", r"unexpected APDU \[128\]"),
])
async def test_malformed_init_response_is_a_protocol_error(reply: bytes, problem: str) -> None:
    # whole APDUs the BER codec must refuse: the error names the URL and the problem, nothing else escapes
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(200)
        writer.write(reply)
        await writer.drain()
        await reader.read(100)
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    url = f"wais://127.0.0.1:{port}/Default?x"
    async with server:
        with pytest.raises(ProtocolError, match=problem) as info:
            await anyurl.fetch(url)
    assert str(info.value).startswith(url)

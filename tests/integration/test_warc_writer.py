"""anyurl.transfer.warc without a server: records from Capture values, read back by warcio (here, not in
tests/unit: the unit suite runs without the test extra's warcio on other Pythons)."""

from __future__ import annotations

from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from anyurl import ConfigurationError, Response
from anyurl.errors import ResourceNotFound
from anyurl.response import Capture, mask_command
from anyurl.transfer.warc import WARCWriter


def gopher(url: str, body: bytes) -> Response:
    cap = Capture("gopher", url, body=body, body_type="application/gopher-menu")
    cap.sent("/\r\n")
    return Response(url, b"rendered", "text/plain", capture=cap)


def kinds(path: Path) -> list[tuple[str, str | None]]:
    with path.open("rb") as f:
        return [(r.rec_type, r.rec_headers.get_header("WARC-Target-URI")) for r in ArchiveIterator(f)]


def test_a_payload_seen_before_is_a_revisit_within_the_bound(tmp_path: Path) -> None:
    out = tmp_path / "g.warc.gz"
    with WARCWriter(out) as w:
        w.max_seen = 2
        for i, body in enumerate([b"a\r\n.\r\n", b"a\r\n.\r\n", b"b\r\n.\r\n", b"c\r\n.\r\n", b"a\r\n.\r\n"]):
            w.write(gopher(f"gopher://h/1/{i}", body))
    got = [k for k, _ in kinds(out)]
    # the third "a" comes after "b" and "c" pushed it out of the two remembered: written again
    assert got == ["warcinfo", "resource", "metadata", "revisit", "metadata", "resource", "metadata",
                   "resource", "metadata", "resource", "metadata"]


def test_no_capture_no_record_and_errors_are_only_logged(tmp_path: Path) -> None:
    out = tmp_path / "e.warc.gz"
    with WARCWriter(out) as w:
        with pytest.raises(ConfigurationError, match="capture=True"):
            w.write(Response("gopher://h/1/", b"x"))
        assert not w.add("gopher://h/1/x", ResourceNotFound("gone", url="gopher://h/1/x"))
        assert w.failures == 1 and w.records == 0
    assert not out.exists() or kinds(out) == []


def test_metadata_lines_cannot_be_broken_by_a_server(tmp_path: Path) -> None:
    out = tmp_path / "m.warc.gz"
    r = gopher("gopher://h/1/", b".\r\n")
    assert r.capture is not None
    r.capture.received("3 evil\r\nline: injected")
    with WARCWriter(out) as w:
        w.write(r)
    with out.open("rb") as f:
        meta = [rec.content_stream().read() for rec in ArchiveIterator(f) if rec.rec_type == "metadata"][0]
    assert b"\r\nline: injected" not in meta and b"reply: 3 evil\\r\\nline: injected" in meta


@pytest.mark.parametrize(("line", "shown"), [("PASS secret", "PASS ****"), ("pass secret", "pass ****"),
                                             ("AUTHINFO PASS x", "AUTHINFO PASS ****"), ("USER bob", "USER bob")])
def test_passwords_are_masked_in_an_exchange(line: str, shown: str) -> None:
    assert mask_command(line) == shown

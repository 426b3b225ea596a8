"""LIST formats real servers of the suite do not send (VMS, MVS, OS/400, ...), from
tests/hostile/fakes/ftp_listing_server.py, which answers LIST with the lines of the corpus
(tests/unit/protocols/ftp_listing_corpus.json) of one format and NLST with their names (issue 25
item 1: such listings came back empty or partial)."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.procs import spawn

from anyurl import Client, Timeouts

HERE = Path(__file__).resolve().parent
CORPUS = json.loads((HERE.parent / "unit" / "protocols" / "ftp_listing_corpus.json").read_text(encoding="utf-8"))
FORMATS = ["unix", "dos", "eplf", "vms", "mvs", "os400", "os2", "netware", "enterprise-unix", "windows-dir"]


class Listing:
    def __init__(self, port: int, log: Path, fmt: str) -> None:
        self.port = port
        self.log = log
        self.format = fmt

    def url(self, rest: str) -> str:
        return f"ftp://127.0.0.1:{self.port}{rest}"

    def commands(self) -> list[str]:
        return [line[4:] for line in self.log.read_text().splitlines() if line.startswith("CMD ")]


@pytest.fixture
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Listing]:
    log = tmp_path / "hostile.log"
    with spawn([sys.executable, str(HERE / "fakes" / "ftp_listing_server.py"), "--format", request.param,
                "--log", str(log)], stdout=subprocess.PIPE) as proc:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        yield Listing(port, log, request.param)


def client() -> Client:
    return Client(timeouts=Timeouts(connect=5, read=10, total=60), use_netrc=False)


def expected(fmt: str) -> list[dict[str, Any]]:
    return [e for c in CORPUS["cases"] if c["format"] == fmt for e in c["entries"]]


@pytest.mark.parametrize("server", FORMATS, indirect=True)
async def test_every_line_of_each_format_is_an_entry(server: Listing, caplog: pytest.LogCaptureFixture) -> None:
    want = expected(server.format)
    assert want
    with caplog.at_level(logging.WARNING, logger="anyurl.ftp"):
        async with client() as c:
            r = await c.fetch(server.url("/dir/"))
    entries = r.entries
    assert entries is not None
    assert [(e.name, e.kind, e.size) for e in entries] == [(w["name"], w["kind"], w["size"]) for w in want]
    # each entry's URL names it in the listed directory (a directory ends in "/")
    for e in entries:
        assert e.url is not None and e.url.startswith(server.url("/dir/"))
        assert e.url.endswith("/") == (e.kind == "directory")
    assert [c for c in server.commands() if c in ("LIST", "NLST", "MLSD")] == ["LIST"]
    assert "no known format" not in caplog.text


@pytest.mark.parametrize("server", ["vms"], indirect=True)
def test_anyurl_ls_shows_a_vms_listing(server: Listing) -> None:
    proc = subprocess.run([sys.executable, "-m", "anyurl", "ls", server.url("/dir/"), "--json"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    shown = json.loads(proc.stdout)
    assert [(e["name"], e["kind"]) for e in shown] == [(w["name"], w["kind"]) for w in expected("vms")]
    assert shown[0]["meta"] == {"format": "vms", "version": 1, "blocks": 213, "size_approx": 213 * 512,
                                "owner": "[ANONYMOU,ANONYMOUS]", "protection": "(RWED,RWED,,)"}
    assert shown[1]["url"] == server.url("/dir/PUB/")


@pytest.mark.parametrize("server", ["riddles"], indirect=True)
async def test_a_listing_no_line_of_which_reads_falls_back_to_nlst(
        server: Listing, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="anyurl.ftp"):
        async with client() as c:
            r = await c.fetch(server.url("/dir/"))
    assert r.entries is not None
    assert [(e.name, e.kind, e.url) for e in r.entries] == [
        ("alpha.txt", "file", server.url("/dir/alpha.txt")), ("beta.txt", "file", server.url("/dir/beta.txt"))]
    assert all(e.meta == {"kind_known": False} for e in r.entries)
    assert r.meta["listing"] == "nlst"
    assert [c for c in server.commands() if c in ("LIST", "NLST")] == ["LIST", "NLST"]
    assert "no line of the LIST reply in a known format" in caplog.text
    assert "'?? alpha.txt ??'" in caplog.text


@pytest.mark.parametrize("server", ["riddles-no-nlst"], indirect=True)
async def test_unreadable_lines_are_info_entries_when_nlst_is_refused(
        server: Listing, caplog: pytest.LogCaptureFixture) -> None:
    secret = server.url("/dir/").replace("ftp://", "ftp://me:s3cret@")
    with caplog.at_level(logging.WARNING, logger="anyurl.ftp"):
        async with client() as c:
            r = await c.fetch(secret)
            listed = [e async for e in c.ls(server.url("/dir/"))]
    assert r.entries is not None
    assert [(e.name, e.kind, e.url, e.title) for e in r.entries] == [
        ("??", "info", None, "?? alpha.txt ??"), ("riddles", "info", None, "this server speaks in riddles"),
        ("??", "info", None, "?? beta.txt ??")]
    assert all(e.meta == {"format": "unknown"} for e in r.entries)
    assert [e.title for e in listed] == [e.title for e in r.entries]
    assert "3 LIST line(s) in no known format" in caplog.text
    assert "s3cret" not in caplog.text  # the logged URL has its password masked


@pytest.mark.parametrize("server", ["unknown"], indirect=True)
def test_anyurl_ls_prints_every_unreadable_line(server: Listing) -> None:
    proc = subprocess.run([sys.executable, "-m", "anyurl", "ls", server.url("/dir/")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    for line in [line for c in CORPUS["cases"] if c["format"] == "unknown" for line in c["lines"]]:
        assert line in proc.stdout
    assert "in no known format" in proc.stderr


@pytest.mark.parametrize("server", ["mlsd"], indirect=True)
async def test_an_mlsd_line_without_facts_is_an_info_entry(server: Listing,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    # it was read as facts "garbage" and a file named "without facts"
    with caplog.at_level(logging.WARNING, logger="anyurl.ftp"):
        async with client() as c:
            r = await c.fetch(server.url("/dir/"))
    assert r.entries is not None
    assert [(e.name, e.kind, e.url) for e in r.entries] == [
        ("a.txt", "file", server.url("/dir/a.txt")), ("facts", "info", None), ("sub", "directory", server.url("/dir/sub/"))]
    assert r.entries[1].title == "garbage without facts"
    assert [c for c in server.commands() if c in ("LIST", "NLST", "MLSD")] == ["MLSD"]
    assert "1 MLSD line(s) in no known format" in caplog.text

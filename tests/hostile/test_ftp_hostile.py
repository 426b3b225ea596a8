"""FTP faults no real server produces, from tests/hostile/fakes/ftp_hostile.py run as a
subprocess: the client's memory and time are measured alone, and the server's log
shows what it was asked and how much it managed to send."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

import pytest
from tests.procs import spawn

from anyurl import (
    Client,
    ConnectError,
    FetchTimeout,
    Limits,
    OverlongTransfer,
    ProtocolError,
    Retry,
    TemporaryFailure,
    Timeouts,
    TruncatedTransfer,
)

HERE = Path(__file__).resolve().parent
PAYLOAD = b"0123456789" * 100  # what the fake server's RETR sends (fakes/ftp_hostile.py)


class Hostile:
    def __init__(self, port: int, log: Path) -> None:
        self.port = port
        self.log = log

    def url(self, rest: str) -> str:
        return f"ftp://127.0.0.1:{self.port}{rest}"

    def lines(self, prefix: str) -> list[str]:
        text = self.log.read_text()
        # the client closes without waiting for QUIT's reply: the server may log it a moment later
        deadline, quiet = time.monotonic() + 3, time.monotonic()
        while not text.endswith("CMD QUIT\n") and time.monotonic() < deadline and time.monotonic() - quiet < 0.3:
            time.sleep(0.02)
            now = self.log.read_text()
            if now != text:
                text, quiet = now, time.monotonic()
        return [line[len(prefix) + 1:] for line in text.splitlines() if line.startswith(prefix)]


@pytest.fixture
def hostile(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Hostile]:
    log = tmp_path / "hostile.log"
    with spawn([sys.executable, str(HERE / "fakes" / "ftp_hostile.py"), "--scenario", request.param,
                "--log", str(log)], stdout=subprocess.PIPE) as proc:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        yield Hostile(port, log)
        proc.terminate()  # a clean stop first; spawn kills what is left and reaps it
        proc.wait(10)


def client(**kwargs: object) -> Client:
    return Client(timeouts=Timeouts(connect=5, read=5, total=60), use_netrc=False, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("hostile", ["endless-list"], indirect=True)
async def test_endless_listing_stops_at_the_entry_limit(hostile: Hostile) -> None:
    # Issue 11: a 5-million-entry LIST took 1.6 GB because the whole listing was buffered
    # before the entry limit was checked. Now entries are parsed as they arrive, the
    # limit stops the transfer (ABOR) and memory follows the entries kept.
    limit = 20_000
    tracemalloc.start()
    start = time.monotonic()
    try:
        async with client(limits=Limits(max_entries=limit)) as c:
            with pytest.raises(ProtocolError, match=f"more than {limit} entries") as info:
                await c.fetch(hostile.url("/pub/"))
        elapsed = time.monotonic() - start
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert info.value.url == hostile.url("/pub/")
    assert elapsed < 20
    # 20,000 parsed entries (name, size, date) plus one 64 KiB read buffer; the listing
    # text itself is never kept whole (the old code held up to limit * 512 bytes twice).
    assert peak < 16 << 20, f"peak {peak >> 20} MiB"
    cmds = hostile.lines("CMD")
    assert cmds[cmds.index("LIST"):][:2] == ["LIST", "ABOR"]
    sent = int(hostile.lines("DATA")[0].split()[-2])
    # the server could not send much past the limit: the client stopped reading at once
    assert sent < 64 * limit + (8 << 20), sent


@pytest.mark.parametrize("hostile", ["endless-list"], indirect=True)
async def test_endless_listing_memory_follows_entries_kept(hostile: Hostile) -> None:
    # Ten times the entries kept: about ten times the memory, not the listing's size.
    peaks = []
    for limit in (2_000, 20_000):
        tracemalloc.start()
        try:
            async with client(limits=Limits(max_entries=limit)) as c:
                with pytest.raises(ProtocolError, match="more than"):
                    await c.fetch(hostile.url("/pub/"))
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
    small, big = peaks
    per_entry = (big - small) / 18_000
    assert per_entry < 700, per_entry  # one ListItem with its name and datetime, not 512-byte slots


@pytest.mark.parametrize("hostile", ["overlong"], indirect=True)
async def test_body_longer_than_size_is_an_error(hostile: Hostile) -> None:
    # Issue 11: SIZE said 1,000,000, the server sent 10 GiB, exit 0. Here: 1000 announced,
    # 300,000 sent; the client stops at the first excess byte and never reports success.
    async with client() as c:
        with pytest.raises(OverlongTransfer, match="more bytes than announced") as info:
            await c.fetch(hostile.url("/f.bin"))
        assert info.value.exit_code == 19
        async with c.open(hostile.url("/f.bin")) as body:
            assert body.size == 1000
            got = b""
            with pytest.raises(OverlongTransfer, match="SIZE said 1000"):
                async for chunk in body:
                    got += chunk
            assert len(got) <= 1000  # nothing beyond the announced size is handed over
            assert not body.complete


@pytest.mark.parametrize("hostile", ["temporary"], indirect=True)
async def test_450_and_421_are_temporary_and_retried(hostile: Hostile) -> None:
    # first connection: "450 busy" to RETR; second: the file. Retry retries TemporaryFailure.
    async with client(retry=Retry(attempts=2, backoff=0)) as c:
        r = await c.fetch(hostile.url("/f.bin"))
    assert r.content == b"0123456789" * 100
    assert hostile.lines("CMD").count("RETR f.bin") == 2
    # third and later connections are greeted with 421: TemporaryFailure, with the reply
    async with client(retry=Retry(attempts=1)) as c:
        with pytest.raises(TemporaryFailure, match="421 Too many connections"):
            await c.fetch(hostile.url("/f.bin"))


@pytest.mark.parametrize("hostile", ["overlong"], indirect=True)
def test_cli_exit_code_for_a_body_longer_than_size(hostile: Hostile, tmp_path: Path) -> None:
    # The symptom was exit 0 with the file written; now exit 19 and no file.
    dest = tmp_path / "dest"
    dest.mkdir()
    out = dest / "f.bin"
    proc = subprocess.run([sys.executable, "-m", "anyurl", "get", hostile.url("/f.bin"), "-o", str(out)],
                          capture_output=True, text=True, timeout=60, cwd=dest)
    assert proc.returncode == 19, proc.stderr
    assert "more bytes than announced" in proc.stderr
    assert list(dest.iterdir()) == []  # neither the file nor a part file is left


@pytest.mark.parametrize("size", [100, 8 << 20], ids=["all-sent", "reset-mid-upload"])
@pytest.mark.parametrize(("hostile", "error", "code"), [
    ("disk-full", TemporaryFailure, "452"), ("quota", ProtocolError, "552")], indirect=["hostile"])
async def test_upload_refused_after_its_data_keeps_the_connection(
        hostile: Hostile, error: type[Exception], code: str, size: int) -> None:
    # The server stored part of the upload, reset the data connection and refused (disk full,
    # quota): its reply completes STOR, so the temporary file is deleted and the same login
    # serves the next request. 100 bytes: every byte was sent before the refusal; 8 MiB: the
    # reset stops the writes and the refusal is read after it.
    async with client() as c:
        with pytest.raises(error, match=f"STOR .*{code} ") as info:
            await c.upload(hostile.url("/up/f.bin"), b"x" * size)
        assert info.value.reply is not None and info.value.reply.startswith(code)  # type: ignore[attr-defined]
        assert info.value.url == hostile.url("/up/f.bin")  # type: ignore[attr-defined]
        assert (await c.fetch(hostile.url("/pub/f.bin"))).content == b"0123456789" * 100
    cmds = hostile.lines("CMD")
    temp = cmds[6].removeprefix("STOR ")
    assert temp.startswith(".f.bin.") and temp.endswith(".part"), cmds
    assert cmds == ["USER anonymous", "PASS <password>", "PWD", "CWD up", "TYPE I", "EPSV", f"STOR {temp}",
                    f"DELE {temp}",  # the partial temporary file is removed
                    "CWD /pub", "SIZE f.bin", "EPSV", "RETR f.bin", "QUIT"]  # one login for both
    assert hostile.lines("DATA") == [f"stored {min(size, 1 << 16)}"]


@pytest.mark.parametrize("hostile", ["evil-names"], indirect=True)
async def test_listing_names_no_directory_holds_are_dropped(hostile: Hostile) -> None:
    # Entry.name is documented as the name a local file would get: a LIST name with "/"
    # ("../../etc/passwd") or a NUL cannot be one (and a crawler joining it to its output
    # directory would write outside it). Such lines are dropped; a legal name is kept.
    async with client() as c:
        entries = [e async for e in c.ls(hostile.url("/dir/"))]
    assert [(e.kind, e.name) for e in entries] == [("file", "cr\rname"), ("file", "plain.txt")]
    assert [e.url for e in entries] == [hostile.url("/dir/cr%0Dname"), hostile.url("/dir/plain.txt")]
    assert "CMD LIST" in hostile.log.read_text().splitlines()


@pytest.mark.parametrize("hostile", ["pure-anon"], indirect=True)
async def test_anonymous_upload_where_renaming_is_refused_stores_directly(hostile: Hostile) -> None:
    # Issue 25 item 6: Pure-FTPd refuses dot names (553) and any RNFR (550 "Anonymous users
    # are not allowed to move/rename files") to anonymous users; the upload failed with
    # ResourceNotFound. Any refusal of RNFR/RNTO now ends in a direct STOR of the name.
    async with client() as c:
        await c.upload(hostile.url("/incoming/new.bin"), b"pure data")
        assert (await c.fetch(hostile.url("/incoming/new.bin"))).content == b"pure data"
    cmds = [c for c in hostile.lines("CMD") if c.split()[0] in ("STOR", "RNFR", "RNTO", "DELE")]
    assert [c.split()[0] for c in cmds] == ["STOR", "STOR", "RNFR", "DELE", "STOR"]
    assert cmds[0].startswith("STOR .new.bin.") and cmds[-1] == "STOR new.bin"


@pytest.mark.parametrize("hostile", ["out-of-step"], indirect=True)
async def test_server_answering_out_of_step_gets_one_command_at_a_time(
        hostile: Hostile, caplog: pytest.LogCaptureFixture) -> None:
    # Issue 24 step 5: CWD and TYPE go in one write before the first RETR. A server that runs
    # commands at once (as aioftp.Server does) answers TYPE before the slow CWD: the
    # replies do not fit their commands, so the connection is dropped, the fetch is made again
    # one command at a time, the log says so, and that server is never pipelined to again.
    caplog.set_level("WARNING", logger="anyurl.ftp")
    async with client() as c:
        assert (await c.fetch(hostile.url("/pub/sub/f.bin"))).content == b"0123456789" * 100
        assert (await c.fetch(hostile.url("/pub/sub/g.bin"))).content == b"0123456789" * 100
    cmds = hostile.lines("CMD")
    login = ["USER anonymous", "PASS <password>", "PWD"]
    assert cmds == [*login, "CWD /pub/sub", "TYPE I",  # in one write: answered 200, 250
                    *login, "CWD pub", "CWD sub", "TYPE I", "SIZE f.bin", "EPSV", "RETR f.bin",
                    "SIZE g.bin", "EPSV", "RETR g.bin", "QUIT"], cmds  # the same login: in step
    assert [r.getMessage() for r in caplog.records if "out of step" in r.getMessage()] == [
        f"127.0.0.1:{hostile.port} answered pipelined commands out of step (reply out of step: '200 ok' where "
        "the answer to CWD /pub/sub was due (pipelined)): commands go one at a time to it from now on"]


@pytest.mark.parametrize("retry", [1, 2])
@pytest.mark.parametrize("hostile", ["eager-vsftpd"], indirect=True)
async def test_server_acting_on_commands_queued_behind_a_transfer_falls_back(
        hostile: Hostile, retry: int, caplog: pytest.LogCaptureFixture) -> None:
    # Issue 24 step 5: the next file's EPSV+RETR are written behind a transfer in progress only
    # to a server whose greeting says vsftpd (it reads them once the transfer is over). One
    # that says so but acts on them at once (as pyftpdlib does: the EPSV closes the transfer's
    # data connection, and its 226 never comes) must not turn the cut transfer into a success:
    # the 229 where the 226 was due is TruncatedTransfer (Retry retries it), the request queued
    # behind is made again on a new login with nothing pipelined, as is every later one.
    caplog.set_level("DEBUG", logger="anyurl.ftp")
    async with client(limits=Limits(per_host=1), retry=Retry(attempts=retry, backoff=0)) as c:
        got = await asyncio.gather(*(c.fetch(hostile.url(f"/pub/{name}")) for name in ("a.bin", "b.bin", "c.bin")),
                                   return_exceptions=True)
        # a transfer cut by the EPSV queued behind it: before its data connection was made (refused:
        # the pool's one retry of a reused connection makes it again; reset, on a first connection:
        # ConnectError), after 500 bytes (no 226: TruncatedTransfer), or with its data connection
        # left open and silent (FetchTimeout at the read timeout); Retry makes each again; never
        # a short success
        for r in got:
            if isinstance(r, BaseException):
                assert retry == 1 and isinstance(r, (TruncatedTransfer, ConnectError, FetchTimeout)), r
            else:
                assert r.content == PAYLOAD
        assert (await c.fetch(hostile.url("/pub/d.bin"))).content == PAYLOAD
    cmds = hostile.lines("CMD")
    assert cmds[:3] == ["USER anonymous", "PASS <password>", "PWD"] and cmds.count("USER anonymous") == 2, cmds
    assert hostile.lines("DATA") == ["transfer cut by EPSV"]  # queued once (a RETR sent during a transfer)...
    messages = [r.getMessage() for r in caplog.records]
    stop = next(i for i, m in enumerate(messages) if "out of step" in m or "no longer queued" in m)
    assert not [m for m in messages[stop:] if m.endswith("(queued)")], messages[stop:]  # ...never again
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warned) == 1 and warned[0].startswith(f"127.0.0.1:{hostile.port}"), warned
    assert ("answered pipelined commands out of step" in warned[0]
            or "requests are no longer queued behind transfers there" in warned[0]), warned


@pytest.mark.parametrize("hostile", ["long-names"], indirect=True)
def test_fsspec_recursive_get_shortens_names_over_255_bytes(hostile: Hostile, tmp_path: Path) -> None:
    # issue 33 item 14: a server whose disk counts characters (Windows: 255 UTF-16 units) lists
    # names longer than a local name may be: a 304-byte file name and a 400-byte directory
    # name. Was: the whole copy stopped with ENAMETOOLONG; now each is shortened as mirror
    # shortens its names (transfer.names: a short extension kept) and everything is copied.
    pytest.importorskip("fsspec")
    from anyurl.adapters.fsspec import AnyURLFileSystem

    long_file = "\u4e2d" * 100 + ".txt"
    long_dir = "\u00e9" * 200
    out = tmp_path / "out"
    fs = AnyURLFileSystem(skip_instance_cache=True)
    try:
        # what fsspec reports keeps the server's names; only the local copies are shortened
        listed = fs.ls(hostile.url("/tree/"), detail=True)
        assert sorted(i["filename"] for i in listed) == sorted([long_file, "plain.txt", long_dir])
        assert sorted(unquote(i["name"].rstrip("/").rsplit("/", 1)[1]) for i in listed) == sorted(
            [long_file, "plain.txt", long_dir])
        fs.get(hostile.url("/tree/"), str(out) + "/", recursive=True)
    finally:
        fs.close()
    got = {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert sorted(got) == sorted(["\u4e2d" * 83 + ".txt", "plain.txt", "\u00e9" * 127 + "/inner.txt"]), sorted(got)
    assert set(got.values()) == {b"0123456789" * 100}

"""FTP and the caller's limits, against real servers: a size limit refused before RETR,
a server's per-address connection limit (vsftpd max_per_ip) adapted to, the total
deadline named when it cuts a reply wait short, and ``anyurl put`` to a directory URL.
What is checked is what a user sees: the files that arrived, the commands the server
logged, the error raised and the exit code."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fixtures.launcher import Endpoint, Launcher
from fixtures.servers import _ftp_seed as seed
from fixtures.servers import aioftp_server, pyftpdlib_server, vsftpd, vsftpd_per_ip

from anyurl.client import Client, Limits, Timeouts
from anyurl.errors import ConfigurationError, FetchTimeout, NotRetrievable, TemporaryFailure, TransferError
from anyurl.handlers.ftp import FTPOptions

ANYURL = str(Path(sys.executable).parent / "anyurl")
ENV = {**os.environ, "COLUMNS": "120", "NO_COLOR": "1"}
BLOB = seed.blob()
READERS = {"vsftpd": vsftpd.commands, "pyftpdlib_server": pyftpdlib_server.commands,
           "aioftp_server": aioftp_server.commands, "vsftpd_per_ip": vsftpd_per_ip.commands}


def client(**kwargs: object) -> Client:
    kwargs.setdefault("timeouts", Timeouts(connect=10, read=10))
    return Client(use_netrc=False, **kwargs)  # type: ignore[arg-type]


class Logged:
    """A server's command log from the moment this was made."""

    def __init__(self, ep: Endpoint, name: str) -> None:
        self.ep = ep
        self.name = name
        self.mark = os.path.getsize(ep.info["log"])

    def url(self, rest: str, user: str = "") -> str:
        return f"ftp://{user}{self.ep.host}:{self.ep.port}{rest}"

    def commands(self) -> list[str]:
        cmds = READERS[self.name](self.ep.info["log"], self.mark)
        # the client does not wait for QUIT's reply: the server may log it a moment later
        deadline = time.monotonic() + 1
        while (not cmds or cmds[-1] != "QUIT") and time.monotonic() < deadline:
            time.sleep(0.02)
            cmds = READERS[self.name](self.ep.info["log"], self.mark)
        while cmds and cmds[0] == "QUIT":  # an earlier test's, logged after this one started
            cmds = cmds[1:]
        return cmds


def error_line(proc: subprocess.CompletedProcess[bytes]) -> str:
    err = proc.stderr.decode()
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


# -- 1. a size limit is checked before RETR --------------------------------------------


@pytest.mark.parametrize("name", ["vsftpd", "pyftpdlib_server"])
async def test_max_size_refused_after_size_without_retr(servers: Launcher, name: str) -> None:
    srv = Logged(servers.get(name), name)
    url = srv.url("/pub/blob.bin")
    async with client() as c:
        # a first file: the connection has seen EPSV (and vsftpd's "(N bytes)" in its 150),
        # so the next RETR would be pipelined with SIZE and EPSV, and SIZE skipped
        assert (await c.fetch(srv.url("/pub/hello.txt"))).content == seed.HELLO
        with pytest.raises(TransferError) as info:
            await c.fetch(url, max_size=1000)
        assert type(info.value) is TransferError  # what an over-limit transfer raises (exit 10)
        text = str(info.value)
        assert text.startswith(url + ": ") and f"{len(BLOB)} bytes" in text and "limit of 1000 bytes" in text, text
        # within the limit, on the same login
        got = await c.fetch(url, max_size=len(BLOB))
        assert got.content == BLOB
    cmds = srv.commands()
    assert "RETR blob.bin" in cmds
    refused = cmds.index("SIZE blob.bin")
    assert cmds[refused + 1] != "RETR blob.bin" and cmds[:refused + 1].count("RETR blob.bin") == 0, cmds
    assert cmds.count("RETR blob.bin") == 1 and cmds.count("USER anonymous") == 1, cmds


async def test_max_size_with_an_offset_counts_the_bytes_asked_for(servers: Launcher) -> None:
    srv = Logged(servers.get("vsftpd"), "vsftpd")
    async with client() as c:
        got = await c.fetch(srv.url("/pub/blob.bin"), offset=len(BLOB) - 100, max_size=100)
        assert got.content == BLOB[-100:]
        with pytest.raises(TransferError, match=r"\(101 of them from byte 5025\), larger than the limit of 100"):
            await c.fetch(srv.url("/pub/blob.bin"), offset=len(BLOB) - 101, max_size=100)
    assert srv.commands().count("RETR blob.bin") == 1


@pytest.mark.parametrize("to", ["file", "stdout"])
def test_cli_max_size_refused_before_retr(servers: Launcher, tmp_path: Path, to: str) -> None:
    srv = Logged(servers.get("vsftpd"), "vsftpd")
    url = srv.url("/pub/blob.bin")
    out = ["-o", str(tmp_path / "blob.bin")] if to == "file" else []
    proc = subprocess.run([ANYURL, "get", "--max-size", "1k", *out, url], capture_output=True, timeout=60, env=ENV)
    assert proc.returncode == TransferError.exit_code, proc.stderr
    line = error_line(proc)
    assert url in line and f"{len(BLOB)} bytes" in line and "limit of 1024" in line, line
    assert proc.stdout == b"" and not list(tmp_path.iterdir())
    cmds = srv.commands()
    assert "SIZE blob.bin" in cmds and not [c for c in cmds if c.startswith("RETR")], cmds


async def test_max_size_without_size_support_stops_the_stream(servers: Launcher) -> None:
    # aioftp's server has no SIZE (and no size in its 150): the limit applies to the bytes
    srv = Logged(servers.get("aioftp_server"), "aioftp_server")
    async with client() as c:
        with pytest.raises(TransferError, match="resource larger than max_size=1000 bytes"):
            await c.fetch(srv.url("/pub/blob.bin"), max_size=1000)
        assert (await c.fetch(srv.url("/pub/blob.bin"), max_size=len(BLOB))).content == BLOB
    cmds = srv.commands()
    assert cmds.count("RETR blob.bin") == 2, cmds


async def test_max_size_with_size_disabled_stops_the_stream(servers: Launcher) -> None:
    srv = Logged(servers.get("vsftpd"), "vsftpd")
    async with client(ftp=FTPOptions(use_size=False, pipeline=False)) as c:
        with pytest.raises(TransferError, match="resource larger than max_size=1000 bytes"):
            await c.fetch(srv.url("/pub/blob.bin"), max_size=1000)
    cmds = srv.commands()
    assert "RETR blob.bin" in cmds and "SIZE blob.bin" not in cmds, cmds


# -- 2. a server's own connection limit (421 at login) ---------------------------------


@pytest.fixture
def per_ip(servers: Launcher) -> tuple[Endpoint, dict[str, bytes]]:
    ep = servers.get("vsftpd_per_ip")
    d = Path(ep.info["anon_root"]) / "pub" / "batch"
    d.mkdir(exist_ok=True)
    os.chmod(d, 0o755)
    files = {}
    for i in range(20):
        data = os.urandom(3000 + 997 * i)
        p = d / f"b{i:02d}.bin"
        p.write_bytes(data)
        os.chmod(p, 0o644)
        files[p.name] = data
    return ep, files


def test_cli_batch_adapts_to_max_per_ip(per_ip: tuple[Endpoint, dict[str, bytes]], tmp_path: Path) -> None:
    ep, files = per_ip
    srv = Logged(ep, "vsftpd_per_ip")
    urls = [srv.url(f"/pub/batch/{name}") for name in files]
    proc = subprocess.run([ANYURL, "get", "--parallel", "8", "-q", "--dir", str(tmp_path), *urls],
                          capture_output=True, timeout=120, env=ENV)
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stderr == b""
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(files)
    for name, data in files.items():
        assert (tmp_path / name).read_bytes() == data, name
    cmds = srv.commands()
    assert sorted(c for c in cmds if c.startswith("RETR")) == [f"RETR {n}" for n in sorted(files)], cmds
    # the server did refuse some logins: the limit was met, not avoided by luck
    with open(ep.info["log"], "rb") as f:
        f.seek(srv.mark)
        assert b"421 There are too many connections" in f.read()


async def test_library_batch_adapts_to_max_per_ip(per_ip: tuple[Endpoint, dict[str, bytes]]) -> None:
    ep, files = per_ip
    srv = Logged(ep, "vsftpd_per_ip")
    async with client(limits=Limits(per_host=8)) as c:
        got = await asyncio.gather(*(c.fetch(srv.url(f"/pub/batch/{n}")) for n in files))
    assert [r.content for r in got] == list(files.values())


async def test_421_with_no_other_connection_open_stays_an_error(per_ip: tuple[Endpoint, dict[str, bytes]]) -> None:
    # two sessions held by someone else (a second Client): ours has none open, so the 421 is final
    ep, files = per_ip
    srv = Logged(ep, "vsftpd_per_ip")
    async with client() as other, client() as c:
        await asyncio.gather(*(other.fetch(srv.url(f"/pub/batch/{n}")) for n in list(files)[:2]))
        assert other.handler(other.parse(srv.url("/"))).pool.open_count(ep.host, ep.port) == 2  # type: ignore[attr-defined]
        start = time.monotonic()
        with pytest.raises(TemporaryFailure, match="421 There are too many connections"):
            await c.fetch(srv.url("/pub/batch/b00.bin"))
        assert time.monotonic() - start < 5


async def test_adapted_wait_is_bounded_by_the_pool_timeout(per_ip: tuple[Endpoint, dict[str, bytes]]) -> None:
    # our two sessions stay busy (two open streams): the third login gets 421 and waits for
    # one of them, at most Timeouts.pool, then fails as any wait for a free connection does
    ep, files = per_ip
    srv = Logged(ep, "vsftpd_per_ip")
    from anyurl.errors import PoolTimeout

    async with client(timeouts=Timeouts(connect=10, read=10, pool=1.0)) as c:
        async with c.open(srv.url("/pub/batch/b18.bin")) as a, c.open(srv.url("/pub/batch/b19.bin")) as b:
            start = time.monotonic()
            with pytest.raises(PoolTimeout, match="at most 2: the server refused more"):
                await c.fetch(srv.url("/pub/batch/b00.bin"))
            assert 0.8 < time.monotonic() - start < 5
            assert await a.read() == files["b18.bin"] and await b.read() == files["b19.bin"]
        # once they are free the waiting is over: the same Client goes on with its two sessions
        assert (await c.fetch(srv.url("/pub/batch/b00.bin"))).content == files["b00.bin"]


def refusals(srv: Logged, since: int) -> int:
    """The logins the server refused for its per-address limit since log offset *since*."""
    with open(srv.ep.info["log"], "rb") as f:
        f.seek(since)
        return f.read().count(b"421 There are too many connections")


async def _meet_the_limit(c: Client, srv: Logged, files: dict[str, bytes], names: list[str]) -> None:
    """*c* fetches *names* at once while someone else holds one of the server's two sessions:
    its second login is refused and its cap comes down to one."""
    got = await asyncio.gather(*(c.fetch(srv.url(f"/pub/batch/{n}")) for n in names))
    assert [r.content for r in got] == [files[n] for n in names]
    assert refusals(srv, srv.mark) > 0


async def test_lowered_limit_rises_again_once_the_server_takes_more(
        per_ip: tuple[Endpoint, dict[str, bytes]]) -> None:
    # A long-lived Client met the limit while another client held a session (a passing limit).
    # Once that one left and Limits.max_idle passed without a refusal, it runs two at once again.
    ep, files = per_ip
    srv = Logged(ep, "vsftpd_per_ip")
    names = list(files)
    url = lambda n: srv.url(f"/pub/batch/{n}")  # noqa: E731
    from anyurl.errors import PoolTimeout

    async with client(limits=Limits(per_host=8, max_idle=2.5), timeouts=Timeouts(connect=10, read=10, pool=0.5)) as c:
        pool = c.handler(c.parse(url(names[0]))).pool  # type: ignore[attr-defined]
        async with client() as other, other.open(url(names[19])) as held:
            await _meet_the_limit(c, srv, files, names[:3])
            assert await held.read() == files[names[19]]
        # the other client is gone, but the lowered cap holds until max_idle has passed
        async with c.open(url(names[3])) as a:  # (kept busy: an idle one would expire meanwhile)
            with pytest.raises(PoolTimeout, match="at most 1: the server refused more"):
                await c.fetch(url(names[4]))
            await asyncio.sleep(2.2)
            mark = Logged(ep, "vsftpd_per_ip").mark
            async with c.open(url(names[5])) as b:
                assert pool.open_count(ep.host, ep.port) == 2
                assert await a.read() == files[names[3]] and await b.read() == files[names[5]]
        assert (await c.fetch(url(names[6]))).content == files[names[6]]
    assert refusals(srv, mark) == 0


async def test_probe_above_a_lowered_limit_is_one_login_per_quiet_period(
        per_ip: tuple[Endpoint, dict[str, bytes]]) -> None:
    # The server's limit stays: after max_idle one probe login is refused, the cap comes down
    # again and the request waits as before (no storm of refused logins).
    ep, files = per_ip
    srv = Logged(ep, "vsftpd_per_ip")
    names = list(files)
    url = lambda n: srv.url(f"/pub/batch/{n}")  # noqa: E731
    from anyurl.errors import PoolTimeout

    async with client(limits=Limits(per_host=8, max_idle=1.5), timeouts=Timeouts(connect=10, read=10, pool=1.0)) as c:
        async with client() as other, other.open(url(names[19])) as held:
            await _meet_the_limit(c, srv, files, names[:3])
            async with c.open(url(names[3])) as a:  # (kept busy: an idle one would expire meanwhile)
                await asyncio.sleep(1.7)
                mark = Logged(ep, "vsftpd_per_ip").mark
                with pytest.raises(PoolTimeout, match="at most 1: the server refused more"):
                    await c.fetch(url(names[4]))
                assert await a.read() == files[names[3]]
            assert refusals(srv, mark) == 1
            assert await held.read() == files[names[19]]


# -- 3. the total deadline named when it cuts a reply wait short ----------------------


async def test_total_deadline_named_when_it_cuts_a_reply_wait() -> None:
    writers: list[asyncio.StreamWriter] = []

    async def silent(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        writers.append(w)
        w.write(b"220 hello\r\n")
        await r.readline()  # USER: never answered; the connection is closed at the end of the test

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        async with client(timeouts=Timeouts(connect=5, read=30, total=0.6)) as c:
            start = time.monotonic()
            with pytest.raises(FetchTimeout) as info:
                async with asyncio.timeout(10), c.open(f"ftp://127.0.0.1:{port}/f.bin"):
                    pass
            assert time.monotonic() - start < 3
        text = str(info.value)
        assert "total timeout (Timeouts.total=0.6 s) ran out while waiting for a reply line" in text, text
        async with client(timeouts=Timeouts(connect=5, read=0.4, total=30)) as c:
            with pytest.raises(FetchTimeout, match=r"timed out waiting for a reply line \(read timeout 0.4 s\)"):
                async with asyncio.timeout(10), c.open(f"ftp://127.0.0.1:{port}/f.bin"):
                    pass
    finally:
        server.close()
        for w in writers:
            w.close()
        await server.wait_closed()


# -- 4. anyurl put to a directory URL ---------------------------------------------------


@pytest.mark.parametrize("where", ["upload/", ""])
def test_cli_put_to_a_directory_url_uses_the_file_name(servers: Launcher, tmp_path: Path, where: str) -> None:
    ep = servers.get("vsftpd")
    srv = Logged(ep, "vsftpd")
    name = f"put-dir-{where.strip('/') or 'home'}-{os.getpid()}.bin"
    src = tmp_path / name
    src.write_bytes(os.urandom(7000))
    target = Path(ep.info["local_root"]) / where / name
    try:
        url = srv.url(f"/{where}", f"{vsftpd.USER}:{vsftpd.PASSWORD}@")
        proc = subprocess.run([ANYURL, "put", str(src), url], capture_output=True, timeout=60, env=ENV)
        assert proc.returncode == 0, proc.stderr.decode()
        assert target.read_bytes() == src.read_bytes()
        cmds = srv.commands()
        stor = [c for c in cmds if c.startswith("STOR ")]
        assert len(stor) == 1 and stor[0].startswith(f"STOR .{name}.") and stor[0].endswith(".part"), cmds
        assert f"RNTO {name}" in cmds and (("CWD upload" in cmds) == bool(where)), cmds
    finally:
        target.unlink(missing_ok=True)


def test_cli_put_to_http_is_refused_clearly(servers: Launcher, tmp_path: Path) -> None:
    ep = servers.get("nginx")
    log = Path(ep.info["access_log"])
    before = log.read_bytes() if log.exists() else b""
    src = tmp_path / "f.txt"
    src.write_bytes(b"data\n")
    url = f"http://{ep.host}:{ep.port}/dir/"
    proc = subprocess.run([ANYURL, "put", str(src), url], capture_output=True, timeout=60, env=ENV)
    assert proc.returncode == NotRetrievable.exit_code
    assert error_line(proc) == f"anyurl: {url}: http URLs cannot be written to"
    assert (log.read_bytes() if log.exists() else b"") == before  # nothing was sent


async def test_library_upload_to_a_directory_url_uses_the_source_name(servers: Launcher, tmp_path: Path) -> None:
    """Client.upload to ftp://h/dir/ stores dir/<base name> of a path or of a file object's .name,
    and a nameless source (bytes, a BytesIO) is refused before any command, naming the URL."""
    import io

    ep = servers.get("vsftpd")
    srv = Logged(ep, "vsftpd")
    root = Path(ep.info["local_root"]) / "upload"
    by_path = tmp_path / f"lib-path-{os.getpid()}.bin"
    by_path.write_bytes(os.urandom(5000))
    by_file = tmp_path / f"lib-file-{os.getpid()}.bin"
    by_file.write_bytes(os.urandom(3000))
    url = srv.url("/upload/", f"{vsftpd.USER}:{vsftpd.PASSWORD}@")
    try:
        async with client() as c:
            await c.upload(url, by_path)
            with by_file.open("rb") as f:
                await c.upload(url, f)
            with by_file.open("r") as text, pytest.raises(ConfigurationError, match="binary mode"):
                await c.upload(url, text)
            for nameless in (b"data", io.BytesIO(b"data")):
                with pytest.raises(ConfigurationError) as info:
                    await c.upload(url, nameless)
                assert url.replace(vsftpd.PASSWORD, "****") in str(info.value)
                assert "ends in '/'" in str(info.value) and "no file name" in str(info.value)
        assert (root / by_path.name).read_bytes() == by_path.read_bytes()
        assert (root / by_file.name).read_bytes() == by_file.read_bytes()
        cmds = srv.commands()
        stor = [c for c in cmds if c.startswith(("STOR ", "RNTO "))]
        assert [c.split()[0] for c in stor] == ["STOR", "RNTO", "STOR", "RNTO"], cmds
        assert stor[0].startswith(f"STOR .{by_path.name}.") and stor[1] == f"RNTO {by_path.name}", cmds
        assert stor[2].startswith(f"STOR .{by_file.name}.") and stor[3] == f"RNTO {by_file.name}", cmds
    finally:
        (root / by_path.name).unlink(missing_ok=True)
        (root / by_file.name).unlink(missing_ok=True)

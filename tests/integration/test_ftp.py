"""FTP against real servers (vsftpd and pyftpdlib), asserting the bytes that arrived
and the exact commands each server logged. One tiny in-test server injects the
faults real servers cannot (early data close, a PASV reply aimed elsewhere)."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import shutil
import ssl
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fixtures.launcher import Endpoint, Launcher
from fixtures.servers import _ftp_seed as seed
from fixtures.servers import aioftp_server, proftpd, pyftpdlib_server, vsftpd

import anyurl
from anyurl.client import Client, Limits, Timeouts
from anyurl.errors import (
    AccessDenied,
    FetchTimeout,
    OverlongTransfer,
    ProtocolError,
    ResourceNotFound,
    TemporaryFailure,
    TruncatedTransfer,
    UnsafeURL,
)
from anyurl.handlers.ftp import FTPOptions
from anyurl.response import ENTRY_KINDS

SERVERS = ["vsftpd", "pyftpdlib_server", "proftpd", "aioftp_server"]


class Server:
    """A started FTP server with its command log."""

    def __init__(self, ep: Endpoint, kind: str) -> None:
        self.ep = ep
        self.kind = kind
        self.log = ep.info["log"]
        self.mark = 0

    def url(self, rest: str, user: str = "") -> str:
        return f"ftp://{user}{self.ep.host}:{self.ep.port}{rest}"

    def start(self) -> None:
        settle(self.log, quiet=0.1, limit=2)  # the QUIT of the last test's client (not waited for) lands
        self.mark = os.path.getsize(self.log)

    @property
    def login(self) -> list[str]:
        """The anonymous login as logged: USER, PASS and PWD go in one write (FTPOptions.pipeline),
        so aioftp.Server, which logs anonymous in at USER (230), gets the PASS too (503)."""
        return LOGIN

    def commands(self) -> list[str]:
        if self.kind == "proftpd":  # ProFTPD logs a command after its reply: let the log settle
            settle(self.log)
        reader = {"vsftpd": vsftpd.commands, "pyftpdlib": pyftpdlib_server.commands,
                  "proftpd": proftpd.commands, "aioftp": aioftp_server.commands}[self.kind]
        cmds = reader(self.log, self.mark)
        if not cmds or cmds[-1] != "QUIT":  # the client does not wait for QUIT's reply: the server
            settle(self.log, quiet=0.3)  # may log it after the test reads (or no QUIT is coming)
            cmds = reader(self.log, self.mark)
        while cmds and cmds[0] == "QUIT":  # the previous test's, logged after this one started
            cmds = cmds[1:]
        return cmds

    def raw(self) -> bytes:
        with open(self.log, "rb") as f:
            f.seek(self.mark)
            return f.read()


@pytest.fixture(scope="module")
def ftp_servers(servers: Launcher) -> dict[str, Server]:
    return {name: Server(servers.get(name), name.removesuffix("_server")) for name in SERVERS}


def servers_except(**why: str) -> pytest.MarkDecorator:
    """Run a test over SERVERS but those named; each exclusion states why (nothing is skipped silently)."""
    assert set(why) <= set(SERVERS) and all(why.values())
    return pytest.mark.parametrize("srv", [s for s in SERVERS if s not in why], indirect=True)


NO_SIZE = ("aioftp",)  # servers with no SIZE and no "(N bytes)" in their 150: Body.size stays None


@pytest.fixture(params=SERVERS)
def srv(request: pytest.FixtureRequest, ftp_servers: dict[str, Server]) -> Server:
    s = ftp_servers[request.param]
    s.start()
    return s


@pytest.fixture
def vs(ftp_servers: dict[str, Server]) -> Server:
    s = ftp_servers["vsftpd"]
    s.start()
    return s


def settle(path: str, quiet: float = 0.15, limit: float = 3.0) -> None:
    """Wait (at most *limit* s) until *path* has not grown for *quiet* s."""
    deadline = time.monotonic() + limit
    size, since = os.path.getsize(path), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.02)
        now = os.path.getsize(path)
        if now != size:
            size, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return


def client(**kwargs: Any) -> Client:
    kwargs.setdefault("timeouts", Timeouts(connect=10, read=10))
    kwargs.setdefault("use_netrc", False)
    return Client(**kwargs)


LOGIN = ["USER anonymous", "PASS <password>", "PWD"]


def log_size(path: str) -> int:
    return os.path.getsize(path)


# -- retrieval and the RFC's examples ---------------------------------------------


async def test_text_without_typecode_is_byte_exact(srv: Server) -> None:
    # No typecode: TYPE I even for ".txt" (as curl, wget, lftp, urllib): a mirror is byte-exact.
    async with client() as c:
        r = await c.fetch(srv.url("/pub/crlf.txt"))
    assert r.content == seed.CRLF_TEXT
    assert srv.commands() == [*srv.login, "CWD pub", "TYPE I", "SIZE crlf.txt", "EPSV", "RETR crlf.txt", "QUIT"]


async def test_guess_type_option_restores_text_guess(srv: Server) -> None:
    async with client(ftp=FTPOptions(guess_type=True)) as c, c.open(srv.url("/pub/crlf.txt")) as body:
        assert body.size is None  # the server's byte count is not what arrives under TYPE A
        assert body.resumable is False  # REST offsets are server bytes, not what arrives
        content = await body.read()
    assert content == seed.CRLF_TEXT.replace(b"\r\n", b"\n")
    assert srv.commands() == [*srv.login, "CWD pub", "TYPE A", "EPSV", "RETR crlf.txt", "QUIT"]


async def test_typecode_a_converts_crlf(srv: Server) -> None:
    async with client() as c:
        r = await c.fetch(srv.url("/pub/crlf.txt;type=a"))
    assert r.content == seed.CRLF_TEXT.replace(b"\r\n", b"\n")
    assert srv.commands() == [*srv.login, "CWD pub", "TYPE A", "EPSV", "RETR crlf.txt", "QUIT"]


async def test_typecode_i_keeps_bytes(srv: Server) -> None:
    async with client() as c:
        r = await c.fetch(srv.url("/pub/crlf.txt;type=i"))
    assert r.content == seed.CRLF_TEXT
    assert srv.commands() == [*srv.login, "CWD pub", "TYPE I", "SIZE crlf.txt", "EPSV", "RETR crlf.txt", "QUIT"]


async def test_binary_guess_and_size(srv: Server) -> None:
    async with client() as c, c.open(srv.url("/pub/blob.bin")) as body:
        assert body.size == (None if srv.kind in NO_SIZE else len(seed.blob()))
        data = await body.read()
    assert data == seed.blob()
    assert srv.commands() == [*srv.login, "CWD pub", "TYPE I", "SIZE blob.bin", "EPSV", "RETR blob.bin", "QUIT"]


async def test_content_type_guessed_when_asked_and_download_skips_mimetypes(vs: Server, tmp_path: Path) -> None:
    # The body's type is the name's guess when asked for ...
    async with client() as c:
        async with c.open(vs.url("/pub/hello.txt")) as body:
            assert await body.read() == seed.HELLO
            assert body.content_type == "text/plain"
        async with c.open(vs.url("/pub/blob.bin")) as body:
            await body.read()
            assert body.content_type == "application/octet-stream"
    # ... and only then: a CLI download never asks, so mimetypes and its tables are never loaded.
    out = tmp_path / "hello.txt"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    argv = [sys.executable, "-X", "importtime", "-m", "anyurl", "get", "-q", "-o", str(out), vs.url("/pub/hello.txt")]
    proc = await asyncio.to_thread(subprocess.run, argv, capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert out.read_bytes() == seed.HELLO
    imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert "anyurl.protocols.ftp" in imported
    assert "mimetypes" not in imported


async def test_typecode_a(srv: Server) -> None:
    async with client() as c:
        r = await c.fetch(srv.url("/etc/motd;type=a"))
    assert r.content == seed.MOTD
    assert srv.commands() == [*srv.login, "CWD etc", "TYPE A", "EPSV", "RETR motd", "QUIT"]


@servers_except(aioftp_server="aioftp.Server has no NLST (502)")
async def test_typecode_d_is_nlst(srv: Server) -> None:
    async with client() as c:
        r = await c.fetch(srv.url("/pub/sub;type=d"))
    assert r.entries is not None
    assert sorted(e.name for e in r.entries) == ["deep.txt", "subsub"]
    urls = {e.name: e.url for e in r.entries}
    assert urls["deep.txt"] == srv.url("/pub/sub/deep.txt")
    assert srv.commands() == [*srv.login, "CWD pub", "TYPE A", "EPSV", "NLST sub", "QUIT"]


async def test_percent_2f_is_one_cwd(srv: Server) -> None:
    async with client() as c:
        r = await c.fetch(srv.url("/%2Fetc/motd"))
    assert r.content == seed.MOTD
    assert srv.commands() == [*srv.login, "CWD /etc", "TYPE I", "SIZE motd", "EPSV", "RETR motd", "QUIT"]


async def test_double_slash_sends_empty_cwd(srv: Server) -> None:
    # RFC 1738: "//etc/motd" is CWD with an empty argument, then CWD etc. vsftpd refuses
    # the empty CWD (550), ProFTPD calls it a syntax error (501); pyftpdlib treats it as "stay here".
    async with client() as c:
        if srv.kind == "vsftpd":
            with pytest.raises(ResourceNotFound, match="550"):
                await c.fetch(srv.url("//etc/motd"))
        elif srv.kind == "proftpd":
            with pytest.raises(ProtocolError, match="501"):
                await c.fetch(srv.url("//etc/motd"))
        else:
            r = await c.fetch(srv.url("//etc/motd"))
            assert r.content == seed.MOTD
    if srv.kind in ("vsftpd", "proftpd"):
        assert srv.commands() == [*srv.login, "CWD", "QUIT"]  # both log "CWD " without its space
    else:  # aioftp's log strips the trailing space
        empty = "CWD" if srv.kind == "aioftp" else "CWD "
        assert srv.commands() == [*srv.login, empty, "CWD etc", "TYPE I", "SIZE motd", "EPSV",
                                  "RETR motd", "QUIT"]


async def test_directory_without_typecode_falls_back_to_listing(srv: Server) -> None:
    async with client() as c:
        r = await c.fetch(srv.url("/pub/sub"))
    assert r.entries is not None
    kinds = {e.name: (e.kind, e.url) for e in r.entries}
    assert kinds["deep.txt"] == ("file", srv.url("/pub/sub/deep.txt"))
    assert kinds["subsub"] == ("directory", srv.url("/pub/sub/subsub/"))
    listing = "LIST" if srv.kind in ("vsftpd", "aioftp") else "MLSD"  # FEAT lists MLSD (aioftp: no FEAT)
    ascii_ = ["TYPE A"] if listing == "LIST" else []  # MLSD does not depend on TYPE: TYPE I stays
    assert srv.commands() == [*srv.login, "CWD pub", "TYPE I", "SIZE sub", "EPSV", "RETR sub", "CWD sub",
                              "FEAT", *ascii_, "EPSV", listing, "QUIT"]


async def test_missing_file_is_resource_not_found(srv: Server) -> None:
    async with client() as c:
        with pytest.raises(ResourceNotFound) as info:
            await c.fetch(srv.url("/pub/nope.txt;type=a"))
    assert info.value.reply is not None and info.value.reply.startswith("550")
    assert srv.commands()[-2:] == ["RETR nope.txt", "QUIT"]  # in step after the 550: kept, then QUIT


async def test_listing_entries(srv: Server) -> None:
    async with client() as c:
        r = await c.fetch(srv.url("/pub/"))
        assert r.entries is not None
        by_name = {e.name: e for e in r.entries}
        assert by_name["hello.txt"].kind == "file" and by_name["hello.txt"].size == len(seed.HELLO)
        assert by_name["hello.txt"].modified is not None
        assert by_name["sub"].kind == "directory"
        assert by_name["dir with space"].url == srv.url("/pub/dir%20with%20space/")
        if srv.kind == "vsftpd":  # LIST shows "link-to-hello -> hello.txt": kind symlink, keyed by its target
            link = by_name["link-to-hello"]
            assert (link.kind, link.meta["target"]) == ("symlink", "hello.txt")
            assert link.key == srv.url("/pub/hello.txt") == by_name["hello.txt"].key
        assert all(e.kind in ENTRY_KINDS and e.rel is None for e in r.entries)
        assert not {".", ".."} & set(by_name)  # "." and ".." are left out of FTP listings
        # every special name's URL designates exactly that file
        for name, data in seed.SPECIAL_NAMES.items():
            url = by_name[name].url
            assert url is not None
            got = await c.fetch(url + ";type=i")
            assert got.content == data, name
        assert b"hello.txt" in r.content  # the rendered listing is the body
    listing = "LIST" if srv.kind in ("vsftpd", "aioftp") else "MLSD"  # FEAT lists MLSD (aioftp: no FEAT)
    ascii_ = ["TYPE A"] if listing == "LIST" else []  # LIST is ASCII; MLSD needs no TYPE
    want = [*srv.login, "CWD pub", "FEAT", *ascii_, "EPSV", listing]
    assert srv.commands()[:len(want)] == want


async def test_special_names_in_urls(srv: Server) -> None:
    async with client() as c:
        for encoded, name in [("with%20space.txt", "with space.txt"), ("semi%3Bcolon.txt", "semi;colon.txt"),
                              ("100%25.txt", "100%.txt")]:
            r = await c.fetch(srv.url(f"/pub/{encoded};type=i"))
            assert r.content == seed.SPECIAL_NAMES[name]
    retrs = [cmd for cmd in srv.commands() if cmd.startswith("RETR")]
    assert retrs == ["RETR with space.txt", "RETR semi;colon.txt", "RETR 100%.txt"]


# -- login variants -----------------------------------------------------------------


async def test_anonymous_password_is_email(vs: Server) -> None:
    async with client(anonymous_email="tester@example.org") as c:
        await c.fetch(vs.url("/pub/hello.txt"))
    assert b'anon password "tester@example.org"' in vs.raw()


async def test_user_and_password(srv: Server) -> None:
    async with client() as c:
        r = await c.fetch(srv.url("/private.txt", "urltest:urltest-pw@"))
    assert r.content == seed.PRIVATE
    assert srv.commands() == ["USER urltest", "PASS <password>", "PWD", "TYPE I", "SIZE private.txt", "EPSV",
                              "RETR private.txt", "QUIT"]


async def test_user_without_password_asks_callback(srv: Server) -> None:
    asked: list[tuple[str, str]] = []

    def callback(user: str, host: str) -> str:
        asked.append((user, host))
        return "urltest-pw"

    async with client(password_callback=callback) as c:
        r = await c.fetch(srv.url("/private.txt", "urltest@"))
    assert r.content == seed.PRIVATE
    assert asked == [("urltest", "127.0.0.1")]
    assert srv.commands()[:2] == ["USER urltest", "PASS <password>"]


async def test_user_without_password_uses_netrc(srv: Server, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    netrc = tmp_path / ".netrc"
    netrc.write_text("machine 127.0.0.1 login urltest password urltest-pw\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("HOME", str(tmp_path))
    async with Client(timeouts=Timeouts(connect=10, read=10)) as c:
        r = await c.fetch(srv.url("/private.txt", "urltest@"))
    assert r.content == seed.PRIVATE


async def test_user_without_any_password_is_access_denied(srv: Server) -> None:
    async with client() as c:
        with pytest.raises(AccessDenied, match="'urltest' at 127.0.0.1"):
            await c.fetch(srv.url("/private.txt", "urltest@"))
    assert srv.commands() == ["USER urltest"]  # no PASS was sent


async def test_wrong_password(srv: Server) -> None:
    async with client() as c:
        with pytest.raises(AccessDenied) as info:
            await c.fetch(srv.url("/private.txt", "urltest:wrong@"))
    assert info.value.reply is not None and info.value.reply.startswith("530")


@servers_except(aioftp_server="aioftp.Server logs any unknown user name in as its anonymous user")
async def test_empty_user_is_not_anonymous(srv: Server) -> None:
    async with client(password_callback=lambda u, h: None) as c:
        with pytest.raises(AccessDenied, match="user '' at"):
            await c.fetch(srv.url("/", "@"))
    assert srv.commands()[0] in ("USER", "USER ")  # an empty USER, not "USER anonymous"


# -- reuse, strategies, concurrency ---------------------------------------------------


async def test_reuse_cwds_back_to_login_dir(srv: Server) -> None:
    # One connection: back to the login directory (PWD) before the next URL's CWDs;
    # no CWD at all when the next URL is in the same directory; TYPE only when it changes.
    async with client() as c:
        assert (await c.fetch(srv.url("/pub/hello.txt;type=a"))).content == seed.HELLO
        assert (await c.fetch(srv.url("/pub/sub/deep.txt;type=a"))).content == seed.DEEP
        assert (await c.fetch(srv.url("/etc/motd;type=a"))).content == seed.MOTD
        assert (await c.fetch(srv.url("/etc/motd;type=i"))).content == seed.MOTD
    assert srv.commands() == [
        *srv.login, "CWD pub", "TYPE A", "EPSV", "RETR hello.txt",
        "CWD sub", "EPSV", "RETR deep.txt",  # deeper on the same path: just the rest
        "CWD /etc", "EPSV", "RETR motd",  # elsewhere: one CWD to the absolute path
        "TYPE I", "SIZE motd", "EPSV", "RETR motd", "QUIT"]


async def test_reuse_absolute_cwd_falls_back_to_the_rfc_sequence(srv: Server) -> None:
    # The one absolute CWD of a reused connection fails: the RFC's sequence runs and fails
    # where it must, with its own error.
    async with client() as c:
        assert (await c.fetch(srv.url("/etc/motd"))).content == seed.MOTD
        with pytest.raises(ResourceNotFound):
            await c.fetch(srv.url("/pub/nodir/x.bin"))
    cmds = srv.commands()
    start = cmds.index("RETR motd") + 1
    assert cmds[start:start + 4] == ["CWD /pub/nodir", "CWD /", "CWD pub", "CWD nodir"]


async def test_size_skipped_once_150_reports_it(vs: Server) -> None:
    # vsftpd's 150 says "(N bytes)": after the first binary RETR, SIZE is redundant.
    async with client() as c:
        assert (await c.fetch(vs.url("/pub/blob.bin"))).content == seed.blob()
        async with c.open(vs.url("/etc/motd")) as body:
            assert body.size == len(seed.MOTD)
            assert await body.read() == seed.MOTD
    assert vs.commands() == [*LOGIN, "CWD pub", "TYPE I", "SIZE blob.bin", "EPSV", "RETR blob.bin",
                             "CWD /etc", "EPSV", "RETR motd", "QUIT"]


@servers_except(aioftp_server="the test lists with ;type=d (NLST), which aioftp.Server lacks")
async def test_reuse_for_local_user_returns_to_home(srv: Server) -> None:
    home = srv.ep.info["local_root"] if srv.kind in ("vsftpd", "proftpd") else "/"
    async with client() as c:
        await c.fetch(srv.url("/upload/;type=d", "urltest:urltest-pw@"))
        r = await c.fetch(srv.url("/private.txt", "urltest:urltest-pw@"))
    assert r.content == seed.PRIVATE
    cmds = srv.commands()
    assert cmds.count("USER urltest") == 1
    assert cmds[cmds.index("NLST") + 1] == f"CWD {home}"


async def test_first_file_deep_down_takes_one_cwd(srv: Server) -> None:
    # Issue 24 step 5: on a connection's first file, "CWD pub", "CWD sub" (a round trip each)
    # become one CWD to the absolute path, sent with TYPE in one write (the replies fit their
    # commands on every server: nothing falls back); without pipelining, the RFC's sequence.
    async with client() as c:
        assert (await c.fetch(srv.url("/pub/sub/deep.txt"))).content == seed.DEEP
    assert srv.commands() == [*srv.login, "CWD /pub/sub", "TYPE I", "SIZE deep.txt", "EPSV", "RETR deep.txt",
                              "QUIT"]
    srv.start()
    async with client(ftp=FTPOptions(pipeline=False)) as c:
        assert (await c.fetch(srv.url("/pub/sub/deep.txt"))).content == seed.DEEP
    one_by_one = ["USER anonymous", "PWD"] if srv.kind == "aioftp" else LOGIN  # (230 to USER: no PASS)
    assert srv.commands() == [*one_by_one, "CWD pub", "CWD sub", "TYPE I", "SIZE deep.txt", "EPSV", "RETR deep.txt",
                              "QUIT"]


@pytest.mark.parametrize(("strategy", "expected"), [
    ("auto", ["CWD /pub/sub", "TYPE I", "SIZE deep.txt", "EPSV", "RETR deep.txt"]),
    # issue 33 item 10: "multicwd" asks for the RFC's sequence; with the default pipeline=True
    # it sent "CWD /pub/sub"
    ("multicwd", ["CWD pub", "CWD sub", "TYPE I", "SIZE deep.txt", "EPSV", "RETR deep.txt"]),
    ("singlecwd", ["CWD pub/sub", "TYPE I", "SIZE deep.txt", "EPSV", "RETR deep.txt"]),
    ("nocwd", ["TYPE I", "SIZE pub/sub/deep.txt", "EPSV", "RETR pub/sub/deep.txt"]),
])
async def test_cwd_strategies(srv: Server, strategy: str, expected: list[str]) -> None:
    async with client(ftp=FTPOptions(cwd_strategy=strategy)) as c:
        r = await c.fetch(srv.url("/pub/sub/deep.txt"))
    assert r.content == seed.DEEP
    assert srv.commands() == [*srv.login, *expected, "QUIT"]


@pytest.mark.parametrize("strategy", ["auto", "multicwd"])
async def test_multicwd_sends_one_cwd_per_segment_on_reuse_too(vs: Server, strategy: str) -> None:
    # issue 33 item 10: a reused connection going to another directory jumped there with one
    # absolute CWD even under "multicwd"; now it goes back to the login directory, then one
    # CWD per segment (the RFC's sequence), and only "auto" joins them
    async with client(ftp=FTPOptions(cwd_strategy=strategy)) as c:
        assert (await c.fetch(vs.url("/pub/sub/deep.txt"))).content == seed.DEEP
        assert (await c.fetch(vs.url("/pub/sub/subsub/deeper.txt"))).content == b"deeper file\n"
        assert (await c.fetch(vs.url("/pub/dir%20with%20space/inner.txt"))).content == b"inner\n"
    cwds = [cmd for cmd in vs.commands() if cmd.startswith("CWD")]
    if strategy == "multicwd":  # vsftpd's anonymous login directory is "/"
        assert cwds == ["CWD pub", "CWD sub", "CWD subsub", "CWD /", "CWD pub", "CWD dir with space"]
    else:
        assert cwds == ["CWD /pub/sub", "CWD subsub", "CWD /pub/dir with space"]


async def test_pasv_when_epsv_disabled(srv: Server) -> None:
    async with client(ftp=FTPOptions(epsv=False)) as c:
        r = await c.fetch(srv.url("/pub/hello.txt"))
    assert r.content == seed.HELLO
    assert "PASV" in srv.commands() and "EPSV" not in srv.commands()


@servers_except(aioftp_server="aioftp.Server has neither EPRT nor PORT: passive mode only")
async def test_active_mode(srv: Server) -> None:
    async with client(ftp=FTPOptions(passive=False)) as c:
        r = await c.fetch(srv.url("/pub/blob.bin"))
    assert r.content == seed.blob()
    cmds = srv.commands()
    assert cmds[4].startswith("TYPE I") and cmds[6].startswith("EPRT |1|127.0.0.1|")
    assert cmds[7] == "RETR blob.bin"


async def test_concurrent_fetches_respect_per_host_limit(srv: Server) -> None:
    names = ["hello.txt", "crlf.txt", "blob.bin", "with space.txt", "semi;colon.txt", "100%.txt"] * 2
    async with client(limits=Limits(per_host=2)) as c:
        results = await asyncio.gather(*(c.fetch(srv.url("/pub/" + n.replace("%", "%25").replace(" ", "%20")
                                                          .replace(";", "%3B") + ";type=i")) for n in names))
    expect = {"hello.txt": seed.HELLO, "crlf.txt": seed.CRLF_TEXT, "blob.bin": seed.blob(), **seed.SPECIAL_NAMES}
    assert [r.content for r in results] == [expect[n] for n in names]
    cmds = srv.commands()
    assert 1 <= cmds.count("USER anonymous") <= 2
    assert cmds.count("RETR hello.txt") == 2


# -- resume, big files, upload ----------------------------------------------------------


async def test_resume_with_rest(srv: Server) -> None:
    async with client() as c, c.open(srv.url("/pub/blob.bin"), offset=1000) as body:
        assert body.size == (None if srv.kind in NO_SIZE else len(seed.blob()) - 1000)
        data = await body.read()
    assert data == seed.blob()[1000:]
    assert srv.commands() == [*srv.login, "CWD pub", "TYPE I", "SIZE blob.bin", "EPSV", "REST 1000",
                              "RETR blob.bin", "QUIT"]


def _quoted(name: str) -> str:
    return name.replace("%", "%25").replace(" ", "%20").replace(";", "%3B")


async def test_pipelined_retr_is_byte_exact_on_every_server(srv: Server) -> None:
    # After the first EPSV on a connection, [SIZE,] EPSV and RETR go out in one write
    # (test_pipelining_sends_retr_before_the_epsv_reply shows it): every file still arrives
    # byte for byte with its size, and a missing file fails alone with its own error.
    names = ["blob.bin", "crlf.txt", "hello.txt", "with space.txt", "semi;colon.txt", "100%.txt", "blob.bin"]
    expect = {"hello.txt": seed.HELLO, "crlf.txt": seed.CRLF_TEXT, "blob.bin": seed.blob(), **seed.SPECIAL_NAMES}
    async with client(limits=Limits(per_host=1)) as c:
        for n in names:
            assert (await c.fetch(srv.url("/pub/" + _quoted(n)))).content == expect[n], n
        with pytest.raises(ResourceNotFound):
            await c.fetch(srv.url("/pub/no-such-file.bin;type=i"))
        async with c.open(srv.url("/pub/blob.bin")) as body:
            assert body.size == (None if srv.kind in NO_SIZE else len(seed.blob()))
            assert await body.read() == seed.blob()
    cmds = srv.commands()
    assert cmds.count(srv.login[0]) == 1  # one connection: the 550 left it in step, so it was kept
    retrs = [c for c in cmds if c.startswith("RETR")]
    assert retrs == [f"RETR {n}" for n in names] + ["RETR no-such-file.bin", "RETR blob.bin"]
    assert cmds.count("EPSV") == len(retrs) and cmds.count("TYPE I") == 1


@pytest.mark.parametrize("pipeline", [True, False])
async def test_refused_retr_keeps_the_connection(srv: Server, pipeline: bool) -> None:
    # A 550 on RETR (or on a CWD) completes its reply sequence: the connection is in step,
    # so the next fetch on the same Client reuses it (one login in the server's log).
    async with client(limits=Limits(per_host=1), ftp=FTPOptions(pipeline=pipeline)) as c:
        assert (await c.fetch(srv.url("/pub/hello.txt"))).content == seed.HELLO  # EPSV seen: pipelined next
        with pytest.raises(ResourceNotFound) as info:
            await c.fetch(srv.url("/pub/no-such-file.bin;type=i"))
        assert "no-such-file.bin" in str(info.value)
        assert (await c.fetch(srv.url("/pub/crlf.txt"))).content == seed.CRLF_TEXT
        with pytest.raises(ResourceNotFound):
            await c.fetch(srv.url("/no-such-dir/hello.txt"))
        with pytest.raises(ResourceNotFound):
            await c.stat(srv.url("/pub/no-such-file.bin"))
        assert (await c.fetch(srv.url("/pub/hello.txt"))).content == seed.HELLO
    cmds = srv.commands()
    assert cmds.count(srv.login[0]) == 1, cmds
    assert [c for c in cmds if c.startswith("RETR")] == [
        "RETR hello.txt", "RETR no-such-file.bin", "RETR crlf.txt", "RETR hello.txt"]
    assert "CWD no-such-dir" in cmds and cmds[-1] == "QUIT"


async def test_absolute_symlink_targets_resolve_on_the_server(vs: Server) -> None:
    # The local user's login directory is not "/" (PWD gives the real path): an absolute
    # link target is a server path. Below the login directory it becomes the plain URL; elsewhere
    # the RFC 1738 3.2.2 form "%2Fdir/.../name" (CWD /dir first). Both keys fetch the target's bytes.
    local, anon = Path(vs.ep.info["local_root"]), Path(vs.ep.info["anon_root"])
    links = local / f"links-{os.getpid()}"
    links.mkdir()
    try:
        (links / "in-home").symlink_to(local / "private.txt")
        (links / "outside").symlink_to(anon / "pub" / "hello.txt")
        user = "urltest:urltest-pw@"
        async with client(limits=Limits(per_host=1)) as c:
            r = await c.fetch(vs.url(f"/{links.name}/", user))
            assert r.entries is not None
            by_name = {e.name: e for e in r.entries}
            assert by_name["in-home"].kind == by_name["outside"].kind == "symlink"
            assert by_name["in-home"].key == vs.url("/private.txt", "urltest@")
            outside = "/%2F" + "/".join(_quoted(p) for p in (anon / "pub").parts[1:]) + "/hello.txt"
            assert by_name["outside"].key == vs.url(outside, "urltest@")
            vs.start()
            got = await c.fetch(vs.url(outside, user))
            assert got.content == seed.HELLO
            assert (await c.fetch(vs.url("/private.txt", user))).content == seed.PRIVATE
        cmds = vs.commands()
        first, *rest = (anon / "pub").parts[1:]
        walk = [f"CWD /{first}", *(f"CWD {p}" for p in rest)]  # each segment its CWD, the first absolute
        assert cmds[cmds.index(walk[0]):][:len(walk)] == walk and "RETR hello.txt" in cmds
    finally:
        shutil.rmtree(links, ignore_errors=True)


@pytest.mark.parametrize("pipeline", [True, False])
async def test_pipelining_sends_retr_before_the_epsv_reply(pipeline: bool) -> None:
    early: list[bool] = []  # per transfer: RETR arrived before we answered EPSV

    async def script(r: asyncio.StreamReader, w: asyncio.StreamWriter, f: Fake) -> None:
        await login(r, w, f)  # USER PASS PWD TYPE
        await f.read(r)  # SIZE: refused, so never asked again
        w.write(b"502 no SIZE\r\n")
        for i in range(3):
            port = await f.listen_data()
            await f.read(r)  # EPSV
            try:
                await asyncio.wait_for(f.read(r), 0.5)
                early.append(True)
            except TimeoutError:
                early.append(False)
            w.write(f"229 Entering Extended Passive Mode (|||{port}|)\r\n".encode())
            if not early[-1]:
                await f.read(r)  # RETR
            assert f.data_conn is not None
            _, dw = await f.data_conn
            w.write(b"150 here it comes\r\n")
            dw.write(b"file %d" % i)
            await dw.drain()
            dw.close()
            w.write(b"226 done\r\n")
        await f.read(r)  # QUIT

    async with fake_server(script) as (port, fake), client(ftp=FTPOptions(pipeline=pipeline)) as c:
        for i in range(3):
            assert (await c.fetch(f"ftp://127.0.0.1:{port}/f.bin")).content == b"file %d" % i
    assert early == [False, pipeline, pipeline]  # the first EPSV is never pipelined
    assert fake.commands[4:] == ["SIZE f.bin", *["EPSV", "RETR f.bin"] * 3, "QUIT"]


@pytest.mark.parametrize(("announced", "payload", "delay", "outcome"), [
    (11, b"small file\n", 0.0, None),  # read straight from the socket
    (11, b"small file\n", 0.3, None),  # nothing there at first: waits for the socket
    (5, b"0123456789", 0.0, OverlongTransfer),
    (100, b"x" * 50, 0.0, TruncatedTransfer),
    (11, b"", 5.0, FetchTimeout),  # nothing arrives within the read timeout
    (200_000, b"y" * 200_000, 0.0, None),  # larger than 64 KiB: the transport and BulkReader
])
async def test_small_pipelined_file_read_from_the_socket(announced: int, payload: bytes, delay: float,
                                                         outcome: type[Exception] | None) -> None:
    async def script(r: asyncio.StreamReader, w: asyncio.StreamWriter, f: Fake) -> None:
        await login(r, w, f)  # USER PASS PWD TYPE
        await f.read(r)  # SIZE: refused; the 150 says the size
        w.write(b"502 no SIZE\r\n")
        for i in range(2):
            port = await f.listen_data()
            await f.read(r)  # EPSV
            w.write(f"229 Entering Extended Passive Mode (|||{port}|)\r\n".encode())
            await f.read(r)  # RETR
            assert f.data_conn is not None
            _, dw = await f.data_conn
            data = b"first" if i == 0 else payload
            w.write(f"150 Opening BINARY mode data connection for f.bin ({5 if i == 0 else announced} bytes)"
                    "\r\n".encode())
            await w.drain()
            if i == 1 and delay:
                await asyncio.sleep(delay)
            dw.write(data)
            await dw.drain()
            dw.close()
            w.write(b"226 done\r\n")
        await f.read(r)  # QUIT or ABOR

    async with fake_server(script) as (port, _), client(timeouts=Timeouts(connect=5, read=1)) as c:
        assert (await c.fetch(f"ftp://127.0.0.1:{port}/f.bin")).content == b"first"
        if outcome is None:
            async with c.open(f"ftp://127.0.0.1:{port}/f.bin") as body:
                assert body.size == announced
                assert await body.read() == payload
        else:
            with pytest.raises(outcome):
                async with asyncio.timeout(10):
                    await c.fetch(f"ftp://127.0.0.1:{port}/f.bin")


async def test_pipelined_epsv_refused_falls_back_to_pasv_in_step() -> None:
    async def transfer(w: asyncio.StreamWriter, f: Fake, data: bytes) -> None:
        assert f.data_conn is not None
        _, dw = await f.data_conn
        w.write(b"150 here it comes\r\n")
        dw.write(data)
        await dw.drain()
        dw.close()
        w.write(b"226 done\r\n")

    async def script(r: asyncio.StreamReader, w: asyncio.StreamWriter, f: Fake) -> None:
        await login(r, w, f)  # USER PASS PWD TYPE
        await f.read(r)  # SIZE
        w.write(b"502 no SIZE\r\n")
        port = await f.listen_data()
        await f.read(r)  # EPSV
        w.write(f"229 Entering Extended Passive Mode (|||{port}|)\r\n".encode())
        await f.read(r)  # RETR
        await transfer(w, f, b"one")
        # next file: EPSV and RETR come together; EPSV is refused now, and so is RETR without a port
        await f.read(r)
        await f.read(r)
        w.write(b"500 EPSV not understood\r\n425 Use PORT or PASV first.\r\n")
        port = await f.listen_data()
        await f.read(r)  # PASV
        w.write(f"227 Entering Passive Mode (127,0,0,1,{port >> 8},{port & 255})\r\n".encode())
        await f.read(r)  # RETR
        await transfer(w, f, b"two")
        await f.read(r)  # QUIT

    async with fake_server(script) as (port, fake), client() as c:
        assert (await c.fetch(f"ftp://127.0.0.1:{port}/f.bin")).content == b"one"
        assert (await c.fetch(f"ftp://127.0.0.1:{port}/f.bin")).content == b"two"
    assert fake.commands[4:] == ["SIZE f.bin", "EPSV", "RETR f.bin", "EPSV", "RETR f.bin", "PASV", "RETR f.bin",
                                 "QUIT"]


@pytest.mark.parametrize("answer", [b"150 Opening BINARY mode data connection\r\n", b"200 NOOP ok\r\n",
                                    b"226 Transfer complete\r\n"])
async def test_pipelined_epsv_answered_out_of_turn_is_a_clear_error(answer: bytes,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    # EPSV and RETR go out in one write: a server whose first answer cannot be EPSV's (a
    # transfer starting, a leftover 2xx) is out of step. The connection is dropped, the log
    # names that reply, and the fetch is made again on a new login, one command at a time
    # (issue 24 step 5: the driver falls back for that server).
    async def script(r: asyncio.StreamReader, w: asyncio.StreamWriter, f: Fake) -> None:
        await login(r, w, f)  # USER PASS PWD TYPE
        await f.read(r)  # SIZE
        w.write(b"502 no SIZE\r\n")
        port = await f.listen_data()
        await f.read(r)  # EPSV
        w.write(f"229 Entering Extended Passive Mode (|||{port}|)\r\n".encode())
        await f.read(r)  # RETR
        assert f.data_conn is not None
        _, dw = await f.data_conn
        w.write(b"150 here it comes\r\n")
        dw.write(b"one")
        await dw.drain()
        dw.close()
        w.write(b"226 done\r\n")
        await f.read(r)  # EPSV and RETR, pipelined
        await f.read(r)
        w.write(answer + f"229 Entering Extended Passive Mode (|||{port}|)\r\n".encode())
        await r.read()  # until the client hangs up

    caplog.set_level("WARNING", logger="anyurl.ftp")
    async with fake_server(script) as (port, fake), client() as c:
        assert (await c.fetch(f"ftp://127.0.0.1:{port}/f.bin")).content == b"one"
        assert (await c.fetch(f"ftp://127.0.0.1:{port}/f.bin")).content == b"one"
    assert fake.commands[4:9] == ["SIZE f.bin", "EPSV", "RETR f.bin", "EPSV", "RETR f.bin"]
    assert [c for c in fake.commands[9:] if c] == ["USER anonymous", "PASS anonymous@localhost", "PWD", "TYPE I", "SIZE f.bin",
                                                   "EPSV", "RETR f.bin", "QUIT"]  # a new login, nothing pipelined
    [warning] = [r.getMessage() for r in caplog.records]
    assert "out of step" in warning and answer.decode().strip() in warning and "EPSV" in warning


async def test_pipelined_run_of_files_with_a_550_in_the_middle(srv: Server) -> None:
    # One connection, six files, the fourth missing: the server's log shows the whole run,
    # login, CWD and TYPE once, then EPSV and RETR per file (pipelined from the second
    # on), no CWD again (the connection stands in /pub). The 550 fails that file alone; the
    # files after it arrive byte for byte on the same login.
    names = ["hello.txt", "crlf.txt", "blob.bin", "no-such-file.bin", "with space.txt", "hello.txt"]
    expect = {"hello.txt": seed.HELLO, "crlf.txt": seed.CRLF_TEXT, "blob.bin": seed.blob(), **seed.SPECIAL_NAMES}
    async with client(limits=Limits(per_host=1)) as c:
        for n in names:
            if n in expect:
                assert (await c.fetch(srv.url("/pub/" + _quoted(n)))).content == expect[n], n
            else:
                with pytest.raises(ResourceNotFound, match=n):
                    await c.fetch(srv.url(f"/pub/{n};type=i"))
    cmds = [x for x in srv.commands() if not x.startswith("SIZE")]  # SIZE: per server (a 150 may say it)
    transfers = [x for n in names for x in ("EPSV", f"RETR {n}")]
    assert cmds == [*srv.login, "CWD pub", "TYPE I", *transfers, "QUIT"]


async def test_next_file_queued_behind_the_transfer_on_vsftpd_only(srv: Server,
                                                                     caplog: pytest.LogCaptureFixture) -> None:
    # Issue 24 step 5: with more requests than connections, a file's EPSV+RETR are written while
    # the transfer ahead of it runs, before its 226 is read, to vsftpd only (it reads commands
    # between transfers, so they are answered after that 226). pyftpdlib acts on an EPSV at once
    # and closes the transfer's data connection, ProFTPD answers nothing more, aioftp.Server
    # runs commands concurrently: to them each request waits for a connection of its own. Every
    # file arrives byte for byte on the one connection; the missing one (its 550 fallback needs
    # CWD and a listing, but a request is queued behind it) is made again and fails alone.
    caplog.set_level("DEBUG", logger="anyurl.ftp")
    names = ["hello.txt", "crlf.txt", "blob.bin", "no-such-file.bin", "with space.txt", "semi;colon.txt",
             "100%.txt", "hello.txt", "blob.bin", "crlf.txt"]
    expect = {"hello.txt": seed.HELLO, "crlf.txt": seed.CRLF_TEXT, "blob.bin": seed.blob(), **seed.SPECIAL_NAMES}
    async with client(limits=Limits(per_host=1)) as c:
        got = await asyncio.gather(*(c.fetch(srv.url("/pub/" + _quoted(n))) for n in names), return_exceptions=True)
    for n, r in zip(names, got, strict=True):
        if n in expect:
            assert not isinstance(r, BaseException) and r.content == expect[n], (n, r)
        else:
            assert isinstance(r, ResourceNotFound), r
    records = [r.getMessage().split(" ", 1)[1] for r in caplog.records
               if r.getMessage().startswith(f"{srv.ep.host}:{srv.ep.port} ")]
    queued = [i for i, m in enumerate(records) if m.startswith("> RETR ") and m.endswith("(queued)")]
    if srv.kind == "vsftpd":
        assert len(queued) >= 3, records
        for i in queued:  # written before the request ahead of it ended: that one's 226 (or 550) is
            # read after it, then this one's 150 (vsftpd's names the file) or 550
            name = records[i].removeprefix("> RETR ").removesuffix(" (queued)")
            after = [m for m in records[i + 1:] if m.startswith(("< 150", "< 226", "< 550"))]
            if name in expect:
                own = next(k for k, m in enumerate(after) if f" for {name} (" in m)
                assert own > 0 and after[own - 1].startswith(("< 226", "< 550")), records[i:]  # the end ahead
            else:  # its own 550 comes after the end of the one ahead
                assert len([m for m in after if m.startswith(("< 226", "< 550"))]) >= 2, records[i:]
    else:
        assert not queued and not any(m.endswith("(queued)") for m in records), records
    cmds = srv.commands()
    assert cmds.count(srv.login[0]) == 1, cmds  # one connection throughout, in step
    assert sorted({x for x in cmds if x.startswith("RETR")}) == sorted({f"RETR {n}" for n in names})


async def test_queued_request_that_gives_up_leaves_the_connection_in_step(vs: Server) -> None:
    # A body held unread keeps its transfer open; a fetch queued behind it gives up after
    # Timeouts.pool (PoolTimeout, as any wait for a connection). What it queued is still
    # answered by vsftpd (which would otherwise wait for its data connection, the session held
    # until accept_timeout): once the body is read, its replies are read and the transfer that
    # starts is aborted, and the same login serves the next fetch.
    from anyurl.errors import PoolTimeout

    async with client(limits=Limits(per_host=1), timeouts=Timeouts(connect=10, read=10, pool=0.5)) as c:
        assert (await c.fetch(vs.url("/pub/crlf.txt"))).content == seed.CRLF_TEXT  # its size known here
        async with c.open(vs.url("/pub/hello.txt")) as held:
            with pytest.raises(PoolTimeout):
                await c.fetch(vs.url("/pub/blob.bin"))
            assert await held.read() == seed.HELLO
        assert (await c.fetch(vs.url("/pub/with%20space.txt"))).content == seed.SPECIAL_NAMES["with space.txt"]
    cmds = vs.commands()
    assert cmds.count(vs.login[0]) == 1, cmds
    assert cmds[cmds.index("RETR hello.txt"):] == ["RETR hello.txt", "EPSV", "RETR blob.bin", "ABOR", "NOOP",
                                                   "EPSV", "RETR with space.txt", "QUIT"], cmds


async def test_big_file_streams(vs: Server) -> None:
    path = vsftpd.ensure_big(vs.ep.info, 100 << 20)
    want = hashlib.sha256(path.read_bytes()).hexdigest()
    digest = hashlib.sha256()
    biggest = 0
    async with client() as c, c.open(vs.url("/pub/big.bin")) as body:
        assert body.size == 100 << 20
        async for chunk in body:
            digest.update(chunk)
            biggest = max(biggest, len(chunk))
        assert body.complete
    assert digest.hexdigest() == want
    assert biggest <= 1 << 20  # chunks are bounded by Limits.chunk_size


async def test_upload_atomic(srv: Server, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    local = Path(srv.ep.info["local_root"])
    src = tmp_path / "src.bin"
    src.write_bytes(seed.blob() * 3)
    caplog.set_level("INFO", logger="anyurl.ftp")
    async with client() as c:
        await c.upload(srv.url("/upload/up.bin", "urltest:urltest-pw@"), src)
        await c.upload(srv.url("/upload/bytes.txt", "urltest:urltest-pw@"), b"from bytes\r\n")
    assert (local / "upload" / "up.bin").read_bytes() == seed.blob() * 3
    assert (local / "upload" / "bytes.txt").read_bytes() == b"from bytes\r\n"
    assert not [p for p in (local / "upload").iterdir() if p.name.endswith(".part")]
    cmds = srv.commands()
    stor = [x for x in cmds if x.startswith(("STOR", "RNFR", "RNTO"))]
    if srv.kind == "proftpd":
        # PathDenyFilter refuses dot names (as Pure-FTPd does for anonymous users): the
        # temporary name without the dot is used, still renamed into place
        assert stor[0].startswith("STOR .up.bin.") and stor[0].endswith(".part")
        token = stor[0].split(".")[-2]
        assert stor[1:4] == [f"STOR up.bin.{token}.part", f"RNFR up.bin.{token}.part", "RNTO up.bin"]
        assert stor[7] == "RNTO bytes.txt"
        method = "temp"
    else:
        assert stor[0].startswith("STOR .up.bin.") and stor[0].endswith(".part")
        assert stor[1] == "RNFR " + stor[0][5:] and stor[2] == "RNTO up.bin"
        assert stor[5] == "RNTO bytes.txt"
        method = "temp-dot"
    said = [r.getMessage() for r in caplog.records if r.name == "anyurl.ftp"]
    assert said == [f"{srv.url('/upload/up.bin', 'urltest:****@')}: stored by {method}",
                    f"{srv.url('/upload/bytes.txt', 'urltest:****@')}: stored by {method}"]


async def test_upload_failing_mid_transfer_keeps_the_login(servers: Launcher, tmp_path: Path) -> None:
    # pyftpdlib under RLIMIT_FSIZE: its write past the limit fails (EFBIG, as a full disk or a
    # quota would) and it answers 426 once the data connection is closed (its text says
    # "None" where the errno's name belongs: pyftpdlib 2.2 wraps the OSError and loses it).
    # That reply completes STOR: the partial temporary file is deleted and the same login
    # fetches next (one USER in the server's log).
    ep = servers.get("pyftpdlib_full")
    full = Server(ep, "pyftpdlib")
    full.start()
    local = Path(ep.info["local_root"])
    src = tmp_path / "big.bin"
    src.write_bytes(os.urandom(4 * ep.info["file_limit"]))
    async with client(limits=Limits(per_host=1)) as c:
        with pytest.raises(TemporaryFailure, match="426") as info:
            await c.upload(full.url("/upload/big.bin", "urltest:urltest-pw@"), src)
        reply = info.value.reply
        assert reply is not None and reply.startswith("426 ") and reply.endswith("transfer aborted."), reply
        got = await c.fetch(full.url("/private.txt", "urltest:urltest-pw@"))
        assert got.content == seed.PRIVATE
        await c.upload(full.url("/upload/small.bin", "urltest:urltest-pw@"), b"fits\n")
    assert sorted(p.name for p in (local / "upload").iterdir()) == ["small.bin"]  # no .part left
    assert (local / "upload" / "small.bin").read_bytes() == b"fits\n"
    cmds = full.commands()
    temp = cmds[6].removeprefix("STOR ")
    assert temp.startswith(".big.bin.") and temp.endswith(".part"), cmds
    assert cmds[:11] == ["USER urltest", "PASS <password>", "PWD", "CWD upload", "TYPE I", "EPSV",
                         f"STOR {temp}", f"DELE {temp}", "CWD /", "SIZE private.txt", "EPSV"]
    assert cmds.count("USER urltest") == 1 and cmds[-1] == "QUIT", cmds


async def test_anonymous_upload_refused(srv: Server) -> None:
    async with client() as c:
        with pytest.raises((AccessDenied, ResourceNotFound, TemporaryFailure, Exception)) as info:
            await c.upload(srv.url("/pub/evil.txt"), b"x")
    assert info.value.reply is not None and info.value.reply[0] in "45"  # type: ignore[attr-defined]
    assert not (Path(srv.ep.info["anon_root"]) / "pub" / "evil.txt").exists()


# -- bad input --------------------------------------------------------------------------


@pytest.mark.parametrize("rest", [
    "/pub/a%0d%0aDELE%20hello.txt",
    "/pub%0aDELE%20x/hello.txt",
    "/pub/x%00y",
])
async def test_control_characters_refused_before_connecting(srv: Server, rest: str) -> None:
    async with client() as c:
        with pytest.raises(UnsafeURL):
            await c.fetch(srv.url(rest))
        with pytest.raises(UnsafeURL):
            await c.fetch(srv.url("/pub/hello.txt", "us%0d%0aer:pw@"))
        with pytest.raises(UnsafeURL):
            await c.fetch(srv.url("/pub/hello.txt", "user:p%0aw@"))
    assert srv.raw() == b""  # not even a connection was made


# -- TLS ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tls_ep(servers: Launcher) -> Endpoint:
    return servers.get("vsftpd_tls")


async def test_explicit_tls(tls_ep: Endpoint) -> None:
    mark = log_size(tls_ep.info["log"])
    async with client(ftp=FTPOptions(tls=True, cafile=tls_ep.info["cafile"])) as c:
        r = await c.fetch(f"ftp://{tls_ep.host}:{tls_ep.port}/pub/blob.bin")
        listing = await c.fetch(f"ftp://{tls_ep.host}:{tls_ep.port}/pub/")
    assert r.content == seed.blob()
    assert listing.entries is not None and "hello.txt" in {e.name for e in listing.entries}
    cmds = vsftpd.commands(tls_ep.info["log"], mark)
    assert cmds[:6] == ["AUTH TLS", "USER anonymous", "PASS <password>", "PBSZ 0", "PROT P", "PWD"]


async def test_implicit_ftps(tls_ep: Endpoint) -> None:
    ctx = ssl.create_default_context(cafile=tls_ep.info["cafile"])
    mark = log_size(tls_ep.info["implicit_log"])
    async with client(ftp=FTPOptions(ssl_context=ctx)) as c:
        r = await c.fetch(f"ftps://urltest:urltest-pw@{tls_ep.host}:{tls_ep.info['implicit_port']}/private.txt")
    assert r.content == seed.PRIVATE
    cmds = vsftpd.commands(tls_ep.info["implicit_log"], mark)
    assert cmds[:5] == ["USER urltest", "PASS <password>", "PBSZ 0", "PROT P", "PWD"]


async def test_tls_context_is_the_old_spelling_of_ssl_context(tls_ep: Endpoint) -> None:
    ctx = ssl.create_default_context(cafile=tls_ep.info["cafile"])
    with pytest.warns(DeprecationWarning, match=r"FTPOptions\(tls_context=...\) is deprecated"):
        opts = FTPOptions(tls=True, tls_context=ctx)
    assert opts.ssl_context is ctx
    async with client(ftp=opts) as c:
        r = await c.fetch(f"ftp://{tls_ep.host}:{tls_ep.port}/pub/blob.bin")
    assert r.content == seed.blob()


async def test_an_unchecked_certificate_is_refused_unless_verify_is_off(tls_ep: Endpoint) -> None:
    url = f"ftp://{tls_ep.host}:{tls_ep.port}/pub/blob.bin"
    async with client(ftp=FTPOptions(tls=True)) as c:  # the system's CAs do not know the test CA
        with pytest.raises(anyurl.AnyURLError, match="certificate"):
            await c.fetch(url, retry=anyurl.Retry(attempts=1))
    async with client(ftp=FTPOptions(tls=True, verify=False)) as c:
        assert (await c.fetch(url)).content == seed.blob()


async def test_tls_untrusted_certificate_fails(tls_ep: Endpoint) -> None:
    async with client(ftp=FTPOptions(tls=True)) as c:
        with pytest.raises(Exception, match="(?i)certificate|TLS"):
            await c.fetch(f"ftp://{tls_ep.host}:{tls_ep.port}/pub/hello.txt")


# -- faults only a fake server can inject ------------------------------------------------

Script = Callable[[asyncio.StreamReader, asyncio.StreamWriter, "Fake"], Awaitable[None]]


class Fake:
    """A minimal scripted FTP server on loopback, one data listener."""

    def __init__(self) -> None:
        self.commands: list[str] = []
        self.data_server: asyncio.Server | None = None
        self.data_conn: asyncio.Future[tuple[asyncio.StreamReader, asyncio.StreamWriter]] | None = None

    async def read(self, reader: asyncio.StreamReader) -> str:
        line = (await reader.readline()).decode().rstrip("\r\n")
        self.commands.append(line)
        return line

    async def listen_data(self) -> int:
        if self.data_server is not None:  # one data listener at a time
            self.data_server.close()
        if self.data_conn is not None and self.data_conn.done():
            self.data_conn.result()[1].close()
        fut: asyncio.Future[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = (
            asyncio.get_running_loop().create_future())

        async def on_data(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            if not fut.done():
                fut.set_result((r, w))
            else:
                w.close()

        self.data_conn = fut
        self.data_server = await asyncio.start_server(on_data, "127.0.0.1", 0)
        port: int = self.data_server.sockets[0].getsockname()[1]
        return port


async def login(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, fake: Fake) -> None:
    writer.write(b"220 fake\r\n")
    for reply in (b"331 pw\r\n", b"230 ok\r\n", b'257 "/" here\r\n', b"200 type\r\n"):
        await fake.read(reader)
        writer.write(reply)


async def serve_truncated(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, fake: Fake,
                          *, size_reply: bytes, send_226: bool, pasv_addr: str = "127,0,0,1") -> None:
    await login(reader, writer, fake)  # USER PASS PWD TYPE
    await fake.read(reader)  # SIZE
    writer.write(size_reply)
    port = await fake.listen_data()
    await fake.read(reader)  # EPSV -> refuse, so PASV is used
    writer.write(b"502 no EPSV\r\n")
    await fake.read(reader)  # PASV
    writer.write(f"227 Entering Passive Mode ({pasv_addr},{port >> 8},{port & 255})\r\n".encode())
    await fake.read(reader)  # RETR
    writer.write(b"150 here it comes\r\n")
    assert fake.data_conn is not None
    _, dw = await fake.data_conn
    dw.write(b"x" * 1000)
    await dw.drain()
    dw.close()
    if send_226:
        writer.write(b"226 done\r\n")
        await fake.read(reader)
    writer.close()


@contextlib.asynccontextmanager
async def fake_server(script: Script) -> AsyncIterator[tuple[int, Fake]]:
    fake = Fake()
    tasks: list[asyncio.Task[None]] = []

    async def handle(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        try:
            await script(r, w, fake)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            w.close()

    def on_conn(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        tasks.append(asyncio.ensure_future(handle(r, w)))

    server = await asyncio.start_server(on_conn, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1], fake
    finally:
        server.close()
        if tasks:  # the client closed without waiting for QUIT's reply: let the script read it
            await asyncio.wait(tasks, timeout=1)
        if fake.data_server is not None:
            fake.data_server.close()
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if fake.data_conn is not None and fake.data_conn.done():
            fake.data_conn.result()[1].close()
        await asyncio.sleep(0)  # let the closed transports finish


async def test_truncated_fewer_bytes_than_size() -> None:
    async def script(r: asyncio.StreamReader, w: asyncio.StreamWriter, f: Fake) -> None:
        await serve_truncated(r, w, f, size_reply=b"213 5000\r\n", send_226=True)

    async with fake_server(script) as (port, fake), client() as c:
        with pytest.raises(TruncatedTransfer, match="1000 of 5000"):
            await c.fetch(f"ftp://127.0.0.1:{port}/f.bin")
    assert fake.commands[:4] == ["USER anonymous", "PASS " + c.anonymous_email, "PWD", "TYPE I"]


async def test_truncated_no_226() -> None:
    async def script(r: asyncio.StreamReader, w: asyncio.StreamWriter, f: Fake) -> None:
        await serve_truncated(r, w, f, size_reply=b"550 no size\r\n", send_226=False)

    async with fake_server(script) as (port, _fake), client() as c:
        with pytest.raises(TruncatedTransfer, match="226 missing"):
            await c.fetch(f"ftp://127.0.0.1:{port}/f.bin")


async def test_pasv_address_is_ignored() -> None:
    # The 227 reply points at 10.255.255.1; the client must connect to the control host.
    async def script(r: asyncio.StreamReader, w: asyncio.StreamWriter, f: Fake) -> None:
        await serve_truncated(r, w, f, size_reply=b"213 1000\r\n", send_226=True, pasv_addr="10,255,255,1")

    async with fake_server(script) as (port, fake), client() as c:
        r = await c.fetch(f"ftp://127.0.0.1:{port}/f.bin")
    assert r.content == b"x" * 1000
    assert "PASV" in fake.commands


async def test_421_greeting_is_temporary() -> None:
    async def script(r: asyncio.StreamReader, w: asyncio.StreamWriter, f: Fake) -> None:
        w.write(b"421 Too many users\r\n")
        await w.drain()
        w.close()

    async with fake_server(script) as (port, _), client() as c:
        with pytest.raises(TemporaryFailure, match="421 Too many users"):
            await c.fetch(f"ftp://127.0.0.1:{port}/x")


async def test_endless_multiline_reply_is_bounded() -> None:
    async def script(r: asyncio.StreamReader, w: asyncio.StreamWriter, f: Fake) -> None:
        w.write(b"220-hello\r\n" + b"spam\r\n" * 200)
        await w.drain()
        await asyncio.sleep(5)

    async with fake_server(script) as (port, _), client(limits=Limits(max_reply_lines=50)) as c:
        with pytest.raises(Exception, match="longer than 50 lines"):
            await c.fetch(f"ftp://127.0.0.1:{port}/x")


async def serve_data(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, fake: Fake,
                     send: Callable[[asyncio.StreamWriter], Awaitable[None]], wait_quit: bool = True) -> None:
    """Login, SIZE (refused), EPSV, RETR; then *send* writes the data connection."""
    await login(reader, writer, fake)  # USER PASS PWD TYPE
    await fake.read(reader)  # SIZE
    writer.write(b"502 no SIZE\r\n")
    port = await fake.listen_data()
    await fake.read(reader)  # EPSV
    writer.write(f"229 Entering Extended Passive Mode (|||{port}|)\r\n".encode())
    await fake.read(reader)  # RETR
    writer.write(b"150 here it comes\r\n")
    assert fake.data_conn is not None
    _, dw = await fake.data_conn
    await send(dw)
    dw.close()
    writer.write(b"226 done\r\n")
    if wait_quit:
        await fake.read(reader)


async def test_trickle_is_delivered_as_it_arrives() -> None:
    release = asyncio.Event()

    async def send(dw: asyncio.StreamWriter) -> None:
        dw.write(b"first")
        await dw.drain()
        await release.wait()  # the client must get "first" before the rest is sent
        dw.write(b"second")
        await dw.drain()

    async def script(r: asyncio.StreamReader, w: asyncio.StreamWriter, f: Fake) -> None:
        await serve_data(r, w, f, send)

    async with fake_server(script) as (port, _), client() as c, c.open(f"ftp://127.0.0.1:{port}/f.bin") as body:
        chunks = aiter(body)
        async with asyncio.timeout(5):
            first = await anext(chunks)
        assert first == b"first"
        release.set()
        rest = b"".join([chunk async for chunk in chunks])
    assert rest == b"second"


async def test_stalled_data_connection_times_out() -> None:
    async def send(dw: asyncio.StreamWriter) -> None:
        dw.write(b"x" * 100)
        await dw.drain()
        await asyncio.sleep(30)

    async def script(r: asyncio.StreamReader, w: asyncio.StreamWriter, f: Fake) -> None:
        await serve_data(r, w, f, send)

    async with fake_server(script) as (port, _), client(timeouts=Timeouts(connect=5, read=0.5)) as c:
        with pytest.raises(FetchTimeout, match="timed out waiting for data"):
            async with asyncio.timeout(10):
                await c.fetch(f"ftp://127.0.0.1:{port}/f.bin")


async def test_silent_server_times_out_at_each_requests_read_timeout() -> None:
    # The first request (read timeout 30 s) arms the control connection's one timer far
    # ahead; the second request on the same connection has 0.5 s, and a server that never
    # answers must fail it after about that, not after 30 s.
    async def send(dw: asyncio.StreamWriter) -> None:
        dw.write(b"payload")
        await dw.drain()

    async def script(r: asyncio.StreamReader, w: asyncio.StreamWriter, f: Fake) -> None:
        await serve_data(r, w, f, send, wait_quit=False)
        await f.read(r)  # the next transfer's EPSV: never answered
        await asyncio.sleep(30)

    async with fake_server(script) as (port, _), client(timeouts=Timeouts(connect=5, read=30)) as c:
        assert (await c.fetch(f"ftp://127.0.0.1:{port}/f.bin")).content == b"payload"
        start = time.monotonic()
        with pytest.raises(FetchTimeout, match="timed out waiting for a reply line"):
            async with asyncio.timeout(10):
                await c.fetch(f"ftp://127.0.0.1:{port}/f.bin", timeouts=Timeouts(connect=5, read=0.5))
        assert time.monotonic() - start < 3


async def test_closing_sends_quit_without_waiting_for_its_reply() -> None:
    # Issue 24 step 5: the pool closes idle connections one after another; each waited for the
    # 221 (up to 2 s), a round trip per connection at the end of every run. Now QUIT is sent
    # and the connection closed at once: a server slow to say goodbye costs nothing.
    quit_seen = asyncio.Event()

    async def script(r: asyncio.StreamReader, w: asyncio.StreamWriter, f: Fake) -> None:
        await login(r, w, f)  # USER PASS PWD TYPE
        await f.read(r)  # SIZE
        w.write(b"213 3\r\n")
        port = await f.listen_data()
        await f.read(r)  # EPSV
        w.write(f"229 (|||{port}|)\r\n".encode())
        await f.read(r)  # RETR
        assert f.data_conn is not None
        _, dw = await f.data_conn
        w.write(b"150 here\r\n")
        dw.write(b"one")
        await dw.drain()
        dw.close()
        w.write(b"226 done\r\n")
        if await f.read(r) == "QUIT":
            quit_seen.set()  # and no 221: the client must not wait for one
        await r.read()

    async with fake_server(script) as (port, fake):
        c = client()
        assert (await c.fetch(f"ftp://127.0.0.1:{port}/f.bin")).content == b"one"
        start = time.monotonic()
        await c.aclose()
        assert time.monotonic() - start < 1.5  # was 2 s: the wait for the 221
        await asyncio.wait_for(quit_seen.wait(), 10)
    assert fake.commands[-1] == "QUIT"


async def test_idle_connection_closed_by_server_is_replaced() -> None:
    logins = 0

    async def send(dw: asyncio.StreamWriter) -> None:
        dw.write(b"payload")
        await dw.drain()

    async def script(r: asyncio.StreamReader, w: asyncio.StreamWriter, f: Fake) -> None:
        nonlocal logins
        logins += 1
        await serve_data(r, w, f, send, wait_quit=False)
        await asyncio.sleep(0.1)
        w.write(b"421 Timeout.\r\n")  # an idle timeout while the connection sits in the pool
        await w.drain()
        await asyncio.sleep(5)

    async with fake_server(script) as (port, fake), client() as c:
        assert (await c.fetch(f"ftp://127.0.0.1:{port}/f.bin")).content == b"payload"
        await asyncio.sleep(0.3)  # the 421 arrives while the connection is idle
        assert (await c.fetch(f"ftp://127.0.0.1:{port}/f.bin")).content == b"payload"
    assert logins == 2


async def test_reused_connection_dying_mid_command_is_retried_once() -> None:
    logins = 0

    async def send(dw: asyncio.StreamWriter) -> None:
        dw.write(b"payload")
        await dw.drain()

    async def script(r: asyncio.StreamReader, w: asyncio.StreamWriter, f: Fake) -> None:
        nonlocal logins
        logins += 1
        await serve_data(r, w, f, send, wait_quit=False)
        if logins == 1:
            await f.read(r)  # the reused connection's next command...
            w.write(b"421 Service not available, closing control connection.\r\n")  # ...meets a 421

    async with fake_server(script) as (port, fake), client() as c:
        assert (await c.fetch(f"ftp://127.0.0.1:{port}/f.bin")).content == b"payload"
        assert (await c.fetch(f"ftp://127.0.0.1:{port}/f.bin")).content == b"payload"
    assert logins == 2


async def test_listing_entry_limit(vs: Server) -> None:
    async with client(limits=Limits(max_entries=3)) as c:
        with pytest.raises(ProtocolError, match="more than 3 entries"):
            await c.fetch(vs.url("/pub/"))


async def test_port_when_eprt_refused() -> None:
    async def script(r: asyncio.StreamReader, w: asyncio.StreamWriter, f: Fake) -> None:
        await login(r, w, f)  # USER PASS PWD TYPE
        await f.read(r)  # SIZE
        w.write(b"502 no SIZE\r\n")
        await f.read(r)  # EPRT
        w.write(b"502 EPRT not understood\r\n")
        port_cmd = await f.read(r)  # PORT h1,h2,h3,h4,p1,p2
        nums = [int(x) for x in port_cmd.split(" ", 1)[1].split(",")]
        w.write(b"200 PORT ok\r\n")
        await f.read(r)  # RETR
        w.write(b"150 connecting\r\n")
        _, dw = await asyncio.open_connection(".".join(map(str, nums[:4])), nums[4] * 256 + nums[5])
        dw.write(b"active data")
        await dw.drain()
        dw.close()
        w.write(b"226 done\r\n")
        await f.read(r)

    async with fake_server(script) as (port, fake), client(ftp=FTPOptions(passive=False)) as c:
        r = await c.fetch(f"ftp://127.0.0.1:{port}/f.bin")
    assert r.content == b"active data"
    assert fake.commands[5].startswith("EPRT |1|127.0.0.1|")
    assert fake.commands[6].startswith("PORT 127,0,0,1,")


async def test_upload_without_rename_support_stores_directly() -> None:
    stored: dict[str, bytes] = {}

    async def stor(r: asyncio.StreamReader, w: asyncio.StreamWriter, f: Fake) -> None:
        port = await f.listen_data()
        await f.read(r)  # EPSV
        w.write(f"229 ok (|||{port}|)\r\n".encode())
        name = (await f.read(r)).split(" ", 1)[1]  # STOR name
        w.write(b"150 send it\r\n")
        assert f.data_conn is not None
        dr, _ = await f.data_conn
        stored[name] = await dr.read()
        w.write(b"226 stored\r\n")

    async def script(r: asyncio.StreamReader, w: asyncio.StreamWriter, f: Fake) -> None:
        w.write(b"220 fake\r\n")
        for reply in (b"331 pw\r\n", b"230 ok\r\n", b'257 "/" here\r\n', b"250 cwd\r\n", b"200 type\r\n"):
            await f.read(r)
            w.write(reply)
        await stor(r, w, f)
        await f.read(r)  # RNFR
        w.write(b"502 RNFR not implemented\r\n")
        await f.read(r)  # DELE the temporary file
        stored.pop(f.commands[-1].split(" ", 1)[1], None)
        w.write(b"250 deleted\r\n")
        await stor(r, w, f)
        await f.read(r)

    async with fake_server(script) as (port, fake), client() as c:
        await c.upload(f"ftp://u:p@127.0.0.1:{port}/dir/new.bin", b"x" * 100_000)
    assert stored == {"new.bin": b"x" * 100_000}
    verbs = [cmd.split(" ")[0] for cmd in fake.commands]
    assert verbs == ["USER", "PASS", "PWD", "CWD", "TYPE", "EPSV", "STOR", "RNFR", "DELE", "EPSV", "STOR",
                     "QUIT"]


async def test_abandoned_stream_frees_its_slot(srv: Server) -> None:
    srv_ensure_big(srv, 100 << 20)
    async with client(limits=Limits(per_host=1)) as c:
        async with c.open(srv.url("/pub/big.bin")) as body:
            async for _chunk in body:
                break  # stop after one chunk: ABOR, and the connection is in step again
        async with c.open(srv.url("/pub/blob.bin")) as unread:
            assert unread.size == (None if srv.kind in NO_SIZE else len(seed.blob()))  # closed unread
        async with asyncio.timeout(10):  # a leaked slot would block here (per_host=1)
            assert (await c.fetch(srv.url("/pub/hello.txt"))).content == seed.HELLO
    cmds = srv.commands()
    # one login: each abandoned transfer was aborted (ABOR, then NOOP to find the end of its
    # replies) and the same connection carried on. aioftp.Server drops the control connection
    # with a reset data connection and has no NOOP: each connection is dropped instead.
    assert cmds.count("USER anonymous") == (3 if srv.kind == "aioftp" else 1)
    assert cmds.count("ABOR") == 2
    if srv.kind != "aioftp":
        assert cmds[cmds.index("RETR big.bin") + 1:cmds.index("RETR big.bin") + 3] == ["ABOR", "NOOP"]


def srv_ensure_big(srv: Server, size: int) -> Path:
    return seed.ensure_big(Path(srv.ep.info["anon_root"]), size)


# -- stat and ranged reads (issue 10) -------------------------------------------------


def mtime(srv: Server, rel: str) -> datetime:
    return datetime.fromtimestamp(int((Path(srv.ep.info["anon_root"]) / rel).stat().st_mtime), UTC)


async def test_stat_file_without_transfer(srv: Server) -> None:
    async with client() as c:
        st = await c.stat(srv.url("/pub/blob.bin"))
    assert (st.kind, st.size, st.modified) == ("file", len(seed.blob()), mtime(srv, "pub/blob.bin"))
    cmds = srv.commands()
    # the fewest round trips each server allows; no data connection, no RETR
    if srv.kind == "vsftpd":  # FEAT has no MLST: TYPE I (SIZE counts binary bytes), then in one write
        # SIZE, MDTM and a CWD that tells a directory from a file (Twisted answers SIZE for both)
        assert cmds == [*srv.login, "CWD pub", "FEAT", "TYPE I", "SIZE blob.bin", "MDTM blob.bin", "CWD blob.bin",
                        "QUIT"]
    else:  # pyftpdlib lists MLST: one command gives kind, size and time
        assert cmds == [*srv.login, "CWD pub", "FEAT", "MLST blob.bin", "QUIT"]
        assert st.meta["ftp_facts"]["type"] == "file"
    if srv.kind == "vsftpd":
        assert b"Client \"127.0.0.1\", \"RETR" not in srv.raw() and b"OK DOWNLOAD" not in srv.raw()


async def test_stat_directory(srv: Server) -> None:
    async with client() as c:
        st = await c.stat(srv.url("/pub/sub"))  # no trailing slash: the server decides
        assert st.kind == "directory" and st.size is None
        slash = await c.stat(srv.url("/pub/sub/"))
        assert slash.kind == "directory"
        # the connection stood in pub/sub after the CWD probe: the next URL still works
        assert (await c.fetch(srv.url("/pub/hello.txt"))).content == seed.HELLO
    cmds = srv.commands()
    if srv.kind == "vsftpd":
        assert cmds[:10] == [*srv.login, "CWD pub", "FEAT", "TYPE I", "SIZE sub", "MDTM sub", "CWD sub",
                             "CWD /pub/sub"]
    else:  # MLST: FEAT lists it, or (aioftp) FEAT is refused and says nothing
        assert cmds[:len(srv.login) + 3] == [*srv.login, "CWD pub", "FEAT", "MLST sub"]
    # no transfer but the fetch at the end
    assert [x for x in cmds if x.startswith(("RETR", "LIST", "MLSD", "NLST", "EPSV"))] == ["EPSV", "RETR hello.txt"]
    assert cmds.count("USER anonymous") == 1


async def test_stat_missing_is_resource_not_found(srv: Server) -> None:
    async with client() as c:
        with pytest.raises(ResourceNotFound) as info:
            await c.stat(srv.url("/pub/nope.bin"))
    assert info.value.reply is not None and info.value.reply.startswith("550")
    assert "RETR nope.bin" not in srv.commands()


async def test_ranged_read_stops_with_abor(srv: Server) -> None:
    path = srv_ensure_big(srv, 100 << 20)
    want = path.read_bytes()[3 << 20:(3 << 20) + 100_000]
    async with client() as c:
        async with c.open(srv.url("/pub/big.bin"), offset=3 << 20, length=100_000) as body:
            assert body.size == 100_000 and body.resumable
            got = await body.read()
        assert got == want
        # the same control connection carries on: ABOR left it in step
        assert (await c.fetch(srv.url("/pub/blob.bin"), offset=10, length=20)).content == seed.blob()[10:30]
        assert (await c.fetch(srv.url("/pub/hello.txt"))).content == seed.HELLO
    cmds = srv.commands()
    assert cmds[:len(srv.login) + 7] == [*srv.login, "CWD pub", "TYPE I", "SIZE big.bin", "EPSV", f"REST {3 << 20}", "RETR big.bin",
                         "ABOR"]
    assert cmds.count("ABOR") == 2
    if srv.kind == "aioftp":
        # aioftp.Server closes the control connection when a data connection is reset under
        # a transfer, and answers NOOP with 502: each aborted connection is dropped, not reused
        assert cmds.count("USER anonymous") == 3
    else:
        assert cmds.count("USER anonymous") == 1 and cmds.count("NOOP") == 2


async def test_ranged_read_to_the_end_needs_no_abor(srv: Server) -> None:
    n = len(seed.blob())
    async with client() as c:
        r = await c.fetch(srv.url("/pub/blob.bin"), offset=n - 100, length=1000)
    assert r.content == seed.blob()[-100:]
    assert "ABOR" not in srv.commands()


# -- permission replies and refused temporary names (issue 11) --------------------------


@pytest.fixture
def pro(ftp_servers: dict[str, Server]) -> Server:
    s = ftp_servers["proftpd"]
    s.start()
    return s


async def test_permission_replies_are_access_denied(pro: Server) -> None:
    # ProFTPD says "550 x: Operation not permitted" / "550 x: Permission denied": both are
    # AccessDenied (exit 12) as the README promises, not ResourceNotFound (exit 11).
    async with client() as c:
        with pytest.raises(AccessDenied, match="Operation not permitted") as denied:
            await c.upload(pro.url("/pub/evil.bin"), b"x")
        assert denied.value.exit_code == 12 and denied.value.reply is not None
        assert denied.value.reply.startswith("550")
        with pytest.raises(AccessDenied, match="Permission denied") as unreadable:
            await c.fetch(pro.url("/secret.txt", "urltest:urltest-pw@"))
        assert unreadable.value.reply is not None and unreadable.value.reply.startswith("550")
        with pytest.raises(ResourceNotFound, match="No such file"):  # a missing file stays exit 11
            await c.fetch(pro.url("/pub/nope.bin"))
    stors = [x for x in pro.commands() if x.startswith("STOR")]
    assert len(stors) == 1 and stors[0].startswith("STOR .evil.bin.")  # no other name would help
    assert not (Path(pro.ep.info["anon_root"]) / "pub" / "evil.bin").exists()


async def test_upload_when_every_temporary_name_is_refused(caplog: pytest.LogCaptureFixture) -> None:
    # Pure-FTPd's answer to dot names is "553 Prohibited file name"; a server that refuses
    # both temporary patterns still gets the file, stored directly, and the log says so.
    stored: dict[str, bytes] = {}

    async def script(r: asyncio.StreamReader, w: asyncio.StreamWriter, f: Fake) -> None:
        w.write(b"220 fake\r\n")
        for reply in (b"331 pw\r\n", b"230 ok\r\n", b'257 "/" here\r\n', b"200 type\r\n"):
            await f.read(r)
            w.write(reply)
        while True:
            port = await f.listen_data()
            cmd = await f.read(r)
            if cmd == "QUIT":
                return
            w.write(f"229 ok (|||{port}|)\r\n".encode())
            name = (await f.read(r)).split(" ", 1)[1]  # STOR name
            if name.endswith(".part"):
                w.write(f"553 Prohibited file name: {name}\r\n".encode())
                continue
            w.write(b"150 send it\r\n")
            assert f.data_conn is not None
            dr, _ = await f.data_conn
            stored[name] = await dr.read()
            w.write(b"226 stored\r\n")

    caplog.set_level("INFO", logger="anyurl.ftp")
    async with fake_server(script) as (port, fake), client() as c:
        await c.upload(f"ftp://u:secret@127.0.0.1:{port}/new.bin", b"y" * 5000)
    assert stored == {"new.bin": b"y" * 5000}
    stors = [x for x in fake.commands if x.startswith("STOR")]
    assert [s.split(".", 1)[0] for s in stors] == ["STOR ", "STOR new", "STOR new"]
    assert stors[0].startswith("STOR .new.bin.") and stors[1].startswith("STOR new.bin.") and stors[2] == "STOR new.bin"
    warnings = [r for r in caplog.records if r.name == "anyurl.ftp"]
    assert [r.levelname for r in warnings] == ["WARNING"]
    assert "stored directly (not atomic)" in warnings[0].getMessage() and "secret" not in warnings[0].getMessage()


@pytest.mark.parametrize(("abor_replies", "reused"), [
    ([b"426 aborted", b"226 ABOR ok"], True),           # RFC 959
    ([b"226 Transfer complete", b"225 No transfer to ABOR"], True),  # the transfer had ended
    ([b"200 ABOR ok"], True),                            # non-standard: NOOP's 200 is the second one
    ([b"500 what?"], False),                             # anything else: drop, never guess
])
async def test_abor_replies_keep_the_connection_in_step(abor_replies: list[bytes], reused: bool) -> None:
    logins = 0
    payload = bytes(range(256)) * 400

    async def script(r: asyncio.StreamReader, w: asyncio.StreamWriter, f: Fake) -> None:
        nonlocal logins
        logins += 1
        w.write(b"220 fake\r\n")
        rest = 0
        while True:
            cmd = await f.read(r)
            verb = cmd.split(" ", 1)[0]
            if verb == "REST":
                rest = int(cmd.split(" ", 1)[1])
            if verb in ("", "QUIT"):
                w.write(b"221 bye\r\n")
                return
            if verb == "EPSV":
                port = await f.listen_data()
                w.write(f"229 ok (|||{port}|)\r\n".encode())
            elif verb == "RETR":
                w.write(b"150 here\r\n")
                assert f.data_conn is not None
                _, dw = await f.data_conn
                with contextlib.suppress(ConnectionError):
                    dw.write(payload[rest:])
                    await dw.drain()
                rest = 0
                if cmd == "RETR whole.bin":
                    dw.close()
                    w.write(b"226 done\r\n")
            elif verb == "ABOR":
                w.write(b"".join(x + b"\r\n" for x in abor_replies))
            else:
                w.write({"USER": b"331 pw", "PASS": b"230 ok", "PWD": b'257 "/"', "TYPE": b"200 ok",
                         "SIZE": b"213 %d" % len(payload), "REST": b"350 ok", "NOOP": b"200 NOOP ok"}
                        .get(verb, b"502 no") + b"\r\n")

    async with fake_server(script) as (port, fake), client() as c:
        part = await c.fetch(f"ftp://127.0.0.1:{port}/part.bin", offset=5, length=10)
        assert part.content == payload[5:15]
        whole = await c.fetch(f"ftp://127.0.0.1:{port}/whole.bin")
        assert whole.content == payload  # the next reply read is this RETR's, not a leftover
    assert logins == (1 if reused else 2)
    assert fake.commands[fake.commands.index("RETR part.bin") + 1:][:2] == ["ABOR", "NOOP"]

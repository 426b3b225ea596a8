"""LIST lines of real servers in shapes the old parser dropped (issue 25 item 1). ProFTPD's
DirFakeUser/DirFakeGroup (fixtures/servers/proftpd.py) make it list /owners with a Windows
domain's owner and group, "maxm Domain Users", as servers joined to a domain do."""

from __future__ import annotations

import asyncio
import ftplib
import shutil
from pathlib import Path

from fixtures.launcher import Launcher

from anyurl import Client, Timeouts
from anyurl.handlers.ftp import FTPOptions


def _raw_list(host: str, port: int, path: str) -> list[str]:
    lines: list[str] = []
    with ftplib.FTP() as f:
        f.connect(host, port, timeout=30)
        f.login()
        f.cwd(path)
        f.retrlines("LIST", lines.append)
    return lines


async def test_proftpd_owner_and_group_with_spaces(servers: Launcher) -> None:
    ep = servers.get("proftpd")
    top = Path(ep.info["anon_root"]) / "owners"
    (top / "sub dir").mkdir(parents=True, exist_ok=True)
    (top / "report 2024.pdf").write_bytes(b"x" * 1234)
    try:
        await _check_owners(ep.host, ep.port)
    finally:  # the server is the session's: leave its tree as other tests expect it
        shutil.rmtree(top, ignore_errors=True)


async def _check_owners(host: str, port: int) -> None:
    raw = await asyncio.to_thread(_raw_list, host, port, "owners")
    assert all(" maxm     Domain Users " in line for line in raw), raw  # the server sends the awkward shape
    url = f"ftp://{host}:{port}/owners/"
    want = [("report 2024.pdf", "file", 1234), ("sub dir", "directory", None)]
    for mlsd in (False, True):  # LIST (what the issue saw) and MLSD (preferred where offered) agree
        async with Client(ftp=FTPOptions(use_mlsd=mlsd), timeouts=Timeouts(connect=10, read=10, total=60),
                          use_netrc=False) as c:
            r = await c.fetch(url)
        assert r.entries is not None
        assert sorted((e.name, e.kind, e.size) for e in r.entries) == want, mlsd
        assert r.meta["listing"] == "ftp_listing"
        assert all(e.modified is not None for e in r.entries)

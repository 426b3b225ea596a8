"""FTP servers' odd replies (issue 25 item 6), against the real servers that give them:
Twisted's FTP server (no REST, SIZE answered for directories) and ProFTPD (MLST of a
symlink describes the link)."""

from __future__ import annotations

import pytest
from fixtures.launcher import Endpoint, Launcher
from fixtures.servers import _ftp_seed as seed
from fixtures.servers import twisted_ftp

from anyurl.client import Client, Timeouts


@pytest.fixture(scope="module")
def twisted(servers: Launcher) -> Endpoint:
    return servers.get("twisted_ftp")


@pytest.fixture(scope="module")
def proftpd(servers: Launcher) -> Endpoint:
    return servers.get("proftpd")


def client() -> Client:
    return Client(timeouts=Timeouts(connect=10, read=10), use_netrc=False)


def url(ep: Endpoint, rest: str) -> str:
    return f"ftp://{ep.host}:{ep.port}{rest}"


async def test_ranged_read_without_rest_skips_on_the_client(twisted: Endpoint) -> None:
    # Twisted answers REST with "502 Command 'REST' not implemented": the read used to fail
    # with ProtocolError; now the file comes from its start and the client drops the offset,
    # as it does when an HTTP server ignores Range.
    async with client() as c:
        r = await c.fetch(url(twisted, "/pub/hello.txt"), offset=6)
        assert r.content == seed.HELLO[6:]
        assert r.meta["range_ignored"] is True
        part = await c.fetch(url(twisted, "/pub/blob.bin"), offset=1000, length=300)
        assert part.content == seed.blob()[1000:1300]
        whole = await c.fetch(url(twisted, "/pub/hello.txt"))  # the same connection, in step
        assert whole.content == seed.HELLO
    cmds = twisted_ftp.commands(twisted.info["log"])
    assert cmds.count("REST 6") == 1 and not any(c.startswith("REST 1000") for c in cmds)  # asked once


async def test_stat_of_a_directory_where_size_answers(twisted: Endpoint) -> None:
    # Twisted answers "SIZE pub" with "213 4096": stat said "file, 4096 bytes".
    async with client() as c:
        st = await c.stat(url(twisted, "/pub"))
        assert (st.kind, st.size) == ("directory", None)
        st = await c.stat(url(twisted, "/pub/hello.txt"))  # a file still is one
        assert (st.kind, st.size) == ("file", len(seed.HELLO))
        assert (await c.fetch(url(twisted, "/pub/hello.txt"))).content == seed.HELLO


async def test_stat_of_a_symlink_gives_the_size_of_its_file(proftpd: Endpoint) -> None:
    # ProFTPD's MLST of pub/link-to-hello says "size=9;type=file;UNIX.mode=0777": the link's
    # own size; SIZE gives the file's.
    async with client() as c:
        st = await c.stat(url(proftpd, "/pub/link-to-hello"))
        assert (st.kind, st.size) == ("file", len(seed.HELLO))
        st = await c.stat(url(proftpd, "/pub/hello.txt"))
        assert (st.kind, st.size) == ("file", len(seed.HELLO))

"""``Limits.per_host`` means the same for every scheme: at most that many connections
to one server at once. A counting TCP relay in front of each real server sees how
many the client opens; 6 concurrent requests with ``per_host=2`` must never hold
more than 2 (and must reach 2, or the test shows nothing). Also: PoolTimeout after
``Timeouts.pool``, idle reuse, and the DEBUG log of commands (passwords masked).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import subprocess
import sys
from collections.abc import AsyncIterator

import pytest
from fixtures.launcher import Endpoint, Launcher

import anyurl
from anyurl import Limits, PoolTimeout, Timeouts
from anyurl.handlers.http import HTTPOptions


class Relay:
    """Forwards 127.0.0.1:port to a server and counts the connections open at once."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.open = 0
        self.most = 0
        self.opened = 0
        self.port = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> Relay:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        assert self._server is not None
        self._server.close()
        for t in list(self._tasks):
            t.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        counted = False
        up_w: asyncio.StreamWriter | None = None

        def uncount() -> None:
            nonlocal counted
            if counted:
                counted = False
                self.open -= 1

        async def pump(r: asyncio.StreamReader, w: asyncio.StreamWriter, from_client: bool) -> None:
            try:
                while data := await r.read(1 << 16):
                    w.write(data)
                    await w.drain()
            except OSError:
                pass
            finally:
                if from_client:
                    uncount()
                with contextlib.suppress(OSError, RuntimeError):
                    w.write_eof()

        try:
            # A connection counts from its accept to the client's FIN. Wait a moment before
            # counting it: a FIN the client sent before this SYN may not be read yet.
            await asyncio.sleep(0.02)
            counted = True
            self.open += 1
            self.opened += 1
            self.most = max(self.most, self.open)
            up_r, up_w = await asyncio.open_connection(*self.target)
            async with asyncio.timeout(60):
                await asyncio.gather(pump(reader, up_w, True), pump(up_r, writer, False))
        except (OSError, TimeoutError, asyncio.CancelledError):
            pass
        finally:
            uncount()
            for w in (writer, up_w):
                if w is not None:
                    w.close()
                    with contextlib.suppress(OSError, asyncio.CancelledError):
                        await w.wait_closed()
            self._tasks.discard(task)


@contextlib.asynccontextmanager
async def relay(ep: Endpoint, port: int | None = None) -> AsyncIterator[Relay]:
    r = await Relay(ep.host, port or ep.port).start()
    try:
        yield r
    finally:
        await r.stop()


def url_for(scheme: str, servers: Launcher, port: int) -> tuple[str, bytes]:
    """A URL on the relay for *scheme*, and bytes its content holds."""
    if scheme == "ftp":
        return f"ftp://127.0.0.1:{port}/pub/hello.txt", b"hello"
    if scheme == "gopher":
        return f"gopher://127.0.0.1:{port}/0/hello.txt", b"ello"
    if scheme == "nntp":
        inn = servers.get("inn")
        return f"nntp://127.0.0.1:{port}/{inn.info['group']}/1", b"Message-ID"
    if scheme == "wais":
        return f"wais://127.0.0.1:{port}/Default?x", b""
    return f"http://127.0.0.1:{port}/hello.txt", b"hello over http"


SERVER_OF = {"ftp": "vsftpd", "gopher": "gophernicus", "nntp": "inn", "wais": "yaz_ztest", "http": "nginx"}


@pytest.mark.parametrize("scheme", list(SERVER_OF))
async def test_per_host_bounds_concurrent_connections(scheme: str, servers: Launcher) -> None:
    ep = servers.get(SERVER_OF[scheme])
    async with relay(ep) as r, anyurl.Client(limits=Limits(per_host=2)) as client:
        url, expect = url_for(scheme, servers, r.port)
        results = await asyncio.gather(*(client.fetch(url) for _ in range(6)))
    assert all(expect in res.content for res in results)
    # the bound is what is promised; how many overlap below it depends on the loop's timing
    assert 1 <= r.most <= 2, f"{scheme}: {r.most} connections open at once with per_host=2"


async def test_telnet_sessions_hold_a_slot_until_closed(servers: Launcher) -> None:
    ep = servers.get("telnetd")
    async with relay(ep) as r, anyurl.Client(limits=Limits(per_host=2),
                                             timeouts=Timeouts(pool=0.3)) as client:
        url = f"telnet://127.0.0.1:{r.port}/"
        a = await client.connect(url)
        b = await client.connect(url)
        with pytest.raises(PoolTimeout, match=rf"waited 0.3 s for a free connection to 127.0.0.1:{r.port}"):
            await client.connect(url)
        await a.close()
        c = await client.connect(url)
        await b.close()
        await c.close()
    assert r.most == 2


async def test_a_busy_connection_is_waited_for_past_the_pool_timeout(servers: Launcher) -> None:
    # one connection, five requests of 0.3 s each: the last waits ~1.2 s for it, but it keeps
    # coming free, so Timeouts.pool (0.6 s) counts from the last time it did
    ep = servers.get("nginx")
    async with relay(ep) as r, anyurl.Client(limits=Limits(per_host=1), timeouts=Timeouts(pool=0.6),
                                             http=HTTPOptions(pipeline=0)) as client:  # (each waits its turn)
        url = f"http://127.0.0.1:{r.port}/pause"
        results = await asyncio.gather(*(client.fetch(url) for _ in range(5)))
    assert [res.content for res in results] == [b"after a pause\n"] * 5
    assert r.most == 1


async def test_ftp_pool_timeout_then_reuse(servers: Launcher) -> None:
    ep = servers.get("vsftpd")
    async with relay(ep) as r, anyurl.Client(limits=Limits(per_host=1), timeouts=Timeouts(pool=0.3)) as client:
        url = f"ftp://127.0.0.1:{r.port}/pub/hello.txt"
        async with client.open(url) as stream:  # holds the one connection until read or closed
            with pytest.raises(PoolTimeout) as info:
                await client.fetch(url)
            assert f"waited 0.3 s for a free connection to 127.0.0.1:{r.port}" in str(info.value)
            assert info.value.exit_code == 18
            assert b"hello" in b"".join([c async for c in stream])
        again = await client.fetch(url)
        assert b"hello" in again.content
    assert r.opened == 1  # the second fetch reused the idle control connection


async def test_commands_and_connections_are_logged_with_the_password_masked(
        servers: Launcher, caplog: pytest.LogCaptureFixture) -> None:
    ep = servers.get("vsftpd")
    user, password = ep.info["user"], ep.info["password"]
    caplog.set_level(logging.DEBUG, logger="anyurl")
    async with anyurl.Client() as client:
        await client.fetch(f"ftp://{user}:{password}@{ep.host}:{ep.port}/")
        await client.fetch(f"ftp://{user}:{password}@{ep.host}:{ep.port}/")
    ftp = [r.getMessage() for r in caplog.records if r.name == "anyurl.ftp"]
    sent = [m.split(" > ", 1)[1] for m in ftp if " > " in m]
    assert sent[:2] == [f"USER {user}", "PASS <password>"]
    assert any(m.split(" < ", 1)[1].startswith("230") for m in ftp if " < " in m)
    assert any("opened connection" in m for m in ftp) and any("reusing idle connection" in m for m in ftp)
    assert all(password not in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("flag_first", [True, False], ids=["-v URL", "get URL --verbose"])
def test_cli_verbose_prints_the_dialogue_on_stderr(servers: Launcher, flag_first: bool) -> None:
    ep = servers.get("vsftpd")
    url = f"ftp://{ep.host}:{ep.port}/pub/hello.txt"
    argv = ["-v", url] if flag_first else ["get", url, "--verbose"]
    proc = subprocess.run([sys.executable, "-m", "anyurl", *argv], capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert b"hello" in proc.stdout
    lines = proc.stderr.decode().splitlines()
    assert f"* anyurl.ftp {ep.host}:{ep.port} > RETR hello.txt" in lines
    assert any(line.startswith(f"* anyurl.ftp {ep.host}:{ep.port} < 226") for line in lines)
    assert f"* anyurl.ftp {ep.host}:{ep.port} > PASS <password>" in lines
    quiet = subprocess.run([sys.executable, "-m", "anyurl", url], capture_output=True, timeout=60)
    assert b"RETR" not in quiet.stderr

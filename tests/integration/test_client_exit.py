"""A Client left on an event loop that was stopped but never closed (no asyncio.run, no
aclose): at interpreter exit its pooled connections are closed politely (QUIT reaches the
server) and nothing is left for the collector to warn about. They were left to the garbage
collector: "ResourceWarning: unclosed transport" and "unclosed <socket.socket ...>"."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from fixtures.launcher import Endpoint, Launcher
from fixtures.servers import _ftp_seed as seed
from fixtures.servers import nginx, vsftpd

SLOW_CALLBACK = re.compile(r"Executing <.*> took \d+\.\d+ seconds$")

SCRIPT = """
import asyncio, sys
import uvloop
from anyurl import Client

def main():
    client = Client()
    loop = {make}()
    sys.stdout.write(loop.run_until_complete(client.fetch(sys.argv[1])).content.decode())
    {end}

main()
"""


@pytest.fixture()
def ftp(servers: Launcher) -> Endpoint:
    return servers.get("vsftpd")


@pytest.mark.parametrize("make", ["asyncio.new_event_loop", "uvloop.new_event_loop"])
@pytest.mark.parametrize("end", ["pass", "loop.stop()"])
def test_client_on_a_loop_never_closed_leaves_no_resource_warning(ftp: Endpoint, end: str, make: str) -> None:
    mark = os.path.getsize(ftp.info["log"])
    proc = subprocess.run([sys.executable, "-X", "dev", "-W", "error::ResourceWarning",
                           "-c", SCRIPT.format(end=end, make=make), ftp.url("ftp", "/pub/hello.txt")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == seed.HELLO.decode()
    # the loop and its self-pipe (AF_UNIX) are the caller's to close, and asyncio says so; no
    # connection of the Client is left: no transport, stream or TCP socket
    for leak in ("unclosed transport", "StreamWriter", "family=2", "family=10"):
        assert leak not in proc.stderr, proc.stderr
    assert "RuntimeWarning" not in proc.stderr, proc.stderr
    logged = vsftpd.commands_through(ftp.info["log"], mark)
    assert "RETR hello.txt" in logged and logged[-1] == "QUIT", logged



@pytest.mark.parametrize("server", ["vsftpd", "nginx"])
def test_client_on_a_loop_closed_without_shutdown_leaves_no_resource_warning(servers: Launcher, server: str) -> None:
    # loop.close() with no shutdown_asyncgens() first: the closed loop can run no goodbye, so at
    # exit the pooled sockets are closed without it. They were left to the collector: "unclosed
    # transport", "unclosed <socket.socket ...>" and StreamWriter's "loop is closed".
    # (asyncio's loop only: uvloop's loop.close() closes them itself, warning as it does.)
    ep = servers.get(server)
    url = ep.url("ftp", "/pub/hello.txt") if server == "vsftpd" else ep.url("http", "/hello.txt")
    proc = subprocess.run([sys.executable, "-X", "dev", "-W", "error::ResourceWarning",
                           "-c", SCRIPT.format(end="loop.close()", make="asyncio.new_event_loop"), url],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (seed.HELLO if server == "vsftpd" else nginx.HELLO).decode()
    assert _warnings(proc.stderr) == [], proc.stderr


def _warnings(stderr: str) -> list[str]:
    """stderr's lines but asyncio debug mode's note on a callback slower than 0.1 s, which a
    loaded machine produces (it says nothing about what this test looks for)."""
    return [line for line in stderr.splitlines() if not SLOW_CALLBACK.match(line)]

"""Client Retry and the CLI's --retry at their end: a name the resolver says does not
exist is final at once (no retry), a resolver that cannot answer now (EAI_AGAIN) is
tried again, and an error after several tries carries them (the CLI says how many were made)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixtures.launcher import Launcher
from fixtures.servers import _ftp_seed as seed

from anyurl.client import Client, Retry, Timeouts
from anyurl.errors import ConnectError

ANYURL = str(Path(sys.executable).parent / "anyurl")
ENV = {**os.environ, "COLUMNS": "120", "NO_COLOR": "1"}


@pytest.fixture
def refused_port() -> Iterator[int]:
    """A loopback port bound but not listening: every connect is refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield s.getsockname()[1]


@pytest.mark.parametrize("scheme", ["ftp", "http", "gopher"])
async def test_unknown_name_is_not_retried(scheme: str) -> None:
    url = f"{scheme}://no-such-host.invalid/x"
    async with Client(retry=Retry(attempts=4, backoff=5.0), timeouts=Timeouts(connect=10)) as c:
        start = time.monotonic()
        with pytest.raises(ConnectError) as info:
            await c.fetch(url)
        assert time.monotonic() - start < 3  # a retry would have slept 5 s first
    text = str(info.value)
    assert text.startswith(url + ": ") and "Name or service not known" in text and "tries" not in text, text


def test_cli_unknown_name_is_not_retried() -> None:
    url = "ftp://no-such-host.invalid/x"
    start = time.monotonic()
    proc = subprocess.run([ANYURL, "get", "--retry", "3", "--retry-delay", "5", "-v", url],
                          capture_output=True, timeout=60, env=ENV)
    assert time.monotonic() - start < 4
    assert proc.returncode == ConnectError.exit_code
    err = proc.stderr.decode()
    assert "retrying" not in err and "Traceback" not in err, err
    assert err.splitlines()[-1] == f"anyurl: {url}: cannot connect to no-such-host.invalid:21: Name or service not known"


# The resolver answers EAI_AGAIN for flaky.test (the first *fails* lookups, or always): a
# fault a real resolver gives only when its servers are unreachable. The CLI runs on
# asyncio's own loop, whose lookups go through socket.getaddrinfo.
_FLAKY = """
import socket, sys
real = socket.getaddrinfo
fails = int(sys.argv[1])
calls = 0
def getaddrinfo(host, *args, **kwargs):
    global calls
    if host == "flaky.test":
        calls += 1
        if fails < 0 or calls <= fails:
            raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
        host = "127.0.0.1"
    return real(host, *args, **kwargs)
socket.getaddrinfo = getaddrinfo
from anyurl.cli.commands import main
sys.exit(main(sys.argv[2:]))
"""


def flaky(fails: int, *args: str) -> subprocess.CompletedProcess[bytes]:
    # No early connect: its lookup (in a thread, at start-up) would take one of the counted failures.
    return subprocess.run([sys.executable, "-c", _FLAKY, str(fails), *args], capture_output=True, timeout=60,
                          env={**ENV, "ANYURL_LOOP": "asyncio", "ANYURL_EARLY_CONNECT": "0"})


def test_cli_temporary_resolver_failure_is_retried(servers: Launcher, tmp_path: Path) -> None:
    ep = servers.get("vsftpd")
    url = f"ftp://flaky.test:{ep.port}/pub/blob.bin"
    out = tmp_path / "blob.bin"
    proc = flaky(2, "get", "--retry", "3", "--retry-delay", "0.05", "-v", "-o", str(out), url)
    assert proc.returncode == 0, proc.stderr.decode()
    assert out.read_bytes() == seed.blob()
    assert proc.stderr.decode().count("Temporary failure in name resolution") == 2

    proc = flaky(-1, "get", "--retry", "2", "--retry-delay", "0.05", url)
    assert proc.returncode == ConnectError.exit_code
    assert proc.stderr.decode().splitlines() == [
        f"anyurl: {url}: cannot connect to flaky.test:{ep.port}: Temporary failure in name resolution "
        "(after 3 tries)"]


async def test_exhausted_retries_carry_their_tries(refused_port: int) -> None:
    # the library leaves the message alone: the tries are in the error's history
    url = f"ftp://127.0.0.1:{refused_port}/x"
    async with Client(retry=Retry(attempts=3, backoff=0.01)) as c:
        with pytest.raises(ConnectError) as info:
            await c.fetch(url)
        assert str(info.value) == f"{url}: cannot connect to 127.0.0.1:{refused_port}: Connection refused"
        history = info.value.history
        assert len(history) == 3 and history[-1].error is info.value
        assert [a.delay for a in history] == [0.01, 0.02, None]
        assert all(str(a.error) == str(info.value) for a in history)
        with pytest.raises(ConnectError) as info:  # no retry: nothing to count
            await c.fetch(url, retry=Retry(attempts=1))
        assert str(info.value).endswith("Connection refused") and info.value.history == ()


def test_cli_exhausted_retries_say_how_many_tries(refused_port: int) -> None:
    url = f"gopher://127.0.0.1:{refused_port}/0x"
    proc = subprocess.run([ANYURL, "get", "--retry", "2", "--retry-delay", "0.01", url],
                          capture_output=True, timeout=60, env=ENV)
    assert proc.returncode == ConnectError.exit_code
    assert proc.stderr.decode().splitlines() == [
        f"anyurl: {url}: cannot connect to 127.0.0.1:{refused_port}: Connection refused (after 3 tries)"]

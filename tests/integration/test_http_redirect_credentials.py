"""Custom ``Authorization`` and ``Cookie`` headers never follow a redirect to another origin.

``HTTPOptions(headers={"Authorization": ..., "Cookie": ...})`` (client-wide or per request)
was sent on every hop, so a redirect to another port or scheme handed the credentials to
a server they were not meant for (curl's CVE-2018-1000007 and CVE-2022-27776). nginx's
second origin (another port), its https listener and the name "localhost" for the same
server (another host) log the headers each request carried.
Checked on both HTTP paths (the lean one and aiohttp).
"""

from __future__ import annotations

import asyncio
import re
import ssl

import pytest
from fixtures.launcher import Endpoint, Launcher

from anyurl import Client
from anyurl.handlers.http import HTTPOptions

SECRET = {"Authorization": "Bearer s3cr3t-token", "Cookie": "session=s3cr3t-cookie"}
LINE = re.compile(r'(?P<port>\d+) "(?P<request>[^"]*)" auth="(?P<auth>[^"]*)" cookie="(?P<cookie>[^"]*)"')


@pytest.fixture(scope="module")
def nginx(servers: Launcher) -> Endpoint:
    return servers.get("nginx")


def _read_from(path: str, start: int) -> str:
    with open(path, "rb") as f:
        f.seek(start)
        return f.read().decode()


async def _logged(path: str, start: int, expect: int) -> list[dict[str, str]]:
    """The creds-log lines written since *start* (nginx logs after the reply: allow it a moment)."""
    found: list[dict[str, str]] = []
    for _ in range(200):
        found = [m.groupdict() for m in map(LINE.match, _read_from(path, start).splitlines()) if m]
        if len(found) >= expect:
            break
        await asyncio.sleep(0.02)
    return found


@pytest.mark.parametrize("lean", [True, False])
@pytest.mark.parametrize("per_request", [False, True])
async def test_credentials_headers_do_not_follow_a_redirect_to_another_origin(
        nginx: Endpoint, lean: bool, per_request: bool) -> None:
    ctx = ssl.create_default_context(cafile=nginx.info["ca"])
    log = nginx.info["creds_log"]
    start = len(_read_from(log, 0).encode())
    base = f"http://{nginx.host}:{nginx.port}"
    client_opts = HTTPOptions(ssl_context=ctx, lean=lean, headers={} if per_request else SECRET)
    async with Client(http=client_opts, use_netrc=False) as c:
        for path in ("/to-other-port", "/to-other-scheme", "/to-other-host", "/redirect"):
            opts = HTTPOptions(ssl_context=ctx, lean=lean, headers=SECRET) if per_request else None
            r = await c.fetch(base + path, options=opts)
            assert r.content == b"hello over http\n"
    lines = await _logged(log, start, 8)
    got = [(x["port"], x["request"].split(" ")[1], x["auth"], x["cookie"]) for x in lines]
    auth, cookie = SECRET["Authorization"], SECRET["Cookie"].replace('"', "")
    port, other, tls = str(nginx.port), str(nginx.info["other_port"]), str(nginx.info["tls_port"])
    assert got == [
        (port, "/to-other-port", auth, cookie), (other, "/hello.txt", "-", "-"),  # another port
        (port, "/to-other-scheme", auth, cookie), (tls, "/hello.txt", "-", "-"),  # another scheme and port
        (port, "/to-other-host", auth, cookie), (port, "/hello.txt", "-", "-"),  # another host name
        (port, "/redirect", auth, cookie), (port, "/hello.txt", auth, cookie),  # the same origin keeps them
    ]

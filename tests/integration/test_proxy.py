"""Proxies: http, https (CONNECT) and ftp:// through a real squid (fixtures/servers/squid.py).

Each test asserts the bytes that arrived and what squid logged having relayed
(method, URL, status, body bytes from the origin); bypasses are checked by
squid's log staying empty and the origin's own log showing the request.
ftp URLs are fetched by squid's FTP client from the suite's vsftpd, whose
command log shows the retrieval.
"""

from __future__ import annotations

import asyncio
import base64
import os
import ssl
import sys
import time
import uuid
from pathlib import Path

import pytest
from fixtures.launcher import Endpoint, Launcher
from fixtures.servers import _ftp_seed as ftp_seed
from fixtures.servers import squid as squid_module
from fixtures.servers import vsftpd as vsftpd_module
from tests.integration.test_per_host import relay
from tests.procs import arun

from anyurl import Client, ConfigurationError, ConnectError, Limits, PoolTimeout, ResourceNotFound, Timeouts
from anyurl.handlers.http import HTTPOptions

BIG = os.urandom(1 << 20) * 8  # 8 MiB: more than the socket buffers hold for an unread body
PROXY_VARS = ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "ftp_proxy", "FTP_PROXY",
              "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_VARS:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def squid(servers: Launcher) -> Endpoint:
    return servers.get("squid")


@pytest.fixture(scope="module")
def nginx(servers: Launcher) -> Endpoint:
    return servers.get("nginx")


@pytest.fixture(scope="module")
def vsftpd(servers: Launcher) -> Endpoint:
    return servers.get("vsftpd")


def proxy_url(squid: Endpoint) -> str:
    return f"http://{squid.host}:{squid.port}"


class Log:
    """Lines appended to a log file since this object was made."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.start = os.path.getsize(path) if os.path.exists(path) else 0

    def text(self) -> str:
        with open(self.path, "rb") as f:
            f.seek(self.start)
            return f.read().decode("utf-8", "replace")


class SquidLog(Log):
    async def requests(self, expect: int) -> list[squid_module.Logged]:
        """The relayed requests, waiting (bounded) until *expect* are logged (squid logs at the end)."""
        found: list[squid_module.Logged] = []
        for _ in range(100):
            found = squid_module.requests(self.path, self.start)
            if len(found) >= expect:
                return found
            await asyncio.sleep(0.02)
        return found


@pytest.fixture
def squid_log(squid: Endpoint) -> SquidLog:
    return SquidLog(squid.info["access_log"])


@pytest.fixture
def nginx_log(nginx: Endpoint) -> Log:
    return Log(nginx.info["access_log"])


async def logged_in(log: Log, needle: str) -> bool:
    for _ in range(100):
        if needle in log.text():
            return True
        await asyncio.sleep(0.02)
    return False


# -- http and https -------------------------------------------------------------


async def test_http_proxy_from_environment(monkeypatch: pytest.MonkeyPatch, squid: Endpoint, nginx: Endpoint,
                                           squid_log: SquidLog, nginx_log: Log) -> None:
    monkeypatch.setenv("http_proxy", proxy_url(squid))
    target = f"http://{nginx.host}:{nginx.port}/dir/blob.bin"
    async with Client(use_netrc=False) as c:
        r = await c.fetch(target)
    assert r.content == bytes(range(256)) * 20
    assert r.meta["proxy"] == proxy_url(squid)
    [req] = await squid_log.requests(1)
    assert (req.method, req.url, req.status, req.body) == ("GET", target, 200, 5120)
    assert await logged_in(nginx_log, '"GET /dir/blob.bin HTTP/1.1" 200 5120')


async def test_upper_case_http_proxy_is_ignored_but_https_proxy_is_read(
        monkeypatch: pytest.MonkeyPatch, squid: Endpoint, nginx: Endpoint, squid_log: SquidLog) -> None:
    # HTTP_PROXY can come from a request's "Proxy:" header under CGI: curl ignores it too
    monkeypatch.setenv("HTTP_PROXY", proxy_url(squid))
    monkeypatch.setenv("HTTPS_PROXY", proxy_url(squid))
    tls = HTTPOptions(ssl_context=ssl.create_default_context(cafile=nginx.info["ca"]))
    async with Client(use_netrc=False, http=tls) as c:
        plain = await c.fetch(f"http://{nginx.host}:{nginx.port}/hello.txt")
        secure = await c.fetch(f"https://127.0.0.1:{nginx.info['tls_port']}/hello.txt")
    assert plain.content == secure.content == b"hello over http\n"
    assert "proxy" not in plain.meta and secure.meta["proxy"] == proxy_url(squid)
    [req] = await squid_log.requests(1)
    assert (req.method, req.url, req.result) == ("CONNECT", f"127.0.0.1:{nginx.info['tls_port']}", "TCP_TUNNEL")


async def test_https_through_proxy_is_a_connect_tunnel(squid: Endpoint, nginx: Endpoint, squid_log: SquidLog,
                                                       nginx_log: Log) -> None:
    tls = HTTPOptions(ssl_context=ssl.create_default_context(cafile=nginx.info["ca"]))
    async with Client(use_netrc=False, proxy=proxy_url(squid), http=tls, trust_env=False) as c:
        r = await c.fetch(f"https://127.0.0.1:{nginx.info['tls_port']}/dir/blob.bin")
    assert r.content == bytes(range(256)) * 20
    [req] = await squid_log.requests(1)
    assert req.method == "CONNECT" and req.status == 200
    assert req.url == f"127.0.0.1:{nginx.info['tls_port']}"
    assert req.sent > 5120  # the whole TLS stream went through the tunnel
    assert await logged_in(nginx_log, '"GET /dir/blob.bin HTTP/1.1" 200 5120')


async def test_redirect_through_proxy_logs_both_hops(squid: Endpoint, nginx: Endpoint,
                                                     squid_log: SquidLog) -> None:
    base = f"http://{nginx.host}:{nginx.port}"
    async with Client(use_netrc=False, proxy=proxy_url(squid)) as c:
        r = await c.fetch(base + "/redirect")
    assert r.content == b"hello over http\n"
    reqs = await squid_log.requests(2)
    assert [(x.url, x.status) for x in reqs] == [(base + "/redirect", 301), (base + "/hello.txt", 200)]


async def test_ranged_read_through_proxy(squid: Endpoint, nginx: Endpoint, squid_log: SquidLog,
                                         nginx_log: Log) -> None:
    async with Client(use_netrc=False, proxy=proxy_url(squid)) as c, \
            c.open(f"http://{nginx.host}:{nginx.port}/dir/blob.bin", offset=100, length=50) as body:
        data = await body.read()
    assert data == (bytes(range(256)) * 20)[100:150]
    [req] = await squid_log.requests(1)
    assert req.status == 206
    assert await logged_in(nginx_log, '"bytes=100-149"')


async def test_no_proxy_bypasses_by_host(monkeypatch: pytest.MonkeyPatch, squid: Endpoint, nginx: Endpoint,
                                         squid_log: SquidLog, nginx_log: Log) -> None:
    monkeypatch.setenv("http_proxy", proxy_url(squid))
    monkeypatch.setenv("no_proxy", f"example.org, 127.0.0.1:{nginx.port}")
    async with Client(use_netrc=False) as c:
        r = await c.fetch(f"http://{nginx.host}:{nginx.port}/hello.txt")
    assert r.content == b"hello over http\n" and "proxy" not in r.meta
    assert await logged_in(nginx_log, '"GET /hello.txt HTTP/1.1" 200')
    await asyncio.sleep(0.2)  # squid would have logged by now
    assert await squid_log.requests(0) == []


async def test_client_no_proxy_overrides_environment(monkeypatch: pytest.MonkeyPatch, squid: Endpoint,
                                                     nginx: Endpoint, squid_log: SquidLog) -> None:
    monkeypatch.setenv("http_proxy", proxy_url(squid))
    monkeypatch.setenv("no_proxy", "*")
    target = f"http://{nginx.host}:{nginx.port}/hello.txt"
    async with Client(use_netrc=False, no_proxy="example.org") as c:
        await c.fetch(target)
    async with Client(use_netrc=False, trust_env=False) as c:  # the environment is not read at all
        await c.fetch(target)
    assert [x.url for x in await squid_log.requests(1)] == [target]


async def test_dead_proxy_is_a_connect_error_naming_it(nginx: Endpoint) -> None:
    async with Client(use_netrc=False, proxy="127.0.0.1:9") as c:
        with pytest.raises(ConnectError, match="cannot connect to proxy 127.0.0.1:9: "):
            await c.fetch(f"http://{nginx.host}:{nginx.port}/hello.txt")


async def test_unusable_proxy_setting_is_a_configuration_error(nginx: Endpoint) -> None:
    async with Client(use_netrc=False, proxy="socks5://127.0.0.1:1080") as c:
        with pytest.raises(ConfigurationError, match="only http:// and https:// proxies"):
            await c.fetch(f"http://{nginx.host}:{nginx.port}/hello.txt")


async def test_proxy_credentials_go_as_proxy_authorization(squid: Endpoint, nginx: Endpoint, vsftpd: Endpoint,
                                                            squid_log: SquidLog) -> None:
    # on the request itself for http and ftp (sent to the proxy in absolute form), on the
    # CONNECT for https; never in the URL squid is asked for (squid checks none: its log
    # shows what arrived, the value %-escaped)
    auth_log = Log(squid.info["auth_log"])
    tls = HTTPOptions(ssl_context=ssl.create_default_context(cafile=nginx.info["ca"]))
    proxy = f"http://pr%C3%B6xy:s3cr%40t@{squid.host}:{squid.port}"
    plain = f"http://{nginx.host}:{nginx.port}/hello.txt"
    secure = f"https://127.0.0.1:{nginx.info['tls_port']}/hello.txt"
    ftp = f"ftp://{vsftpd.host}:{vsftpd.port}/pub/hello.txt"
    async with Client(use_netrc=False, proxy=proxy, http=tls, trust_env=False) as c:
        got = [await c.fetch(url) for url in (plain, secure, ftp)]
    assert [r.content for r in got] == [b"hello over http\n", b"hello over http\n", ftp_seed.HELLO]
    assert {r.meta["proxy"] for r in got} == {proxy_url(squid)}
    await squid_log.requests(3)
    value = "Basic%20" + base64.b64encode("pröxy:s3cr@t".encode()).decode()  # UTF-8 (RFC 7617)
    # (a tunnel is logged when it closes: the order of the lines is not the requests')
    assert sorted(auth_log.text().splitlines()) == sorted([f"GET {plain} {value}",
                                                           f"CONNECT 127.0.0.1:{nginx.info['tls_port']} {value}",
                                                           f"GET {ftp} {value}"])


@pytest.mark.parametrize("scheme", ["http", "https"])
async def test_per_host_bounds_connections_through_a_proxy(squid: Endpoint, nginx: Endpoint, scheme: str) -> None:
    # aiohttp counts the path's connections per origin (and proxy): the relay in front of
    # squid sees every connection the Client opens to it
    d = Path(nginx.info["www"]) / f"proxied-{uuid.uuid4().hex[:8]}"
    d.mkdir()
    d.chmod(0o755)
    (d / "big.bin").write_bytes(BIG)
    (d / "big.bin").chmod(0o644)
    port = nginx.port if scheme == "http" else nginx.info["tls_port"]
    url = f"{scheme}://127.0.0.1:{port}/{d.name}/big.bin"
    tls = HTTPOptions(ssl_context=ssl.create_default_context(cafile=nginx.info["ca"]))
    async with relay(squid) as r, Client(use_netrc=False, proxy=f"http://127.0.0.1:{r.port}", trust_env=False,
                                         http=tls, limits=Limits(per_host=1), timeouts=Timeouts(pool=0.5)) as c:
        async with c.open(url) as body:  # unread: it holds the one connection
            with pytest.raises(PoolTimeout, match=rf"waited 0.5 s for a free connection to 127.0.0.1:{port} "
                                                  rf"\(through proxy http://127.0.0.1:{r.port}\)"):
                await c.fetch(url)
            assert await body.read() == BIG
        # each of these waits for the 8 MiB transfers queued before it on the one connection:
        # a pool deadline of its own, so a loaded machine cannot turn the queue into PoolTimeout
        results = await asyncio.gather(*(c.fetch(url, timeouts=Timeouts(pool=120)) for _ in range(4)))
    assert [x.content == BIG for x in results] == [True] * 4
    assert r.most == 1 and r.opened == 1, (r.most, r.opened)


# -- ftp through the HTTP proxy -----------------------------------------------------


async def test_ftp_through_http_proxy(monkeypatch: pytest.MonkeyPatch, squid: Endpoint, vsftpd: Endpoint,
                                      squid_log: SquidLog) -> None:
    monkeypatch.setenv("ftp_proxy", proxy_url(squid))
    ftp_log = Log(vsftpd.info["log"])
    target = f"ftp://{vsftpd.host}:{vsftpd.port}/pub/blob.bin"
    async with Client(use_netrc=False) as c:
        r = await c.fetch(target)
        st = await c.stat(target)
    assert r.content == ftp_seed.blob() and r.meta["proxy"] == proxy_url(squid)
    assert st.size is None or st.size == len(ftp_seed.blob())
    reqs = await squid_log.requests(2)
    assert (reqs[0].method, reqs[0].url, reqs[0].status, reqs[0].body) == ("GET", target, 200,
                                                                           len(ftp_seed.blob()))
    assert reqs[1].method == "HEAD"
    # squid's own FTP client fetched the file from vsftpd, anonymously
    commands = vsftpd_module.commands(ftp_log.path, ftp_log.start)
    assert "USER anonymous" in commands and any(c.startswith("RETR") and "blob.bin" in c for c in commands)


async def test_ftp_login_through_proxy_sends_credentials_not_in_the_url(squid: Endpoint, vsftpd: Endpoint,
                                                                       squid_log: SquidLog) -> None:
    ftp_log = Log(vsftpd.info["log"])
    user, password = vsftpd.info["user"], vsftpd.info["password"]
    async with Client(use_netrc=False, proxy=proxy_url(squid), trust_env=False) as c:
        r = await c.fetch(f"ftp://{user}:{password}@{vsftpd.host}:{vsftpd.port}/private.txt")
    assert r.content == ftp_seed.PRIVATE
    [req] = await squid_log.requests(1)
    assert req.url == f"ftp://{vsftpd.host}:{vsftpd.port}/private.txt" and req.status == 200
    assert password not in squid_log.text()
    assert f"USER {user}" in vsftpd_module.commands(ftp_log.path, ftp_log.start)


async def test_ftp_missing_file_through_proxy_is_not_found(squid: Endpoint, vsftpd: Endpoint,
                                                           squid_log: SquidLog) -> None:
    async with Client(use_netrc=False, proxy=proxy_url(squid), trust_env=False) as c:
        with pytest.raises(ResourceNotFound):
            await c.fetch(f"ftp://{vsftpd.host}:{vsftpd.port}/pub/no-such-file")
    [req] = await squid_log.requests(1)
    assert req.status == 404


async def test_ftp_no_proxy_goes_direct(monkeypatch: pytest.MonkeyPatch, squid: Endpoint, vsftpd: Endpoint,
                                        squid_log: SquidLog) -> None:
    monkeypatch.setenv("ftp_proxy", proxy_url(squid))
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    ftp_log = Log(vsftpd.info["log"])
    async with Client(use_netrc=False) as c:
        r = await c.fetch(f"ftp://{vsftpd.host}:{vsftpd.port}/pub/hello.txt")
    assert r.content == ftp_seed.HELLO and "proxy" not in r.meta
    assert "RETR hello.txt" in vsftpd_module.commands(ftp_log.path, ftp_log.start)  # anyurl's own plan: CWD, RETR
    await asyncio.sleep(0.2)
    assert await squid_log.requests(0) == []


async def test_ftp_upload_through_proxy_is_refused_clearly(squid: Endpoint, vsftpd: Endpoint) -> None:
    from anyurl import NotSupported

    async with Client(use_netrc=False, proxy=proxy_url(squid), trust_env=False) as c:
        with pytest.raises(NotSupported, match="no_proxy"):
            await c.upload(f"ftp://urltest:urltest-pw@{vsftpd.host}:{vsftpd.port}/upload/x.txt", b"x")


# -- the command line -----------------------------------------------------------


def contents(folder: Path) -> set[bytes]:
    return {p.read_bytes() for p in folder.iterdir()}


async def run_cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, bytes, bytes]:
    anyurl = str(Path(sys.executable).parent / "anyurl")
    return await arun([anyurl, *args], within=60, env=env or dict(os.environ))


async def test_cli_proxy_and_noproxy_flags(tmp_path: Path, squid: Endpoint, nginx: Endpoint, vsftpd: Endpoint,
                                           squid_log: SquidLog) -> None:
    page = f"http://{nginx.host}:{nginx.port}/hello.txt"
    ftp = f"ftp://{vsftpd.host}:{vsftpd.port}/pub/hello.txt"
    rc, _, err = await run_cli("get", "-q", "--proxy", f"{squid.host}:{squid.port}", page, ftp, "-d", str(tmp_path))
    assert rc == 0, err
    assert contents(tmp_path) == {b"hello over http\n", ftp_seed.HELLO}
    assert sorted(x.url for x in await squid_log.requests(2)) == [ftp, page]
    later = SquidLog(squid.info["access_log"])
    t0 = time.monotonic()
    rc, out, err = await run_cli("get", "-q", "--proxy", proxy_url(squid), "--noproxy", "127.0.0.1", page,
                                 "-o", "-")
    assert rc == 0 and out == b"hello over http\n", err
    await asyncio.sleep(max(0.0, 0.2 - (time.monotonic() - t0)))
    assert await later.requests(0) == []


@pytest.mark.parametrize("scheme", ["http", "ftp"])
def test_a_proxy_that_refuses_connections_is_named_in_one_plain_line(scheme: str) -> None:
    # was "connection failed while requesting URL through proxy P: Cannot connect to host
    # 127.0.0.1:1 ssl:default [Connect call failed ('127.0.0.1', 1)]" (aiohttp's words, the URL twice)
    import socket
    import subprocess

    import anyurl

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once closed
    url = f"{scheme}://127.0.0.1:9/x.bin"
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env.update({f"{scheme}_proxy": f"http://pu:proxy-pw@127.0.0.1:{port}",
                "PYTHONPATH": str(Path(anyurl.__file__).parent.parent)})
    proc = subprocess.run([sys.executable, "-m", "anyurl", "get", "-o", os.devnull, url], capture_output=True,
                          text=True, timeout=60, env=env)
    assert proc.returncode == ConnectError.exit_code
    assert proc.stderr == f"anyurl: {url}: cannot connect to proxy 127.0.0.1:{port}: Connection refused\n"

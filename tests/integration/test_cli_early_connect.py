"""The CLI's early connect against real servers: the socket connected before asyncio was
imported is the one the transfer uses (one connection, one request in the server's log),
and a proxy setting keeps it off."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures.launcher import Endpoint, Launcher
from fixtures.servers import vsftpd as vsftpd_module

import anyurl

SRC = str(Path(anyurl.__file__).parent.parent)
PROXY_VARS = ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "ftp_proxy", "FTP_PROXY",
              "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY", "ANYURL_EARLY_CONNECT", "ANYURL_EARLY_TLS")
EARLY = "opened at start-up"


def anyurl_cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``python -m anyurl -v ARGS`` in a fresh interpreter (the early connect happens at start-up)."""
    base = {k: v for k, v in os.environ.items() if k not in PROXY_VARS}
    return subprocess.run([sys.executable, "-m", "anyurl", "-v", *args], capture_output=True, text=True,
                          timeout=60, env={**base, "PYTHONPATH": SRC, **env})


class Log:
    """Lines appended to a log file since this object was made."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.start = os.path.getsize(path) if os.path.exists(path) else 0

    def text(self) -> str:
        with open(self.path, "rb") as f:
            f.seek(self.start)
            return f.read().decode("utf-8", "replace")


@pytest.fixture(scope="module")
def gophernicus(servers: Launcher) -> Endpoint:
    return servers.get("gophernicus")


@pytest.fixture(scope="module")
def nginx(servers: Launcher) -> Endpoint:
    return servers.get("nginx")


def test_gopher_item_arrives_over_the_early_connection(gophernicus: Endpoint, tmp_path: Path) -> None:
    src = Path(gophernicus.info["root"]) / "early-connect.bin"
    src.write_bytes(os.urandom(3 << 20))
    src.chmod(0o644)
    log = Log(gophernicus.info["access_log"])
    out = tmp_path / "out.bin"
    proc = anyurl_cli("get", "-q", "-o", str(out), f"gopher://{gophernicus.host}:{gophernicus.port}/9/early-connect.bin")
    assert proc.returncode == 0, proc.stderr
    assert f"using the connection to {gophernicus.host}:{gophernicus.port} {EARLY}" in proc.stderr
    assert out.read_bytes() == src.read_bytes()
    logged = [line for line in log.text().splitlines() if "early-connect.bin" in line]
    assert len(logged) == 1, log.text()  # one request: the early connection carried it


def test_http_file_arrives_over_the_early_connection(nginx: Endpoint, tmp_path: Path) -> None:
    name = f"early-connect-{os.getpid()}.txt"
    src = Path(nginx.info["www"]) / name
    src.write_bytes(b"early\n" * 1000)
    src.chmod(0o644)
    log = Log(nginx.info["access_log"])
    out = tmp_path / "out.txt"
    proc = anyurl_cli("get", "-q", "-o", str(out), f"http://{nginx.host}:{nginx.port}/{name}")
    assert proc.returncode == 0, proc.stderr
    assert f"using the connection to {nginx.host}:{nginx.port} {EARLY}" in proc.stderr
    assert "opened connection to" in proc.stderr  # the pool's first (and only) connection
    assert out.read_bytes() == src.read_bytes()
    assert len([line for line in log.text().splitlines() if name in line]) == 1


@pytest.mark.parametrize("http1", [False, True])
def test_https_file_arrives_over_the_early_connection(nginx: Endpoint, tmp_path: Path, http1: bool) -> None:
    # the TCP connect overlaps the imports; TLS (and ALPN's HTTP/2 or HTTP/1.1) runs on that socket
    name = f"early-tls-{os.getpid()}-{int(http1)}.txt"
    src = Path(nginx.info["www"]) / name
    src.write_bytes(b"early over tls\n" * 1000)
    src.chmod(0o644)
    log = Log(nginx.info["access_log"])
    out = tmp_path / "out.txt"
    port = nginx.info["tls_port"]
    proc = anyurl_cli("get", "-q", *(["--http1.1"] if http1 else []), "-o", str(out),
                      f"https://{nginx.host}:{port}/{name}", SSL_CERT_FILE=nginx.info["ca"])
    assert proc.returncode == 0, proc.stderr
    # the TLS handshake ran early too (in a thread, during the imports), and was adopted
    assert f"using the connection to {nginx.host}:{port} {EARLY} (TLS included)" in proc.stderr
    assert out.read_bytes() == src.read_bytes()
    logged = [line for line in log.text().splitlines() if name in line]
    assert len(logged) == 1 and ("HTTP/1.1" if http1 else "HTTP/2.0") in logged[0], logged


def test_many_https_files_over_http2_on_the_early_tls_session(nginx: Endpoint, tmp_path: Path) -> None:
    www = Path(nginx.info["www"]) / "many"
    names = sorted(p.name for p in www.iterdir())[:60]
    port = nginx.info["tls_port"]
    log = Log(nginx.info["access_log"])
    proc = anyurl_cli("get", "-q", "--parallel", "8", "-d", str(tmp_path),
                      *[f"https://{nginx.host}:{port}/many/{n}" for n in names], SSL_CERT_FILE=nginx.info["ca"])
    assert proc.returncode == 0, proc.stderr
    assert f"{EARLY} (TLS included)" in proc.stderr
    assert proc.stderr.count("opened connection to") == 1  # every stream on the adopted session
    for n in names:
        assert (tmp_path / n).read_bytes() == (www / n).read_bytes()
    assert sum(1 for line in log.text().splitlines() if "/many/" in line and "HTTP/2.0" in line) == len(names)


def test_a_large_https_body_over_http1_on_the_early_tls_session(nginx: Endpoint, tmp_path: Path) -> None:
    # HTTP/1.1 by ALPN, a body large enough for the bulk reader (a BufferedProtocol) on the adopted session
    name = f"early-tls-big-{os.getpid()}.bin"
    src = Path(nginx.info["www"]) / name
    src.write_bytes(os.urandom(6 << 20))
    src.chmod(0o644)
    out = tmp_path / "big.bin"
    port = nginx.info["tls_port"]
    proc = anyurl_cli("get", "-q", "--http1.1", "-o", str(out), f"https://{nginx.host}:{port}/{name}",
                      SSL_CERT_FILE=nginx.info["ca"])
    assert proc.returncode == 0, proc.stderr
    assert f"{EARLY} (TLS included)" in proc.stderr
    assert out.read_bytes() == src.read_bytes()


def test_insecure_shakes_hands_early_without_checking_the_certificate(nginx: Endpoint, tmp_path: Path) -> None:
    port = nginx.info["tls_port"]
    out = tmp_path / "hello.txt"
    env = {"SSL_CERT_FILE": os.devnull}  # nginx's CA unknown: only -k lets it through
    proc = anyurl_cli("get", "-q", "-k", "-o", str(out), f"https://{nginx.host}:{port}/hello.txt", **env)
    assert proc.returncode == 0, proc.stderr
    assert f"{EARLY} (TLS included)" in proc.stderr
    assert out.read_bytes() == (Path(nginx.info["www"]) / "hello.txt").read_bytes()


def test_a_certificate_the_early_handshake_refuses_reads_as_without_it(nginx: Endpoint, tmp_path: Path) -> None:
    # the early handshake fails (unknown CA): dropped, the handler connects as usual and reports
    port = nginx.info["tls_port"]
    url = f"https://{nginx.host}:{port}/hello.txt"
    env = {"SSL_CERT_FILE": os.devnull}
    early = anyurl_cli("get", "-q", "-o", str(tmp_path / "a"), url, **env)
    usual = anyurl_cli("get", "-q", "-o", str(tmp_path / "b"), url, ANYURL_EARLY_TLS="0", **env)
    assert early.returncode == usual.returncode != 0
    last = [p.stderr.strip().splitlines()[-1] for p in (early, usual)]
    assert last[0] == last[1] and "certificate verify failed" in last[0], last
    assert "(TLS included)" not in early.stderr
    assert not (tmp_path / "a").exists()


def test_anyurl_early_tls_0_keeps_the_tcp_connect_only(nginx: Endpoint, tmp_path: Path) -> None:
    port = nginx.info["tls_port"]
    out = tmp_path / "hello.txt"
    proc = anyurl_cli("get", "-q", "-o", str(out), f"https://{nginx.host}:{port}/hello.txt",
                      SSL_CERT_FILE=nginx.info["ca"], ANYURL_EARLY_TLS="0")
    assert proc.returncode == 0, proc.stderr
    assert f"{nginx.host}:{port} {EARLY}" in proc.stderr and "(TLS included)" not in proc.stderr
    assert out.read_bytes() == (Path(nginx.info["www"]) / "hello.txt").read_bytes()


def test_ftp_login_and_retrieval_run_on_the_early_connection(servers: Launcher, tmp_path: Path) -> None:
    vsftpd = servers.get("vsftpd")
    log = Log(vsftpd.info["log"])
    out = tmp_path / "out.bin"
    proc = anyurl_cli("get", "-q", "-o", str(out), f"ftp://{vsftpd.host}:{vsftpd.port}/pub/hello.txt")
    assert proc.returncode == 0, proc.stderr
    assert f"using the connection to {vsftpd.host}:{vsftpd.port} {EARLY}" in proc.stderr
    assert out.read_bytes() == (Path(vsftpd.info["anon_root"]) / "pub" / "hello.txt").read_bytes()
    commands = vsftpd_module.commands(vsftpd.info["log"], log.start)
    # one control connection, one login (vsftpd's CONNECT lines are no count: the launcher's
    # readiness probe is logged late after a start)
    assert [c.split()[0] for c in commands].count("USER") == 1
    assert proc.stderr.count("opened connection to") == 1


def test_nntp_article_arrives_over_the_early_connection(servers: Launcher, tmp_path: Path) -> None:
    inn = servers.get("inn")
    first = inn.info["articles"][0]
    out = tmp_path / "article"
    proc = anyurl_cli("get", "-q", "-o", str(out), f"nntp://{inn.host}:{inn.port}/{inn.info['group']}/{first['number']}")
    assert proc.returncode == 0, proc.stderr
    assert f"using the connection to {inn.host}:{inn.port} {EARLY}" in proc.stderr
    assert first["message_id"].encode() in out.read_bytes()


def test_a_proxy_in_the_environment_keeps_the_http_connect_for_the_proxy(servers: Launcher, nginx: Endpoint,
                                                                          tmp_path: Path) -> None:
    squid = servers.get("squid")
    name = f"early-proxy-{os.getpid()}.txt"
    src = Path(nginx.info["www"]) / name
    src.write_bytes(b"proxied\n")
    src.chmod(0o644)
    out = tmp_path / "out.txt"
    proc = anyurl_cli("get", "-q", "-o", str(out), f"http://{nginx.host}:{nginx.port}/{name}",
                      http_proxy=f"http://{squid.host}:{squid.port}")
    assert proc.returncode == 0, proc.stderr
    assert EARLY not in proc.stderr
    assert out.read_bytes() == b"proxied\n"


def test_anyurl_early_connect_0_connects_as_before(gophernicus: Endpoint, tmp_path: Path) -> None:
    out = tmp_path / "out.bin"
    src = Path(gophernicus.info["root"]) / "early-off.bin"
    src.write_bytes(b"off\n")
    src.chmod(0o644)
    proc = anyurl_cli("get", "-q", "-o", str(out), f"gopher://{gophernicus.host}:{gophernicus.port}/9/early-off.bin",
                      ANYURL_EARLY_CONNECT="0")
    assert proc.returncode == 0, proc.stderr
    assert EARLY not in proc.stderr
    assert out.read_bytes() == b"off\n"


@pytest.mark.parametrize("many", [False, True])
def test_an_https_get_loads_only_what_it_uses(nginx: Endpoint, tmp_path: Path, many: bool) -> None:
    # start-up is most of a small transfer's CPU: a plain get (one file, or a batch into a
    # directory) over HTTP/2 loads the compiled codec, and none of the rest
    port = nginx.info["tls_port"]
    urls = [f"https://{nginx.host}:{port}/many/f{i:04d}.txt" for i in range(5 if many else 1)]
    where = ["-d", str(tmp_path)] if many else ["-o", str(tmp_path / "f0000.txt")]
    code = ("import io, sys\nfrom anyurl.cli.commands import main\n"
            f"code = main(['get', '-q', *{where!r}, *{urls!r}])\nprint(code, *sys.modules)")
    base = {k: v for k, v in os.environ.items() if k not in PROXY_VARS}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={**base, "PYTHONPATH": SRC, "SSL_CERT_FILE": nginx.info["ca"]})
    words = proc.stdout.split()
    assert words and words[0] == "0", proc.stderr
    loaded = set(words[1:])
    assert "jh2" in loaded or "h2" in loaded  # (it did speak HTTP/2)
    heavy = {"rich", "aiohttp", "pathlib", "http", "email", "argparse", "importlib.metadata", "dataclasses"}
    if "jh2" not in loaded:
        heavy.discard("dataclasses")  # (pure-Python h2's hpack uses it: the fallback, ANYURL_H2_LIBRARY=h2)
    assert sorted(loaded & heavy) == []
    assert len(list(tmp_path.iterdir())) == len(urls)

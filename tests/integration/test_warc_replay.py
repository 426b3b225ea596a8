"""WARC files anyurl wrote, replayed by pywb started as its own process: an HTTP page (stored
gzip, served as stored), an HTTP/2 one, an FTP file and listing, a gopher menu and text, a news
article, each at its original URL, byte-exact (pywb's ``id_`` mode serves a record as stored).

pywb installs a top-level ``tests`` package of its own, which hides this suite's, and pins
its own dependencies: it runs from a venv of its own (.venv-pywb), made here on first use.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixtures.launcher import Endpoint, Launcher
from tests.procs import spawn

from anyurl import Client, Response
from anyurl.handlers.http import HTTPOptions
from anyurl.handlers.prospero import ProsperoOptions
from anyurl.warc import WARCWriter

PYWB_VENV = Path(__file__).resolve().parents[2] / ".venv-pywb"


def _pywb_bin() -> Path:
    bin_dir = PYWB_VENV / "bin"
    stamp = PYWB_VENV / ".installed"  # written last: an install cut short is made again
    if not stamp.exists():
        # no PYTHONPATH: pip would take what it names (our venv's warcio, yaml, six...) as installed
        # and leave pywb's venv without them
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(PYWB_VENV)], check=True, timeout=300, env=env)
        done = subprocess.run([str(bin_dir / "pip"), "install", "-q", "pywb>=2.8"], capture_output=True,
                              text=True, timeout=1200, env=env)
        if done.returncode == 0:  # what wb-manager and wayback import, from pywb's venv alone
            done = subprocess.run([str(bin_dir / "python"), "-c", "import pywb.manager.manager, pywb.apps.cli"],
                                  capture_output=True, text=True, timeout=300, env=env)
        if done.returncode != 0:
            shutil.rmtree(PYWB_VENV, ignore_errors=True)
            pytest.fail(f"pip install pywb failed:\n{done.stderr[-2000:]}")
        stamp.touch()
    return bin_dir


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Wayback:
    def __init__(self, root: Path, port: int) -> None:
        self.root = root
        self.port = port

    def get(self, stamp: str, url: str, gzip: bool = False, follow: bool = True) -> tuple[int, str, bytes]:
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}/arch/{stamp}id_/{url}",
                                     headers={"Accept-Encoding": "gzip" if gzip else "identity"})
        opener = urllib.request.build_opener() if follow else urllib.request.build_opener(_NoRedirect())
        try:
            with opener.open(req, timeout=60) as r:
                return r.status, r.headers.get("Content-Type", ""), r.read()
        except urllib.error.HTTPError as exc:
            where = exc.headers.get("Location", "") if exc.headers else ""
            return exc.code, where, exc.read()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None  # the 3xx itself is the answer


@pytest.fixture(scope="module")
def servers_up(servers: Launcher) -> dict[str, Endpoint]:
    return {name: servers.get(name) for name in ("nginx", "vsftpd", "pygopherd", "inn", "yaz_ztest")}


@pytest.fixture(scope="module")
def archived(servers_up: dict[str, Endpoint], tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Response]]:
    import asyncio

    ng, vs, pg, inn, zt = (servers_up[n] for n in ("nginx", "vsftpd", "pygopherd", "inn", "yaz_ztest"))
    article = next(a for a in inn.info["articles"] if a["message_id"].startswith("<dots."))
    urls = [f"http://{ng.host}:{ng.port}/big.txt", f"http://{ng.host}:{ng.port}/index.html",
            f"https://{ng.host}:{ng.info['tls_port']}/hello.txt",
            f"ftp://{vs.host}:{vs.port}/pub/blob.bin", f"ftp://{vs.host}:{vs.port}/pub/",
            f"gopher://{pg.host}:{pg.port}/1/", f"gopher://{pg.host}:{pg.port}/0/hello.txt",
            f"nntp://{inn.host}:{inn.port}/{inn.info['group']}/{article['number']}",
            f"http://{ng.host}:{ng.port}/redirect",  # its 301 hop, then /hello.txt
            zt.url("wais", "/Default/TEXT/z1%3A2%3A7")]
    out = tmp_path_factory.mktemp("replay") / "all.warc.gz"

    async def archive() -> dict[str, Response]:
        from tests.prospero_testserver import start

        got = {}
        transport, _server, port = await start(http_base=f"http://{ng.host}:{ng.port}", file_path="/dev/null")
        try:
            async with Client(capture=True, http=HTTPOptions(cafile=ng.info["ca"]), use_netrc=False,
                              prospero=ProsperoOptions(timeout=0.15, retries=6)) as c:
                with WARCWriter(out) as w:
                    for u in [*urls, f"prospero://127.0.0.1:{port}//pub"]:
                        got[u] = r = await c.fetch(u)
                        w.write(r)
        finally:
            transport.close()
        return got

    return out, asyncio.run(archive())


@pytest.fixture(scope="module")
def wayback(archived: tuple[Path, dict[str, Response]], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Wayback]:
    bin_dir = _pywb_bin()
    root = tmp_path_factory.mktemp("pywb")
    env = {**os.environ, "PYTHONPATH": ""}
    subprocess.run([str(bin_dir / "wb-manager"), "init", "arch"], cwd=root, check=True, env=env, timeout=120,
                   capture_output=True)
    subprocess.run([str(bin_dir / "wb-manager"), "add", "arch", str(archived[0])], cwd=root, check=True,
                   env=env, timeout=120, capture_output=True)
    port = _free_port()
    with (root / "wayback.log").open("wb") as log, \
            spawn([str(bin_dir / "wayback"), "-p", str(port), "-b", "127.0.0.1"], cwd=root, env=env,
                  stdout=log, stderr=subprocess.STDOUT) as proc:
        deadline = time.monotonic() + 90
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"pywb did not start: {(root / 'wayback.log').read_text()[-2000:]}")
                time.sleep(0.2)
        yield Wayback(root, port)
        proc.terminate()  # (spawn kills it if it does not end)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)


def stamp(r: Response) -> str:
    assert r.capture is not None and r.capture.started is not None
    return r.capture.started.strftime("%Y%m%d%H%M%S")


def test_pywb_replays_every_scheme_byte_exact(archived: tuple[Path, dict[str, Response]],
                                              wayback: Wayback) -> None:
    for url, r in archived[1].items():
        cap = r.capture
        assert cap is not None and cap.body is not None
        status, ctype, data = wayback.get(stamp(r), url, gzip=True)
        assert status == 200, (url, status, data[:200])
        assert data == cap.body, url  # as stored: the gzip body as nginx sent it, the menu as sent
        if url.startswith("gopher://") and url.endswith("/1/"):
            assert ctype == "application/gopher-menu"
        if url.startswith("nntp://"):
            assert ctype == "message/rfc822"


def test_pywb_serves_a_stored_gzip_body_decoded_to_a_client_that_did_not_ask(
        archived: tuple[Path, dict[str, Response]], wayback: Wayback) -> None:
    url, r = next((u, r) for u, r in archived[1].items() if u.endswith("/big.txt"))
    status, _, data = wayback.get(stamp(r), url)
    assert status == 200 and data == r.content


def test_pywb_replays_a_redirect_hop_then_its_target(archived: tuple[Path, dict[str, Response]],
                                                     wayback: Wayback) -> None:
    url, r = next((u, r) for u, r in archived[1].items() if u.endswith("/redirect"))
    cap = r.capture
    assert cap is not None and cap.previous and cap.previous[0].status == 301
    status, location, _ = wayback.get(stamp(r), url, follow=False)
    assert status == 301, (status, location)
    assert location.endswith(url.replace("/redirect", "/hello.txt")), location  # rewritten into the archive
    status, _, data = wayback.get(stamp(r), url)  # followed, inside the archive
    assert status == 200 and data == b"hello over http\n" == cap.body

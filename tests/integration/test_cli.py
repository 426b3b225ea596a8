"""The `anyurl` command, run as a real process against file: URLs and real nginx.

A few tests also use a tiny HTTP server in this process that misbehaves on
purpose (announces more bytes than it sends, or stalls), to produce a broken
transfer and an interrupted one.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixtures.launcher import Endpoint, Launcher
from fixtures.servers import nginx as nginx_module
from tests.procs import spawn

from anyurl.errors import (
    AccessDenied,
    ConfigurationError,
    ConnectError,
    FetchTimeout,
    NotRetrievable,
    ResourceNotFound,
    TemporaryFailure,
    TransferError,
    TruncatedTransfer,
    UnsafeURL,
    UnsupportedScheme,
    URLSyntaxError,
)
from anyurl.transfer.download import PART_SUFFIX

BIN = Path(sys.executable).parent
ANYURL = str(BIN / "anyurl")
ENV = {**os.environ, "COLUMNS": "120", "NO_COLOR": "1"}


def run(*args: str, cwd: Path | None = None, stdin: bytes | None = None,
        timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([ANYURL, *args], cwd=cwd, input=stdin, capture_output=True,
                          timeout=timeout, env=ENV)


def one_error_line(proc: subprocess.CompletedProcess[bytes]) -> str:
    err = proc.stderr.decode()
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("anyurl: ")
    return lines[0]


def files_in(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir())


@pytest.fixture(scope="module")
def nginx(servers: Launcher) -> Endpoint:
    return servers.get("nginx")


def www(ep: Endpoint) -> Path:
    return Path(ep.info["www"])


def access_log(ep: Endpoint) -> str:
    return Path(ep.info["access_log"]).read_text()


def file_url(path: Path) -> str:
    return "file://" + str(path)


# -- a deliberately broken HTTP server ------------------------------------------


class BadServer:
    """HTTP/1.0 server: GET /trunc/N sends the first N bytes of ``payload`` but
    announces all of it; GET /stall/N sends N bytes and then waits (until stopped);
    GET /slow/N sends N bytes, waits ``SLOW_PAUSE`` seconds, then the rest."""

    SLOW_PAUSE = 1.5  # well past progress.SHOW_AFTER: the bars appear mid-transfer

    def __init__(self, payload: bytes) -> None:
        self.payload = payload
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                more = conn.recv(4096)
                if not more:
                    return
                data += more
            _, mode, count = data.split(b" ", 2)[1].decode().split("/")
            n = int(count)
            head = (f"HTTP/1.0 200 OK\r\nContent-Type: application/octet-stream\r\n"
                    f"Content-Length: {len(self.payload)}\r\n\r\n").encode()
            try:
                conn.sendall(head + self.payload[:n])
                if mode == "stall":
                    self.stop.wait(60)
                elif mode == "slow" and not self.stop.wait(self.SLOW_PAUSE):
                    conn.sendall(self.payload[n:])
            except OSError:
                pass

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


@pytest.fixture()
def bad_server(nginx: Endpoint) -> Iterator[BadServer]:
    srv = BadServer((www(nginx) / "dir/blob.bin").read_bytes())
    yield srv
    srv.close()


# -- get ------------------------------------------------------------------------------


def test_stdout_is_binary_safe(tmp_path: Path) -> None:
    src = tmp_path / "all-bytes.bin"
    data = bytes(range(256)) * 1000 + b"\r\n\x00end"
    src.write_bytes(data)
    proc = run(file_url(src))  # `anyurl URL` is `anyurl get URL`
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == data
    assert proc.stderr == b""  # no progress bar when stderr is not a terminal


def test_python_m_anyurl(tmp_path: Path) -> None:
    src = tmp_path / "a.txt"
    src.write_bytes(b"via python -m\n")
    proc = subprocess.run([sys.executable, "-m", "anyurl", "get", file_url(src)], capture_output=True,
                          timeout=60)
    assert (proc.returncode, proc.stdout) == (0, b"via python -m\n")
    version = subprocess.run([sys.executable, "-m", "anyurl", "--version"], capture_output=True, timeout=60)
    assert version.stdout.decode().startswith("anyurl ")


def test_output_file_from_file_url(tmp_path: Path) -> None:
    src = tmp_path / "src.bin"
    src.write_bytes(os.urandom(300_000))
    out = tmp_path / "out"
    out.mkdir()
    proc = run("get", "-o", str(out / "copy.bin"), file_url(src))
    assert proc.returncode == 0, proc.stderr
    assert (out / "copy.bin").read_bytes() == src.read_bytes()
    assert files_in(out) == ["copy.bin"]  # no temporary file left behind


def test_remote_name_from_nginx(nginx: Endpoint, tmp_path: Path) -> None:
    proc = run("get", "-O", nginx.url("http", "/dir/blob.bin"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "blob.bin").read_bytes() == (www(nginx) / "dir/blob.bin").read_bytes()
    proc = run("get", "-O", nginx.url("http", "/with%20space.txt"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "with space.txt").read_bytes() == (www(nginx) / "with space.txt").read_bytes()
    assert files_in(tmp_path) == ["blob.bin", "with space.txt"]


def test_hostile_names_stay_inside_the_directory(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    (src / ".profile").write_bytes(b"hidden\n")
    out = tmp_path / "out"
    # the last components decode to ".profile" and "../.profile": neither may hide or climb out
    proc = run("get", "-d", str(out), file_url(src) + "/.profile", file_url(src) + "/sub/..%2F.profile")
    assert proc.returncode == 0, proc.stderr
    assert files_in(out) == ["profile", "profile.1"]
    assert (out / "profile").read_bytes() == (out / "profile.1").read_bytes() == b"hidden\n"
    assert files_in(tmp_path) == ["out", "src"] and files_in(src) == [".profile", "sub"]


def test_several_urls_in_parallel(nginx: Endpoint, tmp_path: Path) -> None:
    names = [f"f{i:04d}.txt" for i in range(12)]
    src = tmp_path / "local.bin"
    src.write_bytes(b"local file\n" * 1000)
    urls = [nginx.url("http", f"/many/{n}") for n in names] + [file_url(src)]
    out = tmp_path / "out"
    agent = f"anyurl-cli-test/{time.monotonic_ns()}"
    proc = run("--user-agent", agent, "get", "-d", str(out), "--parallel", "4", *urls)
    assert proc.returncode == 0, proc.stderr
    assert files_in(out) == sorted([*names, "local.bin"])
    for n in names:
        assert (out / n).read_bytes() == (www(nginx) / "many" / n).read_bytes()
    assert (out / "local.bin").read_bytes() == src.read_bytes()
    mine = [line for line in access_log(nginx).splitlines() if f'"{agent}"' in line]
    for n in names:
        assert any(f"GET /many/{n} HTTP/1.1\" 200" in line for line in mine)
    # one Client for all: at most 4 connections at a time, reused for the 12 requests
    connections = {re.search(r" c=(\d+)", line).group(1) for line in mine}  # type: ignore[union-attr]
    assert len(mine) == 12 and len(connections) <= 4


def test_duplicate_names_do_not_overwrite_each_other(nginx: Endpoint, tmp_path: Path) -> None:
    proc = run("get", "-d", str(tmp_path), nginx.url("http", "/hello.txt"), nginx.url("http", "/hello.txt"))
    assert proc.returncode == 0, proc.stderr
    assert files_in(tmp_path) == ["hello.txt", "hello.txt.1"]


def test_not_found_exit_code_and_no_file(nginx: Endpoint, tmp_path: Path) -> None:
    url = nginx.url("http", "/no/such/file.txt")
    proc = run("get", "-o", str(tmp_path / "x.txt"), url)
    assert proc.returncode == ResourceNotFound.exit_code == 11
    line = one_error_line(proc)
    assert url in line
    assert files_in(tmp_path) == []


def test_first_failure_decides_exit_code(nginx: Endpoint, tmp_path: Path) -> None:
    proc = run("get", "-d", str(tmp_path), nginx.url("http", "/hello.txt"), "bogus-scheme://x/y",
               nginx.url("http", "/missing"), "http://[::1")
    assert proc.returncode == UnsupportedScheme.exit_code
    err = proc.stderr.decode()
    assert err.count("anyurl: ") == 3 and "Traceback" not in err
    assert files_in(tmp_path) == ["hello.txt"]


def test_bad_url_and_unknown_scheme(tmp_path: Path) -> None:
    proc = run("get", "http://[bad/")
    assert proc.returncode == URLSyntaxError.exit_code
    assert "http://[bad/" in one_error_line(proc)
    proc = run("get", "-o", str(tmp_path / "x"), "nosuchscheme://host/x")
    assert proc.returncode == UnsupportedScheme.exit_code
    assert "nosuchscheme" in one_error_line(proc)
    assert files_in(tmp_path) == []


def test_password_is_masked_in_errors(nginx: Endpoint) -> None:
    url = f"http://someone:s3cret@127.0.0.1:{nginx.port}/status404"
    proc = run(url)
    assert proc.returncode == ResourceNotFound.exit_code
    line = one_error_line(proc)
    assert "s3cret" not in line and "someone:****@" in line


def test_debug_shows_traceback(nginx: Endpoint) -> None:
    proc = run("--debug", "get", nginx.url("http", "/status404"))
    assert proc.returncode == ResourceNotFound.exit_code
    assert "Traceback" in proc.stderr.decode()


def test_truncated_transfer_fails_and_leaves_nothing(bad_server: BadServer, tmp_path: Path) -> None:
    dest = tmp_path / "blob.bin"
    proc = run("get", "-o", str(dest), bad_server.url("/trunc/3000"))
    assert proc.returncode == TruncatedTransfer.exit_code
    one_error_line(proc)
    assert files_in(tmp_path) == []


def test_max_size(nginx: Endpoint, tmp_path: Path) -> None:
    proc = run("get", "--max-size", "1k", "-o", str(tmp_path / "big.txt"), nginx.url("http", "/big.txt"))
    assert proc.returncode == TransferError.exit_code
    assert "larger than" in one_error_line(proc)
    assert files_in(tmp_path) == []


def test_continue_resumes_with_a_range_request(nginx: Endpoint, bad_server: BadServer,
                                               tmp_path: Path) -> None:
    dest = tmp_path / "blob.bin"
    original = (www(nginx) / "dir/blob.bin").read_bytes()
    # a first mirror breaks off after 3000 bytes: with --continue the partial file stays
    proc = run("get", "--continue", "-o", str(dest), bad_server.url("/trunc/3000"))
    assert proc.returncode == TruncatedTransfer.exit_code
    part = tmp_path / f".blob.bin{PART_SUFFIX}"
    assert files_in(tmp_path) == [part.name]
    assert part.read_bytes() == original[:3000]
    # resume from nginx: a Range request for the rest
    proc = run("get", "--continue", "-o", str(dest), nginx.url("http", "/dir/blob.bin"))
    assert proc.returncode == 0, proc.stderr
    assert dest.read_bytes() == original
    assert files_in(tmp_path) == ["blob.bin"]
    last = [line for line in access_log(nginx).splitlines() if "GET /dir/blob.bin " in line][-1]
    assert '" 206 ' in last
    assert f" 206 {len(original) - 3000} " in last


def test_continue_without_partial_downloads_everything(nginx: Endpoint, tmp_path: Path) -> None:
    dest = tmp_path / "deep.txt"
    proc = run("get", "-c", "-o", str(dest), nginx.url("http", "/dir/sub/deep.txt"))
    assert proc.returncode == 0, proc.stderr
    assert dest.read_bytes() == (www(nginx) / "dir/sub/deep.txt").read_bytes()


def _unnamed_size(pid: int, directory: Path) -> int | None:
    """The size of the unnamed (O_TMPFILE) file process *pid* writes in *directory*, if any."""
    fds = Path(f"/proc/{pid}/fd")
    try:
        for fd in fds.iterdir():
            with contextlib.suppress(OSError):
                if os.readlink(fd).startswith(f"{directory}/#"):
                    return os.stat(fd).st_size
    except OSError:
        pass
    return None


def _interrupt_while_stalled(args: list[str], part: Path,
                             sig: int = signal.SIGINT) -> subprocess.CompletedProcess[bytes]:
    with spawn([ANYURL, *args], default_signals=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
               env=ENV) as proc:
        deadline = time.monotonic() + 20
        while not (part.exists() and part.stat().st_size == 2000) and _unnamed_size(proc.pid, part.parent) != 2000:
            assert time.monotonic() < deadline, "the download never started"
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.02)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=20)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_ctrl_c_exits_130_and_cleans_up(bad_server: BadServer, tmp_path: Path) -> None:
    dest = tmp_path / "blob.bin"
    part = tmp_path / f".blob.bin{PART_SUFFIX}"
    done = _interrupt_while_stalled(["get", "-o", str(dest), bad_server.url("/stall/2000")], part)
    assert done.returncode == 130
    assert "Traceback" not in done.stderr.decode()
    assert files_in(tmp_path) == []
    # with --continue the partial file is kept for the next run
    done = _interrupt_while_stalled(["get", "-c", "-o", str(dest), bad_server.url("/stall/2000")], part)
    assert done.returncode == 130
    assert files_in(tmp_path) == [part.name]
    part.unlink()
    # SIGTERM (kill, systemd, CI cancelling) cleans up the same way
    done = _interrupt_while_stalled(["get", "-o", str(dest), bad_server.url("/stall/2000")], part,
                                    signal.SIGTERM)
    assert done.returncode == 143
    assert done.stderr.decode() == "anyurl: terminated\n"
    assert files_in(tmp_path) == []


# -- progress ------------------------------------------------------------------------------


def _on_terminal(cmd: str, **env: str) -> subprocess.CompletedProcess[bytes]:
    """*cmd* with stdin, stdout and stderr on a pseudo-terminal (script(1)); the screen is its stdout."""
    return subprocess.run(["script", "-qec", cmd, "/dev/null"], capture_output=True, timeout=60,
                          env={**ENV, "TERM": "xterm", **env}, stdin=subprocess.DEVNULL)


needs_script = pytest.mark.skipif(shutil.which("script") is None, reason="needs script(1) for a pseudo-terminal")


@needs_script
def test_progress_bar_only_on_a_terminal(bad_server: BadServer, tmp_path: Path) -> None:
    url = bad_server.url("/slow/2000")
    cmd = f"{ANYURL} get -o {tmp_path / 'a.bin'} {url}"
    tty = _on_terminal(cmd)
    assert tty.returncode == 0, tty.stdout
    screen = tty.stdout.decode(errors="replace")
    # drawn after the delay, while 2000 of the 5120 bytes had come; then the final state
    assert "a.bin" in screen and "2.0/5.1 kB" in screen and "5.1/5.1 kB" in screen and "━" in screen
    assert (tmp_path / "a.bin").read_bytes() == bad_server.payload
    quiet = _on_terminal(cmd.replace(" get ", " get -q "))
    assert quiet.returncode == 0 and "━" not in quiet.stdout.decode(errors="replace")
    piped = run("get", "-o", str(tmp_path / "b.bin"), url)
    assert piped.returncode == 0 and piped.stderr == b""


@needs_script
def test_a_quick_download_on_a_terminal_draws_no_bar(nginx: Endpoint, tmp_path: Path) -> None:
    # 0.8 MB from localhost: quick, but a loaded machine can stretch it past the default 0.4 s,
    # so the delay is set far above it; at 0 the same download draws its bar
    url = nginx.url("http", "/big.txt")
    tty = _on_terminal(f"{ANYURL} get -o {tmp_path / 'a.txt'} {url}", ANYURL_PROGRESS_AFTER="30")
    assert tty.returncode == 0, tty.stdout
    assert tty.stdout == b""
    assert (tmp_path / "a.txt").read_bytes() == (www(nginx) / "big.txt").read_bytes()
    drawn = _on_terminal(f"{ANYURL} get -o {tmp_path / 'b.txt'} {url}", ANYURL_PROGRESS_AFTER="0")
    assert drawn.returncode == 0 and "b.txt" in drawn.stdout.decode(errors="replace")


@needs_script
def test_messages_while_the_bars_are_drawn(bad_server: BadServer, nginx: Endpoint, tmp_path: Path) -> None:
    # one at a time: the slow one first, so the later error and notice come while the bars are drawn
    blob = nginx.url("http", "/dir/blob.bin")
    urls = [bad_server.url("/slow/1000"), blob, nginx.url("http", "/missing"), blob]
    tty = _on_terminal(f"{ANYURL} get --parallel 1 -d {tmp_path} {' '.join(urls)}")
    assert tty.returncode == ResourceNotFound.exit_code, tty.stdout
    screen = tty.stdout.decode(errors="replace")
    assert "1.0/5.1 kB" in screen and "all (0/4 files)" in screen and "all (4/4 files)" in screen
    assert "failed: missing" in screen
    lines = [x.strip() for x in screen.splitlines() if "anyurl: " in x]
    assert len(lines) == 2, screen  # each message once
    assert all("\x1b[1A" in x for x in lines)  # printed by the live display: bars erased, redrawn below
    assert "/missing: not found" in lines[0]
    assert "saved as" in lines[1] and "blob.bin.1" in lines[1]
    assert (tmp_path / "1000").read_bytes() == bad_server.payload
    assert (tmp_path / "blob.bin").read_bytes() == (tmp_path / "blob.bin.1").read_bytes() == bad_server.payload


# -- ls / parse / extract / put / send ---------------------------------------------------


def test_ls_json_on_a_directory(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.txt").write_bytes(b"12345")
    (tmp_path / "b.bin").write_bytes(b"x" * 100)
    proc = run("ls", "--json", file_url(tmp_path) + "/")
    assert proc.returncode == 0, proc.stderr
    entries = {e["name"]: e for e in json.loads(proc.stdout)}
    assert set(entries) == {"sub", "a.txt", "b.bin"}
    assert entries["a.txt"]["kind"] == "file" and entries["a.txt"]["size"] == 5
    assert entries["b.bin"]["size"] == 100
    assert entries["sub"]["kind"] == "directory"
    assert entries["a.txt"]["url"] == file_url(tmp_path / "a.txt")
    lines = run("ls", "--json-lines", file_url(tmp_path) + "/").stdout.decode().splitlines()
    assert sorted(json.loads(x)["name"] for x in lines) == ["a.txt", "b.bin", "sub"]


def test_ls_table_and_not_a_directory(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"12345")
    proc = run("ls", file_url(tmp_path) + "/")
    assert proc.returncode == 0
    header, row = proc.stdout.decode().splitlines()
    assert header.split() == ["kind", "size", "modified", "name", "url"]
    assert row.split()[0:2] == ["file", "5"] and row.endswith(file_url(tmp_path / "a.txt"))
    proc = run("ls", file_url(tmp_path / "a.txt"))
    assert proc.returncode == 1
    assert "not a directory" in one_error_line(proc)


def test_ls_nginx_missing(nginx: Endpoint) -> None:
    proc = run("ls", nginx.url("http", "/nothing/here/"))
    assert proc.returncode == ResourceNotFound.exit_code
    one_error_line(proc)


def test_parse() -> None:
    proc = run("parse", "ftp://joe:s3cret@ftp.example.org:2121/pub/gnu/README;type=a")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["type"] == "FTPURL"
    assert (data["scheme"], data["host"], data["port"], data["user"]) == ("ftp", "ftp.example.org", 2121, "joe")
    assert data["password"] == "****"
    assert (data["cwd"], data["name"], data["typecode"]) == (["pub", "gnu"], "README", "a")
    assert data["canonical"] == "ftp://joe:****@ftp.example.org:2121/pub/gnu/README;type=a"
    assert "s3cret" not in proc.stdout.decode()
    shown = json.loads(run("parse", "--show-password", "ftp://joe:s3cret@h/x").stdout)
    assert shown["password"] == "s3cret" and "s3cret" in shown["canonical"]
    bad = run("parse", "http://[bad/")
    assert bad.returncode == URLSyntaxError.exit_code
    one_error_line(bad)


RFC_EXAMPLE = b"""Yes, Jim, I found it under <URL:ftp://info.cern.ch/pub/www/doc;
type=d> but you can probably pick it up from <URL:ftp://ds.in
ternic.net/rfc>.  Note the warning in <URL:http://ds.internic.
net/instructions/overview.html#WARNING>.
"""


def test_extract_rfc_appendix_example(tmp_path: Path) -> None:
    expected = ["ftp://info.cern.ch/pub/www/doc;type=d", "ftp://ds.internic.net/rfc",
                "http://ds.internic.net/instructions/overview.html#WARNING"]
    proc = run("extract", stdin=RFC_EXAMPLE)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode().splitlines() == expected
    (tmp_path / "mail.txt").write_bytes(RFC_EXAMPLE)
    assert run("extract", str(tmp_path / "mail.txt")).stdout.decode().splitlines() == expected
    missing = run("extract", str(tmp_path / "nope.txt"))
    assert missing.returncode == ResourceNotFound.exit_code
    one_error_line(missing)


def test_put_to_http_is_refused(nginx: Endpoint, tmp_path: Path) -> None:
    src = tmp_path / "up.txt"
    src.write_bytes(b"upload me\n")
    proc = run("put", str(src), nginx.url("http", "/up.txt"))
    assert proc.returncode == NotRetrievable.exit_code
    assert "cannot be written" in one_error_line(proc)
    proc = run("put", str(tmp_path / "missing.txt"), nginx.url("http", "/up.txt"))
    assert proc.returncode == ResourceNotFound.exit_code
    one_error_line(proc)


def test_usage_errors() -> None:
    proc = run("get", "http://a/x", "http://b/y")  # several URLs need -O or -d
    assert proc.returncode == 2
    one_error_line(proc)
    help_text = run("--help").stdout.decode()
    for cls in (ResourceNotFound, URLSyntaxError, UnsupportedScheme, TruncatedTransfer):
        assert f"{cls.exit_code:>3}  {cls.__name__}" in help_text
    assert " 130 " in help_text


# -- other schemes through the CLI: ftp (vsftpd), mailto (aiosmtpd), telnet --------------------


@pytest.fixture(scope="module")
def vsftpd(servers: Launcher) -> Endpoint:
    return servers.get("vsftpd")


def test_put_to_ftp_and_get_it_back(vsftpd: Endpoint, tmp_path: Path) -> None:
    src = tmp_path / "up.bin"
    src.write_bytes(os.urandom(200_000))
    user, pw = vsftpd.info["user"], vsftpd.info["password"]
    url = f"ftp://{user}:{pw}@127.0.0.1:{vsftpd.port}/upload/cli-{os.getpid()}.bin"
    proc = run("put", str(src), url)
    assert proc.returncode == 0, proc.stderr
    assert pw not in proc.stderr.decode()
    stored = Path(vsftpd.info["local_root"]) / "upload" / f"cli-{os.getpid()}.bin"
    assert stored.read_bytes() == src.read_bytes()
    assert "STOR" in Path(vsftpd.info["log"]).read_text()
    back = run("get", "-o", str(tmp_path / "back.bin"), url)
    assert back.returncode == 0, back.stderr
    assert (tmp_path / "back.bin").read_bytes() == src.read_bytes()


def test_ls_ftp_directory(vsftpd: Endpoint) -> None:
    proc = run("ls", "--json", vsftpd.url("ftp", "/pub/"))
    assert proc.returncode == 0, proc.stderr
    listed = {e["name"]: e for e in json.loads(proc.stdout)}
    anon = Path(vsftpd.info["anon_root"]) / "pub"
    assert set(listed) == {p.name for p in anon.iterdir()}
    assert listed["hello.txt"]["size"] == (anon / "hello.txt").stat().st_size
    assert listed["hello.txt"]["url"] == vsftpd.url("ftp", "/pub/hello.txt")


def test_ftp_password_without_terminal_is_access_denied(vsftpd: Endpoint, tmp_path: Path) -> None:
    proc = run("get", "-o", str(tmp_path / "p.txt"), f"ftp://{vsftpd.info['user']}@127.0.0.1:{vsftpd.port}"
               "/private.txt", stdin=b"")
    assert proc.returncode == AccessDenied.exit_code  # nobody to ask for the password
    one_error_line(proc)
    assert files_in(tmp_path) == []


def converse(command: str, exchange: list[tuple[bytes, bytes]]) -> tuple[int, bytes]:
    """Run *command* on a pseudo-terminal (script(1)); for each (prompt, answer) wait for the
    prompt, then type the answer. Returns the exit code and everything the terminal showed."""
    with spawn(["script", "-qec", command, "/dev/null"], stdin=subprocess.PIPE,
               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env={**ENV, "TERM": "xterm"}) as proc:
        assert proc.stdout is not None and proc.stdin is not None
        seen = b""
        for prompt, answer in exchange:
            while prompt not in seen:
                more = proc.stdout.read1(4096)
                assert more, f"no {prompt!r} in {seen!r}"
                seen += more
            seen = seen.replace(prompt, b"<" + prompt + b">", 1)  # the next prompt may repeat this text
            proc.stdin.write(answer + b"\n")
            proc.stdin.flush()
        rest, _ = proc.communicate(timeout=30)
    return proc.returncode, seen + rest


@pytest.mark.skipif(shutil.which("script") is None, reason="needs script(1) for a pseudo-terminal")
def test_ftp_password_prompt_on_a_terminal(vsftpd: Endpoint, tmp_path: Path) -> None:
    dest = tmp_path / "private.txt"
    user, pw = vsftpd.info["user"], vsftpd.info["password"]
    url = f"ftp://{user}@127.0.0.1:{vsftpd.port}/private.txt"
    code, screen = converse(f"{ANYURL} get -q -o {dest} {url}",
                            [(f"Password for {user}@127.0.0.1: ".encode(), pw.encode())])
    assert code == 0, screen
    assert pw.encode() not in screen  # not echoed
    assert dest.read_bytes() == (Path(vsftpd.info["local_root"]) / "private.txt").read_bytes()


@needs_script
def test_a_password_prompt_pauses_the_drawn_bars(bad_server: BadServer, vsftpd: Endpoint, tmp_path: Path) -> None:
    import select

    user, pw = vsftpd.info["user"], vsftpd.info["password"]
    urls = f"{bad_server.url('/slow/1000')} ftp://{user}@127.0.0.1:{vsftpd.port}/private.txt"
    with spawn(["script", "-qec", f"{ANYURL} get --parallel 1 -d {tmp_path} {urls}", "/dev/null"],
               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
               env={**ENV, "TERM": "xterm"}) as proc:
        assert proc.stdout is not None and proc.stdin is not None
        prompt = f"Password for {user}@127.0.0.1: ".encode()
        seen = b""
        deadline = time.monotonic() + 30
        while prompt not in seen:
            ready = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))[0]
            more = os.read(proc.stdout.fileno(), 4096) if ready else b""  # unbuffered: select stays true
            assert more, f"no {prompt!r} in ...{seen[-1000:]!r}"
            seen += more
        before, after = seen.split(prompt, 1)
        assert b"all (1/2 files)" in before  # the bars were drawn before the prompt came
        # paused: nothing redrawn over the prompt while the user types (rich redraws 10 times a second)
        assert after == b"" and select.select([proc.stdout], [], [], 0.6)[0] == []
        proc.stdin.write(pw.encode() + b"\n")
        proc.stdin.flush()
        rest, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0, seen + rest
    assert b"all (2/2 files)" in rest and pw.encode() not in rest  # drawn again after the answer
    assert (tmp_path / "private.txt").read_bytes() == (Path(vsftpd.info["local_root"]) / "private.txt").read_bytes()


@pytest.mark.skipif(shutil.which("script") is None, reason="needs script(1) for a pseudo-terminal")
def test_gopher_plus_form_prompts(servers: Launcher, tmp_path: Path) -> None:
    pyg = servers.get("pygopherd")
    url = f"gopher://127.0.0.1:{pyg.port}/0/form.txt%09%09?"
    code, screen = converse(f"{ANYURL} get -q {url}", [
        (b"Your name? [Anonymous]: ", b"Bob"),
        (b"Your password?: ", b"s3cret"),
        (b"choice 1-3 [gopher]: ", b"2"),
        (b"Send me mail? (y/n) [1]: ", b"n"),
    ])
    assert code == 0, screen
    assert b"Please tell us about yourself" in screen and b"2) ftp" in screen
    assert b"s3cret" not in screen
    # the filled-in form was sent and the item's body came back
    assert (Path(pyg.info["root"]) / "form.txt").read_bytes().strip() in screen
    assert "[GopherPlusProtocol/FileHandler]: /form.txt" in Path(pyg.info["log"]).read_text(errors="replace")


def test_gopher_form_without_terminal_is_a_clear_error(servers: Launcher) -> None:
    pyg = servers.get("pygopherd")
    proc = run(f"gopher://127.0.0.1:{pyg.port}/0/form.txt%09%09?", stdin=b"")
    assert proc.returncode == ConfigurationError.exit_code  # nobody to fill in the form
    assert "form" in one_error_line(proc)


def test_ls_gopher_menu_shows_types(servers: Launcher) -> None:
    pyg = servers.get("pygopherd")
    proc = run("ls", f"gopher://127.0.0.1:{pyg.port}/")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.decode().splitlines()
    assert lines[0].split()[-1] == "meta"
    hello = next(x for x in lines if f"gopher://127.0.0.1:{pyg.port}/0/hello.txt" in x)
    assert hello.split()[0] == "file" and "gophertype=0" in hello
    info = [x for x in lines if x.startswith("info")]
    assert info and all("gophertype=i" in x for x in info)


def test_send_mail_with_attachment(servers: Launcher, tmp_path: Path) -> None:
    import email
    import email.policy

    smtp = servers.get("aiosmtpd_server")
    attach = tmp_path / "notes.bin"
    attach.write_bytes(bytes(range(256)) * 4)
    tag = f"cli-{os.getpid()}-{time.monotonic_ns()}"
    env = {**ENV, "ANYURL_SMTP_HOST": "127.0.0.1", "ANYURL_SMTP_PORT": str(smtp.port)}
    proc = subprocess.run([ANYURL, "send", "mailto:bob@example.org", "-s", f"Subject {tag}",
                           "--from", "alice@example.org", "--attach", str(attach)],
                          input=b"Hello Bob,\nthe notes are attached.\n", capture_output=True, timeout=60,
                          env=env)
    assert proc.returncode == 0, proc.stderr
    new = Path(smtp.info["maildir"]) / "new"
    messages = [email.message_from_bytes(p.read_bytes(), policy=email.policy.default) for p in new.iterdir()]
    mine = [m for m in messages if m["Subject"] == f"Subject {tag}"]
    assert len(mine) == 1
    msg = mine[0]
    assert msg["To"] == "bob@example.org" and msg["From"] == "alice@example.org"
    body = msg.get_body(("plain",))
    assert body is not None and "the notes are attached." in body.get_content()
    parts = list(msg.iter_attachments())
    assert [p.get_filename() for p in parts] == ["notes.bin"]
    assert parts[0].get_content() == attach.read_bytes()


def test_send_refuses_header_injection(tmp_path: Path) -> None:
    env = {**ENV, "ANYURL_SMTP_HOST": "127.0.0.1", "ANYURL_SMTP_PORT": "1"}
    proc = subprocess.run([ANYURL, "send", "mailto:bob@example.org?subject=a%0d%0aBcc:evil@example.org"],
                          input=b"x\n", capture_output=True, timeout=60, env=env)
    assert proc.returncode == UnsafeURL.exit_code  # refused before any connection
    one_error_line(proc)


def test_telnet_url_opens_a_session(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = run(f"telnet://127.0.0.1:{port}/", stdin=b"")
    assert proc.returncode == ConnectError.exit_code  # the URL went to the telnet session, not to `get`
    assert "Traceback" not in proc.stderr.decode()
    assert f"anyurl: telnet://127.0.0.1:{port}/" in proc.stderr.decode()


def run_news(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    """Run anyurl against INN, waiting out nnrpd's "400 load at N, try later" on a busy machine
    (inn.conf nnrpdloadlimit); skip if the machine stays too loaded for INN to serve readers."""
    for _ in range(3):
        proc = subprocess.run([ANYURL, *args], capture_output=True, timeout=60, env=env)
        if not (proc.returncode == TemporaryFailure.exit_code and b"load at" in proc.stderr):
            return proc
        time.sleep(1)
    pytest.skip(f"INN refuses readers while the machine is loaded: {proc.stderr.decode().strip()}")


def test_news_server_option(servers: Launcher, tmp_path: Path) -> None:
    inn = servers.get("inn")
    group, first = inn.info["group"], inn.info["articles"][1]
    env = {k: v for k, v in ENV.items() if k != "NNTPSERVER"}
    server = f"127.0.0.1:{inn.port}"
    listing = run_news(["--news-server", server, "ls", "--json", f"news:{group}"], env)
    assert listing.returncode == 0, listing.stderr
    entries = json.loads(listing.stdout)
    assert len(entries) == len(inn.info["articles"])
    article = run_news(["get", "--news-server", server, f"news:{first['message_id'].strip('<>')}"], env)
    assert article.returncode == 0, article.stderr
    assert first["body"].replace("\n", "\r\n").encode() in article.stdout  # the article as the server sent it
    missing = subprocess.run([ANYURL, f"news:{group}"], capture_output=True, timeout=60, env=env)
    assert missing.returncode == ConfigurationError.exit_code
    assert "news server" in one_error_line(missing)


def test_continue_over_ftp_uses_rest(vsftpd: Endpoint, tmp_path: Path) -> None:
    original = (Path(vsftpd.info["anon_root"]) / "pub" / "blob.bin").read_bytes()
    dest = tmp_path / "blob.bin"
    (tmp_path / f".blob.bin{PART_SUFFIX}").write_bytes(original[:1000])  # left by an interrupted run
    log = Path(vsftpd.info["log"])
    start = log.stat().st_size
    proc = run("get", "--continue", "-o", str(dest), vsftpd.url("ftp", "/pub/blob.bin"))
    assert proc.returncode == 0, proc.stderr
    assert dest.read_bytes() == original
    assert files_in(tmp_path) == ["blob.bin"]
    with open(log, "rb") as f:
        f.seek(start)
        logged = f.read().decode(errors="replace")
    assert '"REST 1000"' in logged and '"RETR blob.bin"' in logged


def test_idle_timeout_and_max_time(nginx: Endpoint, bad_server: BadServer) -> None:
    started = time.monotonic()
    proc = run("get", "--timeout", "1", nginx.url("http", "/stall"))
    assert proc.returncode == FetchTimeout.exit_code
    one_error_line(proc)
    proc = run("get", "--max-time", "1", bad_server.url("/stall/10"))
    assert proc.returncode == FetchTimeout.exit_code
    assert "--max-time" in one_error_line(proc)
    assert time.monotonic() - started < 20


@pytest.mark.skipif(shutil.which("script") is None, reason="needs script(1) for a pseudo-terminal")
def test_netrc_password_is_used_before_prompting(vsftpd: Endpoint, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    netrc = home / ".netrc"
    netrc.write_text(f"machine 127.0.0.1 login {vsftpd.info['user']} password {vsftpd.info['password']}\n")
    netrc.chmod(0o600)
    dest = tmp_path / "private.txt"
    url = f"ftp://{vsftpd.info['user']}@127.0.0.1:{vsftpd.port}/private.txt"
    tty = subprocess.run(["script", "-qec", f"{ANYURL} get -q -o {dest} {url}", "/dev/null"],
                         capture_output=True, timeout=60, stdin=subprocess.DEVNULL,
                         env={**ENV, "TERM": "xterm", "HOME": str(home)})
    assert tty.returncode == 0, tty.stdout
    assert b"Password for" not in tty.stdout
    assert dest.read_bytes() == (Path(vsftpd.info["local_root"]) / "private.txt").read_bytes()


def test_make_demo_runs(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-m", "fixtures.demo", "--only", "file", "http"], cwd=root,
                          capture_output=True, timeout=120, env={**ENV, "COLUMNS": "200"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = [line for line in proc.stdout.decode().splitlines() if line.startswith("│")]
    cells = [[c.strip() for c in row.strip("│").split("│")] for row in rows]
    by_scheme = {c[0]: c for c in cells}
    assert set(by_scheme) == {"file", "http"}
    assert by_scheme["file"][3] == str(1 << 20) and by_scheme["file"][5] == "ok"
    assert by_scheme["http"][1] == "nginx" and by_scheme["http"][5] == "ok"
    assert by_scheme["http"][3] == str(len(nginx_module.HELLO))

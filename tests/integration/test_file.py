"""file: URLs against the real local file system (tmp_path)."""

from __future__ import annotations

import asyncio
import os
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from tests.hostile.fakes.child import run_child

import anyurl
from anyurl import Client, Limits, Policy, ResourceNotFound, UnsafeURL
from anyurl.errors import FetchTimeout
from anyurl.handlers.base import render_entries
from anyurl.handlers.file import file_url_for
from anyurl.urls import FileURL


@pytest.fixture
async def client() -> AsyncIterator[Client]:
    async with Client() as c:
        yield c


def furl(path: Path | str, host: str = "") -> str:
    """The file URL of *path* as a user would write it (encoded by the serializer)."""
    return str(FileURL("file", host, str(path).lstrip("/")))


async def test_read_file_content_type_and_size(client: Client, tmp_path: Path) -> None:
    p = tmp_path / "notes.txt"
    p.write_bytes(b"some local text\n")
    r = await client.fetch(f"file://{p}")
    assert r.content == b"some local text\n"
    assert r.content_type == "text/plain" and r.size == 16
    assert r.meta["path"] == str(p)


@pytest.mark.parametrize("host", ["", "localhost", "LOCALHOST", socket.gethostname()])
async def test_hosts_that_mean_this_machine(client: Client, tmp_path: Path, host: str) -> None:
    p = tmp_path / "a.bin"
    p.write_bytes(bytes(range(256)))
    r = await client.fetch(f"file://{host}{p}")
    assert r.content == bytes(range(256))


async def test_streams_in_chunks_of_chunk_size(tmp_path: Path) -> None:
    p = tmp_path / "data.bin"
    data = os.urandom(10_000)
    p.write_bytes(data)
    async with Client(limits=Limits(chunk_size=4096)) as c, c.open(f"file://{p}") as body:
        assert body.size == 10_000 and body.content_type == "application/octet-stream"
        sizes = []
        got = b""
        async for chunk in body:
            sizes.append(len(chunk))
            got += chunk
    assert sizes == [4096, 4096, 10_000 - 8192]
    assert got == data


async def test_offset_seeks(client: Client, tmp_path: Path) -> None:
    p = tmp_path / "data.bin"
    data = os.urandom(5000)
    p.write_bytes(data)
    async with client.open(f"file://{p}", offset=1234) as body:
        assert body.size == 5000 - 1234 and body.offset == 1234
        assert await body.read() == data[1234:]
    assert (await client.fetch(f"file://{p}", offset=5000)).content == b""


async def test_percent_encoded_names(client: Client, tmp_path: Path) -> None:
    p = tmp_path / "a b%c;d#e?.txt"
    p.write_text("odd name\n")
    text = f"file://{tmp_path}/a%20b%25c%3Bd%23e%3F.txt"
    r = await client.fetch(text)
    assert r.content == b"odd name\n"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    d = tmp_path / "tree"
    d.mkdir()
    (d / "with space.txt").write_text("space\n")
    (d / "per%cent").write_text("percent\n")
    (d / "semi;colon").write_text("semicolon\n")
    (d / "hash#q?.txt").write_text("hash\n")
    (d / "caf\u00e9.txt").write_text("cafe\n")
    (d / "sub dir").mkdir()
    (d / "sub dir" / "inner.txt").write_text("inner\n")
    os.symlink("with space.txt", d / "link")
    return d


async def test_directory_entries_sorted_with_urls_that_work(client: Client, tree: Path) -> None:
    async with client.open(furl(tree)) as body:
        listing = await body.read()
        entries = body.entries
    assert entries is not None
    names = [e.name for e in entries]
    assert names == sorted(names)
    assert names == sorted(["with space.txt", "per%cent", "semi;colon", "hash#q?.txt", "caf\u00e9.txt",
                            "sub dir", "link"])
    by_name = {e.name: e for e in entries}
    assert by_name["sub dir"].kind == "directory" and by_name["sub dir"].url.endswith("/sub%20dir/")
    # a symlink: its target, the target's size and kind, keyed by the file it leads to
    link = by_name["link"]
    assert (link.kind, link.size, link.meta["target"], link.meta["target_kind"]) == (
        "symlink", 6, "with space.txt", "file")
    assert link.key == by_name["with space.txt"].url
    assert by_name["with space.txt"].kind == "file" and by_name["with space.txt"].size == 6
    assert by_name["per%cent"].url.endswith("/per%25cent")
    assert by_name["semi;colon"].url.endswith("/semi%3Bcolon")
    assert by_name["hash#q?.txt"].url.endswith("/hash%23q?.txt")  # "?" is an fsegment character
    assert by_name["caf\u00e9.txt"].url.endswith("/caf%C3%A9.txt")
    assert all(e.modified is not None for e in entries)
    assert listing == render_entries(entries)
    # every URL parses back to the file it names, and fetching it gives that file
    for e in entries:
        assert e.url is not None
        parsed = anyurl.parse(e.url)
        assert isinstance(parsed, FileURL)
        assert "/" + parsed.path.rstrip("/") == str(tree / e.name)
        if e.kind != "directory":
            assert (await client.fetch(e.url)).content == (tree / e.name).read_bytes()
    sub = await client.fetch(by_name["sub dir"].url)
    assert [e.name for e in sub.entries or []] == ["inner.txt"]


async def test_missing_is_resource_not_found(client: Client, tmp_path: Path) -> None:
    with pytest.raises(ResourceNotFound, match="no such file") as info:
        await client.fetch(f"file://{tmp_path}/nope.txt")
    assert isinstance(info.value, FileNotFoundError)
    assert str(tmp_path / "nope.txt") in str(info.value)
    with pytest.raises(ResourceNotFound):  # a file used as a directory
        (tmp_path / "f").write_text("x")
        await client.fetch(f"file://{tmp_path}/f/g")


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory under /tmp that user nobody can traverse (tmp_path is 0700 root)."""
    d = Path(tempfile.mkdtemp(prefix="anyurl-file-"))
    d.chmod(0o755)
    try:
        yield d
    finally:
        for p in d.iterdir():
            p.chmod(0o700)
        subprocess.run(["rm", "-rf", str(d)], check=True)


_AS_NOBODY = """
import asyncio, os, sys, anyurl
import concurrent.futures.thread, mimetypes, anyurl.client, anyurl.handlers.file  # stdlib lives under /root: import it first
# imported as root (the interpreter lives under /root, 0700); now become nobody for real
os.setgroups([])
os.setgid(65534)
os.setuid(65534)
assert os.geteuid() == 65534
async def main():
    try:
        await anyurl.fetch(sys.argv[1])
    except anyurl.AnyURLError as e:
        print(type(e).__name__, isinstance(e, PermissionError), e)
    else:
        print("read it")
asyncio.run(main())
"""


def _fetch_as_nobody(url: str) -> str:
    # Tests run as root, and root ignores file permissions; so the read runs in
    # a child process that drops to uid/gid nobody, where the kernel really says EACCES.
    if os.geteuid() != 0:
        pytest.skip("needs root to switch to user nobody")
    out = subprocess.run([sys.executable, "-c", _AS_NOBODY, url], env={**os.environ, "HOME": "/"},
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_unreadable_file_and_directory_are_access_denied(shared_dir: Path) -> None:
    secret = shared_dir / "secret.txt"
    secret.write_text("secret\n")
    secret.chmod(0)
    closed = shared_dir / "closed"
    closed.mkdir()
    (closed / "x").write_text("x")
    closed.chmod(0o311)  # can enter, cannot list
    readable = shared_dir / "open.txt"
    readable.write_text("ok\n")
    readable.chmod(0o644)
    assert _fetch_as_nobody(f"file://{readable}") == "read it"  # the child can read what it may
    assert _fetch_as_nobody(f"file://{secret}").startswith(
        f"AccessDenied True file://{secret}: permission denied")
    assert _fetch_as_nobody(f"file://{closed}/").startswith("AccessDenied True")


async def test_foreign_host_refused_without_dns(client: Client, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    def no_dns(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"DNS lookup attempted: {args}")

    monkeypatch.setattr(socket, "getaddrinfo", no_dns)
    monkeypatch.setattr(socket, "gethostbyname", no_dns)
    p = tmp_path / "x.txt"
    p.write_text("x")
    with pytest.raises(UnsafeURL, match=r"RFC 1738 section 3.10\): host 'example.org' is not this machine"):
        await client.fetch(f"file://example.org{p}")


async def test_policy_can_disable_file_urls(tmp_path: Path) -> None:
    p = tmp_path / "x.txt"
    p.write_text("x")
    async with Client(policy=Policy(allow_file_urls=False)) as c:
        with pytest.raises(UnsafeURL, match="allow_file_urls"):
            await c.fetch(f"file://{p}")


async def test_nul_in_path_refused(client: Client) -> None:
    with pytest.raises(UnsafeURL, match="NUL"):
        await client.fetch("file:///etc/pass%00wd")


def _open_fds_to(path: Path) -> int:
    n = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == str(path):
                n += 1
        except OSError:
            pass
    return n


async def test_unread_body_closes_its_file(client: Client, tmp_path: Path) -> None:
    p = tmp_path / "x.bin"
    p.write_bytes(b"y" * 100_000)
    async with client.open(f"file://{p}") as body:
        assert _open_fds_to(p) == 1
        assert body.size == 100_000
    assert _open_fds_to(p) == 0
    async with client.open(f"file://{p}") as body:  # stopped after one chunk
        async for _ in body:
            break
    assert _open_fds_to(p) == 0


async def test_reads_do_not_block_the_loop(tmp_path: Path) -> None:
    p = tmp_path / "big.bin"
    with open(p, "wb") as f:  # noqa: ASYNC230 - test setup
        f.truncate(64 << 20)
    ticks = 0
    done = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            await asyncio.sleep(0)

    async with Client(limits=Limits(chunk_size=1 << 20)) as c:
        t = asyncio.create_task(ticker())
        total = biggest = 0
        async with c.open(f"file://{p}") as body:
            async for chunk in body:
                total += len(chunk)
                biggest = max(biggest, len(chunk))
        done.set()
        await t
    assert total == 64 << 20 and biggest == 1 << 20
    assert ticks >= 64  # the loop ran other tasks while each chunk was read in a thread


def test_file_url_for_round_trips() -> None:
    for name in ["/a b", "/x%y", "/semi;c", "/q?#", "/caf\u00e9", "/t~"]:
        u = file_url_for(name)
        assert u.startswith("file:///") and " " not in u
        parsed = anyurl.parse(u)
        assert isinstance(parsed, FileURL) and "/" + parsed.path == name
    assert stat.S_ISDIR(os.stat("/").st_mode)


# -- FIFOs and devices (issue 11): reading them must keep working as it did ------------


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "fifo"
    os.mkfifo(path)
    yield path
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # releases a writer still waiting to open
    os.close(fd)


def _write_later(path: Path, chunks: list[bytes], pause: float) -> threading.Thread:
    def writer() -> None:
        time.sleep(pause)
        fd = os.open(path, os.O_WRONLY)  # waits for the reader, as a shell's "echo > fifo" does
        try:
            for chunk in chunks:
                os.write(fd, chunk)
                time.sleep(pause)
        finally:
            os.close(fd)

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    return t


def test_fifo_data_arrives_when_a_writer_comes(fifo: Path) -> None:
    # opened without blocking, a FIFO reads as EOF until a writer comes: we must wait for one
    writer = _write_later(fifo, [b"first line\n", b"second line\n"], 0.5)
    result = run_child(["-m", "anyurl", "get", "--timeout", "5", f"file://{fifo}"], deadline=15)
    writer.join(5)
    assert result.returncode == 0, result.describe()
    assert result.stdout == "first line\nsecond line\n"


async def test_fifo_offset_skips_bytes(fifo: Path) -> None:
    writer = _write_later(fifo, [b"0123456789"], 0.2)
    async with Client() as client:
        res = await client.fetch(f"file://{fifo}", offset=4)
    writer.join(5)
    assert res.content == b"456789" and res.meta["file_type"] == "fifo"




def test_endless_device_is_cut_by_max_time() -> None:
    # /dev/zero never blocks and never ends: --max-time must still stop it
    result = run_child(["-m", "anyurl", "get", "--max-time", "1", "-o", "/dev/null", "file:///dev/zero"],
                       deadline=15)
    assert not result.killed, result.describe()
    assert result.returncode == FetchTimeout.exit_code, result.describe()
    assert result.elapsed <= 1 + 4, result.describe()
    assert result.peak_rss_mb < 64, result.describe()


async def test_symlinked_directory_is_keyed_by_its_target(client: Client, tmp_path: Path) -> None:
    """A symlinked directory is another URL for the same directory: its key is the real one's."""
    (tmp_path / "real dir").mkdir()
    (tmp_path / "real dir" / "x.txt").write_text("x\n")
    os.symlink("real dir", tmp_path / "alias")
    os.symlink("nowhere", tmp_path / "dangling")
    res = await client.fetch(furl(tmp_path))
    by_name = {e.name: e for e in res.entries or []}
    alias, real, dangling = by_name["alias"], by_name["real dir"], by_name["dangling"]
    assert (alias.kind, alias.meta["target"], alias.meta["target_kind"]) == ("symlink", "real dir", "directory")
    assert alias.key == real.key == real.url and alias.url != real.url and alias.size is None
    assert (dangling.kind, dangling.key, dangling.size) == ("symlink", dangling.url, None)

"""fsspec over anyurl, against the real servers: pygopherd, gophernicus, vsftpd, INN.

The filesystem is found through the ``fsspec.specs`` entry points that
pyproject.toml declares (registered here from that table when the installed
metadata predates them), so ``fsspec.open("gopher://...")`` is what a user runs.
fsspec's own abstract "get" tests run against vsftpd and the local disk; the
other abstract suites (copy, put, pipe, open-for-write, mv) write to the
filesystem, which is read-only, and are not run.
"""

from __future__ import annotations

import gc
import hashlib
import os
import time
import tomllib
import uuid
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

fsspec = pytest.importorskip("fsspec")
pd = pytest.importorskip("pandas")
from fixtures.launcher import Endpoint, Launcher  # noqa: E402
from fixtures.servers import _ftp_seed as fseed  # noqa: E402
from fixtures.servers import _gopher_seed as gseed  # noqa: E402
from fsspec.tests.abstract import AbstractFixtures, AbstractGetTests  # noqa: E402

from anyurl.adapters.fsspec import AnyURLFile, AnyURLFileSystem, is_parent_link  # noqa: E402
from anyurl.response import Entry  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def declared_specs() -> dict[str, str]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    specs: dict[str, str] = data["project"]["entry-points"]["fsspec.specs"]
    return specs


@pytest.fixture(scope="module", autouse=True)
def registered() -> None:
    """Register what pyproject declares (an editable install made before the entry
    points existed does not list them yet); fsspec's own ftp/file/http are untouched."""
    from fsspec.registry import known_implementations, registry

    for proto, target in declared_specs().items():
        if proto not in registry and proto not in known_implementations:
            fsspec.register_implementation(proto, target.replace(":", "."))


@pytest.fixture(scope="module")
def pyg(servers: Launcher) -> Endpoint:
    return servers.get("pygopherd")


@pytest.fixture(scope="module")
def nic(servers: Launcher) -> Endpoint:
    return servers.get("gophernicus")


@pytest.fixture(scope="module")
def ftp(servers: Launcher) -> Endpoint:
    return servers.get("vsftpd")


@pytest.fixture(scope="module")
def inn(servers: Launcher) -> Endpoint:
    return servers.get("inn")


def g(ep: Endpoint, rest: str) -> str:
    return f"gopher://{ep.host}:{ep.port}{rest}"


def test_entry_points_cover_the_schemes_fsspec_lacks() -> None:
    specs = declared_specs()
    direct = {"gopher", "news", "nntp", "nntps", "wais", "prospero"}
    assert set(specs) == direct | {f"anyurl+{s}" for s in (*direct, "ftp", "ftps", "file", "http", "https")}
    assert set(AnyURLFileSystem.protocol) == set(specs)
    assert set(specs.values()) == {"anyurl.fsspec:AnyURLFileSystem"}
    # ftp, file and http stay fsspec's own unless asked for by the alias
    assert type(fsspec.filesystem("file")).__name__ == "LocalFileSystem"
    assert fsspec.get_filesystem_class("ftp").__name__ == "FTPFileSystem"
    assert fsspec.get_filesystem_class("gopher") is AnyURLFileSystem
    assert fsspec.get_filesystem_class("anyurl+ftp") is AnyURLFileSystem


def test_fsspec_open_gopher_text_and_binary(pyg: Endpoint, nic: Endpoint) -> None:
    for ep in (pyg, nic):
        with fsspec.open(g(ep, "/0/hello.txt"), "rb") as f:
            data = f.read()
        # gophernicus sends text with CRLF line ends
        assert data.replace(b"\r\n", b"\n") == gseed.HELLO
        with fsspec.open(g(ep, "/9/sub/blob.bin"), "rb") as f:
            f.seek(2000)  # size unknown to the server: spooled once, then random access
            assert f.read(10) == gseed.blob()[2000:2010]
            f.seek(5)
            assert f.read(3) == gseed.blob()[5:8]
    with fsspec.open(g(pyg, "/0/hello.txt"), "rt") as f:
        assert f.readline() == "Hello, gopher world.\n"


def test_pandas_read_csv_over_gopher_and_ftp(pyg: Endpoint, ftp: Endpoint) -> None:
    csv = "name,size\nalpha,1\nbeta,22\ngamma,333\n"
    root = Path(pyg.info["root"]) if "root" in pyg.info else None
    ftp_pub = Path(ftp.info["anon_root"]) / "pub"
    (ftp_pub / "table.csv").write_text(csv)
    os.chmod(ftp_pub / "table.csv", 0o644)
    df = pd.read_csv(f"anyurl+ftp://{ftp.host}:{ftp.port}/pub/table.csv")
    assert list(df["name"]) == ["alpha", "beta", "gamma"] and df["size"].sum() == 356
    # a gopher item ("small item NNNN" lines, one column). pandas hands gopher:// to
    # urllib, so the URL carries the anyurl+ prefix, or an fsspec file is passed
    df2 = pd.read_csv("anyurl+" + g(pyg, "/0/many/t0007.txt"), header=None, names=["line"])
    assert len(df2) == 20 and set(df2["line"]) == {"small item 0007"}
    with fsspec.open(g(pyg, "/0/many/t0008.txt")) as f:
        assert set(pd.read_csv(f, header=None)[0]) == {"small item 0008"}
    assert root is None or root.exists()


def test_ls_info_and_parent_links(pyg: Endpoint, nic: Endpoint) -> None:
    fs = fsspec.filesystem("gopher")
    names = fs.ls(g(pyg, "/1/sub"), detail=False)
    assert g(pyg, "/9/sub/blob.bin") in names and g(pyg, "/0/sub/nested.txt") in names
    infos = {i["name"]: i for i in fs.ls(g(nic, "/1/sub/"), detail=True)}
    for i in infos.values():
        assert i["type"] in ("file", "directory", "other") and "size" in i and "mtime" in i
    # gophernicus puts a parent link ("..") into sub-menus: never listed
    assert not any(n.rstrip("/") in (g(nic, "/1"), g(nic, "/1/sub")) for n in infos)
    info = fs.info(g(pyg, "/0/sub/nested.txt"))  # no stat for gopher: from the parent menu
    assert info["type"] == "file" and info["filename"] == "nested.txt"
    assert fs.isdir(g(pyg, "/1/sub")) and fs.isfile(g(pyg, "/9/sub/blob.bin"))
    assert not fs.exists(g(pyg, "/0/no-such-file.txt"))
    # the rule itself, for listings that link up
    d = g(pyg, "/1/sub/deeper")
    assert is_parent_link(d, Entry("..", g(pyg, "/1/sub")))
    assert is_parent_link(d, Entry("self", g(pyg, "/1/sub/deeper/")))
    assert not is_parent_link(d, Entry("su", g(pyg, "/1/su")))
    assert not is_parent_link(d, Entry("child", g(pyg, "/1/sub/deeper/x")))


def test_find_and_glob_on_gopher_are_bounded_and_complete(pyg: Endpoint, nic: Endpoint) -> None:
    fs = fsspec.filesystem("gopher")
    for ep in (pyg, nic):
        t0 = time.monotonic()
        found = fs.find(g(ep, "/1/"))
        took = time.monotonic() - t0
        many = [u for u in found if "/many/" in u]
        assert len(many) == 1000 and len(set(found)) == len(found)
        assert took < 20, took
        assert fs.glob(g(ep, "/1/many/t000*.txt")) == [g(ep, f"/0/many/t000{i}.txt") for i in range(10)]
        assert [u.rsplit("/", 1)[-1] for u in fs.glob(g(ep, "/1/*/nested.txt"))] == ["nested.txt"]
        assert [u.rsplit("/", 1)[-1] for u in fs.glob(g(ep, "/1/**/nested*"))] == ["nested.txt"]
    assert fs.find(g(pyg, "/1/sub"), maxdepth=1) == sorted(fs.ls(g(pyg, "/1/sub"), detail=False))


def test_cat_file_ranges(ftp: Endpoint, pyg: Endpoint, inn: Endpoint) -> None:
    blob = fseed.blob()
    ff = fsspec.filesystem("anyurl+ftp")
    u = f"anyurl+ftp://{ftp.host}:{ftp.port}/pub/blob.bin"
    assert ff.cat_file(u, 100, 150) == blob[100:150]
    assert ff.cat_file(u, -10) == blob[-10:]
    assert ff.cat_file(u, 5000) == blob[5000:]
    assert ff.size(u) == len(blob)
    gs = fsspec.filesystem("gopher")
    assert gs.cat_file(g(pyg, "/9/sub/blob.bin"), 1000, 1010) == gseed.blob()[1000:1010]
    nn = fsspec.filesystem("nntp")
    art = nn.cat_file(f"nntp://{inn.host}:{inn.port}/{inn.info['group']}/1")
    assert nn.cat_file(f"nntp://{inn.host}:{inn.port}/{inn.info['group']}/1", 10, 30) == art[10:30]


def test_buffered_random_access_reads_ranges(ftp: Endpoint) -> None:
    fseed.ensure_big(Path(ftp.info["anon_root"]), 3 << 20, "random.bin")
    ref = (Path(ftp.info["anon_root"]) / "pub" / "random.bin").read_bytes()
    fs = fsspec.filesystem("anyurl+ftp")
    url = f"anyurl+ftp://{ftp.host}:{ftp.port}/pub/random.bin"
    with fs.open(url, "rb", block_size=64 * 1024) as f:
        assert isinstance(f, AnyURLFile) and f.size == len(ref)
        for off in (2_000_000, 17, 3_000_000, 65_530):
            f.seek(off)
            assert f.read(100) == ref[off:off + 100]
    log = Path(ftp.info["log"]).read_text(errors="replace")
    assert "REST 2000000" in log  # blocks came by ranged reads, not whole-file downloads


def test_recursive_get_names_local_files_by_decoded_names(ftp: Endpoint, pyg: Endpoint, tmp_path: Path) -> None:
    ff = fsspec.filesystem("anyurl+ftp")
    ff.get(f"anyurl+ftp://{ftp.host}:{ftp.port}/pub/", str(tmp_path / "pub"), recursive=True)
    anon = Path(ftp.info["anon_root"]) / "pub"
    assert (tmp_path / "pub" / "dir with space" / "inner.txt").read_bytes() == (anon / "dir with space" / "inner.txt").read_bytes()
    assert (tmp_path / "pub" / "100%.txt").read_bytes() == fseed.SPECIAL_NAMES["100%.txt"]
    assert (tmp_path / "pub" / "sub" / "subsub" / "deeper.txt").read_bytes() == b"deeper file\n"
    # every local name is a remote name, decoded once (no "%25", no "%20" left over); other
    # tests of the session may add names with "%" under /pub, so compare with the server's tree
    local = {p.relative_to(tmp_path / "pub").as_posix() for p in (tmp_path / "pub").rglob("*")}
    remote = {p.relative_to(anon).as_posix() for p in anon.rglob("*")}
    assert local and local <= remote, sorted(local - remote)[:5]
    gs = fsspec.filesystem("gopher")
    gs.get(g(pyg, "/1/sub"), str(tmp_path / "gsub"), recursive=True)
    assert sorted(p.name for p in (tmp_path / "gsub").iterdir()) == [
        "archive.zip", "blob.bin", "image.png", "nested.txt", "pixel.gif", "sound.wav"]
    assert (tmp_path / "gsub" / "blob.bin").read_bytes() == gseed.blob()
    # a directory URL fetched without recursion is never written as a file
    gs.get(g(pyg, "/1/sub"), str(tmp_path / "single"))
    assert not (tmp_path / "single").is_file()


def test_get_mapper_over_news_and_ftp(inn: Endpoint, ftp: Endpoint) -> None:
    m = fsspec.get_mapper(f"nntp://{inn.host}:{inn.port}/{inn.info['group']}")
    assert sorted(m, key=int) == [str(a["number"]) for a in inn.info["articles"]]
    assert inn.info["articles"][1]["message_id"].encode() in m["2"]
    fm = fsspec.get_mapper(f"anyurl+ftp://{ftp.host}:{ftp.port}/pub/sub")
    assert dict(fm) == {"deep.txt": fseed.DEEP, "subsub/deeper.txt": b"deeper file\n"}


def test_read_only_errors_are_plain() -> None:
    fs = fsspec.filesystem("gopher")
    with pytest.raises(NotImplementedError):
        fs.open("gopher://127.0.0.1:9/0/x", "wb")
    with pytest.raises(NotImplementedError):
        fs.pipe_file("gopher://127.0.0.1:9/0/x", b"data")


def test_client_is_closed_when_the_filesystem_goes(pyg: Endpoint) -> None:
    fs = AnyURLFileSystem(skip_instance_cache=True)
    assert fs.cat_file(g(pyg, "/0/sub/nested.txt")) == gseed.NESTED
    client = fs._client
    assert client is not None and not client._closed
    ref = weakref.ref(fs)
    del fs
    gc.collect()
    deadline = time.monotonic() + 5
    while not client._closed and time.monotonic() < deadline:
        time.sleep(0.02)
    assert ref() is None and client._closed
    fs2 = AnyURLFileSystem(skip_instance_cache=True)
    fs2.cat_file(g(pyg, "/0/sub/nested.txt"))
    c2 = fs2._client
    fs2.close()
    assert c2 is not None and c2._closed


# -- fsspec's own abstract tests (get: read-only ones) -------------------------------


class _DiskSeeded(AnyURLFileSystem):
    """Reads through anyurl; the abstract suites' set-up writes go straight to the
    server's disk (the filesystem itself is read-only)."""

    disk_root: Path = Path("/nonexistent")
    url_root: str = ""

    def _disk(self, path: str) -> Path:
        url = self._strip_protocol(path)
        assert url.startswith(self.url_root), url
        return self.disk_root / url[len(self.url_root):].lstrip("/")

    def makedirs(self, path: str, exist_ok: bool = False) -> None:
        self._disk(path).mkdir(parents=True, exist_ok=exist_ok)
        self.invalidate_cache()

    def mkdir(self, path: str, create_parents: bool = True, **kw: Any) -> None:
        self._disk(path).mkdir(parents=create_parents, exist_ok=True)
        self.invalidate_cache()

    def touch(self, path: str, truncate: bool = True, **kw: Any) -> None:
        self.pipe_file(path, b"")

    def pipe_file(self, path: str, value: bytes, **kw: Any) -> None:  # type: ignore[override]
        p = self._disk(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(value)
        os.chmod(p, 0o644)
        self.invalidate_cache()

    def pipe(self, path: str, value: bytes | None = None, **kw: Any) -> None:  # type: ignore[override]
        assert value is not None
        self.pipe_file(path, value)

    def rm(self, path: Any, recursive: bool = False, maxdepth: int | None = None) -> None:  # type: ignore[override]
        import shutil

        for p in [path] if isinstance(path, str) else path:
            d = self._disk(p)
            shutil.rmtree(d) if d.is_dir() else d.unlink(missing_ok=True)
        self.invalidate_cache()


class _Abstract(AbstractFixtures):  # type: ignore[misc]
    scheme = ""

    @pytest.fixture
    def fs_join(self) -> Any:
        return lambda *parts: "/".join(p.rstrip("/") for p in parts)


class TestAbstractGetOverFTP(_Abstract, AbstractGetTests):  # type: ignore[misc]
    @pytest.fixture
    def fs(self, ftp: Endpoint) -> Iterator[_DiskSeeded]:
        disk = Path(ftp.info["anon_root"]) / "pub" / f"abstract-{uuid.uuid4().hex[:8]}"
        disk.mkdir(parents=True)
        os.chmod(disk, 0o755)
        cls = type("FTPSeeded", (_DiskSeeded,), {"disk_root": disk,
                                                  "url_root": f"ftp://{ftp.host}:{ftp.port}/pub/{disk.name}"})
        fs = cls(skip_instance_cache=True)
        yield fs
        fs.close()

    @pytest.fixture
    def fs_path(self, fs: _DiskSeeded) -> str:
        return "anyurl+" + fs.url_root


class TestAbstractGetOverFile(_Abstract, AbstractGetTests):  # type: ignore[misc]
    @pytest.fixture
    def fs(self, tmp_path: Path) -> Iterator[_DiskSeeded]:
        disk = tmp_path / "remote"
        disk.mkdir()
        cls = type("FileSeeded", (_DiskSeeded,), {"disk_root": disk, "url_root": f"file://{disk}"})
        fs = cls(skip_instance_cache=True)
        yield fs
        fs.close()

    @pytest.fixture
    def fs_path(self, fs: _DiskSeeded) -> str:
        return "anyurl+" + fs.url_root


def test_sha256_of_a_whole_tree_matches_the_disk(ftp: Endpoint) -> None:
    fs = fsspec.filesystem("anyurl+ftp")
    anon = Path(ftp.info["anon_root"])
    url = f"anyurl+ftp://{ftp.host}:{ftp.port}/pub/sub"
    got = {u.rsplit("/pub/sub/", 1)[1]: hashlib.sha256(fs.cat_file(u)).hexdigest() for u in fs.find(url)}
    want = {str(p.relative_to(anon / "pub" / "sub")): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in (anon / "pub" / "sub").rglob("*") if p.is_file()}
    assert got == want

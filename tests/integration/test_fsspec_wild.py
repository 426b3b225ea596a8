"""Issue 25 item 7, fsspec part: an nginx autoindex page is a directory for ``anyurl+http``
(as for fsspec's own http), a recursive get of it copies the files (was: the index page
written onto the target directory), and one dead menu link does not end a gopher find."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

fsspec = pytest.importorskip("fsspec")

from fixtures.launcher import Endpoint, Launcher  # noqa: E402

from anyurl.adapters.fsspec import AnyURLFileSystem  # noqa: E402


@pytest.fixture
def site(servers: Launcher) -> Iterator[tuple[Endpoint, Path, str]]:
    ep = servers.get("nginx")
    root = Path(ep.info["www"]) / f"fs-wild-{os.getpid()}"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_bytes(b"a\n")
    (root / "b.csv").write_bytes(b"x,y\n1,2\n")
    (root / "sub" / "c.bin").write_bytes(bytes(range(256)))
    try:
        yield ep, root, f"http://{ep.host}:{ep.port}/{root.name}/"
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_anyurl_http_autoindex_is_a_directory(site: tuple[Endpoint, Path, str]) -> None:
    _ep, _root, url = site
    fs = AnyURLFileSystem(skip_instance_cache=True)
    try:
        assert fs.info(url)["type"] == "directory"
        found = fs.find(url)
        assert sorted(f.rsplit("/", 2)[-2:][-1] for f in found) == ["a.txt", "b.csv", "c.bin"], found
    finally:
        fs.close()


def test_recursive_get_of_an_http_directory_copies_its_files(site: tuple[Endpoint, Path, str],
                                                             tmp_path: Path) -> None:
    _ep, root, url = site
    fs = AnyURLFileSystem(skip_instance_cache=True)
    try:
        fs.get(url, str(tmp_path / "out") + "/", recursive=True)
    finally:
        fs.close()
    got = {str(p.relative_to(tmp_path / "out")): p.read_bytes() for p in (tmp_path / "out").rglob("*") if p.is_file()}
    want = {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    # fsspec puts a trailing-slash source's contents in the target, as cp -r does
    assert {k.split("/", 1)[-1] if k.startswith(root.name) else k: v for k, v in got.items()} == want, sorted(got)


def test_find_and_walk_on_gopher_carry_on_past_a_dead_menu_link(servers: Launcher) -> None:
    # gophernicus: a hole whose menu links a menu that does not exist (was: find raised
    # ResourceNotFound, walk yielded nothing); walk(1) carries on, and so must fsspec
    ep = servers.get("gophernicus")
    name = f"dead-{os.getpid()}"
    hole = Path(ep.info["root"]) / name
    (hole / "ok").mkdir(parents=True)
    (hole / "top.txt").write_bytes(b"top\n")
    (hole / "ok" / "deep.txt").write_bytes(b"deep\n")
    (hole / "gophermap").write_text(f"1gone\t/{name}/no-such-menu\n1ok\t/{name}/ok\n0top\t/{name}/top.txt\n")
    for p in (hole, hole / "ok", hole / "top.txt", hole / "ok" / "deep.txt", hole / "gophermap"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    url = f"gopher://{ep.host}:{ep.port}/1/{name}"
    fs = AnyURLFileSystem(skip_instance_cache=True)
    try:
        found = fs.find(url)
        walked = [(d, sorted(files)) for d, _dirs, files in fs.walk(url)]
    finally:
        fs.close()
        shutil.rmtree(hole, ignore_errors=True)
    assert sorted(u.rsplit("/", 1)[-1] for u in found) == ["deep.txt", "top.txt"], found
    assert sorted(f for _d, files in walked for f in files) == ["deep.txt", "top.txt"], walked


async def test_walk_never_enters_a_dot_dot_selector(servers: Launcher) -> None:
    # gophernicus: sub/'s menu links back with "/NAME/sub/.." (a "/map/.."-style selector);
    # was: walked into as a new menu
    from anyurl.client import Client

    ep = servers.get("gophernicus")
    name = f"mapdots-{os.getpid()}"
    hole = Path(ep.info["root"]) / name
    (hole / "sub").mkdir(parents=True)
    (hole / "sub" / "x.txt").write_bytes(b"x\n")
    (hole / "sub" / "gophermap").write_text(f"1Back\t/{name}/sub/..\n0x\t/{name}/sub/x.txt\n")
    (hole / "gophermap").write_text(f"1sub\t/{name}/sub\n")
    for p in (hole, hole / "sub"):
        p.chmod(0o755)
    for p in (hole / "sub" / "x.txt", hole / "sub" / "gophermap", hole / "gophermap"):
        p.chmod(0o644)
    try:
        async with Client() as client:
            found = [f async for f in client.walk(f"gopher://{ep.host}:{ep.port}/1/{name}")]
    finally:
        shutil.rmtree(hole, ignore_errors=True)
    assert not [f.url for f in found if ".." in f.url], [f.url for f in found]
    assert [f.url.rsplit("/", 1)[-1] for f in found if not f.directory] == ["x.txt"]


def test_recursive_get_copies_a_file_whose_name_fills_255_bytes(site: tuple[Endpoint, Path, str],
                                                                tmp_path: Path) -> None:
    # nginx autoindex: a 250-byte file name next to others. Was: the part file
    # ".<name>.<pid>-<id>.anyurl-part" passed the name limit and the whole copy stopped
    _ep, root, url = site
    long = "L" * 246 + ".bin"
    (root / long).write_bytes(b"long\n")
    fs = AnyURLFileSystem(skip_instance_cache=True)
    try:
        fs.get(url, str(tmp_path / "out") + "/", recursive=True)
    finally:
        fs.close()
    got = {p.name for p in (tmp_path / "out").rglob("*") if p.is_file()}
    assert got == {long, "a.txt", "b.csv", "c.bin"}, sorted(got)
    assert next((tmp_path / "out").rglob(long)).read_bytes() == b"long\n"


def test_recursive_get_skips_a_dangling_link_and_copies_the_rest(site: tuple[Endpoint, Path, str],
                                                                 tmp_path: Path,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    # issue 33 item 1: nginx autoindex lists a symlink to a missing file; its GET is a 404. Was:
    # the whole copy stopped with ResourceNotFound after a file or two, on_error="omit" or not
    _ep, root, url = site
    (root / "gone.txt").symlink_to(root / "no-such-file")
    (root / "sub" / "gone2.bin").symlink_to("nowhere")
    want = {"a.txt": b"a\n", "b.csv": b"x,y\n1,2\n", "sub/c.bin": bytes(range(256))}
    for i, on_error in enumerate([None, "omit"]):
        out = tmp_path / f"out{i}"
        fs = AnyURLFileSystem(skip_instance_cache=True)
        caplog.clear()
        try:
            with caplog.at_level("WARNING", logger="anyurl.fsspec"):
                fs.get(url, str(out) + "/", recursive=True, **({} if on_error is None else {"on_error": on_error}))
        finally:
            fs.close()
        got = {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()}
        assert got == want, sorted(got)
        skipped = sorted(r.getMessage() for r in caplog.records if "skipped" in r.getMessage())
        assert len(skipped) == 2 and "/gone.txt:" in skipped[0] and "/sub/gone2.bin:" in skipped[1], skipped
        assert all("not found" in m for m in skipped), skipped
        assert not list(out.rglob("*gone*")) and not list(out.rglob("*anyurl-part"))
    # asked to raise, it raises the missing file's error (naming it), as fsspec's own copy does
    fs = AnyURLFileSystem(skip_instance_cache=True)
    try:
        with pytest.raises(FileNotFoundError, match="gone"):
            fs.get(url, str(tmp_path / "strict") + "/", recursive=True, on_error="raise")
    finally:
        fs.close()


def test_recursive_get_of_a_gopher_menu_shortens_a_name_over_255_bytes(servers: Launcher,
                                                                       tmp_path: Path) -> None:
    # issue 33 item 14: a menu item's local name is its selector's last segment, and a selector
    # is opaque text, longer than a file name may be (here a query of 300 bytes that gophernicus
    # ignores for a plain file). Was: ENAMETOOLONG ended the whole copy; now such a name is
    # shortened as mirror shortens its names (a short extension kept) and the rest is copied.
    ep = servers.get("gophernicus")
    name = f"longname-{os.getpid()}"
    hole = Path(ep.info["root"]) / name
    (hole / "d").mkdir(parents=True)
    (hole / "x.txt").write_bytes(b"x\n")
    (hole / "d" / "y.txt").write_bytes(b"y\n")
    long_sel = f"/{name}/x.txt?" + "q" * 300
    long_dir = f"/{name}/d?" + "\u00e9" * 150
    (hole / "gophermap").write_text(f"0long\t{long_sel}\n1deep\t{long_dir}\n0short\t/{name}/x.txt\n",
                                    encoding="utf-8")
    for p in (hole, hole / "d"):
        p.chmod(0o755)
    for p in (hole / "x.txt", hole / "d" / "y.txt", hole / "gophermap"):
        p.chmod(0o644)
    url = f"gopher://{ep.host}:{ep.port}/1/{name}/"
    out = tmp_path / "out"
    fs = AnyURLFileSystem(skip_instance_cache=True)
    try:
        fs.get(url, str(out) + "/", recursive=True)
    finally:
        fs.close()
        shutil.rmtree(hole, ignore_errors=True)
    got = {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert all(len(part.encode()) <= 255 for k in got for part in k.split("/")), sorted(got)
    assert sorted(got) == sorted(["x.txt", "x.txt?" + "q" * 249, "d?" + "\u00e9" * 126 + "/y.txt"]), sorted(got)
    assert set(got.values()) <= {b"x\r\n", b"x\n", b"y\r\n", b"y\n"}

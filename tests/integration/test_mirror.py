"""anyurl mirror and the download/CLI defects of issue 12, against vsftpd, pyftpdlib,
pygopherd and gophernicus: bytes that arrived, files left alone, exit codes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures import mirror_tree
from fixtures.launcher import Endpoint, Launcher
from fixtures.servers import pyftpdlib_server, vsftpd

from anyurl.client import Client, Limits
from anyurl.transfer.mirror import mirror
from anyurl.urls import FileURL, parse

FTP_SERVERS = ["vsftpd", "pyftpdlib_server"]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2] / "src"),
                                                    os.environ.get("PYTHONPATH", "")])}


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "anyurl", *args], capture_output=True, text=True,
                          timeout=120, env=ENV, cwd=cwd, check=False)


def tree(ep: Endpoint, files: int = 150) -> tuple[str, dict[str, bytes]]:
    root = Path(ep.info["anon_root"]) / "pub" / "mirrortree"
    files_by = mirror_tree.build(root, files)
    return f"ftp://{ep.host}:{ep.port}/pub/mirrortree/", mirror_tree.expected(root, files_by)


@pytest.mark.parametrize("name", FTP_SERVERS)
async def test_mirror_ftp_byte_exact_then_unchanged(servers: Launcher, name: str, tmp_path: Path) -> None:
    url, want = tree(servers.get(name))
    async with Client(limits=Limits(per_host=10)) as client:
        first = await mirror(client, url, tmp_path, parallel=8)
        ok, problems = mirror_tree.compare(tmp_path, want)
        assert problems == [] and ok == len(want)  # CRLF .txt files too: binary always
        assert first.errors == [] and first.files >= len(want)
        again = await mirror(client, url, tmp_path, parallel=8, newer=True)
    assert again.files == 0 and again.unchanged == first.files and again.errors == []
    # nothing outside the target, no part files left
    assert not list(tmp_path.rglob("*.anyurl-part"))  # noqa: ASYNC240


async def test_mirror_never_overwrites_without_force(servers: Launcher, tmp_path: Path) -> None:
    url, want = tree(servers.get("vsftpd"))
    async with Client(limits=Limits(per_host=10)) as client:
        await mirror(client, url, tmp_path)
        victim = tmp_path / "plain 0.bin"
        victim.write_bytes(b"my own edits\n")
        res = await mirror(client, url, tmp_path)
        assert victim.read_bytes() == b"my own edits\n"
        assert [u for u, _ in res.errors] == [url + "plain%200.bin"]
        assert "--force" in str(res.errors[0][1])
        res = await mirror(client, url, tmp_path, force=True)
    assert res.errors == [] and victim.read_bytes() == want["plain 0.bin"]


@pytest.mark.parametrize("name", FTP_SERVERS)
async def test_mirror_round_trips_per_file(servers: Launcher, name: str, tmp_path: Path) -> None:
    # What the server logged: one RETR per file and no stat round trip (the listing gave size
    # and date); TYPE I once per connection where listings need no TYPE A (MLSD, pyftpdlib),
    # and EPSV+RETR pipelined (every RETR still has its EPSV).
    ep = servers.get(name)
    url, want = tree(ep)
    log = ep.info["log"]
    reader = vsftpd.commands if name == "vsftpd" else pyftpdlib_server.commands
    mark = os.path.getsize(log)  # noqa: ASYNC240
    async with Client(limits=Limits(per_host=10)) as client:
        res = await mirror(client, url, tmp_path, parallel=8)
    ok, problems = mirror_tree.compare(tmp_path, want)
    assert problems == [] and res.errors == [] and res.files >= len(want)
    cmds = reader(log, mark)
    logins = cmds.count("USER anonymous")
    retrs = sum(c.startswith("RETR ") for c in cmds)
    # a symlinked file is fetched once and its second name copied (res.copied)
    assert retrs == res.files - res.copied and cmds.count("EPSV") == retrs + sum(c.startswith(("MLSD", "LIST")) for c in cmds)
    assert not any(c.startswith(("MDTM", "MLST ")) for c in cmds)
    assert sum(c.startswith("SIZE") for c in cmds) <= (logins if name == "vsftpd" else retrs)
    if name == "pyftpdlib_server":  # MLSD listings
        # at most once per connection, never per file (a connection that only listed sends none)
        assert 1 <= cmds.count("TYPE I") <= logins < retrs and "TYPE A" not in cmds


async def test_mirror_never_writes_through_a_local_symlink(servers: Launcher, tmp_path: Path) -> None:
    url, want = tree(servers.get("vsftpd"))
    outside, dest = tmp_path / "outside", tmp_path / "dest"
    outside.mkdir()
    dest.mkdir()
    (dest / "dir 0").symlink_to(outside)  # a local symlink where the tree has a directory
    async with Client(limits=Limits(per_host=10)) as client:
        res = await mirror(client, url, dest)
    assert list(outside.iterdir()) == []
    assert [u for u, _ in res.errors] == [url + "dir%200/"]
    assert "not a directory" in str(res.errors[0][1])
    ok, problems = mirror_tree.compare(dest, {k: v for k, v in want.items() if not k.startswith("dir 0/")})
    assert problems == []


async def test_mirror_newer_replaces_an_older_copy(servers: Launcher, tmp_path: Path) -> None:
    url, want = tree(servers.get("vsftpd"))
    async with Client(limits=Limits(per_host=10)) as client:
        await mirror(client, url, tmp_path)
        old = tmp_path / "dir 0" / "space name 1.txt"
        old.write_bytes(b"stale")
        os.utime(old, (1_000_000, 1_000_000))
        res = await mirror(client, url, tmp_path, newer=True)
    assert res.files == 1 and old.read_bytes() == want["dir 0/space name 1.txt"]


async def test_mirror_globs_and_depth(servers: Launcher, tmp_path: Path) -> None:
    url, want = tree(servers.get("vsftpd"))
    async with Client(limits=Limits(per_host=10)) as client:
        res = await mirror(client, url, tmp_path / "a", include=["*.bin"], exclude=["link*"])
        got = {str(p.relative_to(tmp_path / "a")) for p in (tmp_path / "a").rglob("*") if p.is_file()}
        assert got == {k for k in want if k.endswith(".bin") and not k.startswith("link")}
        assert res.excluded == len(want) - len(got)
        await mirror(client, url, tmp_path / "b", max_depth=0)
    files = {str(p.relative_to(tmp_path / "b")) for p in (tmp_path / "b").rglob("*") if p.is_file()}
    assert files == {k for k in want if "/" not in k}


@pytest.mark.parametrize("name", ["pygopherd", "gophernicus"])
async def test_mirror_gopher_menu(servers: Launcher, name: str, tmp_path: Path) -> None:
    ep = servers.get(name)
    async with Client() as client:
        res = await mirror(client, f"gopher://{ep.host}:{ep.port}/1/sub", tmp_path)
    root = Path(ep.info["root"]) / "sub"
    # binary items only: gophernicus serves text with CRLF line ends, whatever the file has
    for f in root.iterdir():
        if f.is_file() and f.suffix in (".bin", ".gif", ".png", ".wav", ".zip"):
            assert (tmp_path / f.name).read_bytes() == f.read_bytes(), f.name
    assert res.errors == []


def test_cli_mirror_summary_and_exit_code(servers: Launcher, tmp_path: Path) -> None:
    url, want = tree(servers.get("vsftpd"))
    proc = run("mirror", url, str(tmp_path / "m"), "--parallel", "6")
    assert proc.returncode == 0, proc.stderr
    assert f"{len(want)} files" in proc.stderr and "0 errors" in proc.stderr
    (tmp_path / "m" / "plain 0.bin").write_bytes(b"changed")
    proc = run("mirror", url, str(tmp_path / "m"))
    assert proc.returncode == 10 and "--force" in proc.stderr
    assert (tmp_path / "m" / "plain 0.bin").read_bytes() == b"changed"


def test_cli_names_decoded_once(servers: Launcher, tmp_path: Path) -> None:
    """ftp://h/.../pct%2541 N.dat names the file "pct%41 N.dat": saved under that name."""
    ep = servers.get("vsftpd")
    url, want = tree(ep)
    rel = next(k for k in want if k.rsplit("/", 1)[-1].startswith("pct%41"))
    name = rel.rsplit("/", 1)[-1]
    quoted = "/".join(seg.replace("%", "%25").replace(" ", "%20") for seg in rel.split("/"))
    proc = run("get", "-O", url + quoted, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / name).read_bytes() == want[rel]


def test_cli_get_d_never_overwrites_and_makes_names_unique(servers: Launcher, tmp_path: Path) -> None:
    ep = servers.get("vsftpd")
    url, want = tree(ep)
    a = url + "plain%200.bin"  # .bin: get's TYPE for .txt is the ftp branch's business
    tails = {}
    for k in want:
        if k.endswith(".bin") and "/" in k and not k.startswith("link"):
            tails.setdefault(k.rsplit("/", 1)[1], []).append(k)
    base, paths = next((n, ps) for n, ps in tails.items() if len(ps) >= 2) if any(
        len(ps) >= 2 for ps in tails.values()) else next(iter(tails.items()))
    same_name = [url + "/".join(seg.replace("%", "%25").replace(" ", "%20") for seg in p.split("/"))
                 for p in paths[:2]]
    out = tmp_path / "out"
    proc = run("get", "-d", str(out), a, *same_name)
    assert proc.returncode == 0, proc.stderr
    if len(same_name) == 2:
        assert "saved as" in proc.stderr and (out / f"{base}.1").exists() and (out / base).exists()
    (out / "plain 0.bin").write_bytes(b"first run's other file\n")
    proc = run("get", "-d", str(out), a)
    assert proc.returncode == 10 and "--force" in proc.stderr
    assert (out / "plain 0.bin").read_bytes() == b"first run's other file\n"
    proc = run("get", "-d", str(out), "--force", a)
    assert proc.returncode == 0 and (out / "plain 0.bin").read_bytes() == want["plain 0.bin"]


def test_cli_get_of_a_directory_is_an_error(servers: Launcher, tmp_path: Path) -> None:
    ep = servers.get("vsftpd")
    url, _ = tree(ep)
    for extra in (["-O"], ["-o", "x.out"], []):
        proc = run("get", *extra, url, cwd=tmp_path)
        assert proc.returncode == 5, proc.stderr
        assert "anyurl ls" in proc.stderr and "anyurl mirror" in proc.stderr
        assert proc.stdout == ""
    assert list(tmp_path.iterdir()) == []


def test_cli_get_input_file(servers: Launcher, tmp_path: Path) -> None:
    ep = servers.get("vsftpd")
    url, want = tree(ep)
    names = [k for k in want if "/" not in k and not k.startswith("link") and not k.endswith(".txt")][:3]
    lst = tmp_path / "urls.txt"
    lst.write_text("# a list\n\n" + "".join(url + n.replace("%", "%25").replace(" ", "%20")
                                             .replace("#", "%23").replace(";", "%3B") + "\n" for n in names))
    proc = run("get", "-i", str(lst), "-d", str(tmp_path / "d"))
    assert proc.returncode == 0, proc.stderr
    for n in names:
        assert (tmp_path / "d" / n).read_bytes() == want[n]


@pytest.mark.parametrize("resume", [False, True])
async def test_mirror_local_name_collision_is_renamed(tmp_path: Path, resume: bool) -> None:
    # "x\x01.txt" becomes the local name "x%01.txt", which a real "x%01.txt" holds already:
    # the second one found is renamed "x%01~2.txt", reported with its Path, and written whole
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    (src / "sub" / "x\x01.txt").write_bytes(b"control")
    (src / "sub" / "x%01.txt").write_bytes(b"percent")
    (src / "sub" / "keep.bin").write_bytes(b"k" * 5000)
    out = tmp_path / "out"
    async with Client() as client:
        res = await mirror(client, src.as_uri() + "/", out, resume=resume, exclude=["*.bin"])
    assert res.ok and res.files == 2 and res.excluded == 1, res.errors
    assert [(type(p), p.parent, p.name) for _, p in res.renamed] == [(type(out), out / "sub", "x%01~2.txt")]
    got = {p.name: p.read_bytes() for p in (out / "sub").iterdir()}
    assert sorted(got) == ["x%01.txt", "x%01~2.txt"] and sorted(got.values()) == [b"control", b"percent"]
    renamed = parse(res.renamed[0][0])
    assert isinstance(renamed, FileURL)
    assert got["x%01~2.txt"] == Path("/" + renamed.path).read_bytes()  # noqa: ASYNC240 - the URL reported is the renamed one


async def test_mirror_colliding_directories_named_in_listing_order(servers: Launcher, tmp_path: Path) -> None:
    # "d.anyurl-part" is saved as "d.anyurl-part_" (never our part-file suffix), the name its
    # sibling has: the one listed first keeps it and the other becomes "d~2.anyurl-part_",
    # whichever listing ends first (was: the quicker listing won, here the one listed second,
    # whose own listing is much shorter); a second run into the same directory finds both
    # unchanged (was: "d~3.anyurl-part_", a new copy, as "d~2..." was on disk)
    ep = servers.get("vsftpd")
    root = Path(ep.info["anon_root"]) / "pub" / f"collide-{os.getpid()}"
    try:
        for d in ("d.anyurl-part", "d.anyurl-part_"):
            (root / d).mkdir(parents=True)
        url = f"ftp://{ep.host}:{ep.port}/pub/{root.name}/"
        async with Client() as client:
            listed = [e.name for e in (await client.fetch(url)).entries or []]
        assert sorted(listed) == ["d.anyurl-part", "d.anyurl-part_"], listed
        first, second = listed
        for i in range(2500):  # a long listing for the first, listed at the same time as the second
            (root / first / f"f{i:04}").touch()
        (root / first / "mark").write_bytes(b"first")
        (root / second / "mark").write_bytes(b"second")
        for attempt in range(3):  # twice into a new directory, then again into the second
            out = tmp_path / f"out{min(attempt, 1)}"
            async with Client() as client:
                res = await mirror(client, url, out, exclude=["f*"])
            assert res.errors == [] and res.excluded == 2500, res.errors
            assert (res.files, res.unchanged) == ((2, 0) if attempt < 2 else (0, 2))
            assert sorted(p.name for p in out.iterdir()) == ["d.anyurl-part_", "d~2.anyurl-part_"]
            assert (out / "d.anyurl-part_" / "mark").read_bytes() == b"first"
            assert (out / "d~2.anyurl-part_" / "mark").read_bytes() == b"second"
            assert [p.name for _, p in res.renamed] == ["d~2.anyurl-part_"]
            assert res.renamed[0][0].rstrip("/") == url + second
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_cli_mirror_of_a_web_page_copies_only_what_lies_below_it(servers: Launcher, tmp_path: Path) -> None:
    # was: "../index.html", "/dir/blob.bin" and "a/../../tmp/x" fetched too, all into DIR's top
    ep = servers.get("nginx")
    www = Path(ep.info["www"])
    site = www / "mirror-scope"
    (site / "sub").mkdir(parents=True, exist_ok=True)
    (site / "index.html").write_text(
        '<a href="../index.html">up</a> <a href="/dir/blob.bin">top</a> <a href="a/../../hello.txt">dots</a>'
        ' <a href="ok.txt">ok</a> <a href="sub/deep.txt">deep</a>\n')
    (site / "ok.txt").write_text("ok\n")
    (site / "sub" / "deep.txt").write_text("deep\n")
    (www / "hello.txt").touch()
    try:
        proc = run("mirror", f"http://{ep.host}:{ep.port}/mirror-scope/", str(tmp_path / "m"))
    finally:
        for f in (site / "sub" / "deep.txt", site / "ok.txt", site / "index.html"):
            f.unlink()
        (site / "sub").rmdir()
        site.rmdir()
    assert proc.returncode == 0, proc.stderr
    got = sorted(str(p.relative_to(tmp_path / "m")) for p in (tmp_path / "m").rglob("*") if p.is_file())
    # not index.html, blob.bin, hello.txt (all above the page); the page itself as "index.html";
    # sub/deep.txt in sub/ (was: deep.txt at DIR's top, as the page listed it)
    assert got == ["index.html", "ok.txt", "sub/deep.txt"], got
    assert (tmp_path / "m" / "sub" / "deep.txt").read_text() == "deep\n"
    assert (tmp_path / "m" / "ok.txt").read_text() == "ok\n"

"""Issue 25 items 3, 4, 9: mirror -c after an interrupted run, server symlinks, local
symlinks in DIR that lead outside it. Against vsftpd (its log says what was sent)."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixtures import mirror_tree
from fixtures.launcher import Endpoint, Launcher
from fixtures.servers import vsftpd

from anyurl.client import Client, Limits
from anyurl.transfer.mirror import mirror

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2] / "src"),
                                                    os.environ.get("PYTHONPATH", "")])}
# vsftpd with xferlog_std_format=NO: 'OK DOWNLOAD: Client "127.0.0.1", "/pub/x", 1234 bytes, ...'
_SENT = re.compile(r'OK DOWNLOAD: Client "[^"]*", "(.*)", (\d+) bytes')


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "anyurl", *args], capture_output=True, text=True,
                          timeout=120, env=ENV, cwd=cwd, check=False)


def sent(log: str, start: int) -> dict[str, int]:
    """{server path: bytes sent} of the downloads vsftpd logged since *start*."""
    with open(log, "rb") as f:
        f.seek(start)
        text = f.read().decode("utf-8", "surrogateescape")
    out: dict[str, int] = {}
    for m in _SENT.finditer(text):
        out[m.group(1)] = out.get(m.group(1), 0) + int(m.group(2))
    return out


def tree(ep: Endpoint, files: int = 150) -> tuple[str, dict[str, bytes]]:
    root = Path(ep.info["anon_root"]) / "pub" / "mirrortree"
    files_by = mirror_tree.build(root, files)
    return f"ftp://{ep.host}:{ep.port}/pub/mirrortree/", mirror_tree.expected(root, files_by)


async def test_mirror_continue_skips_complete_files_and_resumes_the_partial_one(
        servers: Launcher, tmp_path: Path) -> None:
    # an interrupted first run (no -c): most files complete, two missing, one left as a part
    # file. `mirror -c` must send only what is missing: was every file again (RETR of all)
    ep = servers.get("vsftpd")
    url, want = tree(ep)
    out = tmp_path / "m"
    async with Client(limits=Limits(per_host=10)) as client:
        first = await mirror(client, url, out, parallel=4)
        assert first.errors == [] and first.files == len(want)
        gone = ["dir 0/space name 1.txt", "plain 0.bin"]
        for rel in gone:
            (out / rel).unlink()
        partial = "dir 0/pct%41 121.dat"
        body = want[partial]
        (out / partial).unlink()
        (out / "dir 0" / ".pct%41 121.dat.anyurl-part").write_bytes(body[:40])
        log = ep.info["log"]
        mark = os.path.getsize(log)  # noqa: ASYNC240
        again = await mirror(client, url, out, parallel=4, resume=True)
    got = sent(log, mark)
    assert again.errors == [], again.errors
    assert sorted(p.rsplit("/", 1)[1] for p in got) == sorted(r.rsplit("/", 1)[-1] for r in [*gone, partial]), got
    assert sum(got.values()) == sum(len(want[r]) for r in gone) + len(body) - 40
    assert again.files == 3 and again.unchanged == len(want) - 3
    ok, problems = mirror_tree.compare(out, want)
    assert problems == [] and not list(out.rglob("*.anyurl-part"))  # noqa: ASYNC240
    # and a third run sends nothing at all
    mark = os.path.getsize(log)  # noqa: ASYNC240
    async with Client(limits=Limits(per_host=10)) as client:
        third = await mirror(client, url, out, parallel=4, resume=True)
    assert sent(log, mark) == {} and third.unchanged == len(want) and third.files == 0


def test_cli_mirror_continue_sends_nothing_for_a_complete_tree(servers: Launcher, tmp_path: Path) -> None:
    ep = servers.get("vsftpd")
    url, want = tree(ep)
    proc = run("mirror", url, str(tmp_path / "m"))
    assert proc.returncode == 0, proc.stderr
    mark = os.path.getsize(ep.info["log"])
    proc = run("mirror", "-c", url, str(tmp_path / "m"))
    assert proc.returncode == 0, proc.stderr
    assert sent(ep.info["log"], mark) == {}
    assert vsftpd.commands(ep.info["log"], mark).count("RETR") == 0


@pytest.mark.parametrize("resume", [False, True])
async def test_mirror_never_writes_through_a_symlink_to_a_device_or_fifo(
        servers: Launcher, tmp_path: Path, resume: bool) -> None:
    # DIR/plain 0.bin -> /dev/null (outside DIR) and DIR/plain 1.bin... -> a FIFO outside DIR:
    # was: -c streamed the file into them and counted the device "unchanged"
    ep = servers.get("vsftpd")
    url, want = tree(ep)
    out, outside = tmp_path / "m", tmp_path / "outside"
    out.mkdir()
    outside.mkdir()
    fifo = outside / "fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # so that a writer's open would not block
    (out / "plain 0.bin").symlink_to("/dev/null")
    link = "space name 120.txt"
    (out / link).symlink_to(fifo)
    (out / f".{link}.anyurl-part").symlink_to(fifo)
    try:
        async with Client(limits=Limits(per_host=10)) as client:
            res = await mirror(client, url, out, parallel=4, resume=resume)
        try:
            leaked = os.read(reader, 1 << 16)
        except BlockingIOError:
            leaked = b""
    finally:
        os.close(reader)
    assert leaked == b""
    assert sorted(u.rsplit("/", 1)[1] for u, _ in res.errors) == sorted(
        ["plain%200.bin", link.replace(" ", "%20")]), res.errors
    assert all("symlink" in str(e) or "exists" in str(e) for _, e in res.errors), res.errors
    assert res.unchanged == 0 and res.files == len(want) - 2
    assert os.readlink(out / "plain 0.bin") == "/dev/null" and stat.S_ISFIFO(os.stat(fifo).st_mode)


@pytest.mark.parametrize("resume", [[], ["-c"]])
def test_cli_get_d_never_writes_through_a_symlink(servers: Launcher, tmp_path: Path, resume: list[str]) -> None:
    ep = servers.get("vsftpd")
    url, want = tree(ep)
    out = tmp_path / "d"
    out.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "fifo"
    os.mkfifo(target)
    reader = os.open(target, os.O_RDONLY | os.O_NONBLOCK)
    (out / "plain 0.bin").symlink_to(target)
    try:
        proc = run("get", *resume, "-d", str(out), url + "plain%200.bin", url + "hash%2380.txt")
        try:
            leaked = os.read(reader, 1 << 16)
        except BlockingIOError:
            leaked = b""
    finally:
        os.close(reader)
    assert leaked == b""
    assert proc.returncode != 0 and "plain 0.bin" in proc.stderr, proc.stderr
    assert os.readlink(out / "plain 0.bin") == str(target)
    assert (out / "hash#80.txt").read_bytes() == want["hash#80.txt"]
    shutil.rmtree(outside)


@pytest.mark.parametrize("where", ["vsftpd", "file"])
async def test_walk_yields_a_symlinked_file_as_one_resource(servers: Launcher, tmp_path: Path, where: str) -> None:
    # "link to file.bin" -> "plain 0.bin": the same Entry.key (the link's target). Was: two
    # unrelated files, fetched twice by a crawler; now the second is marked same_as the first
    if where == "vsftpd":
        url, want = tree(servers.get("vsftpd"))
    else:
        root = tmp_path / "t"
        want = mirror_tree.expected(root, mirror_tree.build(root, 30))
        url = root.as_uri() + "/"
    async with Client() as client:
        found = [f async for f in client.walk(url)]
        files = [f for f in found if not f.directory]
        plain = next(f for f in files if f.path == ("plain 0.bin",))
        link = next(f for f in files if f.path == ("link to file.bin",))
        assert (plain.same_as, link.same_as) in ((None, plain.url), (link.url, None)), (plain, link)
        assert len([f for f in files if f.same_as is None and f.path != (".tree",)]) == len(want) - 1
        # a mirror still has both names, byte-exact
        res = await mirror(client, url, tmp_path / "m")
    assert res.errors == [] and mirror_tree.compare(tmp_path / "m", want) == (len(want), [])


@pytest.fixture
def linked(servers: Launcher) -> Iterator[tuple[Endpoint, str, Path]]:
    """/pub/links-PID on vsftpd: files, a dangling link, links inside and leading outside."""
    ep = servers.get("vsftpd")
    root = Path(ep.info["anon_root"]) / "pub" / f"links-{os.getpid()}"
    (root / "sub").mkdir(parents=True)
    (root / "f.txt").write_bytes(b"f\n")
    (root / "sub" / "g.txt").write_bytes(b"g\n")
    for name, target in [("to-f", "f.txt"), ("sub/up", "../f.txt"), ("to-sub", "sub"), ("dangling", "nowhere"),
                         ("abs", "/etc/hostname"), ("out", "../../../../etc/hostname"),
                         ("tricky", "sub/../../f.txt"), ("sub/deep-out", "../../f.txt")]:
        (root / name).symlink_to(target)
    for p in (root, root / "sub"):
        p.chmod(0o755)
    try:
        yield ep, f"ftp://{ep.host}:{ep.port}/pub/{root.name}/", root
    finally:
        shutil.rmtree(root, ignore_errors=True)


async def test_mirror_a_dangling_server_symlink_is_reported_not_fatal(
        linked: tuple[Endpoint, str, Path], tmp_path: Path) -> None:
    # was: ResourceNotFound for "dangling" on every run (exit 11)
    _ep, url, _root = linked
    async with Client() as client:
        res = await mirror(client, url, tmp_path / "m")
    # the server's own view: links leading out of its anonymous root lead nowhere too
    assert res.errors == [], res.errors
    assert res.dangling == [url + n for n in ("abs", "dangling", "out", "sub/deep-out", "tricky")], res.dangling
    assert (tmp_path / "m" / "to-f").read_bytes() == b"f\n"  # copy mode: what the link leads to
    assert not (tmp_path / "m" / "to-f").is_symlink()


def test_cli_mirror_keeps_symlinks_confined_to_dir(linked: tuple[Endpoint, str, Path], tmp_path: Path) -> None:
    _ep, url, _root = linked
    out = tmp_path / "m"
    proc = run("mirror", "--symlinks", "keep", url, str(out))
    assert proc.returncode == 0, proc.stderr
    assert (out / "f.txt").read_bytes() == b"f\n" and (out / "sub" / "g.txt").read_bytes() == b"g\n"
    made = {str(p.relative_to(out)): os.readlink(p) for p in out.rglob("*") if p.is_symlink()}
    # a dangling link inside DIR is kept as it is (as lftp does); nothing leads outside DIR
    assert made == {"to-f": "f.txt", "sub/up": "../f.txt", "to-sub": "sub", "dangling": "nowhere"}, made
    for name in ("abs", "out", "tricky", "sub/deep-out"):
        assert f"{name.rsplit('/', 1)[-1]}: symlink not made" in proc.stderr, proc.stderr
    assert "4 symlinks" in proc.stderr
    # a second run: the links are there already (unchanged, no error)
    proc = run("mirror", "--symlinks", "keep", url, str(out))
    assert proc.returncode == 0, proc.stderr


def test_cli_mirror_of_a_web_site_takes_its_page_requisites(servers: Launcher, tmp_path: Path) -> None:
    # nginx: a page with an image, a stylesheet (on the host, above the site), a script and
    # an icon; was: only <a>/<area>/<frame>/<iframe> links followed (the page and page2.html)
    ep = servers.get("nginx")
    www = Path(ep.info["www"])
    site = www / f"req-{os.getpid()}"
    (site / "js").mkdir(parents=True)
    (site / "index.html").write_text(
        '<html><head><title>t</title><link rel="stylesheet" href="s.css"><link rel="icon" href="fav.ico">'
        '<script src="js/app.js"></script></head><body><img src="pic.png" alt="p">'
        '<a href="page2.html">2</a></body></html>\n')
    for name, data in [("s.css", b"body{}\n"), ("fav.ico", b"ico"), ("js/app.js", b"1;\n"), ("pic.png", b"png"),
                       ("page2.html", b"<p>two</p>\n")]:
        (site / name).write_bytes(data)
    url = f"http://{ep.host}:{ep.port}/{site.name}/"
    try:
        proc = run("mirror", url, str(tmp_path / "m"))
        plain = run("mirror", "--no-requisites", url, str(tmp_path / "n"))
    finally:
        shutil.rmtree(site, ignore_errors=True)
    assert proc.returncode == 0 and plain.returncode == 0, (proc.stderr, plain.stderr)
    got = sorted(str(p.relative_to(tmp_path / "m")) for p in (tmp_path / "m").rglob("*") if p.is_file())
    assert got == ["fav.ico", "index.html", "js/app.js", "page2.html", "pic.png", "s.css"], got
    assert (tmp_path / "m" / "js" / "app.js").read_bytes() == b"1;\n"
    got = sorted(str(p.relative_to(tmp_path / "n")) for p in (tmp_path / "n").rglob("*") if p.is_file())
    assert got == ["index.html", "page2.html"], got


async def test_walk_offers_requisites_only_when_asked(servers: Launcher) -> None:
    ep = servers.get("nginx")
    www = Path(ep.info["www"])
    site = www / f"reqw-{os.getpid()}"
    site.mkdir()
    (site / "index.html").write_text('<img src="a.png"><a href="b.html">b</a>\n')
    (site / "a.png").write_bytes(b"a")
    (site / "b.html").write_bytes(b"b")
    url = f"http://{ep.host}:{ep.port}/{site.name}/index.html"
    try:
        async with Client() as client:
            plain = sorted(f.url.rsplit("/", 1)[1] for f in [x async for x in client.walk(url)] if f.depth)
            full = [f async for f in client.walk(url, requisites=True)]
    finally:
        shutil.rmtree(site, ignore_errors=True)
    assert plain == ["b.html"]
    assert sorted(f.url.rsplit("/", 1)[1] for f in full if f.depth) == ["a.png", "b.html"]
    assert [f.entry.meta.get("requisite") for f in full if f.url.endswith("a.png") and f.entry] == ["img"]

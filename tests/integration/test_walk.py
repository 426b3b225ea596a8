"""client.walk against the real servers: vsftpd, pyftpdlib, pygopherd, gophernicus, INN,
nginx, and file: trees; hostile gopher menus (tests/hostile/fakes/gopher_menus.py) for scope
and a tarpit host. Every assertion is about what a crawler would check: what was
found, how many times, and what was never touched."""

from __future__ import annotations

import os
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixtures import mirror_tree
from fixtures.launcher import Endpoint, Launcher
from fixtures.servers import inn, vsftpd
from tests.hostile.fakes.gopher_menus import gopher_menus

from anyurl.client import Client, Limits, Timeouts
from anyurl.transfer.walk import Found
from anyurl.urls import parse

FTP_SERVERS = ["vsftpd", "pyftpdlib_server"]
GOPHER_SERVERS = ["pygopherd", "gophernicus"]


async def collect(url: str, **kw: object) -> list[Found]:
    async with Client(timeouts=Timeouts(connect=5, read=10)) as client:
        return [f async for f in client.walk(url, **kw)]  # type: ignore[arg-type]


def ftp_tree(ep: Endpoint, files: int = 120) -> tuple[Path, dict[str, bytes]]:
    root = Path(ep.info["anon_root"]) / "pub" / "walktree"
    return root, mirror_tree.build(root, files)


def local_dirs(root: Path) -> set[str]:
    """Relative paths of the real directories (not through symlinks) under *root*."""
    out = set()
    for base, dirs, _ in os.walk(root):
        for d in dirs:
            p = Path(base) / d
            if not p.is_symlink():
                out.add(str(p.relative_to(root)))
    return out


@pytest.mark.parametrize("name", FTP_SERVERS)
async def test_walk_ftp_tree_finds_every_file_once(servers: Launcher, name: str) -> None:
    ep = servers.get(name)
    root, files = ftp_tree(ep)
    found = await collect(f"ftp://{ep.host}:{ep.port}/pub/walktree/")
    keys = Counter(parse(f.url).__str__() for f in found)
    assert max(keys.values()) == 1, [k for k, n in keys.items() if n > 1][:5]
    paths = {"/".join(f.path) for f in found if not f.directory}
    # every regular file, under its decoded name (%, #, ;, spaces, unicode)
    assert set(files) <= paths, sorted(set(files) - paths)[:5]
    dirs = {"/".join(f.path) for f in found if f.directory and f.same_as is None and f.path}
    assert local_dirs(root) <= dirs
    assert not any(f.error for f in found), [f.error for f in found if f.error]
    # the loop link (dir 0/loop -> ..) is never walked into
    assert not any(len(f.path) > 1 and f.path[1] == "loop" and len(f.path) > 2 for f in found)
    if name == "vsftpd":  # LIST shows "-> target": both symlinked directories are recognised
        aliases = {"/".join(f.path): f.same_as for f in found if f.same_as}
        assert aliases["link to dir"].endswith("/pub/walktree/dir%200")
        assert aliases["dir 0/loop"].endswith("/pub/walktree")
        assert not any(f.path[:1] == ("link to dir",) and len(f.path) > 1 for f in found)


async def test_walk_ftp_breadth_first_and_max_depth(servers: Launcher) -> None:
    ep = servers.get("vsftpd")
    ftp_tree(ep)
    url = f"ftp://{ep.host}:{ep.port}/pub/walktree/"
    found = await collect(url, per_host=1)
    depths = [f.depth for f in found if f.directory and f.same_as is None]
    assert depths == sorted(depths)  # one worker: directories listed level by level
    shallow = await collect(url, max_depth=1)
    assert {f.depth for f in shallow} == {0, 1}
    assert {f.url for f in shallow if f.depth == 1} == {f.url for f in found if f.depth == 1}
    assert [f.url for f in await collect(url, max_depth=0)] == [url]


async def test_walk_ftp_listings_each_once(servers: Launcher) -> None:
    """One LIST per directory: files are never opened, links are probed by CWD."""
    ep = servers.get("vsftpd")
    root, _ = ftp_tree(ep)
    mark = Path(ep.info["log"]).stat().st_size  # noqa: ASYNC240
    await collect(f"ftp://{ep.host}:{ep.port}/pub/walktree/", per_host=1)
    cmds = vsftpd.commands(ep.info["log"], mark)
    assert not [c for c in cmds if c.startswith("RETR")]
    assert len([c for c in cmds if c.startswith("LIST")]) == len(local_dirs(root)) + 1


@pytest.mark.parametrize("name", GOPHER_SERVERS)
async def test_walk_gopher_hole_of_500_items(servers: Launcher, name: str) -> None:
    """500 items in 10 menus, a parent link, a self link and an h item pointing at
    file:///etc/passwd: everything found once, nothing local touched, no loop."""
    ep = servers.get(name)
    root = Path(ep.info["root"]) / "walk"
    for d in range(10):
        sub = root / "a" / f"d{d}"
        sub.mkdir(parents=True, exist_ok=True)
        for i in range(49):
            (sub / f"f{i:02d}.txt").write_bytes(f"item {d}/{i}\n".encode())
    (root / "gophermap").write_text(
        "iWalk test\tfake\t(NULL)\t0\n"
        "1Up to the top\t/\n"
        "1This menu again\t/walk\n"
        "hThe password file\tURL:file:///etc/passwd\n"
        "1Level a\t/walk/a\n")
    for base, _dirs, fs in os.walk(root):
        os.chmod(base, 0o755)
        for f in fs:
            os.chmod(os.path.join(base, f), 0o644)
    start = f"gopher://{ep.host}:{ep.port}/1/walk"
    for cross in (False, True):
        found = await collect(start, cross_scheme=cross)
        urls = Counter(f.url for f in found)
        assert max(urls.values()) == 1
        assert not [f for f in found if f.url.startswith("file:")]
        below = [f for f in found if f.depth >= 2]
        assert len(below) == 500, len(below)  # 10 menus + 490 files
        assert len([f for f in below if not f.directory]) == 490
        assert not [f for f in found if parse(f.url).selector in ("", "/")]  # type: ignore[attr-defined]


@pytest.fixture
def walk_inn(servers: Launcher) -> Iterator[Endpoint]:
    """INN for the news walk. Its groups are made with this machine's ctlinnd, which reaches
    only a local innd: in compose mode the test runs its own INN as a local process."""
    if not servers.compose:
        yield servers.get("inn")
        return
    local = Launcher()
    local.compose = False
    try:
        yield local.get("inn")
    finally:
        local.stop_all()
        local.remove()


async def test_walk_news_three_groups_with_crossposts(walk_inn: Endpoint) -> None:
    """300 articles in three groups, 60 of them cross-posted: each found once (message-id)."""
    ep = walk_inn
    tag = uuid.uuid4().hex[:8]
    prefix = f"{ep.info['prefix']}.walk{tag}"
    groups = [f"{prefix}.g{i}" for i in range(3)]
    for g in groups:
        inn.new_group(g)
    arts = []
    counts = Counter[str]()
    for i in range(300):
        home = groups[i % 3]
        newsgroups = home if i % 5 else f"{home},{groups[(i + 1) % 3]}"
        for g in newsgroups.split(","):
            counts[g] += 1
        arts.append(inn.article(newsgroups, f"<w{i}.{tag}@{inn.DOMAIN}>", f"Walk article {i}", f"body {i}\n"))
    inn.inject(arts, dict(counts))
    found = await collect(f"nntp://{ep.host}:{ep.port}/",
                          follow=lambda e: e.kind != "group" or e.name.startswith(prefix))
    articles = [f for f in found if f.entry is not None and f.entry.kind == "article"]
    ids = Counter(f.entry.meta["message_id"] for f in articles if f.entry is not None)
    assert len(ids) == 300 and max(ids.values()) == 1
    assert sum(counts.values()) == 360  # the listings did repeat 60 of them
    assert {f.name for f in found if f.entry is not None and f.entry.kind == "group"} == set(groups)
    # an article's name is its number in the group, its key the message-id the listings share
    for f in articles:
        assert f.entry is not None and f.entry.name == str(f.entry.meta["number"])
        assert f.entry.key == "news:" + f.entry.meta["message_id"][1:-1] and f.entry.title
    async with Client() as client:
        listed = [(await client.fetch(f"nntp://{ep.host}:{ep.port}/{g}")).entries or [] for g in groups[:2]]
    shared = {e.key for e in listed[0]} & {e.key for e in listed[1]}
    assert len(shared) == 20  # posted to g0 and cross-posted to g1: one key in both listings
    assert not {e.url for e in listed[0]} & {e.url for e in listed[1]}  # under two URLs


async def test_walk_http_start_page_is_one_resource(servers: Launcher) -> None:
    ep = servers.get("nginx")
    found = await collect(f"http://{ep.host}:{ep.port}/")
    assert len(found) == 1 and found[0].depth == 0 and found[0].error is None


async def test_walk_robots_txt_and_file_scope(servers: Launcher, tmp_path: Path) -> None:
    """Gopher h items lead to nginx pages (cross_scheme=True): robots.txt keeps the
    crawler out of /private/; file: URLs are never followed from a remote menu."""
    ep = servers.get("nginx")
    www = Path(ep.info["www"])
    (www / "robots.txt").write_text("User-agent: *\nDisallow: /private/\n")
    os.chmod(www / "robots.txt", 0o644)
    base = f"http://{ep.host}:{ep.port}"
    menu = (f"hPublic\tURL:{base}/hello.txt\t127.0.0.1\t70\r\n"
            f"hPrivate\tURL:{base}/private/secret.txt\t127.0.0.1\t70\r\n"
            "hLocal\tURL:file:///etc/passwd\t127.0.0.1\t70\r\n.\r\n").encode()
    with gopher_menus({"": menu}) as g:
        found = await collect(f"gopher://127.0.0.1:{g.port}/", cross_scheme=True)
    urls = {f.url for f in found}
    assert f"{base}/hello.txt" in urls
    assert f"{base}/private/secret.txt" not in urls
    assert not [u for u in urls if u.startswith("file:")]


async def test_walk_tarpit_host_does_not_stall_healthy_host(servers: Launcher) -> None:
    """One menu leads to a host that never answers and to a real gopher server: the
    real server's 1000 items are all found long before the tarpit's read timeout."""
    real = servers.get("pygopherd")
    with gopher_menus({}, host="127.0.0.2", tarpit=True) as tarpit:
        menu = (f"1Tarpit\t/slow\t127.0.0.2\t{tarpit.port}\r\n"
                f"1Tarpit two\t/slow2\t127.0.0.2\t{tarpit.port}\r\n"
                f"1Many\t/many\t{real.host}\t{real.port}\r\n.\r\n").encode()
        with gopher_menus({"": menu}) as start:
            t0 = time.monotonic()
            healthy_done = None
            healthy = 0
            found: list[Found] = []
            async with Client(timeouts=Timeouts(connect=5, read=6)) as client:
                async for f in client.walk(f"gopher://127.0.0.1:{start.port}/", same_host=False):
                    found.append(f)
                    if f.url.startswith(f"gopher://{real.host}:{real.port}/0/many/"):
                        healthy += 1
                        if healthy == 1000:
                            healthy_done = time.monotonic() - t0
            total = time.monotonic() - t0
    assert healthy_done is not None and healthy_done < 5, healthy_done
    slow = [f for f in found if "127.0.0.2" in f.url]
    assert len(slow) == 2 and all(f.error is not None for f in slow)
    assert total >= 5  # the tarpit was waited for, but only by its own queue


async def test_walk_per_host_delay(servers: Launcher) -> None:
    ep = servers.get("vsftpd")
    ftp_tree(ep)
    t0 = time.monotonic()
    found = await collect(f"ftp://{ep.host}:{ep.port}/pub/walktree/", max_depth=2, delay=0.1)
    listed = len([f for f in found if f.directory and f.depth < 2 and f.same_as is None])
    assert time.monotonic() - t0 >= 0.1 * (listed - 1)


async def test_walk_file_tree_symlink_loops(tmp_path: Path) -> None:
    files = mirror_tree.build(tmp_path / "t", 30)
    found = await collect((tmp_path / "t").as_uri() + "/")
    assert {"/".join(f.path) for f in found if not f.directory} >= set(files)
    assert {"/".join(f.path) for f in found if f.same_as and f.directory} == {"link to dir", "dir 0/loop"}
    # and the file link: one resource with its target (issue 25 item 4)
    assert {"/".join(f.path) for f in found if f.same_as and not f.directory} <= {"link to file.bin", "plain 0.bin"}


async def test_walk_limits_and_pool(servers: Launcher) -> None:
    """A walk and its listings share the Client's per-host connection slots."""
    ep = servers.get("vsftpd")
    ftp_tree(ep)
    async with Client(limits=Limits(per_host=1)) as client:
        n = len([f async for f in client.walk(f"ftp://{ep.host}:{ep.port}/pub/walktree/", per_host=3)])
    assert n > 100

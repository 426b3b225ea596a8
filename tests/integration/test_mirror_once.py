"""A mirror transfers each remote file once, even under two names: a directory's page as
``DIR/`` and ``DIR/index.html`` (nginx's access log), a symlinked file and its target (vsftpd's
log), with and without ``--state``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixtures import crawl_site
from fixtures.launcher import Endpoint, Launcher
from fixtures.servers import vsftpd

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2] / "src"),
                                                    os.environ.get("PYTHONPATH", "")])}


def run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "anyurl", *args], capture_output=True, text=True,
                          timeout=timeout, env=ENV, check=False)


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.fixture
def site(servers: Launcher) -> tuple[Endpoint, str, dict[str, bytes]]:
    ep = servers.get("nginx")
    name = f"twin-{uuid.uuid4().hex[:8]}"
    root = Path(ep.info["www"]) / name
    files = crawl_site.build(root, pages=20)
    # the top page also links "sub1/index.html", met before any page's "sub1/" (and pages link
    # "index.html", the start's own page)
    files["index.html"] = files["index.html"].replace(b"</body>", b'<a href="sub1/index.html">s</a></body>')
    (root / "index.html").write_bytes(files["index.html"])
    yield ep, name, files
    shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize("state", [False, True])
def test_mirror_fetches_a_directory_page_once_under_its_two_urls(site: tuple[Endpoint, str, dict[str, bytes]],
                                                                 tmp_path: Path, state: bool) -> None:
    ep, name, files = site
    extra = ["--state", str(tmp_path / "s.sqlite")] if state else []
    proc = run("mirror", *extra, f"http://{ep.host}:{ep.port}/{name}/", str(tmp_path / "m"))
    assert proc.returncode == 0, proc.stderr
    assert tree(tmp_path / "m") == files
    got = Counter(crawl_site.gets(ep.info["access_log"], f"/{name}/"))
    assert not {p: n for p, n in got.items() if n > 1}, got
    # each directory's page once, under the URL met first: "/name/" (the start), "sub1/index.html"
    # (the top page's link) and "sub0/" (a page's link)
    assert got[f"/{name}/"] == 1 and got[f"/{name}/index.html"] == 0
    assert got[f"/{name}/sub1/index.html"] == 1 and got[f"/{name}/sub1/"] == 0
    assert got[f"/{name}/sub0/"] == 1 and got[f"/{name}/sub0/index.html"] == 0


@pytest.fixture
def linked(servers: Launcher) -> Iterator[tuple[Endpoint, str, Path]]:
    """/pub/once-TAG on vsftpd: files, symlinks to them met before and after them in the walk
    (one at the top to a file three levels down), and a link to a file outside the tree."""
    ep = servers.get("vsftpd")
    tag = uuid.uuid4().hex[:8]
    pub = Path(ep.info["anon_root"]) / "pub"
    root = pub / f"once-{tag}"
    (root / "sub" / "deeper").mkdir(parents=True)
    (root / "f.txt").write_bytes(b"f\r\n" * 100)
    (root / "sub" / "g.bin").write_bytes(bytes(range(256)) * 4)
    (root / "sub" / "deeper" / "h.bin").write_bytes(b"h" * 3000)
    (pub / f"outside-{tag}.bin").write_bytes(b"outside\n")
    for name, target in [("to-f", "f.txt"), ("sub/up", "../f.txt"), ("z-g", "sub/g.bin"),
                         ("a-deep", "sub/deeper/h.bin"), ("out", f"../outside-{tag}.bin")]:
        (root / name).symlink_to(target)
    for p in (root, root / "sub", root / "sub" / "deeper"):
        p.chmod(0o755)
    for p in [*root.rglob("*"), pub / f"outside-{tag}.bin"]:
        if p.is_file() and not p.is_symlink():
            p.chmod(0o644)
    try:
        yield ep, f"ftp://{ep.host}:{ep.port}/pub/{root.name}/", root
    finally:
        shutil.rmtree(root, ignore_errors=True)
        (pub / f"outside-{tag}.bin").unlink(missing_ok=True)


def retrs(log: str, start: int) -> Counter[str]:
    """The names vsftpd was asked to RETR since *start* (the last path segment)."""
    return Counter(c[5:].rsplit("/", 1)[-1] for c in vsftpd.commands(log, start) if c.startswith("RETR "))


@pytest.mark.parametrize("state", [False, True])
def test_mirror_fetches_a_symlinked_file_once_and_copies_it(linked: tuple[Endpoint, str, Path], tmp_path: Path,
                                                            state: bool) -> None:
    ep, url, root = linked
    extra = ["--state", str(tmp_path / "s.sqlite")] if state else []
    out = tmp_path / "m"
    mark = os.path.getsize(ep.info["log"])
    proc = run("mirror", *extra, url, str(out))
    assert proc.returncode == 0, proc.stderr
    want = {"f.txt": (root / "f.txt").read_bytes(), "sub/g.bin": (root / "sub/g.bin").read_bytes(),
            "sub/deeper/h.bin": (root / "sub/deeper/h.bin").read_bytes()}
    want.update({"to-f": want["f.txt"], "sub/up": want["f.txt"], "z-g": want["sub/g.bin"],
                 "a-deep": want["sub/deeper/h.bin"], "out": b"outside\n"})
    assert tree(out) == want  # every name, byte-exact, as copies (no symlink made)
    assert not [p for p in out.rglob("*") if p.is_symlink()]
    got = retrs(ep.info["log"], mark)
    # one transfer per file: its second names are copies; "out" leads outside the tree: fetched
    assert got["f.txt"] + got["to-f"] + got["up"] == 1, got
    assert got["g.bin"] + got["z-g"] == 1 and got["h.bin"] + got["a-deep"] == 1, got
    assert got["out"] == 1 and sum(got.values()) == 4, got
    # a second run: nothing new to write
    mark = os.path.getsize(ep.info["log"])
    again = run("mirror", *extra, url, str(out)) if not state else None
    if again is not None:
        assert again.returncode == 0, again.stderr
        assert " 0 files " in again.stderr, again.stderr
        assert tree(out) == want


@pytest.mark.parametrize("state", [False, True])
def test_mirror_keeps_symlinks_and_fetches_their_targets_once(linked: tuple[Endpoint, str, Path],
                                                              tmp_path: Path, state: bool) -> None:
    ep, url, root = linked
    out = tmp_path / "m"
    mark = os.path.getsize(ep.info["log"])
    extra = ["--state", str(tmp_path / "s.sqlite")] if state else []
    proc = run("mirror", *extra, "--symlinks", "keep", url, str(out))
    assert proc.returncode == 0, proc.stderr
    made = {str(p.relative_to(out)): os.readlink(p) for p in out.rglob("*") if p.is_symlink()}
    assert made == {"to-f": "f.txt", "sub/up": "../f.txt", "z-g": "sub/g.bin", "a-deep": "sub/deeper/h.bin"}
    assert (out / "a-deep").read_bytes() == (root / "sub/deeper/h.bin").read_bytes()
    assert retrs(ep.info["log"], mark) == Counter({"f.txt": 1, "g.bin": 1, "h.bin": 1})

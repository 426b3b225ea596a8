"""Issue 30 part 3 and issue 33 item 2: `anyurl mirror` of a web site takes every page requisite
`wget -p` takes (and SVG, <object>, srcset, CSS url()/@import in linked sheets, <style> and
style=), against nginx, compared with what wget itself saves from the same site; and a
directory's page is one file, index.html, however it is linked."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixtures import requisite_site
from fixtures.launcher import Endpoint, Launcher

from anyurl.client import Client
from anyurl.transfer.mirror import mirror

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2] / "src"),
                                                    os.environ.get("PYTHONPATH", "")])}


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "anyurl", *args], capture_output=True, text=True,
                          timeout=120, env=ENV, check=False)


def files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


@pytest.fixture
def site(servers: Launcher) -> Iterator[tuple[Endpoint, str]]:
    ep = servers.get("nginx")
    root = Path(ep.info["www"]) / f"requisites-{os.getpid()}"
    requisite_site.write(root)
    try:
        yield ep, root.name
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_cli_mirror_saves_every_requisite_kind(site: tuple[Endpoint, str], tmp_path: Path) -> None:
    # was: 12 of the site's files (img src, link, script, the pages); the rest, found only
    # through srcset, CSS, <video>/<audio>/<track>, <object>/<embed>, SVG, background=,
    # <base href>, were never fetched
    ep, name = site
    proc = run("mirror", f"http://{ep.host}:{ep.port}/{name}/", str(tmp_path / "m"))
    assert proc.returncode == 0, proc.stderr
    want = set(requisite_site.FILES) - set(requisite_site.NOT_LINKED)
    assert files(tmp_path / "m") == want
    for path in want:
        assert (tmp_path / "m" / path).read_bytes() == requisite_site.FILES[path], path


@pytest.mark.skipif(shutil.which("wget") is None, reason="wget is not installed")
def test_mirror_saves_at_least_what_wget_p_saves(site: tuple[Endpoint, str], tmp_path: Path) -> None:
    ep, name = site
    url = f"http://{ep.host}:{ep.port}/{name}/"
    proc = subprocess.run(["wget", "-q", "-r", "-p", "-np", "-nH", "-e", "robots=off", "-P", str(tmp_path / "w"),
                           url], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    theirs = {p.split("/", 1)[1] for p in files(tmp_path / "w")}  # under name/
    assert len(theirs) >= 12  # wget found the usual ones, so the comparison means something
    ours = run("mirror", url, str(tmp_path / "m"))
    assert ours.returncode == 0, ours.stderr
    assert theirs <= files(tmp_path / "m"), sorted(theirs - files(tmp_path / "m"))


async def test_a_directory_page_is_one_file_however_it_is_linked(servers: Launcher, tmp_path: Path) -> None:
    # issue 33 item 2: /mini/ and its link to /mini/index.html were saved as "index" and
    # "index.html", the same page twice; a link to "sub/" made a file "sub" beside sub/x.txt
    ep = servers.get("nginx")
    root = Path(ep.info["www"]) / f"mini-{os.getpid()}"
    (root / "sub").mkdir(parents=True)
    (root / "index.html").write_text('<a href="index.html">me</a> <a href="./">me too</a> <a href="sub/">sub</a>\n')
    (root / "sub" / "index.html").write_text('<a href="x.txt">x</a>\n')
    (root / "sub" / "x.txt").write_text("x\n")
    for p in (root, root / "sub", root / "index.html", root / "sub" / "index.html", root / "sub" / "x.txt"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    try:
        async with Client() as client:
            result = await mirror(client, f"http://{ep.host}:{ep.port}/{root.name}/", tmp_path / "m")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    assert result.errors == [] and result.renamed == []
    assert files(tmp_path / "m") == {"index.html", "sub/index.html", "sub/x.txt"}
    assert (tmp_path / "m" / "index.html").read_text().startswith('<a href="index.html">')


def _refusal(d: Path) -> str | None:
    """Why a file cannot be made in *d* (its strerror), or None when it can."""
    probe = d / f".probe-{os.getpid()}"
    try:
        probe.touch()
    except OSError as exc:
        return exc.strerror
    probe.unlink()
    return None


@pytest.fixture
def unwritable(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A directory this process cannot write in, and the error the system gives: its mode
    for a user; for root (whom the mode does not stop), the immutable flag, else (a file
    system without it) sysfs, which refuses new files to root too."""
    d = tmp_path / "ro"
    d.mkdir()
    if os.geteuid() != 0:
        d.chmod(0o555)
        try:
            yield d, _refusal(d) or "?"
        finally:
            d.chmod(0o755)
        return
    if shutil.which("chattr") and subprocess.run(["chattr", "+i", str(d)], capture_output=True,
                                                 check=False).returncode == 0:
        try:
            yield d, _refusal(d) or "?"
        finally:
            subprocess.run(["chattr", "-i", str(d)], capture_output=True, check=False)
        return
    sysfs = Path("/sys/kernel")
    why = _refusal(sysfs) if sysfs.is_dir() else None
    if why is None:
        pytest.skip("root, with no immutable flag here and no read-only sysfs")
    yield sysfs, why


def test_mirror_into_a_directory_it_cannot_write_stops_before_the_first_request(
        servers: Launcher, unwritable: tuple[Path, str]) -> None:
    # issue 33 item 3: was 123 requests and 93 errors, one per file; now one error, no request
    ep = servers.get("nginx")
    target, why = unwritable
    before = list(target.iterdir())
    log = Path(ep.info["access_log"])
    size = log.stat().st_size
    proc = run("mirror", f"http://{ep.host}:{ep.port}/dir/", str(target))
    assert proc.returncode == 10
    assert proc.stderr.splitlines() == [
        f"anyurl: http://{ep.host}:{ep.port}/dir/: cannot write in directory {target}: {why}"]
    with log.open("rb") as f:
        f.seek(size)
        assert b"/dir/" not in f.read()
    assert list(target.iterdir()) == before

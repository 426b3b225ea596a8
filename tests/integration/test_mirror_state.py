"""``anyurl mirror --state`` with -c, -N, --include/--exclude and --symlinks keep (vsftpd): each
combination killed with SIGKILL mid-way and run again ends with the tree the combination asks
for, and vsftpd's log shows no file sent twice except those in flight at the kill."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import sys
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixtures import mirror_tree
from fixtures.launcher import Endpoint, Launcher
from fixtures.servers import vsftpd
from tests.procs import arun, aspawn

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2] / "src"),
                                                    os.environ.get("PYTHONPATH", "")])}
PARALLEL = 2
_SENT = re.compile(r'OK DOWNLOAD: Client "[^"]*", "(.*)", (\d+) bytes')


def files(root: Path) -> dict[str, bytes]:
    """Regular files below *root* (symlinks neither followed nor listed; no part files)."""
    out = {}
    for base, _dirs, names in os.walk(root):
        for n in names:
            p = Path(base) / n
            if not p.is_symlink():
                out[str(p.relative_to(root))] = p.read_bytes()
    return out


def links(root: Path) -> dict[str, str]:
    return {str(Path(b, n).relative_to(root)): os.readlink(Path(b, n))
            for b, ds, ns in os.walk(root) for n in ds + ns if Path(b, n).is_symlink()}


def retrs(log: str, start: int) -> Counter[str]:
    return Counter(c[5:].rsplit("/", 1)[-1] for c in vsftpd.commands(log, start) if c.startswith("RETR "))


def log_size(ep: Endpoint) -> int:
    return os.path.getsize(ep.info["log"])


def sent_bytes(log: str, start: int, suffix: str) -> list[int]:
    """The bytes of each whole download of a path ending in *suffix* vsftpd logged since *start*."""
    with open(log, "rb") as f:
        f.seek(start)
        text = f.read().decode(errors="replace")
    return [int(m.group(2)) for m in _SENT.finditer(text) if m.group(1).endswith(suffix)]


def leaf(rel: str) -> str:
    """A file's name as vsftpd logs it (each byte of a UTF-8 character a "?")."""
    return "".join(chr(b) if b < 0x80 else "?" for b in rel.rsplit("/", 1)[-1].encode())


def _done(out: Path) -> int:
    return sum(1 for _b, _d, ns in os.walk(out) for n in ns if not n.endswith(".anyurl-part"))


async def mirror_killed(argv: list[str], out: Path, after: int) -> None:
    """Run *argv*; SIGKILL it once *after* more files are in *out* than at the start."""
    start = _done(out)
    async with aspawn(argv, env=ENV, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE) as proc:
        async with asyncio.timeout(120):
            while _done(out) < start + after:  # noqa: ASYNC110 - polling the files a child writes
                assert proc.returncode is None, "the mirror ended before the kill"
                await asyncio.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        await proc.wait()


@pytest.fixture
def ftp_tree(servers: Launcher) -> Iterator[tuple[Endpoint, str, Path, dict[str, bytes]]]:
    ep = servers.get("vsftpd")
    root = Path(ep.info["anon_root"]) / "pub" / f"mstate-{uuid.uuid4().hex[:8]}"
    built = mirror_tree.build(root, 40)
    try:
        yield ep, f"ftp://{ep.host}:{ep.port}/pub/{root.name}/", root, mirror_tree.expected(root, built)
    finally:
        shutil.rmtree(root, ignore_errors=True)


COMBOS = {
    "exclude": (["--exclude", "*.txt"], lambda rel: not rel.endswith(".txt")),
    "include+keep": (["--include", "*.bin", "--include", "*.dat", "--symlinks", "keep"],
                     lambda rel: rel.endswith((".bin", ".dat")) and rel != "link to file.bin"),
}


@pytest.mark.parametrize("combo", sorted(COMBOS))
async def test_mirror_state_with_filters_killed_and_run_again(ftp_tree: tuple[Endpoint, str, Path, dict[str, bytes]],
                                                              tmp_path: Path, combo: str) -> None:
    ep, url, _root, want = ftp_tree
    options, keep = COMBOS[combo]
    out = tmp_path / "m"
    argv = [sys.executable, "-m", "anyurl", "mirror", "--state", str(tmp_path / "s.sqlite"), "--parallel",
            str(PARALLEL), "--delay", "0.03", *options, url, str(out)]
    mark = log_size(ep)
    await mirror_killed(argv, out, 6)
    code, _, err = await arun(argv, within=120, env=ENV)
    assert code == 0, err
    expect = {rel: data for rel, data in want.items() if keep(rel)}
    assert files(out) == expect
    got = retrs(ep.info["log"], mark)
    names = {leaf(rel) for rel in expect}
    left_out = {leaf(rel) for rel in want if not keep(rel)} - names
    assert set(got) <= names and not set(got) & left_out, set(got) - names  # nothing left out was fetched
    twice = {n: c for n, c in got.items() if c > 1}
    assert len(twice) <= PARALLEL and all(c == 2 for c in twice.values()), twice
    if "keep" in options:  # the server's symlinks as local ones, nothing fetched through them
        assert links(out) == {"link to file.bin": "plain 0.bin", "link to dir": "dir 0", "dir 0/loop": ".."}
    assert "mirrored" in err.decode() and " 0 errors" in err.decode()


async def test_mirror_state_newer_killed_and_run_again_fetches_only_what_changed(
        ftp_tree: tuple[Endpoint, str, Path, dict[str, bytes]], tmp_path: Path) -> None:
    ep, url, root, want = ftp_tree
    out = tmp_path / "m"
    code, _, err = await arun([sys.executable, "-m", "anyurl", "mirror", url, str(out)], within=120, env=ENV)
    assert code == 0, err
    gone = sorted(want)[::2]  # half the local copies removed, one remote file changed
    for rel in gone:
        (out / rel).unlink()
    changed = next(rel for rel in sorted(want)[1::2] if "/" in rel)
    (root / changed).write_bytes(b"changed on the server\n" * 3)
    want = {**want, changed: (root / changed).read_bytes()}
    argv = [sys.executable, "-m", "anyurl", "mirror", "-N", "--state", str(tmp_path / "s.sqlite"), "--parallel",
            str(PARALLEL), "--delay", "0.03", url, str(out)]
    mark = log_size(ep)
    await mirror_killed(argv, out, 5)
    code, _, err = await arun(argv, within=120, env=ENV)
    assert code == 0, err
    assert files(out) == want
    got = retrs(ep.info["log"], mark)
    fetchable = {leaf(rel) for rel in [*gone, changed]}
    assert set(got) <= fetchable, set(got) - fetchable  # nothing up to date was sent
    assert {leaf(rel) for rel in gone if rel != "link to file.bin"} <= set(got)
    twice = {n: c for n, c in got.items() if c > 1}
    assert len(twice) <= PARALLEL, twice


async def test_mirror_state_continue_resumes_a_partial_file_after_a_kill(servers: Launcher, tmp_path: Path) -> None:
    ep = servers.get("vsftpd")
    root = Path(ep.info["anon_root"]) / "pub" / f"mcont-{uuid.uuid4().hex[:8]}"
    root.mkdir(parents=True)
    big = bytes((n * 7 + n // 4096) % 256 for n in range(8 << 20))
    (root / "big.bin").write_bytes(big)
    for i in range(30):
        (root / f"f{i:02}.bin").write_bytes(bytes([i]) * (2000 + i))
    for p in [root, *root.iterdir()]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    url = f"ftp://{ep.host}:{ep.port}/pub/{root.name}/"
    out = tmp_path / "m"
    out.mkdir()
    (out / ".big.bin.anyurl-part").write_bytes(big[: 3 << 20])  # an earlier -c run's part file
    argv = [sys.executable, "-m", "anyurl", "mirror", "-c", "--state", str(tmp_path / "s.sqlite"), "--parallel",
            str(PARALLEL), "--delay", "0.03", url, str(out)]
    mark = log_size(ep)
    try:
        await mirror_killed(argv, out, 4)
        code, _, err = await arun(argv, within=120, env=ENV)
        assert code == 0, err
        assert files(out) == {p.name: p.read_bytes() for p in root.iterdir()}
        cmds = vsftpd.commands(ep.info["log"], mark)
        rests = [int(c[5:]) for c in cmds if c.startswith("REST ")]
        assert rests and min(rests) >= 3 << 20, cmds  # continued from the part file, never from 0
        sent = sent_bytes(ep.info["log"], mark, "/big.bin")
        assert sent and sum(sent) <= len(big) - (3 << 20), sent
        got = retrs(ep.info["log"], mark)
        assert len({n: c for n, c in got.items() if c > 1}) <= PARALLEL, got
    finally:
        shutil.rmtree(root, ignore_errors=True)

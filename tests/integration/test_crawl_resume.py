"""``anyurl crawl --state``: killed with SIGKILL at many points and started again, a crawl of a
web site (nginx), an FTP tree (vsftpd), a gopher hole (gophernicus) and a news group (INN)
ends with the very files of a crawl never interrupted, and the servers' logs show no URL
fetched twice except those in flight at a kill (never one the crawl had reported done)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import sys
import uuid
from collections import Counter
from pathlib import Path
from urllib.parse import unquote

import pytest
from fixtures import crawl_site, mirror_tree
from fixtures.launcher import Launcher
from fixtures.servers import vsftpd
from tests.procs import aspawn
from tests.taps import Tap

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2] / "src"),
                                                    os.environ.get("PYTHONPATH", "")])}
PARALLEL = 4
DONE_EVENTS = ("fetched", "listed", "skipped", "error")


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


async def crawl(seeds: list[str], dest: Path, state: Path, stop_after: int | None = None
                ) -> tuple[int | None, list[dict[str, object]]]:
    """Run ``anyurl crawl``; with *stop_after*, SIGKILL it once it reported that many resources
    done. (exit code or None when killed, the events read)."""
    argv = [sys.executable, "-m", "anyurl", "crawl", *seeds, "-d", str(dest), "--state", str(state),
            "--json-lines", "--parallel", str(PARALLEL)]
    events: list[dict[str, object]] = []
    done = 0
    async with aspawn(argv, env=ENV, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        async with asyncio.timeout(300):
            while line := await proc.stdout.readline():
                event = json.loads(line)
                events.append(event)
                if event["event"] in DONE_EVENTS:
                    done += 1
                    if stop_after is not None and done >= stop_after:
                        proc.send_signal(signal.SIGKILL)
                        await proc.wait()
                        # what it printed before it died (all recorded done before they were printed)
                        events += [json.loads(x) for x in (await proc.stdout.read()).splitlines()
                                   if x.endswith(b"}")]
                        return None, events
            err = await proc.stderr.read()
            code = await proc.wait()
    assert code == 0, err.decode(errors="replace")
    return code, events


@pytest.mark.parametrize("kills", [(1, 4, 9, 17, 30), (3, 3, 3, 3, 3, 3, 3, 3)])
async def test_crawl_killed_many_times_ends_as_an_uninterrupted_one(servers: Launcher, tmp_path: Path,
                                                                    kills: tuple[int, ...]) -> None:
    nginx, ftp, gopher, inn = (servers.get(n) for n in ("nginx", "vsftpd", "gophernicus", "inn"))
    tag = uuid.uuid4().hex[:8]
    site = Path(nginx.info["www"]) / f"resume-{tag}"
    site_files = crawl_site.build(site, pages=30)
    ftp_root = Path(ftp.info["anon_root"]) / "pub" / f"resume-{tag}"
    ftp_files = mirror_tree.build(ftp_root, 40, links=False)
    hole = Path(gopher.info["root"]) / f"resume-{tag}"
    hole_files = {f"f{i}.bin": bytes((i * 11 + n) % 256 for n in range(700 + 97 * i)) for i in range(12)}
    hole_files.update({f"d{i % 3}/g{i}.bin": bytes((i + n) % 256 for n in range(300 + i)) for i in range(9)})
    for rel, data in hole_files.items():
        (hole / rel).parent.mkdir(parents=True, exist_ok=True)
        (hole / rel).write_bytes(data)
    for p in [hole, *hole.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    tap = Tap((inn.host, inn.port), 0.0)
    tap_port = await tap.start()
    group = inn.info["many_group"]
    seeds = [f"http://{nginx.host}:{nginx.port}/resume-{tag}/", f"ftp://{ftp.host}:{ftp.port}/pub/resume-{tag}/",
             f"gopher://{gopher.host}:{gopher.port}/1/resume-{tag}", f"nntp://127.0.0.1:{tap_port}/{group}"]
    try:
        _, ref_events = await crawl(seeds, tmp_path / "ref", tmp_path / "ref.sqlite")
        ref = tree(tmp_path / "ref")
        # the reference itself: every source file, byte-exact
        host = f"127.0.0.1:{nginx.port}"
        for rel, data in site_files.items():
            assert ref[f"{host}/resume-{tag}/{rel}"] == data, rel
        for rel, data in mirror_tree.expected(ftp_root, ftp_files, links=False).items():
            assert ref[f"127.0.0.1:{ftp.port}/pub/resume-{tag}/{rel}"] == data, rel
        for rel, data in hole_files.items():
            assert ref[f"127.0.0.1:{gopher.port}/resume-{tag}/{rel}"] == data, rel
        articles = [k for k in ref if k.startswith(f"127.0.0.1:{tap_port}/")]
        assert len(articles) >= 20

        def mark() -> tuple[int, int, int, int]:
            return (os.path.getsize(nginx.info["access_log"]), os.path.getsize(ftp.info["log"]),
                    os.path.getsize(gopher.info["access_log"]), len(tap.events))

        def fetched(a: tuple[int, ...], b: tuple[int, ...]) -> Counter[str]:
            """What the servers were asked for between two marks, as keys (see key())."""
            out: Counter[str] = Counter()
            out.update(f"http://{nginx.host}:{nginx.port}" + m.group(1)
                       for line in _lines(nginx.info["access_log"], a[0], b[0])
                       if (m := re.search(rf'"GET (/resume-{tag}/\S*) ', line)))
            cmds, after = vsftpd.commands(ftp.info["log"], a[1]), vsftpd.commands(ftp.info["log"], b[1])
            out.update("ftp:" + c[5:] for c in cmds[:len(cmds) - len(after)]
                       if c.startswith("RETR ") and c[5:] in ftp_names)
            out.update(f"gopher://{gopher.host}:{gopher.port}/" + m.group(1)
                       for line in _lines(gopher.info["access_log"], a[2], b[2])
                       if (m := re.search(rf'"GET (\S*resume-{tag}\S*) HTTP', line)))
            out.update("nntp:" + line.split()[1].decode() for d, line in tap.events[a[3]:b[3]]
                       if d == "send" and line.upper().startswith(b"ARTICLE "))
            return out

        def key(url: str) -> str:
            if url.startswith("ftp:"):
                return "ftp:" + unquote(url.rsplit("/", 1)[1].split(";", 1)[0])
            if url.startswith("nntp:"):
                return "nntp:" + url.rsplit("/", 1)[1]
            return url

        ftp_names = {rel.rsplit("/", 1)[-1] for rel in ftp_files}
        runs: list[tuple[set[str], Counter[str]]] = []  # per run: URLs reported done, keys fetched
        for n in [*kills, None]:
            before = mark()
            code, events = await crawl(seeds, tmp_path / "out", tmp_path / "out.sqlite", stop_after=n)
            assert (code is None) == (n is not None), "the crawl ended before the kill"
            await asyncio.sleep(0.2)  # the servers' last log lines
            runs.append(({str(e["url"]) for e in events if e["event"] in DONE_EVENTS}, fetched(before, mark())))
        assert tree(tmp_path / "out") == ref  # every file, byte-exact, nothing left over (no part files)
        # together the runs finished each resource once
        want = [str(e["url"]) for e in ref_events if e["event"] in DONE_EVENTS]
        # (a resource recorded done just before a kill may not have been printed: in no run's events)
        union = set().union(*(r for r, _ in runs))
        assert sum(len(r) for r, _ in runs) == len(union) and union <= set(want)
        assert len(union) >= len(want) - len(kills) and len(want) == len(set(want))
        # what the servers saw: no resource reported done by a run was fetched by a later one,
        # and a resource fetched twice was in flight at a kill
        for i, (reported, _) in enumerate(runs):
            later = set().union(*(set(f) for _, f in runs[i + 1:]))
            assert not {key(u) for u in reported} & later, (i, {key(u) for u in reported} & later)
        total: Counter[str] = sum((f for _, f in runs), Counter())
        twice = {k for k, c in total.items() if c > 1}
        assert len(twice) <= PARALLEL * len(kills), twice
        assert {k.split(":", 1)[0] for k in total} == {"http", "ftp", "gopher", "nntp"}  # the logs were read
    finally:
        await tap.close()
        for d in (site, ftp_root, hole):
            shutil.rmtree(d, ignore_errors=True)


def _count(root: Path, pattern: str) -> int:
    return len(list(root.rglob(pattern))) if root.exists() else 0


def _lines(path: str, start: int, end: int) -> list[str]:
    with open(path, "rb") as f:
        f.seek(start)
        return f.read(end - start).decode(errors="replace").splitlines()


async def test_ctrl_c_stops_cleanly_and_the_same_command_continues(servers: Launcher, tmp_path: Path) -> None:
    import sqlite3

    nginx = servers.get("nginx")
    tag = uuid.uuid4().hex[:8]
    site = Path(nginx.info["www"]) / f"stop-{tag}"
    files = crawl_site.build(site, pages=40)
    argv = [sys.executable, "-m", "anyurl", "crawl", f"http://{nginx.host}:{nginx.port}/stop-{tag}/", "-d",
            str(tmp_path / "out"), "--state", str(tmp_path / "s.sqlite"), "--json-lines", "--per-host", "1",
            "--delay", "0.05"]
    try:
        async with aspawn(argv, env=ENV, default_signals=True, stdout=asyncio.subprocess.PIPE,
                          stderr=asyncio.subprocess.PIPE) as proc:
            assert proc.stdout is not None and proc.stderr is not None
            first: list[str] = []
            async with asyncio.timeout(120):
                while len(first) < 10:
                    event = json.loads(await proc.stdout.readline())
                    if event["event"] in DONE_EVENTS:
                        first.append(str(event["url"]))
                proc.send_signal(signal.SIGINT)
                out, err = await proc.communicate()
        assert proc.returncode == 130, err
        text = err.decode()
        assert "stopped: " in text and "run the same command again to continue" in text, text
        first += [str(json.loads(x)["url"]) for x in out.splitlines()
                  if json.loads(x)["event"] in DONE_EVENTS]
        # the state is consistent: nothing left in flight, what was reported is recorded done
        db = sqlite3.connect(tmp_path / "s.sqlite")
        try:
            leased = db.execute("SELECT count(*) FROM urls WHERE state=1").fetchone()[0]
            done = {r[0] for r in db.execute("SELECT coalesce(url, key) FROM urls WHERE state=2")}
            pending = db.execute("SELECT count(*) FROM urls WHERE state=0").fetchone()[0]
        finally:
            db.close()
        assert leased == 0 and pending > 0
        assert set(first) <= done
        async with aspawn(argv[:-4], env=ENV, stdout=asyncio.subprocess.PIPE,
                          stderr=asyncio.subprocess.PIPE) as proc2:
            out2, err2 = await asyncio.wait_for(proc2.communicate(), 120)
        assert proc2.returncode == 0, err2
        second = [str(json.loads(x)["url"]) for x in out2.splitlines() if json.loads(x)["event"] in DONE_EVENTS]
        assert not set(second) & done  # continued, nothing done again
        summary = json.loads(out2.splitlines()[-1])
        assert summary["event"] == "summary" and summary["pending"] == 0 and summary["errors"] == 0
        assert summary["fetched"] == len(second) and summary["by_scheme"]["http"]["fetched"] == len(second)
        last = err2.decode().strip().splitlines()[-1]  # the summary line, with the runs before counted
        # (every file of the site, and the site at "/" beside its index.html)
        assert last.startswith("anyurl: crawled http://") and f"{len(second)} fetched (" in last
        assert "0 errors" in last and "0 pending" in last and f"with the runs before: {len(files) + 1} fetched" in last
        got = tree(tmp_path / "out" / f"127.0.0.1:{nginx.port}" / f"stop-{tag}")
        assert got == files
    finally:
        shutil.rmtree(site, ignore_errors=True)


async def test_mirror_with_state_killed_then_run_again_fetches_each_url_once(servers: Launcher,
                                                                              tmp_path: Path) -> None:
    nginx = servers.get("nginx")
    tag = uuid.uuid4().hex[:8]
    site = Path(nginx.info["www"]) / f"mstate-{tag}"
    files = crawl_site.build(site, pages=40)
    out = tmp_path / "m"
    argv = [sys.executable, "-m", "anyurl", "mirror", "--state", str(tmp_path / "m.sqlite"), "--parallel", "2",
            "--delay", "0.03", f"http://{nginx.host}:{nginx.port}/mstate-{tag}/", str(out)]
    mark = os.path.getsize(nginx.info["access_log"])  # noqa: ASYNC240
    try:
        async with aspawn(argv, env=ENV, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE) as proc:
            async with asyncio.timeout(120):
                while _count(out, "*.html") < 12:  # noqa: ASYNC110 - polling the files a child writes
                    await asyncio.sleep(0.02)
            proc.send_signal(signal.SIGKILL)
            await proc.wait()
        async with aspawn(argv, env=ENV, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE) as proc2:
            _, err = await asyncio.wait_for(proc2.communicate(), 120)
        assert proc2.returncode == 0, err
        assert tree(out) == files  # named as mirror names them (relative to DIR), byte-exact
        lines = _lines(nginx.info["access_log"], mark, os.path.getsize(nginx.info["access_log"]))  # noqa: ASYNC240
        gets = Counter(m.group(1) for line in lines if (m := re.search(rf'"GET (/mstate-{tag}/\S*) ', line)))
        twice = {p: n for p, n in gets.items() if n > 1}
        assert len(twice) <= 2, twice  # only what was in flight at the kill (--parallel 2)
        assert "mirrored" in err.decode() and " 0 errors" in err.decode()
    finally:
        shutil.rmtree(site, ignore_errors=True)

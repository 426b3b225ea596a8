"""What the interleaved A/B scripts (bench/ab/*.py) share: a source tree's environment,
one timed run of a child with its own CPU time from wait4, a column's spread as the tables
print it, the clean-up at the end of a run, a server RTT away through bench/relay.py, and
rounds of download commands whose output is checked."""

from __future__ import annotations

import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Callable

    from fixtures.launcher import Launcher

MIB = 1 << 20

ROOT = Path(__file__).resolve().parents[2]


def tree_env(tree: Path, scratch: Path, tag: str) -> dict[str, str]:
    """The environment that runs anyurl from source tree *tree*, its bytecode cached per tag."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = f"{tree}/src:{tree}"
    env["PYTHONPYCACHEPREFIX"] = str(scratch / f"pyc-{tag}")
    return env


def run_timed(argv: list[str], env: dict[str, str], stdout: str | None = None) -> tuple[float, float]:
    """(wall s, user+sys CPU s) of one run of *argv*, standard output to *stdout* (or /dev/null);
    a failing run raises with the end of its standard error."""
    out = os.open(stdout or os.devnull, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    start = time.perf_counter()
    try:
        proc = subprocess.Popen(argv, env=env, cwd=ROOT, stdout=out, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        os.close(out)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{argv[:6]}: exit {os.waitstatus_to_exitcode(status)}: {err[-500:]}")
    return wall, usage.ru_utime + usage.ru_stime


def spread(values: list[float]) -> str:
    """One column of an A/B table: "median min-max" of *values* (seconds)."""
    return f"{statistics.median(values):8.3f} {min(values):6.3f}-{max(values):6.3f}"


class _Servers(Protocol):
    def stop_all(self) -> None: ...
    def remove(self) -> None: ...


def clean_up(launcher: _Servers, *trees: Path, files: Iterable[Path] = ()) -> None:
    """The end of an A/B run, failed or not: the files it made, its servers, its scratch trees."""
    for path in files:
        path.unlink(missing_ok=True)
    launcher.stop_all()
    launcher.remove()
    for tree in trees:
        shutil.rmtree(tree, ignore_errors=True)


def big_rows(launcher: Launcher, wanted: Callable[[str], bool], tag: str, shm: Path,
             made: list[Path]) -> dict[str, tuple[str, int]]:
    """The one-URL rows early.py and loop.py both time, those *wanted*: row -> (URL, size).
    The files are named after *tag* in the servers' trees (appended to *made*, for clean_up)."""
    from bench.suites.http import make_big

    rows: dict[str, tuple[str, int]] = {}
    name = f"{tag}-big.bin"
    if wanted("gopher 100 MiB"):
        ep = launcher.get("gophernicus")
        src = Path(ep.info["root"]) / name
        block = bytes(range(256)) * 4096
        with open(src, "wb") as f:
            for i in range(100):
                f.write(block[i:] + block[:i])
        os.chmod(src, 0o644)
        made.append(src)
        rows["gopher 100 MiB"] = (f"gopher://{ep.host}:{ep.port}/9/{name}", 100 * MIB)
    if wanted("ftp 1 GiB"):
        from fixtures.servers import vsftpd

        fp = launcher.get("vsftpd")
        made.append(vsftpd.ensure_big(fp.info, 1024 * MIB, name))
        rows["ftp 1 GiB"] = (f"ftp://{fp.host}:{fp.port}/pub/{name}", 1024 * MIB)
    if wanted("http 1 GiB"):
        ng = launcher.get("nginx")
        src = Path(ng.info["www"]) / name
        make_big(src, 1024)
        made.append(src)
        rows["http 1 GiB"] = (f"http://{ng.host}:{ng.port}/{name}", 1024 * MIB)
    if wanted("file 1 byte"):
        one = shm / "one.txt"
        one.write_bytes(b"1")
        rows["file 1 byte"] = (one.as_uri(), 1)
    return rows


@contextmanager
def relayed(port: int, rtt_ms: float) -> Iterator[int]:
    """The port to reach 127.0.0.1:*port* on, *rtt_ms* away through bench/relay.py (its own
    process, ended on the way out); *rtt_ms* 0: *port* itself, no relay."""
    if not rtt_ms:
        yield port
        return
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        near = s.getsockname()[1]
    child = subprocess.Popen([sys.executable, "-m", "bench.relay", "--rtt", str(rtt_ms),
                              f"127.0.0.1:{near}=127.0.0.1:{port}"], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        yield near
    finally:
        child.terminate()
        child.wait()
        if child.stdout is not None:
            child.stdout.close()


def download_rounds(cases: dict[str, Callable[[str], list[str]]], rounds: int, count: int, size: int,
                    env: dict[str, str] | None = None) -> dict[str, list[float]]:
    """Wall times of *rounds* interleaved rounds, each running every case once: ``cases[name](DIR)``
    is a command that downloads *count* files of *size* bytes into DIR (a fresh one in /dev/shm),
    checked after each run."""
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, argv in cases.items():
            out = tempfile.mkdtemp(dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
            try:
                started = time.perf_counter()
                proc = subprocess.run(argv(out), env=env, capture_output=True, text=True, check=False)
                times[name].append(time.perf_counter() - started)
                assert proc.returncode == 0, (name, proc.stderr[-500:])
                names = os.listdir(out)
                assert len(names) == count, (name, len(names))
                assert all(os.path.getsize(os.path.join(out, n)) == size for n in names), name
            finally:
                shutil.rmtree(out)
    return times


def print_rounds(title: str, times: dict[str, list[float]]) -> None:
    """*title*, then each case's median, minimum and maximum."""
    print(title)
    for name, ts in times.items():
        print(f"  {name:20s} median {statistics.median(ts):6.3f}  min {min(ts):6.3f}  max {max(ts):6.3f}")

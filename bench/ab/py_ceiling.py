"""What any single Python process reaches, asyncio or not: interleaved A/B of the raw clients.

    python bench/ab/py_ceiling.py [http] [gopher] [--rounds N] [--only TEXT]

One nginx and one gophernicus (fixtures/launcher.py, as bench.run starts them).
http: 1,000 x 4 KiB at concurrency 32 into /dev/shm: curl -Z, the asyncio
ceiling (bench/reference/http_asyncio.py) and variants of bench/reference/http_sync.py
(interpreter flags, -m or a path). gopher: one 100 MiB item to a file on disk
(bench/.scratch, as bench_gopher): curl, the asyncio ceiling (bench/reference/gopher_asyncio.py)
and variants of bench/reference/gopher_sync.py (buffer size, SO_RCVBUF, splice).
Floors: ``python -S -c pass`` and ``python -c "import asyncio, uvloop"``.
Wall time around each child, user+sys CPU from wait4; every output checked;
ratio = curl's time / the case's time in the same round (median, min-max).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from fixtures.launcher import Launcher  # noqa: E402

from bench.ab.common import run_timed  # noqa: E402

MIB = 1 << 20


def _rounds(cases: list[tuple[str, list[str], object]], rounds: int, env: dict[str, str]) -> None:
    """Run every case once (warm-up), then *rounds* interleaved rounds; print the table."""
    res: dict[str, list[tuple[float, float]]] = {name: [] for name, _, _ in cases}
    for _name, argv, prep in cases:
        prep()  # type: ignore[operator]
        run_timed(argv, env)
    for r in range(rounds):
        k = r % len(cases)
        for name, argv, prep in cases[k:] + cases[:k]:
            check = prep()  # type: ignore[operator]
            res[name].append(run_timed(argv, env))
            if check:
                check()
    ref = res[cases[0][0]]
    print(f"{rounds} interleaved rounds; load average {os.getloadavg()[0]:.2f}")
    print(f"{'case':58} {'wall med':>8} {'ratio':>6} {'min-max':>11} {'cpu med':>8}")
    for name, runs in res.items():
        ratios = [a[0] / b[0] for a, b in zip(ref, runs, strict=True)]
        print(f"{name:58} {statistics.median(w for w, _ in runs):8.4f} {statistics.median(ratios):6.2f} "
              f"{min(ratios):5.2f}-{max(ratios):5.2f} {statistics.median(c for _, c in runs):8.4f}", flush=True)


def http(launcher: Launcher, rounds: int, only: list[str], env: dict[str, str]) -> None:
    ep = launcher.get("nginx")
    urls = [f"http://{ep.host}:{ep.port}/many/f{i:04d}.txt" for i in range(1000)]
    scratch = Path(tempfile.mkdtemp(prefix="ab-py-ceiling-", dir="/dev/shm"))
    out = scratch / "many"
    cfg = scratch / "curl.cfg"
    cfg.write_text("".join(f'url = "{u}"\n' for u in urls))
    py = sys.executable
    sync = str(ROOT / "bench" / "reference" / "http_sync.py")

    def check() -> None:
        names = os.listdir(out)
        if len(names) != len(urls) or any(os.path.getsize(out / n) != 4096 for n in names):
            raise RuntimeError(f"{len(names)} files in {out}, not {len(urls)} of 4096 bytes")

    def prep() -> object:
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir()
        return check

    def floor() -> None:
        return None

    tail = ["--parallel", "32", "-d", str(out), *urls]
    cases: list[tuple[str, list[str], object]] = [
        ("curl -Z --parallel-max 32", ["curl", "-sf", "-Z", "--parallel-max", "32", "--output-dir", str(out),
                                       "--remote-name-all", "-K", str(cfg)], prep),
        ("asyncio ceiling: raw_http_lean (uvloop, httptools)", [py, "-m", "bench.reference.http_asyncio", *tail], prep),
        ("sync: python -S raw_http_sync.py", [py, "-S", sync, *tail], prep),
        ("sync: python -S -m bench.reference.http_sync", [py, "-S", "-m", "bench.reference.http_sync", *tail], prep),
        ("sync: python raw_http_sync.py (site)", [py, sync, *tail], prep),
        ("sync: python -S -I raw_http_sync.py", [py, "-S", "-I", sync, *tail], prep),
        ("floor: python -S -c pass", [py, "-S", "-c", "pass"], floor),
        ("floor: python -c 'import asyncio, uvloop'", [py, "-c", "import asyncio, uvloop"], floor),
    ]
    cases = [c for c in cases if not only or c is cases[0] or any(t in c[0] for t in only)]
    print(f"\n== http: 1000 x 4 KiB, concurrency 32, nginx, output {out}")
    try:
        _rounds(cases, rounds, env)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def gopher(launcher: Launcher, rounds: int, only: list[str], env: dict[str, str]) -> None:
    ep = launcher.get("gophernicus")
    root = Path(ep.info["root"])
    size = 100 * MIB
    big = root / "big100.bin"
    block = bytes(range(256)) * 4096
    with open(big, "wb") as f:
        for _ in range(100):
            f.write(block)
    big.chmod(0o644)
    url = f"gopher://{ep.host}:{ep.port}/9/{big.name}"
    scratch_root = ROOT / "bench" / ".scratch"
    scratch_root.mkdir(exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="ab-py-ceiling-", dir=scratch_root))
    out = work / "big.out"
    py = sys.executable
    sync = str(ROOT / "bench" / "reference" / "gopher_sync.py")

    def check() -> None:
        if out.stat().st_size != size:
            raise RuntimeError(f"{out}: {out.stat().st_size} bytes, not {size}")

    def prep() -> object:
        out.unlink(missing_ok=True)
        return check

    o = str(out)
    cases: list[tuple[str, list[str], object]] = [
        ("curl -o FILE", ["curl", "-s", "-o", o, url], prep),
        ("asyncio ceiling: raw_gopher (uvloop)", [py, "-m", "bench.reference.gopher_asyncio", url, o], prep),
        ("sync recv 64 KiB", [py, "-S", sync, "--buf", str(64 << 10), url, o], prep),
        ("sync recv 256 KiB", [py, "-S", sync, "--buf", str(256 << 10), url, o], prep),
        ("sync recv 1 MiB", [py, "-S", sync, "--buf", str(MIB), url, o], prep),
        ("sync recv 256 KiB, SO_RCVBUF 4 MiB", [py, "-S", sync, "--rcvbuf", str(4 * MIB), url, o], prep),
        ("sync splice, pipe 64 KiB", [py, "-S", sync, "--mode", "splice", "--buf", str(64 << 10), url, o], prep),
        ("sync splice, pipe 1 MiB", [py, "-S", sync, "--mode", "splice", "--buf", str(MIB), url, o], prep),
    ]
    cases = [c for c in cases if not only or c is cases[0] or any(t in c[0] for t in only)]
    print(f"\n== gopher: one 100 MiB item from gophernicus to {out}")
    try:
        _rounds(cases, rounds, env)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        big.unlink(missing_ok=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("groups", nargs="*", default=["http", "gopher"])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--only", action="append", default=[])
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
    env["PYTHONPATH"] = str(ROOT)
    launcher = Launcher()
    try:
        for g in args.groups or ["http", "gopher"]:
            {"http": http, "gopher": gopher}[g](launcher, args.rounds, args.only, env)
    finally:
        launcher.stop_all()
        launcher.remove()
    return 0


if __name__ == "__main__":
    sys.exit(main())

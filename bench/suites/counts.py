"""counts: what one small HTTP request costs in counts that do not depend on the machine's load.

    bench/.venv/bin/python -m bench.run counts [--quick] [--tree DIR ...]

One nginx serves bench/suites/http.py's uncompressed 4 KiB files (seed_lots). Two tables:

* syscalls per request: each client fetches LOTS and then FEW of the files at concurrency 32
  into tmpfs under ``strace -f -c``; per request = (calls for LOTS - calls for FEW) /
  (LOTS - FEW), by syscall name, so start-up's calls cancel out. Clients: curl -Z, the asyncio
  ceiling (bench/reference/http_asyncio.py), the installed anyurl CLI and the CLI of each
  ``--tree``. strace slows every call, so these are counts, not times.
* instructions per request (callgrind): the CLI (``cli``), the library script
  bench/suites/http.py ``many`` (Client.open per URL) on uvloop (``lib``) and on asyncio's loop
  (``libaio``), and the batch group's program (``batch``: anyurl.batch.Batch into a Directory), on the
  first FEW_CG and MANY_CG of the files, under ``valgrind --tool=callgrind`` with
  PYTHONHASHSEED=0 (a count then repeats to a few instructions); per request = the difference
  over MANY_CG - FEW_CG. User-space instructions only: the kernel's share is in the syscalls.

Each table is skipped, with a line saying so, where strace or valgrind is not installed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench import harness
from bench.harness import ROOT, anyurl_cmd, bench_env, python_cmd, record, tree_env, wanted

LOTS, FEW = 10_000, 1_000
FEW_CG, MANY_CG = 40, 240


def parse_summary(text: str) -> dict[str, int]:
    """strace -c's table as {syscall: calls}."""
    calls: dict[str, int] = {}
    for line in text.splitlines():
        fields = line.split()
        # % time, seconds, usecs/call, calls, [errors,] syscall
        if len(fields) >= 5 and fields[3].isdigit() and fields[-1] != "total":
            calls[fields[-1]] = calls.get(fields[-1], 0) + int(fields[3])
    return calls


def per_request(lots: dict[str, int], few: dict[str, int], n: int) -> dict[str, float]:
    """Calls per request by name (the difference of two runs over *n* more requests), largest first."""
    names = set(lots) | set(few)
    per = {k: (lots.get(k, 0) - few.get(k, 0)) / n for k in names}
    return dict(sorted(((k, v) for k, v in per.items() if abs(v) >= 0.005), key=lambda kv: -kv[1]))


def _fresh(out: Path) -> None:
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()


def strace_count(argv: list[str], env: dict[str, str], out: Path, scratch: Path) -> dict[str, int]:
    """Syscalls of one run of *argv* (children too), its output directory emptied first."""
    _fresh(out)
    report = scratch / "strace.txt"
    proc = subprocess.run(["strace", "-f", "-c", "-o", str(report), *argv], env=env, cwd=ROOT,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{argv[:4]}: exit {proc.returncode}: {proc.stderr.decode(errors='replace')[-500:]}")
    return parse_summary(report.read_text())


def callgrind_count(argv: list[str], env: dict[str, str], out: Path, want: int) -> int:
    """Instructions of one run of *argv* under callgrind (after one plain run that writes the
    bytecode cache); the run must leave *want* files in *out*."""
    env = {**env, "PYTHONHASHSEED": "0"}
    proc = None
    for grind in (False, True):
        _fresh(out)
        pre = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"] if grind else []
        proc = subprocess.run([*pre, *argv], env=env, cwd=ROOT, capture_output=True, text=True, timeout=900)
        if proc.returncode:
            raise RuntimeError(f"{argv[:4]}: exit {proc.returncode}: {proc.stderr[-800:]}")
        if len(os.listdir(out)) != want:
            raise RuntimeError(f"{argv[:4]}: {len(os.listdir(out))} files, not {want}")
    assert proc is not None
    m = re.search(r"Collected : (\d+)", proc.stderr)
    if m is None:
        raise RuntimeError(f"no callgrind total in: {proc.stderr[-800:]}")
    return int(m.group(1))


def _clis() -> list[tuple[str, list[str], dict[str, str]]]:
    """(label, argv prefix, env) of the installed CLI and of each --tree's."""
    out = [("anyurl get (installed)", anyurl_cmd(), bench_env())]
    out += [(f"anyurl get [{t.name or t}]", [sys.executable, "-m", "anyurl"], tree_env(t)) for t in harness.TREES]
    return out


def syscalls(urls: list[str], scratch: Path, lots: int, few: int) -> None:
    title = f"counts: syscalls per request, {lots} - {few} x 4 KiB from nginx at concurrency 32"
    if not wanted(title):
        return
    if shutil.which("strace") is None:
        print(f"\n== {title}\n   skipped: strace is not installed", flush=True)
        return
    out = scratch / "out"
    lists, cfgs = {}, {}
    for n in (lots, few):
        lists[n] = scratch / f"urls-{n}.txt"
        lists[n].write_text("".join(u + "\n" for u in urls[:n]))
        cfgs[n] = scratch / f"curl-{n}.cfg"
        cfgs[n].write_text("".join(f'url = "{u}"\n' for u in urls[:n]))
    cases = [
        ("curl -Z --parallel-max 32", bench_env(), lambda n: [
            "curl", "-sf", "-Z", "--parallel-max", "32", "--output-dir", str(out), "--remote-name-all",
            "-K", str(cfgs[n])]),
        ("asyncio ceiling (bench/reference/http_asyncio.py)", bench_env(), lambda n: python_cmd(
            "-m", "bench.reference.http_asyncio", "--parallel", "32", "-d", str(out), *urls[:n])),
    ]
    for label, pre, env in _clis():
        cases.append((label, env, lambda n, pre=pre: [*pre, "get", "-q", "--parallel", "32", "-d", str(out),
                                                       "-i", str(lists[n])]))
    print(f"\n== {title}\n   ({lots} - {few} URLs) / {lots - few}, strace -f -c", flush=True)
    md = [f"\n### {title}\n", f"strace -f -c; per request = (calls for {lots} - calls for {few}) / {lots - few}\n",
          "| client | syscalls per request | by name |", "|---|---:|---|"]
    rows = {}
    for name, env, argv in cases:
        per = per_request(strace_count(argv(lots), env, out, scratch), strace_count(argv(few), env, out, scratch),
                          lots - few)
        detail = ", ".join(f"{k} {v:.2f}" for k, v in per.items())
        print(f"   {name:<44} {sum(per.values()):7.2f}  ({detail})", flush=True)
        md.append(f"| {name} | {sum(per.values()):.2f} | {detail} |")
        rows[name] = per
    record(title, md, {"n": [lots, few], "per_request": rows})


def instructions(urls: list[str], scratch: Path) -> None:
    title = f"counts: instructions per request (callgrind), {MANY_CG} - {FEW_CG} x 4 KiB from nginx"
    if not wanted(title):
        return
    if shutil.which("valgrind") is None:
        print(f"\n== {title}\n   skipped: valgrind is not installed", flush=True)
        return
    out = scratch / "out"
    print(f"\n== {title}\n   (Ir of {MANY_CG} URLs - Ir of {FEW_CG}) / {MANY_CG - FEW_CG}, PYTHONHASHSEED=0",
          flush=True)
    md = [f"\n### {title}\n", f"(Ir of {MANY_CG} URLs - Ir of {FEW_CG}) / {MANY_CG - FEW_CG}, user space only\n",
          "| client | instructions per request | Ir of the small run |", "|---|---:|---:|"]
    rows = {}
    for label, pre, env in _clis():
        modes = {"cli": lambda u, pre=pre: [*pre, "get", "-q", "--parallel", "32", "-d", str(out), *u],
                 "lib": lambda u: python_cmd("-m", "bench.suites.http", "many", "--uvloop", "--parallel", "32",
                                             str(out), *u),
                 "libaio": lambda u: python_cmd("-m", "bench.suites.http", "many", "--parallel", "32", str(out), *u),
                 "batch": lambda u: python_cmd("-m", "bench.suites.batch", "lib", "32", str(out), *u)}
        for mode, argv in modes.items():
            name = f"{mode}: {label}"
            few = callgrind_count(argv(urls[:FEW_CG]), env, out, FEW_CG)
            many = callgrind_count(argv(urls[:MANY_CG]), env, out, MANY_CG)
            per = (many - few) / (MANY_CG - FEW_CG)
            print(f"   {name:<44} {per:12,.0f}   ({FEW_CG} URLs: {few:,})", flush=True)
            md.append(f"| {name} | {per:,.0f} | {few:,} |")
            rows[name] = per
    record(title, md, {"n": [MANY_CG, FEW_CG], "per_request": rows})


def run(launcher: object, quick: bool) -> None:
    from bench.suites.http import seed_lots

    ep = launcher.get("nginx")  # type: ignore[attr-defined]
    lots, few = (2_000, 200) if quick else (LOTS, FEW)
    urls = [f"http://{ep.host}:{ep.port}{p}" for p in seed_lots(Path(ep.info["www"]), lots)]
    scratch = Path(tempfile.mkdtemp(prefix="counts-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None))
    try:
        syscalls(urls, scratch, lots, few)
        instructions(urls, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

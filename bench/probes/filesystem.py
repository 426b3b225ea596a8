"""Reproduce what the filesystem adds to the small-file groups, with no client at all:

    python -m bench.probes.filesystem [--rounds 8] [--files 1000] [--size 4096] [--gap 1] [--disk DIR] [--tmpfs DIR]

Each round writes FILES files of SIZE bytes with plain os calls (bench/reference/fs_anchor.py)
into an output directory renewed four ways, interleaved, GAP seconds after renewing it:

  rmtree  the same directory on disk deleted and re-made (the harness before
          2026-11-23's fourth session: ManyFiles.fresh with shutil.rmtree);
  keep    under a chattr +T directory, the last round's directory renamed aside with its
          files, all deleted only at the end;
  spread  under a chattr +T directory, the last round's files deleted right after it,
          its emptied directory renamed aside and kept (the harness now: --disk-fresh spread);
  tmpfs   the same directory on tmpfs deleted and re-made.

It prints each round's wall and system CPU time, then the medians. On this machine
(ext4 without a journal) rmtree rounds grow by about 0.1 s of system time per round
(0.16 s in round 1, 0.94 s in round 7), keep and spread stay near 0.03 s, tmpfs 0.01 s:
with no journal, ext4's inode allocator passes over every inode of the block group freed
1-60 s ago (up to 360 s while its inode-table block is dirty) and scans from the group's
start for each new inode (fs/ext4/ialloc.c, find_inode_bit and recently_deleted).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import sys
import time
from pathlib import Path

from bench.harness import fs_type, spread_dirs
from bench.reference.fs_anchor import write


def one_round(outdir: Path, files: int, data: bytes) -> tuple[float, float]:
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    for i in range(files):
        write(os.path.join(outdir, f"f{i:04d}.txt"), data)
    wall = time.perf_counter() - t0
    return wall, resource.getrusage(resource.RUSAGE_SELF).ru_stime - r0.ru_stime


def main(argv: list[str]) -> int:
    here = Path(__file__).resolve().parents[1]
    ap = argparse.ArgumentParser(prog="python -m bench.probes.filesystem")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--disk", type=Path, default=Path(os.environ.get("ANYURL_BENCH_TMP") or here / ".scratch"))
    ap.add_argument("--tmpfs", type=Path, default=Path("/dev/shm"))
    ap.add_argument("--gap", type=float, default=1.0,
                    help="seconds between renewing a directory and writing into it (a client's start-up; "
                         "ext4 reuses inodes deleted in the same second at once)")
    args = ap.parse_args(argv)
    data = b"a" * args.size
    root = args.disk / f"fs-probe-{os.getpid()}"
    spread = root / "spread"
    spread.mkdir(parents=True)
    has_t = spread_dirs(spread)
    tmp = args.tmpfs / f"anyurl-fs-probe-{os.getpid()}"
    empty = root / "spread-empty"
    empty.mkdir()
    spread_dirs(empty)
    dirs = {"rmtree": root / "same", "keep": spread / "many", "spread": empty / "many", "tmpfs": tmp / "same"}
    print(f"{args.files} files of {args.size} B per round; disk {fs_type(root)} {root} "
          f"(chattr +T {'set' if has_t else 'not set'} for keep, spread); tmpfs {fs_type(args.tmpfs)} {tmp}")
    times: dict[str, list[tuple[float, float]]] = {m: [] for m in dirs}
    modes = list(dirs)
    try:
        for r in range(args.rounds):
            k = r % len(modes)
            for mode in modes[k:] + modes[:k]:
                d = dirs[mode]
                if mode in ("keep", "spread"):
                    if d.exists():
                        d.rename(d.with_name(f"many.{r}"))
                else:
                    shutil.rmtree(d, ignore_errors=True)
                d.mkdir(parents=True)
                time.sleep(args.gap)
                times[mode].append(one_round(d, args.files, data))
                if mode == "spread":  # delete the files at once (before writeback), keep the directory
                    for name in os.listdir(d):
                        os.unlink(d / name)
            print(f"round {r}: " + "; ".join(f"{m} {w:.3f} s wall {s:.3f} s sys" for m, (w, s) in
                                            ((m, times[m][-1]) for m in modes)), flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)
    for m in modes:
        later = times[m][1:] or times[m]  # round 0 starts from whatever state the disk was in
        print(f"{m:>7}: median of rounds 1-{args.rounds - 1}: {statistics.median(w for w, _ in later):.3f} s wall, "
              f"{statistics.median(s for _, s in later):.3f} s sys")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

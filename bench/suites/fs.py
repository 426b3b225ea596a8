"""fs: what the filesystem adds to the small-file groups, with no client at all.

    bench/.venv/bin/python -m bench.run fs [--quick] [--rounds N]

Each case writes 1,000 files of 4 KiB with plain os calls (bench/reference/fs_anchor.py)
into an output directory renewed one of four ways, one second before (a client's start-up;
ext4 reuses inodes deleted in the same second at once):

  rmtree  the same directory on disk deleted and re-made (the harness before
          2026-11-23's fourth session; ``--disk-fresh rmtree``);
  keep    under a chattr +T directory, the last run's directory renamed aside with its
          files, all deleted only at the end;
  spread  under a chattr +T directory, the last run's files deleted right after it, its
          emptied directory renamed aside and kept (the harness now: ``--disk-fresh spread``);
  tmpfs   the same directory on tmpfs deleted and re-made.

On this machine (ext4 without a journal) rmtree runs grew by about 0.1 s of system time per
round (0.16 s in round 1, 0.94 s in round 7), keep and spread stayed near 0.03 s, tmpfs
0.01 s: with no journal, ext4's inode allocator passes over every inode of the block group
freed 1-60 s ago (up to 360 s while its inode-table block is dirty) and scans from the
group's start for each new inode (fs/ext4/ialloc.c, find_inode_bit and recently_deleted).
The disk is bench/.scratch (or --scratch), tmpfs /dev/shm (or --tmpfs).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

from bench import harness
from bench.harness import Case, anchor_cmd, compare, fs_type, spread_dirs

FILES, SIZE, GAP = 1000, 4096, 1.0


def run(launcher: object, quick: bool) -> None:
    title = f"fs: {FILES} files of {SIZE // 1024} KiB written by os calls, the output directory renewed 4 ways"
    if not harness.wanted(title):
        return
    disk = next((o.root for o in harness.outputs() if o.label.startswith("disk")), Path(tempfile.gettempdir()))
    tmpfs = next((o.root for o in harness.outputs() if o.label == "tmpfs"), Path("/dev/shm"))
    root = Path(tempfile.mkdtemp(prefix="fs-probe-", dir=disk))
    tmp = Path(tempfile.mkdtemp(prefix="fs-probe-", dir=tmpfs))
    spread = root / "spread"
    spread.mkdir()
    has_t = spread_dirs(spread)
    empty = root / "spread-empty"
    empty.mkdir()
    spread_dirs(empty)
    dirs = {"rmtree": root / "same", "keep": spread / "many", "spread": empty / "many", "tmpfs": tmp / "same"}
    names = [f"f{i:04d}.txt" for i in range(FILES)]
    turns = {m: 0 for m in dirs}

    def renew(mode: str) -> None:
        d = dirs[mode]
        if mode in ("keep", "spread"):
            if d.exists():
                turns[mode] += 1
                d.rename(d.with_name(f"many.{turns[mode]}"))
        else:
            shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
        time.sleep(GAP)

    def after(mode: str) -> None:
        d = dirs[mode]
        if len(os.listdir(d)) != FILES:
            raise RuntimeError(f"{d}: {len(os.listdir(d))} files, not {FILES}")
        if mode == "spread":  # the files deleted at once (before writeback), the directory kept
            for name in os.listdir(d):
                os.unlink(d / name)

    try:
        compare(title, [Case(mode, anchor_cmd(d, SIZE, names), lambda m=mode: renew(m), lambda m=mode: after(m))
                        for mode, d in dirs.items()], "tmpfs",
                note=f"disk {fs_type(root)} {root} (chattr +T {'set' if has_t else 'not set'} for keep, spread); "
                     f"tmpfs {fs_type(tmp)} {tmp}; {GAP:.0f} s between renewing and writing; CPU s is user+sys")
    finally:
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)

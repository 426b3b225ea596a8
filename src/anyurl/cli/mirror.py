"""``anyurl mirror URL DIR``: copy a tree, with a status line and a summary."""

from __future__ import annotations

import sys
import time

from ..errors import mask_password
from .output import Reporter
from .session import with_deadline

TYPE_CHECKING = False  # not typing's: importing typing costs start-up time (mypy knows this idiom)
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from ..client import Client


# -- mirror -----------------------------------------------------------------------


class _MirrorStatus:
    """One status line on a terminal (stderr), redrawn at most 5 times a second."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.last = 0.0

    def __call__(self, result: Any) -> None:
        now = time.monotonic()
        if not self.enabled or now - self.last < 0.2:
            return
        self.last = now
        sys.stderr.write(f"\ranyurl: {result.files} files, {human_size(result.bytes)}, "
                         f"{result.unchanged} unchanged, {len(result.errors)} errors\x1b[K")
        sys.stderr.flush()

    def done(self) -> None:
        if self.enabled and self.last:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def human_size(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    value = float(n)
    for unit in ("KiB", "MiB", "GiB"):
        value /= 1024
        if value < 1024 or unit == "GiB":
            break
    return f"{value:.1f} {unit}"


async def cmd_mirror(args: argparse.Namespace, client: Client, rep: Reporter) -> int:
    """``anyurl mirror URL DIR``: the tree below URL into DIR; a summary at the end."""
    from ..transfer.mirror import mirror

    u = client.parse(args.url)
    try:
        on_terminal = not args.quiet and sys.stderr.isatty()
    except (AttributeError, ValueError):
        on_terminal = False
    status = _MirrorStatus(on_terminal)
    try:
        result = await with_deadline(args.max_time, mirror(
            client, u, args.dir, parallel=args.parallel, resume=args.resume, newer=args.newer,
            force=args.force, max_depth=args.max_depth, include=args.include, exclude=args.exclude,
            progress=status, delay=args.delay, robots=args.robots, symlinks=args.symlinks, state=args.state,
            **({} if args.requisites else {"requisites": False})), u)
    finally:
        status.done()
    for url in result.dangling:
        rep.info(f"{mask_password(url)}: a symlink that leads nowhere (not copied)")
    for url, why in result.refused_links:
        rep.info(f"{mask_password(url)}: symlink not made: {why}")
    for url, path in result.renamed:
        rep.info(f"{mask_password(url)} saved as {path} (its name was taken by another file)")
    for _url, exc in result.errors:
        rep.error(exc)
    rep.info(f"mirrored {mask_password(str(u))} to {args.dir}: {result.files} files "
             f"({result.bytes} bytes) written, {result.unchanged} unchanged, {result.excluded} excluded, "
             f"{result.directories} directories, "
             + (f"{result.links} symlinks, " if args.symlinks == "keep" else "")
             + (f"{len(result.dangling)} dangling symlinks, " if result.dangling else "")
             + f"{len(result.errors)} errors "
             f"in {result.seconds:.2f} s")
    return result.errors[0][1].exit_code if result.errors else 0

"""``anyurl put`` (FTP STOR) and ``anyurl send`` (mail): what goes out."""

from __future__ import annotations

import os
import sys
import time

from ..errors import ResourceNotFound, mask_password
from .output import Reporter
from .session import with_deadline

TYPE_CHECKING = False  # not typing's: importing typing costs start-up time (mypy knows this idiom)
if TYPE_CHECKING:
    import argparse

    from ..client import Client
    from ..urls import URL


# -- put / send / open ----------------------------------------------------------------


def _local_file_size(path: str, what: str, url: URL) -> int:
    """The size of a local regular file; ResourceNotFound (exit 11) if there is none."""
    if not os.path.isfile(path):
        raise ResourceNotFound(f"{what} {path} does not exist or is not a regular file", url=url)
    return os.path.getsize(path)


async def cmd_put(args: argparse.Namespace, client: Client, rep: Reporter) -> int:
    """``anyurl put FILE URL``."""
    path = str(args.file)
    u = client.parse(args.url)
    size = _local_file_size(path, "local file", u)
    if u.scheme in ("ftp", "ftps") and not getattr(u, "name", "x") and getattr(u, "typecode", None) is None:
        u = u.__replace__(name=os.path.basename(path))  # ftp://h/dir/: dir/FILE's base name, as curl -T
    start = time.monotonic()
    await with_deadline(args.max_time, client.upload(u, path), u)
    rep.info(f"stored {size} bytes at {mask_password(str(u))} "
             f"in {time.monotonic() - start:.2f} s")
    return 0


async def cmd_send(args: argparse.Namespace, client: Client, rep: Reporter) -> int:
    """``anyurl send MAILTO_URL < body``."""
    u = client.parse(args.url)
    for a in args.attach:
        _local_file_size(a, "attachment", u)
    if sys.stdin.isatty() and not args.quiet:
        print("Type the message; end with Ctrl-D on an empty line.", file=sys.stderr)
    body = sys.stdin.read()
    await with_deadline(args.max_time, client.send_mail(
        u, subject=args.subject, body=body, sender=args.sender, attachments=list(args.attach)), u)
    rep.info(f"message sent to {mask_password(str(u))}")
    return 0

"""``anyurl stat``: a resource's metadata without its body."""

from __future__ import annotations

import sys

from ..errors import mask_password
from .output import Reporter, WritingStdout, printable_text, to_json
from .session import with_deadline

TYPE_CHECKING = False  # not typing's: importing typing costs start-up time (mypy knows this idiom)
if TYPE_CHECKING:
    import argparse

    from ..client import Client


# -- stat -------------------------------------------------------------------------


async def cmd_stat(args: argparse.Namespace, client: Client, rep: Reporter) -> int:
    """``anyurl stat``: metadata without the body."""
    u = client.parse(args.url)
    st = await with_deadline(args.max_time, client.stat(u), u)
    data = st.as_dict()
    data["url"] = mask_password(data["url"])
    with WritingStdout(u):
        if args.json:
            sys.stdout.write(to_json(data, indent=1))
            sys.stdout.write("\n")
        else:
            for key in ("url", "kind", "size", "modified", "content_type"):
                if data[key] is not None:
                    sys.stdout.write(f"{key}: {printable_text(data[key])}\n")
            for key, value in sorted(data["meta"].items()):
                sys.stdout.write(f"{key}: {printable_text(value)}\n")
        sys.stdout.flush()
    return 0

"""``anyurl parse`` and ``anyurl extract``: URLs in text, no network."""

from __future__ import annotations

import sys

from ..errors import AnyURLError, ResourceNotFound
from .output import Reporter, WritingStdout, printable_text
from .quick import (
    json_text,
    url_components,
)

TYPE_CHECKING = False  # not typing's: importing typing costs start-up time (mypy knows this idiom)
if TYPE_CHECKING:
    import argparse


# -- parse / extract ---------------------------------------------------------------


def cmd_parse(args: argparse.Namespace, rep: Reporter) -> int:
    """``anyurl parse``: components as JSON."""
    from ..urls import parse

    code = 0
    several = len(args.urls) > 1
    for text in args.urls:
        try:
            u = parse(text)
        except AnyURLError as exc:
            rep.error(exc)
            code = code or exc.exit_code
            continue
        data = url_components(u, show_password=args.show_password)
        with WritingStdout(None):
            sys.stdout.write(json_text(data, None if several else 2) + "\n")
    with WritingStdout(None):
        sys.stdout.flush()
    return code


def cmd_extract(args: argparse.Namespace, rep: Reporter) -> int:
    """``anyurl extract``: URLs found in text, one per line."""
    import anyurl

    extract = anyurl.extract_urls
    if args.file == "-":
        data = sys.stdin.buffer.read()
    else:
        try:
            from pathlib import Path

            data = Path(args.file).read_bytes()
        except OSError as exc:
            rep.error(f"{args.file}: {exc.strerror or exc}")
            return ResourceNotFound.exit_code if isinstance(exc, FileNotFoundError) else 1
    text = data.decode("utf-8", "surrogateescape")
    with WritingStdout(None):
        for item in extract(text):
            if isinstance(item, tuple):  # tolerate (url, span) style results
                item = item[0]
            sys.stdout.write(printable_text(item) + "\n")
        sys.stdout.flush()
    return 0

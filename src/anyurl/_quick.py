"""The ``anyurl`` command's entry point: ``--version`` and a plain ``parse`` without the CLI module.

Start-up is nearly all of their time, and loading anyurl.cli (~1,400 lines) is
~5% of it; everything else, and any ``parse`` whose URLs do not all parse (the
error lines), goes to :func:`anyurl.cli.main`, which gives the same output.
"""

from __future__ import annotations

import sys

from . import __version__
from .errors import mask_password

TYPE_CHECKING = False  # not typing's: importing typing costs start-up time (mypy knows this idiom)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from .urls import URL

__all__ = ["main", "url_components"]

EXIT_INTERRUPTED = 130  # Ctrl-C, as a shell reports SIGINT
EXIT_PIPE = 141  # stdout closed early (e.g. `| head`), as a shell reports SIGPIPE
# global options that take a value (so the default-command detection can skip it)
_GLOBAL_WITH_VALUE = {"--email", "--news-server", "--user-agent"}


# True while main() holds the collector off for start-up (anyurl.cli turns it back on)
gc_paused = False


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``anyurl`` command; returns the exit code."""
    global gc_paused
    import gc  # built in: no import cost

    # Start-up (asyncio, uvloop, anyurl) makes ~25,000 objects that live to the end; the
    # collections they trigger walk them all for nothing (~4 ms). anyurl.cli resumes the
    # collector, with those objects frozen, once the event loop runs.
    if gc.isenabled():
        gc.disable()
        gc_paused = True
    try:
        return _main(argv)
    finally:
        if gc_paused:
            gc_paused = False
            gc.enable()


def _main(argv: Sequence[str] | None) -> int:
    raw = list(sys.argv[1:] if argv is None else argv)
    if raw == ["--version"]:
        print(f"anyurl {__version__}")
        return 0
    args = _parse_command_line(raw)
    if args is not None and not args.verbose:
        from .urls import parse

        try:
            urls = [parse(text) for text in args.urls]
        except ValueError:  # URLSyntaxError
            urls = []  # anyurl.cli prints the values and the error lines
        try:
            for u in urls:
                data = url_components(u, show_password=args.show_password)
                sys.stdout.write(_json_text(data, None if len(urls) > 1 else 2) + "\n")
            if urls:
                sys.stdout.flush()
                return 0
        except KeyboardInterrupt:
            print("anyurl: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        except BrokenPipeError:
            import os

            try:  # the reader went away (`anyurl parse URL | head`): stop quietly, as anyurl.cli does
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            except OSError:
                pass
            return EXIT_PIPE
    from .cli import run  # main, then exit without the last collections

    return run(raw)


# -- parse -------------------------------------------------------------------------


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def url_components(url: URL, *, show_password: bool = False) -> dict[str, Any]:
    """Every field of *url*, plus ``type`` and ``canonical`` (password masked)."""
    out: dict[str, Any] = {"type": type(url).__name__}
    for name in url._field_names:  # not dataclasses.fields(): importing dataclasses costs ~9 ms
        value = getattr(url, name)
        if name == "password" and value is not None and not show_password:
            value = "****"
        out[name] = _jsonable(value)
    canonical = str(url)
    out["canonical"] = canonical if show_password else mask_password(canonical)
    return out


def _json_text(value: Any, indent: int | None) -> str:
    """``json.dumps(value, ensure_ascii=False, indent=indent)`` for what ``parse`` prints.

    Written here because importing json costs ~2.5 ms, a tenth of `anyurl parse`.
    Strings are quoted by json's own C function; a value of any other kind than
    str, int, bool, None, list or dict (str keys) goes to json itself.
    """
    try:
        from _json import encode_basestring as quote
    except ImportError:  # not CPython
        import json

        return json.dumps(value, ensure_ascii=False, indent=indent)

    def text(v: Any, level: int) -> str:
        if isinstance(v, str):
            return str(quote(v))
        if v is None or isinstance(v, bool):
            return {None: "null", True: "true", False: "false"}[v]
        if type(v) is int:
            return int.__repr__(v)
        if type(v) is list:
            items, ends = [text(x, level + 1) for x in v], "[]"
        elif type(v) is dict and all(type(k) is str for k in v):
            items, ends = [f"{quote(k)}: {text(x, level + 1)}" for k, x in v.items()], "{}"
        else:
            raise TypeError(type(v).__name__)
        if not items:
            return ends
        if indent is None:
            return ends[0] + ", ".join(items) + ends[1]
        pad = "\n" + " " * (indent * (level + 1))
        return ends[0] + pad + ("," + pad).join(items) + "\n" + " " * (indent * level) + ends[1]

    try:
        return text(value, 0)
    except TypeError:
        import json

        return json.dumps(value, ensure_ascii=False, indent=indent)


class _ParseArgs:
    """What argparse would give for a plain ``anyurl [GLOBAL...] parse [--show-password] URL...``."""

    command = "parse"
    quiet = False

    def __init__(self) -> None:
        self.urls: list[str] = []
        self.show_password = False
        self.debug = False
        self.verbose = False


def _parse_command_line(raw: list[str]) -> _ParseArgs | None:
    """``anyurl parse`` without building the argparse tree (it costs more than the parse).

    Only the plain forms are read here; anything else (help, abbreviations,
    ``--``, a URL starting with "-", a missing value) returns None and goes
    through argparse, which gives the same result or its own usage error.
    """
    if "parse" not in raw:
        return None
    args = _ParseArgs()
    seen_command = False
    option_after_url = False  # argparse takes one run of URLs: "parse A --debug B" is its usage error
    i = 0
    while i < len(raw):
        tok = raw[i]
        i += 1
        if tok.startswith("-") and args.urls:
            option_after_url = True
        if tok == "parse" and not seen_command:
            seen_command = True
        elif tok == "--debug":
            args.debug = True
        elif tok in ("-v", "--verbose"):
            args.verbose = True
        elif tok == "--show-password" and seen_command:
            args.show_password = True
        elif tok in _GLOBAL_WITH_VALUE:
            if i >= len(raw) or raw[i].startswith("-"):
                return None
            i += 1
        elif tok.startswith("-"):
            if tok.partition("=")[0] not in _GLOBAL_WITH_VALUE:
                return None
        elif seen_command and not option_after_url:
            args.urls.append(tok)
        else:  # a URL or another command before "parse"
            return None
    return args if seen_command and args.urls else None

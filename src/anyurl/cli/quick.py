"""The ``anyurl`` command's entry point: ``--version`` and a plain ``parse`` without the CLI module.

Start-up is nearly all of their time, and loading anyurl.cli.commands and its neighbours is
~5% of it; everything else, and any ``parse`` whose URLs do not all parse (the
error lines), goes to :func:`anyurl.cli.commands.main`, which gives the same output.
"""

from __future__ import annotations

import sys

from .. import __version__
from ..errors import mask_password

TYPE_CHECKING = False  # not typing's: importing typing costs start-up time (mypy knows this idiom)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ..urls import URL

__all__ = ["Args", "Command", "answer", "read_plain_line", "url_components"]

EXIT_INTERRUPTED = 130  # Ctrl-C, as a shell reports SIGINT
EXIT_PIPE = 141  # stdout closed early (e.g. `| head`), as a shell reports SIGPIPE
EXIT_LOCAL_IO = 10  # TransferError's: standard output cannot take the data


# True while anyurl.__main__.main holds the collector off for start-up (anyurl.cli.commands
# turns it back on)
gc_paused = False


def answer(raw: list[str]) -> int | None:
    """Answer ``--version`` and ``parse`` without loading the commands: the exit code, or
    None when the command line is for :func:`anyurl.cli.commands.run`."""
    if raw == ["--version"]:
        print(f"anyurl {__version__}")
        return 0
    args = read_plain_line(raw, PARSE) if "parse" in raw else None
    if args is not None and not args.verbose:
        from ..urls import parse

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
        except OSError as exc:  # a full disk, a file size limit: anyurl.cli's message and exit code
            print(f"anyurl: cannot write to standard output: {exc.strerror or exc}", file=sys.stderr)
            return EXIT_LOCAL_IO
    return None


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


class Args:
    """A namespace as argparse gives it (``vars()`` works): what the quick reader returns."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.__dict__.update(values)

    def __getattr__(self, name: str) -> Any:  # for mypy: the fields are the command's
        raise AttributeError(name)


class Command:
    """What the quick reader knows of one command: argparse's namespace defaults, its flags
    (option -> field) and its options with a value (option -> field, converter)."""

    __slots__ = ("defaults", "exclusive", "flags", "many", "values")

    def __init__(self, defaults: dict[str, object], flags: dict[str, str],
                 values: dict[str, tuple[str, Callable[[str], object]]], *,
                 many: bool, exclusive: frozenset[str] = frozenset()) -> None:
        self.defaults = defaults
        self.flags = flags
        self.values = values
        self.many = many  # URL... (the field "urls") or one URL ("url")
        self.exclusive = exclusive  # fields argparse allows one of


# the options every command takes, before or after its name
GLOBAL_FLAGS = {"--debug": "debug", "-v": "verbose", "--verbose": "verbose"}
GLOBAL_VALUES: dict[str, tuple[str, Callable[[str], object]]] = {
    "--email": ("email", str), "--news-server": ("news_server", str), "--user-agent": ("user_agent", str)}
GLOBAL_DEFAULTS: dict[str, object] = {"debug": False, "verbose": False, "email": None, "news_server": None,
                                      "user_agent": None}
# build_parser's set_defaults for commands without network options
_NO_NETWORK = {"timeout": None, "connect_timeout": None, "max_time": None, "quiet": False, "parallel": 0}
PARSE = {"parse": Command({"command": "parse", "urls": [], "show_password": False, **_NO_NETWORK,
                           **GLOBAL_DEFAULTS},
                          {**GLOBAL_FLAGS, "--show-password": "show_password"}, GLOBAL_VALUES, many=True)}


def read_plain_line(argv: list[str], commands: dict[str, Command]) -> Args | None:
    """The namespace argparse gives for a plain ``anyurl [GLOBAL...] COMMAND [OPTION...] URL...``
    of one of *commands*, or None: not such a line (argparse reads it, or gives its usage error).

    Building the argparse tree costs more than a ``parse`` and a fifth of what anyurl adds to a
    one-file download. Only the plain forms are read here: each option spelled out in full and
    given once, the URLs in one run, no ``--``, no help; tests/unit/cli/test_startup.py compares
    the namespaces with argparse's.
    """
    command: Command | None = None
    urls: list[str] = []
    seen: dict[str, object] = {}
    options_after_urls = False
    i = 0
    while i < len(argv):
        tok = argv[i]
        i += 1
        if not tok.startswith("-") or tok == "-":
            if command is None:
                command = commands.get(tok)
                if command is None:
                    return None
            elif options_after_urls:
                return None  # argparse takes one run of URLs
            else:
                urls.append(tok)
            continue
        if urls:
            options_after_urls = True
        name, eq, value = tok.partition("=")
        flags, values = (GLOBAL_FLAGS, GLOBAL_VALUES) if command is None else (command.flags, command.values)
        if name in flags and not eq:
            dest = flags[name]
            converted: object = True
        elif name in values and (not eq or name.startswith("--")):
            dest, convert = values[name]
            if not eq:
                if i >= len(argv) or (argv[i].startswith("-") and argv[i] != "-"):
                    return None
                value = argv[i]
                i += 1
            try:
                converted = convert(value)
            except Exception:  # argparse's own message
                return None
        else:
            return None
        if dest in seen:
            return None
        seen[dest] = converted
    if command is None or not urls or len(command.exclusive.intersection(seen)) > 1:
        return None  # argparse: the usage error (or the empty list cmd_get reports)
    if command.many:
        seen["urls"] = urls
    elif len(urls) == 1:
        seen["url"] = urls[0]
    else:
        return None
    return Args({**command.defaults, **seen})

"""The ``anyurl`` command's entry point: ``--version`` and a plain ``parse`` without the CLI module.

Start-up is nearly all of their time, and loading anyurl.cli.commands and its neighbours is
~5% of it; everything else, and any ``parse`` whose URLs do not all parse (the
error lines), goes to :func:`anyurl.cli.commands.main`, which gives the same output.
"""

from __future__ import annotations

import sys

from ..errors import mask_password
from ..version import __version__
from .exits import EXIT_INTERRUPTED, EXIT_LOCAL_IO, EXIT_PIPE

TYPE_CHECKING = False  # not typing's: importing typing costs start-up time (mypy knows this idiom)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ..urls import URL
    from .grammar import Option

__all__ = ["Args", "Reading", "answer", "json_text", "read_plain_line", "readers", "url_components"]



# True while anyurl.__main__.main holds the collector off for start-up (anyurl.cli.commands
# turns it back on)
gc_paused = False


def answer(raw: list[str]) -> int | None:
    """Answer ``--version`` and ``parse`` without loading the commands: the exit code, or
    None when the command line is for :func:`anyurl.cli.commands.run`."""
    if raw == ["--version"]:
        print(f"anyurl {__version__}")
        return 0
    args = read_plain_line(raw, readers(("parse",))) if "parse" in raw else None
    if args is not None and not args.verbose:
        from ..urls import parse

        try:
            urls = [parse(text) for text in args.urls]
        except ValueError:  # URLSyntaxError
            urls = []  # anyurl.cli prints the values and the error lines
        try:
            for u in urls:
                data = url_components(u, show_password=args.show_password)
                sys.stdout.write(json_text(data, None if len(urls) > 1 else 2) + "\n")
            if urls:
                sys.stdout.flush()
                return 0
        except KeyboardInterrupt:
            sys.stderr.write("anyurl: interrupted\n")  # one write, as anyurl.__main__ says why
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


def json_text(value: Any, indent: int | None) -> str:
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


class Reading:
    """What the quick reader knows of one command, derived from its declaration in
    :mod:`anyurl.cli.grammar`: argparse's namespace defaults, its flags (option -> field, value)
    and its options with a value (option -> field, converter)."""

    __slots__ = ("defaults", "exclusive", "flags", "many", "positional", "values")

    def __init__(self, defaults: dict[str, object], flags: dict[str, tuple[str, object]],
                 values: dict[str, tuple[str, Callable[[str], object]]], *, positional: str,
                 many: bool, exclusive: tuple[frozenset[str], ...] = ()) -> None:
        self.defaults = defaults
        self.flags = flags
        self.values = values
        self.positional = positional  # the field of the URLs
        self.many = many  # URL... (a list) or one URL
        self.exclusive = exclusive  # groups of fields argparse allows one of each


def _options(options: tuple[Option, ...], flags: dict[str, tuple[str, object]],
             values: dict[str, tuple[str, Callable[[str], object]]]) -> None:
    """Enter what the quick reader reads of *options*: flags and plain values. A repeatable
    option or one with choices is left out: a line with it goes to argparse."""
    for opt in options:
        if opt.action in ("flag", "off"):
            for name in opt.names:
                flags[name] = (opt.dest, opt.action == "flag")
        elif opt.action == "value" and opt.choices is None:
            for name in opt.names:
                values[name] = (opt.dest, opt.convert or str)


_global_reading: tuple[dict[str, tuple[str, object]], dict[str, tuple[str, Callable[[str], object]]]] | None = None


def _globals() -> tuple[dict[str, tuple[str, object]], dict[str, tuple[str, Callable[[str], object]]]]:
    """The global options' flags and values (read before the command's name too)."""
    global _global_reading
    if _global_reading is None:
        from .grammar import GLOBAL

        flags: dict[str, tuple[str, object]] = {}
        values: dict[str, tuple[str, Callable[[str], object]]] = {}
        _options(GLOBAL, flags, values)
        _global_reading = flags, values
    return _global_reading


def readers(names: tuple[str, ...] | None = None) -> dict[str, Reading]:
    """The quick reader's view of the grammar's ``quick`` commands (of *names* only, if given)."""
    from . import grammar

    out: dict[str, Reading] = {}
    for cmd in grammar.COMMANDS:
        if not cmd.quick or (names is not None and cmd.name not in names):
            continue
        (pos,) = cmd.positionals  # a quick command takes one positional (URL or URL...)
        many = pos.nargs in ("*", "+")
        global_flags, global_values = _globals()
        flags, values = dict(global_flags), dict(global_values)
        defaults: dict[str, object] = {**grammar.COMMON_DEFAULTS, "command": cmd.name,
                                       pos.dest: [] if many else pos.default}
        options = grammar.GLOBAL + (grammar.NETWORK if cmd.network else ()) + cmd.options
        for opt in options:
            defaults[opt.dest] = [] if opt.action == "append" else opt.default
        _options(options, flags, values)
        out[cmd.name] = Reading(defaults, flags, values, positional=pos.dest, many=many,
                                exclusive=tuple(frozenset(g) for g in cmd.exclusive))
    return out


def read_plain_line(argv: list[str], commands: dict[str, Reading]) -> Args | None:
    """The namespace argparse gives for a plain ``anyurl [GLOBAL...] COMMAND [OPTION...] URL...``
    of one of *commands*, or None: not such a line (argparse reads it, or gives its usage error).

    Building the argparse tree costs more than a ``parse`` and a fifth of what anyurl adds to a
    one-file download. Only the plain forms are read here: each option spelled out in full and
    given once, the URLs in one run, no ``--``, no help; tests/unit/cli/test_startup.py compares
    the namespaces with argparse's.
    """
    command: Reading | None = None
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
        flags, values = _globals() if command is None else (command.flags, command.values)
        if name in flags and not eq:
            dest, converted = flags[name]
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
    if command is None or not urls or any(len(g.intersection(seen)) > 1 for g in command.exclusive):
        return None  # argparse: the usage error (or the empty list cmd_get reports)
    if command.many:
        seen[command.positional] = urls
    elif len(urls) == 1:
        seen[command.positional] = urls[0]
    else:
        return None
    return Args({**command.defaults, **seen})

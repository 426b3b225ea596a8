"""The argparse parser of the ``anyurl`` command, built from :mod:`anyurl.cli.grammar`.

argparse reads every line the quick reader (:mod:`anyurl.cli.quick`) does not: abbreviations,
bundled short options, ``--``, help and usage errors. Both read the one declaration in
``grammar``, so they give the same namespace for the same line.
"""

from __future__ import annotations

import os
import sys

from ..version import __version__
from . import grammar
from .exits import exit_code_table
from .quick import read_plain_line, readers

TYPE_CHECKING = False  # not typing's: importing typing costs start-up time (mypy knows this idiom)
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any
else:
    from .lazy import OnFirstUse

    argparse = OnFirstUse("argparse")


COMMANDS = grammar.NAMES


def commands_epilog() -> str:
    """The help's closing text: every command, then the exit-code table."""
    listed = sorted(grammar.COMMANDS, key=lambda c: grammar.LISTED.index(c.name) if c.name in grammar.LISTED else 99)
    lines = ["commands:"]
    lines += [f"  {c.synopsis:<17} {c.summary}" for c in listed]
    lines += [
        "`anyurl URL...` is `anyurl get URL...` (`anyurl open URL` for telnet: URLs).",
        "",
        "exit codes (with several URLs: the first failing URL's code; mirror: the first failing",
        "entry's in tree order):",
    ]
    for code, name, doc in exit_code_table():
        lines.append(f"  {code:>3}  {name:<18} {doc}")
    return "\n".join(lines)


# -- argument parsing --------------------------------------------------------


def _typed(convert: Callable[[str], object]) -> Callable[[str], object]:
    """An argparse type from a grammar converter: its ValueError's text is argparse's message."""

    def typed(text: str) -> object:
        try:
            return convert(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return typed


def _add(target: Any, opt: grammar.Option, default: object) -> None:
    """Add *opt* to a parser, group or exclusive group, with *default*."""
    kw: dict[str, Any] = {"dest": opt.dest, "default": default, "help": opt.help}
    if opt.action in ("flag", "off"):
        kw["action"] = "store_true" if opt.action == "flag" else "store_false"
    else:
        if opt.action == "append":
            kw["action"] = "append"
        if opt.metavar is not None:
            kw["metavar"] = opt.metavar
        if opt.convert is not None:
            kw["type"] = _typed(opt.convert)
        if opt.choices is not None:
            kw["choices"] = opt.choices
    target.add_argument(*opt.names, **kw)


def _global_options(parser: argparse.ArgumentParser, *, sub: bool) -> None:
    # on subcommands the defaults are SUPPRESSed so they do not undo a value given before the command
    g = parser.add_argument_group("global options")
    for opt in grammar.GLOBAL:
        _add(g, opt, argparse.SUPPRESS if sub else opt.default)


def _network_options(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("network options")
    for opt in grammar.NETWORK:
        _add(g, opt, [] if opt.action == "append" else opt.default)


def _command(sp: Any, cmd: grammar.Command, formatter: Callable[[str], argparse.HelpFormatter]
             ) -> argparse.ArgumentParser:
    sub: argparse.ArgumentParser = sp.add_parser(cmd.name, help=cmd.help, description=cmd.description,
                                                 formatter_class=formatter)
    for pos in cmd.positionals:
        kw: dict[str, Any] = {"metavar": pos.metavar}
        if pos.nargs is not None:
            kw["nargs"] = pos.nargs
        if pos.default is not None:
            kw["default"] = pos.default
        if pos.help is not None:
            kw["help"] = pos.help
        sub.add_argument(pos.dest, **kw)
    groups: dict[str, Any] = {}
    for opt in cmd.options:
        group = next((g for g in cmd.exclusive if opt.dest in g), None)
        target: Any
        if group is None:
            target = sub
        else:
            target = groups.get(group[0])
            if target is None:
                target = groups[group[0]] = sub.add_mutually_exclusive_group()
        _add(target, opt, [] if opt.action == "append" else opt.default)
    if cmd.network:
        _network_options(sub)
    _global_options(sub, sub=True)
    return sub


def _columns() -> int:
    """``shutil.get_terminal_size().columns`` without shutil (it loads zlib, bz2, lzma, fnmatch)."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def build_parser(commands: dict[str, argparse.ArgumentParser] | None = None) -> argparse.ArgumentParser:
    """The argparse parser of the ``anyurl`` command (each command's own parser put in *commands*)."""
    # Given a width, argparse's formatters (made at every add_argument) do not import shutil.
    def raw(prog: str) -> argparse.HelpFormatter:
        return argparse.RawDescriptionHelpFormatter(prog, width=_columns() - 2)

    def plain(prog: str) -> argparse.HelpFormatter:
        return argparse.HelpFormatter(prog, width=_columns() - 2)

    p = argparse.ArgumentParser(
        prog="anyurl",
        description="Retrieve a resource from any RFC 1738 URL: "
                    "ftp, http, gopher, mailto, news, nntp, telnet, wais, file, prospero.",
        epilog=commands_epilog(),
        formatter_class=raw,
    )
    p.add_argument("--version", action="version", version=f"anyurl {__version__}")
    _global_options(p, sub=False)
    # what the network options and get's --parallel give; here for the commands without them
    p.set_defaults(**grammar.COMMON_DEFAULTS)
    sp = p.add_subparsers(dest="command", metavar="COMMAND")
    for cmd in grammar.COMMANDS:
        sub = _command(sp, cmd, plain)
        if commands is not None:
            commands[cmd.name] = sub
    return p


def parse_command_line(argv: list[str]) -> argparse.Namespace:
    """argparse's reading of *argv* (the default command inserted). An option it does not know
    is a usage error under that command's own usage (argparse's top-level usage said nothing of
    the command); one that curl or wget users type gets anyurl's way of doing it
    (grammar.HABITS: ``stat`` for -I, ``mirror`` for -r...). Exits 2 on a usage error."""
    commands: dict[str, argparse.ArgumentParser] = {}
    parser = build_parser(commands)
    args, extras = parser.parse_known_args(argv)
    if extras:
        hints = list(dict.fromkeys(grammar.HABITS[h] for e in extras
                                   if (h := e.partition("=")[0]) in grammar.HABITS))
        where = commands.get(args.command) if args.command else None
        (where or parser).error(f"unrecognized arguments: {' '.join(extras)}"
                                + "".join(f"\n  {hint}" for hint in hints))
    if args.command is None:
        parser.print_help(sys.stderr)
        parser.exit(2)
    return args


_GLOBAL_FLAGS = frozenset(n for o in grammar.GLOBAL if o.action in ("flag", "off") for n in o.names)
_GLOBAL_VALUES = tuple(n for o in grammar.GLOBAL if o.action not in ("flag", "off") for n in o.names)


def insert_default_command(argv: list[str]) -> list[str]:
    """``anyurl URL...`` -> ``anyurl get URL...`` (``open`` for telnet: URLs)."""
    i = 0
    while i < len(argv):
        tok = argv[i]
        if tok in _GLOBAL_FLAGS or any(tok.startswith(o + "=") for o in _GLOBAL_VALUES):
            i += 1
            continue
        if tok in _GLOBAL_VALUES:
            i += 2
            continue
        if tok in COMMANDS or tok in ("-h", "--help", "--version"):
            return argv
        if tok.lower().startswith("telnet:"):
            return argv[:i] + ["open"] + argv[i:]
        return argv[:i] + ["get"] + argv[i:]
    return argv



# `anyurl get`, `ls`, `stat` and `parse`: their plain lines are read without argparse
QUICK_COMMANDS = readers()


def parse_plain_line(argv: list[str]) -> Any:
    """The namespace argparse gives for a plain get, ls, stat or parse line, or None (argparse reads it).
    *argv* has the default command inserted."""
    return read_plain_line(argv, QUICK_COMMANDS)

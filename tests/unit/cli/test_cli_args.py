"""The CLI's argument handling: the merged numeric option parser and the argparse-free `parse` path."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math

import pytest

from anyurl.cli import commands as cli
from anyurl.cli import quick as _quick


@pytest.mark.parametrize(("option", "text", "value"), [
    ("--parallel", "1", 1), ("--parallel", "64", 64),
    ("--retry", "0", 0), ("--retry", "5", 5),
    ("--retry-delay", "0", 0.0), ("--retry-delay", "0.25", 0.25),
    ("--timeout", "0.5", 0.5), ("--timeout", "inf", math.inf),
])
def test_numeric_options_in_bounds(option: str, text: str, value: float) -> None:
    args = cli.build_parser().parse_args(["get", option, text, "file:///x"])
    assert getattr(args, option.lstrip("-").replace("-", "_")) == value


@pytest.mark.parametrize(("option", "text", "message"), [
    ("--parallel", "0", "must be at least 1: '0'"),
    ("--parallel", "2.5", "not an integer: '2.5'"),
    ("--retry", "-1", "must be 0 or more: '-1'"),
    ("--retry-delay", "-0.1", "must be 0 or more: '-0.1'"),
    ("--retry-delay", "nan", "must be 0 or more: 'nan'"),
    ("--timeout", "0", "must be positive: '0'"),
    ("--timeout", "nan", "must be positive: 'nan'"),     # NaN passed `value <= 0` before
    ("--timeout", "soon", "not a number of seconds: 'soon'"),
    ("--connect-timeout", "-3", "must be positive: '-3'"),
])
def test_numeric_options_out_of_bounds(option: str, text: str, message: str) -> None:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as info:
        cli.build_parser().parse_args(["get", option, text, "file:///x"])
    assert info.value.code == 2
    assert f"argument {option}" in err.getvalue() and message in err.getvalue()


def test_mirror_numeric_options() -> None:
    args = cli.build_parser().parse_args(["mirror", "--max-depth", "0", "--delay", "1.5", "ftp://h/", "d"])
    assert (args.max_depth, args.delay) == (0, 1.5)


# Command lines the parse fast path must read exactly as argparse does, or hand to argparse.
ARGVS = [
    ["parse", "ftp://h/x"],
    ["parse", "ftp://h/x", "http://a/b"],
    ["parse", "--show-password", "ftp://u:p@h/x"],
    ["parse", "ftp://u:p@h/x", "--show-password"],
    ["--debug", "parse", "http://h/"],
    ["-v", "parse", "--debug", "http://h/"],
    ["--email", "me@x", "parse", "http://h/"],
    ["--email=me@x", "parse", "--user-agent", "ua", "http://h/"],
    ["--news-server", "parse", "parse", "http://h/"],      # "parse" as the option's value
    ["parse", "parse"],                                    # "parse" as a URL
    ["parse", "a", "--debug", "b"],                        # argparse: unrecognized b
    ["parse", "--show", "x"],                              # an abbreviation
    ["parse", "--", "-x"],
    ["parse", "-x"],
    ["parse"],
    ["--show-password", "parse", "x"],
    ["get", "parse"],
    ["parse", "x", "-h"],
    ["--email", "-v", "parse", "x"],
    ["parse", "--verbose", "x", "y"],
]


@pytest.mark.parametrize("argv", ARGVS, ids=" ".join)
def test_parse_fast_path_reads_what_argparse_reads(argv: list[str]) -> None:
    fast = _quick.read_plain_line(argv, _quick.readers(("parse",)))
    try:
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            full: argparse.Namespace | None = cli.build_parser().parse_args(argv)
    except SystemExit:
        full = None
    if fast is None:
        return  # argparse decides (and gives its own usage error when the line is wrong)
    assert full is not None and full.command == "parse"
    assert vars(fast) == vars(full)


def test_parse_fast_path_is_taken_for_the_plain_forms() -> None:
    for argv in (["parse", "x"], ["--debug", "parse", "--show-password", "x", "y"], ["--email", "e", "parse", "x"]):
        assert _quick.read_plain_line(argv, _quick.readers(("parse",))) is not None
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli.main(["parse", "ftp://joe:pw@h/a/b;type=i", "gopher://g/1/"]) == 0
    first, second = (json.loads(line) for line in out.getvalue().splitlines())
    assert (first["type"], first["password"], first["cwd"], first["typecode"]) == ("FTPURL", "****", ["a"], "i")
    assert second["type"] == "GopherURL"


# -- one grammar: anyurl.cli.grammar is read by both argparse and the quick reader ------------


def _sample_lines() -> list[list[str]]:
    """Every option of every quick command in the grammar, each spelling, in a plain line."""
    from anyurl.cli import grammar

    lines = []
    for cmd in grammar.COMMANDS:
        if not cmd.quick:
            continue
        options = grammar.GLOBAL + (grammar.NETWORK if cmd.network else ()) + cmd.options
        for opt in options:
            if opt.action == "append" or opt.choices is not None:
                continue  # the quick reader leaves these to argparse (see the next test)
            for name in opt.names:
                given = [name] if opt.action in ("flag", "off") else [name, "1"]
                lines.append([cmd.name, *given, "u"])
                if opt in grammar.GLOBAL:
                    lines.append([*given, cmd.name, "u"])
    return lines


@pytest.mark.parametrize("argv", _sample_lines(), ids=" ".join)
def test_every_declared_option_reads_the_same_without_argparse(argv: list[str]) -> None:
    # the quick reader and argparse read one declaration: each plain option of a quick command
    # is read by both, to the same namespace
    quick = cli.parse_plain_line(argv)
    assert quick is not None, argv
    assert vars(quick) == vars(cli.build_parser().parse_args(argv))


def test_a_repeatable_option_goes_to_argparse_and_reads_the_same() -> None:
    argv = ["get", "-H", "A: 1", "--header", "B: 2", "u"]
    assert cli.parse_plain_line(argv) is None
    args = cli.build_parser().parse_args(argv)
    assert args.header == [("A", "1"), ("B", "2")]
    assert cli.build_parser().parse_args(["get", "u"]).header == []


def _env() -> dict[str, str]:
    import os
    from pathlib import Path

    import anyurl

    return {**os.environ, "PYTHONPATH": str(Path(anyurl.__file__).parent.parent)}  # this checkout's


def test_the_grammar_costs_nothing_to_import() -> None:
    import subprocess
    import sys

    code = ("import sys, anyurl.cli; before = set(sys.modules); import anyurl.cli.grammar; "
            "print(sorted(set(sys.modules) - before))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True,
                         env=_env())
    assert out.stdout.split() == ["['anyurl.cli.grammar']"]


def test_version_does_not_read_the_grammar() -> None:
    import subprocess
    import sys

    code = ("import sys; from anyurl.__main__ import main; main(['--version']); "
            "print('anyurl.cli.grammar' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True,
                         env=_env())
    assert out.stdout.split()[-1] == "False"

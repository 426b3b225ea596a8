"""The ``anyurl`` command's argument grammar: the argparse parser, and the table the quick reader uses."""

from __future__ import annotations

import os
import sys

from .. import __version__
from .exits import exit_code_table
from .quick import (
    GLOBAL_DEFAULTS,
    GLOBAL_FLAGS,
    GLOBAL_VALUES,
    PARSE,
    Command,
    read_plain_line,
)

TYPE_CHECKING = False  # not typing's: importing typing costs start-up time (mypy knows this idiom)
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any, TypeVar


    _N = TypeVar("_N", int, float)
else:
    from .lazy import OnFirstUse

    argparse = OnFirstUse("argparse")


COMMANDS = ("get", "ls", "stat", "mirror", "parse", "extract", "put", "send", "open")


def _epilog() -> str:
    lines = [
        "commands:",
        "  get URL...        download (to stdout, -o FILE, -O, or -d DIR)",
        "  ls URL            list a directory-like resource (FTP dir, gopher menu, news group...)",
        "  stat URL          size, date and type without the body",
        "  mirror URL DIR    copy a directory tree into DIR (parallel, resumable, never overwrites)",
        "  parse URL         show the URL's components as JSON",
        "  extract [FILE]    print the URLs found in text (RFC 1738 appendix rules)",
        "  put FILE URL      upload FILE (FTP)",
        "  send MAILTO_URL   send stdin as a mail message",
        "  open URL          interactive session (telnet)",
        "`anyurl URL...` is `anyurl get URL...` (`anyurl open URL` for telnet: URLs).",
        "",
        "exit codes (with several URLs: the first failing URL's code; mirror: the first failing",
        "entry's in tree order):",
    ]
    for code, name, doc in exit_code_table():
        lines.append(f"  {code:>3}  {name:<18} {doc}")
    return "\n".join(lines)


# -- argument parsing --------------------------------------------------------


def _number(kind: Callable[[str], _N], least: _N, *, above: bool = False,
            what: str = "an integer") -> Callable[[str], _N]:
    """An argparse type: a *kind* number at least *least* (more than it when *above*); NaN never passes."""
    bound = (("positive" if least == 0 else f"more than {least}") if above
             else ("0 or more" if least == 0 else f"at least {least}"))

    def convert(text: str) -> _N:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {what}: {text!r}") from None
        if not (value > least if above else value >= least):
            raise argparse.ArgumentTypeError(f"must be {bound}: {text!r}")
        return value

    return convert


_positive_int = _number(int, 1)
_count = _number(int, 0)
_delay = _number(float, 0.0, what="a number of seconds")
_seconds = _number(float, 0.0, above=True, what="a number of seconds")


def _size(text: str) -> int:
    """A byte count, optionally with a k/M/G suffix (powers of 1024)."""
    t = text.strip().lower().removesuffix("b") or "x"
    mult = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}.get(t[-1], 1)
    digits = t[:-1] if mult > 1 else t
    try:
        value = int(float(digits) * mult)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (use e.g. 1000, 64k, 10M)") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"negative size: {text!r}")
    return value


def _global_options(parser: argparse.ArgumentParser, *, sub: bool) -> None:
    # on subcommands the defaults are SUPPRESSed so they do not undo a value given before the command
    d: Any = argparse.SUPPRESS if sub else None
    g = parser.add_argument_group("global options")
    g.add_argument("--debug", action="store_true", default=argparse.SUPPRESS if sub else False,
                   help="show tracebacks on errors")
    g.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS if sub else False,
                   help="show connections, protocol commands sent (passwords masked) and replies on stderr")
    g.add_argument("--email", metavar="ADDR", default=d,
                   help="password for anonymous FTP (default: $ANYURL_EMAIL or $USER@localhost)")
    g.add_argument("--news-server", metavar="HOST[:PORT]", default=d,
                   help="NNTP server for news: URLs (default: $NNTPSERVER)")
    g.add_argument("--user-agent", metavar="TEXT", default=d, help="HTTP User-Agent")


def _network_options(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("network options")
    g.add_argument("--timeout", type=_seconds, metavar="S", default=None,
                   help="idle timeout: give up when no data arrives for S seconds (default 60)")
    g.add_argument("--connect-timeout", type=_seconds, metavar="S", default=None,
                   help="give up when a connection takes longer than S seconds (default 30)")
    g.add_argument("--max-time", type=_seconds, metavar="S", default=None,
                   help="give up on a transfer that takes longer than S seconds in all")
    g.add_argument("--retry", type=_count, metavar="N", default=0,
                   help="retry a transient failure (timeout, lost connection, 4xx-style reply) "
                        "up to N times; a download resumes where the scheme allows (default 0)")
    g.add_argument("--retry-delay", type=_delay, metavar="S", default=None,
                   help="first wait between retries, doubled each time (default 1; "
                        "a server's Retry-After wins when longer)")
    g.add_argument("--proxy", metavar="URL", default=None,
                   help="HTTP proxy for http, https and ftp URLs, as [http://]host:port "
                        "(default: $http_proxy, $https_proxy, $ftp_proxy; '' for none)")
    g.add_argument("--noproxy", metavar="LIST", default=None,
                   help="comma-separated hosts, domains or CIDR blocks reached directly; '*' for all "
                        "(default: $no_proxy)")
    g.add_argument("--http1.1", dest="http1_1", action="store_true",
                   help="speak HTTP/1.1 to https servers (default: HTTP/2 where the server offers it)")
    g.add_argument("-q", "--quiet", action="store_true", help="no progress bars or messages")


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


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of the ``anyurl`` command."""
    # Given a width, argparse's formatters (made at every add_argument) do not import shutil.
    def raw(prog: str) -> argparse.HelpFormatter:
        return argparse.RawDescriptionHelpFormatter(prog, width=_columns() - 2)

    def plain(prog: str) -> argparse.HelpFormatter:
        return argparse.HelpFormatter(prog, width=_columns() - 2)

    p = argparse.ArgumentParser(
        prog="anyurl",
        description="Retrieve a resource from any RFC 1738 URL: "
                    "ftp, http, gopher, mailto, news, nntp, telnet, wais, file, prospero.",
        epilog=_epilog(),
        formatter_class=raw,
    )
    p.add_argument("--version", action="version", version=f"anyurl {__version__}")
    _global_options(p, sub=False)
    # what _network_options and get's --parallel give; here for the commands without them
    p.set_defaults(timeout=None, connect_timeout=None, max_time=None, quiet=False, parallel=0)
    sp = p.add_subparsers(dest="command", metavar="COMMAND")
    import functools

    add_parser = functools.partial(sp.add_parser, formatter_class=plain)

    get = add_parser("get", help="download URLs", description="Download one or more URLs. "
                        "One URL without -o/-O/-d goes to standard output.")
    get.add_argument("urls", nargs="*", metavar="URL")
    get.add_argument("-i", "--input-file", metavar="FILE",
                     help="also read URLs from FILE, one a line ('-': standard input; # comments)")
    out = get.add_mutually_exclusive_group()
    out.add_argument("-o", "--output", metavar="FILE",
                     help="write to FILE ('-': standard output, byte-exact even on a terminal; without -o "
                          "a terminal is shown the data with control characters escaped)")
    out.add_argument("-O", "--remote-name", action="store_true",
                     help="name the file after the URL's last path component (made safe)")
    out.add_argument("-d", "--dir", metavar="DIR",
                     help="write each URL to DIR/<name> (name as with -O)")
    get.add_argument("--parallel", type=_positive_int, default=4, metavar="N",
                     help="download up to N URLs at once (default 4)")
    get.add_argument("-c", "--continue", dest="resume", action="store_true",
                     help="keep a partial file on failure and resume it on the next --continue run")
    get.add_argument("--max-size", type=_size, metavar="N",
                     help="refuse resources larger than N bytes (suffixes k, M, G)")
    get.add_argument("--force", action="store_true",
                     help="replace an existing file that has other content (default: refuse)")
    _network_options(get)
    _global_options(get, sub=True)

    mir = add_parser("mirror", help="copy a directory tree into DIR",
                        description="Copy every file below URL (FTP or file: directory, gopher menu, "
                                    "news group...) into DIR, keeping the tree. Names are decoded once "
                                    "and kept inside DIR; files are byte-exact; an existing file with "
                                    "other content is never replaced without --force or --newer. "
                                    "Every error is reported; the exit code is that of the first "
                                    "failing entry in tree order (paths compared name by name), "
                                    "whichever failed first in time (0 when none).")
    mir.add_argument("url", metavar="URL")
    mir.add_argument("dir", metavar="DIR")
    mir.add_argument("--parallel", type=_positive_int, default=8, metavar="N",
                     help="download up to N files at once (default 8)")
    mir.add_argument("-c", "--continue", dest="resume", action="store_true",
                     help="keep partial files on failure and resume them on the next --continue run")
    mir.add_argument("-N", "--newer", action="store_true",
                     help="skip files whose local copy has the remote size and is not older; "
                          "replace the others")
    mir.add_argument("--force", action="store_true", help="replace existing files that have other content")
    mir.add_argument("--no-requisites", dest="requisites", action="store_false",
                     help="of a web site, only the pages' links, not their images, stylesheets and scripts")
    mir.add_argument("--symlinks", choices=("copy", "keep"), default="copy",
                     help="copy what a server symlink leads to (default), or keep it as a local symlink "
                          "when its target stays inside DIR")
    mir.add_argument("--max-depth", type=_count, metavar="N", default=None,
                     help="go at most N directory levels below URL (0: only the files of URL "
                          "itself; default: no limit)")
    mir.add_argument("--include", action="append", default=[], metavar="GLOB",
                     help="only files whose relative path or name matches GLOB (repeatable)")
    mir.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                     help="leave out files whose relative path or name matches GLOB (repeatable)")
    mir.add_argument("--delay", type=_delay, metavar="S", default=0.0,
                     help="at least S seconds between two listings of one host (default 0)")
    mir.add_argument("--no-robots", dest="robots", action="store_false",
                     help="ignore robots.txt on http(s) hosts")
    _network_options(mir)
    _global_options(mir, sub=True)

    ls = add_parser("ls", help="list a directory-like resource",
                       description="List the entries of a directory-like resource "
                                   "(FTP directory, gopher menu, news group, file: directory).")
    ls.add_argument("url", metavar="URL")
    fmt = ls.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="a JSON array of entries")
    fmt.add_argument("--json-lines", action="store_true", help="one JSON object per line")
    _network_options(ls)
    _global_options(ls, sub=True)

    st = add_parser("stat", help="show a resource's size, date and type",
                       description="Show size, modification time, type and scheme facts of a "
                                   "resource without transferring its body (HTTP HEAD, FTP "
                                   "SIZE/MDTM, file stat, Gopher+ attributes, NNTP STAT/HEAD).")
    st.add_argument("url", metavar="URL")
    st.add_argument("--json", action="store_true", help="one JSON object")
    _network_options(st)
    _global_options(st, sub=True)

    parse = add_parser("parse", help="show a URL's components as JSON",
                          description="Parse URLs and print their components as JSON "
                                      "(one object per URL, one per line when several).")
    parse.add_argument("urls", nargs="+", metavar="URL")
    parse.add_argument("--show-password", action="store_true", help="do not mask the password")
    _global_options(parse, sub=True)

    ext = add_parser("extract", help="print the URLs found in text",
                        description="Print the URLs found in a text (a file, or standard input), "
                                    "one per line.")
    ext.add_argument("file", nargs="?", default="-", metavar="FILE", help="default: standard input")
    _global_options(ext, sub=True)

    put = add_parser("put", help="upload a file", description="Upload FILE to URL (FTP STOR).")
    put.add_argument("file", metavar="FILE")
    put.add_argument("url", metavar="URL")
    _network_options(put)
    _global_options(put, sub=True)

    send = add_parser("send", help="send a mail message",
                         description="Send standard input as a message to a mailto: URL.")
    send.add_argument("url", metavar="MAILTO_URL")
    send.add_argument("-s", "--subject", help="subject (default: the URL's subject= header, if any)")
    send.add_argument("--from", dest="sender", metavar="ADDR", help="sender address")
    send.add_argument("--attach", action="append", default=[], metavar="FILE",
                      help="attach FILE (repeatable)")
    _network_options(send)
    _global_options(send, sub=True)

    opn = add_parser("open", help="interactive session (telnet)",
                        description="Open an interactive session for a telnet: URL "
                                    "(other URLs are fetched to standard output).")
    opn.add_argument("url", metavar="URL")
    _network_options(opn)
    _global_options(opn, sub=True)
    return p


def _insert_default_command(argv: list[str]) -> list[str]:
    """``anyurl URL...`` -> ``anyurl get URL...`` (``open`` for telnet: URLs)."""
    i = 0
    while i < len(argv):
        tok = argv[i]
        if tok in GLOBAL_FLAGS or any(tok.startswith(o + "=") for o in GLOBAL_VALUES):
            i += 1
            continue
        if tok in GLOBAL_VALUES:
            i += 2
            continue
        if tok in COMMANDS or tok in ("-h", "--help", "--version"):
            return argv
        if tok.lower().startswith("telnet:"):
            return argv[:i] + ["open"] + argv[i:]
        return argv[:i] + ["get"] + argv[i:]
    return argv


# `anyurl get`, `ls`, `stat` (and `parse`) read without argparse: see _quick.read_plain_line
_COMMON_DEFAULTS: dict[str, object] = {
    "timeout": None, "connect_timeout": None, "max_time": None, "retry": 0, "retry_delay": None,
    "proxy": None, "noproxy": None, "http1_1": False, "quiet": False, **GLOBAL_DEFAULTS,
}
_COMMON_FLAGS = {**GLOBAL_FLAGS, "-q": "quiet", "--quiet": "quiet", "--http1.1": "http1_1"}
_COMMON_VALUES: dict[str, tuple[str, Callable[[str], object]]] = {
    **GLOBAL_VALUES, "--timeout": ("timeout", _seconds), "--connect-timeout": ("connect_timeout", _seconds),
    "--max-time": ("max_time", _seconds), "--retry": ("retry", _count), "--retry-delay": ("retry_delay", _delay),
    "--proxy": ("proxy", str), "--noproxy": ("noproxy", str),
}
_QUICK_COMMANDS: dict[str, Command] = {
    **PARSE,
    "get": Command(
        {"command": "get", "urls": [], "input_file": None, "output": None, "remote_name": False, "dir": None,
         "parallel": 4, "resume": False, "max_size": None, "force": False, **_COMMON_DEFAULTS},
        {**_COMMON_FLAGS, "-O": "remote_name", "--remote-name": "remote_name", "-c": "resume",
         "--continue": "resume", "--force": "force"},
        {**_COMMON_VALUES, "-o": ("output", str), "--output": ("output", str), "-d": ("dir", str),
         "--dir": ("dir", str), "--parallel": ("parallel", _positive_int), "--max-size": ("max_size", _size)},
        many=True, exclusive=frozenset({"output", "remote_name", "dir"})),
    "ls": Command({"command": "ls", "url": None, "json": False, "json_lines": False, "parallel": 0,
                   **_COMMON_DEFAULTS},
                  {**_COMMON_FLAGS, "--json": "json", "--json-lines": "json_lines"}, _COMMON_VALUES,
                  many=False, exclusive=frozenset({"json", "json_lines"})),
    "stat": Command({"command": "stat", "url": None, "json": False, "parallel": 0, **_COMMON_DEFAULTS},
                    {**_COMMON_FLAGS, "--json": "json"}, _COMMON_VALUES, many=False),
}


def _parse_plain_line(argv: list[str]) -> Any:
    """The namespace argparse gives for a plain get, ls, stat or parse line, or None (argparse reads it).
    *argv* has the default command inserted."""
    return read_plain_line(argv, _QUICK_COMMANDS)

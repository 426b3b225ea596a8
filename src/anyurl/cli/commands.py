"""The ``anyurl`` command line: get, ls, parse, extract, put, send, open.

``anyurl URL`` is short for ``anyurl get URL`` (``anyurl open URL`` for a
telnet URL). Errors print one line, ``anyurl: <message>``, and exit with the
error class's documented exit code (see ``anyurl --help``).
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import time

from .. import __version__, errors
from ..errors import AnyURLError, ResourceNotFound, TransferError, TruncatedTransfer, mask_password
from .quick import (
    EXIT_INTERRUPTED,
    EXIT_PIPE,
    GLOBAL_DEFAULTS,
    GLOBAL_FLAGS,
    GLOBAL_VALUES,
    PARSE,
    Command,
    _json_text,
    read_plain_line,
    url_components,
)

TYPE_CHECKING = False  # not typing's: importing typing costs start-up time (mypy knows this idiom)
if TYPE_CHECKING:  # rich loads only when a progress bar is drawn (it costs startup time)
    import argparse
    import asyncio
    import contextlib
    import getpass
    import inspect
    import json
    import signal
    import traceback
    from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterator, Sequence
    from typing import Any, TextIO, TypeVar

    from ..client import Client
    from ..response import Body, Entry
    from ..urls import URL
    from .progress import DelayedProgress

    _N = TypeVar("_N", int, float)
    _Job = tuple[int, URL, str, str, str | None]  # (index, URL, destination, its file name, note)
else:
    class _OnFirstUse:
        """A module imported when first used: `anyurl --version` and `anyurl parse` need no asyncio."""

        def __init__(self, name: str) -> None:
            self._name = name

        def __getattr__(self, attr: str) -> Any:
            return getattr(__import__(self._name), attr)  # top-level modules only

    argparse, asyncio, contextlib, getpass, inspect, json, signal, traceback = map(_OnFirstUse, (
        "argparse", "asyncio", "contextlib", "getpass", "inspect", "json", "signal", "traceback"))

__all__ = ["EXIT_INTERNAL", "EXIT_INTERRUPTED", "EXIT_PIPE", "EXIT_TERMINATED", "build_parser", "exit_code_table", "main"]

EXIT_TERMINATED = 143  # SIGTERM, as a shell reports it
EXIT_INTERNAL = 70  # a bug in anyurl (EX_SOFTWARE); --debug shows the traceback
EXIT_NOT_DIRECTORY = 1  # `ls` on a URL that is not directory-like

COMMANDS = ("get", "ls", "stat", "mirror", "parse", "extract", "put", "send", "open")


# -- the exit code table -----------------------------------------------------


_MEANINGS = {
    "AnyURLError": "other error; `ls` on a URL that is not a directory",
    "URLSyntaxError": "not a valid URL; also a command-line usage error",
    "UnsupportedScheme": "no handler for the URL's scheme",
    "UnsafeURL": "refused: control bytes for a command line, or a target the policy forbids",
    "NotRetrievable": "the URL designates no data (mailto, telnet): use send / open",
    "ConfigurationError": "a needed setting is missing (e.g. no news server)",
    "NotSupported": "the scheme has no way to do it (e.g. `stat` of a telnet URL)",
    "TransferError": "other transfer or local I/O error; larger than --max-size",
    "ResourceNotFound": "no such resource (404, FTP 550, missing file)",
    "AccessDenied": "login failed or permission denied",
    "ConnectError": "cannot connect, or the connection was lost",
    "FetchTimeout": "a timeout expired (--timeout, --connect-timeout, --max-time)",
    "ProtocolError": "the server replied with an error or nonsense",
    "TemporaryFailure": "a transient server error; retrying may help",
    "TruncatedTransfer": "fewer bytes arrived than announced",
    "PoolTimeout": "every connection to the host stayed busy (raise --parallel)",
    "OverlongTransfer": "more bytes arrived than announced",
}


def exit_code_table() -> list[tuple[int, str, str]]:
    """(code, name, meaning) for every exit code the CLI can return."""
    rows: list[tuple[int, str, str]] = [(0, "-", "success")]
    seen: set[int] = set()
    classes = [getattr(errors, n) for n in errors.__all__]
    for cls in sorted((c for c in classes if isinstance(c, type) and issubclass(c, AnyURLError)),
                      key=lambda c: c.exit_code):
        code = cls.exit_code
        if code in seen:
            continue
        doc = _MEANINGS.get(cls.__name__) or (cls.__doc__ or "").strip().splitlines()[0].rstrip(".")
        rows.append((code, cls.__name__, doc))
        seen.add(code)
    rows += [
        (EXIT_INTERNAL, "-", "internal error (a bug; --debug shows the traceback)"),
        (EXIT_INTERRUPTED, "-", "interrupted (Ctrl-C)"),
        (EXIT_PIPE, "-", "standard output was closed early"),
        (EXIT_TERMINATED, "-", "terminated (SIGTERM); temporary files are removed"),
    ]
    return rows


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
    g.add_argument("--pipeline", type=_count, metavar="N", default=None,
                   help="at most N GETs in flight on one plain-http connection (HTTP/1.1 pipelining, "
                        "when all connections to a server are busy; default 8; 0 or 1: off)")
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
    "proxy": None, "noproxy": None, "http1_1": False, "pipeline": None, "quiet": False, **GLOBAL_DEFAULTS,
}
_COMMON_FLAGS = {**GLOBAL_FLAGS, "-q": "quiet", "--quiet": "quiet", "--http1.1": "http1_1"}
_COMMON_VALUES: dict[str, tuple[str, Callable[[str], object]]] = {
    **GLOBAL_VALUES, "--timeout": ("timeout", _seconds), "--connect-timeout": ("connect_timeout", _seconds),
    "--max-time": ("max_time", _seconds), "--retry": ("retry", _count), "--retry-delay": ("retry_delay", _delay),
    "--proxy": ("proxy", str), "--noproxy": ("noproxy", str), "--pipeline": ("pipeline", _count),
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


# -- terminal callbacks ------------------------------------------------------


class _Paused:
    """The progress bars stopped while a prompt is on the terminal (not contextlib: start-up cost)."""

    def __init__(self, prompter: Prompter) -> None:
        self.prompter = prompter

    def __enter__(self) -> None:
        if self.prompter.progress is not None:
            self.prompter.progress.pause()

    def __exit__(self, *exc_info: object) -> None:
        if self.prompter.progress is not None:
            self.prompter.progress.resume()


class Prompter:
    """Terminal prompts for passwords and Gopher+ forms (only when stdin is a terminal)."""

    def __init__(self, stdin: TextIO | None = None, stderr: TextIO | None = None) -> None:
        self.stdin = stdin or sys.stdin
        self.stderr = stderr or sys.stderr
        self.progress: DelayedProgress | None = None
        self.client: Client | None = None
        self._lock = asyncio.Lock()
        self._answers: dict[tuple[str, str], str | None] = {}

    def interactive(self) -> bool:
        """True when a human can answer."""
        try:
            return self.stdin.isatty()
        except (AttributeError, ValueError):
            return False

    def _paused(self) -> _Paused:
        return _Paused(self)

    async def password(self, user: str, host: str) -> str | None:
        """Client ``password_callback``: ask once per (user, host), without echo."""
        if self.client is not None:  # ~/.netrc (and Client credentials) before bothering the user
            cred = self.client.credentials_for(host, user=user)
            if cred is not None:
                return cred[1]
        if not self.interactive():
            return None
        async with self._lock:  # parallel downloads: one prompt at a time, asked once
            key = (user, host)
            if key not in self._answers:
                with self._paused():
                    self._answers[key] = await asyncio.to_thread(
                        _getpass, f"Password for {_printable(user)}@{_printable(host)}: ")
            return self._answers[key]

    def form(self, fields: Sequence[Any]) -> list[str] | None:
        """Client ``form_callback`` for Gopher+ ASK forms: one answer per field.

        Each field has ``kind`` (Ask, AskP, AskL, Choose, Select, Note...),
        ``prompt``, ``default`` and ``choices``. Returns None (the user cannot
        answer) when stdin is not a terminal.
        """
        if not self.interactive():
            return None
        answers: list[str] = []
        with self._paused():
            for f in fields:
                answers.append(self._ask_field(f))
        return answers

    def _ask_field(self, f: Any) -> str:
        kind = str(getattr(f, "kind", "Ask") or "Ask").lower()
        prompt = _printable(str(getattr(f, "prompt", "") or "")).rstrip(": ")
        default = getattr(f, "default", None)
        choices = [str(c) for c in (getattr(f, "choices", None) or [])]
        if kind == "note":
            print(prompt, file=self.stderr)
            return ""
        suffix = f" [{_printable(default)}]" if default else ""
        if kind == "askp":
            answer = _getpass(f"{prompt}{suffix}: ")
            return answer or (default or "")
        if choices:
            print(prompt, file=self.stderr)
            for n, c in enumerate(choices, 1):
                print(f"  {n}) {_printable(c)}", file=self.stderr)
            while True:
                answer = self._input(f"choice 1-{len(choices)}{suffix}: ").strip()
                if not answer and default is not None:
                    return str(default)
                if answer.isdigit() and 1 <= int(answer) <= len(choices):
                    return choices[int(answer) - 1]
                if answer in choices:
                    return answer
        if kind == "askl":  # several lines, ended by a line with a single "."
            print(f"{prompt} (end with a line containing only '.')", file=self.stderr)
            lines: list[str] = []
            while True:
                line = self._input("")
                if line == "." or line == "\x04":
                    break
                lines.append(line)
            return "\n".join(lines) if lines else (default or "")
        if kind == "select":
            answer = self._input(f"{prompt} (y/n){suffix}: ").strip().lower()
            if not answer:
                return str(default or "0")
            return "1" if answer in ("y", "yes", "1") else "0"
        answer = self._input(f"{prompt}{suffix}: ")
        return answer or (default or "")

    def _input(self, prompt: str) -> str:
        self.stderr.write(prompt)
        self.stderr.flush()
        line = self.stdin.readline()
        if not line:
            return "\x04"  # EOF
        return line.rstrip("\r\n")


def _getpass(prompt: str) -> str:
    return getpass.getpass(prompt, stream=sys.stderr)


def _printable(text: object) -> str:
    """Text from URLs and servers, with control characters made visible (no terminal escapes)."""
    from .display import printable

    return printable(text)


def _json(value: object, indent: int | None = None) -> str:
    """JSON of what servers sent: json escapes C0 controls; DEL and C1 (CSI) are escaped too."""
    from .display import json_safe

    return json_safe(json.dumps(value, ensure_ascii=False, indent=indent, default=str))


def _print_traceback(exc: BaseException) -> None:
    """--debug: the traceback, whose messages may quote a server, with controls escaped."""
    for line in traceback.format_exception(exc):
        sys.stderr.write("\n".join(_printable(part) for part in line.split("\n")))


# -- output helpers -------------------------------------------------------------


class Reporter:
    """Prints ``anyurl: ...`` lines to stderr (through the progress console when it is live)."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.progress: DelayedProgress | None = None
        self.prompter: Prompter | None = None  # asks passwords; pauses the progress display

    def _print(self, text: str) -> None:
        if self.progress is not None:
            self.progress.print(text)
        else:
            print(text, file=sys.stderr, flush=True)

    def error(self, exc: BaseException | str) -> None:
        """One line for an error; never a traceback. One that ended several tries says how
        many (from its ``history``: the library leaves the message alone)."""
        tries = len(exc.history) if isinstance(exc, AnyURLError) else 0
        self._print(f"anyurl: {_printable(exc)}" + (f" (after {tries} tries)" if tries > 1 else ""))

    def info(self, text: str) -> None:
        """A message, unless -q."""
        if not self.quiet:
            self._print(f"anyurl: {_printable(text)}")


def _make_client(args: argparse.Namespace, prompter: Prompter) -> Client:
    from ..client import Client
    from ..settings import Limits, Retry, Timeouts

    defaults = Timeouts()
    timeouts = Timeouts(
        connect=args.connect_timeout or defaults.connect,
        read=args.timeout or defaults.read,
        total=args.max_time,
    )
    # --parallel N: N connections to a server, however many transfers run on them at once
    # (HTTP/2 streams, pipelined GETs); a mirror also lists directories while N files download
    extra = 2 if getattr(args, "command", None) == "mirror" else 0
    parallel = getattr(args, "parallel", 0) or 0
    per_host = parallel + extra if parallel else Limits().per_host
    retries = getattr(args, "retry", 0) or 0
    delay = getattr(args, "retry_delay", None)
    retry = Retry(attempts=1 + retries, backoff=1.0 if delay is None else delay)
    http = None
    pipeline = getattr(args, "pipeline", None)
    if getattr(args, "http1_1", False) or pipeline is not None:
        from ..handlers.http import HTTPOptions  # (only then: start-up)

        http = HTTPOptions(http2=not getattr(args, "http1_1", False),
                           **({} if pipeline is None else {"pipeline": pipeline}))
    client = Client(
        timeouts=timeouts,
        # requests in flight: as many as connections at least (HTTP/2 puts many on one)
        limits=Limits(per_host=per_host, per_host_requests=max(Limits().per_host_requests, per_host)),
        http=http,
        retry=retry,
        anonymous_email=getattr(args, "email", None),
        news_server=getattr(args, "news_server", None),
        user_agent=getattr(args, "user_agent", None),
        proxy=getattr(args, "proxy", None),
        no_proxy=getattr(args, "noproxy", None),
        password_callback=prompter.password,
        form_callback=prompter.form,
    )
    prompter.client = client
    return client


async def _with_deadline(seconds: float | None, coro: Awaitable[Any], url: object) -> Any:
    if seconds is None:
        return await coro
    try:
        async with asyncio.timeout(seconds):
            return await coro
    except TimeoutError as exc:
        if isinstance(exc, AnyURLError):
            raise
        raise errors.FetchTimeout(f"transfer took longer than --max-time {seconds:g} s", url=url) from exc


# -- get ----------------------------------------------------------------------

#: get's workers per --parallel turn: transfers beyond the N turns run only as HTTP/2 streams
_STREAM_WORKERS = 8


class _Names:
    """Unique file names in one directory, given out in URL order (``x``, ``x.1``, ``x.2``...)."""

    def __init__(self) -> None:
        self.taken: set[str] = set()
        self.last: dict[str, int] = {}  # the last suffix given per name: no rescan from .1 each time

    def unique(self, name: str) -> str:
        if name not in self.taken:
            self.taken.add(name)
            return name
        n = self.last.get(name, 0)
        while True:
            n += 1
            candidate = f"{name}.{n}"
            if candidate not in self.taken:
                break
        self.last[name] = n
        self.taken.add(candidate)
        return candidate


class _WritingStdout:
    """Standard output that cannot take the data (a full disk, a file size limit) fails the command
    as a local I/O error naming the URL (exit 10), not as an internal error or a traceback; a
    closed pipe stays main's quiet exit 141."""

    def __init__(self, url: object) -> None:
        self.url = url

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, exc: BaseException | None, tb: object) -> None:
        if isinstance(exc, OSError) and not isinstance(exc, BrokenPipeError):
            raise TransferError(f"cannot write to standard output: {exc.strerror or exc}", url=self.url) from exc


def _write_all(out: Any, data: bytes) -> None:
    """``out.write(data)``, all of it: a buffered writer passes a large chunk straight to the file
    and returns a short count when the file hits its size limit (RLIMIT_FSIZE), so the rest is
    written again, which then raises the error instead of dropping the tail."""
    n = out.write(data)
    while n is not None and n < len(data):
        data = data[n:]
        n = out.write(data)


async def _to_stdout(client: Client, url: URL, args: argparse.Namespace,
                     tp: DelayedProgress | None, label: str) -> None:
    out = sys.stdout.buffer
    writing = _WritingStdout(url)
    bar = tp.bar(label) if tp is not None else None
    shown = None  # a terminal gets the text with its controls escaped; `-o -` gets the bytes
    if args.output is None and out.isatty():
        from .display import TerminalText

        shown = TerminalText()
    ok = False
    try:
        # (Client.open with the limit in the request: a handler that learns the size first refuses early)
        async with contextlib.aclosing(await client._open(client.request(url, max_size=args.max_size))) as body:
            _refuse_listing(url)(body)
            total = body.size
            if args.max_size is not None and total is not None and total > args.max_size:
                raise TransferError(f"resource is {total} bytes, larger than the limit of "
                                    f"{args.max_size}", url=url)
            done = 0
            if bar is not None:
                bar(0, total)
            async for chunk in body:
                done += len(chunk)
                if args.max_size is not None and done > args.max_size:  # before the write: none of it goes out
                    raise TransferError(f"resource larger than the limit of {args.max_size} bytes",
                                        url=url)
                with writing:
                    _write_all(out, chunk if shown is None else shown.feed(chunk))
                if bar is not None:
                    bar(done, total)
            with writing:
                if shown is not None:
                    _write_all(out, shown.feed(b"", final=True))
                out.flush()
            if total is not None and done < total:
                raise TruncatedTransfer(f"got {done} of {total} bytes", url=url)
        ok = True
    finally:
        if tp is not None and bar is not None:
            tp.finish(bar, ok)


_LIST_CHUNK = 1 << 16
_BOM = b"\xef\xbb\xbf"  # UTF-8's byte order mark, which some editors write first


def _urls_in(raw: bytes) -> list[str]:
    """The URLs of one line of a URL list (blank lines and # comments skipped)."""
    out = []
    for line in raw.decode("utf-8", "surrogateescape").splitlines():  # also \r, as in text mode
        text = line.strip()
        if text and not text.startswith("#"):
            out.append(text)
    return out


class _Listed(str):
    """A URL read from a URL list, with its place there: ``list.txt line 3``."""

    where: str

    def __new__(cls, text: str, line: int, source: str) -> _Listed:
        self = super().__new__(cls, text)
        self.where = f"{'standard input' if source == '-' else source} line {line}"
        return self


class _URLList:
    """The URLs of ``get -i FILE`` ('-': standard input), read as they are needed.

    A 100,000-line list is never held whole: a file or device is read 64 KiB at
    a time; a pipe through the event loop (a slow writer never blocks the
    downloads already running); a terminal at once (its prompts share stdin).
    A line longer than ``max_line`` bytes (``Limits.max_line``) ends the list
    with an error quoting its first bytes only; a UTF-8 byte order mark at the
    start is skipped.
    """

    def __init__(self, source: str, max_line: int = 64 * 1024) -> None:
        self.source = source
        self.max_line = max_line
        self.opened = source != "-"
        self._transport: asyncio.ReadTransport | None = None
        try:
            self.fd = os.open(source, os.O_RDONLY | os.O_CLOEXEC) if self.opened else sys.stdin.fileno()
            mode = os.fstat(self.fd).st_mode
        except (OSError, ValueError, AttributeError) as exc:
            if isinstance(exc, FileNotFoundError):
                raise ResourceNotFound(f"URL list {source}: no such file") from exc
            raise TransferError(f"cannot read the URL list {source}: "
                                f"{getattr(exc, 'strerror', None) or exc}") from exc
        if stat.S_ISDIR(mode):
            self.close()
            raise TransferError(f"cannot read the URL list {source}: {os.strerror(errno.EISDIR)}")
        self.regular = stat.S_ISREG(mode)
        self.pipe = stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)
        self.terminal = not self.regular and not self.pipe and os.isatty(self.fd)

    def close(self) -> None:
        if self._transport is not None:  # it made the pipe non-blocking: give it back as it was
            self._transport.close()
            self._transport = None
            with contextlib.suppress(OSError):
                os.set_blocking(self.fd, True)
        if self.opened and self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def _fail(self, exc: OSError) -> TransferError:
        return TransferError(f"cannot read the URL list {self.source}: {exc.strerror or exc}")

    def _overlong(self, start: bytes) -> TransferError:
        # the line's first bytes only: a 200 MB line is not echoed
        where = "standard input" if self.source == "-" else self.source
        return TransferError(f"URL list {where} line {self.lineno + 1} is longer than {self.max_line} bytes "
                             f"(Limits.max_line); it starts {start[:60]!r}")

    def count_urls(self) -> int | None:
        """How many URLs a regular file holds (one more pass; for the overall progress bar)."""
        if not self.regular:
            return None
        n = 0
        tail = b""
        pos = 0
        try:
            while chunk := os.pread(self.fd, _LIST_CHUNK, pos):
                if pos == 0:
                    chunk = chunk.removeprefix(_BOM)
                pos += len(chunk)
                *lines, tail = (tail + chunk).split(b"\n")
                if len(tail) > self.max_line:
                    return None  # an overlong line: reading the list will report it
                n += sum(len(_urls_in(line)) for line in lines)
        except OSError as exc:
            raise self._fail(exc) from exc
        return n + len(_urls_in(tail))

    def _listed(self, line: bytes) -> list[str]:
        """The URLs of the list's next line, each knowing where it was (for its error message)."""
        if len(line) > self.max_line:
            raise self._overlong(line)
        if self.lineno == 0:
            line = line.removeprefix(_BOM)
        self.lineno += 1
        return [_Listed(url, self.lineno, self.source) for url in _urls_in(line)]

    async def __aiter__(self) -> AsyncIterator[str]:
        read: Callable[[], Awaitable[bytes]] | None = None
        self.lineno = 0
        if self.pipe:
            read = await self._pipe_reader()
        elif self.terminal:  # read at once: the prompts of the downloads share it
            for line in self._read_all().split(b"\n"):
                for url in self._listed(line):
                    yield url
            return
        pending: list[bytes] = []  # the start of a line not ended yet
        held = 0  # its length
        while True:
            try:
                chunk = os.read(self.fd, _LIST_CHUNK) if read is None else await read()
            except OSError as exc:
                raise self._fail(exc) from exc
            if not chunk:
                break
            pending.append(chunk)
            if b"\n" not in chunk:
                held += len(chunk)
                if held > self.max_line:  # no end in sight (-i /dev/zero): not held, not echoed whole
                    raise self._overlong(pending[0])
                continue
            *lines, rest = b"".join(pending).split(b"\n")
            pending = [rest]
            held = len(rest)
            for line in lines:
                for url in self._listed(line):
                    yield url
        for url in self._listed(b"".join(pending)):
            yield url

    def _read_all(self) -> bytes:
        parts = []
        held = 0  # bytes since the last line end
        try:
            while chunk := os.read(self.fd, _LIST_CHUNK):
                parts.append(chunk)
                held = len(chunk) - 1 - chunk.rfind(b"\n") if b"\n" in chunk else held + len(chunk)
                if held > self.max_line:
                    raise self._overlong(b"".join(parts)[-held:][:60])
        except OSError as exc:
            raise self._fail(exc) from exc
        return b"".join(parts)

    async def _pipe_reader(self) -> Callable[[], Awaitable[bytes]]:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=_LIST_CHUNK, loop=loop)
        pipe = os.fdopen(os.dup(self.fd), "rb", buffering=0)  # the transport closes the copy, not stdin
        try:
            transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
        except BaseException:
            pipe.close()
            raise
        self._transport = transport
        return lambda: reader.read(_LIST_CHUNK)


def _refuse_listing(url: URL) -> Callable[[Body], None]:
    """``on_open`` for get: a directory listing is not a file to save."""

    def check(body: Body) -> None:
        if body.entries is not None:
            raise errors.NotRetrievable(
                "is a directory-like resource: use `anyurl ls URL` to list it or "
                "`anyurl mirror URL DIR` to download its files", url=url)

    return check


async def _url_texts(urls: Sequence[str], listing: _URLList | None) -> AsyncGenerator[str, None]:
    for text in urls:
        yield text
    if listing is not None:
        async for text in listing:
            yield text


async def cmd_get(args: argparse.Namespace, client: Client, rep: Reporter) -> int:
    """``anyurl get``: download URLs; returns the first failing URL's exit code."""
    source = getattr(args, "input_file", None)
    listing = _URLList(source, client.limits.max_line) if source else None  # a missing list fails before any download
    texts = _url_texts(args.urls, listing)
    try:
        return await _get(args, client, rep, texts, listing)
    finally:
        await texts.aclose()
        if listing is not None:
            listing.close()


async def _get(args: argparse.Namespace, client: Client, rep: Reporter, texts: AsyncGenerator[str, None],
               listing: _URLList | None) -> int:
    import collections

    from ..transfer.download import DirNames, _download, name_for_url
    from ..urls import HTTPURL

    to_stdout = (args.output in (None, "-") and not args.remote_name and not args.dir)
    # the rest of the URLs is read as the workers need it; -o and stdout take one URL, so
    # they look for a second (with -d or -O a slow pipe's first URL starts at once)
    first: list[str] = []
    wanted = 2 if to_stdout or args.output else 1
    while len(first) < wanted and (text := await anext(texts, None)) is not None:
        first.append(text)
    if not first:
        rep.error("no URL given (as arguments or with -i FILE)")
        return 2
    several = len(first) > 1 or wanted == 1  # with -d/-O: as many as come
    if to_stdout and several:
        rep.error("several URLs need -O or -d DIR (or one -o FILE per run)")
        return 2
    if args.output and args.output != "-" and several:
        rep.error("-o FILE takes one URL; use -d DIR for several")
        return 2
    if args.resume and to_stdout:
        rep.error("--continue needs a file (-o FILE, -O or -d DIR)")
        return 2

    failure = [-1, 0]  # (index, exit code) of the first failing URL in the order given

    def fail(i: int, exc: AnyURLError) -> None:
        if failure[0] < 0 or i < failure[0]:
            failure[:] = [i, exc.exit_code]
        rep.error(exc)
        if args.debug:
            _print_traceback(exc)

    tp = _progress(args.quiet, lambda: _expected_count(args, listing) if several else 1)
    rep.progress = tp
    if rep.prompter is not None:
        rep.prompter.progress = tp

    with tp if tp is not None else contextlib.nullcontext():
        if to_stdout:
            try:
                u = client.parse(first[0])
                await _with_deadline(args.max_time, _to_stdout(client, u, args, tp, _label_for(u)), u)
            except AnyURLError as exc:
                fail(0, exc)
            return failure[1]

        directory = args.dir or ""
        if args.dir:
            try:
                os.makedirs(directory, exist_ok=True)
            except FileExistsError:  # (makedirs' "File exists" did not say what was wrong)
                rep.error(f"-d {directory}: exists and is not a directory")
                return TransferError.exit_code
            except OSError as exc:
                rep.error(f"cannot create directory {directory}: {exc.strerror or exc}")
                return TransferError.exit_code
        names = _Names()
        # a batch: one listing instead of two failing lookups per file (see DirNames)
        listed = DirNames(directory) if several and not args.output and not args.resume else None

        async def jobs() -> AsyncGenerator[_Job, None]:
            """The jobs in the order given; bad URLs reported as they come."""
            i = -1
            for text in first:
                i += 1
                job = dest_for(i, text)
                if job is not None:
                    yield job
            async for text in texts:
                i += 1
                job = dest_for(i, text)
                if job is not None:
                    yield job
            if tp is not None:
                tp.set_count(i + 1)

        def jobs_of_args() -> Iterator[_Job]:
            """:func:`jobs` when every URL is an argument (no -i list): a plain generator, so the
            workers take the next job without a lock or an await."""
            for i, text in enumerate(args.urls):
                job = dest_for(i, text)
                if job is not None:
                    yield job
            if tp is not None:
                tp.set_count(len(args.urls))

        # (a directory path once, not os.path.join's per file: the names are safe, without "/")
        prefix = directory if not directory or directory.endswith("/") else directory + "/"

        def dest_for(i: int, text: str) -> _Job | None:
            try:
                u = client.parse(text)
            except AnyURLError as exc:
                if isinstance(text, _Listed):  # which line of a 100,000-line list
                    exc.message = f"{exc.message} ({text.where})"
                fail(i, exc)
                return None
            if args.output:
                return i, u, args.output, os.path.basename(args.output), None
            name = name_for_url(u)
            unique = names.unique(name)
            dest = prefix + unique
            # several URLs of one name: each keeps its own file (said once it is saved)
            note = None if unique == name else f"{mask_password(str(u))} saved as {dest} ({name} is taken by another URL)"
            return i, u, dest, unique, note

        feed = jobs()
        turn = asyncio.Lock()  # one worker at a time takes the next URL
        force = bool(getattr(args, "force", False))
        quick: Iterator[_Job] | None = None
        if listing is None:  # (first holds the first arguments: taken again from args.urls)
            quick = jobs_of_args()

        # --parallel N: N transfers at once, N connections to a host. Where a host's answers come
        # as HTTP/2 streams or pipelined GETs (many share a connection), more transfers run on them at once (up to
        # _STREAM_WORKERS x N in all, within Limits.per_host_requests); any other transfer
        # waits for one of the N plain turns, handed on first come, first served
        plain_turns = args.parallel if several else 1
        plain_busy = 0
        queue: collections.deque[tuple[asyncio.Future[bool], Any]] = collections.deque()
        released: set[tuple[str, int]] = set()  # origins whose waiting transfers were let go
        groups: list[asyncio.TaskGroup] = []  # the workers' (more start once HTTP/2 is met)

        def multiplexed(u: Any) -> bool:
            if type(u) is not HTTPURL:  # (https: HTTP/2 streams; http: pipelined GETs)
                return False
            m = getattr(client.handler(u), "multiplexed", None)
            return m is not None and bool(m(u))

        async def admit(u: Any) -> bool:
            """Wait for a turn for *u*: True when it holds one of the plain turns."""
            nonlocal plain_busy
            if multiplexed(u):
                return False
            if plain_busy < plain_turns:
                plain_busy += 1
                return True
            fut: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
            queue.append((fut, u))
            try:
                return await fut
            except BaseException:
                if fut.done() and not fut.cancelled() and fut.result():
                    leave(True, u)  # a turn handed over just now: on to the next
                raise

        def leave(held: bool, u: Any) -> None:
            nonlocal plain_busy
            if held:
                while queue:  # the turn goes to the first still waiting
                    fut, _ = queue.popleft()
                    if not fut.done():
                        fut.set_result(True)
                        break
                else:
                    plain_busy -= 1
            if type(u) is HTTPURL and (u.host, u.port) not in released and multiplexed(u):
                released.add((u.host, u.port))  # (once per origin: not a scan per transfer)
                for fut, w in list(queue):
                    if not fut.done() and multiplexed(w):
                        queue.remove((fut, w))
                        fut.set_result(False)
                if len(released) == 1 and groups:  # the first HTTP/2 origin: the stream workers
                    for _ in range(plain_turns * (_STREAM_WORKERS - 1)):
                        groups[0].create_task(worker())

        async def worker() -> None:
            # N workers pull from one iterator: memory stays flat however long the list
            while True:
                if quick is not None:
                    job = next(quick, None)
                else:
                    async with turn:
                        job = await anext(feed, None)
                if job is None:
                    return
                i, u, dest, base, note = job
                held = await admit(u)
                bar = tp.bar(base) if tp is not None else None
                ok = False
                try:
                    new = listed is not None and listed.new(base)
                    # only a path the user named (-o) may be a symlink or a device
                    run = _download(client, u, dest, args.resume, bar, args.max_size, _refuse_listing(u), force,
                                    {}, new, follow=bool(args.output))
                    await (run if args.max_time is None else _with_deadline(args.max_time, run, u))
                    ok = True
                    if note is not None:
                        rep.info(note)
                except AnyURLError as exc:
                    fail(i, exc)
                finally:
                    if tp is not None and bar is not None:
                        tp.finish(bar, ok)
                    leave(held, u)

        try:
            async with asyncio.TaskGroup() as group:
                groups.append(group)
                for _ in range(plain_turns):
                    group.create_task(worker())
        except BaseExceptionGroup as eg:  # a bug or an unreadable URL list: the error itself, not a group
            raise eg.exceptions[0] from None
        finally:
            await feed.aclose()
    return failure[1]


def _expected_count(args: argparse.Namespace, listing: _URLList | None) -> int | None:
    """How many URLs ``get`` has (None when a pipe is still being read)."""
    if listing is None:
        return len(args.urls)
    more = listing.count_urls()
    return None if more is None else len(args.urls) + more


def _progress(quiet: bool, count: Callable[[], int | None]) -> DelayedProgress | None:
    """Progress bars on stderr when it is a terminal and not -q (*count* is asked only then);
    they appear once the transfers have run for ``progress.SHOW_AFTER`` seconds."""
    try:
        on_terminal = not quiet and sys.stderr.isatty()
    except (AttributeError, ValueError):
        on_terminal = False
    if not on_terminal:
        return None
    from .progress import DelayedProgress

    return DelayedProgress(count=count())


def _label_for(u: URL) -> str:
    from ..transfer.download import name_for_url

    try:
        return name_for_url(u)
    except Exception:  # a label must never fail a download
        return u.scheme


def _usage_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with get's or mirror's file options before anything is downloaded, or None.

    An empty name (an unset shell variable: ``-d "$DEST"``) would be taken as no option at
    all, or as the working directory; a directory given to ``-o`` would be downloaded in full
    and then refused at the rename.
    """
    for dest, option, what in (("output", "-o", "a file name ('-' for standard output)"),
                               ("dir", "-d" if args.command == "get" else "DIR", "a directory name"),
                               ("input_file", "-i", "a file name ('-' for standard input)")):
        if getattr(args, dest, None) == "":
            return f"{option} needs {what}"
    output = getattr(args, "output", None)
    if output not in (None, "-") and os.path.isdir(output):
        return f"-o {output}: is a directory (use -d DIR to save into it)"
    return None


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
        sys.stderr.write(f"\ranyurl: {result.files} files, {_human(result.bytes)}, "
                         f"{result.unchanged} unchanged, {len(result.errors)} errors\x1b[K")
        sys.stderr.flush()

    def done(self) -> None:
        if self.enabled and self.last:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def _human(n: int) -> str:
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
        result = await _with_deadline(args.max_time, mirror(
            client, u, args.dir, parallel=args.parallel, resume=args.resume, newer=args.newer,
            force=args.force, max_depth=args.max_depth, include=args.include, exclude=args.exclude,
            progress=status, delay=args.delay, robots=args.robots, symlinks=args.symlinks,
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


# -- stat -------------------------------------------------------------------------


async def cmd_stat(args: argparse.Namespace, client: Client, rep: Reporter) -> int:
    """``anyurl stat``: metadata without the body."""
    u = client.parse(args.url)
    st = await _with_deadline(args.max_time, client.stat(u), u)
    data = st.as_dict()
    data["url"] = mask_password(data["url"])
    with _WritingStdout(u):
        if args.json:
            sys.stdout.write(_json(data, indent=1))
            sys.stdout.write("\n")
        else:
            for key in ("url", "kind", "size", "modified", "content_type"):
                if data[key] is not None:
                    sys.stdout.write(f"{key}: {_printable(data[key])}\n")
            for key, value in sorted(data["meta"].items()):
                sys.stdout.write(f"{key}: {_printable(value)}\n")
        sys.stdout.flush()
    return 0


# -- ls ---------------------------------------------------------------------------


def _cell(value: object) -> str:
    from datetime import datetime

    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.replace(microsecond=0).isoformat(sep=" ")
    return _printable(value)


# meta keys that only repeat what the url column shows
_META_IN_URL = {"selector", "host", "port"}


def _meta_text(entry: Entry) -> str:
    items = [(k, v) for k, v in entry.meta.items() if not (entry.url and k in _META_IN_URL)]
    return " ".join(f"{k}={_printable(v)}" for k, v in items)


#: `anyurl ls` sizes the table's columns from this many first entries, then prints rows as they come
LS_TABLE_SAMPLE = 1000
#: `anyurl ls` writes its output in batches of this many entries (or sooner if entries come slowly)
_LS_BATCH = 500
_LS_FLUSH_SECONDS = 0.2


async def cmd_ls(args: argparse.Namespace, client: Client, rep: Reporter) -> int:
    """``anyurl ls``: the entries of a directory-like resource, printed as they arrive."""
    u = client.parse(args.url)

    async def listing() -> int | None:
        from ..links import body_entries

        async with client.open(u) as body:
            stream = body_entries(body, client.limits)  # a listing's entries or an HTML page's links
            if stream is None:
                return None
            printer = _EntryPrinter(args)
            with _WritingStdout(u):
                batch: list[Entry] = []
                last = time.monotonic()
                async for e in stream:
                    batch.append(e)
                    if len(batch) >= _LS_BATCH or time.monotonic() - last >= _LS_FLUSH_SECONDS:
                        printer.add(batch)
                        batch = []
                        last = time.monotonic()
                printer.add(batch)
                printer.close()
            return printer.count

    count = await _with_deadline(args.max_time, listing(), u)
    if count is None:
        rep.error(f"{mask_password(str(u))}: not a directory-like resource or HTML page "
                  "(use `anyurl get` to read it)")
        return EXIT_NOT_DIRECTORY
    if not count:
        # an empty directory, menu or group, or a page without links: a listing all the same
        # (exit 0), but say so rather than print a bare header
        rep.info(f"{mask_password(str(u))}: (no entries)")
    return 0


class _EntryPrinter:
    """Writes `ls` output as entries come, holding at most LS_TABLE_SAMPLE of them (the
    table's first rows, which size its columns) so that a huge listing costs little memory."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.mode = "json" if args.json else "json-lines" if args.json_lines else "table"
        self.count = 0
        self.sample: list[Entry] | None = [] if self.mode == "table" else None  # None: columns fixed
        self.headers: list[str] = []
        self.widths: list[int] = []
        self.with_title = self.with_meta = False
        self.tty = sys.stdout.isatty()
        self.shown = False  # a terminal's first table has the header

    def add(self, entries: list[Entry]) -> None:
        if not entries:
            return
        out: list[str] = []
        if self.mode == "json":
            for e in entries:
                # the same text as json.dumps(list, indent=1): each item indented one more space
                item = " " + _json(e.as_dict(), indent=1).replace("\n", "\n ")
                out.append(("[\n" if self.count == 0 else ",\n") + item)
                self.count += 1
        elif self.mode == "json-lines":
            out.extend(_json(e.as_dict()) + "\n" for e in entries)
            self.count += len(entries)
        else:
            self.count += len(entries)
            if self.sample is not None:
                self.sample.extend(entries)
                if len(self.sample) < LS_TABLE_SAMPLE:
                    return
                entries, self.sample = self.sample, None
                self._columns(entries, out)
            self._rows(entries, out)
        sys.stdout.write("".join(out))
        sys.stdout.flush()

    def close(self) -> None:
        if self.mode == "json":
            sys.stdout.write("\n]\n" if self.count else "[]\n")
        elif self.sample:
            entries, self.sample = self.sample, None
            out: list[str] = []
            self._columns(entries, out)
            self._rows(entries, out)
            sys.stdout.write("".join(out))
        sys.stdout.flush()

    def _row(self, e: Entry) -> list[str]:
        row = [_cell(e.kind), _cell(e.size), _cell(e.modified), _cell(e.name), _cell(e.url)]
        title = _cell(e.title if e.title != e.name else None)
        meta = _meta_text(e) if e.meta else ""
        if self.with_title:
            row.insert(4, title)
        if self.with_meta:
            row.append(meta)
        # a title or meta first seen past the sample has no column: it ends its own row
        if not self.with_title and title:
            row.append(title)
        if not self.with_meta and meta:
            row.append(meta)
        return row

    def _columns(self, sample: list[Entry], out: list[str]) -> None:
        self.headers = ["kind", "size", "modified", "name", "url"]
        self.with_title = any(e.title and e.title != e.name for e in sample)
        self.with_meta = any(e.meta for e in sample)
        if self.with_title:
            self.headers.insert(4, "title")
        if self.with_meta:
            self.headers.append("meta")
        rows = [self._row(e) for e in sample]
        self.widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(self.headers)]
        if not self.tty:
            out.append(self._line(self.headers))

    def _line(self, row: list[str]) -> str:
        cells = [c.rjust(w) if h == "size" else c.ljust(w)
                 for c, w, h in zip(row, self.widths, self.headers, strict=False)]
        cells.extend(row[len(self.headers):])
        return "  ".join(cells).rstrip() + "\n"

    def _rows(self, entries: list[Entry], out: list[str]) -> None:
        rows = [self._row(e) for e in entries]
        if not self.tty:
            out.extend(self._line(r) for r in rows)
            return
        from rich.console import Console
        from rich.table import Table
        from rich.text import Text

        # a terminal: rich tables of each batch, the first with the header, the widths of the sample
        table = Table(box=None, show_edge=False, pad_edge=False, show_header=not self.shown)
        self.shown = True
        for h, w in zip(self.headers, self.widths, strict=True):
            table.add_column(h, justify="right" if h == "size" else "left", overflow="fold", min_width=w)
        for _ in range(max(len(r) for r in rows) - len(self.headers)):
            table.add_column("", overflow="fold")
        for row in rows:
            table.add_row(*(Text(c) for c in row))
        sys.stdout.write("".join(out))
        out.clear()
        Console().print(table)


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
        with _WritingStdout(None):
            sys.stdout.write(_json_text(data, None if several else 2) + "\n")
    with _WritingStdout(None):
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
    with _WritingStdout(None):
        for item in extract(text):
            if isinstance(item, tuple):  # tolerate (url, span) style results
                item = item[0]
            sys.stdout.write(_printable(item) + "\n")
        sys.stdout.flush()
    return 0


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
    await _with_deadline(args.max_time, client.upload(u, path), u)
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
    await _with_deadline(args.max_time, client.send_mail(
        u, subject=args.subject, body=body, sender=args.sender, attachments=list(args.attach)), u)
    rep.info(f"message sent to {mask_password(str(u))}")
    return 0


async def cmd_open(args: argparse.Namespace, client: Client, rep: Reporter) -> int:
    """``anyurl open URL``: a telnet session, or (other schemes) the resource on stdout."""
    from ..response import translate_errors

    u = client.parse(args.url)
    if u.scheme != "telnet":
        ns = argparse.Namespace(**vars(args))
        ns.urls, ns.output, ns.remote_name, ns.dir = [args.url], None, False, None
        ns.parallel, ns.resume, ns.max_size = 1, False, None
        return await cmd_get(ns, client, rep)
    import importlib.util

    if importlib.util.find_spec("anyurl.cli.terminal") is None:
        raise errors.NotRetrievable(
            "interactive telnet sessions are not available in this build (no anyurl.cli.terminal)", url=u)
    terminal = importlib.import_module("anyurl.cli.terminal")
    run: Callable[..., Any] = terminal.run
    try:
        result = run(u, client)
        if inspect.isawaitable(result):
            result = await result
    except AnyURLError:
        raise
    except OSError as exc:  # e.g. a terminal that cannot be watched: one line, not a traceback
        raise translate_errors(exc, u) from exc
    return result if isinstance(result, int) else 0


# -- main ------------------------------------------------------------------------------


class _Terminated(Exception):
    """SIGTERM arrived: the main task was cancelled so cleanup (temporary files) ran."""


def _resume_gc() -> None:
    """The collector back on (the entry point paused it for start-up), without what start-up made."""
    from . import quick as _quick

    if _quick.gc_paused:
        import gc

        _quick.gc_paused = False
        gc.freeze()  # everything loaded so far lives to the end: no collection need walk it
        gc.enable()


async def _run(args: argparse.Namespace, rep: Reporter) -> int:
    _resume_gc()
    task = asyncio.current_task()
    terminated = False

    def on_sigterm() -> None:
        nonlocal terminated
        terminated = True
        if task is not None:
            task.cancel()

    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGTERM, on_sigterm)
    try:
        return await _dispatch(args, rep)
    except asyncio.CancelledError:
        if terminated:
            raise _Terminated() from None
        raise


async def _dispatch(args: argparse.Namespace, rep: Reporter) -> int:
    prompter = rep.prompter = Prompter()
    async with _make_client(args, prompter) as client:
        if args.command == "get":
            return await cmd_get(args, client, rep)
        if args.command == "ls":
            return await cmd_ls(args, client, rep)
        if args.command == "stat":
            return await cmd_stat(args, client, rep)
        if args.command == "mirror":
            return await cmd_mirror(args, client, rep)
        if args.command == "put":
            return await cmd_put(args, client, rep)
        if args.command == "send":
            return await cmd_send(args, client, rep)
        if args.command == "open":
            return await cmd_open(args, client, rep)
    raise AssertionError(f"unknown command {args.command}")


def _loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's loop when it is installed (faster for many small transfers), unless ANYURL_LOOP=asyncio.

    Only the command picks a loop: library users keep whatever loop they run.
    """
    choice = os.environ.get("ANYURL_LOOP", "").strip().lower()
    if choice not in ("", "auto", "asyncio", "uvloop"):
        raise errors.ConfigurationError(f"ANYURL_LOOP must be asyncio, uvloop or auto, not {choice!r}")
    if choice == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        if choice == "uvloop":
            raise errors.ConfigurationError(
                "ANYURL_LOOP=uvloop, but uvloop is not installed (pip install 'anyurl[fast]')") from None
        return None
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


def _log_to_stderr() -> None:
    """-v: anyurl's DEBUG log (connections, commands sent, replies) on stderr, like curl -v."""
    import logging

    handler = logging.StreamHandler(sys.stderr)
    from .display import safe_formatter

    handler.setFormatter(safe_formatter("* %(name)s %(message)s"))  # replies a server sent: no escapes
    log = logging.getLogger("anyurl")
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``anyurl`` command; returns the exit code."""
    raw = list(sys.argv[1:] if argv is None else argv)
    if raw == ["--version"]:  # answered before argparse and the rest are imported
        print(f"anyurl {__version__}")
        return 0
    raw = _insert_default_command(raw)
    args: Any = _parse_plain_line(raw)
    if args is None:
        parser = build_parser()
        args = parser.parse_args(raw)
        if args.command is None:
            parser.print_help(sys.stderr)
            return 2
    debug = bool(args.debug)
    rep = Reporter(quiet=bool(args.quiet))
    if args.command in ("get", "mirror") and (problem := _usage_problem(args)) is not None:
        rep.error(problem)
        return 2
    if args.verbose:
        _log_to_stderr()
    try:
        if args.command == "parse":
            return cmd_parse(args, rep)
        if args.command == "extract":
            return cmd_extract(args, rep)
        from . import early as _early

        _early.start(args)  # the first URL's connect overlaps the imports below (see _early.py)
        import signal  # loaded by asyncio already; not at the top: --version does without it

        runner = asyncio.Runner(loop_factory=_loop_factory())
        try:
            # The loop is made with SIGINT held: a Ctrl-C inside the Runner's set-up would
            # leave a loop that nothing closes ("deallocating an open event loop").
            held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
            try:
                runner.get_loop()
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, held)
            return runner.run(_run(args, rep))
        finally:
            runner.close()
    except KeyboardInterrupt:
        print("anyurl: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except _Terminated:
        print("anyurl: terminated", file=sys.stderr)
        return EXIT_TERMINATED
    except BrokenPipeError:
        # the reader went away (`anyurl get URL | head`): stop quietly
        with contextlib.suppress(OSError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return EXIT_PIPE
    except AnyURLError as exc:
        if debug:
            _print_traceback(exc)
        rep.error(exc)
        return exc.exit_code
    except Exception as exc:
        if debug:
            _print_traceback(exc)
        else:
            print(f"anyurl: internal error: {type(exc).__name__}: {_printable(exc)} "
                  "(run with --debug for the traceback)", file=sys.stderr)
        return EXIT_INTERNAL
    finally:
        if "anyurl.cli.early" in sys.modules:  # an early connection nobody used is closed
            sys.modules["anyurl.cli.early"].discard()


def run(argv: Sequence[str] | None = None) -> int:
    """The ``anyurl`` program (its console script and ``python -m anyurl``): :func:`main`, then
    exit without the interpreter's last garbage collections walking every loaded module.

    When main returns, the command's files are closed and standard output is flushed;
    ``gc.freeze()`` moves what is still alive out of the collector's reach, so the exit-time
    collections have nothing to walk (with asyncio and uvloop loaded they cost 10-15 ms, more
    than some whole downloads). Exit handlers and the flush of sys.stdout/stderr still run.
    """
    code = main(argv)
    import gc

    gc.freeze()
    return code

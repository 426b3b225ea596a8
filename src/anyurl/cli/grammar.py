"""The ``anyurl`` command's grammar, declared once: every command, option, default and help text.

Two readers take it as it is: :mod:`anyurl.cli.parser` builds the argparse parser from it (help,
usage errors, every form argparse accepts), and :mod:`anyurl.cli.quick` reads the plain lines of
the commands marked ``quick`` without loading argparse (start-up time, docs/internals.md). An
option added here is known to both, so they cannot disagree. This module imports nothing.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: importing typing costs start-up time (mypy knows this idiom)
if TYPE_CHECKING:
    from collections.abc import Callable


# -- value converters: ValueError carries the message argparse shows ----------------------------


def _bounded(kind: Callable[[str], float], least: float, *, above: bool = False,
             what: str = "an integer") -> Callable[[str], object]:
    """A *kind* number at least *least* (more than it when *above*); NaN never passes."""
    bound = (("positive" if least == 0 else f"more than {least}") if above
             else ("0 or more" if least == 0 else f"at least {least}"))

    def convert(text: str) -> object:
        try:
            value = kind(text)
        except ValueError:
            raise ValueError(f"not {what}: {text!r}") from None
        if not (value > least if above else value >= least):
            raise ValueError(f"must be {bound}: {text!r}")
        return value

    return convert


positive_int = _bounded(int, 1)
count = _bounded(int, 0)
delay = _bounded(float, 0.0, what="a number of seconds")
seconds = _bounded(float, 0.0, above=True, what="a number of seconds")


def size(text: str) -> int:
    """A byte count, optionally with a k/M/G suffix (powers of 1024)."""
    t = text.strip().lower().removesuffix("b") or "x"
    mult = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}.get(t[-1], 1)
    digits = t[:-1] if mult > 1 else t
    try:
        value = int(float(digits) * mult)
    except ValueError:
        raise ValueError(f"not a size: {text!r} (use e.g. 1000, 64k, 10M)") from None
    if value < 0:
        raise ValueError(f"negative size: {text!r}")
    return value


def header(text: str) -> tuple[str, str]:
    """An HTTP request header as curl's -H takes it: "Name: value"."""
    name, sep, value = text.partition(":")
    name = name.strip()
    if not sep or not name or any(c in name for c in " \t()<>@,;\\\"/[]?={}"):
        raise ValueError(f"not a header: {text!r} (write 'Name: value')")
    if any(c in text for c in "\r\n\0"):
        raise ValueError(f"a header may not hold CR, LF or NUL: {text!r}")
    return name, value.strip()


def rate(text: str) -> int:
    """Bytes a second, with a k/M/G suffix (as curl's --limit-rate): more than 0."""
    value = size(text)
    if value <= 0:
        raise ValueError(f"must be positive: {text!r}")
    return value


# -- the declaration ----------------------------------------------------------------------------


class Option:
    """One option: its spellings, the namespace field it sets, and how.

    *action*: ``"flag"`` (True when given), ``"off"`` (False when given), ``"value"`` (one value,
    through *convert*; None: the text) or ``"append"`` (repeatable, a list).
    """

    __slots__ = ("action", "choices", "convert", "default", "dest", "help", "metavar", "names")

    def __init__(self, names: tuple[str, ...], dest: str, action: str, default: object = None, *,
                 help: str | None = None, metavar: str | None = None,
                 convert: Callable[[str], object] | None = None,
                 choices: tuple[str, ...] | None = None) -> None:
        self.names = names
        self.dest = dest
        self.action = action
        self.default = default
        self.help = help
        self.metavar = metavar
        self.convert = convert
        self.choices = choices


class Positional:
    """A positional argument: *nargs* as argparse's (None: exactly one)."""

    __slots__ = ("default", "dest", "help", "metavar", "nargs")

    def __init__(self, dest: str, metavar: str, nargs: str | None = None, default: object = None,
                 help: str | None = None) -> None:
        self.dest = dest
        self.metavar = metavar
        self.nargs = nargs
        self.default = default
        self.help = help


class Command:
    """One command: --help's line for it (*synopsis*, *summary*), its subcommand help, arguments,
    options (*exclusive*: groups of fields given at most one of), whether it takes the network
    options, and whether the quick reader reads its plain lines (one positional at most)."""

    __slots__ = ("description", "exclusive", "help", "name", "network", "options", "positionals", "quick",
                 "summary", "synopsis")

    def __init__(self, synopsis: str, summary: str, help: str, description: str,
                 positionals: tuple[Positional, ...], options: tuple[Option, ...] = (), *,
                 exclusive: tuple[tuple[str, ...], ...] = (), network: bool = True, quick: bool = False) -> None:
        self.name = synopsis.split()[0]
        self.synopsis = synopsis
        self.summary = summary
        self.help = help
        self.description = description
        self.positionals = positionals
        self.options = options
        self.exclusive = exclusive
        self.network = network
        self.quick = quick


#: the options every command takes, before or after its name
GLOBAL = (
    Option(("--debug",), "debug", "flag", False, help="show tracebacks on errors"),
    Option(("-v", "--verbose"), "verbose", "flag", False,
           help="show connections, protocol commands sent (passwords masked) and replies on stderr"),
    Option(("--email",), "email", "value", metavar="ADDR",
           help="password for anonymous FTP (default: $ANYURL_EMAIL or $USER@localhost)"),
    Option(("--news-server",), "news_server", "value", metavar="HOST[:PORT]",
           help="NNTP server for news: URLs (default: $NNTPSERVER)"),
    Option(("--user-agent",), "user_agent", "value", metavar="TEXT", help="HTTP User-Agent"),
)

#: the options of the commands that reach the network
NETWORK = (
    Option(("--timeout",), "timeout", "value", convert=seconds, metavar="S",
           help="idle timeout: give up when no data arrives for S seconds (default 60)"),
    Option(("--connect-timeout",), "connect_timeout", "value", convert=seconds, metavar="S",
           help="give up when a connection takes longer than S seconds (default 30)"),
    Option(("--max-time",), "max_time", "value", convert=seconds, metavar="S",
           help="give up on a transfer that takes longer than S seconds in all"),
    Option(("--retry",), "retry", "value", 0, convert=count, metavar="N",
           help="retry a transient failure (timeout, lost connection, 4xx-style reply) "
                "up to N times; a download resumes where the scheme allows (default 0)"),
    Option(("--retry-delay",), "retry_delay", "value", convert=delay, metavar="S",
           help="first wait between retries, doubled each time (default 1; "
                "a server's Retry-After wins when longer)"),
    Option(("--proxy",), "proxy", "value", metavar="URL",
           help="HTTP proxy for http, https and ftp URLs, as [http://]host:port "
                "(default: $http_proxy, $https_proxy, $ftp_proxy; '' for none)"),
    Option(("--noproxy",), "noproxy", "value", metavar="LIST",
           help="comma-separated hosts, domains or CIDR blocks reached directly; '*' for all "
                "(default: $no_proxy)"),
    Option(("--http1.1",), "http1_1", "flag", False,
           help="speak HTTP/1.1 to https servers (default: HTTP/2 where the server offers it)"),
    Option(("--http3",), "http3", "flag", False,
           help="try HTTP/3 (QUIC) first with https servers, falling back to TCP when it fails "
                "(default: HTTP/3 only where a server said Alt-Svc: h3; needs anyurl[http3])"),
    Option(("--no-http3",), "no_http3", "flag", False,
           help="never HTTP/3, not even where a server said Alt-Svc: h3 (HTTP/2 or HTTP/1.1 over TCP)"),
    Option(("--pipeline",), "pipeline", "value", convert=count, metavar="N",
           help="at most N GETs in flight on one plain-http connection (HTTP/1.1 pipelining, "
                "when all connections to a server are busy; default 32; 0 or 1: off)"),
    Option(("-q", "--quiet"), "quiet", "flag", False, help="no progress bars or messages"),
    Option(("-H", "--header"), "header", "append", convert=header, metavar="'NAME: VALUE'",
           help="send this header with every HTTP request (repeatable; replaces a header anyurl sends)"),
    Option(("-u", "--user"), "user", "value", metavar="USER[:PASSWORD]",
           help="log in as USER to the ftp and http(s) URLs given that name no user (HTTP: Basic); "
                "without :PASSWORD it is asked on a terminal"),
    Option(("-k", "--insecure"), "insecure", "flag", False,
           help="do not check TLS certificates and host names (https, ftps, nntps); warns"),
)

#: what a command's namespace holds for the fields of options it does not take
COMMON_DEFAULTS: dict[str, object] = {"timeout": None, "connect_timeout": None, "max_time": None,
                                      "quiet": False, "parallel": 0, "header": [], "user": None,
                                      "insecure": False, "limit_rate": None}

#: options of curl and wget that anyurl answers with its own way (a usage error naming it)
HABITS: dict[str, str] = {
    **dict.fromkeys(("-L", "--location"),
                    "redirects are followed by default (at most Limits.max_redirects, 10): leave out -L"),
    **dict.fromkeys(("-C", "--continue-at"),
                    "to resume a partial download use -c (--continue) with -o FILE, -O or -d DIR"),
    **dict.fromkeys(("-I", "--head"), "for size, date and type without the body use `anyurl stat URL`"),
    **dict.fromkeys(("-r", "--recursive", "-m", "--mirror"),
                    "to copy a directory tree use `anyurl mirror URL DIR`; a web site: `anyurl crawl URL -d DIR`"),
    **dict.fromkeys(("-s", "--silent"), "for no progress bars or messages use -q (--quiet)"),
    **dict.fromkeys(("-f", "--fail"), "an HTTP error status is already a failure (exit 11, 12, 15 or 16)"),
}

#: archiving what a command fetched (anyurl.warc; docs/warc.md), for get, mirror and crawl
WARC_OPTIONS = (
    Option(("--warc",), "warc", "value", metavar="FILE",
           help="also write every resource fetched, as it crossed the wire, to the WARC 1.1 file FILE "
                "(FILE.warc.gz: gzip per record)"),
    Option(("--warc-max-size",), "warc_max_size", "value", convert=size, metavar="N",
           help="start a new WARC file (FILE-00000.warc.gz, FILE-00001...) once one reaches N bytes"),
    Option(("--wacz",), "wacz", "value", metavar="FILE",
           help="also package what was archived, with its index, as the WACZ file FILE (for replay in a "
                "browser; needs the wacz package: pip install 'anyurl[wacz]')"),
)

COMMANDS = (
    Command("get URL...", "download (to stdout, -o FILE, -O, or -d DIR)", "download URLs",
            "Download one or more URLs. One URL without -o/-O/-d goes to standard output.",
            (Positional("urls", "URL", "*"),), (
                Option(("-i", "--input-file"), "input_file", "value", metavar="FILE",
                       help="also read URLs from FILE, one a line ('-': standard input; # comments)"),
                Option(("-o", "--output"), "output", "value", metavar="FILE",
                       help="write to FILE ('-': standard output, byte-exact even on a terminal; without -o "
                            "a terminal is shown the data with control characters escaped)"),
                Option(("-O", "--remote-name"), "remote_name", "flag", False,
                       help="name the file after the URL's last path component (made safe)"),
                Option(("-d", "--dir"), "dir", "value", metavar="DIR",
                       help="write each URL to DIR/<name> (name as with -O)"),
                Option(("--parallel",), "parallel", "value", 4, convert=positive_int, metavar="N",
                       help="download up to N URLs at once (default 4)"),
                Option(("-c", "--continue"), "resume", "flag", False,
                       help="keep a partial file on failure and resume it on the next --continue run"),
                Option(("--max-size",), "max_size", "value", convert=size, metavar="N",
                       help="refuse resources larger than N bytes (suffixes k, M, G)"),
                Option(("--force",), "force", "flag", False,
                       help="replace an existing file that has other content (default: refuse)"),
                Option(("--limit-rate",), "limit_rate", "value", convert=rate, metavar="RATE",
                       help="read each transfer at most RATE bytes a second (suffixes k, M, G)"),
                *WARC_OPTIONS,
            ), exclusive=(("output", "remote_name", "dir"),), quick=True),
    Command("mirror URL DIR", "copy a directory tree into DIR (parallel, resumable, never overwrites)",
            "copy a directory tree into DIR",
            "Copy every file below URL (FTP or file: directory, gopher menu, news group...) into DIR, "
            "keeping the tree. Names are decoded once and kept inside DIR; files are byte-exact; an "
            "existing file with other content is never replaced without --force or --newer. Every error "
            "is reported; the exit code is that of the first failing entry in tree order (paths compared "
            "name by name), whichever failed first in time (0 when none).",
            (Positional("url", "URL"), Positional("dir", "DIR")), (
                Option(("--parallel",), "parallel", "value", 8, convert=positive_int, metavar="N",
                       help="download up to N files at once (default 8)"),
                Option(("-c", "--continue"), "resume", "flag", False,
                       help="keep partial files on failure and resume them on the next --continue run"),
                Option(("-N", "--newer"), "newer", "flag", False,
                       help="skip files whose local copy has the remote size and is not older; "
                            "replace the others"),
                Option(("--force",), "force", "flag", False, help="replace existing files that have other content"),
                Option(("--no-requisites",), "requisites", "off", True,
                       help="of a web site, only the pages' links, not their images, stylesheets and scripts"),
                Option(("--symlinks",), "symlinks", "value", "copy", choices=("copy", "keep"),
                       help="copy what a server symlink leads to (default), or keep it as a local symlink "
                            "when its target stays inside DIR"),
                Option(("--max-depth",), "max_depth", "value", convert=count, metavar="N",
                       help="go at most N directory levels below URL (0: only the files of URL "
                            "itself; default: no limit)"),
                Option(("--include",), "include", "append", metavar="GLOB",
                       help="only files whose relative path or name matches GLOB (repeatable)"),
                Option(("--exclude",), "exclude", "append", metavar="GLOB",
                       help="leave out files whose relative path or name matches GLOB (repeatable)"),
                Option(("--delay",), "delay", "value", 0.0, convert=delay, metavar="S",
                       help="at least S seconds between two listings of one host (default 0)"),
                Option(("--state",), "state", "value", metavar="FILE",
                       help="keep the mirror's frontier in FILE (SQLite): a mirror stopped or killed continues "
                            "from it when run again"),
                Option(("--no-robots",), "robots", "off", True, help="ignore robots.txt on http(s) hosts"),
                *WARC_OPTIONS,
            )),
    Command("crawl SEED...", "crawl from every seed into DIR, fetching each URL once (resumable with --state)",
            "crawl from seeds into a directory",
            "Walk from every SEED (web sites, FTP trees, gopher holes, news groups), fetch each resource once "
            "and save it under DIR as DIR/host/path. Each seed keeps its scope (its host, below its directory, "
            "its scheme family). With --state FILE the crawl is kept in a SQLite file: a crawl stopped (Ctrl-C, "
            "exit 130) or killed continues where it was when run again with the same FILE.",
            (Positional("seeds", "SEED", "+"),), (
                Option(("-d", "--dir"), "dir", "value", metavar="DIR", help="save every resource under DIR"),
                Option(("--state",), "state", "value", metavar="FILE",
                       help="keep the crawl's state in FILE (SQLite; created, or continued)"),
                Option(("--parallel",), "parallel", "value", 8, convert=positive_int, metavar="N",
                       help="fetch up to N resources at once (default 8)"),
                Option(("--per-host",), "per_host", "value", 2, convert=positive_int, metavar="N",
                       help="at most N at once from one host (default 2)"),
                Option(("--max-depth",), "max_depth", "value", convert=count, metavar="N",
                       help="follow links at most N levels from a seed (default: no limit)"),
                Option(("--delay",), "delay", "value", 0.0, convert=delay, metavar="S",
                       help="at least S seconds between two fetches from one host (default 0)"),
                Option(("--no-robots",), "robots", "off", True, help="ignore robots.txt on http(s) hosts"),
                Option(("--no-requisites",), "requisites", "off", True,
                       help="only the pages' links, not their images, stylesheets and scripts"),
                Option(("--any-host",), "same_host", "off", True, help="follow links to other hosts too"),
                Option(("--cross-scheme",), "cross_scheme", "flag", False,
                       help="follow links to other schemes (ftp from a web page...)"),
                Option(("--no-parent-limit",), "under_seed", "off", True,
                       help="follow a web site's links above the seed's directory too"),
                Option(("--json-lines",), "json_lines", "flag", False,
                       help="one JSON object per line on standard output: each resource, progress, a summary"),
                *WARC_OPTIONS,
            )),
    Command("ls URL", "list a directory-like resource (FTP dir, gopher menu, news group...)",
            "list a directory-like resource",
            "List the entries of a directory-like resource (FTP directory, gopher menu, news group, "
            "file: directory).",
            (Positional("url", "URL"),), (
                Option(("--json",), "json", "flag", False, help="a JSON array of entries"),
                Option(("--json-lines",), "json_lines", "flag", False, help="one JSON object per line"),
            ), exclusive=(("json", "json_lines"),), quick=True),
    Command("stat URL", "size, date and type without the body", "show a resource's size, date and type",
            "Show size, modification time, type and scheme facts of a resource without transferring "
            "its body (HTTP HEAD, FTP SIZE/MDTM, file stat, Gopher+ attributes, NNTP STAT/HEAD).",
            (Positional("url", "URL"),), (
                Option(("--json",), "json", "flag", False, help="one JSON object"),
            ), quick=True),
    Command("parse URL", "show the URL's components as JSON", "show a URL's components as JSON",
            "Parse URLs and print their components as JSON (one object per URL, one per line when several).",
            (Positional("urls", "URL", "+"),), (
                Option(("--show-password",), "show_password", "flag", False, help="do not mask the password"),
            ), network=False, quick=True),
    Command("extract [FILE]", "print the URLs found in text (RFC 1738 appendix rules)",
            "print the URLs found in text",
            "Print the URLs found in a text (a file, or standard input), one per line.",
            (Positional("file", "FILE", "?", "-", help="default: standard input"),), network=False),
    Command("put FILE URL", "upload FILE (FTP)", "upload a file", "Upload FILE to URL (FTP STOR).",
            (Positional("file", "FILE"), Positional("url", "URL"))),
    Command("send MAILTO_URL", "send stdin as a mail message", "send a mail message", "Send standard input as a message to a mailto: URL.",
            (Positional("url", "MAILTO_URL"),), (
                Option(("-s", "--subject"), "subject", "value",
                       help="subject (default: the URL's subject= header, if any)"),
                Option(("--from",), "sender", "value", metavar="ADDR", help="sender address"),
                Option(("--attach",), "attach", "append", metavar="FILE", help="attach FILE (repeatable)"),
            )),
    Command("open URL", "interactive session (telnet)", "interactive session (telnet)",
            "Open an interactive session for a telnet: URL (other URLs are fetched to standard output).",
            (Positional("url", "URL"),)),
)

#: the commands' names
NAMES = tuple(c.name for c in COMMANDS)

#: --help's list of commands, in this order
LISTED = ("get", "ls", "stat", "mirror", "crawl", "parse", "extract", "put", "send", "open")

"""The exit-code table: which code the ``anyurl`` command returns for what (docs/cli.md)."""

from __future__ import annotations

from .. import errors
from ..errors import AnyURLError, TransferError

# Every code the command returns is an error class's (errors.py) or one of these. The quick
# path (quick.py) imports this module too: it imports nothing errors.py does not already.
EXIT_INTERRUPTED = 130  # Ctrl-C, as a shell reports SIGINT
EXIT_PIPE = 141  # stdout closed early (e.g. `| head`), as a shell reports SIGPIPE
EXIT_TERMINATED = 143  # SIGTERM, as a shell reports it
EXIT_INTERNAL = 70  # a bug in anyurl (EX_SOFTWARE); --debug shows the traceback
EXIT_NOT_DIRECTORY = 1  # `ls` on a URL that is not directory-like
EXIT_LOCAL_IO = TransferError.exit_code  # standard output cannot take the data


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

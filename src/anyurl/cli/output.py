"""What the commands write: ``anyurl: ...`` lines on stderr, safe text and JSON, standard output's errors."""

from __future__ import annotations

import sys

from ..errors import AnyURLError, TransferError

TYPE_CHECKING = False  # not typing's: importing typing costs start-up time (mypy knows this idiom)
if TYPE_CHECKING:
    import json
    import traceback
    from typing import Any

    from .progress import DelayedProgress
    from .prompts import Prompter
else:
    from .lazy import OnFirstUse

    json, traceback = map(OnFirstUse, ("json", "traceback"))


def printable_text(text: object) -> str:
    """Text from URLs and servers, with control characters made visible (no terminal escapes)."""
    from .display import printable

    return printable(text)


def to_json(value: object, indent: int | None = None) -> str:
    """JSON of what servers sent: json escapes C0 controls; DEL and C1 (CSI) are escaped too."""
    from .display import json_safe

    return json_safe(json.dumps(value, ensure_ascii=False, indent=indent, default=str))


def print_traceback(exc: BaseException) -> None:
    """--debug: the traceback, whose messages may quote a server, with controls escaped."""
    for line in traceback.format_exception(exc):
        sys.stderr.write("\n".join(printable_text(part) for part in line.split("\n")))


def stderr_line(text: str) -> None:
    """*text* and its newline on stderr in one write: print() writes them apart, and another
    thread's output (a prompt, a library's warning) could land between the two."""
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


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
            stderr_line(text)

    def error(self, exc: BaseException | str) -> None:
        """One line for an error; never a traceback. One that ended several tries says how
        many (from its ``history``: the library leaves the message alone)."""
        tries = len(exc.history) if isinstance(exc, AnyURLError) else 0
        self._print(f"anyurl: {printable_text(exc)}" + (f" (after {tries} tries)" if tries > 1 else ""))

    def info(self, text: str) -> None:
        """A message, unless -q."""
        if not self.quiet:
            self._print(f"anyurl: {printable_text(text)}")


class WritingStdout:
    """Standard output that cannot take the data (a full disk, a file size limit) fails the command
    as a local I/O error naming the URL (exit 10), not as an internal error or a traceback; a
    closed pipe stays main's quiet exit 141."""

    def __init__(self, url: object) -> None:
        self.url = url

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, exc: BaseException | None, tb: object) -> None:
        # (anyurl's ConnectError and FetchTimeout are OSErrors too: a server's failure, not stdout's)
        if isinstance(exc, OSError) and not isinstance(exc, BrokenPipeError | AnyURLError):
            raise TransferError(f"cannot write to standard output: {exc.strerror or exc}", url=self.url) from exc


def write_all(out: Any, data: bytes) -> None:
    """``out.write(data)``, all of it: a buffered writer passes a large chunk straight to the file
    and returns a short count when the file hits its size limit (RLIMIT_FSIZE), so the rest is
    written again, which then raises the error instead of dropping the tail."""
    n = out.write(data)
    while n is not None and n < len(data):
        data = data[n:]
        n = out.write(data)

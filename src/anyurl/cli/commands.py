"""The ``anyurl`` command: reads the command line, runs one command, turns the outcome into an exit code.

``anyurl URL`` is short for ``anyurl get URL`` (``anyurl open URL`` for a
telnet URL). Errors print one line, ``anyurl: <message>``, and exit with the
error class's documented exit code (see ``anyurl --help``, :mod:`anyurl.cli.exits`).

The parts live beside this module: ``parser`` (the argument grammar), ``exits`` (the exit-code
table), ``output``, ``prompts``, ``session`` (the Client from the options), ``urllist`` and one
module per command family (``get``, ``ls``, ``stat``, ``mirror``, ``parse``, ``upload``, ``open``).
The commands are looked up in this module's namespace, so a test may replace one here.
"""

from __future__ import annotations

import os
import sys

from .. import errors
from ..errors import AnyURLError
from ..version import __version__
from .exits import (
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_NOT_DIRECTORY,
    EXIT_PIPE,
    EXIT_TERMINATED,
    exit_code_table,
)
from .get import cmd_get, usage_problem
from .ls import LS_TABLE_SAMPLE, cmd_ls
from .mirror import cmd_mirror
from .open import cmd_open
from .output import Reporter, print_traceback, printable_text
from .parse import cmd_extract, cmd_parse
from .parser import (
    COMMANDS,
    QUICK_COMMANDS,
    build_parser,
    commands_epilog,
    insert_default_command,
    parse_command_line,
    parse_plain_line,
)
from .prompts import Prompter
from .session import make_client
from .stat import cmd_stat
from .upload import cmd_put, cmd_send

TYPE_CHECKING = False  # not typing's: importing typing costs start-up time (mypy knows this idiom)
if TYPE_CHECKING:
    import argparse
    import asyncio
    import contextlib
    import signal
    from collections.abc import Callable, Sequence
    from typing import Any
else:
    from .lazy import OnFirstUse

    asyncio, contextlib, signal = map(OnFirstUse, ("asyncio", "contextlib", "signal"))

__all__ = [
    "COMMANDS", "EXIT_INTERNAL", "EXIT_INTERRUPTED", "EXIT_NOT_DIRECTORY", "EXIT_PIPE", "EXIT_TERMINATED",
    "LS_TABLE_SAMPLE", "Prompter", "Reporter", "build_parser", "cmd_extract", "cmd_get", "cmd_ls", "cmd_mirror",
    "cmd_open", "cmd_parse", "cmd_put", "cmd_send", "cmd_stat", "exit_code_table", "main", "run",
    # for tests of the grammar
    "QUICK_COMMANDS", "commands_epilog", "insert_default_command", "parse_plain_line",
]


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
    archive = _warc_writer(args)
    finished = False
    try:
        code = await _run_command(args, rep, prompter, archive)
        finished = True
        return code
    finally:
        if archive is not None:
            archive.close()
            _wacz(args, archive, finished)


def _wacz(args: argparse.Namespace, archive: Any, finished: bool) -> None:
    """``--wacz FILE``: the WARC files written, packaged (once the command finished); a WARC
    file made only for it is removed after."""
    target = getattr(args, "wacz", None)
    if not target:
        return
    try:
        if finished and archive.files:
            from ..transfer.warc import pack_wacz

            pack_wacz(archive.files, target)
    finally:
        if not getattr(args, "warc", None):
            for name in archive.files:
                with contextlib.suppress(OSError):
                    os.unlink(name)


def _warc_writer(args: argparse.Namespace) -> Any:
    """The WARC writer of ``--warc FILE`` (None without it); with ``--wacz FILE`` alone, a
    temporary WARC file beside FILE."""
    path = getattr(args, "warc", None)
    wacz = getattr(args, "wacz", None)
    if not path and wacz:
        import tempfile

        fd, path = tempfile.mkstemp(prefix=".anyurl-", suffix=".warc.gz", dir=os.path.dirname(os.path.abspath(wacz)))
        os.close(fd)
        os.unlink(path)  # (a unique name: the writer makes the file, or its parts with --warc-max-size)
    if not path:
        return None
    from ..errors import mask_password
    from ..transfer.warc import WARCWriter

    command = " ".join(mask_password(a) for a in sys.argv[1:]) if sys.argv[1:] else args.command
    # background: records are built, gzipped and written by the writer's thread, off the event loop
    return WARCWriter(path, max_size=getattr(args, "warc_max_size", None),
                      info={"description": f"anyurl {command}"}, background=True)


async def _run_command(args: argparse.Namespace, rep: Reporter, prompter: Prompter, archive: Any) -> int:
    async with make_client(args, prompter, archive) as client:
        if args.command == "get":
            return await cmd_get(args, client, rep)
        if args.command == "ls":
            return await cmd_ls(args, client, rep)
        if args.command == "stat":
            return await cmd_stat(args, client, rep)
        if args.command == "mirror":
            return await cmd_mirror(args, client, rep)
        if args.command == "crawl":
            from .crawl import cmd_crawl

            return await cmd_crawl(args, client, rep)
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
    raw = insert_default_command(raw)
    args: Any = parse_plain_line(raw)
    if args is None:
        args = parse_command_line(raw)
    if getattr(args, "user", None):  # -u USER[:PASSWORD]: the URLs named get it as their login
        from .session import login_url

        for field in ("urls", "url", "seeds"):
            value = getattr(args, field, None)
            if isinstance(value, str):
                setattr(args, field, login_url(value, args.user))
            elif isinstance(value, list):
                setattr(args, field, [login_url(v, args.user) for v in value])
    debug = bool(args.debug)
    rep = Reporter(quiet=bool(args.quiet))
    if args.command in ("get", "mirror") and (problem := usage_problem(args)) is not None:
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
        sys.stderr.write("anyurl: interrupted\n")  # one write, as anyurl.__main__ says why
        return EXIT_INTERRUPTED
    except _Terminated:
        sys.stderr.write("anyurl: terminated\n")
        return EXIT_TERMINATED
    except BrokenPipeError:
        # the reader went away (`anyurl get URL | head`): stop quietly
        with contextlib.suppress(OSError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return EXIT_PIPE
    except AnyURLError as exc:
        if debug:
            print_traceback(exc)
        rep.error(exc)
        return exc.exit_code
    except Exception as exc:
        if debug:
            print_traceback(exc)
        else:
            print(f"anyurl: internal error: {type(exc).__name__}: {printable_text(exc)} "
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

"""``anyurl get``: download URLs to standard output, a file or a directory."""

from __future__ import annotations

import os
import sys

from .. import errors
from ..errors import AnyURLError, TransferError, TruncatedTransfer
from .output import Reporter, WritingStdout, print_traceback, write_all
from .session import stream_worker_count, with_deadline
from .urllist import Listed, URLList

TYPE_CHECKING = False  # not typing's: importing typing costs start-up time (mypy knows this idiom)
if TYPE_CHECKING:
    import argparse
    import asyncio
    import contextlib
    from collections.abc import AsyncGenerator, Callable, Sequence
    from typing import Any

    from ..client import Client
    from ..response import Body
    from ..transfer.batch import Item, Result
    from ..urls import URL
    from .progress import DelayedProgress
else:
    from .lazy import OnFirstUse

    asyncio, contextlib = map(OnFirstUse, ("asyncio", "contextlib"))


# -- get ----------------------------------------------------------------------


async def _to_stdout(client: Client, url: URL, args: argparse.Namespace,
                     tp: DelayedProgress | None, label: str) -> None:
    out = sys.stdout.buffer
    writing = WritingStdout(url)
    bar = tp.bar(label) if tp is not None else None
    shown = None  # a terminal gets the text with its controls escaped; `-o -` gets the bytes
    if args.output is None and out.isatty():
        from .display import TerminalText

        shown = TerminalText()
    ok = False
    try:
        # (Client.open with the limit in the request: a handler that learns the size first refuses early)
        # (the body as its own context manager: a limit's cut is archived marked truncated, --warc)
        async with await client._open(client.request(url, max_size=args.max_size)) as body:
            _refuse_listing(url)(body)
            if args.limit_rate:
                body.pace(args.limit_rate)
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
                    write_all(out, chunk if shown is None else shown.feed(chunk))
                if bar is not None:
                    bar(done, total)
            with writing:
                if shown is not None:
                    write_all(out, shown.feed(b"", final=True))
                out.flush()
            if total is not None and done < total:
                raise TruncatedTransfer(f"got {done} of {total} bytes", url=url)
        ok = True
    finally:
        if tp is not None and bar is not None:
            tp.finish(bar, ok)


def _refuse_listing(url: URL) -> Callable[[Body], None]:
    """``on_open`` for get: a directory listing is not a file to save."""

    def check(body: Body) -> None:
        if body.entries is not None:
            raise errors.NotRetrievable(
                "is a directory-like resource: use `anyurl ls URL` to list it or "
                "`anyurl mirror URL DIR` to download its files", url=url)

    return check


async def _url_batches(urls: Sequence[str], listing: URLList | None) -> AsyncGenerator[list[str], None]:
    """The URLs given, in batches (the arguments, then each read of the list): the workers take
    them one by one without an await (no generator to resume and no lock per URL)."""
    if urls:
        yield list(urls)
    if listing is not None:
        async for batch in listing.batches():
            yield batch


async def cmd_get(args: argparse.Namespace, client: Client, rep: Reporter) -> int:
    """``anyurl get``: download URLs; returns the first failing URL's exit code."""
    source = getattr(args, "input_file", None)
    # (a missing list fails before any download; -u USER: each listed URL's login too)
    listing = URLList(source, client.limits.max_line, login=args.user) if source else None
    batches = _url_batches(args.urls, listing)
    try:
        return await _get(args, client, rep, batches, listing)
    finally:
        await batches.aclose()
        if listing is not None:
            listing.close()


async def _first(batches: AsyncGenerator[list[str], None], wanted: int) -> tuple[list[str], list[str]]:
    """The first *wanted* URLs (fewer when there are not so many), and the rest of the batch
    they came in. -o and stdout take one URL, so they look for a second (with -d or -O a slow
    pipe's first URL starts at once)."""
    first: list[str] = []
    rest: list[str] = []
    while len(first) < wanted:
        batch = await anext(batches, None)
        if batch is None:
            break
        n = wanted - len(first)
        first += batch[:n]
        rest = batch[n:]
    return first, rest


def _misuse(args: argparse.Namespace, to_stdout: bool, several: bool) -> str | None:
    """What is wrong with get's outputs for the URLs given, or None."""
    if to_stdout and several:
        return "several URLs need -O or -d DIR (or one -o FILE per run)"
    if args.output and args.output != "-" and several:
        return "-o FILE takes one URL; use -d DIR for several"
    if args.resume and to_stdout:
        return "--continue needs a file (-o FILE, -O or -d DIR)"
    return None


async def _get(args: argparse.Namespace, client: Client, rep: Reporter,
               batches: AsyncGenerator[list[str], None], listing: URLList | None) -> int:
    to_stdout = (args.output in (None, "-") and not args.remote_name and not args.dir)
    wanted = 2 if to_stdout or args.output else 1
    first, rest = await _first(batches, wanted)
    failure = _Failure(rep, args.debug)
    if listing is not None:  # its overlong lines, skipped: each reported, in its place among the URLs
        listing.report_to(lambda i, exc: failure(len(args.urls) + i, exc))
    if not first:
        if failure.code:
            return failure.code
        rep.error("no URL given (as arguments or with -i FILE)")
        return 2
    several = len(first) > 1 or wanted == 1  # with -d/-O: as many as come
    problem = _misuse(args, to_stdout, several)
    if problem is not None:
        rep.error(problem)
        return 2
    tp = _progress(args.quiet, lambda: _expected_count(args, listing) if several else 1)
    rep.progress = tp
    if rep.prompter is not None:
        rep.prompter.progress = tp
    with tp if tp is not None else contextlib.nullcontext():
        if to_stdout:
            try:
                u = client.parse(first[0])
                await with_deadline(args.max_time, _to_stdout(client, u, args, tp, _label_for(u)), u)
            except AnyURLError as exc:
                failure(0, exc)
            return failure.code
        return await _save(args, client, rep, _then(first + rest, batches, tp), several, failure, tp)


async def _then(head: list[str], batches: AsyncGenerator[list[str], None],
                tp: DelayedProgress | None) -> AsyncGenerator[list[str], None]:
    """*head*, then the rest of *batches*; the progress learns the count at their end."""
    count = len(head)
    yield head
    async for batch in batches:
        count += len(batch)
        yield batch
    if tp is not None:
        tp.set_count(count)


class _Failure:
    """The exit code of the first failing URL in the order given; each error reported."""

    def __init__(self, rep: Reporter, debug: bool) -> None:
        self.rep = rep
        self.debug = debug
        self.index = -1
        self.code = 0

    def __call__(self, i: int, exc: AnyURLError) -> None:
        if self.index < 0 or i < self.index:
            self.index, self.code = i, exc.exit_code
        self.rep.error(exc)
        if self.debug:
            print_traceback(exc)


async def _save(args: argparse.Namespace, client: Client, rep: Reporter, urls: AsyncGenerator[list[str], None],
                several: bool, failure: _Failure, tp: DelayedProgress | None) -> int:
    """get -d/-O/-o: the batch engine (anyurl.transfer.batch) saves the files."""
    from ..transfer.batch import Batch, Chunks

    try:
        sink = _sink_class()(args, tp)
    except TransferError as exc:
        rep.error(f"-d {exc.message}" if exc.message.endswith("not a directory") else exc.message)
        return TransferError.exit_code

    def report(r: Result) -> None:
        if r.error is not None:
            if r.url is None and isinstance(r.given, Listed):  # which line of a 100,000-line list
                r.error.message = f"{r.error.message} ({r.given.where})"
            failure(r.index, r.error)
        elif r.note is not None:
            rep.info(r.note)

    # --parallel N: N transfers at once, N connections to a host; where a host's answers come
    # as HTTP/2 streams or pipelined GETs, more run on them at once (the batch's stream workers)
    turns = args.parallel if several else 1
    batch = Batch(client, Chunks(urls), sink, parallel=turns, streams=stream_worker_count(turns), on_result=report)
    await batch.run()
    return failure.code


def _sink_class() -> type[Any]:
    """get's sink: the library's Directory with progress bars, --max-time, -o and --force.
    (Made on first use: `get` to stdout never imports the batch engine.)"""
    from ..transfer.batch import Directory

    class Saving(Directory):
        def __init__(self, args: argparse.Namespace, tp: DelayedProgress | None) -> None:
            super().__init__(args.dir or "", resume=args.resume, overwrite=bool(getattr(args, "force", False)),
                             max_size=args.max_size)
            self.output = args.output
            self.follow = bool(args.output)  # only a path the user named may be a symlink or a device
            self.max_time = args.max_time
            self.tp = tp
            self.rate = args.limit_rate

        def place(self, item: Item) -> None:
            if self.output:
                item.dest, item.name = self.output, os.path.basename(self.output)
            else:
                super().place(item)

        def opened(self, item: Item, body: Body) -> None:
            _refuse_listing(item.url)(body)
            if self.rate:
                body.pace(self.rate)

        async def transfer(self, client: Client, item: Item) -> None:
            tp = self.tp
            bar = tp.bar(item.name or "") if tp is not None else None
            ok = False
            try:
                run = self.save(client, item, bar)
                await (run if self.max_time is None else with_deadline(self.max_time, run, item.url))
                ok = True
            finally:
                if tp is not None and bar is not None:
                    tp.finish(bar, ok)

    return Saving


def _expected_count(args: argparse.Namespace, listing: URLList | None) -> int | None:
    """How many URLs ``get`` has (None when a pipe is still being read)."""
    if listing is None:
        return len(args.urls)
    more = listing.count_urls()
    return None if more is None else len(args.urls) + more


def _progress(quiet: bool, count: Callable[[], int | None]) -> DelayedProgress | None:
    """Progress bars on stderr when it is a terminal and not -q (*count* is asked only then);
    they appear once the transfers have run for ``progress.show_after()`` seconds."""
    try:
        on_terminal = not quiet and sys.stderr.isatty()
    except (AttributeError, ValueError):
        on_terminal = False
    if not on_terminal:
        return None
    from .progress import DelayedProgress, show_after

    return DelayedProgress(count=count(), delay=show_after())


def _label_for(u: URL) -> str:
    from ..transfer.download import name_for_url

    try:
        return name_for_url(u)
    except Exception:  # a label must never fail a download
        return u.scheme


def usage_problem(args: argparse.Namespace) -> str | None:
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

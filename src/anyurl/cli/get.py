"""``anyurl get``: download URLs to standard output, a file or a directory."""

from __future__ import annotations

import os
import sys

from .. import errors
from ..errors import AnyURLError, TransferError, TruncatedTransfer, mask_password
from .output import Reporter, _print_traceback, _write_all, _WritingStdout
from .session import _stream_workers, _with_deadline
from .urllist import _Listed, _URLList

TYPE_CHECKING = False  # not typing's: importing typing costs start-up time (mypy knows this idiom)
if TYPE_CHECKING:
    import argparse
    import asyncio
    import contextlib
    from collections.abc import AsyncGenerator, Callable, Iterator, Sequence
    from typing import Any

    from ..client import Client
    from ..response import Body
    from ..urls import URL
    from .progress import DelayedProgress

    _Job = tuple[int, URL, str, str, str | None]  # (index, URL, destination, its file name, note)
else:
    from .lazy import OnFirstUse

    asyncio, contextlib = map(OnFirstUse, ("asyncio", "contextlib"))


# -- get ----------------------------------------------------------------------


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
        # _stream_workers(N) in all, within Limits.per_host_requests); any other transfer
        # waits for one of the N plain turns, handed on first come, first served
        plain_turns = args.parallel if several else 1
        plain_busy = 0
        queue: collections.deque[tuple[asyncio.Future[bool], Any]] = collections.deque()
        released: set[tuple[str, Any, Any]] = set()  # origins whose waiting transfers were let go
        groups: list[asyncio.TaskGroup] = []  # the workers' (more start once HTTP/2 is met)
        spawned: list[bool] = []  # the stream workers started

        def multiplexed(u: Any) -> bool:
            # (https: HTTP/2 streams; http: pipelined GETs; news: pipelined windows)
            try:
                handler = client.handler(u)
            except AnyURLError:  # no handler for its scheme: the transfer itself says so
                return False
            m = getattr(handler, "multiplexed", None)
            return m is not None and bool(m(u))

        def stream_workers() -> None:
            if groups and not spawned:  # the first multiplexed origin: the stream workers
                spawned.append(True)
                for _ in range(_stream_workers(plain_turns) - plain_turns):
                    groups[0].create_task(worker())

        async def admit(u: Any) -> bool:
            """Wait for a turn for *u*: True when it holds one of the plain turns."""
            nonlocal plain_busy
            if multiplexed(u):
                stream_workers()
                return False
            if plain_busy and type(u) is HTTPURL and u.scheme == "https":
                # a connection to its origin may be picking HTTP/2 now: its streams start at the
                # handshake, not after a first response
                settle = getattr(client.handler(u), "negotiated", None)
                if settle is not None and await settle(u):
                    stream_workers()
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
            where = (u.scheme, getattr(u, "host", None), getattr(u, "port", None))
            if where not in released and multiplexed(u):
                released.add(where)  # (once per origin: not a scan per transfer)
                for fut, w in list(queue):
                    if not fut.done() and multiplexed(w):
                        queue.remove((fut, w))
                        fut.set_result(False)
                stream_workers()

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

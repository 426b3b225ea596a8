"""``anyurl get``: download URLs to standard output, a file or a directory."""

from __future__ import annotations

import os
import sys

from .. import errors
from ..errors import AnyURLError, TransferError, TruncatedTransfer, mask_password
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
    writing = WritingStdout(url)
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
    listing = URLList(source, client.limits.max_line) if source else None  # a missing list fails before any download
    batches = _url_batches(args.urls, listing)
    try:
        return await _get(args, client, rep, batches, listing)
    finally:
        await batches.aclose()
        if listing is not None:
            listing.close()


async def _get(args: argparse.Namespace, client: Client, rep: Reporter,
               batches: AsyncGenerator[list[str], None], listing: URLList | None) -> int:
    import collections

    from ..transfer.download import DirNames, download_file, name_for_url
    from ..urls import HTTPURL

    to_stdout = (args.output in (None, "-") and not args.remote_name and not args.dir)
    # the rest of the URLs is read as the workers need it; -o and stdout take one URL, so
    # they look for a second (with -d or -O a slow pipe's first URL starts at once)
    held: collections.deque[str] = collections.deque()  # read, not yet taken
    listing_open = [True]  # batches may still come

    async def more() -> bool:
        """The next batch of URLs into *held*; False at the end of them."""
        while listing_open[0]:
            batch = await anext(batches, None)
            if batch is None:
                listing_open[0] = False
            elif batch:
                held.extend(batch)
                return True
        return False

    first: list[str] = []
    wanted = 2 if to_stdout or args.output else 1
    while len(first) < wanted and (held or await more()):
        first.append(held.popleft())
    held.extendleft(reversed(first))  # (taken again below, in order)
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
            print_traceback(exc)

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

        # (a directory path once, not os.path.join's per file: the names are safe, without "/")
        prefix = directory if not directory or directory.endswith("/") else directory + "/"

        def dest_for(i: int, text: str) -> _Job | None:
            try:
                # (a listed URL as plain text: urls.parse's fast path takes exact str only)
                u = client.parse(text if text.__class__ is str else str.__str__(text))
            except AnyURLError as exc:
                if isinstance(text, Listed):  # which line of a 100,000-line list
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

        taken = [-1, 0]  # the index of the last URL taken; 1 once the count is known
        turn = asyncio.Lock()  # one worker at a time reads the next batch

        def take() -> _Job | None:
            """The next job from the URLs read so far (bad URLs reported as they come), or None."""
            while held:
                text = held.popleft()
                taken[0] += 1
                job = dest_for(taken[0], text)
                if job is not None:
                    return job
            return None

        async def next_job() -> _Job | None:
            """The next job, reading on when every URL read so far is taken; None at the end."""
            job = take()
            while job is None:
                async with turn:
                    job = take()  # (another worker may have read the next batch meanwhile)
                    if job is None:
                        if not await more():
                            if tp is not None and not taken[1]:
                                taken[1] = 1
                                tp.set_count(taken[0] + 1)
                            return None
                        job = take()
            return job

        force = bool(getattr(args, "force", False))

        # --parallel N: N transfers at once, N connections to a host. Where a host's answers come
        # as HTTP/2 streams or pipelined GETs (many share a connection), more transfers run on them at once (up to
        # stream_worker_count(N) in all, within Limits.per_host_requests; N x the pipeline's depth for a
        # pipelining http origin); any other transfer
        # waits for one of the N plain turns, handed on first come, first served
        plain_turns = args.parallel if several else 1
        plain_busy = 0
        queue: collections.deque[tuple[asyncio.Future[bool], Any]] = collections.deque()
        released: set[tuple[str, Any, Any]] = set()  # origins whose waiting transfers were let go
        groups: list[asyncio.TaskGroup] = []  # the workers' (more start once HTTP/2 is met)
        # stream workers alive: they run the transfers that share connections; one that had to
        # take a plain turn (its origin no longer multiplexes: pipelining found the round trip
        # short after all) ends after it, so the plain ones are not queued behind hundreds of them
        extras = [0]

        askers: dict[str, Callable[[Any], bool] | None] = {}  # per scheme: its handler's multiplexed
        workers_for: dict[str, int] = {}  # per scheme: the workers in all its multiplexed origins want

        def multiplexed(u: Any) -> bool:
            # (https: HTTP/2 streams; http: pipelined GETs; news: pipelined windows)
            scheme = u.scheme
            if scheme in askers:
                m = askers[scheme]
            else:
                try:
                    handler = client.handler(u)
                except AnyURLError:  # no handler for its scheme: the transfer itself says so
                    return False
                m = getattr(handler, "multiplexed", None)
                if scheme != "ftp":  # (an ftp URL's handler depends on its host: a proxy or not)
                    askers[scheme] = m
            return m is not None and bool(m(u))

        def stream_workers(u: Any) -> None:
            # a multiplexed origin (again): the stream workers; a pipelining http origin may
            # want more (as many per turn as a pipeline's bound: a batch fills them at once)
            total = workers_for.get(u.scheme)
            if total is None:  # (once per scheme: this runs for every multiplexed transfer)
                total = stream_worker_count(plain_turns)
                if type(u) is HTTPURL and u.scheme == "http":
                    depth = getattr(getattr(client.handler(u), "http_options", None), "pipeline", 0)
                    total = max(total, plain_turns * depth)
                workers_for[u.scheme] = total
            more = total - plain_turns - extras[0]
            if groups and more > 0:
                extras[0] += more
                for _ in range(more):
                    groups[0].create_task(worker(True))

        async def admit(u: Any) -> bool:
            """Wait for a turn for *u*: True when it holds one of the plain turns."""
            nonlocal plain_busy
            if multiplexed(u):
                stream_workers(u)
                return False
            if plain_busy and type(u) is HTTPURL and u.scheme == "https":
                # a connection to its origin may be picking HTTP/2 now: its streams start at the
                # handshake, not after a first response
                settle = getattr(client.handler(u), "negotiated", None)
                if settle is not None and await settle(u):
                    stream_workers(u)
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
            if not queue:
                # nobody waits: nothing to let go (a newly multiplexed origin starts the stream
                # workers at its next admit)
                return
            where = (u.scheme, getattr(u, "host", None), getattr(u, "port", None))
            if where not in released and multiplexed(u):
                released.add(where)  # (once per origin: not a scan per transfer)
                for fut, w in list(queue):
                    if not fut.done() and multiplexed(w):
                        queue.remove((fut, w))
                        fut.set_result(False)
                stream_workers(u)

        async def worker(extra: bool = False) -> None:
            # N workers pull from one iterator: memory stays flat however long the list
            while True:
                job = take()  # (without an await while URLs are held)
                if job is None:
                    job = await next_job()
                    if job is None:
                        return
                i, u, dest, base, note = job
                held = await admit(u)
                bar = tp.bar(base) if tp is not None else None
                ok = False
                try:
                    new = listed is not None and listed.new(base)
                    # only a path the user named (-o) may be a symlink or a device
                    run = download_file(client, u, dest, args.resume, bar, args.max_size, _refuse_listing(u), force,
                                        {}, new, follow=bool(args.output))
                    await (run if args.max_time is None else with_deadline(args.max_time, run, u))
                    ok = True
                    if note is not None:
                        rep.info(note)
                except AnyURLError as exc:
                    fail(i, exc)
                finally:
                    if tp is not None and bar is not None:
                        tp.finish(bar, ok)
                    leave(held, u)
                if extra and held:
                    extras[0] -= 1
                    return

        try:
            async with asyncio.TaskGroup() as group:
                groups.append(group)
                for _ in range(plain_turns):
                    group.create_task(worker())
        except BaseExceptionGroup as eg:  # a bug or an unreadable URL list: the error itself, not a group
            raise eg.exceptions[0] from None
    return failure[1]


def _expected_count(args: argparse.Namespace, listing: URLList | None) -> int | None:
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

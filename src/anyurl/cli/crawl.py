"""``anyurl crawl SEED... -d DIR [--state FILE]``: a crawl with a status line (or JSON lines)
and a summary; Ctrl-C stops it with the state consistent (exit 130), and the same
command continues it."""

from __future__ import annotations

import asyncio
import json
import sys
import time

from ..errors import mask_password
from .mirror import human_size
from .output import Reporter
from .session import with_deadline

TYPE_CHECKING = False  # not typing's: importing typing costs start-up time (mypy knows this idiom)
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from ..client import Client
    from ..transfer.crawl import CrawlEvent, CrawlResult


class _Progress:
    """What a long crawl shows: on a terminal a status line (stderr) redrawn at most 5 times a
    second; with --json-lines one object a resource on stdout, and a progress object a second."""

    def __init__(self, terminal: bool, json_lines: bool) -> None:
        self.terminal = terminal
        self.json_lines = json_lines
        self.result: CrawlResult | None = None
        self.started = time.monotonic()
        self.last_line = 0.0
        self.last_json = time.monotonic()
        self.exit_code = 0

    def __call__(self, event: CrawlEvent) -> None:
        if event.kind == "error" and not self.exit_code:
            self.exit_code = event.exit_code or 1
        now = time.monotonic()
        if self.json_lines:
            record: dict[str, Any] = {"event": event.kind, "url": mask_password(event.url), "scheme": event.scheme,
                                      "depth": event.depth, "seed": event.seed, "bytes": event.size,
                                      "found": event.found}
            if event.error is not None:
                record["error"] = event.error
            out = json.dumps(record, ensure_ascii=False) + "\n"
            if now - self.last_json >= 1.0 and self.result is not None:
                self.last_json = now
                out += json.dumps({"event": "progress", **self.counts(self.result)}) + "\n"
            sys.stdout.write(out)
            sys.stdout.flush()  # a program reads them as they come
        if self.terminal and self.result is not None and now - self.last_line >= 0.2:
            self.last_line = now
            r = self.result
            sys.stderr.write(f"\ranyurl: {r.fetched} fetched, {r.listed} listed, {max(r.pending, 0)} pending, "
                             f"{r.errors} errors, {human_size(r.bytes)}, {self.rate(r):.1f}/s\x1b[K")
            sys.stderr.flush()

    def rate(self, r: CrawlResult) -> float:
        n = r.fetched + r.listed + r.errors + r.skipped
        seconds = time.monotonic() - self.started
        return n / seconds if seconds > 0 else 0.0

    def counts(self, r: CrawlResult) -> dict[str, Any]:
        return {"fetched": r.fetched, "listed": r.listed, "errors": r.errors, "skipped": r.skipped,
                "bytes": r.bytes, "pending": max(r.pending, 0), "rate": round(self.rate(r), 2),
                "seconds": round(time.monotonic() - self.started, 3), "by_scheme": r.by_scheme}

    def done(self) -> None:
        if self.terminal and self.last_line:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def summary(r: CrawlResult, rate: float) -> str:
    """The last line of a crawl."""
    schemes = ", ".join(f"{s} {v['fetched'] + v['listed']}" + (f" ({v['errors']} errors)" if v["errors"] else "")
                        for s, v in sorted(r.by_scheme.items()))
    line = (f"{r.fetched} fetched ({human_size(r.bytes)}), {r.listed} listed, {r.errors} errors, "
            f"{r.skipped} disallowed by robots.txt, {max(r.pending, 0)} pending, in {r.seconds:.2f} s "
            f"({rate:.1f}/s)")
    if schemes:
        line += f"; {schemes}"
    t = r.totals
    if t is not None and (t.fetched != r.fetched + r.listed or t.errors != r.errors):
        line += f"; with the runs before: {t.fetched} fetched, {t.errors} errors"
    return line


async def cmd_crawl(args: argparse.Namespace, client: Client, rep: Reporter) -> int:
    """``anyurl crawl SEED... -d DIR``: a summary at the end; exit code that of the first error."""
    from ..transfer.crawl import crawl

    try:
        terminal = not args.quiet and not args.json_lines and sys.stderr.isatty()
    except (AttributeError, ValueError):
        terminal = False
    progress = _Progress(terminal, args.json_lines)
    seeds = [client.parse(s) for s in args.seeds]
    job = crawl(client, seeds, dest=args.dir, state=args.state, max_depth=args.max_depth,
                same_host=args.same_host, cross_scheme=args.cross_scheme, under_seed=args.under_seed,
                per_host=args.per_host, parallel=args.parallel, delay=args.delay, robots=args.robots,
                requisites=args.requisites, on_event=progress, live=lambda r: setattr(progress, "result", r))
    try:
        result = await with_deadline(args.max_time, job, seeds[0])
    except asyncio.CancelledError:
        progress.done()
        if progress.result is not None:
            r = progress.result
            r.seconds = time.monotonic() - progress.started
            rep.info("stopped: " + summary(r, progress.rate(r))
                     + ("; run the same command again to continue" if args.state else ""))
        raise
    progress.done()
    for url, error in result.first_errors[:20]:
        rep.info(f"{mask_password(url)}: {error}")
    rate = result.rate
    if args.json_lines:
        sys.stdout.write(json.dumps({"event": "summary", **progress.counts(result), "rate": round(rate, 2),
                                     "seconds": round(result.seconds, 3)}) + "\n")
        sys.stdout.flush()
    rep.info("crawled " + ", ".join(mask_password(str(s)) for s in seeds[:3]) + (" ..." if len(seeds) > 3 else "")
             + (f" to {args.dir}" if args.dir else "") + ": " + summary(result, rate))
    return progress.exit_code if result.errors else 0

"""``anyurl ls``: a directory-like resource's entries, printed as they arrive."""

from __future__ import annotations

import sys
import time

from ..errors import AnyURLError, mask_password
from .exits import EXIT_NOT_DIRECTORY
from .output import Reporter, WritingStdout, printable_text, to_json
from .session import with_deadline

TYPE_CHECKING = False  # not typing's: importing typing costs start-up time (mypy knows this idiom)
if TYPE_CHECKING:
    import argparse

    from ..client import Client
    from ..response import Entry


# -- ls ---------------------------------------------------------------------------


def _cell(value: object) -> str:
    from datetime import datetime

    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.replace(microsecond=0).isoformat(sep=" ")
    return printable_text(value)


# meta keys that only repeat what the url column shows
_META_IN_URL = {"selector", "host", "port"}


def _meta_text(entry: Entry) -> str:
    items = [(k, v) for k, v in entry.meta.items() if not (entry.url and k in _META_IN_URL)]
    return " ".join(f"{k}={printable_text(v)}" for k, v in items)


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
            batch: list[Entry] = []
            with WritingStdout(u):
                last = time.monotonic()
                try:
                    async for e in stream:
                        batch.append(e)
                        if len(batch) >= _LS_BATCH or time.monotonic() - last >= _LS_FLUSH_SECONDS:
                            printer.add(batch)
                            batch = []
                            last = time.monotonic()
                except BaseException as exc:
                    # the listing failed part-way (a server's error, --max-time, SIGTERM): what
                    # came is printed and --json's array closed, so stdout stays valid; the
                    # error follows on stderr with its exit code. (A plain OSError is stdout's
                    # own: nothing more is written.)
                    if isinstance(exc, AnyURLError) or not isinstance(exc, OSError):
                        printer.end_early(batch)
                    raise
                printer.add(batch)
                printer.close()
            return printer.count

    count = await with_deadline(args.max_time, listing(), u)
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
                item = " " + to_json(e.as_dict(), indent=1).replace("\n", "\n ")
                out.append(("[\n" if self.count == 0 else ",\n") + item)
                self.count += 1
        elif self.mode == "json-lines":
            out.extend(to_json(e.as_dict()) + "\n" for e in entries)
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

    def end_early(self, entries: list[Entry]) -> None:
        """The listing failed: print *entries* (what came since the last batch) and close."""
        try:
            self.add(entries)
            self.close()
        except OSError:
            pass  # standard output is gone too: the listing's error is the one to report

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

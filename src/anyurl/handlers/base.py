"""The interface every scheme handler implements, and helpers they share."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, ClassVar

from ..errors import ConnectError, FetchTimeout, NotRetrievable, ProtocolError, UnsafeURL
from ..response import Body, Entry
from ..urls import URL

if TYPE_CHECKING:
    from ..client import Client

__all__ = ["Handler", "bounded_readline", "open_connection", "prime_allocator", "refuse_controls", "render_entries"]


class Handler:
    """A scheme driver. One instance per Client, so it may keep connection pools.

    Subclasses set ``schemes`` and override what their scheme supports.
    ``open`` returns a streaming :class:`Body`; a directory-like resource sets
    ``Body.entries``.
    """

    schemes: ClassVar[tuple[str, ...]] = ()

    def __init__(self, client: Client) -> None:
        self.client = client

    async def open(self, url: URL, *, offset: int = 0, **options: Any) -> Body:
        """Open *url* for streaming from byte *offset*."""
        raise NotRetrievable(f"{url.scheme} URLs designate no data object", url=url)

    async def upload(self, url: URL, source: Any, **options: Any) -> None:
        """Store *source* (bytes or a path) at *url*."""
        raise NotRetrievable(f"{url.scheme} URLs cannot be written to", url=url)

    async def connect(self, url: URL, **options: Any) -> Any:
        """Open an interactive session (telnet)."""
        raise NotRetrievable(f"{url.scheme} URLs do not designate a session", url=url)

    async def send_mail(self, url: URL, **options: Any) -> Any:
        """Send a message (mailto)."""
        raise NotRetrievable(f"{url.scheme} URLs do not designate a mailbox", url=url)

    async def aclose(self) -> None:
        """Close pooled connections."""


def refuse_controls(url: object, what: str, value: str | None, chars: str = "\r\n\0") -> None:
    """Raise UnsafeURL if decoded *value* holds any of *chars* (before any byte is sent)."""
    if value is None:
        return
    bad = [c for c in chars if c in value]
    if bad:
        names = ", ".join({"\r": "CR", "\n": "LF", "\0": "NUL", "\t": "TAB"}.get(c, repr(c)) for c in bad)
        raise UnsafeURL(f"{what} contains {names} after decoding; refusing to send it", url=url)


async def open_connection(
    url: object, host: str, port: int, *,
    timeout: float | None,  # noqa: ASYNC109 - translated to FetchTimeout here, for every handler
    **kwargs: Any,
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """asyncio.open_connection with errors translated to the anyurl tree."""
    try:
        async with asyncio.timeout(timeout):
            return await asyncio.open_connection(host, port, **kwargs)
    except TimeoutError as exc:
        raise FetchTimeout(f"connecting to {host}:{port} timed out", url=url) from exc
    except OSError as exc:
        raise ConnectError(f"cannot connect to {host}:{port}: {exc.strerror or exc}", url=url) from exc


async def bounded_readline(reader: asyncio.StreamReader, limit: int, url: object,
                           timeout: float | None = None) -> bytes:  # noqa: ASYNC109 - as above
    """Read one line ending in LF, at most *limit* bytes; b"" at EOF."""
    try:
        async with asyncio.timeout(timeout):
            line = await reader.readuntil(b"\n")
    except asyncio.IncompleteReadError as exc:
        return exc.partial
    except asyncio.LimitOverrunError as exc:
        raise ProtocolError(f"reply line longer than {limit} bytes", url=url) from exc
    except TimeoutError as exc:
        raise FetchTimeout("timed out waiting for a reply line", url=url) from exc
    if len(line) > limit:
        raise ProtocolError(f"reply line longer than {limit} bytes", url=url)
    return line


def render_entries(entries: list[Entry]) -> bytes:
    """A plain-text listing of *entries*, one per line, for ``get`` on a directory."""
    lines = []
    for e in entries:
        size = "" if e.size is None else str(e.size)
        lines.append(f"{e.kind:<9} {size:>12}  {e.name}" + (f"  {e.url}" if e.url else ""))
    return ("\n".join(lines) + "\n").encode("utf-8", "surrogateescape") if lines else b""


async def aiter_bytes(data: bytes) -> AsyncIterator[bytes]:
    """An async iterator yielding *data* once (when not empty)."""
    if data:
        yield data


_primed = 0


def prime_allocator(chunk_size: int) -> None:
    """Free one large block so glibc's malloc serves chunk-sized buffers from its heap.

    glibc maps every allocation above its (dynamic) mmap threshold, 128 KiB at
    start, and unmaps it on free: each 1 MiB chunk of a transfer then costs
    ~256 page faults. Freeing one mapped block raises the threshold to its size
    (glibc's documented adjustment, capped at 32 MiB), after which chunk
    buffers are reused from the heap. In bench/bench_http.py this cut the page
    faults of a 1 GiB download from 30,000-290,000 to ~8,500 and made its CPU
    time steady. Other allocators just see one short-lived allocation.
    """
    global _primed
    size = min(32 << 20, max(4 << 20, 4 * chunk_size))
    if size > _primed:
        _primed = size
        block = bytes(size)  # calloc: mapped, never touched
        del block

"""The Client a command runs with, made from its options, and the ``--max-time`` deadline."""

from __future__ import annotations

from .. import errors
from ..errors import AnyURLError
from .prompts import Prompter

TYPE_CHECKING = False  # not typing's: importing typing costs start-up time (mypy knows this idiom)
if TYPE_CHECKING:
    import argparse
    import asyncio
    from collections.abc import Awaitable
    from typing import Any

    from ..client import Client
else:
    from .lazy import OnFirstUse

    asyncio = OnFirstUse("asyncio")


def stream_worker_count(turns: int) -> int:
    """get's workers in all once a multiplexed origin is met, for *turns* plain turns."""
    from ..transfer.batch import stream_workers

    return stream_workers(turns)


def make_client(args: argparse.Namespace, prompter: Prompter, archive: Any = None) -> Client:
    """The command's Client; *archive*: the WARC writer every body captured goes to (--warc)."""
    from ..client import Client
    from ..settings import Limits, Retry, Timeouts

    defaults = Timeouts()
    timeouts = Timeouts(
        connect=args.connect_timeout or defaults.connect,
        read=args.timeout or defaults.read,
        total=args.max_time,
    )
    # --parallel N: N connections to a server, however many transfers run on them at once
    # (HTTP/2 streams, pipelined GETs); a mirror also lists directories while N files download
    extra = 2 if getattr(args, "command", None) == "mirror" else 0
    parallel = getattr(args, "parallel", 0) or 0
    per_host = parallel + extra if parallel else Limits().per_host
    retries = getattr(args, "retry", 0) or 0
    delay = getattr(args, "retry_delay", None)
    retry = Retry(attempts=1 + retries, backoff=1.0 if delay is None else delay)
    http = None
    pipeline = getattr(args, "pipeline", None)
    if getattr(args, "http1_1", False) or pipeline is not None:
        from ..handlers.http import HTTPOptions  # (only then: start-up)

        http = HTTPOptions(http2=not getattr(args, "http1_1", False),
                           **({} if pipeline is None else {"pipeline": pipeline}))
    client = Client(
        timeouts=timeouts,
        # requests in flight: what get's workers run (HTTP/2 puts many on one connection; the
        # server's SETTINGS_MAX_CONCURRENT_STREAMS still caps each connection's streams)
        limits=Limits(per_host=per_host,
                      per_host_requests=max(Limits().per_host_requests, stream_worker_count(per_host))),
        http=http,
        retry=retry,
        anonymous_email=getattr(args, "email", None),
        news_server=getattr(args, "news_server", None),
        user_agent=getattr(args, "user_agent", None),
        proxy=getattr(args, "proxy", None),
        no_proxy=getattr(args, "noproxy", None),
        password_callback=prompter.password,
        form_callback=prompter.form,
        on_capture=None if archive is None else archive.captured,
    )
    prompter.client = client
    return client


async def with_deadline(seconds: float | None, coro: Awaitable[Any], url: object) -> Any:
    if seconds is None:
        return await coro
    try:
        async with asyncio.timeout(seconds):
            return await coro
    except TimeoutError as exc:
        if isinstance(exc, AnyURLError):
            raise
        raise errors.FetchTimeout(f"transfer took longer than --max-time {seconds:g} s", url=url) from exc

"""The Client a command runs with, made from its options, and the ``--max-time`` deadline."""

from __future__ import annotations

import sys

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
    if getattr(args, "command", None) == "crawl":  # politeness: a server's connections are the crawl's per-host
        per_host = min(per_host, getattr(args, "per_host", per_host) or per_host)
    retries = getattr(args, "retry", 0) or 0
    delay = getattr(args, "retry_delay", None)
    retry = Retry(attempts=1 + retries, backoff=1.0 if delay is None else delay)
    options = scheme_options(args)
    limits = Limits(per_host=per_host,
                    per_host_requests=max(Limits().per_host_requests, stream_worker_count(per_host)))
    rate = getattr(args, "limit_rate", None)
    if rate:  # --limit-rate: reads of a fraction of a second's worth, so the pace is even
        limits = limits.__replace__(chunk_size=max(4096, min(limits.chunk_size, rate // 4)))
    client = Client(
        timeouts=timeouts,
        # requests in flight: what get's workers run (HTTP/2 puts many on one connection; the
        # server's SETTINGS_MAX_CONCURRENT_STREAMS still caps each connection's streams)
        limits=limits,
        retry=retry,
        anonymous_email=getattr(args, "email", None),
        news_server=getattr(args, "news_server", None),
        user_agent=getattr(args, "user_agent", None),
        proxy=getattr(args, "proxy", None),
        no_proxy=getattr(args, "noproxy", None),
        password_callback=prompter.password,
        form_callback=prompter.form,
        on_capture=None if archive is None else archive.captured,
        **options,
    )
    prompter.client = client
    return client


def scheme_options(args: argparse.Namespace) -> dict[str, Any]:
    """The Client's scheme options from --http1.1, --http3, --no-http3, --pipeline, -H and -k (none: the defaults,
    no options class imported)."""
    http: dict[str, Any] = {}
    if getattr(args, "http1_1", False):
        http["http2"] = False
    if getattr(args, "http3", False):
        http["http3"] = True
    if getattr(args, "no_http3", False):
        http["http3"] = False
    pipeline = getattr(args, "pipeline", None)
    if pipeline is not None:
        http["pipeline"] = pipeline
    headers = getattr(args, "header", None)
    if headers:
        http["headers"] = dict(headers)  # (a name given twice: the last)
    insecure = bool(getattr(args, "insecure", False))
    if insecure:
        http["verify"] = False
        sys.stderr.write("anyurl: warning: --insecure: TLS certificates and host names are not checked "
                         "(https, ftps, nntps): anyone on the way can read and change what is sent\n")
    if not http and not insecure:
        return {}
    from ..settings import FTPOptions, HTTPOptions, NewsOptions

    out: dict[str, Any] = {"http": HTTPOptions(**http)} if http else {}
    if insecure:
        out["ftp"] = FTPOptions(verify=False)
        out["news"] = NewsOptions(verify=False)
    return out


def login_url(text: str, login: str | None) -> str:
    """*text* with -u USER[:PASSWORD] as its user and password, for an ftp or http(s) URL that
    names no user (RFC 1738 section 3.1: the user and password in the URL, each encoded)."""
    if not login:
        return text
    scheme, sep, rest = text.partition("://")
    if not sep or scheme.lower() not in ("ftp", "ftps", "http", "https"):
        return text
    end = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    if "@" in rest[:end]:
        return text  # the URL's own user wins
    from urllib.parse import quote  # (only with -u)

    user, colon, password = login.partition(":")
    info = quote(user, safe="") + (":" + quote(password, safe="") if colon else "")
    return f"{scheme}://{info}@{rest}"


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

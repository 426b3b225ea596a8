"""The CLI's early connection: the first URL's TCP connect started before asyncio is imported.

``anyurl get gopher://host/9/big`` spends ~80 ms importing asyncio, uvloop and
anyurl's handlers before its first connect. :func:`start` (called by
:func:`anyurl.cli.commands.main` once the command line is read) begins a non-blocking
connect to the first URL's host:port, so the handshake, and a server that
starts a process per connection, overlap the import (``get --parallel N`` of plain http
URLs begins the N connections the handler opens at once to that server). The connection layer
then adopts that socket for the first connection to exactly that
(scheme, host, port) (:func:`anyurl.net.connect.connect_target`, through :mod:`anyurl.net.handoff`); the
handlers speak their protocol on it as on any other. Nothing is sent early.

Started only for a scheme whose handler connects straight to the URL's host
(gopher, http, https, ftp, nntp; for https the TCP part: TLS begins on the socket
once asyncio runs, ALPN picking HTTP/2 or HTTP/1.1), never when a proxy applies or the URL
does not parse. A literal IP address is connected at once; a name is
resolved and connected in a daemon thread, and when that thread has not
finished by the time the handler connects, its result is dropped and the
handler connects as usual (no wait on a resolver with no deadline). A failed
early connect is dropped the same way, so the error the user sees comes from
the usual path. :func:`discard` closes a socket nobody took.
``ANYURL_EARLY_CONNECT=0`` turns it off.

This module imports neither asyncio nor the handlers: it runs before them.
"""

from __future__ import annotations

import os

from ..net.early import Early, target, turned_off
from ..schemes import EARLY_CONNECT, PROXIED

TYPE_CHECKING = False  # not typing's: importing typing costs start-up time
if TYPE_CHECKING:
    import socket
    from typing import Any

__all__ = ["discard", "start", "take"]

#: the schemes whose handler opens a plain TCP connection to the URL's own host:port
SCHEMES = EARLY_CONNECT
_PROXIED = PROXIED
# as anyurl.client._PROXY_VARIABLES (that module imports asyncio; a unit test keeps them equal)
_PROXY_VARIABLES = ("http_proxy", "https_proxy", "HTTPS_PROXY", "ftp_proxy", "FTP_PROXY",
                    "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY")


_pending: Early | None = None


def _proxied(scheme: str, host: str, port: int, proxy: str | None, no_proxy: str | None) -> bool:
    """True when the Client could send this URL through a proxy (the CLI's Client trusts the environment)."""
    if scheme not in _PROXIED or proxy == "":
        return False
    if proxy is None:
        if not any(os.environ.get(name) for name in _PROXY_VARIABLES if "no_proxy" not in name.lower()):
            return False  # the common case: no proxy variable at all
    from ..protocols.proxy import select_proxy

    env = {name: value for name in _PROXY_VARIABLES if (value := os.environ.get(name)) is not None}
    try:
        return select_proxy(scheme, host, port, proxy=proxy, no_proxy=no_proxy, env=env) is not None
    except ValueError:
        return True  # a bad proxy setting: the Client reports it; connect nothing


def _target(args: Any) -> tuple[str, str, int] | None:
    """(scheme, host, port) to connect early for the command line *args*, or None."""
    if turned_off():
        return None
    if args.command == "get":
        urls = args.urls
    elif args.command in ("ls", "stat"):
        urls = [args.url]
    else:
        return None
    if not urls or getattr(args, "input_file", None):
        return None
    text = urls[0]
    if not isinstance(text, str) or text.partition(":")[0].lower() not in SCHEMES:
        return None
    from ..urls import parse

    try:
        url = parse(text)
    except ValueError:
        return None
    key = target(url, text)  # (refused before any I/O: none here either)
    if key is None or _proxied(*key, args.proxy, args.noproxy):
        return None
    return key


def _count(args: Any, key: tuple[str, str, int]) -> int:
    """How many connections to begin: for ``get --parallel N`` of plain http URLs, as many as
    the handler opens at once to the first URL's server (N, or fewer when fewer URLs name
    it): they all take their handshake during the imports, not the first only."""
    parallel = getattr(args, "parallel", 0) or 0
    if key[0] != "http" or args.command != "get" or not isinstance(parallel, int) or parallel < 2:
        return 1
    urls = args.urls
    first = urls[0]
    end = first.find("/", first.find("//") + 2)
    origin = first if end < 0 else first[:end + 1]  # (as written: a URL written otherwise is not counted)
    n = 0
    for text in urls:
        if isinstance(text, str) and (text == origin or text.startswith(origin)):
            n += 1
            if n >= parallel:
                break
    return max(1, n)


def start(args: Any) -> None:
    """Begin the early connect for the command line *args* (argparse's namespace), if it applies."""
    global _pending
    discard()
    try:
        key = _target(args)
    except Exception:  # never a reason for the command to fail: the usual path reports it
        key = None
    if key is None:
        return
    from ..net import handoff  # a few lines, no asyncio: the connection layer asks it for the socket

    handoff.set_taker(take)
    early = Early(key, _count(args, key))
    early.start()
    _pending = early


def take(scheme: str, host: str, port: int) -> socket.socket | None:
    """The early socket for (scheme, host, port), once: connected, still connecting, or failed
    (the caller checks). None when there is none, it is for another target, or not ready."""
    global _pending
    early = _pending
    if early is None:
        return None
    sock, more = early.take(scheme, host, port)
    if not more:
        _pending = None
        _unregister()
    return sock


def _unregister() -> None:
    """No taker once nothing is left to take (a batch may then begin connections of its own)."""
    from ..net import handoff

    if handoff.taker() is take:
        handoff.set_taker(None)


def discard() -> None:
    """Close the early socket if nobody took it (the end of the command)."""
    global _pending
    early, _pending = _pending, None
    if early is not None:
        _unregister()
        early.close()

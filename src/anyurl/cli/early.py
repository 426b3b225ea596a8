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
(gopher, http, https, ftp, nntp), never when a proxy applies or the URL does not parse. For
https the TLS handshake runs early too, in a thread (:class:`anyurl.net.tls.EarlyTLS`: the
context the handler will ask for, made there, the ClientHello sent as soon as the connect is
up), so the import of asyncio and the handlers hides a round trip more and the trust store's
loading; the handler adopts the session, ALPN having picked HTTP/2 or HTTP/1.1
(``ANYURL_EARLY_TLS=0``: the TCP connect only, TLS begun once asyncio runs). A literal IP address is connected at once; a name is
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
import socket
import threading

from ..net.early import Early, literal_family, target
from ..schemes import EARLY_CONNECT, PROXIED

TYPE_CHECKING = False  # not typing's: importing typing costs start-up time
if TYPE_CHECKING:
    from typing import Any

    from ..net.tls import EarlyTLS

__all__ = ["discard", "start", "take", "take_tls"]

#: the schemes whose handler opens a plain TCP connection to the URL's own host:port
SCHEMES = EARLY_CONNECT
_PROXIED = PROXIED
#: the early TLS handshake's own deadline (the handler waits for it within its connect timeout)
TLS_SECONDS = 30.0
# as anyurl.client._PROXY_VARIABLES (that module imports asyncio; a unit test keeps them equal)
_PROXY_VARIABLES = ("http_proxy", "https_proxy", "HTTPS_PROXY", "ftp_proxy", "FTP_PROXY",
                    "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY")


class _Early(Early):
    """The early connections to one target (:class:`anyurl.net.early.Early`), or for https
    the early TLS handshake on one of them."""

    __slots__ = ("tls",)

    def __init__(self, key: tuple[str, str, int], count: int = 1, tls: EarlyTLS | None = None) -> None:
        super().__init__(key, count)
        self.tls = tls  # https: the handshake, run on the one socket (never in socks)

    def resolve(self) -> None:
        """The thread's work: getaddrinfo, then a connect to the first address (as asyncio tries first)."""
        tls = self.tls
        try:
            host, port = self.key[1], self.key[2]
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            if infos:
                family, _, _, _, address = infos[0]
                if tls is None:
                    self.connect(family, address)
                else:
                    sock = _begin(family, address)
                    with self.lock:
                        self.done = True  # resolved: the taker may wait for the handshake (it has deadlines)
                    tls.run(sock, TLS_SECONDS)
        except (OSError, UnicodeError):
            pass  # the handler's own connect reports it
        finally:
            if tls is not None and not tls.done:
                tls.run(None, 0)  # (no address: done, failed)
            self.finish()


_pending: _Early | None = None


_literal = literal_family


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
    if _off("ANYURL_EARLY_CONNECT"):
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
    key = target(url, text)  # (refused by the handler before any I/O: none here either)
    if key is None or _proxied(*key, args.proxy, args.noproxy):
        return None
    if key[0] == "https" and getattr(args, "http3", False):
        return None  # --http3 goes over QUIC first: a TCP connection and TLS handshake would be spent
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

    handoff.set_taker(take, take_tls)
    early = _Early(key, _count(args, key))
    family = _literal(key[1])
    if key[0] == "https" and _off("ANYURL_EARLY_TLS") is False:
        from ..net.tls import EarlyTLS  # (ssl: asyncio imports it anyway)

        alpn = () if getattr(args, "http1_1", False) else ("h2", "http/1.1")  # as HTTPHandler's contexts
        early.tls = EarlyTLS(key[1], not getattr(args, "insecure", False), alpn)
        if family is not None:
            sock = _begin(family, (key[1], key[2]))
            early.done = True
            threading.Thread(target=early.tls.run, args=(sock, TLS_SECONDS), name="anyurl-early-tls",
                             daemon=True).start()
            _pending = early
            return
    if family is not None:
        early.connect(family, (key[1], key[2]))
        early.done = True
    else:
        threading.Thread(target=early.resolve, name="anyurl-early-connect", daemon=True).start()
    _pending = early


def _begin(family: int, address: Any) -> socket.socket | None:
    """A non-blocking connect to *address* begun (None: it could not begin)."""
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setblocking(False)
        sock.connect_ex(address)
    except OSError:
        sock.close()
        return None
    return sock


def _off(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("0", "no", "off", "false")


def take(scheme: str, host: str, port: int) -> socket.socket | None:
    """The early socket for (scheme, host, port), once: connected, still connecting, or failed
    (the caller checks). None when there is none, it is for another target, or not ready."""
    global _pending
    early = _pending
    if early is None or early.key != (scheme, host, port):
        return None
    with early.lock:
        if not early.done:  # still resolving: no wait on a resolver without a deadline
            early.abandoned = True
            _pending = None
            if early.tls is not None:
                early.tls.abandon()
            return None
        if early.tls is not None:
            return None  # (take_tls's)
        sock = early.socks.pop(0) if early.socks else None
        if not early.socks:
            _pending = None
    return sock


def take_tls(scheme: str, host: str, port: int) -> EarlyTLS | None:
    """The early TLS handshake with (scheme, host, port), once, maybe still running (the caller
    waits for it within its deadline). None when there is none, it is for another target, or
    the name is still being resolved (then it is dropped: no wait on a resolver)."""
    global _pending
    early = _pending
    if early is None or early.tls is None or early.key != (scheme, host, port):
        return None
    with early.lock:
        _pending = None
        if not early.done:
            early.abandoned = True
            early.tls.abandon()
            return None
    return early.tls


def discard() -> None:
    """Close the early socket if nobody took it (the end of the command)."""
    global _pending
    early, _pending = _pending, None
    if early is None:
        return
    with early.lock:
        early.abandoned = True
        socks, early.socks = early.socks, []
    for sock in socks:
        sock.close()
    if early.tls is not None:
        early.tls.abandon()

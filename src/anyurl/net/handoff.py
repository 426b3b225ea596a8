"""Where a socket connected before the event loop started is handed to the connection layer.

The CLI begins the first URL's connect while asyncio is still importing
(:mod:`anyurl.cli.early`), and a batch its first origin's before the driver is loaded
(:mod:`anyurl.transfer.batch`, :mod:`anyurl.net.early`); each registers a *taker* here; :func:`anyurl.net.connect.early_socket`
asks it (for https, :func:`anyurl.net.connect.early_tls` asks for the handshake begun on it). Without a taker, nothing is handed over.
This module imports nothing heavy, so the CLI can set the hook before asyncio is loaded.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: importing typing costs start-up time
if TYPE_CHECKING:
    import socket
    from collections.abc import Callable

    from .tls import EarlyTLS

    Taker = Callable[[str, str, int], "socket.socket | None"]
    TLSTaker = Callable[[str, str, int], "EarlyTLS | None"]

_taker: Taker | None = None
_tls_taker: TLSTaker | None = None


def set_taker(taker: Taker | None, tls_taker: TLSTaker | None = None) -> None:
    """Register the functions that hand over an early socket, and an early TLS handshake, for
    (scheme, host, port), once."""
    global _taker, _tls_taker
    _taker = taker
    _tls_taker = tls_taker


def taker() -> Taker | None:
    """The function registered (the CLI's, or a batch's while it starts), or None."""
    return _taker


def take(scheme: str, host: str, port: int) -> socket.socket | None:
    """The socket begun early for exactly (scheme, host, port), or None."""
    return _taker(scheme, host, port) if _taker is not None else None


def take_tls(scheme: str, host: str, port: int) -> EarlyTLS | None:
    """The TLS handshake begun early with exactly (scheme, host, port) (maybe still running), or None."""
    return _tls_taker(scheme, host, port) if _tls_taker is not None else None

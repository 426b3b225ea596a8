"""The one place anyurl makes a TLS client context.

Every scheme's options spell TLS the same way: ``verify`` (check the server's certificate
and name, default on), ``cafile`` (a PEM bundle of CAs to trust instead of the system's)
and ``ssl_context`` (a context of the caller's own, which wins over both). Drivers ask
:func:`client_context`; a context is made once per (verify, cafile) and shared, since
loading a trust store costs milliseconds and a context is safe to share.
"""

from __future__ import annotations

import ssl

from ..errors import ConfigurationError

__all__ = ["client_context"]

_made: dict[tuple[bool, str | None, tuple[str, ...]], ssl.SSLContext] = {}


def client_context(verify: bool = True, cafile: str | None = None,
                   ssl_context: ssl.SSLContext | None = None, alpn: tuple[str, ...] = ()) -> ssl.SSLContext:
    """The TLS client context for these options (ConfigurationError for a cafile that won't load).
    *alpn*: the protocols a context made here offers (HTTP/2's "h2"); a caller's own
    *ssl_context* is returned as it is, never changed."""
    if ssl_context is not None:
        return ssl_context
    key = (bool(verify), cafile, alpn)
    ctx = _made.get(key)
    if ctx is None:
        try:
            ctx = ssl.create_default_context(cafile=cafile)
        except (OSError, ssl.SSLError) as exc:
            raise ConfigurationError(f"cannot load cafile {cafile}: {exc}") from exc
        if not verify:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        if alpn:
            ctx.set_alpn_protocols(list(alpn))
        _made[key] = ctx
    return ctx

"""Which proxy a URL goes through (pure: no I/O, the environment is passed in).

The rules are the ones curl and Lynx follow:

- ``Client(proxy=...)`` serves every proxied scheme (http, https, ftp); an
  empty string means "no proxy", also ignoring the environment.
- Otherwise, when the Client trusts the environment: ``<scheme>_proxy`` or
  ``<SCHEME>_PROXY``, then ``all_proxy``/``ALL_PROXY``. ``HTTP_PROXY`` in
  upper case is ignored for http: a CGI program receives a request's
  ``Proxy:`` header under that name ("httpoxy").
- ``no_proxy`` (the Client's, else ``no_proxy``/``NO_PROXY``) is a comma or
  space separated list: ``*`` (everything), host names that also match their
  subdomains (``example.org`` and ``.example.org`` both match
  ``www.example.org``), IP addresses or CIDR blocks (``10.0.0.0/8``), each
  optionally with ``:port``.
- A proxy given without a scheme is an http:// proxy.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from urllib.parse import urlsplit

from ..schemes import PROXIED

__all__ = ["bypasses", "env_proxy", "normalize_proxy", "select_proxy"]

PROXIED_SCHEMES = PROXIED  # the schemes an HTTP proxy may carry (anyurl.schemes)


def env_proxy(scheme: str, env: Mapping[str, str]) -> str | None:
    """The proxy the environment names for *scheme*, or None."""
    names = [f"{scheme}_proxy"]
    if scheme != "http":
        names.append(f"{scheme.upper()}_PROXY")
    names += ["all_proxy", "ALL_PROXY"]
    for name in names:
        value = env.get(name, "").strip()
        if value:
            return value
    return None


def _split_port(entry: str) -> tuple[str, int | None]:
    if entry.startswith("["):  # [v6]:port
        host, _, rest = entry[1:].partition("]")
        return host, int(rest[1:]) if rest.startswith(":") and rest[1:].isdigit() else None
    if entry.count(":") == 1:
        host, _, port = entry.partition(":")
        if port.isdigit():
            return host, int(port)
    return entry, None


def bypasses(host: str, port: int | None, no_proxy: str) -> bool:
    """True when *host* (and *port*) matches an entry of the *no_proxy* list."""
    host = host.strip("[]").lower().rstrip(".")
    try:
        addr: ipaddress.IPv4Address | ipaddress.IPv6Address | None = ipaddress.ip_address(host)
    except ValueError:
        addr = None
    for raw in no_proxy.replace(",", " ").split():
        entry = raw.strip().lower()
        if entry == "*":
            return True
        if "/" in entry:  # a CIDR block
            try:
                net = ipaddress.ip_network(entry, strict=False)
            except ValueError:
                continue
            if addr is not None and addr.version == net.version and addr in net:
                return True
            continue
        name, want_port = _split_port(entry)
        if want_port is not None and want_port != port:
            continue
        name = name.lstrip("*").lstrip(".").rstrip(".")
        if not name:
            continue
        if addr is not None:
            try:
                if ipaddress.ip_address(name) == addr:
                    return True
            except ValueError:
                pass
            continue
        if host == name or host.endswith("." + name):
            return True
    return False


def normalize_proxy(text: str) -> str:
    """*text* as a proxy URL ``http://[user:password@]host:port``; ValueError if unusable."""
    value = text.strip()
    if "://" not in value:
        value = "http://" + value
    parts = urlsplit(value)
    # error messages name the proxy without its password
    text = value.replace(parts.netloc, parts.netloc.rpartition("@")[2], 1) if "@" in parts.netloc else value
    if parts.scheme.lower() not in ("http", "https"):
        raise ValueError(f"proxy {text!r}: only http:// and https:// proxies are supported")
    try:
        port = parts.port
    except ValueError:
        raise ValueError(f"proxy {text!r}: bad port") from None
    if not parts.hostname:
        raise ValueError(f"proxy {text!r}: no host")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ValueError(f"proxy {text!r}: a proxy URL has no path or query")
    if any(c in value for c in "\r\n\0 \t"):
        raise ValueError(f"proxy {text!r}: control characters or spaces")
    del port
    return value.rstrip("/")


def select_proxy(scheme: str, host: str, port: int | None, *, proxy: str | None, no_proxy: str | None,
                 env: Mapping[str, str] | None) -> str | None:
    """The proxy URL for a request, or None to connect directly.

    *env* is the environment to read (None: the Client does not trust it).
    """
    if scheme not in PROXIED_SCHEMES:
        return None
    chosen = proxy if proxy is not None else (env_proxy(scheme, env) if env is not None else None)
    if not chosen:
        return None
    skip = no_proxy
    if skip is None and env is not None:
        skip = env.get("no_proxy") or env.get("NO_PROXY")
    if skip and bypasses(host, port, skip):
        return None
    return normalize_proxy(chosen)

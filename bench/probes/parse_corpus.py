"""A deterministic mixed corpus of valid URLs for the parse benchmark.

``corpus(n, seed)`` returns *n* URL strings drawn from every RFC 1738 scheme
(plus https, ftps and nntps), weighted towards http(s) and ftp as real link
lists are, with user info, ports, escapes, queries, typecodes and gopher
search strings mixed in. The same arguments always give the same list.

Run it to time ``anyurl.urls.parse`` against ``urllib.parse.urlsplit`` in
alternating rounds (``bench/suites/parse.py`` runs it as a benchmark group)::

    python -m bench.probes.parse_corpus [n [rounds]] [--json]
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable

__all__ = ["corpus"]

_WORDS = ("pub", "doc", "rfc", "www", "files", "src", "gopher", "archive", "images", "index.html",
          "readme.txt", "a%20b", "caf%C3%A9", "data.tar.gz", "v1.2", "x-y_z", "~user", "motd")
_TLDS = ("com", "org", "net", "edu", "dom", "example")


def _host(r: random.Random) -> str:
    k = r.random()
    if k < 0.1:
        return ".".join(str(r.randrange(1, 255)) for _ in range(4))
    if k < 0.12:
        return f"[2001:db8::{r.randrange(1, 0xFFFF):x}]"
    labels = [r.choice(("www", "ftp", "ds", "info", "host", "mirror", "news")) + str(r.randrange(100))
              for _ in range(r.randrange(1, 3))]
    return ".".join(labels) + "." + r.choice(_TLDS)


def _port(r: random.Random) -> str:
    return f":{r.randrange(1, 65536)}" if r.random() < 0.15 else ""


def _path(r: random.Random, lo: int = 0, hi: int = 5) -> str:
    return "/".join(r.choice(_WORDS) for _ in range(r.randrange(lo, hi)))


def _http(r: random.Random) -> str:
    scheme = "https" if r.random() < 0.5 else "http"
    url = f"{scheme}://{_host(r)}{_port(r)}/{_path(r)}"
    if r.random() < 0.4:
        url += "?" + "&".join(f"{r.choice(_WORDS)}={r.randrange(1000)}" for _ in range(r.randrange(1, 4)))
    if r.random() < 0.1:
        url += "#sec" + str(r.randrange(9))
    return url


def _ftp(r: random.Random) -> str:
    login = r.choice(("", "", "anonymous@", "user:secret@", "@", "foo:@"))
    url = f"{r.choice(('ftp', 'ftp', 'ftps'))}://{login}{_host(r)}{_port(r)}/{_path(r, 0, 6)}"
    if r.random() < 0.2:
        url += ";type=" + r.choice("aidAID")
    return url


def _gopher(r: random.Random) -> str:
    url = f"gopher://{_host(r)}{_port(r)}/{r.choice('0179h')}{_path(r)}"
    if r.random() < 0.3:
        url += "%09" + r.choice(_WORDS)
        if r.random() < 0.3:
            url += "%09+"
    return url


def _other(r: random.Random) -> str:
    k = r.randrange(8)
    if k == 0:
        return f"mailto:{r.choice(_WORDS[:6])}@{_host(r)}" + ("?subject=hi%20there" if r.random() < 0.3 else "")
    if k == 1:
        return r.choice(("news:*", "news:comp.infosystems.www.misc", f"news:{r.randrange(10**6)}$x@{_host(r)}"))
    if k == 2:
        return f"{r.choice(('nntp', 'nntps'))}://{_host(r)}{_port(r)}/comp.lang.python/{r.randrange(10**5)}"
    if k == 3:
        return f"telnet://{r.choice(('', 'guest@', 'u:p@'))}{_host(r)}{_port(r)}/"
    if k == 4:
        base = f"wais://{_host(r)}{_port(r)}/{r.choice(_WORDS)}"
        return base + r.choice(("", "?query+words", "/TEXT/" + r.choice(_WORDS)))
    if k == 5:
        return f"file://{r.choice(('', 'localhost', 'host.dom'))}/{_path(r, 1, 5)}"
    if k == 6:
        return f"prospero://{_host(r)}{_port(r)}//{_path(r, 1, 4)};OBJECT-VERSION={r.randrange(9)}"
    return f"x-{r.choice(_WORDS[:6])}:{_path(r, 1, 3)}"


_MAKERS: tuple[tuple[float, Callable[[random.Random], str]], ...] = (
    (0.55, _http), (0.80, _ftp), (0.88, _gopher), (1.0, _other),
)


def corpus(n: int = 100_000, seed: int = 1) -> list[str]:
    """*n* valid URLs of every scheme, the same list for the same (n, seed)."""
    r = random.Random(seed)
    out = []
    for _ in range(n):
        k = r.random()
        for limit, make in _MAKERS:
            if k < limit:
                out.append(make(r))
                break
    return out


def timings(n: int = 100_000, rounds: int = 7) -> list[tuple[float, float]]:
    """(parse seconds, urlsplit seconds) over the corpus of *n* URLs, per round;
    the two alternate which goes first from round to round."""
    import time
    from urllib.parse import urlsplit

    from anyurl.urls import parse

    urls = corpus(n)

    def timed(f: Callable[[str], object]) -> float:
        t0 = time.perf_counter()
        for u in urls:
            f(u)
        return time.perf_counter() - t0

    out = []
    for i in range(rounds):
        if i % 2:
            theirs = timed(urlsplit)
            ours = timed(parse)
        else:
            ours = timed(parse)
            theirs = timed(urlsplit)
        out.append((ours, theirs))
    return out


def _main() -> None:
    import json
    import statistics

    args = [a for a in sys.argv[1:] if a != "--json"]
    n = int(args[0]) if args else 100_000
    rounds = int(args[1]) if len(args) > 1 else 7
    res = timings(n, rounds)
    if "--json" in sys.argv:
        print(json.dumps(res))
        return
    ratios = [o / t for o, t in res]
    print(f"{n} URLs, {rounds} rounds: parse {statistics.median(o for o, _ in res):.3f}s, "
          f"urlsplit {statistics.median(t for _, t in res):.3f}s, parse time / urlsplit time "
          f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})")


if __name__ == "__main__":
    _main()

"""A deterministic mixed corpus of valid URLs for the parse benchmark.

``corpus(n, seed)`` returns *n* URL strings drawn from every RFC 1738 scheme
(plus https, ftps and nntps), weighted towards http(s) and ftp as real link
lists are, with user info, ports, escapes, queries, typecodes and gopher
search strings mixed in. The same arguments always give the same list.

Run it to time ``anyurl.urls.parse`` against ``urllib.parse.urlsplit``::

    python bench/parse_corpus.py [n] [--rounds R] [--wall]

Rounds alternate A/B/A/B (parse, then urlsplit, on the whole corpus) so a
change in machine load hits both alike; the report gives each side's median
and spread (min-max) and the median of the per-round ratios. Times are the
process's CPU time unless ``--wall`` is given (on a shared machine, CPU time
is much less noisy).
"""

from __future__ import annotations

import random
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


def _main() -> None:
    import argparse
    import statistics
    import time
    from urllib.parse import urlsplit

    from anyurl.urls import parse

    ap = argparse.ArgumentParser(description="anyurl.parse vs urllib.parse.urlsplit, interleaved rounds")
    ap.add_argument("n", type=int, nargs="?", default=100_000, help="corpus size (default 100000)")
    ap.add_argument("--rounds", type=int, default=7, help="A/B rounds (default 7)")
    ap.add_argument("--wall", action="store_true", help="wall-clock time instead of CPU time")
    args = ap.parse_args()
    clock = time.perf_counter if args.wall else time.process_time
    urls = corpus(args.n)

    def run(fn: Callable[[str], object]) -> float:
        start = clock()
        for u in urls:
            fn(u)
        return clock() - start

    run(parse)      # warm-up: compile the patterns, fill caches
    run(urlsplit)
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(args.rounds):
        ours.append(run(parse))
        theirs.append(run(urlsplit))
    ratios = [a / b for a, b in zip(ours, theirs, strict=True)]

    def show(name: str, times: list[float]) -> str:
        per = 1e6 / args.n
        return (f"{name:9s} median {statistics.median(times):.3f}s ({statistics.median(times) * per:.2f} us/URL), "
                f"spread {min(times):.3f}-{max(times):.3f}s")

    print(f"{args.n} URLs, {args.rounds} interleaved rounds, {'wall' if args.wall else 'CPU'} time")
    print(show("parse", ours))
    print(show("urlsplit", theirs))
    print(f"ratio parse/urlsplit: median {statistics.median(ratios):.2f}x, "
          f"spread {min(ratios):.2f}-{max(ratios):.2f}x")


if __name__ == "__main__":
    _main()

"""Free text holding URLs, for timing ``anyurl.urls.extract_urls`` (issue 25 item 18).

``text(n, mix, seed)`` returns prose with *n* URLs of bench/probes/parse_corpus.py's corpus
(every scheme) set in it as people write them: after words, before sentence punctuation,
in parentheses and quotes, in RFC 1738 appendix wrappers (``<URL:...>``), in HTML
attributes, beside junk that looks like a URL but is not. The mixes:

- ``plain``: http(s) and ftp(s) URLs between words, nothing around them;
- ``mixed``: every scheme, trailing punctuation, brackets and quotes, no wrappers;
- ``wrapped``: ``mixed`` plus ``<URL:...>`` and ``<...>`` wrappers (some broken across lines)
  and ``<a href="...">`` tags;
- ``hostile``: ``mixed`` plus junk: unknown schemes, bad escapes, ports out of range,
  runs of dots and closers, ``xhttp:``, bare colons.

Run it to print microseconds per URL found for each mix (best of ROUNDS, process CPU time)::

    python -m bench.probes.extract_text [n [rounds]]
"""

from __future__ import annotations

import random
import sys

from bench.probes.parse_corpus import corpus

__all__ = ["MIXES", "text"]

MIXES = ("plain", "mixed", "wrapped", "hostile")
_WORDS = ("see", "the", "file", "at", "or", "mirror", "from", "and", "also", "note:", "10:30", "ratio 1:2",
          "e.g.", "(draft)", "it's", "--", "ok")
_JUNK = ("xhttp://h.dom/a", "http://h:99999/", "ftp://h/%g1", "http://%zz", "gopher:", "news:", "mailto:",
         "http://h.dom/" + "." * 40, "http://h.dom/a" + ")" * 20, "a:b:c", "::::", "<>", "<<<", "URL:",
         "x-foo:bar", "http://bad host/", "HTTP://", "file:", "wais://h/?", "telnet://:23/")
_PUNCT = (".", ",", ";", ":", "!", "?", ").", "),", "'", ".)", "]")


def _plain(r: random.Random, url: str) -> str:
    return url


def _dressed(r: random.Random, url: str) -> str:
    k = r.random()
    if k < 0.35:
        return url + r.choice(_PUNCT)
    if k < 0.45:
        return f"({url})"
    if k < 0.55:
        return f'"{url}"'
    return url


def _wrapped(r: random.Random, url: str) -> str:
    k = r.random()
    if k < 0.2:
        return f"<URL:{url}>"
    if k < 0.25 and len(url) > 12:
        cut = r.randrange(8, len(url) - 2)
        return f"<URL:{url[:cut]}\n  {url[cut:]}>"
    if k < 0.35:
        return f"<{url}>"
    if k < 0.45:
        return f'<a href="{url}">link</a>'
    return _dressed(r, url)


def text(n: int = 100_000, mix: str = "mixed", seed: int = 1) -> str:
    """Text holding *n* URLs of the given mix; the same text for the same arguments."""
    r = random.Random(seed)
    urls = corpus(n * 3 if mix == "plain" else n, seed)
    if mix == "plain":
        urls = [u for u in urls if u.startswith(("http", "ftp")) and "[" not in u][:n]
    dress = {"plain": _plain, "mixed": _dressed, "wrapped": _wrapped, "hostile": _dressed}[mix]
    out: list[str] = []
    for url in urls:
        out.append(r.choice(_WORDS))
        if mix == "hostile" and r.random() < 0.3:
            out.append(r.choice(_JUNK))
        out.append(dress(r, url))
    return " ".join(out)


def timings(n: int = 100_000, rounds: int = 5) -> dict[str, dict[str, float]]:
    """For each mix: URLs found, the text's size, and the best CPU microseconds per URL found."""
    import time

    from anyurl.urls import extract_urls

    out = {}
    for mix in MIXES:
        t = text(n, mix)
        best = float("inf")
        found = 0
        for _ in range(rounds):
            t0 = time.process_time()
            found = len(extract_urls(t))
            best = min(best, time.process_time() - t0)
        out[mix] = {"urls": found, "bytes": len(t), "us_per_url": best / max(found, 1) * 1e6}
    return out


def _main() -> None:
    n, rounds = (int(a) for a in [*sys.argv[1:], "100000", "5"][:2])
    for mix, row in timings(n, rounds).items():
        print(f"{mix:8} {row['urls']:>8,} URLs in {row['bytes'] / 2**20:5.1f} MiB: {row['us_per_url']:.2f} us/URL")


if __name__ == "__main__":
    _main()

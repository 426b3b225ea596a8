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

``issue_text()`` is issue 25 item 18's own text: 500,000 plain http URLs, one after another
(15 MB; tests/unit/test_extract.py times the same).

Run it to print microseconds per URL found for the issue's text and each mix (best and
median of ROUNDS, process CPU time), with the load average::

    python -m bench.probes.extract_text [n [rounds]]
"""

from __future__ import annotations

import random
import sys

from bench.probes.parse_corpus import corpus

__all__ = ["MIXES", "issue_text", "text"]

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


def issue_text(n: int = 500_000) -> str:
    """Issue 25 item 18's text: *n* plain http URLs, one after another."""
    return "".join(f"http://host{i % 97}.example/p/{i} " for i in range(n))


def timings(n: int = 100_000, rounds: int = 5) -> dict[str, dict[str, float]]:
    """For the issue's text and each mix: URLs found, the text's size, and the best and
    median CPU microseconds per URL found."""
    import statistics
    import time

    from anyurl.urls import extract_urls

    extract_urls("http://a.example/")     # compiles the pattern
    out = {}
    for mix in ("issue", *MIXES):
        t = issue_text() if mix == "issue" else text(n, mix)
        times = []
        found = 0
        for _ in range(rounds):
            t0 = time.process_time()
            found = len(extract_urls(t))
            times.append(time.process_time() - t0)
        per = 1e6 / max(found, 1)
        out[mix] = {"urls": found, "bytes": len(t), "us_per_url": min(times) * per,
                    "median_us_per_url": statistics.median(times) * per}
    return out


def _main() -> None:
    import os

    n, rounds = (int(a) for a in [*sys.argv[1:], "100000", "5"][:2])
    print("load average " + " ".join(f"{x:.1f}" for x in os.getloadavg()))
    for mix, row in timings(n, rounds).items():
        print(f"{mix:8} {row['urls']:>8,} URLs in {row['bytes'] / 2**20:5.1f} MiB: {row['us_per_url']:.2f} us/URL"
              f" (median {row['median_us_per_url']:.2f})")
    print("load average " + " ".join(f"{x:.1f}" for x in os.getloadavg()))


if __name__ == "__main__":
    _main()

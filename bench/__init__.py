"""anyurl's benchmarks (``make bench``; bench/README.md: what each group measures; method
and figures in docs/benchmarks.md).

- ``run.py``: ``python -m bench.run [group ...]``, the one entry point; ``harness.py`` the one
  harness (interleaved rounds, medians, spread, each process's own peak RSS, the WAN relay,
  the --tree/--variant A/B cases); ``summary.py`` one row per group; ``make_venv.py`` the
  bench venv with anyurl installed compiled and the peers it is compared with.
- ``suites/``: one module per group of ``bench.run`` (``suites/http.py`` is the ``http``
  group), each with ``run(launcher, quick)`` and the worker roles its cases run as processes.
- ``reference/``: the clients the groups compare anyurl with that are not installed
  commands: asyncio and blocking ceilings per scheme, the Python HTTP peers, the
  filesystem anchor.
- ``probes/``: the parse group's URL corpus and its text mixes, the crawl group's frontier probe.
- ``relay.py``: the latency relay of the WAN rows.
"""

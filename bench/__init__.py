"""anyurl's benchmarks (``make bench``; method and figures in docs/benchmarks.md).

- ``run.py``: ``python -m bench.run [group ...]``, the entry point; ``harness.py`` its
  interleaved rounds, medians, spread and peak RSS; ``summary.py`` one row per group;
  ``make_venv.py`` the bench venv with anyurl installed compiled.
- ``suites/``: one module per group of ``bench.run`` (``suites/http.py`` is the ``http``
  group), each with ``run(launcher, quick)`` and the worker roles its cases run as processes.
- ``ab/``: interleaved A/B scripts that compare source trees, venvs or settings, run by hand.
- ``reference/``: the reference clients the suites compare anyurl with (asyncio and
  blocking ceilings per scheme, raw aiohttp, the filesystem anchor).
- ``probes/``: scripts that isolate one effect (the filesystem's inode allocator) and the
  parse benchmark's URL corpus.
"""

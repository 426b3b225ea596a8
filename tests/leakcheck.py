"""Opt-in pytest plugin: name the test that left a socket transport open.

A transport still open when its test's event loop closes is only reported when
the garbage collector gets to it, which may be several tests later (pytest turns
the ResourceWarning into a failure of whichever test runs then). With
``-p tests.leakcheck`` every test ends with a full collection, and each unclosed
transport or socket found is written to ``$ANYURL_LEAKCHECK_LOG`` (default
``leakcheck.log``) with the test that just ran, its protocol and, under
``ANYURL_LEAKCHECK_TRACE=N`` (frames; tracemalloc in this process only, not in the
children tests start), where it was made::

    ANYURL_LEAKCHECK_TRACE=8 python -m pytest -p tests.leakcheck tests/hostile tests/integration

Tracing slows this process (not the servers), which hides races that need a slow
server, and tests that measure memory with tracemalloc then fail; run without it first.
"""

from __future__ import annotations

import gc
import os
import tracemalloc
import warnings
from collections.abc import Iterator
from typing import Any

import pytest

_LOG = os.environ.get("ANYURL_LEAKCHECK_LOG", "leakcheck.log")


def pytest_configure(config: pytest.Config) -> None:
    frames = int(os.environ.get("ANYURL_LEAKCHECK_TRACE", "0"))
    if frames and not tracemalloc.is_tracing():
        tracemalloc.start(frames)


def _describe(source: Any) -> str:
    parts = [type(source).__name__]
    proto = getattr(source, "_protocol", None)
    if proto is None and hasattr(source, "get_protocol"):
        try:
            proto = source.get_protocol()
        except Exception:  # uvloop's, on a half-torn-down transport
            proto = None
    if proto is not None:
        parts.append(f"protocol={type(proto).__module__}.{type(proto).__qualname__}")
        if getattr(proto, "_client_connected_cb", None) is not None:
            parts.append("(server side of asyncio.start_server)")
    tb = tracemalloc.get_object_traceback(source)
    if tb is not None:
        parts.append("made at:\n    " + "\n    ".join(tb.format()))
    return " ".join(parts)


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    yield
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gc.collect()
        gc.collect()
    leaks = [w for w in caught if issubclass(w.category, ResourceWarning)]
    if leaks:
        with open(_LOG, "a") as f:
            for w in leaks:
                f.write(f"{item.nodeid}: {w.message}\n  {_describe(w.source)}\n")

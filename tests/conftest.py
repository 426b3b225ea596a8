"""Session-wide fixtures: the real servers, started once per test session.

``ANYURL_LOOP=uvloop`` runs every async test on uvloop instead of asyncio's
own loop (``make test`` runs the integration suite once more that way).
"""

from __future__ import annotations

import asyncio
import os

# every Entry any producer builds in the suite checks its kind against ENTRY_KINDS (response.py)
os.environ["ANYURL_CHECK_ENTRIES"] = "1"
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest
from fixtures.launcher import Launcher

LOOP = os.environ.get("ANYURL_LOOP", "asyncio")

try:
    from hypothesis import settings as _hypothesis_settings
except ImportError:  # pragma: no cover - the test extra installs it
    pass
else:
    # Property tests check answers, not speed: the default 200 ms per example failed one
    # (test_fast_path_agrees_on_random_text) on a loaded 2-core machine.
    _hypothesis_settings.register_profile("anyurl", deadline=None)
    _hypothesis_settings.load_profile("anyurl")


def pytest_asyncio_loop_factories(config: pytest.Config, item: pytest.Item
                                  ) -> Mapping[str, Callable[[], asyncio.AbstractEventLoop]]:
    if LOOP == "uvloop":
        import uvloop
        return {"uvloop": uvloop.new_event_loop}
    if LOOP != "asyncio":
        raise pytest.UsageError(f"ANYURL_LOOP must be asyncio or uvloop, not {LOOP!r}")
    return {"asyncio": asyncio.new_event_loop}


def pytest_report_header(config: pytest.Config) -> str:
    return f"anyurl event loop: {LOOP} (ANYURL_LOOP)"


@pytest.fixture(scope="session")
def servers() -> Iterator[Launcher]:
    """``servers.get("nginx")`` starts nginx (once) and returns its Endpoint. With
    ANYURL_TEST_SERVERS=compose it is the container's endpoint instead, its log,
    web root, mail store and CA file paths turned into host paths."""
    launcher = Launcher()
    try:
        yield launcher
    finally:
        launcher.stop_all()
        launcher.remove()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[Any]:
    """ANYURL_NO_SKIPS=1 (make test-containers): a skipped test fails, so every test is
    known to have run against the containers."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and not hasattr(report, "wasxfail") and os.environ.get("ANYURL_NO_SKIPS") == "1":
        report.outcome = "failed"
        report.longrepr = f"skipped, but ANYURL_NO_SKIPS=1 allows no skips: {report.longrepr}"

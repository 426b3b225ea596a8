"""Session-wide fixtures: the real servers, started once per test session."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from fixtures.launcher import Launcher


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

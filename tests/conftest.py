"""Session-wide fixtures: the real servers, started once per test session.

``ANYURL_LOOP=uvloop`` runs every async test on uvloop instead of asyncio's
own loop (``make test`` runs the integration suite once more that way).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterator, Mapping

import pytest
from fixtures.launcher import Launcher

LOOP = os.environ.get("ANYURL_LOOP", "asyncio")


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
    """``servers.get("nginx")`` starts nginx (once) and returns its Endpoint."""
    launcher = Launcher()
    try:
        yield launcher
    finally:
        launcher.stop_all()
        launcher.remove()

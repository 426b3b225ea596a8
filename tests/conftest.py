"""Session-wide fixtures: the real servers, started once per test session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fixtures.launcher import Launcher


@pytest.fixture(scope="session")
def servers() -> Iterator[Launcher]:
    """``servers.get("nginx")`` starts nginx (once) and returns its Endpoint."""
    launcher = Launcher()
    try:
        yield launcher
    finally:
        launcher.stop_all()
        launcher.remove()

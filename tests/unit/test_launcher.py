"""The fixtures launcher: compose mode starts nothing; ports are never handed out twice."""

from __future__ import annotations

import pytest
from fixtures import launcher as launcher_mod
from fixtures.launcher import Launcher, free_ports


def test_compose_mode_returns_published_ports_and_starts_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANYURL_TEST_SERVERS", "compose")
    monkeypatch.setenv("ANYURL_COMPOSE_HOST", "127.0.0.9")

    def no_process(*args: object, **kwargs: object) -> None:
        raise AssertionError("compose mode must not start processes")

    monkeypatch.setattr(launcher_mod.subprocess, "Popen", no_process)
    launcher = Launcher()
    try:
        ep = launcher.get("nginx")
        assert (ep.host, ep.port) == ("127.0.0.9", 8080)
        assert launcher.get("vsftpd").port == 2121
        assert launcher.pids() == []
    finally:
        launcher.stop_all()
        launcher.remove()


def test_free_ports_are_distinct() -> None:
    ports = free_ports(20) + free_ports(20)
    assert len(set(ports)) == 40
    assert all(1024 < p < 65536 for p in ports)

"""The fixtures launcher: compose mode starts nothing and reads the containers' endpoints;
ports are never handed out twice; a container's Context hands out its fixed ports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures import launcher as launcher_mod
from fixtures.launcher import Context, Launcher, free_ports


def test_compose_mode_reads_the_containers_endpoints_and_starts_nothing(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ANYURL_TEST_SERVERS", "compose")
    monkeypatch.setenv("ANYURL_CONTAINERS", str(tmp_path))
    monkeypatch.setenv("ANYURL_COMPOSE_HOST", "127.0.0.9")
    (tmp_path / "state" / "nginx").mkdir(parents=True)
    info = {"access_log": str(tmp_path / "state/nginx/logs/access.log"), "tls_port": 8443}
    (tmp_path / "state" / "nginx" / "endpoint.json").write_text(json.dumps({
        "name": "nginx", "host": "127.0.0.1", "port": 8080, "info": info}))

    def no_process(*args: object, **kwargs: object) -> None:
        raise AssertionError("compose mode must not start processes")

    monkeypatch.setattr(launcher_mod.subprocess, "Popen", no_process)
    launcher = Launcher()
    try:
        ep = launcher.get("nginx")
        assert (ep.host, ep.port, ep.info) == ("127.0.0.9", 8080, info)
        assert launcher.pids() == []
        vsftpd = launcher_mod.importlib.import_module("fixtures.servers.vsftpd")
        with pytest.raises(RuntimeError, match="endpoint.json missing after 0s"):
            launcher_mod.compose_endpoint("vsftpd", vsftpd, timeout=0)
    finally:
        launcher.stop_all()
        launcher.remove()


def test_container_context_hands_out_the_compose_ports_in_order(tmp_path: Path) -> None:
    ctx = Context("vsftpd_tls", tmp_path, [2990, 2991], [30040, 30080])
    assert (ctx.free_port(), ctx.free_port()) == (2990, 2991)
    assert ctx.free_port_range(40) == (30040, 30079)
    assert ctx.free_port_range(40) == (30080, 30119)
    with pytest.raises(RuntimeError, match="fewer ports"):
        ctx.free_port()


def test_free_ports_are_distinct() -> None:
    ports = free_ports(20) + free_ports(20)
    assert len(set(ports)) == 40
    assert all(1024 < p < 65536 for p in ports)

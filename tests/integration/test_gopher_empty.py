"""A gopher item that arrives as nothing at all (the server closes without a byte).

pygopherd and gophernicus both send nothing for an empty file; a server that failed does
the same. anyurl asks once more with Gopher+ ("\\t+"): pygopherd then states the length
("+0", or "+-2" and the close for a menu) and the empty item is saved (exit 0);
gophernicus (no Gopher+) and a hostile server send nothing again, which is reported as a
truncated transfer (exit 17) and leaves no file. It was saved empty with exit 0.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from fixtures.launcher import Launcher
from tests.hostile.gopher_hostile import Reply, hostile_gopher

from anyurl.errors import TruncatedTransfer


def anyurl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "anyurl", *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "COLUMNS": "200"})


def empty_items(root: str) -> str:
    """An empty file and an empty directory in a server's tree; their common stem."""
    stem = f"empty-{uuid.uuid4().hex[:8]}"
    path = Path(root) / f"{stem}.bin"
    path.write_bytes(b"")
    path.chmod(0o644)
    (Path(root) / stem).mkdir()
    (Path(root) / stem).chmod(0o755)
    return stem


@pytest.mark.parametrize("gtype", ["0", "9"])
def test_empty_file_on_pygopherd_is_saved_once_gopher_plus_says_it_is_empty(
        servers: Launcher, gtype: str, tmp_path: Path) -> None:
    ep = servers.get("pygopherd")
    stem = empty_items(ep.info["root"])
    out = tmp_path / "got"
    proc = anyurl("get", "-v", "-o", str(out), f"gopher://{ep.host}:{ep.port}/{gtype}/{stem}.bin")
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes() == b""
    # nothing came to the plain request; the Gopher+ one was answered "+0"
    assert f"> b'/{stem}.bin\\r\\n'" in proc.stderr and f"> b'/{stem}.bin\\t\\t+\\r\\n'" in proc.stderr


def test_empty_menu_on_pygopherd_is_an_empty_listing(servers: Launcher) -> None:
    ep = servers.get("pygopherd")
    stem = empty_items(ep.info["root"])
    url = f"gopher://{ep.host}:{ep.port}/1/{stem}"
    proc = anyurl("ls", url)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "" and proc.stderr.splitlines() == [f"anyurl: {url}: (no entries)"]


@pytest.mark.parametrize("gtype", ["0", "9"])
def test_empty_file_on_gophernicus_is_a_truncated_transfer(servers: Launcher, gtype: str, tmp_path: Path) -> None:
    ep = servers.get("gophernicus")
    stem = empty_items(ep.info["root"])
    out = tmp_path / "got"
    url = f"gopher://{ep.host}:{ep.port}/{gtype}/{stem}.bin"
    proc = anyurl("get", "-o", str(out), url)
    assert proc.returncode == TruncatedTransfer.exit_code, proc.stderr
    assert not out.exists() and os.listdir(tmp_path) == []  # no file, no part file
    assert proc.stderr.startswith(f"anyurl: {url}: the server closed the connection without sending "
                                  "anything, also when asked again with Gopher+: ")
    to_stdout = anyurl("get", url)
    assert to_stdout.returncode == TruncatedTransfer.exit_code and to_stdout.stdout == ""


@pytest.mark.parametrize(("gtype", "rule"), [
    ("0", 'RFC 1436 text ends with a "." line'),
    ("1", 'an RFC 1436 menu ends with a "." line'),
    ("9", "a gopher binary item has no length"),
])
def test_hostile_server_that_sends_nothing_is_never_success(gtype: str, rule: str, tmp_path: Path) -> None:
    with hostile_gopher({"/x": Reply()}) as g:
        url = f"gopher://127.0.0.1:{g.port}/{gtype}/x"
        proc = anyurl("ls", url) if gtype == "1" else anyurl("get", "-o", str(tmp_path / "x"), url)
        listed = anyurl("mirror", url, str(tmp_path / "tree")) if gtype == "1" else None
    assert proc.returncode == TruncatedTransfer.exit_code, proc.stderr
    assert rule in proc.stderr and proc.stdout == ""
    assert not (tmp_path / "x").exists()
    assert g.log[:2] == ["/x", "/x"]  # asked twice: plain, then Gopher+
    if listed is not None:
        assert listed.returncode == TruncatedTransfer.exit_code, listed.stderr

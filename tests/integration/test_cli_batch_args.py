"""``anyurl get -d DIR URL...`` with every URL an argument: the workers take them from a plain
generator (no lock, no async generator); the files, the names made unique, the errors and the
exit code of the first failing URL in the order given are the same as with ``-i FILE``."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from fixtures.launcher import Endpoint, Launcher
from tests.integration.test_cli import ANYURL, ENV, files_in
from tests.integration.test_http import www

from anyurl.errors import ResourceNotFound, URLSyntaxError


@pytest.fixture(scope="module")
def nginx(servers: Launcher) -> Endpoint:
    return servers.get("nginx")


@pytest.mark.parametrize("source", ["arguments", "list"])
def test_a_batch_saves_every_good_url_and_exits_with_the_first_failure(nginx: Endpoint, tmp_path: Path,
                                                                      source: str) -> None:
    base = f"http://{nginx.host}:{nginx.port}"
    good = [f"{base}/many/f{i:04d}.txt" for i in range(40)]
    urls = [*good[:10], f"{base}/status404", *good[10:20], "http://[bad/", *good[20:], good[0]]
    out = tmp_path / "out"
    if source == "list":
        listing = tmp_path / "urls.txt"
        listing.write_text("".join(u + "\n" for u in urls))
        argv = [ANYURL, "get", "-q", "--parallel", "8", "-d", str(out), "-i", str(listing)]
    else:
        argv = [ANYURL, "get", "-q", "--parallel", "8", "-d", str(out), *urls]
    proc = subprocess.run(argv, capture_output=True, timeout=120, env=ENV)
    err = proc.stderr.decode()
    assert "Traceback" not in err
    # the 404 comes first in the order given (the bad URL fails sooner, but later in the list)
    assert proc.returncode == ResourceNotFound.exit_code != URLSyntaxError.exit_code
    assert "status404" in err and "http://[bad/" in err
    names = [f"f{i:04d}.txt" for i in range(40)]
    assert files_in(out) == sorted([*names, "f0000.txt.1"])  # the repeated URL: a file of its own
    for n in names:
        assert (out / n).read_bytes() == www(nginx, f"many/{n}")
    assert (out / "f0000.txt.1").read_bytes() == www(nginx, "many/f0000.txt")

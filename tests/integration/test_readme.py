"""The README's Python example really works: run it against the real servers.

The README uses the docker-compose ports (8080 nginx, 2121 vsftpd); here they
are replaced by the ports the launcher picked.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from fixtures.launcher import Launcher

README = Path(__file__).resolve().parents[2] / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), re.S)


def test_readme_python_example_runs(servers: Launcher, tmp_path: Path) -> None:
    nginx, vsftpd = servers.get("nginx"), servers.get("vsftpd")
    code = python_blocks()[0]
    assert "127.0.0.1:8080" in code and "127.0.0.1:2121" in code
    code = code.replace("127.0.0.1:8080", f"{nginx.host}:{nginx.port}")
    code = code.replace("127.0.0.1:2121", f"{vsftpd.host}:{vsftpd.port}")
    script = tmp_path / "example.py"
    script.write_text(code)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.splitlines()
    assert out[0] == "text/plain 16 hello over http"
    # the FTP listing of /pub names its seeded files with absolute child URLs
    assert any(line.startswith("file 25 hello.txt ftp://") and line.endswith("/pub/hello.txt") for line in out)
    assert any(line.startswith("directory") and "sub" in line for line in out)
    # the parse example prints what its comment promises
    assert "myname ('/etc',) motd a" in out
    assert "['ftp://a.example/pub/x', 'gopher://g.example/']" in out

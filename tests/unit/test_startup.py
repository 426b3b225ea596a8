"""Start-up: what `import anyurl` and the quick CLI commands load (each checked in a fresh interpreter)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import anyurl

# Heavy modules a command that does not need them must not load.
HEAVY = ("aiohttp", "asn1tools", "importlib.metadata")


def _loaded_after(code: str) -> dict[str, object]:
    """Run *code* in a fresh interpreter; return which HEAVY (and asyncio) modules it loaded, and its stdout."""
    script = (
        "import contextlib, io, json, sys\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n" + textwrap.indent(code, "    ") + "\n"
        "mods = ('asyncio',) + " + repr(HEAVY) + "\n"
        "print(json.dumps({'loaded': [m for m in mods if m in sys.modules], 'stdout': out.getvalue()}))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(anyurl.__file__).parent.parent)}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 0, proc.stderr
    result: dict[str, object] = json.loads(proc.stdout.splitlines()[-1])
    return result


def test_import_anyurl_loads_no_heavy_module() -> None:
    result = _loaded_after("import anyurl")
    assert result["loaded"] == []          # not even asyncio: it loads with the Client


def test_version_loads_no_heavy_module() -> None:
    result = _loaded_after("import anyurl, anyurl.cli\ntry:\n    anyurl.cli.main(['--version'])\n"
                           "except SystemExit:  # argparse's way\n    pass")
    assert result["stdout"] == f"anyurl {anyurl.__version__}\n"
    assert result["loaded"] == []


def test_parse_command_loads_no_heavy_module() -> None:
    result = _loaded_after("import anyurl.cli; anyurl.cli.main(['parse', 'ftp://h/pub/x;type=a'])")
    assert json.loads(str(result["stdout"]))["cwd"] == ["pub"]
    assert result["loaded"] == []


def test_parsing_urls_loads_no_heavy_module() -> None:
    result = _loaded_after("import anyurl; print(anyurl.parse('http://h/x'), anyurl.extract_urls('see ftp://h/'))")
    assert result["stdout"] == "http://h/x ['ftp://h/']\n"
    assert result["loaded"] == []


@pytest.mark.parametrize("url", ["file", "ftp://127.0.0.1:1/x"])
def test_get_file_and_ftp_do_not_load_aiohttp(url: str, tmp_path: Path) -> None:
    if url == "file":
        (tmp_path / "f.txt").write_text("hello\n")
        url = (tmp_path / "f.txt").as_uri()
    # ftp://127.0.0.1:1 refuses the connection at once: the handler was loaded and ran.
    result = _loaded_after(f"import anyurl.cli; print(anyurl.cli.main(['get', '-o', {str(tmp_path / 'out')!r}, {url!r}]))")
    assert "aiohttp" not in result["loaded"] and "asyncio" in result["loaded"]
    if url.startswith("file:"):
        assert result["stdout"] == "0\n"
        assert (tmp_path / "out").read_text() == "hello\n"
    else:
        assert result["stdout"] == "13\n"   # ConnectError's exit code: the FTP handler ran


def test_entry_points_are_read_only_for_schemes_not_built_in() -> None:
    result = _loaded_after("import anyurl.registry as r; r.handler_class('file'); print(r.handler_class('ftp').__name__)")
    assert result["stdout"] == "FTPHandler\n"
    assert "importlib.metadata" not in result["loaded"]
    result = _loaded_after("import anyurl.registry as r\ntry:\n    r.handler_class('x-none')\n"
                           "except Exception as e:\n    print(type(e).__name__)")
    assert result["stdout"] == "UnsupportedScheme\n"
    assert "importlib.metadata" in result["loaded"]

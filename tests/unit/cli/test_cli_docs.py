"""What the user reads about the command (README, docs/cli.md, --help) matches what it does."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import anyurl
from anyurl.cli import commands as cli

ROOT = Path(__file__).resolve().parents[3]
SRC = str(Path(anyurl.__file__).parent.parent)


def _exit_rows(text: str) -> list[tuple[int, str]]:
    """(code, error class or '') of every row of the markdown exit-code table in *text*."""
    rows = []
    for line in text.splitlines():
        m = re.match(r"\|\s*(\d+)\s*\|\s*([A-Za-z]*|-)\s*\|", line)
        if m:
            rows.append((int(m.group(1)), m.group(2).strip("-")))
    return rows


@pytest.mark.parametrize("doc", ["README.md", "docs/cli.md"])
def test_the_documented_exit_codes_are_the_commands(doc: str) -> None:
    # docs/cli.md lacked 19 (OverlongTransfer)
    table = [(code, "" if name == "-" else name) for code, name, _ in cli.exit_code_table()]
    assert _exit_rows((ROOT / doc).read_text()) == table


def test_help_and_docs_name_every_command() -> None:
    # --help's list lacked `stat`, docs/cli.md's table `mirror`
    epilog = cli.commands_epilog()
    commands_doc = (ROOT / "docs/cli.md").read_text().split("## Commands", 1)[1].split("###", 1)[0]
    for command in cli.COMMANDS:
        assert re.search(rf"^  {command} ", epilog, re.M), command
        assert f"| `{command} " in commands_doc, command


def test_news_without_a_server_says_how_to_name_one_on_the_command_line() -> None:
    env = {k: v for k, v in os.environ.items() if k != "NNTPSERVER"}
    proc = subprocess.run([sys.executable, "-m", "anyurl", "get", "news:comp.lang.python"], capture_output=True,
                          text=True, timeout=60, env={**env, "PYTHONPATH": SRC})
    assert proc.returncode == anyurl.ConfigurationError.exit_code
    assert proc.stderr.startswith("anyurl: news:comp.lang.python: news: URLs need a news server: ")
    assert "--news-server HOST[:PORT]" in proc.stderr and "NNTPSERVER" in proc.stderr

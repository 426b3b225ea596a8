"""Every code block of README.md and docs/*.md that says it runs, runs as written (issue 33
item 8), against the fixture servers on the ports the launcher picked.

The convention (docs/internals.md, "Code blocks in the docs"):

* a block tagged ``python`` is a whole program: it is run with this Python and must exit 0;
* a block tagged ``sh`` is a shell script of ``anyurl`` commands: each command line is run
  with bash in a scratch directory and must exit 0;
* anything that cannot run as written (output, outlines, fragments, commands with
  placeholders or for servers the fixtures do not start) is tagged otherwise: ``text`` for
  output and outlines, ``console`` for shell lines, ``py`` for Python fragments, or ``json``.

The docs write the servers' docker-compose ports (docker-compose.yml): 127.0.0.1:8080 is nginx,
2121 vsftpd, 7070 pygopherd, ...; each becomes the port of the server the launcher started.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from fixtures.launcher import Launcher

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RUN = {"python", "sh"}
# the docker-compose ports the docs write -> (fixture server, info key of its port or "port")
PORTS = {
    8080: ("nginx", "port"), 8443: ("nginx", "tls_port"), 2121: ("vsftpd", "port"),
    2125: ("pyftpdlib_server", "port"), 7070: ("pygopherd", "port"), 7071: ("gophernicus", "port"),
    1119: ("inn", "port"), 1120: ("inn", "auth_port"), 1563: ("inn", "tls_port"),
    2525: ("aiosmtpd_server", "port"), 2323: ("telnetd", "port"), 2100: ("yaz_ztest", "port"),
}
_FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```\s*$", re.S | re.M)
_PORT = re.compile(r"(?<=127\.0\.0\.1:|localhost:)(\d+)")


def blocks() -> list[tuple[str, int, str, str]]:
    """(file, line, tag, text) of every fenced block."""
    out = []
    for doc in DOCS:
        text = doc.read_text()
        for m in _FENCE.finditer(text):
            out.append((str(doc.relative_to(ROOT)), text.count("\n", 0, m.start()) + 1, m.group(1).strip(),
                        m.group(2)))
    return out


RUNNABLE = [b for b in blocks() if b[2] in RUN]


def test_every_block_has_a_known_tag() -> None:
    known = RUN | {"text", "console", "py", "json", ""}
    assert [(f, n, t) for f, n, t, _ in blocks() if t not in known] == []


def _localize(text: str, servers: Launcher) -> str:
    def port(m: re.Match[str]) -> str:
        given = int(m.group(1))
        if given not in PORTS:
            return m.group(1)
        name, key = PORTS[given]
        ep = servers.get(name)
        return str(ep.port if key == "port" else ep.info[key])

    return _PORT.sub(port, text)


def _env(servers: Launcher, text: str) -> dict[str, str]:
    env = dict(os.environ, COLUMNS="120", NO_COLOR="1")
    env.pop("PYTHONASYNCIODEBUG", None)
    if "news:" in text or "NNTPSERVER" in text:
        inn = servers.get("inn")
        env["NNTPSERVER"] = f"{inn.host}:{inn.port}"
    if "mailto:" in text or "ANYURL_SMTP" in text:
        smtp = servers.get("aiosmtpd_server")
        env["ANYURL_SMTP_HOST"], env["ANYURL_SMTP_PORT"] = smtp.host, str(smtp.port)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def _run(doc: str, line: int, tag: str, code: str, env: dict[str, str], where: Path) -> str | None:
    """None when the block ran to exit 0, else what went wrong."""
    where.mkdir()
    if tag == "python":
        script = where / "block.py"
        script.write_text(code)
        commands = [[sys.executable, str(script)]]
    else:
        commands = [["bash", "-c", cmd] for cmd in re.sub(r"\\\n", " ", code).splitlines()
                    if cmd.strip() and not cmd.lstrip().startswith("#")]
    for argv in commands:
        try:
            proc = subprocess.run(argv, cwd=where, env=env, capture_output=True, text=True, timeout=120,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return f"{doc}:{line}: {argv[-1]}: still running after 120 s"
        if proc.returncode != 0:
            return f"{doc}:{line}: {argv[-1]} exited {proc.returncode}\n{proc.stderr[-1500:]}"
    return None


def test_every_python_and_sh_block_runs_as_written(servers: Launcher, tmp_path: Path) -> None:
    # the servers first (the launcher is not thread-safe), then the blocks four at a time: the
    # whole file costs about its slowest block (the Dask one), not the sum
    jobs = [(doc, line, tag, _localize(text, servers), _env(servers, text))
            for doc, line, tag, text in RUNNABLE]
    assert len(jobs) >= 10  # the docs keep showing code that runs
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda ij: _run(*ij[1], tmp_path / f"b{ij[0]}"), enumerate(jobs)))
    failed = [r for r in results if r is not None]
    assert failed == [], "\n\n".join(failed)

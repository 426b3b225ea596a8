"""Mirror benchmark: a 2,000-file, 4-level FTP tree from vsftpd (names with spaces,
%, #, ;, unicode; CRLF text files; symlinks) copied by ``anyurl mirror``,
``lftp mirror --parallel=8`` and ``wget -r`` in the same run, each copy checked
byte for byte (fixtures/mirror_tree.py). ``python -m bench.bench_mirror`` runs it alone.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from fixtures import mirror_tree

from bench.harness import Case, anyurl_cmd, compare


def run(launcher: object, quick: bool) -> None:
    """Seed the tree in vsftpd's anonymous area and print the mirror group."""
    ep = launcher.get("vsftpd")  # type: ignore[attr-defined]
    files = 500 if quick else 2000
    root = Path(ep.info["anon_root"]) / "pub" / f"mirror{files}"
    want = mirror_tree.expected(root, mirror_tree.build(root, files, levels=4, fanout=3))
    host, port = ep.host, ep.port
    url = f"ftp://{host}:{port}/pub/mirror{files}/"
    scratch = Path(tempfile.mkdtemp(prefix="anyurl-bench-mirror-"))
    out = scratch / "out"
    exact: dict[str, str] = {}

    def clean() -> None:
        shutil.rmtree(out, ignore_errors=True)

    def verify(name: str, strict: bool) -> None:
        ok, problems = mirror_tree.compare(out, want)
        exact[name] = f"{ok}/{len(want)} byte-exact" + (f" (first problem: {problems[0]})" if problems else "")
        if strict and problems:
            raise RuntimeError(f"{name}: mirror not byte-exact: {problems[:3]}")
        clean()

    try:
        cases = [
            Case("lftp mirror --parallel=8",
                 ["lftp", "-c", f"set cmd:interactive no; open -p {port} {host}; "
                  f"mirror --parallel=8 /pub/mirror{files}/ {out}"],
                 clean, lambda: verify("lftp mirror --parallel=8", False)),
            Case("wget -r",
                 ["wget", "-q", "-r", "-l", "inf", "-nH", "--cut-dirs=2", "--restrict-file-names=nocontrol",
                  "-P", str(out), url],
                 clean, lambda: verify("wget -r", False)),
            Case("anyurl mirror --parallel 8",
                 anyurl_cmd("mirror", "-q", url, str(out), "--parallel", "8"),
                 clean, lambda: verify("anyurl mirror --parallel 8", True)),
        ]
        compare(f"mirror: {files} files, 4 levels, from vsftpd", cases, "lftp mirror --parallel=8",
                unit_work=(len(want), "files"))
        for name, text in exact.items():
            print(f"   {name:<40} {text}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    from bench.run import run_with_servers

    run_with_servers(run, "--quick" in sys.argv)

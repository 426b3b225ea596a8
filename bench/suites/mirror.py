"""Mirror benchmark: a 2,000-file, 4-level FTP tree from vsftpd (names with spaces,
%, #, ;, unicode; CRLF text files; symlinks) copied by ``anyurl mirror``,
``lftp mirror --parallel=8`` and ``wget -r`` in the same run, each copy checked
byte for byte (fixtures/mirror_tree.py), once into tmpfs and once to disk, each with the
filesystem anchor (the same tree written with plain os calls; bench/harness.py).
``python -m bench.suites.mirror`` runs it alone.
"""

from __future__ import annotations

import sys
from pathlib import Path

from fixtures import mirror_tree

from bench.harness import ANCHOR, Case, ManyFiles, anyurl_cmd, compare, outputs, wanted


def run(launcher: object, quick: bool) -> None:
    """Seed the tree in vsftpd's anonymous area and print the mirror group."""
    ep = launcher.get("vsftpd")  # type: ignore[attr-defined]
    files = 500 if quick else 2000
    root = Path(ep.info["anon_root"]) / "pub" / f"mirror{files}"
    want = mirror_tree.expected(root, mirror_tree.build(root, files, levels=4, fanout=3))
    host, port = ep.host, ep.port
    url = f"ftp://{host}:{port}/pub/mirror{files}/"
    for output in outputs():
        title = f"mirror: {files} files, 4 levels, from vsftpd, output on {output.label}"
        if wanted(title):
            _group(title, ManyFiles.tree(output, "mirror", want), want, host, port, files, url)


def _group(title: str, many: ManyFiles, want: dict[str, bytes], host: str, port: int, files: int,
           url: str) -> None:
    out = many.outdir
    exact: dict[str, str] = {}

    def verify(name: str, strict: bool) -> None:
        ok, problems = mirror_tree.compare(out, want)
        exact[name] = f"{ok}/{len(want)} byte-exact" + (f" (first problem: {problems[0]})" if problems else "")
        if strict and problems:
            raise RuntimeError(f"{name}: mirror not byte-exact: {problems[:3]}")

    cases = [
        Case("lftp mirror --parallel=8",
             ["lftp", "-c", f"set cmd:interactive no; open -p {port} {host}; "
              f"mirror --parallel=8 /pub/mirror{files}/ {out}"],
             many.fresh, lambda: verify("lftp mirror --parallel=8", False)),
        Case("wget -r",
             ["wget", "-q", "-r", "-l", "inf", "-nH", "--cut-dirs=2", "--restrict-file-names=nocontrol",
              "-P", str(out), url],
             many.fresh, lambda: verify("wget -r", False)),
        Case("anyurl mirror --parallel 8",
             anyurl_cmd("mirror", "-q", url, str(out), "--parallel", "8"),
             many.fresh, lambda: verify("anyurl mirror --parallel 8", True)),
        many.anchor(lambda: verify(ANCHOR, True)),
    ]
    compare(title, cases, "lftp mirror --parallel=8", unit_work=(len(want), "files"), note=many.note())
    for name, text in exact.items():
        print(f"   {name:<40} {text}")


if __name__ == "__main__":
    from bench.run import run_with_servers

    run_with_servers(run, "--quick" in sys.argv)

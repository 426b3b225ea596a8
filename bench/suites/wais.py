"""wais: anyurl vs YAZ's own clients on the same yaz-ztest target, side by side in one run.

``python -m bench.run wais [--quick]``:

1. a search with 23 hits listed with headlines (one Search + one Present of 23 SUTRS records):
   ``anyurl get 'wais://h:p/Default?computer'`` vs ``zoomsh`` (search + show 0 23) vs
   ``yaz-client -f script`` (find + show 1+23, SUTRS);
2. one document as MARCXML: ``anyurl get wais://h:p/Default/XML/z1:1:computer`` vs
   ``zoomsh`` (search + show 0 1 with preferredRecordSyntax xml).

3. 100 searches with their 23 headlines in one process: the anyurl API
   (``python -m bench.suites.wais loop URL 100``, a new association per search)
   vs one zoomsh session running the 100 searches on one connection.

Each command is a whole process, so the times include interpreter start-up
(anyurl is Python; zoomsh and yaz-client are C). Ratios > 1 mean faster than
zoomsh.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
from pathlib import Path

from bench import harness
from bench.harness import Case, anyurl_cmd, compare, python_cmd

LOOPS = 100


def run(launcher: object, quick: bool) -> None:
    ep = launcher.get("yaz_ztest")  # type: ignore[attr-defined]
    target = f"tcp:{ep.host}:{ep.port}/Default"
    work = Path(tempfile.mkdtemp(prefix="bench-wais-"))
    script = work / "yaz-client.cmds"
    script.write_text(f"open {target}\nformat sutrs\nfind computer\nshow 1+23\nquit\n")
    rounds = harness.ROUNDS + 2  # short runs: a few more rounds

    search = f"wais://{ep.host}:{ep.port}/Default?computer"
    compare("wais: search with 23 hits and their headlines", [
        Case("zoomsh search+23 records", ["zoomsh", f"connect {target}", "set preferredRecordSyntax sutrs",
                                          "search computer", "show 0 23", "quit"]),
        Case("yaz-client search+23 records", ["yaz-client", "-f", str(script)]),
        # a search result is a listing: `get` refuses it (use ls or mirror), so the bench lists it
        Case("anyurl ls (search listing)", anyurl_cmd("ls", search)),
    ], "zoomsh search+23 records", rounds=rounds)

    doc = f"wais://{ep.host}:{ep.port}/Default/XML/z1%3A1%3Acomputer"
    compare("wais: one document as MARCXML", [
        Case("zoomsh search+1 XML record", ["zoomsh", f"connect {target}", "set preferredRecordSyntax xml",
                                            "search computer", "show 0 1", "quit"]),
        Case("anyurl get (XML document)", anyurl_cmd("get", doc, "-o", str(work / "doc.xml"))),
    ], "zoomsh search+1 XML record", rounds=rounds)

    cmds = [f"connect {target}", "set preferredRecordSyntax sutrs"]
    for _ in range(LOOPS):
        cmds += ["search computer", "show 0 23"]
    compare(f"wais: {LOOPS} searches of 23 hits in one process", [
        Case(f"zoomsh {LOOPS} searches, 1 session", ["zoomsh", *cmds, "quit"]),
        Case(f"anyurl API {LOOPS} searches", python_cmd("-m", "bench.suites.wais", "loop", search, str(LOOPS))),
    ], f"zoomsh {LOOPS} searches, 1 session", rounds=rounds)
    shutil.rmtree(work, ignore_errors=True)


async def _loop(url: str, n: int) -> None:
    import anyurl

    async with anyurl.Client() as client:
        for _ in range(n):
            res = await client.fetch(url)
            assert res.entries is not None and len(res.entries) == 23


if __name__ == "__main__" and sys.argv[1:2] == ["loop"]:
    asyncio.run(_loop(sys.argv[2], int(sys.argv[3])))

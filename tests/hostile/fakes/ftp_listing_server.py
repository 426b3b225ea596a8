"""A fault-injecting FTP server (tests/hostile/fakes/ftp_hostile.py's, for everything but
listings) whose LIST sends a listing in a format the suite's real servers never send:

    python tests/hostile/fakes/ftp_listing_server.py --format vms --log LOG

prints its port on stdout, then serves until killed; commands go to LOG as ``CMD <line>``.
FEAT offers no MLST, so clients list with LIST. --format names the corpus cases of
tests/unit/protocols/ftp_listing_corpus.json whose lines LIST sends (NLST sends their names);
"riddles": LIST lines in no known format and NLST two names; "riddles-no-nlst": the same
with NLST refused (502); "mlsd": FEAT offers MLST and MLSD sends MLSD_LINES (one has no facts).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import ftp_hostile  # run as a script: tests/hostile is on sys.path
from base import run_until_interrupted, serve_on_loopback

CORPUS = Path(__file__).resolve().parents[2] / "unit" / "protocols" / "ftp_listing_corpus.json"
RIDDLES = ["?? alpha.txt ??", "this server speaks in riddles", "?? beta.txt ??"]
MLSD_LINES = ["type=cdir;modify=20240101000000; .", "type=file;size=3;modify=20240101000000; a.txt",
              "garbage without facts", "type=dir;modify=20240102000000; sub"]
FORMAT = ""


def listing(fmt: str) -> tuple[list[str], list[str]]:
    """(LIST lines, NLST names) of *fmt*."""
    if fmt.startswith("riddles"):
        return RIDDLES, ["alpha.txt", "beta.txt"]
    cases = [c for c in json.loads(CORPUS.read_text(encoding="utf-8"))["cases"] if c["format"] == fmt]
    return ([line for c in cases for line in c["lines"]],
            [e["name"] for c in cases for e in c["entries"] if e["kind"] != "info"])


class ListingSession(ftp_hostile.Session):
    async def command(self, verb: str, arg: str) -> None:
        if FORMAT == "mlsd" and verb == "FEAT":
            await self.reply("211-Features:\r\n EPSV\r\n MLST type*;size*;modify*;\r\n211 End")
            return
        if FORMAT == "mlsd" and verb == "MLSD":
            await self.send_lines(MLSD_LINES)
            return
        if verb not in ("LIST", "NLST"):
            await super().command(verb, arg)
            return
        if verb == "NLST" and FORMAT == "riddles-no-nlst":
            await self.reply("502 NLST not implemented")
            return
        lines, names = listing(FORMAT)
        await self.send_lines(lines if verb == "LIST" else names)

    async def send_lines(self, lines: list[str]) -> None:
        await self.reply("150 here comes the listing")
        _, dw = await self.data_conn()
        dw.write("".join(f"{x}\r\n" for x in lines).encode())
        await dw.drain()
        dw.close()
        await self.reply("226 Transfer complete")


async def main() -> None:
    global FORMAT
    ap = argparse.ArgumentParser()
    ap.add_argument("--format", required=True, help="a corpus format, riddles, riddles-no-nlst or mlsd")
    ap.add_argument("--log", required=True)
    args = ap.parse_args()
    FORMAT = args.format
    ftp_hostile.Session = ListingSession  # type: ignore[misc]  # the sessions Hostile starts
    await serve_on_loopback(ftp_hostile.Hostile("listing", args.log).handle)


if __name__ == "__main__":
    run_until_interrupted(main)

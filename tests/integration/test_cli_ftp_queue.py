"""`anyurl get --parallel 1` of many files from vsftpd: one control connection, and the next
file's EPSV+RETR written behind the transfer in progress (issue 24 step 5).

A tap between the command and vsftpd's control port (tests/taps.py: it forwards every byte and
holds the server's replies for a round trip) keeps what each side sent, in the order it
passed. The data connections go straight to vsftpd (its EPSV names a port on the control
connection's address). Before the FTP handler counted a server whose last connection could take
a request behind its transfer as multiplexed, one transfer at a time never queued one.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from urllib.parse import quote

from fixtures.launcher import Launcher
from fixtures.servers import _ftp_seed as seed
from tests.procs import arun
from tests.taps import Tap

FILES = {"hello.txt": seed.HELLO, "crlf.txt": seed.CRLF_TEXT, "blob.bin": seed.blob(), **seed.SPECIAL_NAMES}


def most_in_flight(events: list[tuple[str, bytes]]) -> tuple[int, int]:
    """(the most RETR commands sent and not yet ended at once, transfers ended)."""
    sent = ended = most = 0
    for direction, line in events:
        if direction == "send":
            if line.upper().startswith(b"RETR "):
                sent += 1
                most = max(most, sent - ended)
        elif line[:4] in (b"226 ", b"550 ", b"426 ", b"451 "):
            ended += 1
    return most, ended


def saved(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir()}


async def test_one_connection_queues_the_next_file_behind_the_transfer(servers: Launcher, tmp_path: Path) -> None:
    ftp = servers.get("vsftpd")
    tap = Tap((ftp.host, ftp.port), 0.25)
    port = await tap.start()
    try:
        urls = [f"ftp://127.0.0.1:{port}/pub/{quote(name)}" for name in FILES]
        anyurl = str(Path(sys.executable).parent / "anyurl")
        rc, _, err = await arun([anyurl, "get", "-q", "--parallel", "1", "-d", str(tmp_path), *urls],
                                within=120, env=dict(os.environ))
    finally:
        await tap.close()
    assert rc == 0, err.decode()
    assert saved(tmp_path) == FILES  # every file byte for byte
    assert tap.connections == 1  # --parallel 1: one control connection
    most, ended = most_in_flight(tap.events)
    assert ended == len(FILES)
    # a RETR written before the 226 of the one ahead of it
    assert most >= 2, [line for _, line in tap.events]

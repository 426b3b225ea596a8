"""`anyurl get --parallel 1` of many articles: one connection to INN, and its commands pipelined.

A tap between the command and INN (not a server: it forwards every byte both ways) keeps what
each side sent, in the order it passed, so the test sees how many ARTICLE commands were in
flight at once. Before the batch counted a server that had answered in a window as multiplexed,
one transfer at a time never opened a window and every article cost a round trip.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from fixtures.launcher import Endpoint, Launcher
from tests.procs import arun
from tests.taps import Tap

# status codes followed by a dot-terminated block (RFC 3977 section 3.2)
_MULTI = {100, 101, 215, 220, 221, 222, 224, 225, 230, 231}


def most_in_flight(events: list[tuple[str, bytes]]) -> tuple[int, int]:
    """(the most ARTICLE commands sent and not yet answered at once, ARTICLE replies seen)."""
    sent = answered = most = 0
    block = False
    for direction, line in events:
        if direction == "send":
            if line.upper().startswith(b"ARTICLE "):
                sent += 1
                most = max(most, sent - answered)
            continue
        if block:  # inside an article or another multi-line answer
            block = line != b".\r\n"
            continue
        code = int(line[:3])
        block = code in _MULTI
        if code == 220 or code in (412, 420, 423, 430):
            answered += 1
    return most, answered


def bodies(folder: Path) -> set[bytes]:
    files = list(folder.iterdir())
    found = {p.read_bytes().replace(b"\r\n", b"\n").split(b"\n\n", 1)[1] for p in files}
    assert len(found) == len(files)
    return found


async def test_one_connection_pipelines_a_batch_of_articles(servers: Launcher, tmp_path: Path) -> None:
    inn: Endpoint = servers.get("inn")
    many = inn.info["many_group"]
    n = 40
    tap = Tap((inn.host, inn.port), 0.25)
    port = await tap.start()
    try:
        urls = [f"nntp://127.0.0.1:{port}/{many}/{i}" for i in range(1, n + 1)]
        anyurl = str(Path(sys.executable).parent / "anyurl")
        rc, _, err = await arun([anyurl, "get", "-q", "--parallel", "1", "-d", str(tmp_path), *urls],
                                within=120, env=dict(os.environ))
    finally:
        await tap.close()
    assert rc == 0, err.decode()
    # every article whole: its own body after the head
    assert bodies(tmp_path) == {f"body of many {i}\n".encode() for i in range(1, n + 1)}
    assert tap.connections == 1  # --parallel 1: one connection to the server
    most, answered = most_in_flight(tap.events)
    assert answered == n
    # more than the 16 stream workers per turn: one connection fills a window of its own
    assert most > 16, f"at most {most} ARTICLE commands in flight on the one connection"


@pytest.fixture(autouse=True)
def _news_server_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NNTPSERVER", raising=False)

"""``anyurl get --parallel N`` (anyurl.cli.get): the stream workers that run transfers sharing
a connection (HTTP/2 streams, pipelined GETs) end once their origin no longer multiplexes, so
the plain transfers that follow are not queued for turns behind hundreds of them."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from anyurl.cli import get
from anyurl.cli.commands import main
from anyurl.handlers.file import FileHandler


def test_stream_workers_end_when_their_origin_stops_multiplexing(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # pipelining judged on for the first transfers (a slow first answer), off after: on a loaded
    # machine's loopback that is what H1Client.pipelines says
    src = tmp_path / "src"
    src.mkdir()
    urls = []
    for i in range(300):
        (src / f"f{i:03d}.txt").write_text(f"file {i}\n")
        urls.append((src / f"f{i:03d}.txt").as_uri())
    (tmp_path / "list.txt").write_text("\n".join(urls) + "\n")
    asked = [0]

    def multiplexed(self: FileHandler, url: Any) -> bool:
        asked[0] += 1
        return asked[0] <= 3

    tasks: list[int] = []
    real_open = FileHandler.open

    async def open_(self: FileHandler, req: Any) -> Any:
        tasks.append(len(asyncio.all_tasks()))
        return await real_open(self, req)

    monkeypatch.setattr(FileHandler, "multiplexed", multiplexed, raising=False)
    monkeypatch.setattr(FileHandler, "open", open_)
    monkeypatch.setattr(get, "stream_worker_count", lambda turns: 4 * turns)
    out = tmp_path / "out"
    assert main(["get", "-q", "--parallel", "4", "-d", str(out), "-i", str(tmp_path / "list.txt")]) == 0
    assert len(list(out.iterdir())) == 300
    assert max(tasks) >= 4 * 4  # the stream workers did start
    # and ended: the last transfers ran among the plain workers only (was: all 16 to the end)
    assert max(tasks[-100:]) <= 4 + 1

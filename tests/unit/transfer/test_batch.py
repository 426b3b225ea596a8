"""The library's batch engine (anyurl.transfer.batch, imported as anyurl.batch) on file: URLs: every URL gives one result as its
transfer ends, errors included; the input is read lazily; a Feed may grow while it runs."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from anyurl import Client, Limits
from anyurl.errors import ConfigurationError, ResourceNotFound, URLSyntaxError
from anyurl.transfer.batch import GC_THRESHOLD, Batch, Directory, Feed, Item, Memory, Result, Sink


def files(tmp_path: Path, n: int) -> list[Path]:
    src = tmp_path / "src"
    src.mkdir(exist_ok=True)
    made = []
    for i in range(n):
        f = src / f"f{i}.txt"
        f.write_bytes(f"file {i}\n".encode() * (i + 1))
        made.append(f)
    return made


async def test_results_into_memory_with_errors_as_results(tmp_path: Path) -> None:
    made = files(tmp_path, 5)
    urls = [f.as_uri() for f in made] + [(tmp_path / "missing").as_uri(), "http://[bad"]
    async with Client() as client, Batch(client, urls, Memory(), parallel=3) as results:
        got = [r async for r in results]
    assert sorted(r.index for r in got) == list(range(7))
    by = {r.index: r for r in got}
    for i, f in enumerate(made):
        assert by[i].ok and by[i].response is not None
        assert by[i].response.content == f.read_bytes()
    assert isinstance(by[5].error, ResourceNotFound) and by[5].url is not None
    assert isinstance(by[6].error, URLSyntaxError) and by[6].url is None and by[6].given == "http://[bad"


async def test_results_into_a_directory_with_unique_names_in_input_order(tmp_path: Path) -> None:
    made = files(tmp_path, 3)
    urls = [made[i % 3].as_uri() for i in range(9)]
    seen: list[Result] = []
    async with Client() as client:
        batch = Batch(client, urls, Directory(tmp_path / "out"), parallel=4, on_result=seen.append)
        await batch.run()
    assert (batch.succeeded, batch.failed, batch.taken) == (9, 0, 9)
    check_saved(tmp_path / "out", seen, made)


def check_saved(out: Path, seen: list[Result], made: list[Path]) -> None:
    for r in seen:
        i = r.index
        name = f"f{i % 3}.txt" + (f".{i // 3}" if i >= 3 else "")
        assert r.dest == str(out / name)
        assert Path(r.dest).read_bytes() == made[i % 3].read_bytes()
    assert sorted(os.listdir(out)) == sorted(Path(r.dest or "").name for r in seen)


@pytest.mark.timeout(600)  # ~20 s alone; generous for a loaded machine
async def test_a_generator_of_100000_urls_is_read_lazily(tmp_path: Path) -> None:
    missing = (tmp_path / "none").as_uri()
    read = [0]
    most_ahead = [0]

    def urls() -> Iterator[str]:
        for i in range(100_000):
            read[0] += 1
            yield f"{missing}{i}"

    done = [0]

    def count(r: Result) -> None:
        assert isinstance(r.error, ResourceNotFound)
        done[0] += 1
        most_ahead[0] = max(most_ahead[0], read[0] - done[0])

    async with Client() as client:
        batch = Batch(client, urls(), Memory(), parallel=4, on_result=count)
        await asyncio.wait_for(batch.run(), 600)
    assert done[0] == read[0] == 100_000
    # never more URLs read than the workers hold (a list of them would be 100,000 ahead)
    assert most_ahead[0] <= 4 + 1


async def test_a_feed_grows_while_the_batch_runs_and_results_come_back_as_they_end(tmp_path: Path) -> None:
    # a crawler's loop: each result leads to the next URLs, put while the batch runs
    made = files(tmp_path, 30)
    feed = Feed([made[0].as_uri()])
    fetched: list[bytes] = []
    put = 1
    async with Client() as client, Batch(client, feed, parallel=2) as results:
        async for r in results:
            assert r.ok and r.response is not None
            fetched.append(r.response.content)
            for nxt in (2 * r.index + 1, 2 * r.index + 2):  # a binary tree of links
                if nxt < len(made):
                    feed.put(made[nxt].as_uri())
                    put += 1
            if len(fetched) == put:
                feed.close()  # nothing pending and nothing more to put
    assert sorted(fetched) == sorted(f.read_bytes() for f in made)


async def test_an_async_iterable_and_a_sink_of_ones_own(tmp_path: Path) -> None:
    made = files(tmp_path, 4)

    async def urls() -> AsyncIterator[str]:
        for f in made:
            await asyncio.sleep(0)
            yield f.as_uri()

    class Sizes(Sink):
        def __init__(self) -> None:
            self.sizes: dict[str, int] = {}

        async def transfer(self, client: Client, item: object) -> None:
            r = await client.fetch(item.url)  # type: ignore[attr-defined]
            self.sizes[r.url] = len(r.content)

    sink = Sizes()
    async with Client() as client:
        await Batch(client, urls(), sink).run()
    assert sink.sizes == {f.as_uri(): f.stat().st_size for f in made}


async def test_one_url_is_refused_and_iterating_needs_async_with() -> None:
    async with Client() as client:
        with pytest.raises(ConfigurationError, match="iterable of URLs"):
            Batch(client, "file:///etc/hostname")
        with pytest.raises(ConfigurationError, match="async with"):
            async for _ in Batch(client, []):
                pass


async def test_leaving_early_stops_the_workers(tmp_path: Path) -> None:
    made = files(tmp_path, 3)

    def forever() -> Iterator[str]:
        while True:
            yield made[0].as_uri()

    async with Client() as client:
        async with Batch(client, forever(), parallel=2) as results:
            async for _ in results:
                break
        assert results.taken < 1000  # the window and the workers, not the endless input


class Tagged(str):
    """A URL with a crawler's own field."""

    depth: int


async def test_the_object_given_comes_back_and_an_async_on_result_is_awaited(tmp_path: Path) -> None:
    made = files(tmp_path, 3)
    urls = []
    for i, f in enumerate(made):
        u = Tagged(f.as_uri())
        u.depth = i
        urls.append(u)
    depths: dict[int, int] = {}

    async def note(r: Result) -> None:
        await asyncio.sleep(0)
        assert isinstance(r.given, Tagged) and r.ok
        depths[r.given.depth] = len(r.response.content) if r.response is not None else -1

    async with Client() as client:
        await Batch(client, urls, on_result=note).run()
    assert depths == {i: f.stat().st_size for i, f in enumerate(made)}


_FREEZE_PROBE = """
import asyncio, gc, sys
from anyurl import Client
from anyurl.batch import Batch, Memory
Batch.freeze_gc = sys.argv[2] == "on"
async def main():
    async with Client() as client:
        before, threshold_before = gc.get_freeze_count(), gc.get_threshold()[0]
        during = []
        batch = Batch(client, [sys.argv[1]] * 3, Memory(), on_result=lambda r: during.append(gc.get_threshold()[0]))
        await batch.run()
        assert batch.succeeded == 3
        print(before, gc.get_freeze_count(), min(during), threshold_before, gc.get_threshold()[0])
asyncio.run(main())
"""


@pytest.mark.parametrize("setting", ["on", "off"])
def test_the_first_batch_moves_what_lives_out_of_the_collectors_reach_and_collections_are_rarer(tmp_path: Path, setting: str) -> None:
    # (a process of its own: the test process may have run a batch already)
    import subprocess
    import sys

    f = tmp_path / "a.txt"
    f.write_text("a")
    out = subprocess.run([sys.executable, "-c", _FREEZE_PROBE, f.as_uri(), setting], capture_output=True,
                         text=True, timeout=120, check=True).stdout.split()
    # (counts relative to the start: CPython 3.12 starts with a few hundred objects frozen already)
    before, after, threshold, threshold_before, threshold_after = map(int, out)
    assert threshold_after == threshold_before  # the caller's threshold back after the batch
    if setting == "on":
        assert after - before > 10_000  # the modules loaded, the client: no collection walks them again
        assert threshold == GC_THRESHOLD > threshold_before  # fewer collections over the transfers in flight
    else:
        assert after == before
        assert threshold == threshold_before


async def test_connections_begun_early_and_never_taken_are_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    # a sink of its own that never connects: the sockets begun for its first origin are closed
    import socket

    from anyurl.net import handoff
    from anyurl.transfer import batch as batch_module

    made: list[batch_module.Early] = []
    real = batch_module.Early
    monkeypatch.setattr(batch_module, "Early", lambda key, count: made.append(real(key, count)) or made[-1])
    monkeypatch.setattr(handoff, "_taker", None)  # (no CLI test's left behind)
    monkeypatch.delenv("ANYURL_EARLY_CONNECT", raising=False)

    class Nothing(Sink):
        async def transfer(self, client: Client, item: Item) -> None:
            await asyncio.sleep(0.05)  # (the connects get under way)

    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        urls = [f"http://127.0.0.1:{port}/{i}" for i in range(5)] + [f"http://127.0.0.2:{port}/"]
        async with Client(limits=Limits(per_host=3)) as client:
            batch = Batch(client, iter(urls), Nothing(), parallel=4)
            await batch.run()
    assert batch.succeeded == 6
    assert len(made) == 1 and made[0].key == ("http", "127.0.0.1", port)
    assert made[0].count == 3  # one per turn among the first four URLs, as many as the pool opens
    assert made[0].abandoned and not made[0].socks
    assert handoff.taker() is None


async def test_no_early_connect_when_turned_off_or_proxied(monkeypatch: pytest.MonkeyPatch) -> None:
    from anyurl.transfer import batch as batch_module

    made: list[object] = []
    monkeypatch.setattr(batch_module, "Early", lambda key, count: made.append(key))

    class Nothing(Sink):
        async def transfer(self, client: Client, item: Item) -> None:
            return None

    urls = ["http://127.0.0.1:9/a", "http://127.0.0.1:9/b"]
    monkeypatch.setenv("ANYURL_EARLY_CONNECT", "0")
    async with Client() as client:
        await Batch(client, urls, Nothing()).run()
    monkeypatch.delenv("ANYURL_EARLY_CONNECT")
    async with Client(proxy="http://127.0.0.1:9") as client:
        await Batch(client, urls, Nothing()).run()
    async with Client() as client:
        await Batch(client, ["file:///etc/hostname", *urls], Nothing()).run()  # (file: connects nowhere)
    assert made == []

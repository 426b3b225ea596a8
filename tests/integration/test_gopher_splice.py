"""gopher downloads through splice(2) from real servers (gophernicus, pygopherd): exact bytes.

A download of a binary item into a file or /dev/null moves the data socket ->
pipe -> file without passing it through Python; text items (with their "."
framing to undo) never do. A spy on ``os.splice`` tells which path ran.
"""

from __future__ import annotations

import filecmp
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fixtures.launcher import Endpoint, Launcher
from fixtures.servers import _gopher_seed as seed

from anyurl.client import Client
from anyurl.download import download
from anyurl.handlers import stream

pytestmark = pytest.mark.skipif(not hasattr(os, "splice"), reason="splice(2) is Linux-only")

SIZE = 8 << 20 | 12345  # not a multiple of any buffer or pipe size


@pytest.fixture(scope="module", params=["pygopherd", "gophernicus"])
def gs(request: pytest.FixtureRequest, servers: Launcher) -> Endpoint:
    return servers.get(request.param)


@pytest.fixture(scope="module")
def big(gs: Endpoint) -> Iterator[Path]:
    """An 8 MiB item of every byte value in the server's tree (removed after the module)."""
    path = Path(gs.info["root"]) / "splice-big.bin"
    block = bytes(range(256)) * 4096
    with open(path, "wb") as f:
        for i in range(SIZE // len(block)):
            f.write(block[i:] + block[:i])
        f.write(os.urandom(SIZE % len(block)))
    os.chmod(path, 0o644)
    yield path
    path.unlink(missing_ok=True)


@pytest.fixture
def splices(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    seen: list[int] = []
    real = os.splice

    def spy(src: int, dst: int, count: int, *args: Any, **kw: Any) -> int:
        n = real(src, dst, count, *args, **kw)
        seen.append(n)
        return n

    monkeypatch.setattr(stream, "_splice", spy)
    return seen


def same(a: Path, b: Path) -> bool:
    return a.stat().st_size == b.stat().st_size and filecmp.cmp(a, b, shallow=False)


def url(ep: Endpoint, tail: str) -> str:
    return f"gopher://{ep.host}:{ep.port}{tail}"


async def test_big_binary_item_is_spliced_exactly(gs: Endpoint, big: Path, tmp_path: Path,
                                                  splices: list[int]) -> None:
    dest = tmp_path / "big.bin"
    async with Client() as c:
        await download(c, url(gs, "/9/splice-big.bin"), dest)
    assert same(dest, big)
    assert sum(splices) > SIZE  # in and out of the pipe: most bytes twice
    assert os.listdir(tmp_path) == ["big.bin"]


async def test_big_binary_item_to_dev_null(gs: Endpoint, big: Path, splices: list[int]) -> None:
    async with Client() as c:
        await download(c, url(gs, "/9/splice-big.bin"), os.devnull)
    assert SIZE < sum(splices) <= 2 * SIZE


async def test_gopher_plus_item_with_its_length(big: Path, servers: Launcher, tmp_path: Path,
                                                splices: list[int]) -> None:
    pyg = servers.get("pygopherd")
    if Path(pyg.info["root"]) != big.parent:
        pytest.skip("the item is in the other server's tree")
    dest = tmp_path / "big.bin"
    async with Client() as c:
        await download(c, url(pyg, "/9/splice-big.bin%09%09+"), dest)
    assert same(dest, big)
    assert splices


async def test_small_binary_items(gs: Endpoint, tmp_path: Path) -> None:
    async with Client() as c:
        for tail, data in (("/9/sub/blob.bin", seed.blob()), ("/I/sub/image.png", seed.PNG)):
            dest = tmp_path / tail.rsplit("/", 1)[1]
            await download(c, url(gs, tail), dest)
            assert dest.read_bytes() == data


async def test_text_items_are_not_spliced(gs: Endpoint, tmp_path: Path, splices: list[int]) -> None:
    dest = tmp_path / "t.txt"
    async with Client() as c:
        await download(c, url(gs, "/0" + gs.info["stuffed"]), dest)
    assert dest.read_bytes() == seed.STUFFED_PLAIN  # ".." undone, "." end line dropped
    assert splices == []

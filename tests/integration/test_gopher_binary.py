"""gopher binary downloads from real servers (gophernicus, pygopherd): exact bytes.

A big binary item (every byte value, a size that is no multiple of any buffer)
arrives byte for byte; a Gopher+ item stops at its announced length; a text
item has its "." framing undone.
"""

from __future__ import annotations

import filecmp
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixtures.launcher import Endpoint, Launcher
from fixtures.servers import _gopher_seed as seed

from anyurl.client import Client
from anyurl.transfer.download import download

SIZE = 8 << 20 | 12345  # not a multiple of any buffer size


@pytest.fixture(scope="module", params=["pygopherd", "gophernicus"])
def gs(request: pytest.FixtureRequest, servers: Launcher) -> Endpoint:
    return servers.get(request.param)


def _write_big(path: Path) -> None:
    block = bytes(range(256)) * 4096
    with open(path, "wb") as f:
        for i in range(SIZE // len(block)):
            f.write(block[i:] + block[:i])
        f.write(os.urandom(SIZE % len(block)))
    os.chmod(path, 0o644)


@pytest.fixture(scope="module")
def big(gs: Endpoint) -> Iterator[Path]:
    """An 8 MiB item of every byte value in the server's tree (removed after the module)."""
    path = Path(gs.info["root"]) / "binary-big.bin"
    _write_big(path)
    yield path
    path.unlink(missing_ok=True)


@pytest.fixture(scope="module")
def plus_big(servers: Launcher) -> Iterator[tuple[Endpoint, Path]]:
    """The same kind of item in pygopherd's tree: the Gopher+ server of the two."""
    ep = servers.get("pygopherd")
    path = Path(ep.info["root"]) / "binary-plus.bin"
    _write_big(path)
    yield ep, path
    path.unlink(missing_ok=True)


def same(a: Path, b: Path) -> bool:
    return a.stat().st_size == b.stat().st_size and filecmp.cmp(a, b, shallow=False)


def url(ep: Endpoint, tail: str) -> str:
    return f"gopher://{ep.host}:{ep.port}{tail}"


async def test_big_binary_item_is_exact(gs: Endpoint, big: Path, tmp_path: Path) -> None:
    dest = tmp_path / "big.bin"
    async with Client() as c:
        await download(c, url(gs, "/9/binary-big.bin"), dest)
    assert same(dest, big)
    assert os.listdir(tmp_path) == ["big.bin"]


async def test_gopher_plus_item_with_its_length(plus_big: tuple[Endpoint, Path], tmp_path: Path) -> None:
    pyg, item = plus_big
    dest = tmp_path / "big.bin"
    async with Client() as c:
        await download(c, url(pyg, "/9/binary-plus.bin%09%09+"), dest)
    assert same(dest, item)


async def test_small_binary_items(gs: Endpoint, tmp_path: Path) -> None:
    async with Client() as c:
        for tail, data in (("/9/sub/blob.bin", seed.blob()), ("/I/sub/image.png", seed.PNG)):
            dest = tmp_path / tail.rsplit("/", 1)[1]
            await download(c, url(gs, tail), dest)
            assert dest.read_bytes() == data


async def test_text_item_framing_undone(gs: Endpoint, tmp_path: Path) -> None:
    dest = tmp_path / "t.txt"
    async with Client() as c:
        await download(c, url(gs, "/0" + gs.info["stuffed"]), dest)
    assert dest.read_bytes() == seed.STUFFED_PLAIN  # ".." undone, "." end line dropped

"""``fsspec.get_mapper`` over gopher menus of the real servers (pygopherd, gophernicus): keys
are the items' paths below the menu, and reading a key gives the item's bytes."""

from __future__ import annotations

import pytest

fsspec = pytest.importorskip("fsspec")
from fixtures.launcher import Endpoint, Launcher  # noqa: E402
from fixtures.servers import _gopher_seed as gseed  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def registered() -> None:
    from fsspec.registry import known_implementations, registry

    if "gopher" not in registry and "gopher" not in known_implementations:  # an editable install too old
        fsspec.register_implementation("gopher", "anyurl.adapters.fsspec.AnyURLFileSystem")


@pytest.fixture(scope="module", params=["pygopherd", "gophernicus"])
def ep(request: pytest.FixtureRequest, servers: Launcher) -> Endpoint:
    return servers.get(request.param)


def g(ep: Endpoint, rest: str) -> str:
    return f"gopher://{ep.host}:{ep.port}{rest}"


def text(data: bytes) -> bytes:
    return data.replace(b"\r\n", b"\n")  # gophernicus sends text with CRLF line ends


# how each server spells the selector of "data/with space.csv" in its menu: the key is that
# selector's rest, percent-encoded as in the item's URL (gophernicus writes a space as "#040")
SPACED_KEY = {"pygopherd": "with%20space.csv", "gophernicus": "with%23040space.csv"}


def test_keys_are_paths_below_the_menu_and_read_the_items(ep: Endpoint) -> None:
    spaced = SPACED_KEY[ep.name]
    for root in ("/1/data", "/1/data/"):
        m = fsspec.get_mapper(g(ep, root))
        assert sorted(m) == ["sub/deep.csv", "table.csv", spaced]
        assert len(m) == 3
        assert text(m["table.csv"]) == gseed.TABLES["data/table.csv"]
        assert text(m["sub/deep.csv"]) == gseed.TABLES["data/sub/deep.csv"]
        assert text(m[spaced]) == gseed.TABLES["data/with space.csv"]
        assert "table.csv" in m and "sub/deep.csv" in m and spaced in m
        assert "missing.csv" not in m
        with pytest.raises(KeyError):
            m["missing.csv"]
        assert {k: text(v) for k, v in m.getitems(["table.csv", "sub/deep.csv"]).items()} == {
            "table.csv": gseed.TABLES["data/table.csv"], "sub/deep.csv": gseed.TABLES["data/sub/deep.csv"]}


def test_a_key_with_a_space_is_percent_encoded(servers: Launcher) -> None:
    m = fsspec.get_mapper(g(servers.get("pygopherd"), "/1/data"))
    assert m["with space.csv"] == m["with%20space.csv"] == gseed.TABLES["data/with space.csv"]


def test_a_root_without_a_type_keys_by_type_and_selector(ep: Endpoint) -> None:
    m = fsspec.get_mapper(g(ep, "/"))
    assert text(m["0/data/table.csv"]) == gseed.TABLES["data/table.csv"]
    assert text(m["0/hello.txt"]) == gseed.HELLO


def test_a_menu_read_through_a_joined_key_stays_a_menu(ep: Endpoint) -> None:
    """The key of a sub-menu joins to a type-1 URL that is really a menu: still a listing."""
    fs = fsspec.filesystem("gopher")
    m = fsspec.get_mapper(g(ep, "/1/data"))
    assert fs.isdir(g(ep, "/1/data/sub")) and "sub" not in m
    with fsspec.open(m.root + "/table.csv", "rb") as f:  # fsspec.open of the joined URL
        assert text(f.read()) == gseed.TABLES["data/table.csv"]

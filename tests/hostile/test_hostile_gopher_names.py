"""A gopher menu written to mislead a crawler: hosts that rewrite the URL, links to local
files, selectors whose last segment is ".." or holds a NUL. What `Client.ls` hands out must
say what the menu line said, lead nowhere local, and name files safely."""

from __future__ import annotations

import time

import pytest
from tests.hostile.fakes.gopher_menus import gopher_menus

from anyurl import Client, FetchTimeout, Timeouts


async def test_hostile_menu_items_are_bounded_to_what_they_say() -> None:
    menu = ("0ok\t/pub/ok.txt\t127.0.0.1\t{p}\r\n"
            "0hostile host\t/h\tevil.example/../x\t70\r\n"
            "hlocal file\tURL:file:///etc/passwd\t127.0.0.1\t{p}\r\n"
            "0dotdot\t/a/..\t127.0.0.1\t{p}\r\n"
            "0nul\t/n\x00ul\t127.0.0.1\t{p}\r\n"
            "0up\t../../etc/passwd\t127.0.0.1\t{p}\r\n.\r\n")
    with gopher_menus({}) as g:
        g.menus[""] = menu.format(p=g.port).encode()
        async with Client(timeouts=Timeouts(connect=5, read=5, total=30)) as c:
            got = {e.title: e async for e in c.ls(f"gopher://127.0.0.1:{g.port}/1")}
    base = f"gopher://127.0.0.1:{g.port}"
    assert got["ok"].url == f"{base}/0/pub/ok.txt" and got["ok"].name == "ok.txt"
    # it said host "evil.example/../x": a URL naming evil.example with another selector would lie
    assert got["hostile host"].url is None
    assert "not a host name" in got["hostile host"].meta["url_refused"]
    # a remote menu never leads to local files (as for HTML pages)
    assert got["local file"].url is None and "local file" in got["local file"].meta["url_refused"]
    # names are file names: never "..", never a NUL, never a "/"
    assert got["dotdot"].name == "_.." and got["dotdot"].url == f"{base}/0/a/.."
    assert got["nul"].name == "n_ul"
    assert got["up"].name == "passwd"
    assert all("/" not in e.name and e.name not in (".", "..") for e in got.values())
    assert g.log == [""]


async def test_silent_gopher_server_ends_at_the_total_timeout_and_says_so() -> None:
    # The read wait was cut to what was left of Timeouts.total, and the message printed that
    # remainder ("no data from the gopher server for 0.6971001799975056 s").
    with gopher_menus({}, tarpit=True) as g:
        async with Client(timeouts=Timeouts(read=30, total=0.5)) as c:
            t0 = time.monotonic()
            with pytest.raises(FetchTimeout) as info:
                async for _ in c.ls(f"gopher://127.0.0.1:{g.port}/1/slow"):
                    pass
            took = time.monotonic() - t0
            assert 0.4 < took < 3
            assert str(info.value) == (f"gopher://127.0.0.1:{g.port}/1/slow: "
                                       "the gopher transfer took longer than the total timeout 0.5 s")
        async with Client(timeouts=Timeouts(read=0.5)) as c:
            with pytest.raises(FetchTimeout, match=r"no data from the gopher server for 0.5 s$"):
                await c.fetch(f"gopher://127.0.0.1:{g.port}/0/slow")

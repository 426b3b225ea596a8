"""`anyurl get` of a news batch over many groups: its workers wait their turn, not a PoolTimeout.

A batch runs max(64, 16 x N) workers once news pipelines, on N connections (--parallel N). A
pipelined window reads in one group, so with more groups than connections a worker for another
group waits until a connection's window has drained: with large articles (slow to read) the
last groups of a batch waited past ``Timeouts.pool`` while the one connection was busy with the
batch's own articles the whole time, and failed with PoolTimeout.

"Large" is made deterministic here: each article takes ``HOLD`` seconds to read (the CLI's
worker holds the loop when the body opens, as a slow disk or a large article would), and
``Timeouts.pool`` is cut to ``POOL`` seconds, well under the time the later groups wait behind
the earlier ones (GROUPS / 2 windows of PER_GROUP x HOLD), well over one article's HOLD.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fixtures.launcher import Endpoint
from fixtures.servers import inn as innd
from tests.integration.test_walk import walk_inn  # noqa: F401 - the fixture (compose mode runs a local INN)

from anyurl.cli import commands as cli
from anyurl.cli import get as cli_get

GROUPS = 12
PER_GROUP = 8
HOLD = 0.05  # s per article
POOL = 1.5  # s; the last groups waited ~GROUPS / 2 * PER_GROUP * HOLD = 2.4 s and more


@pytest.fixture
def groups_of_articles(walk_inn: Endpoint) -> tuple[Endpoint, list[str], dict[str, bytes]]:  # noqa: F811
    """GROUPS new groups of PER_GROUP articles each: (server, the articles' nntp URLs in group
    order, each article's body by URL)."""
    ep = walk_inn
    tag = uuid.uuid4().hex[:8]
    names = [f"{ep.info['prefix']}.batch{tag}.g{i}" for i in range(GROUPS)]
    for g in names:
        innd.new_group(g)
    arts, urls, want = [], [], {}
    for g in names:
        for n in range(1, PER_GROUP + 1):
            body = f"article {n} of {g}\n" + "line of a large article\n" * 200
            arts.append(innd.article(g, f"<b{n}.{g}@{innd.DOMAIN}>", f"Batch {n}", body))
            url = f"nntp://{ep.host}:{ep.port}/{g}/{n}"
            urls.append(url)
            want[url] = body.encode()
    innd.inject(arts, dict.fromkeys(names, PER_GROUP))
    return ep, urls, want


def _slow_articles(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each article holds its window HOLD seconds once its body opens; Timeouts.pool is POOL."""
    real_check = cli_get._refuse_listing

    def refuse_listing(u: Any) -> Callable[[Any], None]:
        check = real_check(u)

        def slowly(body: Any) -> None:
            time.sleep(HOLD)  # noqa: ASYNC251 - the point: a slow reader holds the connection's window
            check(body)

        return slowly

    monkeypatch.setattr(cli_get, "_refuse_listing", refuse_listing)
    real_client = cli.make_client

    def short_pool(*args: Any) -> Any:
        client = real_client(*args)
        client.timeouts = dataclasses.replace(client.timeouts, pool=POOL)
        return client

    monkeypatch.setattr(cli, "make_client", short_pool)


@pytest.mark.parametrize("parallel", [1, 2])
def test_a_news_batch_over_many_groups_waits_its_turn(groups_of_articles: tuple[Endpoint, list[str], dict[str, bytes]],
                                                      tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      parallel: int) -> None:
    _, urls, want = groups_of_articles
    _slow_articles(monkeypatch)
    listing = tmp_path / "urls.txt"
    listing.write_text("\n".join(urls) + "\n")
    out = tmp_path / "out"
    err = io.StringIO()
    t0 = time.monotonic()
    with contextlib.redirect_stderr(err):
        code = cli.main(["get", "-q", "--parallel", str(parallel), "-d", str(out), "-i", str(listing)])
    took = time.monotonic() - t0
    assert code == 0, err.getvalue()
    assert "PoolTimeout" not in err.getvalue() and "waited" not in err.getvalue(), err.getvalue()
    # every article whole, none twice: the batch really read GROUPS x PER_GROUP of them
    found = sorted(p.read_bytes().replace(b"\r\n", b"\n").split(b"\n\n", 1)[1] for p in out.iterdir())
    assert found == sorted(want.values())
    assert took > len(urls) * HOLD / parallel  # the hold did slow the batch (else the test proves nothing)

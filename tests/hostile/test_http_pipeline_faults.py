"""HTTP/1.1 pipelining against a server that breaks the pipeline (tests/hostile/fakes/http_pipeline.py).

Each test proves a connection with one GET, then sends a batch of GETs with one
connection allowed (so they go pipelined), lets the server break the pipeline, and
checks that every body is right, that the unanswered requests were sent again on a
new connection, and that the origin then gets one request at a time (no connection
of a later batch holds two requests at once).
"""

from __future__ import annotations

import asyncio

import pytest
from tests.hostile.fakes.http_pipeline import PipelineServer, body_of

from anyurl import Client, Limits, Timeouts
from anyurl.handlers.http import HTTPOptions

PATHS = [f"/file{i}" for i in range(8)]


def _client(read: float = 10.0) -> Client:
    return Client(limits=Limits(per_host=1), timeouts=Timeouts(read=read), http=HTTPOptions(pipeline=8))


async def _batch(client: Client, srv: PipelineServer) -> None:
    bodies = await asyncio.gather(*(client.fetch(f"http://127.0.0.1:{srv.port}{p}") for p in PATHS))
    assert [b.content for b in bodies] == [body_of(p) for p in PATHS]


async def test_a_well_server_sees_the_requests_pipelined() -> None:
    async with PipelineServer() as srv, _client() as client:
        await client.fetch(f"http://127.0.0.1:{srv.port}/first")
        await _batch(client, srv)
        assert srv.connections == 1
        assert max(srv.depths) > 1  # several requests were there before the first answer
        await _batch(client, srv)  # and it goes on pipelining
        assert srv.connections == 1


async def test_the_batch_after_the_first_answer_goes_in_one_burst() -> None:
    # no probation round trip (one request behind one, then more once it was answered): the
    # whole batch goes behind the first answer at once, and the next batch too
    async with PipelineServer() as srv, _client() as client:
        await client.fetch(f"http://127.0.0.1:{srv.port}/first")
        await _batch(client, srv)
        await _batch(client, srv)
        assert srv.bursts == [[1, len(PATHS), len(PATHS)]]


@pytest.mark.parametrize("fault", ["close", "drop", "garbage"])
async def test_a_broken_pipeline_is_sent_again_and_the_origin_stops_pipelining(fault: str) -> None:
    # "drop" is seen only when the read timeout ends the wait: keep it short
    async with PipelineServer(fault) as srv, _client(read=1.0 if fault == "drop" else 10.0) as client:
        await client.fetch(f"http://127.0.0.1:{srv.port}/first")
        await _batch(client, srv)
        assert srv.faulted
        assert srv.connections >= 2  # the unanswered ones went on a new connection
        # the batch went in one burst, and nothing after it on the connection that broke it
        # (a request sent later could have taken a dropped one's answer)
        assert srv.bursts[0] == [1, len(PATHS)]
        before = len(srv.depths)
        await _batch(client, srv)
        assert all(d <= 1 for d in srv.depths[before - 1:])  # (the one open since, and any new)
        assert not client.handler(client.parse(f"http://127.0.0.1:{srv.port}/")).multiplexed(
            client.parse(f"http://127.0.0.1:{srv.port}/"))


async def test_a_burst_from_cold_pipelines_once_the_connections_answer() -> None:
    # no request made before: the batch itself opens the connections, the rest wait for them
    async with PipelineServer() as srv, Client(limits=Limits(per_host=2), http=HTTPOptions(pipeline=8)) as client:
        await _batch(client, srv)
        assert srv.connections == 2
        assert max(srv.depths) > 1


async def test_after_a_long_response_the_next_ones_go_one_at_a_time_then_deeper_again() -> None:
    async with PipelineServer() as srv, _client() as client:
        await client.fetch(f"http://127.0.0.1:{srv.port}/first")
        big = await client.fetch(f"http://127.0.0.1:{srv.port}/big")
        assert big.content == body_of("/big")
        before = srv.depths[-1]
        await _batch(client, srv)
        assert srv.depths[-1] == before <= 1  # nothing pipelined right after the long one
        await _batch(client, srv)  # the short answers grew the depth again
        assert srv.depths[-1] > 1
        assert srv.connections == 1

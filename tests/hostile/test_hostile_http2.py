"""HTTP/2 faults nginx will not produce, from a small h2 server of our own (h2_faults.py):
GOAWAY mid-batch, RST_STREAM REFUSED_STREAM, a flood of headers, a body larger than
max_size, a stalled stream, a low stream limit; and per_host_requests as politeness."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import time
from pathlib import Path

import pytest
from fixtures.servers.aiosmtpd_server import make_cert
from tests.hostile.fakes.h2_faults import MALFORMED, H2FaultServer, body_for
from tests.procs import arun

from anyurl import Client, FetchTimeout, Limits, PoolTimeout, ProtocolError, Timeouts, TransferError
from anyurl.cli.session import stream_worker_count
from anyurl.handlers.http import HTTPOptions


@pytest.fixture(scope="module")
def cert_key(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return make_cert(tmp_path_factory.mktemp("h2tls"))


def _options(cert: Path) -> HTTPOptions:
    ctx = ssl.create_default_context(cafile=str(cert))
    ctx.set_alpn_protocols(["h2", "http/1.1"])
    return HTTPOptions(ssl_context=ctx)


def _paths(n: int) -> list[str]:
    return [f"/f{i:03d}" for i in range(n)]


async def _fetch_all(c: Client, port: int, paths: list[str]) -> list[bytes]:
    rs = await asyncio.gather(*(c.fetch(f"https://127.0.0.1:{port}{p}") for p in paths))
    return [r.content for r in rs]


async def test_a_batch_shares_one_connection(cert_key: tuple[Path, Path]) -> None:
    async with H2FaultServer(*cert_key, "slow") as srv, Client(http=_options(cert_key[0])) as c:
        paths = _paths(20)
        assert await _fetch_all(c, srv.port, paths) == [body_for(p) for p in paths]
        assert srv.connections == 1 and sorted(srv.requests) == paths
        assert srv.most_open > 1  # streams at once, not one after another


async def test_goaway_mid_batch_finishes_the_processed_and_sends_the_rest_again(
        cert_key: tuple[Path, Path]) -> None:
    async with H2FaultServer(*cert_key, "goaway", hold=6) as srv, Client(http=_options(cert_key[0])) as c:
        paths = _paths(6)
        assert await _fetch_all(c, srv.port, paths) == [body_for(p) for p in paths]
        assert srv.connections == 2
        # each request once on the first connection; the 4 above the GOAWAY's last id once more
        assert len(srv.requests) == 10 and sorted(set(srv.requests)) == paths


async def test_refused_streams_are_sent_again(cert_key: tuple[Path, Path]) -> None:
    async with H2FaultServer(*cert_key, "refuse") as srv, Client(http=_options(cert_key[0])) as c:
        paths = _paths(5)
        assert await _fetch_all(c, srv.port, paths) == [body_for(p) for p in paths]
        assert len(srv.refused) == 2 and len(srv.requests) == 7


async def test_a_flood_of_headers_is_refused(cert_key: tuple[Path, Path]) -> None:
    async with H2FaultServer(*cert_key, "flood") as srv, \
            Client(http=_options(cert_key[0]), limits=Limits(max_line=8192)) as c:
        with pytest.raises(ProtocolError, match="header list|header block") as err:
            await c.fetch(f"https://127.0.0.1:{srv.port}/x")
        assert f"127.0.0.1:{srv.port}/x" in str(err.value)


async def test_more_header_fields_than_allowed_are_refused(cert_key: tuple[Path, Path]) -> None:
    async with H2FaultServer(*cert_key, "many-fields") as srv, Client(http=_options(cert_key[0])) as c:
        with pytest.raises(ProtocolError, match="more than 256 header fields"):
            await c.fetch(f"https://127.0.0.1:{srv.port}/x")


async def test_a_malformed_response_head_fails_its_stream_and_the_others_go_on(
        cert_key: tuple[Path, Path]) -> None:
    # RFC 9113 8.1.1: a malformed response is a stream error; the streams beside it end well
    good = _paths(6)
    async with H2FaultServer(*cert_key, "malformed") as srv, Client(http=_options(cert_key[0])) as c:
        rs = await asyncio.gather(*(c.fetch(f"https://127.0.0.1:{srv.port}{p}") for p in [*MALFORMED, *good]),
                                  return_exceptions=True)
        for path, r in zip(MALFORMED, rs, strict=False):
            assert isinstance(r, ProtocolError), (path, r)
            assert "malformed HTTP/2 response head" in str(r) and path in str(r)
        assert [r.content for r in rs[len(MALFORMED):]] == [body_for(p) for p in good]  # type: ignore[union-attr]
        assert srv.connections == 1


async def test_a_body_larger_than_max_size_fails_and_the_connection_goes_on(
        cert_key: tuple[Path, Path]) -> None:
    async with H2FaultServer(*cert_key, "ok", size=300_000) as srv, \
            Client(http=_options(cert_key[0]), limits=Limits(max_size=100_000)) as c:
        with pytest.raises(TransferError, match="max_size"):
            await c.fetch(f"https://127.0.0.1:{srv.port}/big")
        async with c.open(f"https://127.0.0.1:{srv.port}/again") as body:
            assert await body.read() == body_for("/again", 300_000)
        assert srv.connections == 1


async def test_a_stalled_stream_meets_the_read_timeout_others_go_on(cert_key: tuple[Path, Path]) -> None:
    async with H2FaultServer(*cert_key, "stall") as srv, \
            Client(http=_options(cert_key[0]), timeouts=Timeouts(read=1.0)) as c:
        started = time.monotonic()
        stalled = asyncio.ensure_future(c.fetch(f"https://127.0.0.1:{srv.port}/stall"))
        assert (await c.fetch(f"https://127.0.0.1:{srv.port}/fine")).content == body_for("/fine")
        with pytest.raises(FetchTimeout, match="no data for 1 s"):
            await stalled
        assert time.monotonic() - started < 20
        assert srv.connections == 1


async def test_total_timeout_bounds_a_stalled_stream(cert_key: tuple[Path, Path]) -> None:
    async with H2FaultServer(*cert_key, "stall") as srv, \
            Client(http=_options(cert_key[0]), timeouts=Timeouts(read=30, total=1.0)) as c:
        started = time.monotonic()
        with pytest.raises(FetchTimeout):
            await c.fetch(f"https://127.0.0.1:{srv.port}/stall")
        assert time.monotonic() - started < 15


async def test_the_servers_stream_limit_is_kept(cert_key: tuple[Path, Path]) -> None:
    async with H2FaultServer(*cert_key, "slow", max_streams=3) as srv, Client(http=_options(cert_key[0])) as c:
        await c.fetch(f"https://127.0.0.1:{srv.port}/first")  # the server's SETTINGS are in
        srv.most_open = 0
        paths = _paths(12)
        assert await _fetch_all(c, srv.port, paths) == [body_for(p) for p in paths]
        assert 1 < srv.most_open <= 3
        assert srv.connections <= Limits().per_host


async def test_a_busy_connection_is_waited_for_past_the_pool_timeout(cert_key: tuple[Path, Path]) -> None:
    # one stream at a time, each answer 0.25 s: the last of six waits ~1.25 s for its stream,
    # but streams keep ending, so Timeouts.pool (0.6 s) counts from the last one that ended
    async with H2FaultServer(*cert_key, "paced", max_streams=1) as srv, \
            Client(http=_options(cert_key[0]), limits=Limits(per_host=1), timeouts=Timeouts(pool=0.6)) as c:
        await c.fetch(f"https://127.0.0.1:{srv.port}/first")  # the server's SETTINGS are in
        paths = _paths(6)
        assert await _fetch_all(c, srv.port, paths) == [body_for(p) for p in paths]
        assert srv.connections == 1 and srv.most_open == 1


async def test_a_stuck_connection_still_ends_the_wait_at_the_pool_timeout(cert_key: tuple[Path, Path]) -> None:
    async with H2FaultServer(*cert_key, "stall", max_streams=1) as srv, \
            Client(http=_options(cert_key[0]), limits=Limits(per_host=1), timeouts=Timeouts(pool=0.6, read=30)) as c:
        await c.fetch(f"https://127.0.0.1:{srv.port}/first")
        stuck = asyncio.ensure_future(c.fetch(f"https://127.0.0.1:{srv.port}/stall"))
        try:
            for _ in range(3000):  # the one stream is taken
                if "/stall" in srv.requests:
                    break
                await asyncio.sleep(0.01)
            started = time.monotonic()
            with pytest.raises(PoolTimeout, match="free HTTP/2 stream"):
                await c.fetch(f"https://127.0.0.1:{srv.port}/next")
            assert time.monotonic() - started < 15
        finally:
            stuck.cancel()
            with contextlib.suppress(BaseException):
                await stuck


async def test_no_second_connection_before_the_first_ones_settings(cert_key: tuple[Path, Path]) -> None:
    # a new connection carries 100 streams until the server's SETTINGS say how many; more
    # requests wait for them (a round trip) rather than open a connection (a handshake or two)
    async with H2FaultServer(*cert_key, "late-settings", max_streams=200) as srv, \
            Client(http=_options(cert_key[0]), limits=Limits(per_host_requests=256)) as c:
        paths = _paths(150)
        assert await _fetch_all(c, srv.port, paths) == [body_for(p) for p in paths]
        assert srv.connections == 1


async def test_per_host_requests_bounds_the_streams_in_flight(cert_key: tuple[Path, Path]) -> None:
    async with H2FaultServer(*cert_key, "slow") as srv, \
            Client(http=_options(cert_key[0]), limits=Limits(per_host_requests=2)) as c:
        paths = _paths(10)
        assert await _fetch_all(c, srv.port, paths) == [body_for(p) for p in paths]
        assert srv.most_open == 2 and srv.connections == 1


async def test_http2_off_speaks_http1(cert_key: tuple[Path, Path]) -> None:
    # the server speaks only h2: an HTTP/1.1 client gets nothing it can use
    ctx = ssl.create_default_context(cafile=str(cert_key[0]))
    async with H2FaultServer(*cert_key, "ok") as srv, \
            Client(http=HTTPOptions(ssl_context=ctx, http2=False), timeouts=Timeouts(read=2)) as c:
        with pytest.raises(Exception):  # noqa: B017 - any anyurl error: the point is no h2 was used
            await c.fetch(f"https://127.0.0.1:{srv.port}/x")
        assert srv.requests == []


async def test_cli_get_runs_more_streams_than_parallel_turns_once_a_host_speaks_http2(
        cert_key: tuple[Path, Path], tmp_path: Path) -> None:
    import os
    import sys

    # (the server answers once no request came for 2 s: a loaded machine may pause the client
    # between requests for longer than a round trip, never that long)
    async with H2FaultServer(*cert_key, "slow", quiet=2.0) as srv:
        paths = _paths(60)
        rc, _, err = await arun([sys.executable, "-m", "anyurl", "get", "-q", "--parallel", "2", "-d", str(tmp_path),
                                 *(f"https://127.0.0.1:{srv.port}{p}" for p in paths)],
                                within=60, env={**os.environ, "SSL_CERT_FILE": str(cert_key[0])}, stdout=None)
        assert rc == 0, err
        for p in paths:
            assert (tmp_path / p.lstrip("/")).read_bytes() == body_for(p)
        assert srv.connections == 1
        # more than the 2 turns, within the stream workers (16 x 2, at least 64: cli/session.py)
        assert 2 < srv.most_open <= stream_worker_count(2)
        # the streams beyond the 2 turns start once the handshake picked h2, not after a
        # first answer (the server answers once 2 s pass without a request)
        assert srv.before_first_answer > 2


async def test_aclose_does_not_wait_for_the_servers_close_notify(cert_key: tuple[Path, Path]) -> None:
    # GOAWAY and close_notify are sent, then the socket closed: no round trip waited for.
    # A proxy delays what the server sends by 1.2 s, its close_notify too.
    delay = 1.2

    async def pipe(r: asyncio.StreamReader, w: asyncio.StreamWriter, late: float) -> None:
        try:
            while data := await r.read(65536):
                if late:
                    await asyncio.sleep(late)
                w.write(data)
        except OSError:
            pass
        finally:
            w.close()

    async with H2FaultServer(*cert_key) as srv:
        async def handle(cr: asyncio.StreamReader, cw: asyncio.StreamWriter) -> None:
            sr, sw = await asyncio.open_connection("127.0.0.1", srv.port)
            await asyncio.gather(pipe(cr, sw, 0), pipe(sr, cw, delay))

        proxy = await asyncio.start_server(handle, "127.0.0.1", 0)
        port = proxy.sockets[0].getsockname()[1]
        async with proxy:
            c = Client(http=_options(cert_key[0]))
            try:
                assert (await c.fetch(f"https://127.0.0.1:{port}/a")).content == body_for("/a")
            finally:
                started = time.monotonic()
                await c.aclose()
            assert time.monotonic() - started < 0.8  # (it waited 1 s, its bound, before)
            proxy.close()


async def test_a_reset_stream_is_a_protocol_error_naming_the_code(cert_key: tuple[Path, Path]) -> None:
    async with H2FaultServer(*cert_key, "reset") as srv, Client(http=_options(cert_key[0])) as c:
        with pytest.raises(ProtocolError, match=r"reset the stream \(INTERNAL_ERROR\)") as err:
            await c.fetch(f"https://127.0.0.1:{srv.port}/x")
        assert f"127.0.0.1:{srv.port}/x" in str(err.value)


async def test_a_reused_connection_closed_without_an_answer_is_tried_once_more_on_a_new_one(
        cert_key: tuple[Path, Path]) -> None:
    async with H2FaultServer(*cert_key, "drop-second") as srv, Client(http=_options(cert_key[0])) as c:
        assert (await c.fetch(f"https://127.0.0.1:{srv.port}/a")).content == body_for("/a")
        assert (await c.fetch(f"https://127.0.0.1:{srv.port}/b")).content == body_for("/b")
        assert srv.connections == 2 and srv.requests == ["/a", "/b", "/b"]


async def test_a_body_not_read_holds_at_most_its_stream_window(cert_key: tuple[Path, Path]) -> None:
    size = 8 << 20
    async with H2FaultServer(*cert_key, "flow", size=size) as srv, \
            Client(http=_options(cert_key[0]), limits=Limits(chunk_size=256 << 10)) as c:
        async with c.open(f"https://127.0.0.1:{srv.port}/big") as body:
            await asyncio.sleep(0.5)  # the server sends what the window lets it, then waits
            assert srv.sent <= 256 << 10  # the stream window (Limits.chunk_size), nothing past it
            held = srv.sent
            data = await body.read()  # window updates as the data is taken: all of it comes
        assert held > 0 and data == body_for("/big", size)


#: header blocks hpack refuses that jh2's compiled decoder lets through or panics on (printing to
#: stderr, a backtrace with RUST_BACKTRACE=1): anyurl refuses each, and prints nothing of its own
BAD_BLOCKS = {
    "/late-size-update": bytes.fromhex("8820"),  # :status 200, then a table size update (RFC 7541 4.2)
    # content-length (static index 28) with a Huffman-coded value:
    "/long-padding": bytes.fromhex("880f0d8207ff"),  # "0" and 11 bits of padding
    "/zero-padding": bytes.fromhex("880f0d8100"),  # "0" and 3 bits of padding, zeros
    "/cut-string": bytes.fromhex("880f0d8a1c6b"),  # a string of 10 bytes, 2 there
    "/cut-name": bytes.fromhex("8840"),  # a literal whose name never comes
}


@pytest.mark.parametrize("path", sorted(BAD_BLOCKS))
async def test_a_header_block_hpack_refuses_is_refused_and_prints_nothing(cert_key: tuple[Path, Path],
                                                                          tmp_path: Path, path: str) -> None:
    import os
    import sys

    async with H2FaultServer(*cert_key, "block", blocks=BAD_BLOCKS) as srv:
        async with Client(http=_options(cert_key[0])) as c:
            with pytest.raises(ProtocolError, match="header block") as err:
                await c.fetch(f"https://127.0.0.1:{srv.port}{path}")
            assert path in str(err.value)
        # the CLI, as a user runs it: its one error line, nothing from the codec (fd 2 captured)
        env = {**os.environ, "SSL_CERT_FILE": str(cert_key[0]), "RUST_BACKTRACE": "1"}
        rc, out, err_text = await arun([sys.executable, "-m", "anyurl", "get", "-q", "-d", str(tmp_path),
                                        f"https://127.0.0.1:{srv.port}{path}"], within=60, env=env)
        assert rc != 0 and out == b""
        lines = err_text.decode().splitlines()
        assert len(lines) == 1 and lines[0].startswith("anyurl: ") and path in lines[0], lines
        assert os.listdir(tmp_path) == []

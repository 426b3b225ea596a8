"""net/pingpong.py: the command/reply connection FTP and NNTP share, on local sockets."""

from __future__ import annotations

import asyncio
import socket

import pytest

from anyurl.errors import ConnectError, FetchTimeout
from anyurl.handlers.ftp_control import Control
from anyurl.handlers.news_conn import NewsConnection
from anyurl.net.pingpong import CommandConnection


def test_ftp_and_nntp_connections_are_the_one_command_connection() -> None:
    assert issubclass(Control, CommandConnection) and issubclass(NewsConnection, CommandConnection)


async def _pair() -> tuple[CommandConnection, socket.socket]:
    ours, theirs = socket.socketpair()
    ours.setblocking(False)
    reader, writer = await asyncio.open_connection(sock=ours)
    return CommandConnection(reader, writer), theirs


async def test_a_peer_that_stops_reading_is_a_timeout_naming_the_command() -> None:
    conn, theirs = await _pair()
    try:
        conn.writer.transport.set_write_buffer_limits(high=1)  # drain waits for the peer
        theirs.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        with pytest.raises(FetchTimeout, match=r"^u: timed out sending STOR$"):
            for _ in range(1000):  # until the kernel's buffers are full
                await conn.write(b"x" * 65536, "STOR", "u", 0.2)
    finally:
        conn.abort()
        theirs.close()


async def test_a_reset_is_a_lost_connection_naming_the_command() -> None:
    conn, theirs = await _pair()
    theirs.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    theirs.close()  # linger 0: a reset
    try:
        with pytest.raises(ConnectError, match=r"^u: connection lost while (sending|reading)"):
            for _ in range(100):
                await conn.write(b"GROUP misc.test\r\n", "GROUP", "u", 5)
                assert await conn.read(100, "u", "reading a reply") == b""  # EOF, or the reset
                await asyncio.sleep(0.01)
    finally:
        conn.abort()


async def test_a_closed_peer_leaves_the_connection_stale_and_hang_up_never_raises() -> None:
    conn, theirs = await _pair()
    assert not conn.stale()
    theirs.close()
    for _ in range(500):  # the EOF takes a loop turn or a few to arrive
        if conn.stale():
            break
        await asyncio.sleep(0.01)
    assert conn.stale()
    await conn.hang_up(b"QUIT\r\n")

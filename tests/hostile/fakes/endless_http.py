"""An HTTP page that never ends: a head, then the same piece again and again.

``async with EndlessPage(b"<a href=\\"", b"A" * 65536) as srv:`` serves
``srv.url`` as text/html without a length, writing *piece* (or ``piece(n)``)
until the client goes away or ``limit`` bytes were sent; ``srv.sent`` counts
the bytes the client took. A :class:`~tests.hostile.fakes.http_streams.StreamServer`
whose exit waits (at most 15 s) for the page to end by itself.
"""

from __future__ import annotations

from tests.hostile.fakes.http_streams import Piece, StreamServer

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n"


class EndlessPage(StreamServer):
    def __init__(self, head: bytes, piece: Piece, *, limit: int = 1 << 30) -> None:
        super().__init__(HEAD + head, then=piece, repeat=limit, limit=limit, path="/page.html", settle=15)

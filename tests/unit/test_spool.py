"""anyurl.spool: a captured body moves to a temporary file past its threshold and reads back whole."""

from __future__ import annotations

import os

from anyurl.response import Capture
from anyurl.spool import Spool


def test_a_spool_stays_in_memory_below_its_threshold_and_spills_past_it() -> None:
    s = Spool(threshold=10)
    s.extend([b"abc", b"def"])
    assert not s.spooled and s.getvalue() == b"abcdef"
    s.append(b"ghijk")
    assert s.spooled and s.size == 11 and s.getvalue() == b"abcdefghijk"
    s.append(b"lm")  # straight to the file now
    assert s.getvalue() == b"abcdefghijklm"
    s.clear()
    assert not s.spooled and s.size == 0 and s.getvalue() == b""


def test_a_reader_frames_the_bytes_and_seeks() -> None:
    data = os.urandom(50_000)
    for threshold in (1 << 20, 1000):  # in memory, and from the file
        s = Spool(threshold=threshold)
        for i in range(0, len(data), 4096):
            s.append(data[i:i + 4096])
        r = s.reader(b"HEAD", b"TAIL")
        assert r.length == len(data) + 8
        assert r.read() == b"HEAD" + data + b"TAIL"
        r.seek(2)
        assert r.read(6) == b"AD" + data[:4]
        r.seek(-6, 2)
        assert r.read() == data[-2:] + b"TAIL"
        assert r.tell() == r.length


def test_a_large_capture_body_is_spooled_not_held() -> None:
    cap = Capture("HTTP/1.1", "http://example.org/big")
    kept = cap.keeping()
    piece = os.urandom(64 * 1024)
    for _ in range(40):  # 2.5 MiB, past the 1 MiB threshold
        kept.append(piece)
    assert kept.spooled
    cap.finish()
    assert cap.body_size == 40 * len(piece)
    assert cap._body is kept  # still the file, not bytes in memory
    assert cap.body == piece * 40
    assert cap.body_reader().read() == piece * 40

"""bench/suites/counts.py: strace -c's table read back, and calls per request as the
difference of two runs (start-up's calls cancel out)."""

from __future__ import annotations

import pytest
from bench.suites import counts as syscalls_http

TABLE = """% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 33.55    0.069778           3     20001           write
 15.14    0.031491           3     10298        78 openat
  0.03    0.000055           1        32           socket
------ ----------- ----------- --------- --------- ----------------
100.00    0.207975           2     30331        78 total
"""


def test_parse_summary_reads_calls_by_name() -> None:
    assert syscalls_http.parse_summary(TABLE) == {"write": 20001, "openat": 10298, "socket": 32}


def test_per_request_is_the_difference_over_the_extra_requests() -> None:
    lots = {"write": 20001, "openat": 10298, "socket": 32}
    few = {"write": 2001, "openat": 1298, "socket": 32, "brk": 3}
    per = syscalls_http.per_request(lots, few, 9000)
    assert list(per) == ["write", "openat"]  # largest first; unchanged counts left out
    assert per["write"] == pytest.approx(2.0) and per["openat"] == pytest.approx(1.0)

"""``anyurl get -i FILE``: the list's lines are bounded, an error quotes a line's start only,
and a UTF-8 byte order mark is no part of the first URL (issue 25 item 17)."""

from __future__ import annotations

from pathlib import Path

from tests.hostile.fakes.child import run_child

from anyurl.errors import TransferError


def test_a_line_with_no_end_is_not_held_nor_echoed_whole(tmp_path: Path) -> None:
    listed = tmp_path / "list.txt"
    with open(listed, "wb") as f:
        f.write(b"# one endless line follows\n")
        for _ in range(100):
            f.write(b"a" * (1 << 20))  # 100 MB without a newline (it took 6 times that and echoed it all)
    result = run_child(["-m", "anyurl", "get", "-d", str(tmp_path / "out"), "-i", str(listed)], deadline=60)
    assert result.returncode == TransferError.exit_code, result.describe()
    assert "list.txt line 2 is longer than 65536 bytes (Limits.max_line)" in result.stderr
    assert len(result.stderr) < 1000
    assert result.peak_rss_mb < 200, result.describe()


def test_a_url_list_from_dev_zero_ends_at_the_line_limit(tmp_path: Path) -> None:
    # it read until MemoryError (exit 70)
    result = run_child(["-m", "anyurl", "get", "-d", str(tmp_path), "-i", "/dev/zero"], deadline=60)
    assert result.returncode == TransferError.exit_code, result.describe()
    assert "/dev/zero line 1 is longer than 65536 bytes" in result.stderr and len(result.stderr) < 1000


def test_a_byte_order_mark_before_the_first_url_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("first\n")
    (tmp_path / "b.txt").write_text("second\n")
    listed = tmp_path / "list.txt"
    listed.write_bytes(b"\xef\xbb\xbf" + f"{(tmp_path / 'a.txt').as_uri()}\n{(tmp_path / 'b.txt').as_uri()}\n".encode())
    out = tmp_path / "out"
    result = run_child(["-m", "anyurl", "get", "-d", str(out), "-i", str(listed)], deadline=60)
    assert result.returncode == 0, result.describe()
    assert sorted(p.name for p in out.iterdir()) == ["a.txt", "b.txt"]


def _two_urls_around_a_long_line(tmp_path: Path, long: int) -> tuple[bytes, Path]:
    (tmp_path / "a.txt").write_text("first\n")
    (tmp_path / "b.txt").write_text("second\n")
    text = (f"{(tmp_path / 'a.txt').as_uri()}\n".encode() + b"x" * long + b"\n"
            + f"{(tmp_path / 'b.txt').as_uri()}\n".encode())
    return text, tmp_path / "out"


def test_a_long_line_between_two_urls_is_reported_and_skipped(tmp_path: Path) -> None:
    # issue 33 item 15: one line over Limits.max_line refused the whole list (exit 10, neither
    # URL fetched), though every other bad line is reported and skipped
    text, out = _two_urls_around_a_long_line(tmp_path, 200_000)
    listed = tmp_path / "list.txt"
    listed.write_bytes(text)
    result = run_child(["-m", "anyurl", "get", "-d", str(out), "-i", str(listed)], deadline=60)
    assert sorted(p.name for p in out.iterdir()) == ["a.txt", "b.txt"], result.describe()
    assert (out / "b.txt").read_text() == "second\n"
    assert result.returncode == TransferError.exit_code, result.describe()  # the line is still an error
    assert "list.txt line 2 is longer than 65536 bytes (Limits.max_line); it starts b'xxx" in result.stderr
    assert result.stderr.rstrip().endswith("; skipped") and len(result.stderr) < 1000, result.stderr


def test_a_long_line_read_from_a_pipe_is_skipped_too(tmp_path: Path) -> None:
    # the pipe reader meets the line over many reads (1 MB): passed over, never held
    import os
    import subprocess
    import sys

    text, out = _two_urls_around_a_long_line(tmp_path, 1 << 20)
    proc = subprocess.run([sys.executable, "-m", "anyurl", "get", "-d", str(out), "-i", "-"], input=text,
                          capture_output=True, timeout=60, env=dict(os.environ, COLUMNS="200"))
    assert sorted(p.name for p in out.iterdir()) == ["a.txt", "b.txt"], proc.stderr
    assert proc.returncode == TransferError.exit_code
    assert b"standard input line 2 is longer than 65536 bytes" in proc.stderr and len(proc.stderr) < 1000

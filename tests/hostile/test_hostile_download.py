"""Downloads of names 243 to 255 bytes long (issue 11, item 9).

The part file ``.NAME.anyurl-part`` adds 13 bytes, so any name past 242
bytes failed with "File name too long" before a byte was written, though
the name itself fits the file system. The source is a local file of that
name, fetched with ``anyurl get -d DIR`` as a user would.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.hostile.fakes.child import run_child

from anyurl.handlers.file import file_url_for

NAMES = {
    "243": "a" * 239 + ".bin",
    "250": "b" * 246 + ".txt",
    "255": "c" * 251 + ".dat",
    "254-utf8": "é" * 125 + ".txt",  # 2-byte characters: cut on a character boundary
}


@pytest.mark.parametrize("key", sorted(NAMES))
def test_long_names_download_and_leave_no_part_file(tmp_path: Path, key: str) -> None:
    name = NAMES[key]
    assert len(name.encode()) == int(key.split("-")[0])
    src_dir, out_dir = tmp_path / "src", tmp_path / "out"
    src_dir.mkdir()
    out_dir.mkdir()
    payload = key.encode() * 50_000
    (src_dir / name).write_bytes(payload)
    result = run_child(["-m", "anyurl", "get", "-q", "-d", str(out_dir), file_url_for(str(src_dir / name))],
                       deadline=30)
    assert result.returncode == 0, result.describe()
    assert [p.name for p in out_dir.iterdir()] == [name]
    assert (out_dir / name).read_bytes() == payload
    assert result.elapsed < 15 and result.peak_rss_mb < 100, result.describe()

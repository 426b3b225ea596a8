"""A driver runs on any Context (handlers/base.py), not only on a Client: here on the
suite's stand-in (tests/doubles.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.doubles import StaticContext

from anyurl.errors import ResourceNotFound
from anyurl.handlers.file import FileHandler
from anyurl.settings import Limits


async def test_the_file_driver_reads_through_a_static_context(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"hello, context\n")
    ctx = StaticContext(limits=Limits(chunk_size=4))
    driver = FileHandler(ctx)
    body = await driver.open(ctx.request(f"file://{tmp_path}/a.txt", offset=7))
    assert await body.read() == b"context\n"
    with pytest.raises(ResourceNotFound):
        await driver.open(ctx.request(f"file://{tmp_path}/missing.txt"))

"""`anyurl get` with many URLs: a bounded pool of workers fed from the arguments and a lazily read -i list."""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from tests.procs import spawn

import anyurl.transfer.download
from anyurl.cli import commands as cli
from anyurl.errors import AccessDenied, ResourceNotFound, TransferError


def run(*args: str, stdin: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "anyurl", *args], capture_output=True, text=True,
                          input=stdin, timeout=timeout)


def sources(tmp_path: Path, n: int = 3) -> list[Path]:
    src = tmp_path / "src"
    src.mkdir()
    files = []
    for i in range(n):
        f = src / f"f{i}.txt"
        f.write_bytes(f"file {i}\n".encode() * (i + 1))
        files.append(f)
    return files


def main_in_process(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = cli.main(argv)
    return code, err.getvalue()


def test_a_long_url_list_runs_on_n_workers_not_a_task_per_url(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    files = sources(tmp_path)
    urls = [files[i % 3].as_uri() for i in range(600)]
    listing = tmp_path / "urls.txt"
    listing.write_text("# a list\n" + "\n".join(urls[2:]) + "\n")
    real = anyurl.transfer.download.download_file  # what the CLI's workers call
    most = 0

    async def counting(*args: Any, **kwargs: Any) -> Any:
        nonlocal most
        most = max(most, len(asyncio.all_tasks()))
        return await real(*args, **kwargs)

    monkeypatch.setattr(anyurl.transfer.download, "download_file", counting)
    out = tmp_path / "out"
    code, err = main_in_process(["get", "-q", "--parallel", "4", "-d", str(out), "-i", str(listing), *urls[:2]])
    assert code == 0, err
    # the main task and 4 workers (the old code made one task per URL up front: 601 here)
    assert 1 <= most <= 5
    names = sorted(os.listdir(out))
    assert len(names) == 600 and PART not in "".join(names)
    # names given in URL order: f0.txt, f0.txt.1, ... each file holding its URL's bytes
    for i in range(600):
        name = f"f{i % 3}.txt" + (f".{i // 3}" if i >= 3 else "")
        assert (out / name).read_bytes() == files[i % 3].read_bytes()


PART = anyurl.transfer.download.PART_SUFFIX


def test_exit_code_is_the_first_failing_url_in_order_not_in_time(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    async def fake(client: Any, u: Any, dest: str, *args: Any, **kwargs: Any) -> None:
        if str(u).endswith("/slow"):
            await asyncio.sleep(0.3)
            raise ResourceNotFound("gone", url=u)
        if str(u).endswith("/fast"):
            raise AccessDenied("no", url=u)
        Path(dest).write_bytes(b"ok")  # noqa: ASYNC240 - a stand-in for the download

    monkeypatch.setattr(anyurl.transfer.download, "download_file", fake)
    code, err = main_in_process(["get", "-q", "--parallel", "3", "-d", str(tmp_path),
                                 "file:///x/slow", "file:///x/fast", "file:///x/fine"])
    assert code == ResourceNotFound.exit_code  # slow failed last, but it comes first
    assert err.index("fast") < err.index("slow")  # reported as they happened
    assert os.listdir(tmp_path) == ["fine"]


def test_a_piped_url_list_is_read_as_it_arrives(tmp_path: Path) -> None:
    files = sources(tmp_path, 2)
    out = tmp_path / "out"
    with spawn([sys.executable, "-m", "anyurl", "get", "-d", str(out), "-i", "-"],
               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        assert proc.stdin is not None
        proc.stdin.write(files[0].as_uri().encode() + b"\n")
        proc.stdin.flush()
        # the first file arrives while the list is still open (it used to wait for the end)
        deadline = time.monotonic() + 30
        while not (out / "f0.txt").exists():
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        _, err = proc.communicate(b"# more\r\n" + files[1].as_uri().encode() + b"\r\n", timeout=30)
    assert proc.returncode == 0, err
    assert sorted(os.listdir(out)) == ["f0.txt", "f1.txt"]
    assert (out / "f1.txt").read_bytes() == files[1].read_bytes()


def test_url_list_from_standard_input_redirected_from_a_file(tmp_path: Path) -> None:
    files = sources(tmp_path, 2)
    out = tmp_path / "out"
    listing = tmp_path / "urls.txt"
    listing.write_text(f"{files[0].as_uri()}\n\n  {files[1].as_uri()}  \n{files[0].as_uri()}")  # no final newline
    with listing.open() as stdin:
        proc = subprocess.run([sys.executable, "-m", "anyurl", "get", "-d", str(out), "-i", "-"],
                              stdin=stdin, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert sorted(os.listdir(out)) == ["f0.txt", "f0.txt.1", "f1.txt"]
    assert f"saved as {out / 'f0.txt.1'}" in proc.stderr


def test_url_list_errors_come_before_any_download(tmp_path: Path) -> None:
    files = sources(tmp_path, 1)
    out = tmp_path / "out"
    missing = run("get", "-d", str(out), "-i", str(tmp_path / "none.txt"), files[0].as_uri())
    assert missing.returncode == ResourceNotFound.exit_code
    assert missing.stderr == f"anyurl: URL list {tmp_path / 'none.txt'}: no such file\n"
    directory = run("get", "-d", str(out), "-i", str(tmp_path), files[0].as_uri())
    assert directory.returncode == TransferError.exit_code
    assert "cannot read the URL list" in directory.stderr and "Traceback" not in directory.stderr
    assert not out.exists()
    empty = run("get", "-d", str(out), "-i", "/dev/null")
    assert empty.returncode == 2 and "no URL given" in empty.stderr
    several = run("get", "-o", str(tmp_path / "one"), "-i", "-", stdin=f"{files[0].as_uri()}\n" * 2)
    assert several.returncode == 2 and "-o FILE takes one URL" in several.stderr


def test_no_silent_overwrite_and_force_through_the_pool(tmp_path: Path) -> None:
    files = sources(tmp_path, 2)
    out = tmp_path / "out"
    out.mkdir()
    (out / "f0.txt").write_bytes(b"precious")
    (out / "f1.txt").write_bytes(files[1].read_bytes())  # the same bytes: fine, left alone
    proc = run("get", "-d", str(out), "--parallel", "2", files[0].as_uri(), files[1].as_uri())
    assert proc.returncode == TransferError.exit_code
    assert "--force" in proc.stderr and proc.stderr.count("anyurl: ") == 1
    assert (out / "f0.txt").read_bytes() == b"precious" and sorted(os.listdir(out)) == ["f0.txt", "f1.txt"]
    proc = run("get", "-d", str(out), "--force", files[0].as_uri(), files[1].as_uri())
    assert proc.returncode == 0, proc.stderr
    assert (out / "f0.txt").read_bytes() == files[0].read_bytes()

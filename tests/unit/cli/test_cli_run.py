"""The ``anyurl`` program's exit (``cli.run``): files complete, stdout flushed, exit codes kept,
even though the last garbage collections are skipped (``gc.freeze``)."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest

import anyurl
from anyurl.cli import commands as cli
from anyurl.errors import ResourceNotFound

SRC = str(Path(anyurl.__file__).parent.parent)


def _anyurl(*args: str) -> subprocess.CompletedProcess[bytes]:
    """``python -m anyurl ARGS`` in a fresh interpreter (the same path as the console script)."""
    env = {**os.environ, "PYTHONPATH": SRC}
    return subprocess.run([sys.executable, "-m", "anyurl", *args], capture_output=True, timeout=60, env=env)


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "src.bin"
    path.write_bytes(os.urandom(3 << 20) + b"tail")  # several chunks, odd length
    return path


def test_file_written_by_the_program_is_complete(source: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.bin"
    proc = _anyurl("get", "-q", "-o", str(out), source.as_uri())
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes() == source.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.bin", "src.bin"]  # no part file left


def test_stdout_is_flushed_at_exit(source: Path) -> None:
    proc = _anyurl("get", "-q", source.as_uri())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == source.read_bytes()


def test_exit_code_of_a_failure_is_kept(tmp_path: Path) -> None:
    missing = (tmp_path / "nope.bin").as_uri()
    proc = _anyurl("get", "-q", "-o", str(tmp_path / "x"), missing)
    assert proc.returncode == ResourceNotFound.exit_code
    assert b"nope.bin" in proc.stderr
    assert not (tmp_path / "x").exists()


def test_run_returns_main_code_and_freezes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli, "main", lambda argv=None: 7)
    before = gc.get_freeze_count()
    try:
        assert cli.run() == 7
        assert gc.get_freeze_count() > before  # what was alive left the collector's reach
    finally:
        gc.unfreeze()  # give this test process its collector back


# -- standard output that cannot take the data ------------------------------------------


def _anyurl_to(stdout: Path | str, *args: str, fsize: int | None = None) -> subprocess.CompletedProcess[bytes]:
    """``python -m anyurl ARGS > stdout``, optionally under a file size limit (``ulimit -f``)."""
    import resource
    import signal

    def limit() -> None:
        if fsize is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # as Python itself does: EFBIG, not a kill
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    env = {**os.environ, "PYTHONPATH": SRC}
    with open(stdout, "wb") as out:
        return subprocess.run([sys.executable, "-m", "anyurl", *args], stdout=out, stderr=subprocess.PIPE,
                              timeout=60, env=env, preexec_fn=limit)


def _commands(source: Path, tmp_path: Path) -> list[tuple[list[str], str]]:
    text = tmp_path / "mail.txt"
    text.write_text("see <URL:ftp://a.example/pub/x>\n")
    d = tmp_path.as_uri() + "/"
    return [(["get", source.as_uri()], f"anyurl: {source.as_uri()}: "),
            (["ls", d], f"anyurl: {d}: "), (["ls", "--json", d], f"anyurl: {d}: "),
            (["stat", source.as_uri()], f"anyurl: {source.as_uri()}: "),
            (["parse", "http://h/x"], "anyurl: "), (["parse", "-v", "http://h/x"], "anyurl: "),
            (["extract", str(text)], "anyurl: ")]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_a_full_disk_on_stdout_is_a_local_io_error_naming_the_url(source: Path, tmp_path: Path) -> None:
    # was: "internal error: OSError ..." (exit 70, "a bug"), or a Python traceback for parse
    for args, start in _commands(source, tmp_path):
        proc = _anyurl_to("/dev/full", *args)
        err = proc.stderr.decode()
        assert proc.returncode == 10, (args, err)
        assert err == f"{start}cannot write to standard output: No space left on device\n", args


def test_stdout_at_the_file_size_limit_is_an_error_not_a_short_file(source: Path, tmp_path: Path) -> None:
    # was: exit 0 with the first 5,000 bytes: the buffered writer's short count was ignored
    out = tmp_path / "out.bin"
    proc = _anyurl_to(out, "get", source.as_uri(), fsize=5000)
    assert proc.returncode == 10
    assert proc.stderr.decode() == f"anyurl: {source.as_uri()}: cannot write to standard output: File too large\n"
    assert out.stat().st_size == 5000


def test_a_renamed_download_is_announced_only_once_it_is_saved(tmp_path: Path) -> None:
    # was: "URL saved as out/x.txt.1 (x.txt is taken by another URL)" for a URL that then failed
    for d in ("a", "c"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "x.txt").write_text(f"from {d}\n")
    a, missing, c = (tmp_path / d / "x.txt" for d in ("a", "b", "c"))
    out = tmp_path / "out"
    proc = _anyurl("get", "--parallel", "1", "-d", str(out), a.as_uri(), missing.as_uri(), c.as_uri())
    assert proc.returncode == ResourceNotFound.exit_code
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == 2, lines
    assert lines[0].startswith(f"anyurl: {missing.as_uri()}: no such file")
    assert lines[1] == f"anyurl: {c.as_uri()} saved as {out / 'x.txt.2'} (x.txt is taken by another URL)"
    assert sorted(p.name for p in out.iterdir()) == ["x.txt", "x.txt.2"]
    assert (out / "x.txt.2").read_text() == "from c\n"


def test_send_and_put_errors_before_any_connection_name_the_url(tmp_path: Path) -> None:
    # were "anyurl: no SMTP relay is configured: ..." and "anyurl: attachment X does not exist ...":
    # in a batch of sends, which one failed?
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANYURL_SMTP")}
    env.update(PYTHONPATH=SRC, HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "config"))
    missing = tmp_path / "missing.pdf"
    cases = [
        (["send", "mailto:bob@example.org"], 6, "anyurl: mailto:bob@example.org: no SMTP relay is configured: "),
        (["send", "mailto:bob@example.org", "--attach", str(missing)], 11,
         f"anyurl: mailto:bob@example.org: attachment {missing} does not exist or is not a regular file"),
        (["put", str(missing), "ftp://joe:pw@127.0.0.1:1/up/x.pdf"], 11,
         f"anyurl: ftp://joe:****@127.0.0.1:1/up/x.pdf: local file {missing} does not exist or is not a regular file"),
    ]
    for args, code, start in cases:
        proc = subprocess.run([sys.executable, "-m", "anyurl", *args], input=b"hello\n", capture_output=True,
                              timeout=60, env=env)
        err = proc.stderr.decode()
        assert proc.returncode == code, err
        assert err.startswith(start) and err.count("\n") == 1, err


def test_empty_file_options_and_o_with_a_directory_are_usage_errors(source: Path, tmp_path: Path) -> None:
    # was: -o '' saved the file as ./src.bin (as -O would); -o DIR downloaded everything, then
    # "DIR exists with different content ... (--force replaces it)", and --force failed at the rename
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    env = {**os.environ, "PYTHONPATH": SRC}
    url = source.as_uri()
    for args, message in [(["-o", ""], "-o needs a file name ('-' for standard output)"),
                          (["-o", "sub"], "-o sub: is a directory (use -d DIR to save into it)"),
                          (["-o", "sub/"], "-o sub/: is a directory (use -d DIR to save into it)"),
                          (["-d", ""], "-d needs a directory name"),  # was: to standard output
                          (["-O", "-i", ""], "-i needs a file name ('-' for standard input)"),  # was: ignored
                          ]:
        for force in ([], ["--force"]):
            proc = subprocess.run([sys.executable, "-m", "anyurl", "get", *force, *args, url],
                                  capture_output=True, timeout=60, env=env, cwd=work)
            assert proc.returncode == 2, proc.stderr
            assert proc.stderr.decode() == f"anyurl: {message}\n"
            assert proc.stdout == b""
            assert sorted(p.name for p in work.rglob("*")) == ["sub"]
    # was: the tree mirrored into the working directory
    proc = subprocess.run([sys.executable, "-m", "anyurl", "mirror", source.parent.as_uri() + "/", ""],
                          capture_output=True, timeout=60, env=env, cwd=work)
    assert (proc.returncode, proc.stderr) == (2, b"anyurl: DIR needs a directory name\n")
    assert sorted(p.name for p in work.rglob("*")) == ["sub"]


def test_d_naming_a_file_says_it_is_not_a_directory(source: Path, tmp_path: Path) -> None:
    # was: "anyurl: cannot create directory out.txt: File exists"
    (tmp_path / "out.txt").write_text("mine\n")
    env = {**os.environ, "PYTHONPATH": SRC}
    proc = subprocess.run([sys.executable, "-m", "anyurl", "get", "-d", "out.txt", source.as_uri()],
                          capture_output=True, timeout=60, env=env, cwd=tmp_path)
    assert (proc.returncode, proc.stderr.decode()) == (10, "anyurl: -d out.txt: exists and is not a directory\n")
    assert (tmp_path / "out.txt").read_text() == "mine\n"


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_max_size_on_standard_output_lets_nothing_past_the_limit() -> None:
    # was: the first 1 MiB chunk written out, then "resource larger than the limit of 1024 bytes"
    proc = _anyurl("get", "--max-size", "1k", "file:///dev/zero")
    assert proc.returncode == 10
    assert proc.stderr.decode() == "anyurl: file:///dev/zero: resource larger than the limit of 1024 bytes\n"
    assert len(proc.stdout) <= 1024


def test_a_missing_local_file_is_not_reported_as_a_server_reply(tmp_path: Path) -> None:
    # was "no such file: /x (server said: No such file or directory)": no server is involved
    (tmp_path / "f").write_text("x")
    for rest, text in [("nope", "no such file: {p}/nope"), ("f/x", "no such file: {p}/f/x (Not a directory)")]:
        url = f"{tmp_path.as_uri()}/{rest}"
        proc = _anyurl("get", url)
        assert proc.returncode == ResourceNotFound.exit_code
        assert proc.stderr.decode() == f"anyurl: {url}: {text.format(p=tmp_path)}\n"


def test_a_bad_url_in_a_list_names_its_line(tmp_path: Path) -> None:
    # was "anyurl: not a url: expected ':' ...": in a list of 100,000 URLs, where?
    (tmp_path / "ok.txt").write_text("ok\n")
    listing = tmp_path / "list.txt"
    listing.write_text(f"# a comment\n\n{(tmp_path / 'ok.txt').as_uri()}\nnot a url\n  http://a b/  \n")
    for source, where, stdin in [(str(listing), str(listing), None), ("-", "standard input", listing.read_bytes())]:
        env = {**os.environ, "PYTHONPATH": SRC}
        proc = subprocess.run([sys.executable, "-m", "anyurl", "get", "-d", str(tmp_path / "out"), "-i", source],
                              input=stdin, capture_output=True, timeout=60, env=env)
        assert proc.returncode == 2
        lines = proc.stderr.decode().splitlines()
        assert len(lines) == 2, lines
        assert lines[0].startswith("anyurl: not a url: ") and lines[0].endswith(f" ({where} line 4)")
        assert lines[1].startswith("anyurl: http://a b/: ") and lines[1].endswith(f" ({where} line 5)")
        assert (tmp_path / "out" / "ok.txt").read_text() == "ok\n"

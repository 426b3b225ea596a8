"""The error tree, Body streaming and the registry dispatch (no network)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.doubles import ScriptedHandler

import anyurl
from anyurl import errors, registry
from anyurl.handlers.base import Request, refuse_controls
from anyurl.response import Body
from anyurl.urls import GenericURL


def test_mask_password_hides_only_the_password() -> None:
    assert errors.mask_password("ftp://joe:s3cret@h.example/x") == "ftp://joe:****@h.example/x"
    assert errors.mask_password("ftp://joe@h.example/x") == "ftp://joe@h.example/x"
    assert errors.mask_password("http://h.example/a:b@c") == "http://h.example/a:b@c"


_OLD_USERINFO = r"^([A-Za-z][A-Za-z0-9+.\-]*://[^/@:]*):([^/@]*)@"   # what mask_password did with re


@given(st.text(alphabet="aZ9+.-:/@?#x\u00e9 ", max_size=24))
def test_mask_password_without_re_masks_as_the_regex_did(text: str) -> None:
    import re

    assert errors.mask_password(text) == re.sub(_OLD_USERINFO, r"\1:****@", text, count=1)
    for url in ("ftp://a:b@h/", "x-y+z.1://u:p:q@h", "ftp://:@h", "ftp://u:p/@h", "1ftp://u:p@h", "\u00e9://u:p@h",
                "ftp://u@h:1/x:y@z", "ftp:/u:p@h", "http://h?u:p@x"):
        assert errors.mask_password(url) == re.sub(_OLD_USERINFO, r"\1:****@", url, count=1), url


@pytest.mark.parametrize(
    ("cls", "builtin"),
    [
        (errors.URLSyntaxError, ValueError),
        (errors.UnsafeURL, ValueError),
        (errors.ResourceNotFound, FileNotFoundError),
        (errors.AccessDenied, PermissionError),
        (errors.ConnectError, ConnectionError),
        (errors.FetchTimeout, TimeoutError),
    ],
)
def test_errors_are_also_the_builtin_a_caller_catches(cls: type[Exception], builtin: type[Exception]) -> None:
    exc = cls("boom", url="ftp://u:pw@h/")
    assert isinstance(exc, builtin)
    assert isinstance(exc, errors.AnyURLError)
    assert str(exc) == "ftp://u:****@h/: boom"


def test_exit_codes_are_distinct_per_class() -> None:
    classes = [getattr(errors, n) for n in errors.__all__ if isinstance(getattr(errors, n), type)]
    codes = [c.exit_code for c in classes]
    assert len(codes) == len(set(codes))


def test_syntax_error_names_position_and_rule() -> None:
    exc = errors.URLSyntaxError("bad port", url="http://h:x/", position=9, rule="port")
    assert "position 9" in str(exc) and "<port>" in str(exc)
    assert exc.position == 9 and exc.rule == "port"


def test_refuse_controls_names_the_bytes() -> None:
    with pytest.raises(errors.UnsafeURL, match="CR, LF"):
        refuse_controls("ftp://h/", "path segment", "a\r\nDELE x")
    refuse_controls("ftp://h/", "path segment", "plain")


async def _chunks(*parts: bytes, fail: BaseException | None = None) -> AsyncIterator[bytes]:
    for p in parts:
        yield p
    if fail is not None:
        raise fail


async def test_body_streams_and_counts() -> None:
    closed: list[bool] = []

    async def on_close() -> None:
        closed.append(True)

    body = Body("x:y", _chunks(b"ab", b"cd"), on_close=on_close)
    assert await body.read() == b"abcd"
    assert body.bytes_read == 4 and body.complete
    await body.aclose()
    await body.aclose()
    assert closed == [True]


async def test_body_translates_foreign_errors() -> None:
    body = Body("ftp://u:pw@h/f", _chunks(b"ab", fail=ConnectionResetError("reset")))
    with pytest.raises(errors.ConnectError) as info:
        await body.read()
    assert "****" in str(info.value) and "pw" not in str(info.value)
    assert not body.complete


async def test_body_read_respects_max_size() -> None:
    body = Body("x:y", _chunks(b"a" * 10, b"b" * 10))
    with pytest.raises(errors.TransferError, match="max_size=15"):
        await body.read(max_size=15)


class EchoHandler(ScriptedHandler):
    """A handler defined by a 'third party': returns the schemepart as the body."""

    content_type = "text/plain"

    def content(self, req: Request) -> bytes:
        assert isinstance(req.url, GenericURL)
        return req.url.schemepart.encode()


class ExplodingHandler(ScriptedHandler):
    async def open(self, req: Request) -> Body:
        raise OSError(5, "Input/output error")


async def test_registered_handler_is_used_and_foreign_errors_translated() -> None:
    registry.register("x-echo", EchoHandler)
    registry.register("x-boom", ExplodingHandler)
    async with anyurl.Client() as client:
        resp = await client.fetch(GenericURL(scheme="x-echo", schemepart="hello"), offset=1)
        assert resp.content == b"ello" and resp.content_type == "text/plain"
        assert resp.text() == "ello"
        with pytest.raises(errors.TransferError, match="Input/output error"):
            await client.fetch(GenericURL(scheme="x-boom", schemepart="z"))
        assert "x-echo" in registry.supported_schemes()


async def test_unknown_scheme_fails_before_io_and_names_supported() -> None:
    async with anyurl.Client() as client:
        with pytest.raises(errors.UnsupportedScheme, match="supported: .*file"):
            await client.fetch(GenericURL(scheme="x-nothing", schemepart="z"))


async def test_closed_client_refuses() -> None:
    client = anyurl.Client()
    await client.aclose()
    with pytest.raises(errors.ConfigurationError, match="closed"):
        await client.fetch(GenericURL(scheme="x-echo", schemepart="z"))


def test_entry_point_handler_is_found(tmp_path: Path) -> None:
    """A third-party package registers a scheme through the anyurl.handlers entry point group."""
    (tmp_path / "anyurl_rot13").mkdir()
    (tmp_path / "anyurl_rot13" / "__init__.py").write_text(
        "import codecs\n"
        "from anyurl.handlers.base import Handler\n"
        "from anyurl.response import Body\n"
        "class Rot13Handler(Handler):\n"
        "    async def open(self, req):\n"
        "        return Body.from_bytes(req.url, codecs.encode(req.url.schemepart, 'rot13').encode())\n")
    dist = tmp_path / "anyurl_rot13-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: anyurl-rot13\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[anyurl.handlers]\nx-rot13 = anyurl_rot13:Rot13Handler\n")
    script = (
        "import anyurl, anyurl.registry as r\n"
        "print(anyurl.fetch_sync('x-rot13:uryyb').text())\n"
        "print('x-rot13' in r.supported_schemes())\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["hello", "True"]

"""Client, registry and error-tree behaviour at the public boundary (no servers)."""

from __future__ import annotations
import __future__

import socket
import types
from collections.abc import AsyncIterator

import pytest

import anyurl
from anyurl import errors, registry
from anyurl.handlers.file import FileHandler
from anyurl.handlers.http import HTTPHandler
from anyurl.urls import HTTPURL

PUBLIC_API = {
    "URL", "AccessDenied", "AnyURLError", "Body", "Client", "ConfigurationError", "ConnectError",
    "Entry", "FetchTimeout", "Limits", "NotRetrievable", "NotSupported", "OverlongTransfer", "Policy", "PoolTimeout",
    "ProtocolError", "ResourceNotFound", "Response", "Retry", "Stat", "TemporaryFailure", "Timeouts", "TransferError", "TruncatedTransfer", "URLSyntaxError",
    "UnsafeURL", "UnsupportedScheme", "__version__", "connect", "extract_urls", "fetch", "fetch_sync",
    "open", "parse",
    # each scheme's options (issue 33 item 7)
    "FTPOptions", "GopherOptions", "HTTPOptions", "NewsOptions", "ProsperoOptions", "SMTPSettings", "WAISOptions",
}


@pytest.fixture
async def client() -> AsyncIterator[anyurl.Client]:
    async with anyurl.Client(use_netrc=False) as c:
        yield c


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if anything resolves a name or opens a socket."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"network I/O attempted: {args}")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "gethostbyname", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)


def test_all_is_exactly_the_public_api() -> None:
    assert len(anyurl.__all__) == len(set(anyurl.__all__)), "duplicates in __all__"
    assert set(anyurl.__all__) == PUBLIC_API
    for name in anyurl.__all__:
        assert hasattr(anyurl, name), name
    # nothing public is defined in the package namespace without being listed
    defined = {
        name for name, value in vars(anyurl).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType | __future__._Feature)
    }
    assert defined == PUBLIC_API - {"__version__"}
    for name in PUBLIC_API - {"__version__"}:
        assert getattr(anyurl, name).__doc__, f"{name} has no docstring"


async def test_unknown_scheme_names_supported_ones_before_any_io(client: anyurl.Client,
                                                                 no_network: None) -> None:
    with pytest.raises(anyurl.UnsupportedScheme) as info:
        await client.fetch("x-unknown://example.org/thing")
    err = info.value
    assert isinstance(err, ValueError) and err.exit_code == 3
    supported = registry.supported_schemes()
    assert {"file", "http", "https"} <= set(supported)
    assert f"supported: {', '.join(supported)}" in str(err)
    assert "'x-unknown'" in str(err) and str(err).startswith("x-unknown://example.org/thing: ")
    with pytest.raises(anyurl.UnsupportedScheme):
        async with client.open("x-unknown:opaque"):
            pass


async def test_bad_url_text_is_a_syntax_error_before_any_io(client: anyurl.Client, no_network: None) -> None:
    with pytest.raises(anyurl.URLSyntaxError) as info:
        await client.fetch("http://exa mple.org/")
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("text", ["mailto:someone@example.org", "telnet://example.org/"])
async def test_fetch_on_non_data_urls_is_not_retrievable(client: anyurl.Client, no_network: None,
                                                         text: str) -> None:
    with pytest.raises(anyurl.NotRetrievable) as info:
        await client.fetch(text)
    assert info.value.exit_code == 5 and text in str(info.value)
    with pytest.raises(anyurl.NotRetrievable):
        async with client.open(text):
            pass


async def test_errors_mask_passwords_from_a_real_failure(client: anyurl.Client) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(anyurl.ConnectError) as info:
        await client.fetch(f"http://alice:s3cret-pw@127.0.0.1:{port}/x")
    text = str(info.value)
    assert "s3cret-pw" not in text and "s3cret-pw" not in repr(info.value.args)
    assert f"http://alice:****@127.0.0.1:{port}/x" in text
    assert info.value.url == f"http://alice:****@127.0.0.1:{port}/x"


@pytest.mark.parametrize("password", ["plain", "p@ss:w/rd", ""])
def test_error_built_from_a_url_value_masks_its_password(password: str) -> None:
    u = HTTPURL(scheme="http", host="example.org", port=80, user="bob", password=password, path="a")
    err = errors.AccessDenied("nope", url=u, reply="401 Unauthorized")
    assert str(err) == "http://bob:****@example.org/a: nope (server said: 401 Unauthorized)"
    if password:
        assert password not in str(err)


async def test_http_and_https_share_one_handler_per_client(no_network: None) -> None:
    async with anyurl.Client() as c1, anyurl.Client() as c2:
        h = c1.handler(anyurl.parse("http://example.org/"))
        assert isinstance(h, HTTPHandler)
        assert c1.handler(anyurl.parse("https://example.org/")) is h
        assert c2.handler(anyurl.parse("http://example.org/")) is not h
        assert isinstance(c1.handler(anyurl.parse("file:///etc/motd")), FileHandler)


async def test_aclose_closes_the_http_session() -> None:
    c = anyurl.Client()
    h = c.handler(anyurl.parse("http://example.org/"))
    assert isinstance(h, HTTPHandler)
    session = h._get_session()  # created lazily, no I/O yet
    assert not session.closed
    await c.aclose()
    assert session.closed
    with pytest.raises(anyurl.ConfigurationError, match="closed"):
        await c.fetch("http://example.org/")




async def test_fetch_sync_inside_a_running_loop_is_a_clear_anyurl_error(recwarn: pytest.WarningsRecorder) -> None:
    # It raised asyncio's RuntimeError and left "coroutine 'fetch' was never awaited" behind.
    import gc

    with pytest.raises(errors.ConfigurationError) as info:
        anyurl.fetch_sync("file:///etc/hostname")
    assert str(info.value) == ("file:///etc/hostname: fetch_sync() cannot run inside a running event loop: "
                               "use `await anyurl.fetch(url)` there")
    gc.collect()
    assert not [w for w in recwarn if "never awaited" in str(w.message)]

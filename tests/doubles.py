"""The suite's one test double of the driver interface (anyurl.handlers.base.Handler).

A test subclasses :class:`ScriptedHandler`, gives it its bytes and registers it under a
scheme of its own (``register("x-mine", Mine)``), or has :func:`scripted` do both; class
attributes script what each ``open()`` does, and every call is recorded. :class:`StaticContext` is a stand-in for what
a driver gets from its Client (the ``Context`` protocol), for testing a driver alone.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any, ClassVar, TypeVar

import anyurl
from anyurl.errors import ProtocolError, ResourceNotFound, TemporaryFailure, TruncatedTransfer
from anyurl.handlers.base import Handler, Request
from anyurl.response import Body
from anyurl.settings import Limits, Policy, Retry, Timeouts
from anyurl.urls import URL, GenericURL, parse

T = TypeVar("T")

__all__ = ["SCRIPTED_DATA", "ScriptedHandler", "StaticContext", "scripted"]


class ScriptedHandler(Handler):
    """Serves :meth:`content` in ``chunk``-byte pieces. Each ``open()`` takes the next of
    ``steps`` (then "ok" for ever):

    - "ok": the bytes from the requested offset (``req.length`` of them, if given);
    - "refuse": TemporaryFailure at open (a 421, retry_after 0.01 s);
    - "missing": ResourceNotFound at open;
    - "no-resume": ProtocolError at open when an offset is asked for, else "ok";
    - "restart": the bytes from offset 0, whatever was asked (a server that ignores ranges);
    - "cut": ``cut_error`` after ``cut_after`` bytes; "stall": no more data after ``cut_after``.

    ``announce``: the size to announce (None: the true size; -1: unknown). ``gate``: an
    event the body waits on after each chunk. ``opened`` records (offset, length) per open.
    """

    data: ClassVar[bytes] = b""
    chunk: ClassVar[int] = 1000
    content_type: ClassVar[str] = "application/octet-stream"
    steps: ClassVar[list[str]] = []
    opened: ClassVar[list[tuple[int, int | None]]] = []
    announce: ClassVar[int | None] = None
    resumable: ClassVar[bool] = True
    cut_after: ClassVar[int] = 1000
    cut_error: ClassVar[Callable[[str, object], Exception]] = TruncatedTransfer
    gate: ClassVar[asyncio.Event | None] = None

    _SCRIPTED = ("announce", "resumable", "cut_after", "cut_error", "gate")
    _defaults: ClassVar[dict[str, Any]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._defaults = {name: getattr(cls, name) for name in cls._SCRIPTED}  # as the class body set them

    @classmethod
    def reset(cls, **attrs: Any) -> None:
        """Forget the calls and the script, back to the class's own settings; then set *attrs*."""
        cls.steps, cls.opened = [], []
        for name, value in {**cls._defaults, **attrs}.items():
            setattr(cls, name, value)

    def content(self, req: Request) -> bytes:
        """The resource's bytes (override to derive them from the URL)."""
        return self.data

    async def open(self, req: Request) -> Body:
        cls = type(self)
        cls.opened.append((req.offset, req.length))
        step = cls.steps.pop(0) if cls.steps else "ok"
        if step == "refuse":
            raise TemporaryFailure("421 too many users", url=req.url, retry_after=0.01)
        if step == "missing":
            raise ResourceNotFound("no such thing", url=req.url)
        if step == "no-resume" and req.offset:
            raise ProtocolError("cannot resume", url=req.url)
        start = 0 if step == "restart" else req.offset
        whole = self.content(req)
        data = whole[start:] if req.length is None else whole[start:start + req.length]
        chunk, cut_after, cut_error, gate = cls.chunk, cls.cut_after, cls.cut_error, cls.gate

        async def chunks() -> AsyncIterator[bytes]:
            for i in range(0, len(data), chunk):
                if step in ("cut", "stall") and i >= cut_after:
                    if step == "stall":
                        await asyncio.sleep(3600)
                    raise cut_error("connection closed mid-transfer", url=req.url)  # type: ignore[call-arg]
                yield data[i:i + chunk]
                if gate is not None:
                    await gate.wait()

        size: int | None = len(data) if cls.announce is None else cls.announce
        return Body(req.url, chunks(), size=None if size == -1 else size, offset=start,
                    content_type=cls.content_type, resumable=cls.resumable)

    async def stat(self, req: Request) -> anyurl.Stat:
        return anyurl.Stat(url=str(req.url), size=len(self.content(req)))


SCRIPTED_DATA = bytes(range(256)) * 16  # 4096 bytes, each 256-byte run shifted by its offset


def scripted(scheme: str, *, data: bytes = SCRIPTED_DATA, chunk: int = 500) -> tuple[type[ScriptedHandler], URL]:
    """A :class:`ScriptedHandler` class serving *data* in *chunk*-byte pieces, registered under
    *scheme*, and the URL of its one resource (a test resets the class before each run)."""
    from anyurl.registry import register

    cls = type(f"Scripted[{scheme}]", (ScriptedHandler,), {"data": data, "chunk": chunk})
    register(scheme, cls)
    return cls, GenericURL(scheme=scheme, schemepart="thing")


class StaticContext:
    """What a driver asks of its Client, as fixed values (the ``Context`` protocol)."""

    def __init__(self, *, timeouts: Timeouts | None = None, limits: Limits | None = None,
                 policy: Policy | None = None, options: dict[str, object] | None = None,
                 credentials: dict[str, tuple[str, str]] | None = None, proxy: str | None = None) -> None:
        self.timeouts = timeouts or Timeouts()
        self.limits = limits or Limits()
        self.policy = policy or Policy()
        self.user_agent = "anyurl-test"
        self.anonymous_email = "test@example.org"
        self.news_server: str | None = None
        self.form_callback: Callable[..., Any] | None = None
        self._options = options or {}
        self._credentials = credentials or {}
        self._proxy = proxy
        self.handlers: dict[str, Handler] = {}

    def options_for(self, name: str, cls: type[T]) -> T:
        value = self._options.get(name)
        return value if isinstance(value, cls) else cls()

    def credentials_for(self, host: str, port: int | None = None,
                        user: str | None = None) -> tuple[str, str] | None:
        return self._credentials.get(host)

    async def ask_password(self, user: str, host: str) -> str | None:
        cred = self._credentials.get(host)
        return cred[1] if cred else None

    def proxy_for(self, scheme: str, host: str, port: int | None = None) -> str | None:
        return self._proxy

    def parse(self, url: str | URL) -> URL:
        return url if isinstance(url, URL) else parse(url)

    def handler(self, url: URL) -> Handler:
        return self.handlers[url.scheme]

    def request(self, url: str | URL, *, timeouts: Timeouts | None = None, limits: Limits | None = None,
                retry: Retry | None = None, offset: int = 0, length: int | None = None,
                options: object | None = None, max_size: int | None = None) -> Request:
        return Request(self.parse(url), timeouts or self.timeouts, limits or self.limits, retry or Retry(),
                       offset=offset, length=length, options=options)

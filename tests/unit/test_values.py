"""The value classes (settings, Entry, Stat, Response, GopherOptions) behave as the dataclasses they were."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import Any

import pytest

from anyurl import Entry, Limits, Policy, Response, Retry, Stat, Timeouts, parse
from anyurl.handlers.gopher import GopherOptions
from anyurl.settings import Request

FROZEN = [Timeouts(read=5.0), Limits(per_host=3), Policy(allow_file_urls=False), Retry(attempts=3),
          Request(parse("http://h/x"), offset=2), Entry("a", "http://h/a", size=1, meta={"t": "0"}),
          Stat("http://h/a", size=9, meta={"etag": "x"}), GopherOptions(max_menu_bytes=10)]


@pytest.mark.parametrize("value", FROZEN, ids=lambda v: type(v).__name__)
def test_frozen_values_act_as_frozen_dataclasses(value: Any) -> None:
    names = [f.name for f in dataclasses.fields(value)]
    assert dataclasses.is_dataclass(value) and dataclasses.is_dataclass(type(value))
    assert names == list(type(value).__init__.__code__.co_varnames[1:len(names) + 1])
    assert dataclasses.asdict(value) == {n: getattr(value, n) for n in names} or isinstance(value, Request)
    with pytest.raises(dataclasses.FrozenInstanceError, match=f"cannot assign to field '{names[0]}'"):
        setattr(value, names[0], None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        delattr(value, names[-1])
    same = dataclasses.replace(value)
    assert same == value and same is not value
    assert pickle.loads(pickle.dumps(value)) == value
    assert copy.deepcopy(value) == value and copy.copy(value) == value
    assert repr(value).startswith(f"{type(value).__name__}({names[0]}={getattr(value, names[0])!r}, ")
    assert type(value).__match_args__ == tuple(names)


def test_equality_and_hash_follow_the_compared_fields() -> None:
    assert Timeouts(read=5.0) == Timeouts(read=5.0) and hash(Timeouts(read=5.0)) == hash(Timeouts(read=5.0))
    assert Timeouts(read=5.0) != Timeouts(read=6.0)
    assert Timeouts() != Limits() and Timeouts().__eq__(object()) is NotImplemented
    # meta is not compared (compare=False before): two listings' entries match by what they name
    a, b = Entry("a", "u", meta={"x": 1}), Entry("a", "u", meta={"y": 2})
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert Stat("u", meta={"x": 1}) == Stat("u")
    assert Entry("a", "u") != Entry("a", "u", size=1)
    fields = {f.name: f for f in dataclasses.fields(Entry)}
    assert fields["meta"].compare is False and fields["meta"].default_factory is dict
    assert fields["kind"].default == "file" and fields["name"].default is dataclasses.MISSING


def test_defaults_and_fresh_mutable_defaults() -> None:
    assert (Timeouts().connect, Timeouts().read, Timeouts().total, Timeouts().pool) == (30.0, 60.0, None, 60.0)
    assert Limits().chunk_size == 1 << 20 and Limits().per_host == 8 and Limits().max_redirects == 10
    assert Retry().on and Retry().attempts == 1
    e1, e2 = Entry("a", None), Entry("b", None)
    assert e1.meta == {} and e1.meta is not e2.meta
    req = Request(parse("ftp://h/x"))
    assert req.timeouts == Timeouts() and req.limits == Limits() and req.retry == Retry()
    assert {f.name: f.default_factory for f in dataclasses.fields(Request)
            if f.default_factory is not dataclasses.MISSING} == {"timeouts": Timeouts, "limits": Limits,
                                                                 "retry": Retry}


def test_validation_still_runs_on_every_construction() -> None:
    from anyurl.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="Timeouts.read must be > 0"):
        Timeouts(read=0)
    with pytest.raises(ConfigurationError, match="Limits.max_redirects must be >= 0"):
        Limits(max_redirects=-1)
    with pytest.raises(ConfigurationError, match="Retry.on must hold exception classes"):
        Retry(on=("x",))  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="offset must be >= 0"):
        Request(parse("http://h/"), offset=-1)
    with pytest.raises(ConfigurationError, match="Timeouts.connect must be > 0"):
        dataclasses.replace(Timeouts(), connect=-1.0)
    req = Request(parse("http://h/"))
    with pytest.raises(ConfigurationError, match="length must be >= 0"):
        req.replace(length=-1)


def test_entry_keeps_its_derived_fields() -> None:
    e = Entry("a", "http://h/a", description="old spelling")
    assert e.title == "old spelling" and e.key == "http://h/a"
    assert Entry("i", None, kind="info").key is None
    moved = dataclasses.replace(e, url="http://h/b", key=None)
    assert moved.key == "http://h/b" and moved.title == "old spelling"
    assert e.__replace__(size=3).size == 3


def test_response_is_mutable_compared_and_unhashable() -> None:
    r = Response("u", b"x")
    r.size = 1
    r.meta["k"] = "v"
    assert r == Response("u", b"x", size=1, meta={"k": "v"})
    assert r != Response("u", b"y", size=1, meta={"k": "v"})  # every field is compared
    with pytest.raises(TypeError, match="unhashable"):
        hash(r)
    assert repr(r) == "<Response u application/octet-stream 1 bytes>"
    assert dataclasses.replace(r, content=b"yz").content == b"yz"
    assert not any(f.compare is False for f in dataclasses.fields(Response))


def test_a_subclass_may_make_a_field_a_property() -> None:
    class Lazy(Response):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self._entries: list[Entry] | None = None
            super().__init__(*args, **kwargs)

        @property  # type: ignore[override]
        def entries(self) -> list[Entry] | None:
            return self._entries

        @entries.setter
        def entries(self, value: list[Entry] | None) -> None:
            self._entries = value

    r = Lazy("u", b"", entries=[Entry("a", None)])
    assert r._entries == [Entry("a", None)] and r.entries == r._entries
    assert [f.name for f in dataclasses.fields(r)] == [f.name for f in dataclasses.fields(Response)]
    assert r == Lazy("u", b"", entries=[Entry("a", None)]) and r != Response("u", b"", entries=[Entry("a", None)])


def test_a_body_works_out_its_content_type_when_first_asked() -> None:
    from anyurl import Body

    async def nothing() -> Any:
        return
        yield b""

    calls: list[int] = []

    def guess() -> str:
        calls.append(1)
        return "image/gif"

    body = Body("gopher://h/9x.gif", nothing(), content_type=guess)
    assert calls == []
    assert body.content_type == "image/gif" and body.content_type == "image/gif"
    assert calls == [1]  # once
    late = Body("u", nothing(), content_type=guess)
    late.content_type = "text/plain"  # set before asked: the guess is never made
    assert late.content_type == "text/plain" and calls == [1]
    assert Body("u", nothing()).content_type == "application/octet-stream"
    assert Body("u", nothing(), content_type="text/html").content_type == "text/html"


@pytest.mark.parametrize(("make", "message"), [
    (lambda: Timeouts(read="5"), "Timeouts.read must be a number, not str"),
    (lambda: Timeouts(total=True), "Timeouts.total must be a number, not bool"),
    (lambda: Limits(per_host=2.5), "Limits.per_host must be an int, not float"),
    (lambda: Limits(max_size="10M"), "Limits.max_size must be an int, not str"),
    (lambda: Limits(per_host=True), "Limits.per_host must be an int, not bool"),
    (lambda: Retry(attempts=2.5), "Retry.attempts must be an int, not float"),
    (lambda: Retry(backoff="1"), "Retry.backoff must be a number, not str"),
])
def test_settings_of_the_wrong_type_are_a_type_error_naming_the_field(make: Any, message: str) -> None:
    # Timeouts(read="5") failed with "'>' not supported between instances of 'str' and 'int'";
    # Limits(per_host=2.5) and Retry(attempts=2.5) were accepted
    with pytest.raises(TypeError) as info:
        make()
    assert str(info.value) == message
    assert Timeouts(read=5, total=1.5).read == 5 and Limits(max_idle=1.5).max_idle == 1.5


def test_a_password_never_shows_in_a_repr() -> None:
    """Settings get printed in logs and tracebacks: the SMTP password shows only as set or not."""
    from anyurl import SMTPSettings

    shown = repr(SMTPSettings(host="mail.example", username="bob", password="hunter2"))
    assert "hunter2" not in shown
    assert "password='****'" in shown and "username='bob'" in shown
    assert "password=None" in repr(SMTPSettings(host="mail.example"))
    assert SMTPSettings(password="a") != SMTPSettings(password="b")  # still compared by value

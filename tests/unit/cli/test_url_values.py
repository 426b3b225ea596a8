"""URL values are plain classes (no dataclass machinery at import) that keep the dataclass contract."""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle
from pathlib import Path

import pytest

from anyurl.cli.quick import json_text, url_components
from anyurl.urls import FTPURL, HTTPURL, URL, ProsperoURL, TelnetURL, parse

CASES = json.loads((Path(__file__).parent.parent / "url_cases.json").read_text())
VALUES = [parse(c["url"]) for c in CASES if "error" not in c]


def test_every_scheme_class_is_in_the_corpus() -> None:
    assert len({type(u) for u in VALUES}) == 11   # GenericURL and the ten RFC 1738 classes


@pytest.mark.parametrize("url", VALUES, ids=[str(u) for u in VALUES])
def test_values_pickle_copy_and_replace(url: URL) -> None:
    for clone in (pickle.loads(pickle.dumps(url)), copy.copy(url), copy.deepcopy(url),
                  dataclasses.replace(url)):
        assert clone == url and hash(clone) == hash(url) and type(clone) is type(url)
        assert repr(clone) == repr(url)
    assert dataclasses.is_dataclass(url)
    names = [f.name for f in dataclasses.fields(url)]
    assert names == list(type(url).__match_args__)
    assert dataclasses.asdict(url) == {n: getattr(url, n) for n in names}
    assert type(url)(**{n: getattr(url, n) for n in names}) == url
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'scheme'"):
        url.scheme = "x"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del url.scheme  # type: ignore[misc]


def test_fields_keep_their_dataclass_declarations() -> None:
    fields = {f.name: f for f in dataclasses.fields(HTTPURL)}
    assert list(fields) == ["scheme", "host", "port", "user", "password", "path", "search", "fragment"]
    assert fields["scheme"].default is dataclasses.MISSING
    assert (fields["port"].default, fields["port"].type) == (0, "int")
    assert not fields["fragment"].compare and all(f.compare for n, f in fields.items() if n != "fragment")
    assert [f.name for f in dataclasses.fields(TelnetURL)] == ["scheme", "host", "port", "user", "password"]
    assert dataclasses.fields(ProsperoURL)[-1].name == "fields"


def test_replace_equality_and_match() -> None:
    u = parse("ftp://joe:pw@h.example/pub/a.txt;type=i")
    v = dataclasses.replace(u, cwd=("x",), typecode=None)
    assert str(v) == "ftp://joe:pw@h.example/x/a.txt" and isinstance(v, FTPURL)
    assert u != v and u != str(u) and u.__eq__(str(u)) is NotImplemented
    match v:
        case FTPURL("ftp", host, 21):
            assert host == "h.example"
        case _:
            pytest.fail("positional pattern")
    assert parse("http://h/p#a") == parse("http://h/p#b")   # the fragment is not part of the value
    assert repr(u) == ("FTPURL(scheme='ftp', host='h.example', port=21, user='joe', password='****', "
                       "cwd=('pub',), name='a.txt', typecode='i')")


@pytest.mark.parametrize("show_password", [False, True])
def test_parse_output_is_what_json_writes(show_password: bool) -> None:
    texts = [c["url"] for c in CASES if "error" not in c]
    texts += ['mailto:a@b?subject=%E2%82%AC&body=x%22y%5C', "http://h/\u00e9?q=%22", "ftp://u:p@h/"]
    for text in texts:
        data = url_components(parse(text), show_password=show_password)
        for indent in (None, 2):
            assert json_text(data, indent) == json.dumps(data, ensure_ascii=False, indent=indent), text
    for odd in ({}, [[]], {"f": 1.5, "t": True}, {1: "x"}):   # other kinds go to json itself
        assert json_text(odd, 2) == json.dumps(odd, ensure_ascii=False, indent=2)

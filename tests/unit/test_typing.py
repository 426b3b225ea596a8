"""Scheme options are typed for a type checker at no start-up cost (issue 23 step 7): the
Client's keyword for each scheme names that scheme's options class, imported only under
``TYPE_CHECKING`` (docs/internals.md), so building a Client still imports no driver."""

from __future__ import annotations

import importlib
import subprocess
import sys
import typing

import anyurl
from anyurl.schemes import OPTIONS_CLASSES, SCHEMES


def _options_class(keyword: str) -> type:
    scheme = next(s for s in SCHEMES.values() if s.options == keyword)
    module = importlib.import_module(scheme.handler.partition(":")[0])
    cls: type = getattr(module, OPTIONS_CLASSES[keyword])
    return cls


def test_each_scheme_keyword_of_the_client_names_its_options_class() -> None:
    classes = {OPTIONS_CLASSES[k]: _options_class(k) for k in OPTIONS_CLASSES}
    hints = typing.get_type_hints(anyurl.Client.__init__, localns=classes)
    for keyword, name in OPTIONS_CLASSES.items():
        assert hints[keyword] == classes[name] | None, keyword


def test_the_typed_client_imports_no_driver() -> None:
    code = ("import sys, anyurl; anyurl.Client(); "
            "print(sorted(m for m in sys.modules if m.startswith('anyurl.handlers.') and m != 'anyurl.handlers.base'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]"

"""Every scheme's options come from one documented place (issue 33 item 7): ``anyurl.settings``
beside Timeouts and Limits, and the package itself; ``from anyurl.settings import HTTPOptions``
failed, the class lived in its driver. Importing them loads no driver."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

import anyurl
from anyurl import settings
from anyurl.schemes import OPTIONS_CLASSES, SCHEMES

NAMES = sorted(set(OPTIONS_CLASSES.values()))
DOCS = Path(__file__).resolve().parents[2] / "docs" / "client.md"


def test_every_options_class_is_in_settings_and_the_package() -> None:
    assert NAMES == ["FTPOptions", "GopherOptions", "HTTPOptions", "NewsOptions", "ProsperoOptions",
                     "SMTPSettings", "WAISOptions"]
    for name in NAMES:
        cls = getattr(settings, name)
        assert name in settings.__all__
        assert getattr(anyurl, name) is cls
        assert cls.__doc__ and dataclasses.is_dataclass(cls)


@pytest.mark.parametrize("keyword", sorted(OPTIONS_CLASSES))
def test_the_driver_reads_the_same_class(keyword: str) -> None:
    """The driver's old name still works and is the very class the Client accepts."""
    import importlib

    scheme = next(s for s in SCHEMES.values() if s.options == keyword)
    driver = importlib.import_module(scheme.handler.partition(":")[0])
    name = OPTIONS_CLASSES[keyword]
    assert getattr(driver, name) is getattr(settings, name)
    client = anyurl.Client(**{keyword: getattr(settings, name)()})
    assert isinstance(client.scheme_options[keyword], getattr(settings, name))


def test_one_import_line_loads_no_driver() -> None:
    code = ("import sys\n"
            "from anyurl.settings import (FTPOptions, GopherOptions, HTTPOptions, NewsOptions, ProsperoOptions,\n"
            "                             SMTPSettings, Timeouts, WAISOptions)\n"
            "from anyurl import HTTPOptions as H\n"
            "assert H is HTTPOptions and HTTPOptions(headers={'X': '1'}).headers == {'X': '1'}\n"
            "print(sorted(m for m in sys.modules if m.startswith('anyurl.handlers')\n"
            "             or m == 'dataclasses'))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_values_are_frozen_and_replaceable() -> None:
    opts = settings.HTTPOptions(headers={"X-A": "1"}, pipeline=4)
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.pipeline = 2  # type: ignore[misc]
    assert dataclasses.replace(opts, pipeline=2).pipeline == 2
    assert settings.HTTPOptions().headers == {} and settings.HTTPOptions().headers is not settings.HTTPOptions().headers
    assert settings.FTPOptions() == settings.FTPOptions()
    assert [f.name for f in dataclasses.fields(settings.SMTPSettings)][:2] == ["host", "port"]
    with pytest.warns(DeprecationWarning, match=r"SMTPSettings\(validate_certs=...\) is deprecated") as seen:
        settings.SMTPSettings(validate_certs=False)
    assert seen[0].filename == __file__  # the warning names the caller's line


def test_a_wrong_options_class_is_refused() -> None:
    with pytest.raises(anyurl.ConfigurationError, match=r"Client\(ftp=...\) must be a FTPOptions, not HTTPOptions"):
        anyurl.Client(ftp=settings.HTTPOptions())  # type: ignore[arg-type]


def test_client_md_documents_the_import() -> None:
    text = DOCS.read_text()
    assert "from anyurl.settings import" in text
    for name in NAMES:
        assert name in text, name


def test_ftp_cwd_strategy_is_checked_when_made() -> None:
    # issue 33 item 10: "auto" is the default, "multicwd" the RFC's sequence to the letter
    assert settings.FTPOptions().cwd_strategy == "auto"
    assert "multicwd" in (settings.FTPOptions.__doc__ or "") and "one CWD per segment" in (
        settings.FTPOptions.__doc__ or "")
    with pytest.raises(anyurl.ConfigurationError, match="cwd_strategy must be one of auto, multicwd"):
        settings.FTPOptions(cwd_strategy="multi")

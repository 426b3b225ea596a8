"""The three local-name policies of anyurl.transfer (docs/internals.md, "Names"): one input,
three answers, each what its use needs. If one of these changes, update the table there."""

from __future__ import annotations

import pytest

from anyurl.response import Entry
from anyurl.transfer.download import PART_SUFFIX, safe_name
from anyurl.transfer.mirror import local_name
from anyurl.transfer.names import entry_file_name, file_name
from anyurl.urls import slash_free_name

#: remote name -> (safe_name: get -O, local_name: mirror, slash_free_name: entries and fsspec)
TABLE = {
    ".bashrc": ("bashrc", ".bashrc", ".bashrc"),
    "a/b": ("a_b", "a%2Fb", "a_b"),
    "x\x01y": ("x_y", "x%01y", "x\x01y"),
    "..": ("index", "%2E%2E", "_.."),
    ".": ("index", "%2E", "_."),
    "a b ": ("a b", "a b ", "a b "),
    "f" + PART_SUFFIX: ("f_anyurl-part", "f" + PART_SUFFIX + "_", "f" + PART_SUFFIX),
    "\u200bz": ("_z", "\u200bz", "\u200bz"),
    "plain.txt": ("plain.txt", "plain.txt", "plain.txt"),
}


@pytest.mark.parametrize("name", list(TABLE))
def test_each_policy_answers_as_documented(name: str) -> None:
    assert (safe_name(name), local_name(name), slash_free_name(name)) == TABLE[name]


@pytest.mark.parametrize("name", list(TABLE))
def test_what_all_three_promise(name: str) -> None:
    for made in (safe_name(name), local_name(name), slash_free_name(name)):
        assert "/" not in made and "\x00" not in made and made not in ("", ".", "..")


def test_the_two_that_write_files_fit_in_255_bytes() -> None:
    long = "\u00e9" * 200 + ".txt"
    for made in (safe_name(long), local_name(long)):
        assert len(made.encode()) <= 255 and made.endswith(".txt")
    assert slash_free_name(long) == long  # an entry's name is not shortened


def test_entry_names_follow_the_listing_policy() -> None:
    assert entry_file_name(Entry(name=".profile", url=None)) == ".profile"
    assert file_name("ftp://h/pub/a%2Fb") == "a_b"


def test_one_home_and_the_old_paths() -> None:
    from anyurl import download, mirror
    from anyurl.transfer import names

    assert download.safe_name is names.safe_name and download.name_for_url is names.name_for_url
    assert download.PART_SUFFIX is names.PART_SUFFIX
    assert mirror.local_name is names.local_name


@pytest.mark.parametrize(("path", "want"), [
    ("", ["index.html"]),
    ("sub/", ["sub", "index.html"]),
    ("sub/index.html", ["sub", "index.html"]),
    ("a%20b/c%2Fd.txt", ["a b", "c%2Fd.txt"]),
    ("..%2F/x", ["..%2F", "x"]),
])
def test_web_names_name_a_directory_page_index_html(path: str, want: list[str]) -> None:
    # issue 33 item 2: "sub/" was saved as "sub" (a file where sub/x.txt needs a directory),
    # the start page as "index" beside a link's "index.html"
    from anyurl.transfer.names import WEB_INDEX, web_names

    assert WEB_INDEX == "index.html"
    assert web_names(path) == want

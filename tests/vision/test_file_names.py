"""One rule for showing a file name that is not UTF-8 (vision.file_names): each such byte is
``\\xNN``, quoted or not, never the lone surrogate Python holds it as."""

from __future__ import annotations

import os

import pytest

from handreader.cli import os_error_text
from vision.file_names import name_text, quoted_name


@pytest.mark.parametrize(
    ("raw", "text", "quoted"),
    [
        (b"h\xe9.png", "h\\xe9.png", "'h\\xe9.png'"),  # Latin-1 "e acute": not UTF-8
        (b"h\xe9\xff.png", "h\\xe9\\xff.png", "'h\\xe9\\xff.png'"),
        ("h\u00e9.png".encode(), "h\u00e9.png", "'h\u00e9.png'"),  # UTF-8: shown as itself
        # a backslash the name holds stays one (doubled by the quotes), never read as a byte
        (b"a\\udce9.png", "a\\udce9.png", "'a\\\\udce9.png'"),
        (b"a\\\xe9.png", "a\\\\xe9.png", "'a\\\\\\xe9.png'"),
        (b"it's\n.png", "it's\n.png", '"it\'s\\n.png"'),  # one line when quoted, as repr
    ],
)
def test_a_name_is_shown_by_one_rule(raw: bytes, text: str, quoted: str) -> None:
    name = os.fsdecode(raw)
    assert name_text(name) == text
    assert quoted_name(name) == quoted


def test_an_operating_system_errors_name_follows_the_rule() -> None:
    error = FileNotFoundError(2, "No such file or directory", os.fsdecode(b"h\xe9.jsonl"))
    assert os_error_text(error) == "h\\xe9.jsonl: No such file or directory"

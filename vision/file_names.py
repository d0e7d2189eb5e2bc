"""How a file's name is shown in messages and JSON: one rule for a name that is not UTF-8.

A name whose bytes are no UTF-8 reaches Python with each such byte as a lone surrogate
(PEP 383: byte 0xE9 as ``\\udce9``). Shown as it is, that surrogate is no text (a JSON line
holding it is not UTF-8) and ``repr`` writes it ``\\udce9``, a character the name never held.
Here each such byte is written ``\\xNN`` (``h\\xe9.png``) wherever the name is shown, quoted
or not, and the rest of the name as itself.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["name_text", "quoted_name"]

_ESCAPES = re.compile(r"\\(\\|udc([89a-f][0-9a-f]))")
"""A backslash escape of ``repr``'s: an escaped backslash, or a byte held as a surrogate."""


def name_text(name: str | Path) -> str:
    """``name`` as text: itself when it is all text, else each byte that is no UTF-8 written
    ``\\xNN`` (``h\\xe9.png``)."""
    return os.fsencode(name).decode("utf-8", "backslashreplace")


def quoted_name(name: str | Path) -> str:
    """``name`` quoted as ``repr`` quotes text (quotes, line breaks and control characters
    escaped: one line whatever the name), each byte that is no UTF-8 written ``\\xNN`` as
    :func:`name_text` writes it: ``'h\\xe9.png'``, not ``'h\\udce9.png'``."""

    def byte(escape: re.Match[str]) -> str:
        return escape.group(0) if escape.group(2) is None else f"\\x{escape.group(2)}"

    return _ESCAPES.sub(byte, repr(os.fspath(name)))

"""Installed fonts that print card indices: Latin capitals and digits, and the suit symbols.

Used by the procedural index crops (:mod:`training.glyph_crops`) and by the printed pages
of the synthetic scenes (:mod:`training.synth.printed`). Needs Pillow (the test and training
extras), imported when fonts are looked for.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "FONT_DIRS",
    "RANK_TEXT",
    "SUIT_SYMBOLS",
    "GlyphFonts",
    "find_fonts",
    "font_dirs",
    "load_font",
]

FONT_DIRS: tuple[Path, ...] = (Path("/usr/share/fonts"), Path("/usr/local/share/fonts"))
"""Where fonts are looked for (recursively: ``.ttf`` and ``.otf`` files)."""

RANK_TEXT = "A23456789JQK"
"""Every glyph a rank needs ("10" is a 1 and a 0)."""

SUIT_SYMBOLS = {"S": "\u2660", "H": "\u2665", "D": "\u2666", "C": "\u2663"}
"""The filled suit symbols of Unicode."""

_SKIPPED_FONTS = re.compile(
    r"italic|oblique|symbol|dingbat|d050000l|math|emoji|mono|icons|z003", re.IGNORECASE
)
"""Families not used for ranks: slanted, symbol and script faces (their letters are Greek,
pictures or cursive), and monospaced faces (their 1 carries a foot no deck prints)."""


@dataclass(frozen=True)
class GlyphFonts:
    """Fonts that render every rank glyph, and fonts that render the four suit symbols."""

    rank_fonts: tuple[Path, ...]
    suit_fonts: tuple[Path, ...]


def _renders(font: Any, text: str) -> bool:
    """Whether every character of ``text`` has its own glyph in ``font`` (not the font's
    missing-glyph box, not empty)."""
    missing = font.getmask("\uffff")
    missing_key = (missing.size, bytes(missing))
    for char in text:
        mask = font.getmask(char)
        if mask.size[0] == 0 or mask.size[1] == 0 or not any(bytes(mask)):
            return False
        if (mask.size, bytes(mask)) == missing_key:
            return False
    return True


def font_dirs() -> tuple[Path, ...]:
    """Where fonts are looked for: the render cache's ``fonts`` folder alone when there is one
    (unpacked from a training pack, :mod:`training.pack`: the fonts of the machine that built
    it, so that scenes are drawn alike), else :data:`FONT_DIRS`."""
    from training.synth.decks import cache_dir

    packed = cache_dir() / "fonts"
    return (packed,) if packed.is_dir() else FONT_DIRS


def find_fonts(dirs: Iterable[Path] | None = None) -> GlyphFonts:
    """The installed fonts usable for ranks and for pips, sorted by path (looked for in
    ``dirs``, by default :func:`font_dirs`)."""
    from PIL import ImageFont

    dirs = font_dirs() if dirs is None else dirs

    paths = sorted(
        path
        for folder in dirs
        if folder.is_dir()
        for path in folder.rglob("*")
        if path.suffix.lower() in (".ttf", ".otf")
    )
    rank_fonts: list[Path] = []
    suit_fonts: list[Path] = []
    for path in paths:
        try:
            font = ImageFont.truetype(str(path), 32)
        except OSError:
            continue
        if not _SKIPPED_FONTS.search(path.name) and _renders(font, RANK_TEXT):
            rank_fonts.append(path)
        if _renders(font, "".join(SUIT_SYMBOLS.values())):
            suit_fonts.append(path)
    return GlyphFonts(tuple(rank_fonts), tuple(suit_fonts))


@functools.lru_cache(maxsize=512)
def load_font(path: Path, size: int) -> Any:
    """The Pillow font at ``path`` and ``size`` pixels, loaded once per process."""
    from PIL import ImageFont

    return ImageFont.truetype(str(path), size)

"""Printed matter on the table: pages of text under the cards (a book, a menu, a score sheet).

Real tables carry print. Its letters and digits are of an index's size, and a reader that has
only seen cards on cloth, wood and photos reads them as cards. A scene drawn with
``backgrounds.printed_probability`` gets one to three pages laid on its background before the
cards: paper of a light (sometimes any) colour, lines of words in one of the installed fonts
(:func:`training.synth.fonts.find_fonts`), now and then a headline, the page turned at any angle
and often cut by the frame. The words include what an index prints (A, K, Q, J, 10, "Joker"),
set as text: no card, so nothing on a page is labelled.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from training.synth.fonts import find_fonts, load_font

__all__ = ["WORDS", "draw_printed", "printing_fonts"]

_VOCABULARY = """
the of and to in is you that it he was for on are as with his they at be this have
from or one had by word but not what all were we when your can said there use an each
which she do how their if will up other about out many then them these so some her
would make like him into time has look two more write go see number no way could
people my than first water been call who its now find long down day did get come made
may part over new A K Q J 10 9 8 7 6 5 4 3 2 1 Ace King Queen Jack Joker Niu Bull
Banker Player Table Total Page Chapter Menu Price No. Vol. $4.50 12.99 1987 2026 %
"""

WORDS = tuple(_VOCABULARY.split())
"""The vocabulary of the pages: common words, numbers, and the words of a card table."""


@functools.lru_cache(maxsize=1)
def printing_fonts() -> tuple[Path, ...]:
    """The fonts pages are set in: the installed fonts that print every rank glyph."""
    fonts = find_fonts().rank_fonts
    if not fonts:
        raise RuntimeError(
            "printed pages need fonts with Latin capitals and digits; none found "
            "(install fonts-dejavu-core)"
        )
    return fonts


def _colour(rng: np.random.Generator, low: int, high: int) -> tuple[int, int, int]:
    return (
        int(rng.integers(low, high + 1)),
        int(rng.integers(low, high + 1)),
        int(rng.integers(low, high + 1)),
    )


def _line(rng: np.random.Generator) -> str:
    return " ".join(WORDS[int(i)] for i in rng.integers(0, len(WORDS), int(rng.integers(2, 13))))


def _page(rng: np.random.Generator, width: int, height: int, fonts: tuple[Path, ...]) -> Any:
    """One page (a Pillow RGBA image, turned, transparent around it)."""
    from PIL import Image, ImageDraw

    paper = _colour(rng, 195, 255) if rng.random() < 0.8 else _colour(rng, 0, 255)
    if rng.random() < 0.7:
        grey = int(rng.integers(0, 70))
        ink = (grey, grey, grey)
    else:  # red or blue print
        ink = _colour(rng, 0, 60)
        ink = (
            (ink[0] + 140, ink[1], ink[2]) if rng.random() < 0.5 else (ink[0], ink[1], ink[2] + 140)
        )
    page = Image.new("RGBA", (width, height), (*paper, 255))
    draw = ImageDraw.Draw(page)
    font_path = fonts[int(rng.integers(len(fonts)))]
    size = int(rng.integers(7, 41))
    top = int(rng.integers(2, 12))
    if rng.random() < 0.3:  # a headline, two to three times the text's size
        headline = min(120, size * int(rng.integers(2, 4)))
        draw.text(
            (int(rng.integers(2, 20)), top),
            _line(rng),
            font=load_font(font_path, headline),
            fill=(*ink, 255),
        )
        top += int(headline * 1.4)
    font = load_font(font_path, size)
    while top < height - size:
        draw.text((int(rng.integers(2, 14)), top), _line(rng), font=font, fill=(*ink, 255))
        top += int(size * rng.uniform(1.15, 1.8))
    angle = float(rng.uniform(-180, 180))
    return page.rotate(angle, expand=True, resample=Image.Resampling.BICUBIC)


def draw_printed(canvas: NDArray[Any], rng: np.random.Generator) -> None:
    """Lay one to three printed pages on the BGR ``canvas`` (uint8, or float in [0, 255] as
    the scene is drawn) in place, at random places (often partly off the frame)."""
    from PIL import Image

    fonts = printing_fonts()
    height, width = canvas.shape[:2]
    picture = Image.fromarray(np.ascontiguousarray(np.clip(canvas, 0, 255)[..., ::-1], np.uint8))
    for _ in range(int(rng.integers(1, 4))):
        page_width = int(rng.integers(width // 5, width * 2 // 3 + 1))
        page_height = int(rng.integers(height // 5, height * 2 // 3 + 1))
        page = _page(rng, page_width, page_height, fonts)
        left = int(rng.integers(-page.width // 3, width - page.width // 3))
        top = int(rng.integers(-page.height // 3, height - page.height // 3))
        picture.paste(page, (left, top), page)
    canvas[:] = np.asarray(picture)[..., ::-1]

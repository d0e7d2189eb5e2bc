"""Jokers with drawn corner marks: the detector meets joker designs no training deck has.

Every deck marks its jokers' corners its own way (a word set down the edge, a star, a star in
a ring or on a disc, a jester's hat), and the training decks have only a few of these ways. A
joker drawn with :func:`restyled_joker` keeps its deck's picture, but the mark in its corners
is erased and another is drawn in its place: a star (filled, outlined, in a ring or cut out of
a disc, five or six points), a J over a small star, or the word JOKER down the edge or across
the top, in one of the installed fonts. Red for the red joker, black (or a dark grey) for the
black one, as decks print them. The new mark is the joker's labelled index.

``geometry.joker_restyle_probability`` in a scene config is the share of jokers so drawn; at
0 (the default) nothing is drawn, so the other configs give the same scenes as before it
existed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import NamedTuple

import cv2
import numpy as np
from numpy.typing import NDArray

from training.synth.assets import DeckAssets
from training.synth.fonts import load_font
from training.synth.index_box import IndexPlace, corner_quads, paper_colour
from training.synth.printed import printing_fonts

__all__ = ["MARK_STYLES", "MarkStyle", "erased_marks", "restyled_joker"]

_SUPERSAMPLE = 4
"""Marks are drawn this many times larger and shrunk with area averaging (smooth edges)."""


def _ink(rng: np.random.Generator, code: str) -> tuple[int, int, int]:
    """The mark's colour (BGR): a red for JR, a black or dark grey for JB."""
    if code == "JR":
        return (int(rng.integers(0, 70)), int(rng.integers(0, 60)), int(rng.integers(170, 240)))
    grey = int(rng.integers(0, 70))
    return (grey, grey, grey)


def _star_points(
    centre: tuple[float, float], radius: float, points: int, inner: float
) -> NDArray[np.int32]:
    """A star polygon's vertices, outer and inner radii alternating, the first point up."""
    angles = -math.pi / 2 + np.arange(2 * points) * math.pi / points
    radii = np.where(np.arange(2 * points) % 2 == 0, radius, radius * inner)
    xs = centre[0] + radii * np.cos(angles)
    ys = centre[1] + radii * np.sin(angles)
    return np.stack([xs, ys], axis=1).round().astype(np.int32)


def _draw_star(
    patch: NDArray[np.uint8],
    rng: np.random.Generator,
    centre: tuple[float, float],
    radius: float,
    colour: tuple[int, ...],
    outline: int = 0,
) -> None:
    """A five- or six-pointed star on ``patch`` (filled, or drawn with lines ``outline`` thick)."""
    points = 5 if rng.random() < 0.8 else 6
    star = _star_points(centre, radius, points, float(rng.uniform(0.38, 0.55)))
    if outline:
        cv2.polylines(patch, [star], True, colour, outline, cv2.LINE_AA)
    else:
        cv2.fillPoly(patch, [star], colour, cv2.LINE_AA)


def _symbol(
    rng: np.random.Generator, side: int, ink: tuple[int, int, int], paper: tuple[int, int, int]
) -> NDArray[np.uint8]:
    """A square BGRA patch with a star mark: filled, outlined, in a ring, or cut from a disc."""
    patch = np.zeros((side, side, 4), np.uint8)
    patch[:, :, :3] = ink  # transparent ink: antialiased edges fade in alpha, not to black
    colour = (*ink, 255)
    centre = (side / 2, side / 2)
    style = int(rng.integers(4))
    line = max(1, round(side * rng.uniform(0.05, 0.1)))
    if style == 0:
        _draw_star(patch, rng, centre, side * 0.48, colour)
    elif style == 1:
        _draw_star(patch, rng, centre, side * 0.45, colour, outline=line)
    elif style == 2:  # a ring with a star inside
        cv2.circle(patch, (side // 2, side // 2), round(side * 0.47) - line // 2, colour, line,
                   cv2.LINE_AA)  # fmt: skip
        _draw_star(patch, rng, centre, side * 0.33, colour)
    else:  # a disc with a star cut out of it
        cv2.circle(patch, (side // 2, side // 2), round(side * 0.48), colour, -1, cv2.LINE_AA)
        _draw_star(patch, rng, centre, side * 0.34, (*paper, 255))
    return patch


def _text_patch(
    text: str, size: int, ink: tuple[int, int, int], font_path: Path
) -> NDArray[np.uint8]:
    """``text`` in the font at ``size`` px as a tight BGRA patch."""
    from PIL import Image, ImageDraw

    font = load_font(font_path, size)
    left, top, right, bottom = font.getbbox(text)
    size_wh = (max(1, right - left), max(1, bottom - top))
    image = Image.new("RGBA", size_wh, (*ink[::-1], 0))  # edges fade in alpha, not to black
    ImageDraw.Draw(image).text((-left, -top), text, font=font, fill=(*ink[::-1], 255))
    return np.asarray(image)[..., [2, 1, 0, 3]].copy()


def _word(
    rng: np.random.Generator,
    height: int,
    ink: tuple[int, int, int],
    paper: tuple[int, int, int],
    down: bool,
) -> NDArray[np.uint8]:
    """JOKER (or Joker) down the edge, a letter under the other, or across the top (in ink
    alone: ``paper`` is not used)."""
    fonts = printing_fonts()
    font = fonts[int(rng.integers(len(fonts)))]
    word = "JOKER" if rng.random() < 0.7 else "Joker"
    if not down:
        return _text_patch(word, height, ink, font)
    letters = [_text_patch(letter, height, ink, font) for letter in word]
    width = max(letter.shape[1] for letter in letters)
    gap = max(1, height // 8)
    column = np.zeros((sum(letter.shape[0] for letter in letters) + gap * 4, width, 4), np.uint8)
    top = 0
    for letter in letters:
        left = (width - letter.shape[1]) // 2
        column[top : top + letter.shape[0], left : left + letter.shape[1]] = letter
        top += letter.shape[0] + gap
    return column


def _letter_over_star(
    rng: np.random.Generator, height: int, ink: tuple[int, int, int], paper: tuple[int, int, int]
) -> NDArray[np.uint8]:
    """A J over a small star, set as a rank over its suit."""
    fonts = printing_fonts()
    letter = _text_patch("J", height, ink, fonts[int(rng.integers(len(fonts)))])
    star = _symbol(rng, max(4, round(height * 0.8)), ink, paper)
    width = max(letter.shape[1], star.shape[1])
    gap = max(1, height // 10)
    patch = np.zeros((letter.shape[0] + gap + star.shape[0], width, 4), np.uint8)
    left = (width - letter.shape[1]) // 2
    patch[: letter.shape[0], left : left + letter.shape[1]] = letter
    left = (width - star.shape[1]) // 2
    patch[letter.shape[0] + gap :, left : left + star.shape[1]] = star
    return patch


class MarkStyle(NamedTuple):
    """One kind of drawn mark: how it is drawn, how often, and how big."""

    draw: Callable[
        [np.random.Generator, int, tuple[int, int, int], tuple[int, int, int]], NDArray[np.uint8]
    ]
    """(generator, scale in px, ink, paper) -> a BGRA patch, drawn at that scale."""
    odds: float
    scale: float
    """The scale as a share of the deck's index height (a word's letters are smaller)."""


MARK_STYLES: dict[str, MarkStyle] = {
    "star": MarkStyle(_symbol, 3.0, 0.45),
    "letter_star": MarkStyle(_letter_over_star, 1.0, 0.45),
    "word_down": MarkStyle(partial(_word, down=True), 1.0, 0.28),
    "word_across": MarkStyle(partial(_word, down=False), 1.0, 0.3),
}
"""The kinds of drawn marks: stars three times as often as each other kind."""


def _blend(card: NDArray[np.uint8], patch: NDArray[np.uint8], left: int, top: int) -> None:
    """Lay the BGRA ``patch`` over the BGRA ``card`` at (left, top), in place."""
    height, width = patch.shape[:2]
    region = card[top : top + height, left : left + width]
    alpha = patch[:, :, 3:4].astype(np.float32) / 255.0
    region[:, :, :3] = (patch[:, :, :3] * alpha + region[:, :, :3] * (1 - alpha)).astype(np.uint8)


def erased_marks(card: NDArray[np.uint8], place: IndexPlace | None) -> NDArray[np.uint8]:
    """A copy of the BGRA ``card`` with its corner marks at ``place`` (a little grown, for
    their antialiased edges) painted over in the card's paper colour; a plain copy when it
    has none."""
    card = card.copy()
    if place is None:
        return card
    card_height, card_width = card.shape[:2]
    paper = paper_colour(card).round()
    inside = card[:, :, 3] > 0
    for quad in corner_quads(place.box, card_width, card_height, place.corners):
        x1, y1 = np.floor(quad.min(axis=0)).astype(int)
        x2, y2 = np.ceil(quad.max(axis=0)).astype(int)
        grow = max(2, round(0.08 * max(x2 - x1, y2 - y1)))
        x1, y1 = max(0, x1 - grow), max(0, y1 - grow)
        x2, y2 = min(card_width, x2 + grow), min(card_height, y2 + grow)
        area = card[y1:y2, x1:x2]
        area[inside[y1:y2, x1:x2], :3] = paper
    return card


def restyled_joker(assets: DeckAssets, code: str, rng: np.random.Generator) -> DeckAssets:
    """``assets`` with joker ``code`` redrawn: its corner marks (if any) covered with the
    card's paper colour and a drawn mark (:data:`MARK_STYLES`) put in its top-left corner
    and, turned half a turn, in its bottom-right one, where the deck prints its indices. The
    returned assets share everything else with ``assets``; the mark is the joker's index."""
    card = erased_marks(assets.cards[code], assets.joker_marks.get(code))
    card_height, card_width = card.shape[:2]
    blue, green, red = (int(v) for v in paper_colour(card).round())
    paper = (blue, green, red)
    index = assets.index_box
    index_height = (index[3] - index[1]) * card_height
    styles = list(MARK_STYLES.values())
    odds = np.array([style.odds for style in styles])
    style = styles[int(rng.choice(len(styles), p=odds / odds.sum()))]
    size = max(4, round(index_height * style.scale * rng.uniform(0.8, 1.25))) * _SUPERSAMPLE
    ink = _ink(rng, code)
    big = style.draw(rng, size, ink, paper)
    mark_height = max(1, round(big.shape[0] / _SUPERSAMPLE))
    mark_width = max(1, round(big.shape[1] / _SUPERSAMPLE))
    # at most a third of the card wide and two thirds tall, as decks print them
    shrink = min(1.0, card_width / 3 / mark_width, card_height * 2 / 3 / mark_height)
    mark_width = max(1, round(mark_width * shrink))
    mark_height = max(1, round(mark_height * shrink))
    mark = np.asarray(
        cv2.resize(big, (mark_width, mark_height), interpolation=cv2.INTER_AREA), np.uint8
    )
    left = round(index[0] * card_width * rng.uniform(0.8, 1.2))
    top = round(index[1] * card_height * rng.uniform(0.8, 1.2))
    left = min(max(1, left), card_width - mark_width - 1)
    top = min(max(1, top), card_height - mark_height - 1)
    _blend(card, mark, left, top)
    _blend(card, mark[::-1, ::-1], card_width - left - mark_width, card_height - top - mark_height)
    box = (left / card_width, top / card_height, (left + mark_width) / card_width,
           (top + mark_height) / card_height)  # fmt: skip
    return DeckAssets(
        assets.deck,
        {**assets.cards, code: card},
        assets.index_box,
        {**assets.joker_marks, code: IndexPlace(box, 2)},
    )

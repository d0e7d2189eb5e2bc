"""A casino layout's printed cloth: the felt's colour, and what is printed on it.

Blackjack, baccarat, poker and Niu Niu layouts print their rules in words and numbers
("BLACKJACK PAYS 3 TO 2", "TIE 8 TO 1"), betting circles and boxes, numbered places, suit
symbols and pictures of cards. A reader trained on cards on plain cloth reads the symbols and
the pictured cards as cards; none of them is labelled. The print is drawn on the table plane
(:class:`FeltPrint`, a BGRA picture of the plane's size) and goes through the scene's camera
with the cards.

Every random draw takes the ``numpy.random.Generator`` passed in.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import cv2
import numpy as np
from numpy.typing import NDArray

from training.synth.assets import DeckAssets
from training.synth.fonts import SUIT_SYMBOLS
from training.synth.printed import printing_fonts
from training.synth.props import glyph_fonts, stamp, suit_mask, text_mask

__all__ = ["FELT_COLOURS_BGR", "GAME_WORDS", "FeltPrint", "casino_felt", "print_layout"]

FELT_COLOURS_BGR: tuple[tuple[int, int, int], ...] = (
    (40, 110, 35),  # green
    (30, 85, 20),  # dark green
    (110, 60, 20),  # blue
    (40, 30, 120),  # red
    (35, 25, 80),  # burgundy
    (90, 30, 70),  # purple
    (25, 25, 25),  # black
    (60, 100, 110),  # teal-grey
)
"""Casino cloth colours (BGR)."""

GAME_WORDS: dict[str, tuple[str, ...]] = {
    "blackjack": (
        "BLACKJACK PAYS 3 TO 2",
        "DEALER MUST DRAW TO 16 AND STAND ON ALL 17s",
        "INSURANCE PAYS 2 TO 1",
        "PERFECT PAIRS",
        "21+3",
        "LUCKY LADIES",
    ),
    "baccarat": ("PLAYER", "BANKER", "TIE 8 TO 1", "BANKER PAYS 19 TO 20", "PAIR 11 TO 1"),
    "poker": ("ANTE", "PLAY", "PAIR PLUS", "ROYAL FLUSH 100 TO 1", "STRAIGHT 6 TO 1", "BONUS"),
    "niuniu": ("BANKER", "PLAYER 1", "PLAYER 2", "PLAYER 3", "NIU NIU", "BULL BULL 3X"),
}
"""What each game's layout prints (words, payouts, numbered places)."""


@dataclass
class FeltPrint:
    """The print of one layout: a BGRA picture of the plane, the ink used, the felt colour."""

    image: NDArray[np.uint8]
    felt_bgr: tuple[float, float, float]
    ink_bgr: tuple[float, float, float]
    circles: list[tuple[tuple[float, float], float]] = field(default_factory=list)
    """The betting circles and boxes drawn (centre and radius, plane pixels): where chips go."""


def casino_felt(
    rng: np.random.Generator, width: int, height: int, felt_bgr: Sequence[float]
) -> NDArray[np.float32]:
    """A cloth of the given colour (BGR float32, ``height`` x ``width``): smooth shading and a
    fine nap."""
    cells = int(rng.integers(2, 6))
    grid = rng.random((cells + 1, cells + 1)).astype(np.float32)
    low = np.asarray(
        cv2.resize(grid, (width, height), interpolation=cv2.INTER_CUBIC), np.float32
    ).clip(0, 1)
    nap = rng.normal(0, rng.uniform(2, 7), (height, width, 1)).astype(np.float32)
    base = np.array(felt_bgr, np.float32) * np.float32(rng.uniform(0.8, 1.2))
    felt: NDArray[np.float32] = (base[None, None, :] * (0.85 + 0.3 * low[..., None]) + nap).astype(
        np.float32
    )
    return felt


def _ink_for(rng: np.random.Generator, felt: NDArray[np.float64]) -> tuple[float, float, float]:
    """Print that shows on the felt: white, gold, cream or a light tint; black on light felt."""
    if felt.mean() > 150:
        return (20.0, 20.0, 20.0)
    inks = ((235, 235, 235), (60, 190, 230), (170, 215, 235), (150, 230, 170))
    ink = np.array(inks[int(rng.integers(len(inks)))], np.float64) * rng.uniform(0.85, 1.05)
    return (float(ink[0]), float(ink[1]), float(ink[2]))


def _arc_text(
    image: NDArray[np.uint8],
    rng: np.random.Generator,
    text: str,
    center: tuple[float, float],
    radius: float,
    middle_angle: float,
    size: int,
    ink: tuple[float, float, float],
) -> None:
    """``text`` set letter by letter along a circle (as a blackjack layout prints its rules),
    centred at ``middle_angle`` (radians, 0 along +x, clockwise on the picture)."""
    fonts = printing_fonts()
    font = fonts[int(rng.integers(len(fonts)))]
    step = size * 0.72 / max(radius, 1.0)
    first = middle_angle + step * (len(text) - 1) / 2
    for number, letter in enumerate(text):
        if letter == " ":
            continue
        angle = first - number * step
        point = (center[0] + radius * math.cos(angle), center[1] + radius * math.sin(angle))
        mask = text_mask(font, letter, size)
        # the letters' feet face the circle's centre
        stamp(image, mask, point, ink, math.degrees(-angle) + 90)


def _printed_card(
    rng: np.random.Generator,
    width: int,
    height: int,
    ink: tuple[float, float, float],
    felt: NDArray[np.float64],
    decks: Sequence[DeckAssets],
) -> NDArray[np.uint8]:
    """A picture of a card printed on the cloth (BGRA): a deck's card washed into the felt's
    colour, or an outline with a rank and a suit symbol set in a font."""
    if decks and rng.random() < 0.5:
        assets = decks[int(rng.integers(len(decks)))]
        codes = [code for code in assets.cards if code not in ("JB", "JR")]
        card = assets.cards[codes[int(rng.integers(len(codes)))]]
        picture = np.asarray(
            cv2.resize(card, (width, height), interpolation=cv2.INTER_AREA), np.uint8
        )
        strength = rng.uniform(0.35, 0.75)  # how much of the card's own colour the print keeps
        colour = picture[..., :3].astype(np.float64)
        washed = colour * strength + felt[None, None, :] * (1 - strength) * (colour / 255.0 + 0.4)
        picture = picture.copy()
        picture[..., :3] = np.clip(washed, 0, 255).astype(np.uint8)
        return picture
    image = np.zeros((height, width, 4), np.uint8)
    cv2.rectangle(image, (1, 1), (width - 2, height - 2), (*ink, 255), max(1, width // 30))
    if rng.random() < 0.5:  # filled with a light tint
        fill = tuple(float(v) for v in np.clip(np.array(ink) * 0.6 + felt * 0.4, 0, 255))
        cv2.rectangle(image, (3, 3), (width - 4, height - 4), (*fill, 255), -1)
    suit = "SHDC"[int(rng.integers(4))]
    rank = ("A", "K", "Q", "J", "10", "7", "5")[int(rng.integers(7))]
    fonts = printing_fonts()
    suit_fonts = glyph_fonts()[1]
    text_ink = ink if rng.random() < 0.5 else ((30.0, 30.0, 200.0) if suit in "HD" else (20.0,) * 3)
    rank_mask = text_mask(fonts[int(rng.integers(len(fonts)))], rank, int(height * 0.2))
    pip = suit_mask(rng, suit, suit_fonts, int(height * 0.14))
    corner = (width * 0.2, height * 0.16)
    stamp(image, rank_mask, corner, text_ink)
    stamp(image, pip, (corner[0], corner[1] + height * 0.17), text_ink)
    stamp(
        image,
        suit_mask(rng, suit, suit_fonts, int(height * 0.4)),
        (width / 2, height / 2),
        text_ink,
    )
    return image


def _place(
    image: NDArray[np.uint8], picture: NDArray[np.uint8], center: tuple[float, float], angle: float
) -> None:
    """Paste a BGRA ``picture`` on the BGRA ``image`` at ``center``, turned by ``angle``
    degrees."""
    h, w = picture.shape[:2]
    side = math.ceil(math.hypot(w, h))
    turn = cv2.getRotationMatrix2D((w / 2, h / 2), angle, 1.0)
    turn[:, 2] += (side - w) / 2, (side - h) / 2
    turned = cv2.warpAffine(picture, turn, (side, side), flags=cv2.INTER_LINEAR)
    x0, y0 = int(center[0] - side / 2), int(center[1] - side / 2)
    ih, iw = image.shape[:2]
    cx0, cy0, cx1, cy1 = max(0, x0), max(0, y0), min(iw, x0 + side), min(ih, y0 + side)
    if cx0 >= cx1 or cy0 >= cy1:
        return
    part = turned[cy0 - y0 : cy1 - y0, cx0 - x0 : cx1 - x0].astype(np.float32)
    weight = part[..., 3:4] / 255.0
    region = image[cy0:cy1, cx0:cx1].astype(np.float32)
    region[..., :3] = region[..., :3] * (1 - weight) + part[..., :3] * weight
    region[..., 3:4] = np.maximum(region[..., 3:4], part[..., 3:4])
    image[cy0:cy1, cx0:cx1] = region.astype(np.uint8)


def print_layout(
    rng: np.random.Generator,
    game: str,
    width: int,
    height: int,
    card_height: float,
    spots: Sequence[tuple[float, float]],
    decks: Sequence[DeckAssets],
    printed_cards_probability: float,
) -> FeltPrint:
    """The print of a ``game``'s layout on a ``width`` x ``height`` plane: a betting circle or
    box at each of ``spots``, the game's words (along an arc for blackjack), scattered suit
    symbols and numbered places, and now and then pictures of cards."""
    felt = np.array(FELT_COLOURS_BGR[int(rng.integers(len(FELT_COLOURS_BGR)))], np.float64)
    ink = _ink_for(rng, felt)
    image = np.zeros((height, width, 4), np.uint8)
    fonts = printing_fonts()
    suit_fonts = glyph_fonts()[1]
    line = max(1, int(card_height * rng.uniform(0.02, 0.05)))
    circles: list[tuple[tuple[float, float], float]] = []
    round_spots = rng.random() < 0.6
    for spot in spots:
        radius = card_height * rng.uniform(0.35, 0.6)
        if round_spots:
            cv2.circle(image, (int(spot[0]), int(spot[1])), int(radius), (*ink, 255), line)
        else:
            half = np.array([radius * 1.2, radius * 0.8])
            top_left = np.round(np.array(spot) - half).astype(int)
            bottom_right = np.round(np.array(spot) + half).astype(int)
            cv2.rectangle(image, tuple(top_left), tuple(bottom_right), (*ink, 255), line)
        circles.append((spot, radius))
        if rng.random() < 0.5:  # a number or a suit symbol by the place
            near = (spot[0] + radius * 1.3, spot[1] - radius * 0.4)
            if rng.random() < 0.5:
                number = str(int(rng.integers(1, 10)))
                mask = text_mask(fonts[int(rng.integers(len(fonts)))], number, int(radius * 0.6))
            else:
                mask = suit_mask(rng, "SHDC"[int(rng.integers(4))], suit_fonts, int(radius * 0.5))
            stamp(image, mask, near, ink, float(rng.uniform(-30, 30)))
    words = GAME_WORDS[game]
    size = max(6, int(card_height * rng.uniform(0.12, 0.3)))
    if game == "blackjack":
        center = (width / 2, -height * rng.uniform(0.1, 0.4))
        for ring, text in enumerate(words[: int(rng.integers(1, 4))]):
            radius = height * (0.55 + 0.12 * ring) + center[1] * -0.2
            _arc_text(image, rng, text, center, radius, math.pi / 2, size, ink)
    else:
        for text in rng.permutation(list(words))[: int(rng.integers(2, 5))]:
            mask = text_mask(fonts[int(rng.integers(len(fonts)))], str(text), size)
            where = (rng.uniform(0.1, 0.9) * width, rng.uniform(0.1, 0.9) * height)
            stamp(image, mask, where, ink, float(rng.normal(0, 8)))
    for _ in range(int(rng.integers(0, 7))):  # large suit symbols, as decorations
        suit = "SHDC"[int(rng.integers(4))]
        mask = suit_mask(rng, suit, suit_fonts, int(card_height * rng.uniform(0.15, 0.6)))
        colour = (
            ink if rng.random() < 0.6 else ((40.0, 40.0, 190.0) if suit in "HD" else (20.0,) * 3)
        )
        where = (rng.uniform(0, 1) * width, rng.uniform(0, 1) * height)
        stamp(image, mask, where, colour, float(rng.uniform(-40, 40)))
    if rng.random() < printed_cards_probability:
        for _ in range(int(rng.integers(1, 4))):
            picture_height = int(card_height * rng.uniform(0.5, 1.0))
            picture = _printed_card(
                rng, max(6, int(picture_height * 0.7)), max(8, picture_height), ink, felt, decks
            )
            where = (rng.uniform(0.1, 0.9) * width, rng.uniform(0.1, 0.9) * height)
            _place(image, picture, where, float(rng.uniform(-30, 30)))
    if rng.random() < 0.5 and SUIT_SYMBOLS:  # a border line round the play area
        cv2.ellipse(
            image,
            (width // 2, int(-height * 0.2)),
            (int(width * 0.6), int(height * 1.05)),
            0,
            0,
            180,
            (*ink, 255),
            line,
        )
    opacity = rng.uniform(0.6, 0.95)  # print soaks into the cloth
    image[..., 3] = (image[..., 3].astype(np.float32) * opacity).astype(np.uint8)
    return FeltPrint(image, (float(felt[0]), float(felt[1]), float(felt[2])), ink, circles)

"""Scene layouts: where each card lies on the table plane, before the camera's tilt.

A layout returns ``Placement`` records (deck, card code, card-to-plane matrix) in drawing order
(later cards lie on top) and ``Occluder`` ellipses (fingers) drawn over the cards.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from training.synth.assets import DeckAssets

__all__ = ["LAYOUTS", "Occluder", "Placement", "choose_codes"]


@dataclass(frozen=True)
class Placement:
    """One card on the table plane: ``matrix`` maps card pixels to plane pixels (3x3)."""

    assets: DeckAssets
    code: str
    matrix: NDArray[np.float64]


@dataclass(frozen=True)
class Occluder:
    """A skin-toned ellipse over the cards (a finger or a thumb), in plane pixels."""

    center: tuple[float, float]
    axes: tuple[float, float]
    angle_degrees: float
    colour_bgr: tuple[float, float, float]


_SKIN_BGR = (
    (150, 180, 225),
    (120, 160, 210),
    (90, 130, 190),
    (60, 90, 140),
    (45, 65, 100),
    (170, 200, 240),
)


def _card_matrix(
    assets: DeckAssets, code: str, center: tuple[float, float], angle: float, height_px: float
) -> NDArray[np.float64]:
    card = assets.cards[code]
    h, w = card.shape[:2]
    scale = height_px / h
    cos, sin = math.cos(angle) * scale, math.sin(angle) * scale
    # rotate about the card's centre, then move it to ``center`` (angle in radians, clockwise
    # on screen because the y axis points down)
    return np.array(
        [
            [cos, -sin, center[0] - cos * w / 2 + sin * h / 2],
            [sin, cos, center[1] - sin * w / 2 - cos * h / 2],
            [0.0, 0.0, 1.0],
        ]
    )


def choose_codes(
    rng: np.random.Generator, assets: DeckAssets, count: int, joker_probability: float
) -> list[str]:
    """``count`` distinct codes of the deck; jokers (if the deck has them) at about the given
    rate."""
    plain = [code for code in assets.deck.codes if code not in ("JB", "JR")]
    jokers = [code for code in assets.deck.codes if code in ("JB", "JR")]
    codes: list[str] = []
    for code in jokers:
        if len(codes) < count and rng.random() < joker_probability * count / 2:
            codes.append(code)
    picks = rng.choice(len(plain), size=count - len(codes), replace=False)
    codes += [plain[int(i)] for i in picks]
    order = rng.permutation(len(codes))
    return [codes[int(i)] for i in order]


def _deck_for(decks: Sequence[DeckAssets], position: int, code: str) -> DeckAssets:
    """The deck of the card at ``position`` (decks mixed; the first deck if it lacks the code)."""
    assets = decks[position % len(decks)]
    return assets if code in assets.cards else decks[0]


def _aspect(assets: DeckAssets) -> float:
    card = next(iter(assets.cards.values()))
    return float(card.shape[1] / card.shape[0])


def _row(
    rng: np.random.Generator,
    decks: Sequence[DeckAssets],
    codes: Sequence[str],
    center: tuple[float, float],
    height_px: float,
    angle: float,
    spacing: float,
    jitter_degrees: float,
) -> list[Placement]:
    """Cards in an overlapping row along ``angle``, ``spacing`` card widths apart."""
    placements = []
    count = len(codes)
    width_px = height_px * _aspect(decks[0])
    for i, code in enumerate(codes):
        offset = (i - (count - 1) / 2) * spacing * width_px
        across = rng.normal(0, 0.04 * height_px)
        x = center[0] + offset * math.cos(angle) - across * math.sin(angle)
        y = center[1] + offset * math.sin(angle) + across * math.cos(angle)
        tilt = angle + math.radians(rng.normal(0, jitter_degrees))
        assets = _deck_for(decks, i, code)
        placements.append(
            Placement(assets, code, _card_matrix(assets, code, (x, y), tilt, height_px))
        )
    return placements


LayoutResult = tuple[list[Placement], list[Occluder]]
LayoutFunction = Callable[
    [np.random.Generator, Sequence[DeckAssets], int, int, tuple[float, float], float], LayoutResult
]


def _hand(
    rng: np.random.Generator,
    decks: Sequence[DeckAssets],
    width: int,
    height: int,
    size_range: tuple[float, float],
    joker_probability: float,
) -> LayoutResult:
    """One hand (usually five cards) spread on the table, at any rotation."""
    count = int(rng.choice([5, 5, 5, 3, 4, 6, 2]))
    height_px = rng.uniform(*size_range) * min(width, height)
    codes = choose_codes(rng, decks[0], count, joker_probability)
    center = (rng.uniform(0.3, 0.7) * width, rng.uniform(0.3, 0.7) * height)
    spacing = rng.uniform(0.3, 1.15)
    angle = rng.uniform(-math.pi, math.pi) if rng.random() < 0.5 else rng.normal(0, 0.3)
    return _row(rng, decks, codes, center, height_px, angle, spacing, 6.0), []


def _fan(
    rng: np.random.Generator,
    decks: Sequence[DeckAssets],
    width: int,
    height: int,
    size_range: tuple[float, float],
    joker_probability: float,
) -> LayoutResult:
    """A hand held in a fan: cards turned about a pivot, fingers over the lower part."""
    count = int(rng.integers(3, 14))
    height_px = rng.uniform(size_range[0], size_range[1] * 0.85) * min(width, height)
    codes = choose_codes(rng, decks[0], count, joker_probability)
    pivot = (rng.uniform(0.35, 0.65) * width, rng.uniform(0.55, 0.85) * height)
    radius = height_px * rng.uniform(0.45, 0.9)
    step = math.radians(rng.uniform(5, 15))
    base = rng.normal(0, 0.35) if rng.random() < 0.7 else rng.uniform(-math.pi, math.pi)
    placements = []
    for i, code in enumerate(codes):
        turn = base + (i - (count - 1) / 2) * step
        center = (pivot[0] + radius * math.sin(turn), pivot[1] - radius * math.cos(turn))
        assets = _deck_for(decks, i, code)
        placements.append(
            Placement(assets, code, _card_matrix(assets, code, center, turn, height_px))
        )
    occluders = []
    skin = _SKIN_BGR[int(rng.integers(len(_SKIN_BGR)))]
    colour = (
        skin[0] * rng.uniform(0.85, 1.1),
        skin[1] * rng.uniform(0.85, 1.1),
        skin[2] * rng.uniform(0.85, 1.1),
    )
    for _ in range(int(rng.integers(1, 5))):
        # fingers and thumb grip the lower part of the fan, around the pivot, pointing up it
        along = rng.uniform(0.0, 0.45) * height_px
        aside = rng.normal(0, 0.25 * height_px)
        center = (
            pivot[0] + along * math.sin(base) + aside * math.cos(base),
            pivot[1] - along * math.cos(base) + aside * math.sin(base),
        )
        axes = (height_px * rng.uniform(0.07, 0.12), height_px * rng.uniform(0.2, 0.4))
        occluders.append(Occluder(center, axes, math.degrees(base) + rng.normal(0, 25), colour))
    return placements, occluders


def _table(
    rng: np.random.Generator,
    decks: Sequence[DeckAssets],
    width: int,
    height: int,
    size_range: tuple[float, float],
    joker_probability: float,
) -> LayoutResult:
    """A Niu Niu table: a banker hand at the top, 1 to 6 player hands below it."""
    players = int(rng.integers(1, 7))
    height_px = rng.uniform(size_range[0], max(size_range[0], size_range[1] * 0.45)) * min(
        width, height
    )
    codes = choose_codes(rng, decks[0], 5 * (players + 1), joker_probability * 0.3)
    placements = []
    banker = (rng.uniform(0.4, 0.6) * width, rng.uniform(0.12, 0.25) * height)
    centers = [banker]
    columns = min(players, 3)
    rows = math.ceil(players / columns)
    for p in range(players):
        column, row = p % columns, p // columns
        x = (column + 0.5) / columns * width + rng.normal(0, 0.02 * width)
        y = (0.45 + 0.45 * (row + 0.5) / rows) * height + rng.normal(0, 0.02 * height)
        centers.append((x, y))
    tilt = rng.normal(0, 0.1)
    for hand, center in enumerate(centers):
        spacing = rng.uniform(0.3, 1.05)
        angle = tilt + rng.normal(0, 0.12)
        placements += _row(
            rng, decks, codes[5 * hand : 5 * hand + 5], center, height_px, angle, spacing, 4.0
        )
    return placements, []


_PITS_RANKS = ["3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A", "2"]


def _pits(
    rng: np.random.Generator,
    decks: Sequence[DeckAssets],
    width: int,
    height: int,
    size_range: tuple[float, float],
    joker_probability: float,
) -> LayoutResult:
    """A Zheng Shangyou play: a single, a pair, a triple or a sequence, sometimes with jokers."""
    assets = decks[0]
    kind = int(rng.integers(4))
    jokers = [code for code in assets.deck.codes if code in ("JB", "JR")]
    if kind < 3:
        rank = _PITS_RANKS[int(rng.integers(len(_PITS_RANKS)))]
        suits = list(rng.permutation(list("SHDC")))[: kind + 1]
        codes = [rank + str(suit) for suit in suits]
    else:
        length = int(rng.integers(3, 8))
        start = int(rng.integers(0, len(_PITS_RANKS) - 1 - length + 1))
        codes = [_PITS_RANKS[start + i] + "SHDC"[int(rng.integers(4))] for i in range(length)]
    if jokers and rng.random() < 0.5:
        codes[int(rng.integers(len(codes)))] = jokers[int(rng.integers(len(jokers)))]
    # a deck of split extra lacks some ranks: its play keeps the cards it has, or is one card
    codes = [code for code in dict.fromkeys(codes) if code in assets.cards]
    if not codes:
        codes = choose_codes(rng, assets, 1, 0.0)
    height_px = rng.uniform(*size_range) * min(width, height)
    center = (rng.uniform(0.3, 0.7) * width, rng.uniform(0.3, 0.7) * height)
    angle = rng.normal(0, 0.3) if rng.random() < 0.7 else rng.uniform(-math.pi, math.pi)
    return _row(rng, decks, codes, center, height_px, angle, rng.uniform(0.3, 1.1), 5.0), []


def _pile(
    rng: np.random.Generator,
    decks: Sequence[DeckAssets],
    width: int,
    height: int,
    size_range: tuple[float, float],
    joker_probability: float,
) -> LayoutResult:
    """Loose cards thrown on the table, overlapping at random; often only corners remain."""
    count = int(rng.integers(4, 22))
    height_px = rng.uniform(size_range[0], max(size_range[0], size_range[1] * 0.6)) * min(
        width, height
    )
    codes = choose_codes(rng, decks[0], count, joker_probability)
    placements = []
    for i, code in enumerate(codes):
        center = (rng.uniform(0.05, 0.95) * width, rng.uniform(0.05, 0.95) * height)
        assets = _deck_for(decks, i, code)
        angle = rng.uniform(-math.pi, math.pi)
        placements.append(
            Placement(assets, code, _card_matrix(assets, code, center, angle, height_px))
        )
    return placements, []


def _single(
    rng: np.random.Generator,
    decks: Sequence[DeckAssets],
    width: int,
    height: int,
    size_range: tuple[float, float],
    joker_probability: float,
) -> LayoutResult:
    """One or two cards close up, filling most of the frame (a card photographed alone)."""
    count = 1 if rng.random() < 0.7 else 2
    codes = choose_codes(rng, decks[0], count, joker_probability)
    height_px = rng.uniform(0.55, 1.0) * height
    placements = []
    for i, code in enumerate(codes):
        center = (
            width * (0.5 + (i - (count - 1) / 2) * 0.35) + rng.normal(0, 0.05 * width),
            height * 0.5 + rng.normal(0, 0.05 * height),
        )
        angle = rng.normal(0, 0.12) + (math.pi if rng.random() < 0.25 else 0.0)
        if rng.random() < 0.15:
            angle += math.pi / 2
        assets = _deck_for(decks, i, code)
        placements.append(
            Placement(assets, code, _card_matrix(assets, code, center, angle, height_px))
        )
    return placements, []


def _closeup(
    rng: np.random.Generator,
    decks: Sequence[DeckAssets],
    width: int,
    height: int,
    size_range: tuple[float, float],
    joker_probability: float,
) -> LayoutResult:
    """One card filling the whole frame, its edges at or past the frame's, often stretched to
    the frame's shape: a card photo cropped to the card and resized (the indices lie against
    the image's edges, where a detector trained on table scenes misses them)."""
    code = choose_codes(rng, decks[0], 1, joker_probability)[0]
    assets = _deck_for(decks, 0, code)
    # the camera's zoom (0.95 to 1.35 of the frame) then brings its edges to the frame's or past
    height_px = rng.uniform(0.72, 0.85) * height
    center = (width * (0.5 + rng.normal(0, 0.02)), height * (0.5 + rng.normal(0, 0.02)))
    angle = rng.normal(0, 0.03) + (math.pi if rng.random() < 0.25 else 0.0)
    matrix = _card_matrix(assets, code, center, angle, height_px)
    if rng.random() < 0.7:
        # stretched so that the card's width spans the frame's width (a resized crop)
        natural = height_px * _aspect(assets)
        factor = width * rng.uniform(0.72, 0.85) / natural
        stretch = np.array(
            [[factor, 0.0, center[0] * (1 - factor)], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
        )
        matrix = stretch @ matrix
    return [Placement(assets, code, matrix)], []


def _tight_fan(
    rng: np.random.Generator,
    decks: Sequence[DeckAssets],
    width: int,
    height: int,
    size_range: tuple[float, float],
    joker_probability: float,
) -> LayoutResult:
    """One to four hands of 7 to 13 cards fanned tight (bridge hands): each card turned just
    past the one under it, so that a strip of 0.3 to 1.1 of its index's width shows; one hand
    held in the fingers, or hands laid on the table round its centre, each facing its side."""
    hands = int(rng.choice([1, 1, 2, 4]))
    share = size_range[1] * (0.8 if hands == 1 else 0.42)
    height_px = rng.uniform(size_range[0], max(size_range[0], share)) * min(width, height)
    codes = choose_codes(rng, decks[0], min(13 * hands, 52), joker_probability * 0.2)
    middle = (width / 2 + rng.normal(0, 0.03 * width), height / 2 + rng.normal(0, 0.03 * height))
    reach = rng.uniform(0.18, 0.3) * min(width, height)
    placements: list[Placement] = []
    occluders: list[Occluder] = []
    for hand in range(hands):
        facing = hand * 2 * math.pi / hands + rng.normal(0, 0.08)  # 0: the hand at the bottom
        base = facing if hands > 1 else rng.normal(0, 0.3)
        if hands == 1:
            spot = (middle[0], middle[1] + 0.15 * height)
        else:
            spot = (middle[0] - reach * math.sin(facing), middle[1] + reach * math.cos(facing))
        count = int(rng.integers(7, 14)) if hands == 1 else 13
        radius = height_px * rng.uniform(0.25, 0.6)
        # the strip of each card left uncovered at its index, as a share of the index's width
        # (about 0.12 of the card's height): a sliver of 0.3 to the whole index
        sliver = rng.uniform(0.3, 1.1) * 0.12 * height_px
        step = sliver / (radius + 0.38 * height_px)
        hand_codes = codes[13 * hand : 13 * hand + count]
        for i, code in enumerate(hand_codes):
            turn = base + (i - (len(hand_codes) - 1) / 2) * step
            center = (spot[0] + radius * math.sin(turn), spot[1] - radius * math.cos(turn))
            assets = _deck_for(decks, i, code)
            placements.append(
                Placement(assets, code, _card_matrix(assets, code, center, turn, height_px))
            )
        if hands == 1 and rng.random() < 0.6:
            skin = _SKIN_BGR[int(rng.integers(len(_SKIN_BGR)))]
            for _ in range(int(rng.integers(1, 4))):
                along = rng.uniform(0.0, 0.35) * height_px
                aside = rng.normal(0, 0.2 * height_px)
                center = (
                    spot[0] + along * math.sin(base) + aside * math.cos(base),
                    spot[1] - along * math.cos(base) + aside * math.sin(base),
                )
                axes = (height_px * rng.uniform(0.07, 0.12), height_px * rng.uniform(0.2, 0.4))
                occluders.append(
                    Occluder(center, axes, math.degrees(base) + rng.normal(0, 25), skin)
                )
    return placements, occluders


LAYOUTS: dict[str, Callable[..., LayoutResult]] = {
    "single": _single,
    "table": _table,
    "hand": _hand,
    "fan": _fan,
    "pits": _pits,
    "pile": _pile,
    "closeup": _closeup,
    "tight_fan": _tight_fan,
}
"""Layout functions by the names used in the config's ``layouts`` weights."""

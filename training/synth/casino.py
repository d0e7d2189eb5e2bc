"""Casino tables: blackjack, baccarat, poker and Niu Niu layouts with their cards, chips, card
backs, shoe, discard tray, chip rack and the dealer's hands.

:func:`casino_table` lays one table out on the plane; the scene draws it through its camera.
Only the cards lying face up are :class:`Placement` records, and so the only things labelled:
the print on the cloth (:mod:`training.synth.felt`), the chips, the card backs and the rest
(:mod:`training.synth.props`) are drawn, never labelled. A card-free table
(``casino.card_free_probability``) has no card face up at all, so that the detector and the
verifier see chips and print with nothing to find.

Every random draw takes the ``numpy.random.Generator`` passed in.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from training.synth.assets import DeckAssets
from training.synth.config import Casino
from training.synth.felt import FeltPrint, print_layout
from training.synth.layouts import (
    _SKIN_BGR,
    Occluder,
    Placement,
    _aspect,
    _card_matrix,
    _deck_for,
    choose_codes,
)
from training.synth.props import (
    Sprite,
    card_back,
    chip_face,
    chip_rack,
    discard_tray,
    placed,
    shoe,
)

__all__ = ["GAMES", "CasinoTable", "ChipStack", "casino_table"]

GAMES = ("blackjack", "baccarat", "poker", "niuniu")
"""The casino games whose layouts are drawn."""


@dataclass(frozen=True)
class ChipStack:
    """Chips stacked on the plane: centre and radius in plane pixels, and how many."""

    center: tuple[float, float]
    radius: float
    count: int


@dataclass
class CasinoTable:
    """One casino table laid out on the plane, in drawing order: the print, then cards and the
    sprites between them (each sprite after its ``after`` first cards), then the stacks, then
    the dealer's hands."""

    game: str
    felt: FeltPrint
    placements: list[Placement] = field(default_factory=list)
    sprites: list[Sprite] = field(default_factory=list)
    stacks: list[ChipStack] = field(default_factory=list)
    occluders: list[Occluder] = field(default_factory=list)


class _Builder:
    """Collects a table's cards and props as a layout function lays them."""

    def __init__(
        self,
        rng: np.random.Generator,
        decks: Sequence[DeckAssets],
        card_height: float,
        codes: list[str],
        card_free: bool,
    ) -> None:
        self.rng = rng
        self.decks = decks
        self.card_height = card_height
        self.card_width = card_height * _aspect(decks[0])
        self.codes = codes
        self.card_free = card_free
        self.placements: list[Placement] = []
        self.sprites: list[Sprite] = []
        self.stacks: list[ChipStack] = []
        self.spots: list[tuple[float, float]] = []

    def offset(
        self, base: tuple[float, float], angle: float, dx: float, dy: float
    ) -> tuple[float, float]:
        """``base`` moved by (dx, dy) card widths and heights along a card turned by ``angle``."""
        x, y = dx * self.card_width, dy * self.card_height
        cos, sin = math.cos(angle), math.sin(angle)
        return (base[0] + cos * x - sin * y, base[1] + sin * x + cos * y)

    def card(self, center: tuple[float, float], angle: float, face_down: bool = False) -> None:
        """A card at ``center`` turned by ``angle``: face up (labelled) unless ``face_down`` or
        the table is card-free, when its back is drawn."""
        angle += math.radians(self.rng.normal(0, 3))
        if face_down or self.card_free or not self.codes:
            back = card_back(self.rng, int(self.card_width), int(self.card_height))
            self.sprites.append(Sprite(back, placed(back, center, angle), len(self.placements)))
            return
        code = self.codes.pop()
        assets = _deck_for(self.decks, len(self.placements), code)
        matrix = _card_matrix(assets, code, center, angle, self.card_height)
        self.placements.append(Placement(assets, code, matrix))

    def cascade(self, base: tuple[float, float], angle: float, count: int, backs: int = 0) -> None:
        """A blackjack hand: each card laid a little right of and above the one before, so that
        every index shows; the first ``backs`` cards face down."""
        dx, dy = self.rng.uniform(0.18, 0.4), -self.rng.uniform(0.08, 0.22)
        for number in range(count):
            self.card(self.offset(base, angle, dx * number, dy * number), angle, number < backs)

    def row(
        self, center: tuple[float, float], angle: float, count: int, spacing: float, backs: int = 0
    ) -> None:
        """Cards side by side (``spacing`` card widths apart), the first ``backs`` face down."""
        for number in range(count):
            shift = (number - (count - 1) / 2) * spacing
            self.card(self.offset(center, angle, shift, 0.0), angle, number < backs)

    def chips(self, center: tuple[float, float], spread: float, stacks: int) -> None:
        """``stacks`` stacks of chips (1 to 12 high) around ``center``."""
        radius = self.card_height * self.rng.uniform(0.18, 0.25)
        for _ in range(stacks):
            where = (
                center[0] + self.rng.normal(0, spread),
                center[1] + self.rng.normal(0, spread),
            )
            self.stacks.append(ChipStack(where, radius, int(self.rng.integers(1, 13))))

    def loose_chip(self, center: tuple[float, float]) -> None:
        """One chip lying flat."""
        diameter = int(self.card_height * self.rng.uniform(0.36, 0.5))
        face = chip_face(self.rng, diameter)
        angle = self.rng.uniform(-math.pi, math.pi)
        self.sprites.append(Sprite(face, placed(face, center, angle), len(self.placements)))

    def prop(self, picture: np.ndarray, center: tuple[float, float], angle: float) -> None:
        self.sprites.append(Sprite(picture, placed(picture, center, angle), len(self.placements)))


def _blackjack(table: _Builder, width: int, height: int) -> None:
    rng = table.rng
    dealer_y = rng.uniform(0.12, 0.3) * height
    arc_y = -rng.uniform(0.1, 0.5) * height
    radius = rng.uniform(0.7, 0.92) * height - arc_y
    players = int(rng.integers(3, 8))
    spread = math.radians(rng.uniform(30, 65))
    for number in range(players):
        turn = math.pi / 2 + spread * ((number / max(1, players - 1)) * 2 - 1 if players > 1 else 0)
        spot = (width / 2 + radius * math.cos(turn), arc_y + radius * math.sin(turn))
        table.spots.append(spot)
        angle = turn - math.pi / 2
        if rng.random() < 0.25:
            continue  # an empty place
        table.chips(spot, table.card_height * 0.08, 1 if rng.random() < 0.7 else 2)
        cards_at = table.offset(spot, angle, -0.1, -1.05)
        count = int(rng.choice([2, 2, 2, 3, 3, 4, 5]))
        table.cascade(cards_at, angle, count)
    count = int(rng.choice([1, 2, 2, 3, 4]))
    table.row(
        (width / 2, dealer_y),
        rng.normal(0, 0.05),
        count,
        rng.uniform(0.3, 1.05),
        int(count == 2 and rng.random() < 0.5),
    )


def _baccarat(table: _Builder, width: int, height: int) -> None:
    rng = table.rng
    middle_y = rng.uniform(0.3, 0.5) * height
    for side in (-1, 1):
        center = (width / 2 + side * rng.uniform(0.15, 0.25) * width, middle_y)
        table.spots.append((center[0], center[1] + table.card_height * 1.1))
        count = int(rng.choice([2, 2, 3]))
        table.row(center, rng.normal(0, 0.05), 2, rng.uniform(0.6, 1.1))
        if count == 3:  # the third card is dealt sideways
            table.card(table.offset(center, 0.0, 0.0, 1.0), math.pi / 2)
    for number in range(int(rng.integers(4, 8))):
        spot = ((number + 0.5) / 7 * width, rng.uniform(0.8, 0.92) * height)
        table.spots.append(spot)
        if rng.random() < 0.6:
            table.chips(spot, table.card_height * 0.1, int(rng.integers(1, 3)))


def _poker(table: _Builder, width: int, height: int) -> None:
    rng = table.rng
    center = (width / 2, rng.uniform(0.4, 0.55) * height)
    burns = int(rng.integers(0, 3))
    table.row(
        center, rng.normal(0, 0.05), int(rng.integers(3, 6)) + burns, rng.uniform(1.02, 1.2), burns
    )
    seats = int(rng.integers(2, 10))
    for number in range(seats):
        turn = 2 * math.pi * number / seats + rng.normal(0, 0.1)
        seat = (
            center[0] + 0.42 * width * math.cos(turn),
            center[1] + 0.4 * height * math.sin(turn),
        )
        angle = turn - math.pi / 2
        table.spots.append(table.offset(seat, angle, 0.0, -0.9))
        face_down = rng.random() < 0.4
        table.row(seat, angle + rng.normal(0, 0.2), 2, rng.uniform(0.3, 0.7), 2 if face_down else 0)
        if rng.random() < 0.7:
            table.chips(
                table.offset(seat, angle, 0.0, -1.0),
                table.card_height * 0.15,
                int(rng.integers(1, 4)),
            )
    if rng.random() < 0.6:
        table.chips(
            table.offset(center, 0.0, 0.0, 1.3), table.card_height * 0.3, int(rng.integers(2, 7))
        )


def _niuniu(table: _Builder, width: int, height: int) -> None:
    rng = table.rng
    table.row(
        (width / 2, rng.uniform(0.12, 0.25) * height),
        rng.normal(0, 0.08),
        5,
        rng.uniform(0.3, 1.05),
    )
    players = int(rng.integers(1, 7))
    columns = min(players, 3)
    rows = math.ceil(players / columns)
    for number in range(players):
        column, line = number % columns, number // columns
        x = (column + 0.5) / columns * width
        y = (0.45 + 0.45 * (line + 0.5) / rows) * height
        table.spots.append((x, y + table.card_height * 0.7))
        backs = 5 if rng.random() < 0.2 else 0
        table.row((x, y), rng.normal(0, 0.12), 5, rng.uniform(0.3, 1.05), backs)
        if rng.random() < 0.6:
            table.chips(
                (x, y + table.card_height * 0.8), table.card_height * 0.2, int(rng.integers(1, 3))
            )


_GAME_LAYOUTS = {"blackjack": _blackjack, "baccarat": _baccarat, "poker": _poker, "niuniu": _niuniu}


def _dealer_hands(
    rng: np.random.Generator, width: int, height: int, card_height: float
) -> list[Occluder]:
    """One or two of the dealer's hands reaching in from the far edge: palm, four fingers and a
    thumb in one skin tone, and a sleeve."""
    skin = np.array(_SKIN_BGR[int(rng.integers(len(_SKIN_BGR)))], np.float64) * rng.uniform(
        0.85, 1.1
    )
    colour = (float(skin[0]), float(skin[1]), float(skin[2]))
    sleeve_colour = (235.0, 235.0, 235.0) if rng.random() < 0.5 else (30.0, 30.0, 30.0)
    occluders: list[Occluder] = []
    for _ in range(int(rng.integers(1, 3))):
        palm = (rng.uniform(0.2, 0.8) * width, rng.uniform(0.05, 0.35) * height)
        size = card_height * rng.uniform(0.5, 0.75)
        reach = rng.normal(0, 0.5)  # the arm comes from the top edge, turned a little
        occluders.append(
            Occluder(
                (palm[0] - math.sin(reach) * size * 2.2, palm[1] - math.cos(reach) * size * 2.2),
                (size * 0.6, size * 1.8),
                math.degrees(-reach),
                sleeve_colour,
            )
        )
        occluders.append(Occluder(palm, (size * 0.5, size * 0.6), math.degrees(-reach), colour))
        for finger in range(5):
            spread = (finger - 2) * 0.25 + reach
            length = size * (0.45 if finger in (0, 4) else 0.6)
            tip = (palm[0] + math.sin(spread) * size * 0.7, palm[1] + math.cos(spread) * size * 0.7)
            occluders.append(Occluder(tip, (size * 0.11, length), math.degrees(-spread), colour))
    return occluders


def casino_table(
    rng: np.random.Generator,
    decks: Sequence[DeckAssets],
    width: int,
    height: int,
    size_range: tuple[float, float],
    joker_probability: float,
    settings: Casino,
) -> CasinoTable:
    """A casino table of one of :data:`GAMES`, laid on a ``width`` x ``height`` plane, its
    cards ``size_range`` of the plane's shorter side tall."""
    game = GAMES[int(rng.integers(len(GAMES)))]
    card_height = rng.uniform(*size_range) * min(width, height)
    card_free = rng.random() < settings.card_free_probability
    codes = choose_codes(rng, decks[0], min(40, len(decks[0].cards) - 2), joker_probability * 0.2)
    table = _Builder(rng, decks, card_height, codes, card_free)
    _GAME_LAYOUTS[game](table, width, height)
    felt = print_layout(
        rng,
        game,
        width,
        height,
        card_height,
        table.spots,
        decks,
        settings.printed_cards_probability,
    )
    for _ in range(int(rng.integers(settings.loose_chips[0], settings.loose_chips[1] + 1))):
        table.loose_chip((rng.uniform(0, 1) * width, rng.uniform(0, 1) * height))
    if rng.random() < settings.shoe_probability:
        left = rng.random() < 0.5
        x = (0.1 if left else 0.9) * width
        picture = shoe(rng, int(table.card_width), int(card_height))
        table.prop(picture, (x, rng.uniform(0.05, 0.25) * height), rng.normal(0, 0.3))
        tray = discard_tray(rng, int(table.card_width), int(card_height))
        table.prop(
            tray,
            ((0.9 if left else 0.1) * width, rng.uniform(0.05, 0.25) * height),
            rng.normal(0, 0.3),
        )
    if rng.random() < settings.rack_probability:
        rack = chip_rack(
            rng, int(card_height * rng.uniform(2.5, 4.5)), int(card_height * rng.uniform(0.6, 1.0))
        )
        table.prop(
            rack,
            (width / 2 + rng.normal(0, 0.05 * width), rng.uniform(-0.05, 0.06) * height),
            rng.normal(0, 0.05),
        )
    occluders = (
        _dealer_hands(rng, width, height, card_height)
        if rng.random() < settings.hands_probability
        else []
    )
    return CasinoTable(game, felt, table.placements, table.sprites, table.stacks, occluders)

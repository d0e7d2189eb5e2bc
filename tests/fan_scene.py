"""A hand of five held in a fan: its geometry, a rendered picture of it, and fake readings.

Used by the grouping, live, page and benchmark tests so that a fanned hand is checked without
depending on the models' accuracy:

- :func:`fan_layout` places the cards: each turned about a pivot below the hand, ``step``
  degrees apart, a later card on top of the earlier one. Every card shows its top-left index;
  the top card also shows its turned bottom-right index (nothing covers it), so a reader gives
  that card as one reading of two corners whose box runs across the whole card, beside four
  single indices: the layout that once split live readings into 1 + 4 + ... groups;
- :func:`render_fan` draws it on green felt with the cards of a deck of ``training.synth``
  (Debian's card art, when installed) or, without them, with plain drawn cards;
- :func:`tight_table` lays out three small fans of five (a banker above, two players below):
  on a phone the codes written at their cards would overlap, the scene of the code layout's
  tests;
- :class:`FanReader` "reads" the fan from any image (boxes scaled to the image, so any frame
  size works): a photo as it lies, video frames with per-call noise drawn from
  ``default_rng([seed, call])``: boxes jittered by a few pixels, a card missed now and then,
  the top card's far corner missed.

The hand is ``KS QH 10D 3C 4S``: K + Q + 10 = 30 makes the bull and 3 + 4 = 7, Niu 7 (seed
002: the rest's points mod 10). ``tests/fixtures/fan_niu7.jpg`` is :func:`render_fan` of the
default layout with the ``anglo`` deck, saved once (:func:`write_fixture`) so that tests run
without the card art.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.detections import CardReading, Reading

__all__ = [
    "FAN_HAND",
    "FAN_LABEL",
    "FIXTURE",
    "SIZE_WH",
    "FanCard",
    "FanReader",
    "fan_layout",
    "fan_reading",
    "render_fan",
    "tight_table",
    "write_fixture",
]

FAN_HAND = ("KS", "QH", "10D", "3C", "4S")
FAN_LABEL = "Niu 7"
SIZE_WH = (640, 480)
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "fan_niu7.jpg"
CARD_ASPECT = 0.71
"""Width over height of a playing card (63 x 88 mm)."""
INDEX_BOX = (0.04, 0.03, 0.19, 0.27)
"""Where a drawn card prints its index, as fractions of its width and height."""
DECK = "anglo"
"""The deck of ``training.synth`` that the fixture is drawn with."""

Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class FanCard:
    """One card of the fan: its code, its corners (top-left, top-right, bottom-right,
    bottom-left, image pixels) and the boxes of its visible indices."""

    code: str
    quad: NDArray[np.float64]
    index_boxes: tuple[Box, ...]
    matrix: NDArray[np.float64] = field(repr=False)
    """Card coordinates (fractions of width and height) to image pixels (2 x 3)."""


def _bounds(points: NDArray[np.float64]) -> Box:
    return (
        float(points[:, 0].min()),
        float(points[:, 1].min()),
        float(points[:, 0].max()),
        float(points[:, 1].max()),
    )


def fan_layout(
    size_wh: tuple[int, int] = SIZE_WH,
    codes: tuple[str, ...] = FAN_HAND,
    *,
    pivot: tuple[float, float] = (0.5, 0.92),
    card_height: float = 0.5,
    radius: float = 0.62,
    step_degrees: float = 12.0,
    base_degrees: float = 0.0,
    index_box: Box = INDEX_BOX,
    shift_xy: tuple[float, float] = (0.0, 0.0),
) -> list[FanCard]:
    """The cards of a fan, bottom card first (see the module docstring). ``pivot`` is in
    fractions of the image, ``card_height`` of its height, ``radius`` (pivot to card centre) of
    the card height; ``shift_xy`` moves the whole fan by pixels (a shaking camera)."""
    width, height = size_wh
    card_h = card_height * height
    card_w = CARD_ASPECT * card_h
    px, py = pivot[0] * width + shift_xy[0], pivot[1] * height + shift_xy[1]
    cards = []
    count = len(codes)
    for i, code in enumerate(codes):
        turn = math.radians(base_degrees + (i - (count - 1) / 2) * step_degrees)
        cos, sin = math.cos(turn), math.sin(turn)
        centre = (px + radius * card_h * sin, py - radius * card_h * cos)
        # card fractions (u, v) -> image: rotate the card's own offset from its centre
        matrix = np.array(
            [
                [cos * card_w, -sin * card_h, 0.0],
                [sin * card_w, cos * card_h, 0.0],
            ]
        )
        matrix[:, 2] = np.array(centre) - matrix[:, :2] @ np.array([0.5, 0.5])

        def image_points(
            points: list[tuple[float, float]], at: NDArray[np.float64] = matrix
        ) -> NDArray[np.float64]:
            uv = np.array(points, np.float64)
            return uv @ at[:, :2].T + at[:, 2]

        quad = image_points([(0, 0), (1, 0), (1, 1), (0, 1)])
        x1, y1, x2, y2 = index_box
        boxes = [_bounds(image_points([(x1, y1), (x2, y1), (x2, y2), (x1, y2)]))]
        if i == count - 1:  # the top card: its turned bottom-right index shows too
            turned = [(1 - x2, 1 - y2), (1 - x1, 1 - y2), (1 - x1, 1 - y1), (1 - x2, 1 - y1)]
            boxes.append(_bounds(image_points(turned)))
        cards.append(FanCard(code, quad, tuple(boxes), matrix))
    return cards


TIGHT_HANDS = (
    (FAN_HAND, (0.5, 0.52)),
    (("AH", "2H", "3H", "4H", "6H"), (0.2, 0.98)),
    (("7C", "8C", "9C", "JC", "QC"), (0.8, 0.98)),
)
"""The hands of :func:`tight_table` and their fans' pivots (fractions of the image): Niu 7 for
the banker on top, Niu 6 (A+3+6, 2+4) and No Niu below (seed 002's rules)."""


def tight_table(size_wh: tuple[int, int] = SIZE_WH) -> list[FanCard]:
    """Three fans of five, cards 0.3 of the image's height, 8 degrees apart (see the module
    docstring), every hand's cards after the previous hand's."""
    return [
        card
        for codes, pivot in TIGHT_HANDS
        for card in fan_layout(size_wh, codes, pivot=pivot, card_height=0.3, step_degrees=8.0)
    ]


def _jittered(box: Box, rng: np.random.Generator, jitter_px: float) -> Box:
    x1, y1, x2, y2 = (float(v) for v in np.array(box) + rng.uniform(-jitter_px, jitter_px, 4))
    return (x1, y1, x2, y2)


def fan_reading(
    layout: list[FanCard],
    size_wh: tuple[int, int],
    rng: np.random.Generator | None = None,
    *,
    jitter_px: float = 0.0,
    miss: float = 0.0,
    corner_miss: float = 0.0,
) -> Reading:
    """The reading a reader gives of the fan: per card the union of its visible index boxes
    (``corners`` of them, ``index_px`` their longer side); with ``rng``, boxes jittered by up to
    ``jitter_px``, each card missed with probability ``miss`` and the top card's second
    corner with ``corner_miss``."""
    cards = []
    for card in layout:
        boxes = list(card.index_boxes)
        if rng is not None:
            if rng.random() < miss:
                continue
            if len(boxes) > 1 and rng.random() < corner_miss:
                boxes = boxes[:1]
            boxes = [_jittered(box, rng, jitter_px) for box in boxes]
        union = (
            min(box[0] for box in boxes),
            min(box[1] for box in boxes),
            max(box[2] for box in boxes),
            max(box[3] for box in boxes),
        )
        size = max(max(box[2] - box[0], box[3] - box[1]) for box in boxes)
        cards.append(CardReading(card.code, 0.95, union, corners=len(boxes), index_px=size))
    cards.sort(key=lambda card: card.center_xy)
    return Reading(size_wh, tuple(cards))


def _felt(size_wh: tuple[int, int], seed: int) -> NDArray[np.float32]:
    width, height = size_wh
    rng = np.random.default_rng(seed)
    coarse = rng.normal(0, 1, (height // 16 + 1, width // 16 + 1)).astype(np.float32)
    shade = cv2.resize(coarse, (width, height), interpolation=cv2.INTER_CUBIC)
    felt = np.empty((height, width, 3), np.float32)
    for channel, level in enumerate((38.0, 112.0, 46.0)):  # BGR green baize
        felt[:, :, channel] = level + 6 * shade + rng.normal(0, 3, (height, width))
    return felt


def _card_art(code: str, deck: str | None) -> NDArray[np.uint8] | None:
    """The deck's render of ``code`` (BGRA), or None without ``training.synth``'s card art."""
    if deck is None:
        return None
    try:
        from training.synth.assets import load_assets

        return load_assets(deck, 480).cards[code]
    except (ImportError, RuntimeError, StopIteration, KeyError, OSError):
        return None


def _drawn_card(code: str, index_box: Box) -> NDArray[np.uint8]:
    """A plain card (BGRA, 480 px tall): white, a grey edge, its index in two corners."""
    height = 480
    width = round(CARD_ASPECT * height)
    card = np.zeros((height, width, 4), np.uint8)
    cv2.rectangle(card, (0, 0), (width - 1, height - 1), (250, 250, 250, 255), -1)
    cv2.rectangle(card, (0, 0), (width - 1, height - 1), (90, 90, 90, 255), 3)
    colour = (30, 30, 200, 255) if code[-1] in "HD" else (20, 20, 20, 255)
    left, top, _, bottom = index_box
    corner = np.zeros_like(card)
    rank_at = (int(left * width), int((top + 0.11) * height))
    suit_at = (int(left * width) + 6, int(bottom * height) - 4)
    suit = {"S": "s", "H": "h", "D": "d", "C": "c"}[code[-1]]
    cv2.putText(corner, code[:-1], rank_at, cv2.FONT_HERSHEY_DUPLEX, 1.6, colour, 3)
    cv2.putText(corner, suit, suit_at, cv2.FONT_HERSHEY_DUPLEX, 1.5, colour, 3)
    turned = corner[::-1, ::-1]
    ink = (corner[:, :, 3] > 0) | (turned[:, :, 3] > 0)
    card[ink] = np.where((corner[:, :, 3] > 0)[..., None], corner, turned)[ink]
    return card


def render_fan(
    layout: list[FanCard],
    size_wh: tuple[int, int] = SIZE_WH,
    *,
    deck: str | None = DECK,
    seed: int = 0,
) -> NDArray[np.uint8]:
    """The fan drawn on felt (BGR), bottom card first, each with a soft shadow."""
    width, height = size_wh
    canvas = _felt(size_wh, seed)
    for card in layout:
        art = _card_art(card.code, deck)
        if art is None:
            art = _drawn_card(card.code, INDEX_BOX)
        art_h, art_w = art.shape[:2]
        to_image = card.matrix @ np.diag([1 / art_w, 1 / art_h, 1.0])
        patch = cv2.warpAffine(
            art,
            to_image,
            (width, height),
            flags=cv2.INTER_AREA,
            borderMode=cv2.BORDER_CONSTANT,
            borderValue=(0, 0, 0, 0),
        )
        alpha = (patch[:, :, 3].astype(np.float32) / 255.0)[..., None]
        shadow = np.roll(cv2.GaussianBlur(alpha[..., 0], (0, 0), 4), (4, 3), axis=(0, 1))
        canvas *= (1 - 0.35 * shadow)[..., None]
        canvas = canvas * (1 - alpha) + patch[:, :, :3].astype(np.float32) * alpha
    return np.clip(canvas + 0.5, 0, 255).astype(np.uint8)


@dataclass
class FanReader:
    """Reads the fan of ``layout`` (laid out on an image of ``size_wh``) from any image, its
    boxes scaled to the image given: without noise as a photo (:meth:`read`), with the noise
    of :func:`fan_reading` drawn per call as video frames (:meth:`for_frames`, which the live
    pipeline calls, as it does the recognizer's)."""

    layout: list[FanCard] = field(default_factory=fan_layout)
    size_wh: tuple[int, int] = SIZE_WH
    seed: int = 0
    jitter_px: float = 2.0
    miss: float = 0.03
    corner_miss: float = 0.2
    noisy: bool = False

    def __post_init__(self) -> None:
        self.calls = 0
        self.sizes: list[tuple[int, int]] = []

    def for_frames(self) -> FanReader:
        """This reader reading video frames: with noise."""
        return replace(self, noisy=True)

    def reading_for(self, size_wh: tuple[int, int], call: int | None) -> Reading:
        """The reading of an image of ``size_wh``; ``call`` None: without noise."""
        rng = None if call is None else np.random.default_rng([self.seed, call])
        reading = fan_reading(
            self.layout,
            self.size_wh,
            rng,
            jitter_px=self.jitter_px,
            miss=self.miss,
            corner_miss=self.corner_miss,
        )
        factor = size_wh[0] / self.size_wh[0]
        return reading.scaled(factor, size_wh) if factor != 1 else reading

    def read(self, image: NDArray[np.uint8]) -> Reading:
        """The reading of ``image`` (noisy: of the next call), scaled to it."""
        size = (int(image.shape[1]), int(image.shape[0]))
        self.sizes.append(size)
        self.calls += 1
        return self.reading_for(size, self.calls if self.noisy else None)


def write_fixture(path: Path = FIXTURE) -> Path:
    """Render the default fan with the ``anglo`` deck and save it as the tests' JPEG."""
    image = render_fan(fan_layout())
    path.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(path), image, [cv2.IMWRITE_JPEG_QUALITY, 90])
    return path

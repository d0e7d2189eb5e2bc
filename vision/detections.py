"""The recognizer's data types: raw detections (struct of arrays) and the cards read."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace

import numpy as np
from numpy.typing import NDArray

from rules.cards import CARD_CLASSES

__all__ = [
    "CLASSIFIER_CLASSES",
    "CardReading",
    "Detections",
    "Reading",
    "ReadingFlag",
    "doubt_fields",
]

CLASSIFIER_CLASSES: tuple[str, ...] = (*CARD_CLASSES, "none")
"""The classifiers' outputs (the index classifier's and the whole-card classifier's): the 54
cards in ``CARD_CLASSES`` order, then "none"."""


@dataclass(frozen=True)
class Detections:
    """Detector boxes: ``xyxy`` (N, 4) pixels, ``confidence`` (N,), ``class_id`` (N,)."""

    xyxy: NDArray[np.float32]
    confidence: NDArray[np.float32]
    class_id: NDArray[np.int64]

    def __post_init__(self) -> None:
        if self.xyxy.ndim != 2 or self.xyxy.shape[1] != 4:
            raise ValueError(f"xyxy must have shape (N, 4), got {self.xyxy.shape}")
        count = self.xyxy.shape[0]
        if self.confidence.shape != (count,):
            raise ValueError(f"confidence must have shape ({count},), got {self.confidence.shape}")
        if self.class_id.shape != (count,):
            raise ValueError(f"class_id must have shape ({count},), got {self.class_id.shape}")

    @classmethod
    def empty(cls) -> Detections:
        """No detections."""
        return cls(np.zeros((0, 4), np.float32), np.zeros(0, np.float32), np.zeros(0, np.int64))

    def __len__(self) -> int:
        return int(self.xyxy.shape[0])

    def __getitem__(self, mask: NDArray[np.bool_] | NDArray[np.int64]) -> Detections:
        """The detections selected by a boolean mask or an index array."""
        return Detections(self.xyxy[mask], self.confidence[mask], self.class_id[mask])


class ReadingFlag(enum.Flag):
    """What may be wrong with a reading; several at once."""

    NONE = 0
    LOW_CONFIDENCE = enum.auto()
    """At least one card was read with low confidence (reported as uncertain, not guessed)."""
    DUPLICATE = enum.auto()
    """The same card appears twice where the game has one deck."""
    WRONG_COUNT = enum.auto()
    """A hand has more or fewer cards than the game needs."""
    UNREADABLE = enum.auto()
    """The image could not be read at all."""
    COLOURLESS = enum.auto()
    """The photo has no colour: a card read in a black suit may be red (``vision.doubted``)."""


def doubt_fields(
    uncertain: bool, alternatives: tuple[tuple[str, float], ...], other_corners: tuple[str, ...]
) -> dict[str, object]:
    """The JSON fields that say what else a card may be: an uncertain card's runner-up
    readings (``alternatives``, code and probability) and what another corner of it read
    (``other_corners``); none for a card without doubt."""
    fields: dict[str, object] = {}
    if uncertain and alternatives:
        fields["alternatives"] = [[code, round(p, 4)] for code, p in alternatives]
    if other_corners:
        fields["other_corners"] = list(other_corners)
    return fields


@dataclass(frozen=True)
class CardReading:
    """One physical card read from the image.

    ``code`` is the card in product notation (``10H``, ``JR``); ``confidence`` in [0, 1];
    ``box_xyxy`` covers the card's visible index(es) in image pixels; ``corners`` is how many
    index detections were merged into this card; ``uncertain`` is True when the confidence is
    below the reader's threshold (the code is then the best guess, not to be trusted);
    ``alternatives`` holds the runner-up codes with their probabilities; ``other_corners``
    the codes another corner of the card read, unsure, where it disagrees with the card.
    """

    code: str
    confidence: float
    box_xyxy: tuple[float, float, float, float]
    corners: int = 1
    uncertain: bool = False
    alternatives: tuple[tuple[str, float], ...] = ()
    index_px: float = 0.0
    """The longer side of one of its index boxes (0 when unknown, e.g. cards given as codes)."""
    other_corners: tuple[str, ...] = ()

    @property
    def center_xy(self) -> tuple[float, float]:
        """Centre of the box."""
        x1, y1, x2, y2 = self.box_xyxy
        return (x1 + x2) / 2, (y1 + y2) / 2

    def to_dict(self) -> dict[str, object]:
        """JSON form used by the CLI and the API; an uncertain card names its runner-up
        readings (``alternatives``, code and probability)."""
        return {
            "card": self.code,
            "confidence": round(self.confidence, 4),
            "box": [round(v, 1) for v in self.box_xyxy],
            "corners": self.corners,
            "uncertain": self.uncertain,
            **doubt_fields(self.uncertain, self.alternatives, self.other_corners),
        }


@dataclass(frozen=True)
class Reading:
    """Everything read from one image: its size and its cards (certain and uncertain)."""

    size_wh: tuple[int, int]
    cards: tuple[CardReading, ...]
    flags: ReadingFlag = ReadingFlag.NONE
    timings_ms: dict[str, float] = field(default_factory=dict, compare=False)

    @property
    def certain(self) -> tuple[CardReading, ...]:
        """The cards read with confidence."""
        return tuple(card for card in self.cards if not card.uncertain)

    def scaled(
        self,
        factor: float,
        size_wh: tuple[int, int],
        offset_xy: tuple[float, float] = (0.0, 0.0),
    ) -> Reading:
        """This reading in the pixels of a ``factor`` times larger image of size ``size_wh``.

        A point (x, y) becomes (factor * x - offset_x, factor * y - offset_y); card boxes are
        then clipped to ``size_wh`` and ``index_px`` is multiplied by ``factor``; codes,
        confidences, flags and timings are kept. Used to give the boxes of an image decoded at
        a reduced scale in the photo's own pixels (``vision.imageio.ReducedImage``).
        """
        if not factor > 0:
            raise ValueError(f"scale factor must be positive, got {factor!r}")
        width, height = size_wh
        if width <= 0 or height <= 0:
            raise ValueError(f"size_wh must be positive, got {size_wh!r}")
        left, top = offset_xy

        def point(value: float, offset: float, limit: int) -> float:
            return min(max(value * factor - offset, 0.0), float(limit))

        cards = tuple(
            replace(
                card,
                box_xyxy=(
                    point(card.box_xyxy[0], left, width),
                    point(card.box_xyxy[1], top, height),
                    point(card.box_xyxy[2], left, width),
                    point(card.box_xyxy[3], top, height),
                ),
                index_px=card.index_px * factor,
            )
            for card in self.cards
        )
        return Reading((width, height), cards, self.flags, dict(self.timings_ms))

    def to_dict(self) -> dict[str, object]:
        """JSON form used by the CLI and the API."""
        return {
            "size": list(self.size_wh),
            "cards": [card.to_dict() for card in self.cards],
            "flags": [
                flag.name.lower()
                for flag in ReadingFlag
                if flag and flag in self.flags and flag.name
            ],
        }

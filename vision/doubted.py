"""Cards the reader reads but cannot vouch for, made uncertain after reading.

- **A rank whose letter the classifier does not read** (:func:`unread_letters_in_doubt`): with
  the deck's index letters named (``ReaderSettings.indices``), a rank that deck prints in a
  letter the classifier was never taught (:func:`vision.index_letters.unread_ranks`).
- **A black suit in a photo without colour** (:func:`colourless`,
  :func:`black_suits_in_doubt`): in a greyscale photo (an infrared webcam, a black-and-white
  scan, a phone's mono filter) a red index is as dark as a black one, and the index
  classifier, which tells the suits apart by colour as much as by shape, reads a diamond or a
  heart as a spade or a club. A card read in a red suit there was read by its shape alone and
  stays; one read in a black suit (or the black joker) may be red and is uncertain. This holds
  for a photo of three cards or more: one or two cards filling a photo are also read from
  their whole face, whose large pips tell the suits apart without colour.

Measured with ``handreader eval`` on greyscale copies of the labelled photos
(docs/reading.md): the rule changes no colour photo of the real folders or the held-out
scenes (:data:`COLOURLESS_SHARE`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.detections import CardReading
from vision.index_letters import unread_ranks

__all__ = [
    "COLOURLESS_SHARE",
    "COLOUR_STEP",
    "black_suits_in_doubt",
    "colour_share",
    "colourless",
    "unread_letters_in_doubt",
]

COLOUR_STEP = 8
"""A pixel is coloured when its largest channel exceeds its smallest by more than this (a
greyscale photo, JPEG included, has none: its channels decode equal)."""

COLOURLESS_SHARE = 1e-4
"""A photo is without colour when fewer of its pixels than this share are coloured (the
least-coloured colour photo of three cards or more in the labelled folders and held-out scenes
has 3.6e-4 of them over 12; a greyscale one has none)."""

_SAMPLE_SIDE = 256
"""About how many pixels of the longer side :func:`colour_share` looks at."""

_BLACK = frozenset({"S", "C"})


def colour_share(image: NDArray[np.uint8]) -> float:
    """The share of a BGR image's pixels, over a grid of about 256 on the longer side, whose
    largest channel exceeds their smallest by more than :data:`COLOUR_STEP` (the largest of
    the three channels' differences between each other)."""
    step = max(1, max(image.shape[:2]) // _SAMPLE_SIDE)
    height, width = image.shape[:2]
    grid = cv2.resize(image, (width // step, height // step), interpolation=cv2.INTER_NEAREST)
    blue, green, red = cv2.split(grid)
    spread = cv2.max(
        cv2.max(cv2.absdiff(blue, green), cv2.absdiff(green, red)), cv2.absdiff(blue, red)
    )
    _, coloured = cv2.threshold(spread, COLOUR_STEP, 1, cv2.THRESH_BINARY)
    return cv2.countNonZero(coloured) / coloured.size


def colourless(image: NDArray[np.uint8]) -> bool:
    """Whether a BGR image has no colour to tell red suits from black ones by."""
    return colour_share(image) < COLOURLESS_SHARE


def black_suits_in_doubt(cards: Sequence[CardReading]) -> list[CardReading]:
    """``cards`` of a photo without colour with each certain card read in a black suit (and
    the black joker) uncertain: it may be the red card of its rank (the module docstring)."""
    return [
        dataclasses.replace(card, uncertain=True)
        if not card.uncertain and (card.code == "JB" or card.code[-1] in _BLACK)
        else card
        for card in cards
    ]


def unread_letters_in_doubt(
    cards: Sequence[CardReading], indices: str, known: Mapping[str, tuple[str, ...]]
) -> list[CardReading]:
    """``cards`` with those of a rank the deck ``indices`` prints in a letter the classifier
    (its ``known`` letters) does not read uncertain."""
    unread = unread_ranks(indices, known)
    if not unread:
        return list(cards)
    return [
        dataclasses.replace(card, uncertain=True)
        if not card.uncertain and card.code[:-1] in unread and card.code not in ("JB", "JR")
        else card
        for card in cards
    ]

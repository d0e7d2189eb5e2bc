"""Where a deck prints its corner index, and where each joker prints its corner mark, measured
from the renders.

The index (rank glyph with the suit pip under it) sits in the top-left corner, and the same
index turned half a turn in the bottom-right corner (some decks repeat it in all four corners).
Its box is measured once per deck: the ink near the corner of the aces, twos and threes gives
the box of a one-character rank with its suit, widened to cover the ink of the two-character
"10".

Jokers carry no rank and suit; each deck prints its own mark in their corner: a star in a
ring, a vertical "JOKER", a word across the top, a chequered disc. The mark is measured on each
joker: the ink blobs that start in the corner, followed down (letters stacked in a column) and
to the right (letters of a word). A joker whose corner holds no such ink has no corner mark.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

__all__ = [
    "MEASURE_VERSION",
    "IndexBox",
    "IndexPlace",
    "corner_quads",
    "measure_index_box",
    "measure_joker_mark",
    "paper_colour",
]

MEASURE_VERSION = 2
"""Version of these measurements; cached results of another version are measured again
(1: rank only under a large suit pip, jokers given the number cards' box; 2: suit pips
followed under the rank, jokers measured one by one)."""

IndexBox = tuple[float, float, float, float]
"""An index box (x1, y1, x2, y2) as fractions of the card's width and height."""

Blob = tuple[int, int, int, int]
"""An ink blob's bounding box (x1, y1, x2, y2) in card pixels, ends exclusive."""


@dataclass(frozen=True, slots=True)
class IndexPlace:
    """Where one card prints its corner index (or a joker its mark): the top-left box, and in
    how many corners it is printed (2: top-left and, turned, bottom-right; 4: all four)."""

    box: IndexBox
    corners: int


def _composite_white(rgba: NDArray[np.uint8]) -> NDArray[np.uint8]:
    alpha = rgba[:, :, 3:4].astype(np.float32) / 255.0
    rgb = rgba[:, :, :3].astype(np.float32) * alpha + 255.0 * (1.0 - alpha)
    composite: NDArray[np.uint8] = rgb.astype(np.uint8)
    return composite


def paper_colour(rgba: NDArray[np.uint8]) -> NDArray[np.float64]:
    """The card's paper colour (BGR): the median of its upper-left area, where number cards
    show mostly paper."""
    height, width = rgba.shape[:2]
    rgb = _composite_white(rgba)
    region = rgb[int(0.05 * height) : int(0.4 * height), int(0.05 * width) : int(0.35 * width)]
    paper: NDArray[np.float64] = np.median(region.reshape(-1, 3), axis=0)
    return paper


def _ink_mask(
    rgba: NDArray[np.uint8], paper: NDArray[np.float64] | None = None
) -> NDArray[np.bool_]:
    """Pixels that differ clearly from the paper (the card's own by default), away from the
    card's outline."""
    width = rgba.shape[1]
    rgb = _composite_white(rgba).astype(np.int16)
    if paper is None:
        paper = paper_colour(rgba)
    ink = np.abs(rgb - paper).sum(axis=2) > 90
    margin = max(2, round(0.035 * width))
    inside = cv2.erode(
        (rgba[:, :, 3] > 250).astype(np.uint8), np.ones((3, 3), np.uint8), iterations=margin
    )
    mask: NDArray[np.bool_] = ink & (inside > 0)
    return mask


def _blobs(ink: NDArray[np.bool_], max_x: float, max_y: float) -> list[Blob]:
    """Boxes of the ink blobs lying wholly in the corner area (``max_x`` by ``max_y`` of the
    card), sorted top to bottom; blobs that run out of the area belong to the picture."""
    height, width = ink.shape
    x_limit, y_limit = int(max_x * width), int(max_y * height)
    area = ink[:y_limit, :x_limit].astype(np.uint8)
    count, _, stats, _ = cv2.connectedComponentsWithStats(area, connectivity=8)
    blobs = []
    for index in range(1, count):
        x, y, w, h, pixels = (int(value) for value in stats[index])
        if pixels < 4 or x + w >= x_limit - 1 or y + h >= y_limit - 1:
            continue
        blobs.append((x, y, x + w, y + h))
    return sorted(blobs, key=lambda blob: (blob[1], blob[0]))


def _union(first: Blob, second: Blob) -> Blob:
    return (
        min(first[0], second[0]),
        min(first[1], second[1]),
        max(first[2], second[2]),
        max(first[3], second[3]),
    )


def _continues(group: Blob, blob: Blob, sideways: bool) -> bool:
    """Whether ``blob`` is the next glyph of the mark ``group``: under it, sharing 70% of the
    narrower one's columns, less than 1.2 of its own height below (a suit pip under its rank,
    the next letter of a word set vertically); with ``sideways``, also just right of it,
    sharing 70% of the lower one's rows, less than 0.3 of its own width away (the next letter
    of a word set across)."""
    width, height = blob[2] - blob[0], blob[3] - blob[1]
    x_overlap = min(group[2], blob[2]) - max(group[0], blob[0])
    y_overlap = min(group[3], blob[3]) - max(group[1], blob[1])
    below = blob[1] >= group[3] - 1 and x_overlap >= 0.7 * min(width, group[2] - group[0])
    if below and blob[1] - group[3] <= 1.2 * height:
        return True
    right = blob[0] >= group[2] - 1 and y_overlap >= 0.7 * min(height, group[3] - group[1])
    return sideways and right and blob[0] - group[2] <= 0.3 * width


def _mark(
    ink: NDArray[np.bool_],
    seed_within: tuple[float, float],
    reach: tuple[float, float],
    sideways: bool,
) -> Blob | None:
    """The box of the ink that starts in the top-left corner, followed to its next glyphs.

    Seeds are the blobs starting in the top fifth and quarter of the card and lying wholly in
    ``seed_within`` (fractions of width and height); blobs of the larger ``reach`` area are
    added while one continues the group (:func:`_continues`).
    """
    height, width = ink.shape
    blobs = _blobs(ink, *reach)
    seeds = [
        blob
        for blob in blobs
        if blob[0] <= 0.2 * width
        and blob[1] <= 0.25 * height
        and blob[2] < seed_within[0] * width - 1
        and blob[3] < seed_within[1] * height - 1
    ]
    if not seeds:
        return None
    group = seeds[0]
    for seed in seeds[1:]:
        group = _union(group, seed)
    rest = [blob for blob in blobs if blob not in seeds]
    grown = True
    while grown:
        grown = False
        for blob in rest:
            if _continues(group, blob, sideways):
                group = _union(group, blob)
                rest.remove(blob)
                grown = True
                break
    return group


def measure_index_box(cards: Mapping[str, NDArray[np.uint8]]) -> IndexBox:
    """The deck's top-left index box from its RGBA renders keyed by code.

    Measured on the A, 2 and 3 of each suit (their pips stay clear of the corner; the median
    ignores an ace whose picture touches its index), widened by the 10s. The index is the ink
    starting in the corner within 30% of the width and 40% of the height, with the suit pip
    under it followed down to half the height (some decks print a large pip well under the
    rank).
    """
    boxes: list[tuple[float, float, float, float]] = []
    for code in [rank + suit for rank in ("A", "2", "3") for suit in "SHDC"]:
        if code not in cards:  # a deck of split extra may lend no aces
            continue
        rgba = cards[code]
        height, width = rgba.shape[:2]
        found = _mark(_ink_mask(rgba), (0.3, 0.4), (0.3, 0.5), sideways=False)
        if found is not None:
            x1, y1, x2, y2 = found
            boxes.append((x1 / width, y1 / height, x2 / width, y2 / height))
    if not boxes:
        raise ValueError("no index ink found near the corner of any A, 2 or 3")
    x1, y1, x2, y2 = np.median(np.array(boxes), axis=0)
    widest = x2
    for code in ("10S", "10H", "10D", "10C"):
        rgba = cards[code]
        height, width = rgba.shape[:2]
        ink = _ink_mask(rgba)
        rows = ink[int(y1 * height) : int((y1 + 0.45 * (y2 - y1)) * height)]
        columns = np.nonzero(rows.any(axis=0))[0] / width
        columns = columns[columns >= x1]
        run_end = x1
        for column in columns:  # follow the glyphs rightwards until a clear gap
            if column - run_end > 0.02:
                break
            run_end = column
        run_end = min(run_end, x1 + 1.8 * (x2 - x1))  # a "10" is under twice as wide as an "A"
        widest = max(widest, float(run_end) + 1 / width)
    pad_x, pad_y = 0.12 * (widest - x1), 0.08 * (y2 - y1)
    return (
        max(0.0, float(x1) - pad_x),
        max(0.0, float(y1) - pad_y),
        min(0.5, float(widest) + pad_x),
        min(0.5, float(y2) + pad_y),
    )


def _same_ink(first: NDArray[np.bool_], second: NDArray[np.bool_]) -> bool:
    """Whether two equal-sized ink patches show the same mark (within 2 px)."""
    kernel = np.ones((5, 5), np.uint8)
    near_first = cv2.dilate(first.astype(np.uint8), kernel) > 0
    near_second = cv2.dilate(second.astype(np.uint8), kernel) > 0
    if first.sum() == 0 or second.sum() == 0:
        return False
    return bool((first & near_second).mean() >= 0.8 * first.mean()) and bool(
        (second & near_first).mean() >= 0.8 * second.mean()
    )


def _overlap(first: Blob, second: Blob) -> float:
    """Intersection over union of two boxes."""
    width = min(first[2], second[2]) - max(first[0], second[0])
    height = min(first[3], second[3]) - max(first[1], second[1])
    if width <= 0 or height <= 0:
        return 0.0
    union = _union(first, second)
    area = (union[2] - union[0]) * (union[3] - union[1])
    return width * height / max(area, 1)


def measure_joker_mark(rgba: NDArray[np.uint8], paper: NDArray[np.float64]) -> IndexPlace | None:
    """Where a joker (RGBA render) prints its corner mark; None when its corner holds none.

    ``paper`` is the deck's paper colour (:func:`paper_colour` of a number card): a joker's
    own upper-left area is often all picture. The mark is the ink starting in the corner
    within 35% of the width and 40% of the height, followed down and to the right within 40%
    of the width and 75% of the height (a vertical "JOKER" runs far down the edge). The
    bottom-right mark is measured the same way on the card turned half a turn; when the two
    overlap (the same mark, perhaps printed a little off the exact half turn) the box covers
    both. The mark is printed in all four corners when the top-right corner holds the same
    ink upright, else in the top-left and, turned, the bottom-right.
    """
    height, width = rgba.shape[:2]
    ink = _ink_mask(rgba, paper)
    seed_within, reach = (0.35, 0.4), (0.4, 0.75)
    found = _mark(ink, seed_within, reach, sideways=True)
    if found is None:
        return None
    turned = _mark(np.ascontiguousarray(ink[::-1, ::-1]), seed_within, reach, sideways=True)
    if turned is not None and _overlap(found, turned) >= 0.3:
        found = _union(found, turned)
    x1, y1, x2, y2 = found
    mirrored = ink[y1:y2, width - x2 : width - x1]
    corners = 4 if _same_ink(ink[y1:y2, x1:x2], mirrored) else 2
    pad = max(1.0, 0.1 * min(x2 - x1, y2 - y1))
    box = (
        max(0.0, (x1 - pad) / width),
        max(0.0, (y1 - pad) / height),
        min(0.5, (x2 + pad) / width),
        min(0.8, (y2 + pad) / height),
    )
    return IndexPlace(box, corners)


def corner_quads(
    box: IndexBox, width: float, height: float, corners: int = 2
) -> Sequence[NDArray[np.float32]]:
    """The index quads (4 points each, clockwise from the glyph's own top-left) in card pixels.

    The first is the top-left index, the second the bottom-right one (turned half a turn);
    with ``corners=4`` the top-right and bottom-left mirror images follow.
    """
    x1, y1, x2, y2 = box[0] * width, box[1] * height, box[2] * width, box[3] * height
    top_left = np.array([[x1, y1], [x2, y1], [x2, y2], [x1, y2]], np.float32)
    turned = np.array([width, height], np.float32) - top_left
    quads = [top_left, turned]
    if corners == 4:
        top_right = top_left.copy()
        top_right[:, 0] = width - top_left[:, 0]
        bottom_left = top_left.copy()
        bottom_left[:, 1] = height - top_left[:, 1]
        quads += [top_right[[1, 0, 3, 2]], bottom_left[[3, 2, 1, 0]]]
    return quads

"""Where a deck prints its corner index, measured from its renders.

The index (rank glyph with the small suit pip under it) sits in the top-left corner, and the
same index turned half a turn in the bottom-right corner (some decks repeat it in all four
corners). Its box is measured once per deck: the ink near the corner of the aces, twos and
threes gives the box of a one-character rank, widened to cover the ink of the two-character "10".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import cv2
import numpy as np
from numpy.typing import NDArray

__all__ = ["IndexBox", "corner_quads", "measure_index_box"]

IndexBox = tuple[float, float, float, float]
"""An index box (x1, y1, x2, y2) as fractions of the card's width and height."""


def _composite_white(rgba: NDArray[np.uint8]) -> NDArray[np.uint8]:
    alpha = rgba[:, :, 3:4].astype(np.float32) / 255.0
    rgb = rgba[:, :, :3].astype(np.float32) * alpha + 255.0 * (1.0 - alpha)
    composite: NDArray[np.uint8] = rgb.astype(np.uint8)
    return composite


def _ink_mask(rgba: NDArray[np.uint8]) -> NDArray[np.bool_]:
    """Pixels that differ clearly from the card's paper, away from the card's outline."""
    height, width = rgba.shape[:2]
    rgb = _composite_white(rgba).astype(np.int16)
    region = rgb[int(0.05 * height) : int(0.4 * height), int(0.05 * width) : int(0.35 * width)]
    paper = np.median(region.reshape(-1, 3), axis=0)
    ink = np.abs(rgb - paper).sum(axis=2) > 90
    margin = max(2, round(0.035 * width))
    inside = cv2.erode(
        (rgba[:, :, 3] > 250).astype(np.uint8), np.ones((3, 3), np.uint8), iterations=margin
    )
    mask: NDArray[np.bool_] = ink & (inside > 0)
    return mask


def _corner_ink_box(
    ink: NDArray[np.bool_], max_x: float, max_y: float
) -> tuple[int, int, int, int] | None:
    """Box of the connected ink blobs that start in the top-left corner area."""
    height, width = ink.shape
    area = np.zeros_like(ink)
    x_limit, y_limit = int(max_x * width), int(max_y * height)
    area[:y_limit, :x_limit] = ink[:y_limit, :x_limit]
    count, _, stats, _ = cv2.connectedComponentsWithStats(area.astype(np.uint8), connectivity=8)
    boxes = []
    for index in range(1, count):
        x, y, w, h, pixels = stats[index]
        if pixels < 4 or x > 0.2 * width or y > 0.25 * height:
            continue
        if x + w >= x_limit - 1 or y + h >= y_limit - 1:
            continue  # runs out of the corner area: part of the picture, not the index
        boxes.append((x, y, x + w, y + h))
    if not boxes:
        return None
    array = np.array(boxes)
    return (
        int(array[:, 0].min()),
        int(array[:, 1].min()),
        int(array[:, 2].max()),
        int(array[:, 3].max()),
    )


def measure_index_box(cards: Mapping[str, NDArray[np.uint8]]) -> IndexBox:
    """The deck's top-left index box from its RGBA renders keyed by code.

    Measured on the A, 2 and 3 of each suit (their pips stay clear of the corner; the median
    ignores an ace whose picture touches its index), widened by the 10s.
    """
    boxes: list[tuple[float, float, float, float]] = []
    for code in [rank + suit for rank in ("A", "2", "3") for suit in "SHDC"]:
        rgba = cards[code]
        height, width = rgba.shape[:2]
        found = _corner_ink_box(_ink_mask(rgba), 0.3, 0.4)
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

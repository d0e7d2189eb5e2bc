"""Does a card lie around an index? A model-free look at the face around a detected box.

A card's corner index is dark or red ink on the card's light, nearly grey paper, and that paper
runs on from the index into the card, well past the index. What else a reader takes for an
index is not so: a symbol printed on the felt is light ink on a saturated cloth (no paper round
it); a value on a chip is printed on a light inlay that the chip's coloured body closes a little
way round it; a suit symbol on a card back sits on the back's colour. :func:`card_evidence`
looks at a window ``EVIDENCE_CONTEXT`` times the box's longer side, brought to at most
``EVIDENCE_SIZE`` pixels, and answers, per box, whether

1. a ring round the box, a quarter of its longer side wide, is at least ``min_ring_paper``
   paper: light (at least ``relative_light`` of the whitest tenth of the box and its ring, and
   ``absolute_light`` of the image's light level) and grey once white-balanced on that white
   (under ``max_saturation``); and
2. that paper reaches at least ``min_reach`` of the box's longer side from the box's centre,
   or runs off an edge of the image (a card cut by the frame).

The reader drops a card whose boxes all fail (``ReaderSettings.card_evidence``; see
``docs/reading.md``, "Cards on casino tables", for what it is worth and how the thresholds were
chosen).
"""

from __future__ import annotations

import math
from typing import Any, cast

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.dark_faces import looked

__all__ = [
    "EVIDENCE_CONTEXT",
    "EVIDENCE_SIZE",
    "card_evidence",
    "doubted_by_card_face",
    "image_light",
    "paper_mask",
]

EVIDENCE_CONTEXT = 4.0
"""The window's side, in the box's longer sides."""

EVIDENCE_SIZE = 48
"""The window's side in pixels once shrunk (a box then spans about 12)."""


def image_light(image: NDArray[np.uint8]) -> float:
    """The image's light level: the 99th percentile of its brightest channel, taken on at most
    about 20,000 pixels."""
    height, width = image.shape[:2]
    step = max(1, math.ceil((height * width / 20_000) ** 0.5))
    sample = image[::step, ::step]
    brightest = np.maximum(np.maximum(sample[..., 0], sample[..., 1]), sample[..., 2])
    return float(_quantile(brightest.ravel(), 0.99))


def _quantile(values: NDArray[Any], share: float) -> Any:
    """The value at ``share`` of the sorted ``values`` (the lower one; no interpolation)."""
    rank = min(len(values) - 1, int(share * (len(values) - 1)))
    return np.partition(values, rank)[rank]


class _Pyramid:
    """An image and its halvings (area-averaged), made as they are asked for."""

    def __init__(self, image: NDArray[np.uint8]) -> None:
        self.levels = [image]

    def level(self, wanted: int) -> NDArray[np.uint8]:
        """The ``wanted``-th halving, or the smallest one made when the image runs short."""
        while len(self.levels) <= wanted and min(self.levels[-1].shape[:2]) >= 2 * EVIDENCE_SIZE:
            finer = self.levels[-1]
            size = (finer.shape[1] // 2, finer.shape[0] // 2)
            self.levels.append(
                cast(NDArray[np.uint8], cv2.resize(finer, size, interpolation=cv2.INTER_AREA))
            )
        return self.levels[min(wanted, len(self.levels) - 1)]


def paper_mask(
    window: NDArray[np.uint8],
    light: float,
    relative_light: float = 0.55,
    absolute_light: float = 0.2,
    max_saturation: float = 0.35,
    near: NDArray[np.bool_] | None = None,
    max_cast: float = 0.62,
) -> NDArray[np.bool_]:
    """The pixels of a BGR window that look like a card's paper: light (at least
    ``relative_light`` of the reference white and ``absolute_light`` of the image's ``light``)
    and grey once white-balanced on the reference (a paper under a warm lamp or a blue webcam
    cast is grey again; a felt or a chip's body stays coloured): the spread of the channels
    under ``max_saturation`` of the brightest. The reference white is the whitest tenth of the
    ``near`` pixels (the whole window when None): the paper by the index, not a brighter card
    or lamp further off. A reference more coloured than ``max_cast`` (its channels' spread over
    its brightest; paper under a warm lamp or a blue webcam cast gives 0.3 to 0.6, a green
    felt 0.7, a red or blue one 0.75 to 0.8) is no paper: then
    nothing is."""
    pixels = cv2.medianBlur(window, 3).astype(np.float32)
    # channel by channel: elementwise maxima and minima cost less than reductions over 3
    blue, green, red = pixels[..., 0], pixels[..., 1], pixels[..., 2]
    weakest = np.minimum(np.minimum(blue, green), red)
    # the reference white: the pixels whose weakest channel is strongest (light and grey; a
    # light but saturated cloth or chip has a weak channel)
    chosen = near if near is not None and near.any() else np.ones(weakest.shape, bool)
    candidates = weakest[chosen]
    whitest = chosen.copy()
    whitest[chosen] = candidates >= _quantile(candidates, 0.9)
    reference = pixels[whitest].mean(axis=0)
    if float(reference.max() - reference.min()) > max_cast * float(reference.max()):
        # the whitest thing near is itself coloured: a cloth, a chip's body, no paper
        return np.zeros(window.shape[:2], bool)
    gains = reference.mean() / np.maximum(reference, 1.0)
    blue, green, red = blue * gains[0], green * gains[1], red * gains[2]
    bright = np.maximum(np.maximum(blue, green), red)
    spread = bright - np.minimum(np.minimum(blue, green), red)
    floor = max(relative_light * float(reference.max()), absolute_light * light)
    result: NDArray[np.bool_] = (bright >= floor) & (spread <= max_saturation * bright)
    return result


def card_evidence(
    image: NDArray[np.uint8],
    xyxy: NDArray[np.floating[Any]],
    light: float | None = None,
    context: float = EVIDENCE_CONTEXT,
    min_ring_paper: float = 0.2,
    min_reach: float = 1.5,
    relative_light: float = 0.55,
    absolute_light: float = 0.2,
    max_saturation: float = 0.35,
) -> NDArray[np.bool_]:
    """For each box (N, 4) of the BGR image, whether a card's face lies around it (see the
    module's docstring). ``light`` is :func:`image_light` of the image (computed when None)."""
    boxes = np.asarray(xyxy, np.float64).reshape(-1, 4)
    answers = np.zeros(len(boxes), bool)
    if len(boxes) == 0:
        return answers
    if light is None:
        light = image_light(image)
    height, width = image.shape[:2]
    pyramid = _Pyramid(image)
    for number, (x0, y0, x1, y1) in enumerate(boxes):
        side = max(x1 - x0, y1 - y0, 2.0)
        half = side * context / 2
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        # the window is cut from the halving at which it spans 48 to 96 px, then brought to 48
        halvings = max(0, int(math.log2(max(1.0, 2 * half / EVIDENCE_SIZE))))
        level = pyramid.level(halvings)
        shrink = level.shape[1] / width
        left, top = max(0, int((cx - half) * shrink)), max(0, int((cy - half) * shrink))
        right = min(level.shape[1], math.ceil((cx + half) * shrink))
        bottom = min(level.shape[0], math.ceil((cy + half) * shrink))
        if right - left < 4 or bottom - top < 4:
            continue
        scale = min(1.0, EVIDENCE_SIZE / (2 * half * shrink))
        size = (max(4, round((right - left) * scale)), max(4, round((bottom - top) * scale)))
        window = level[top:bottom, left:right]
        if size != (right - left, bottom - top):
            window = cast(NDArray[np.uint8], cv2.resize(window, size, interpolation=cv2.INTER_AREA))
        # from here on, lengths are in the window's pixels
        scale *= shrink
        left, top = left / shrink, top / shrink
        # the box in the window, and a ring round it a quarter of its longer side wide
        box = np.array([x0 - left, y0 - top, x1 - left, y1 - top]) * scale
        pad = 0.25 * side * scale
        ox0, oy0 = max(0, int(box[0] - pad)), max(0, int(box[1] - pad))
        ox1, oy1 = min(size[0], math.ceil(box[2] + pad)), min(size[1], math.ceil(box[3] + pad))
        bx0, by0 = max(0, int(box[0] + 0.5)), max(0, int(box[1] + 0.5))
        bx1, by1 = min(size[0], int(box[2] + 0.5)), min(size[1], int(box[3] + 0.5))
        near = np.zeros((size[1], size[0]), bool)
        near[oy0:oy1, ox0:ox1] = True
        ring = near.copy()
        ring[by0:by1, bx0:bx1] = False
        paper = paper_mask(window, light, relative_light, absolute_light, max_saturation, near)
        if not ring.any() or paper[ring].mean() < min_ring_paper:
            continue
        _, labels, stats, _ = cv2.connectedComponentsWithStats(
            paper.astype(np.uint8), connectivity=8
        )
        around = np.unique(labels[ring & paper])
        around = around[around > 0]
        if len(around) == 0:
            continue
        x_low = stats[around, cv2.CC_STAT_LEFT]
        y_low = stats[around, cv2.CC_STAT_TOP]
        x_high = x_low + stats[around, cv2.CC_STAT_WIDTH] - 1
        y_high = y_low + stats[around, cv2.CC_STAT_HEIGHT] - 1
        # a card cut by the frame runs on past it: paper at a side the image cut counts as far
        if (
            (cx - half < 0 and x_low.min() == 0)
            or (cy - half < 0 and y_low.min() == 0)
            or (cx + half > width and x_high.max() == size[0] - 1)
            or (cy + half > height and y_high.max() == size[1] - 1)
        ):
            answers[number] = True
            continue
        centre = ((box[0] + box[2]) / 2 - 0.5, (box[1] + box[3]) / 2 - 0.5)
        needed = min_reach * side * scale
        # the paper's farthest pixel lies at least as far as its boxes' farthest side, and no
        # farther than their farthest corner; only between the two are its pixels measured
        across = np.maximum(np.abs(x_low - centre[0]), np.abs(x_high - centre[0]))
        down = np.maximum(np.abs(y_low - centre[1]), np.abs(y_high - centre[1]))
        if max(across.max(), down.max()) >= needed:
            answers[number] = True
        elif float(np.hypot(across, down).max()) >= needed:
            ys, xs = np.nonzero(np.isin(labels, around))
            answers[number] = float(np.hypot(xs - centre[0], ys - centre[1]).max()) >= needed
    return answers


def doubted_by_card_face(
    image: NDArray[np.uint8],
    xyxy: NDArray[np.float32],
    groups: list[NDArray[np.intp]],
    dark: NDArray[np.bool_] | None = None,
    negative_image: NDArray[np.uint8] | None = None,
) -> list[NDArray[np.intp]]:
    """The cards' box groups (rows of ``xyxy``, each card's surest first) none of whose boxes
    has a card's face around it (:func:`card_evidence`): each card's surest box is looked at
    first, the others only for the cards whose surest box fails. The boxes ``dark`` marks were
    found in ``negative_image`` (:mod:`vision.dark_faces`) and are looked at there."""
    if not groups:
        return []
    lights: dict[int, float] = {}

    def look(picture: NDArray[np.uint8], boxes: NDArray[np.float32]) -> NDArray[np.bool_]:
        if id(picture) not in lights:
            lights[id(picture)] = image_light(picture)
        return card_evidence(picture, boxes, lights[id(picture)])

    def seen(rows: NDArray[np.intp]) -> NDArray[np.bool_]:
        marks = None if dark is None else dark[rows]
        return looked(look, image, xyxy[rows], marks, negative_image)

    surest = np.array([group[0] for group in groups])
    doubted = [group for group, kept in zip(groups, seen(surest), strict=True) if not kept]
    rest = [group[1:] for group in doubted if len(group) > 1]
    if not rest:
        return doubted
    boxes = np.concatenate(rest)
    shown = np.zeros(len(xyxy), bool)
    shown[boxes] = seen(boxes)
    return [group for group in doubted if not shown[group[1:]].any()]

"""Where the hand labels go: never over a card's index or code, nor over another label.

One layout for every drawing of a table: the annotated photo (:mod:`handreader.drawing.annotate`,
``POST /v1/annotated``, the webcam overlay) and the page (``static/draw.js``, the same steps in
JavaScript, measured in the canvas's pixels). :func:`place_labels` takes, for each hand, the box
around its cards and the size of its label, and the boxes to keep clear (every card's index box
and the box of the code written at it; the table's summary line and, live, the status line).
A label tries, in order:

1. just above its hand, left-aligned, then right-aligned; just below it, left then right;
   beside it, left then right, level with its top;
2. farther above, then farther below, one label height (plus the gap) at a time, up to
   :data:`RINGS` steps, left-aligned then right-aligned: a leader line then joins the label to
   its hand.

Each place is moved inside the frame; the first that overlaps no box to keep clear, no label
already placed and no other hand's box wins. When none is free, the place that covers the least
area of the boxes to keep clear and of the labels is taken (then the least of other hands): a
label may lie over another hand's felt, over a code only in a frame crowded from edge to edge.
Labels are placed in the order given (seat order).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["RINGS", "LabelPlace", "overlap_area", "place_labels"]

Box = tuple[float, float, float, float]

RINGS = 8
"""How many label heights farther out a label may go above or below its hand."""


@dataclass(frozen=True, slots=True)
class LabelPlace:
    """A placed label: its box (x1, y1, x2, y2) and, when it lies away from its hand, the
    leader line from the label to the hand's box (``None`` when they touch)."""

    box: Box
    leader: tuple[tuple[float, float], tuple[float, float]] | None


def overlap_area(a: Box, b: Box) -> float:
    """The area two boxes share (0 when they only touch)."""
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    return width * height if width > 0 and height > 0 else 0.0


def _inside(box: Box, width: float, height: float) -> Box:
    w, h = box[2] - box[0], box[3] - box[1]
    x = min(max(box[0], 0.0), max(width - w, 0.0))
    y = min(max(box[1], 0.0), max(height - h, 0.0))
    return (x, y, x + w, y + h)


def _candidates(hand: Box, w: float, h: float, gap: float) -> list[tuple[Box, bool]]:
    """Places for a label of ``w`` x ``h`` around ``hand``, in order, each with whether it
    lies away from the hand (needs a leader)."""
    x1, y1, x2, y2 = hand
    near = [
        (x1, y1 - gap - h), (x2 - w, y1 - gap - h), (x1, y2 + gap), (x2 - w, y2 + gap),
        (x1 - gap - w, y1), (x2 + gap, y1),
    ]  # fmt: skip
    places = [((x, y, x + w, y + h), False) for x, y in near]
    for ring in range(1, RINGS + 1):
        step = ring * (h + gap)
        for y in (y1 - gap - h - step, y2 + gap + step):
            for x in (x1, x2 - w):
                places.append(((x, y, x + w, y + h), True))
    return places


def _leader(label: Box, hand: Box) -> tuple[tuple[float, float], tuple[float, float]]:
    """A line from the label's edge facing the hand to the nearest point of the hand's box."""
    cx = min(max((label[0] + label[2]) / 2, hand[0]), hand[2])
    if label[3] <= hand[1]:
        return ((cx, label[3]), (cx, hand[1]))
    if label[1] >= hand[3]:
        return ((cx, label[1]), (cx, hand[3]))
    cy = min(max((label[1] + label[3]) / 2, hand[1]), hand[3])
    if label[2] <= hand[0]:
        return ((label[2], cy), (hand[0], cy))
    return ((label[0], cy), (hand[2], cy))


def place_labels(
    hands: Sequence[Box],
    sizes: Sequence[tuple[float, float]],
    keep_clear: Sequence[Box],
    frame_wh: tuple[float, float],
    gap: float,
) -> list[LabelPlace]:
    """The place of each hand's label (see the module docstring); ``sizes`` are the labels'
    (width, height), ``keep_clear`` the card and code boxes, ``frame_wh`` the drawing's size,
    all in the same pixels."""
    width, height = frame_wh
    placed: list[Box] = []
    out: list[LabelPlace] = []
    for hand, (w, h) in zip(hands, sizes, strict=True):
        best: tuple[tuple[float, float], Box, bool] | None = None
        for box, away in _candidates(hand, w, h, gap):
            box = _inside(box, width, height)
            # what must stay clear (codes, labels) first, then the other hands' boxes
            covered = (
                sum(overlap_area(box, other) for other in (*keep_clear, *placed)),
                sum(overlap_area(box, other) for other in hands if other != hand),
            )
            if best is None or covered < best[0]:
                best = (covered, box, away)
            if covered == (0.0, 0.0):
                break
        assert best is not None
        _, box, away = best
        touching = (
            overlap_area(
                (box[0] - 2 * gap, box[1] - 2 * gap, box[2] + 2 * gap, box[3] + 2 * gap), hand
            )
            > 0
        )
        placed.append(box)
        out.append(LabelPlace(box, None if touching and not away else _leader(box, hand)))
    return out

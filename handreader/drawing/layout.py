"""Where the card codes and the hand labels go: no code over another code, no label over a
card's index, a code or another label.

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

Each place is moved inside the frame; the first that overlaps no code (nor box to keep clear),
no label already placed, no card's index and no other hand's box wins. When none is free, the
place that covers the least area of the codes and labels is taken, then the least of the cards'
indices, then of other hands: a label may lie over another hand's felt or, in a crowded frame, a
card's index, and over a code only in a frame crowded from edge to edge.
Labels are placed in the order given (seat order).

The codes are placed first, by :func:`place_codes`, and the labels then keep clear of them. A
card's code goes at its card (just above its index) unless that box overlaps another card's
code, a card's index or a box to keep clear: then the codes of the whole hand are spread in a
row, in the order the cards lie from left to right, the codes a gap apart (in as many rows as
the frame's width needs), and the row is placed as a label is, with the same candidates
(above the hand, below it, beside it, then farther out) and costs in the same order (codes and
boxes to keep clear, then cards' indices, then other hands). Each code so moved is joined to
its card by a short leader line. A tight fan on a small picture thus shows every code apart,
in the fan's order; a hand whose codes fit at their cards keeps them there.

The cards of a reading drawn without a game (``handreader read --annotate``) have no hands:
:func:`code_groups` makes their groups, cards whose codes at their cards cover one another's
code or index (and the cards chained to them so), and :func:`place_codes` spreads each such
group as it does a hand.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "RINGS",
    "CodePlace",
    "LabelPlace",
    "code_groups",
    "overlap_area",
    "place_codes",
    "place_labels",
]

Box = tuple[float, float, float, float]
Line = tuple[tuple[float, float], tuple[float, float]]

RINGS = 8
"""How many label heights farther out a label may go above or below its hand."""


@dataclass(frozen=True, slots=True)
class LabelPlace:
    """A placed label: its box (x1, y1, x2, y2) and, when it lies away from its hand, the
    leader line from the label to the hand's box (``None`` when they touch)."""

    box: Box
    leader: Line | None


@dataclass(frozen=True, slots=True)
class CodePlace:
    """A placed card code: its box (x1, y1, x2, y2) and, when it was moved away from its card,
    the leader line from the code to the card's index box (``None`` at its card)."""

    box: Box
    leader: Line | None


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


def _leader(label: Box, hand: Box) -> Line:
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
    indices: Sequence[Box] = (),
) -> list[LabelPlace]:
    """The place of each hand's label (see the module docstring); ``sizes`` are the labels'
    (width, height), ``keep_clear`` the code boxes (and any other box to keep clear),
    ``indices`` the cards' index boxes (covered, when something must be, before a code),
    ``frame_wh`` the drawing's size, all in the same pixels."""
    placed: list[Box] = []
    out: list[LabelPlace] = []
    for hand, (w, h) in zip(hands, sizes, strict=True):
        others = [other for other in hands if other != hand]
        tiers = ([*keep_clear, *placed], indices, others)
        box, away = _best_place(hand, (w, h), tiers, frame_wh, gap)
        touching = (
            overlap_area(
                (box[0] - 2 * gap, box[1] - 2 * gap, box[2] + 2 * gap, box[3] + 2 * gap), hand
            )
            > 0
        )
        placed.append(box)
        out.append(LabelPlace(box, None if touching and not away else _leader(box, hand)))
    return out


def _best_place(
    hand: Box,
    size_wh: tuple[float, float],
    tiers: Sequence[Sequence[Box]],
    frame_wh: tuple[float, float],
    gap: float,
) -> tuple[Box, bool]:
    """The first candidate place of a ``size_wh`` box around ``hand`` (moved inside the frame)
    that covers nothing of any of ``tiers``, else the one covering the least of the first tier,
    then of the next...; with whether it lies away from the hand."""
    best: tuple[tuple[float, ...], Box, bool] | None = None
    for box, away in _candidates(hand, size_wh[0], size_wh[1], gap):
        box = _inside(box, *frame_wh)
        covered = tuple(sum(overlap_area(box, other) for other in tier) for tier in tiers)
        if best is None or covered < best[0]:
            best = (covered, box, away)
        if not any(covered):
            break
    assert best is not None
    return best[1], best[2]


def _code_leader(code: Box, card: Box) -> Line:
    """A line from the point of the code's box nearest the card's centre to the point of the
    card's box nearest the code's centre."""

    def nearest(box: Box, x: float, y: float) -> tuple[float, float]:
        return (min(max(x, box[0]), box[2]), min(max(y, box[1]), box[3]))

    card_centre = ((card[0] + card[2]) / 2, (card[1] + card[3]) / 2)
    code_centre = ((code[0] + code[2]) / 2, (code[1] + code[3]) / 2)
    return (nearest(code, *card_centre), nearest(card, *code_centre))


def _rows(widths: Sequence[float], room: float, gap: float) -> list[list[int]]:
    """Indices of ``widths`` packed in order into rows no wider than ``room`` (a code wider
    than ``room`` alone is a row of its own)."""
    rows: list[list[int]] = []
    used = 0.0
    for index, width in enumerate(widths):
        if rows and used + gap + width <= room:
            rows[-1].append(index)
            used += gap + width
        else:
            rows.append([index])
            used = width
    return rows


def place_codes(
    cards: Sequence[Box],
    at_cards: Sequence[Box],
    hands: Sequence[int],
    keep_clear: Sequence[Box],
    frame_wh: tuple[float, float],
    gap: float,
) -> list[CodePlace]:
    """The place of each card's code (see the module docstring). ``cards`` are the cards'
    index boxes, ``at_cards`` their codes' boxes at the cards (inside the frame), ``hands``
    the hand each card belongs to (a number; a card of no hand has one of its own),
    ``keep_clear`` what the codes must not cover besides (a summary or status line)."""
    count = len(cards)
    if not len(at_cards) == len(hands) == count:
        raise ValueError(
            f"cards, at_cards and hands must have one entry per card, got {count}, "
            f"{len(at_cards)} and {len(hands)}"
        )
    crowded = {
        hands[index]
        for index, box in enumerate(at_cards)
        if any(overlap_area(box, other) > 0 for other in (*cards, *keep_clear))
        or any(overlap_area(box, at_cards[other]) > 0 for other in range(count) if other != index)
    }
    places: list[CodePlace] = [CodePlace(box, None) for box in at_cards]
    fixed = [box for index, box in enumerate(at_cards) if hands[index] not in crowded]
    members = {hand: [i for i in range(count) if hands[i] == hand] for hand in dict.fromkeys(hands)}
    spans = {hand: _union([cards[i] for i in found]) for hand, found in members.items()}
    for hand in members:
        if hand not in crowded:
            continue
        order = sorted(members[hand], key=lambda i: ((cards[i][0] + cards[i][2]) / 2, cards[i][1]))
        widths = [at_cards[i][2] - at_cards[i][0] for i in order]
        tall = max(at_cards[i][3] - at_cards[i][1] for i in order)
        rows = _rows(widths, frame_wh[0], gap)
        block_w = max(sum(widths[j] for j in row) + gap * (len(row) - 1) for row in rows)
        block_h = len(rows) * tall + (len(rows) - 1) * gap
        others = [span for other, span in spans.items() if other != hand]
        tiers = ([*keep_clear, *fixed], cards, others)
        block, _ = _best_place(spans[hand], (block_w, block_h), tiers, frame_wh, gap)
        for line, row in enumerate(rows):
            x, y = block[0], block[1] + line * (tall + gap)
            for j in row:
                index = order[j]
                box = (x, y, x + widths[j], y + tall)
                places[index] = CodePlace(box, _code_leader(box, cards[index]))
                fixed.append(box)
                x += widths[j] + gap
    return places


def code_groups(cards: Sequence[Box], at_cards: Sequence[Box]) -> list[int]:
    """The group of each card of no hand, for :func:`place_codes` (``cards`` their index boxes,
    ``at_cards`` their codes' boxes at the cards): two cards are of one group when the code at
    one covers the other's code or index box, and so is each card chained to them that way; a
    card whose code covers nothing is a group of its own. A group is numbered by its first card."""
    if len(at_cards) != len(cards):
        raise ValueError(
            f"cards and at_cards must have one entry per card, got {len(cards)} and {len(at_cards)}"
        )
    group = list(range(len(cards)))

    def first(index: int) -> int:
        while group[index] != index:
            index = group[index]
        return index

    for index, box in enumerate(at_cards):
        for other in range(len(cards)):
            if other != index and (
                overlap_area(box, at_cards[other]) > 0 or overlap_area(box, cards[other]) > 0
            ):
                low, high = sorted((first(index), first(other)))
                group[high] = low
    return [first(index) for index in range(len(cards))]


def _union(boxes: Sequence[Box]) -> Box:
    return (
        min(box[0] for box in boxes),
        min(box[1] for box in boxes),
        max(box[2] for box in boxes),
        max(box[3] for box in boxes),
    )

"""One card from its corners: where a card's fourth index lies, which turns stand an index
upright, and one card's probabilities from its indices' (:mod:`vision.reader` merges with
them)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from rules.cards import CARD_CLASSES, Joker, parse_card

__all__ = ["fourth_corners", "joint_probabilities", "other_corners", "upright_turns"]


def fourth_corners(
    groups: list[list[int]],
    codes: NDArray[np.integer[Any]],
    centers: NDArray[np.floating[Any]],
    heights: NDArray[np.floating[Any]],
) -> dict[int, int]:
    """The lone indices that are the fourth corner of a card read at three others.

    A deck that prints its index in all four corners shows three of them in agreement and the
    fourth, seen at a slant or upside down, sometimes read as another rank of the same suit (an
    upside-down Q as a 10 or an 8): that is not a second card. The fourth corner of three index
    centres a, b, c lies at a + c - b for the corner b between them; a group of one index whose
    centre lies within half an index height of such a point, whose reading is another rank of
    the same suit, is that corner. Returns {lone group: the group it belongs to}.
    """
    owners = [n for n, group in enumerate(groups) if len(group) >= 3]
    absorbed: dict[int, int] = {}
    if not owners:
        return absorbed
    cards = [parse_card(CARD_CLASSES[int(codes[group[0]])]) for group in groups]
    # each owner's candidate fourth corners a + c - b, for every corner b between two others
    # (a < c: a + c - b is the same point for (c, b, a)), and how near a lone index must lie
    fourths: dict[int, tuple[NDArray[np.floating[Any]], float]] = {}
    for owner in owners:
        if isinstance(cards[owner], Joker):
            continue
        points = centers[groups[owner]]
        a, b, c = np.meshgrid(*[np.arange(len(points))] * 3, indexing="ij")
        chosen = (a < c) & (b != a) & (b != c)
        fourths[owner] = (
            points[a[chosen]] + points[c[chosen]] - points[b[chosen]],
            0.5 * float(heights[groups[owner]].max()),
        )
    for lone, (group, card) in enumerate(zip(groups, cards, strict=True)):
        if len(group) != 1 or isinstance(card, Joker):
            continue
        best: tuple[float, int] | None = None
        for owner, (points, tolerance) in fourths.items():
            owner_card = cards[owner]
            if isinstance(owner_card, Joker) or owner_card.suit != card.suit:
                continue
            distance = float(np.linalg.norm(points - centers[group[0]], axis=1).min())
            if distance <= tolerance and (best is None or distance < best[0]):
                best = (distance, owner)
        if best is not None:
            absorbed[lone] = best[1]
    return absorbed


def other_corners(
    groups: list[list[int]],
    confidences: NDArray[np.floating[Any]],
    index_confidences: NDArray[np.floating[Any]],
    centers: NDArray[np.floating[Any]],
    heights: NDArray[np.floating[Any]],
    *,
    sure: float,
    reach: tuple[float, float],
    slant: float = 0.0,
    skip: frozenset[int] = frozenset(),
) -> dict[int, int]:
    """The lone unsure indices that are another corner of a card read for certain.

    The other corner of a card, upside down or at a slant, is often read as another rank or
    suit, and unsure. A group of one index (not in ``skip``) whose index the classifier reads
    under ``sure`` is the corner of the nearest group whose confidence is ``sure`` or more that
    lies ``reach`` (from, to) index heights from it and across it: the smaller side of the
    offset between their centres over the larger at least ``slant`` (the next card of a row
    lies beside a card, its other corner across it). Two unsure lone indices never make a card
    of each other, and a lone index the classifier reads at ``sure`` or more stays a card of its
    own (two certain readings of one card cannot be told from two cards by where they lie).
    ``confidences`` are the groups' (the largest of each one's joint probabilities),
    ``index_confidences`` the indices' (the largest of each one's card probabilities, the
    classifier's "none" left in). Returns {lone group: the group it belongs to}.
    """
    owners = [
        number
        for number in range(len(groups))
        if number not in skip and confidences[number] >= sure
    ]
    absorbed: dict[int, int] = {}
    if not owners:
        return absorbed
    owner_centers = np.stack([centers[groups[number]].mean(axis=0) for number in owners])
    owner_heights = np.array([float(heights[groups[number]].max()) for number in owners])
    for lone, group in enumerate(groups):
        if len(group) != 1 or lone in skip or index_confidences[group[0]] >= sure:
            continue
        scale = np.maximum(owner_heights, heights[group[0]])
        offsets = np.abs(owner_centers - centers[group[0]])
        distances = np.linalg.norm(offsets, axis=1) / scale
        across = offsets.min(axis=1) >= slant * offsets.max(axis=1)
        inside = np.flatnonzero((distances >= reach[0]) & (distances <= reach[1]) & across)
        if len(inside):
            absorbed[lone] = owners[int(inside[np.argmin(distances[inside])])]
    return absorbed


def upright_turns(xyxy: NDArray[np.floating[Any]]) -> NDArray[np.bool_]:
    """The quarter turns (4, N) at which each index box's crop is worth reading: an index
    stands taller than wide when upright or upside down, so a box at least as tall as wide is
    read as it lies and half a turn round (turns 0 and 2), a wider one at a quarter and three
    quarters of a turn (1 and 3). Row k is turn k (``np.rot90``'s k, counter-clockwise)."""
    tall = (xyxy[:, 3] - xyxy[:, 1]) >= (xyxy[:, 2] - xyxy[:, 0])
    return np.stack([tall, ~tall, tall, ~tall])


def joint_probabilities(probabilities: NDArray[np.float32]) -> NDArray[np.float32]:
    """One card's probabilities from its indices' (K, 54): their product, scaled to sum to 1."""
    joint: NDArray[np.float32] = np.exp(np.log(probabilities + 1e-9).sum(axis=0))
    joint /= joint.sum()
    return joint

"""Which cards of a photo belong together: hands found by distance, or by regions given.

Clustering (:func:`group_cards`), when no regions are given:

1. The distance scale is the median over the cards of the longer side of their boxes (a box
   covers a card's visible index or indexes, so the scale follows the photo's resolution and
   the camera's distance instead of a pixel constant).
2. Single linkage: the minimum spanning tree of the box centres is cut at every edge longer
   than ``link_factor`` times the scale (default 2.0: cards of one spread hand lie closer than
   two index heights to a neighbour; separate hands farther). Each remaining tree is a group.
3. A group larger than a hand (two hands touching, a stray card beside a hand) is split along
   its tree: among the edges longer than the group's median edge whose removal leaves a part of
   a whole number of hands (5, 10, .. cards), the longest is cut, and the split repeats on each
   part still larger than a hand. So two touching hands of five come apart at the link between
   them, and a hand with a stray card beside it gives a hand of five and a group of one. A group
   without such a link (say 7 cards spread evenly in one row) stays whole and is reported as
   it is, never forced into a hand.
4. Before that split, a group larger than a hand whose certain cards make whole hands (five
   certain cards and one uncertain, say) keeps its certain cards together and sets the
   uncertain ones apart as a group of their own: a reading below the confidence threshold
   beside a full hand is likelier a pip or a picture read as an index than a sixth card, and
   it must not push a real card out of its hand. That group is marked ``set_aside``; scoring
   lists its cards as left over, not as a seat.

Regions (:func:`assign_regions`): each card goes to the region that holds its box centre (the
nearest region centre when several do); cards in no region are left over.

Groups come back in reading order: rows from the top (a group starts a new row when its centre
lies lower than the row's first group by more than the median group height), left to right in
a row. Cards within a group are ordered left to right.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from vision.detections import CardReading

__all__ = [
    "DEFAULT_LINK_FACTOR",
    "CardGroup",
    "GroupingError",
    "Region",
    "assign_regions",
    "distance_scale",
    "group_cards",
    "reading_order",
]

DEFAULT_LINK_FACTOR = 2.0
"""Cards closer than this many box sizes (centre to centre) are linked into one group."""


class GroupingError(ValueError):
    """Bad grouping options: a region that is no rectangle, a link factor out of range."""


Box = tuple[float, float, float, float]


@dataclass(frozen=True, slots=True)
class Region:
    """A rectangle ``x1, y1, x2, y2`` of the image, in pixels or in fractions of its size.

    :meth:`parse` reads a list of four numbers: all within 0..1 means fractions of the width and
    height, otherwise pixels.
    """

    x1: float
    y1: float
    x2: float
    y2: float
    fractional: bool = False

    def __post_init__(self) -> None:
        values = (self.x1, self.y1, self.x2, self.y2)
        if not all(math.isfinite(value) and value >= 0 for value in values):
            raise GroupingError(f"region {list(values)!r} needs four finite numbers >= 0")
        if self.x2 <= self.x1 or self.y2 <= self.y1:
            raise GroupingError(f"region {list(values)!r} needs x1 < x2 and y1 < y2")
        if self.fractional and max(values) > 1:
            raise GroupingError(f"fractional region {list(values)!r} must lie within 0..1")

    @classmethod
    def parse(cls, values: Sequence[float]) -> Region:
        """A region from ``[x1, y1, x2, y2]``: fractions when all lie within 0..1, else pixels."""
        if len(values) != 4:
            raise GroupingError(f"a region is 4 numbers [x1, y1, x2, y2], got {list(values)!r}")
        try:
            x1, y1, x2, y2 = (float(value) for value in values)
        except (TypeError, ValueError):
            raise GroupingError(f"a region is 4 numbers, got {list(values)!r}") from None
        return cls(x1, y1, x2, y2, fractional=max(x1, y1, x2, y2) <= 1)

    def pixels(self, size_wh: tuple[int, int]) -> Box:
        """The rectangle in pixels of an image of ``size_wh``."""
        if not self.fractional:
            return (self.x1, self.y1, self.x2, self.y2)
        width, height = size_wh
        return (self.x1 * width, self.y1 * height, self.x2 * width, self.y2 * height)

    def to_list(self) -> list[float]:
        """The four numbers as given."""
        return [self.x1, self.y1, self.x2, self.y2]


@dataclass(frozen=True, slots=True)
class CardGroup:
    """Cards that lie together (a hand, an incomplete hand or a stray card), left to right.

    ``region`` is the index of the region the cards were assigned to, None when clustered.
    ``set_aside``: uncertain cards set apart from full hands (step 4 of the clustering); no
    seat, the table lists them as left over.
    """

    cards: tuple[CardReading, ...]
    region: int | None = None
    set_aside: bool = False

    @property
    def box_xyxy(self) -> Box:
        """The box around every card's box (zeros for an empty group)."""
        if not self.cards:
            return (0.0, 0.0, 0.0, 0.0)
        boxes = np.array([card.box_xyxy for card in self.cards], dtype=np.float64)
        x1, y1 = boxes[:, :2].min(axis=0)
        x2, y2 = boxes[:, 2:].max(axis=0)
        return (float(x1), float(y1), float(x2), float(y2))

    @property
    def center_xy(self) -> tuple[float, float]:
        """The mean of the cards' box centres."""
        if not self.cards:
            return (0.0, 0.0)
        centers = np.array([card.center_xy for card in self.cards], dtype=np.float64)
        x, y = centers.mean(axis=0)
        return (float(x), float(y))


def _centers(cards: Sequence[CardReading]) -> NDArray[np.float64]:
    return np.array([card.center_xy for card in cards], dtype=np.float64).reshape(-1, 2)


CARD_WIDTH_PER_INDEX = 2.5
"""A card is about this many index heights wide (measured on the deck renders: 2.3 to 3.2)."""


def distance_scale(cards: Sequence[CardReading]) -> float:
    """The median over the cards of a card-width estimate (1.0 without cards).

    From the reader, a card knows the size of its index box (``index_px``), and its width is
    about :data:`CARD_WIDTH_PER_INDEX` index heights; otherwise (cards built by hand) the longer
    side of its box stands in.
    """
    if not cards:
        return 1.0
    sides = [
        c.index_px * CARD_WIDTH_PER_INDEX
        if c.index_px > 0
        else max(c.box_xyxy[2] - c.box_xyxy[0], c.box_xyxy[3] - c.box_xyxy[1])
        for c in cards
    ]
    return max(float(np.median(sides)), 1e-6)


def _spanning_tree(points: NDArray[np.float64]) -> list[tuple[float, int, int]]:
    """Prim's minimum spanning tree of the points: ``(length, a, b)`` edges, O(n^2)."""
    count = len(points)
    if count < 2:
        return []
    distance = np.sqrt(((points[:, None, :] - points[None, :, :]) ** 2).sum(axis=2))
    inside = np.zeros(count, dtype=bool)
    inside[0] = True
    best = distance[0].copy()
    parent = np.zeros(count, dtype=np.int64)
    edges: list[tuple[float, int, int]] = []
    for _ in range(count - 1):
        candidates = np.where(inside, np.inf, best)
        node = int(np.argmin(candidates))
        edges.append((float(best[node]), int(parent[node]), node))
        inside[node] = True
        closer = distance[node] < best
        best = np.where(closer, distance[node], best)
        parent = np.where(closer, node, parent)
    return edges


def _components(nodes: Sequence[int], edges: Sequence[tuple[float, int, int]]) -> list[list[int]]:
    """Connected components of ``nodes`` under ``edges``, each sorted, in order of first node."""
    root = {node: node for node in nodes}

    def find(node: int) -> int:
        while root[node] != node:
            root[node] = root[root[node]]
            node = root[node]
        return node

    for _, a, b in edges:
        root[find(a)] = find(b)
    parts: dict[int, list[int]] = {}
    for node in sorted(nodes):
        parts.setdefault(find(node), []).append(node)
    return list(parts.values())


def _split(
    nodes: list[int], edges: list[tuple[float, int, int]], hand_size: int
) -> list[list[int]]:
    """Split a tree larger than a hand at its longest edge that leaves whole hands on one side."""
    if len(nodes) <= hand_size:
        return [nodes]
    typical = float(np.median([edge[0] for edge in edges]))
    for cut in sorted(edges, key=lambda edge: (-edge[0], edge[1], edge[2])):
        if cut[0] <= typical:
            break  # only a link longer than the group's typical link separates hands
        rest = [edge for edge in edges if edge is not cut]
        parts = _components(nodes, rest)
        if any(len(part) % hand_size == 0 for part in parts):
            result: list[list[int]] = []
            for part in parts:
                members = set(part)
                inner = [edge for edge in rest if edge[1] in members]
                result += _split(part, inner, hand_size)
            return result
    return [nodes]


def _split_components(
    nodes: list[int], edges: list[tuple[float, int, int]], hand_size: int
) -> list[list[int]]:
    """The connected parts of ``nodes`` under those of ``edges`` that join them, each split
    into hands by :func:`_split`."""
    inside = set(nodes)
    edges = [edge for edge in edges if edge[1] in inside]
    parts: list[list[int]] = []
    for piece in _components(nodes, edges):
        members = set(piece)
        parts += _split(piece, [edge for edge in edges if edge[1] in members], hand_size)
    return parts


def reading_order(groups: Sequence[CardGroup]) -> tuple[CardGroup, ...]:
    """Groups in rows from the top, left to right within a row (see the module docstring)."""
    if not groups:
        return ()
    heights = [group.box_xyxy[3] - group.box_xyxy[1] for group in groups]
    row_height = max(float(np.median(heights)), 1e-6)
    by_height = sorted(groups, key=lambda group: (group.center_xy[1], group.center_xy[0]))
    rows: list[list[CardGroup]] = []
    for group in by_height:
        if rows and group.center_xy[1] - rows[-1][0].center_xy[1] <= row_height:
            rows[-1].append(group)
        else:
            rows.append([group])
    return tuple(group for row in rows for group in sorted(row, key=lambda g: g.center_xy[0]))


def _left_to_right(cards: Sequence[CardReading]) -> tuple[CardReading, ...]:
    return tuple(sorted(cards, key=lambda card: (card.center_xy[0], card.center_xy[1])))


def group_cards(
    cards: Sequence[CardReading],
    *,
    link_factor: float = DEFAULT_LINK_FACTOR,
    hand_size: int = 5,
) -> tuple[CardGroup, ...]:
    """Cluster cards into groups by the distance of their boxes (see the module docstring)."""
    if not 0 < link_factor <= 100 or not math.isfinite(link_factor):
        raise GroupingError(f"link factor {link_factor!r} must lie in (0, 100]")
    if not cards:
        return ()
    points = _centers(cards)
    threshold = link_factor * distance_scale(cards)
    tree = _spanning_tree(points)
    kept = [edge for edge in tree if edge[0] <= threshold]
    groups: list[CardGroup] = []
    for component in _components(range(len(cards)), kept):
        certain = [i for i in component if not cards[i].uncertain]
        whole_hands = len(certain) % hand_size == 0 and 0 < len(certain) < len(component)
        nodes, edges = component, kept
        if len(component) > hand_size and whole_hands:
            unsure = [i for i in component if cards[i].uncertain]
            groups.append(CardGroup(_left_to_right([cards[i] for i in unsure]), set_aside=True))
            # the certain cards' own tree, cut as before (an uncertain card may have linked them)
            nodes = certain
            edges = [
                (length, certain[a], certain[b])
                for length, a, b in _spanning_tree(points[certain])
                if length <= threshold
            ]
        for part in _split_components(nodes, edges, hand_size):
            groups.append(CardGroup(_left_to_right([cards[i] for i in part])))
    return reading_order(groups)


def assign_regions(
    cards: Sequence[CardReading], regions: Sequence[Region], size_wh: tuple[int, int]
) -> tuple[tuple[CardGroup, ...], tuple[CardReading, ...]]:
    """One group per region (in the regions' order, maybe empty) and the cards in none."""
    boxes = [region.pixels(size_wh) for region in regions]
    members: list[list[CardReading]] = [[] for _ in regions]
    left_over: list[CardReading] = []
    for card in cards:
        x, y = card.center_xy
        holding = [i for i, (x1, y1, x2, y2) in enumerate(boxes) if x1 <= x <= x2 and y1 <= y <= y2]
        if not holding:
            left_over.append(card)
            continue

        def distance(index: int, x: float = x, y: float = y) -> float:
            x1, y1, x2, y2 = boxes[index]
            return math.hypot((x1 + x2) / 2 - x, (y1 + y2) / 2 - y)

        members[min(holding, key=distance)].append(card)
    groups = tuple(CardGroup(_left_to_right(found), i) for i, found in enumerate(members))
    return groups, tuple(left_over)

"""Which cards of a photo belong together: hands found by the cards' geometry, or by regions.

Clustering (:func:`group_cards`), when no regions are given, works on each card's *body*, the
part of the table the card surely covers, and on what the game expects of a hand (Niu Niu:
five cards):

1. **A card's size.** From the reader, a card knows the size of its index box (``index_px``),
   and a card is about :data:`CARD_WIDTH_PER_INDEX` index heights wide; a card built by hand
   (no ``index_px``) takes the longer side of its box (the shorter one when it was read at
   several corners: its box spans the card). Every distance below is counted in the
   card widths of the two cards it joins (their mean), so no pixel constant is involved and a
   near card (larger in the picture) is measured by its own size.
2. **A card's body.** A box covers the card's visible index or indices. One index says where
   a corner of the card lies, not which way the card turns (boxes are upright rectangles), so
   the body taken is the square of one card width about the index: the part of the card every
   turn keeps near its corner. A card read at several corners (``corners >= 2``: its box runs
   from corner to corner) has its box as its body, grown to a card width where narrower.
3. **Links.** The distance of two cards is the gap between their bodies (0 when they overlap:
   the cards of a fan or of an overlapping row) plus one card width, which is the distance of
   their index centres for two single indices side by side. Single linkage: the minimum
   spanning tree of the cards under that distance is cut at every link longer than
   ``link_factor`` card widths (default 2.0: the bodies of one hand's cards overlap or lie
   within a card width of a neighbour; separate hands lie farther apart). Each remaining tree
   is a group.
4. **Uncertain cards beside full hands.** A group larger than a hand whose certain cards make
   whole hands (five certain cards and one uncertain, say) keeps its certain cards together
   and sets the uncertain ones apart as a group of their own: a reading below the confidence
   threshold beside a full hand is likelier a pip or a picture read as an index than a sixth
   card, and it must not push a real card out of its hand. That group is marked
   ``set_aside``; scoring lists its cards as left over, not as a seat. A group of uncertain
   cards alone (a lone 0.27 "KC" read off a phone screen at the table's edge) is set aside
   the same way, before any hand is formed or the banker chosen: a reading nobody can trust
   never makes a seat of its own.
5. **Too many cards.** A group larger than a hand (two hands touching, a stray card beside a
   hand) is split along its tree: among the links longer than the group's median link whose
   removal leaves a part of a whole number of hands (5, 10, .. cards), the longest is cut, and
   the split repeats on each part still larger than a hand. A group without such a link (say
   7 cards spread evenly in one row) stays whole and is reported as it is, never forced into a
   hand.
6. **Too few cards.** Two groups smaller than a hand that together make exactly one hand (a
   fan read as 4 + 1 when its top card's body lies a little apart, 3 + 2) are joined when they
   lie within ``JOIN_FACTOR`` times the link distance of each other, the nearest pair first.
   Groups that together make no whole hand stay apart: nothing is guessed.

One card read twice (:func:`one_card_read_twice`): the other corner of a card, upside down
or at a slant, is sometimes read for certain as its twin (10C as 10S, 7H as 7D, 9D as 6H), and
the card becomes two. Where a group holds exactly one card more than a hand and exactly one
pair of its cards are such twins, each read at one corner, lying where one card's two corners
lie (:data:`TWIN_REACH` index heights apart, and across each other as a card's diagonal runs,
not side by side as the cards of a fan), the pair is that one card, uncertain, naming both
readings: the hand is then whole but unverified, never scored on a guess. The same holds for a
lone certain card that the grouping cut off beside a whole hand (a stray card of its own, a
seat of one card) when it is the twin of exactly one card of the photo's hands, read where
that card's other corner lies (:func:`cards_read_twice`). A group of a hand's size is never
touched: there the two readings may be two real cards.

Regions (:func:`assign_regions`): each card goes to the region that holds its box centre (the
nearest region centre when several do); cards in no region are left over.

Groups come back in reading order: rows from the top (a group starts a new row when its centre
lies lower than the row's first group by more than the median group height), left to right in
a row. Cards within a group are ordered left to right.

Photo and live modes group alike: the live pipeline scores its tracked cards with this same
function, and a tracked card keeps its reading's index size and corner count
(``vision.tracking.Track.as_card``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from vision.detections import CardReading
from vision.settings import ReaderSettings

__all__ = [
    "CARD_WIDTH_PER_INDEX",
    "DEFAULT_LINK_FACTOR",
    "JOIN_FACTOR",
    "CardGroup",
    "GroupingError",
    "Region",
    "assign_regions",
    "card_body",
    "card_distances",
    "card_width",
    "cards_read_twice",
    "distance_scale",
    "group_cards",
    "one_card_read_twice",
    "reading_order",
    "twin_codes",
]

DEFAULT_LINK_FACTOR = 2.0
"""Cards closer than this many card widths (step 3 of the module docstring) are linked."""


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


CARD_WIDTH_PER_INDEX = 2.5
"""A card is about this many index heights wide (measured on the deck renders: 2.3 to 3.2)."""

JOIN_FACTOR = 1.5
"""Two groups too small for a hand that together make one are joined when no farther apart than
this many times the link distance (step 6 of the clustering)."""


TWIN_REACH = ReaderSettings().other_corner_reach
"""How far apart (from, to) one card's two corner indices lie, in index heights between their
centres: the reader's own ``other_corner_reach``."""

TWIN_SLANT = ReaderSettings().other_corner_slant
"""One card's two corners lie across each other: the smaller side of the offset between their
centres is at least this share of the larger (the reader's ``other_corner_slant``)."""

_COLOUR = {"C": "black", "S": "black", "H": "red", "D": "red"}


def twin_codes(first: str, second: str) -> bool:
    """Whether two different codes are readings a card's two corners give of each other: the
    same rank in a suit of the same colour (10C and 10S), or a 6 and a 9 of one colour (9D and
    6H). Jokers have no twin."""
    if first == second or len(first) < 2 or len(second) < 2:
        return False
    colours = _COLOUR.get(first[-1]), _COLOUR.get(second[-1])
    if colours[0] is None or colours[0] != colours[1]:
        return False
    ranks = {first[:-1], second[:-1]}
    return len(ranks) == 1 or ranks == {"6", "9"}


def _index_height(card: CardReading) -> float:
    """The longer side of a card's index: ``index_px``, or that of its box (cards built by hand)."""
    if card.index_px > 0:
        return card.index_px
    x1, y1, x2, y2 = card.box_xyxy
    return max(x2 - x1, y2 - y1, 1e-6)


def _read_as_corners(first: CardReading, second: CardReading) -> bool:
    """Whether two cards, each read at one corner, lie where one card's two corners lie."""
    if first.corners != 1 or second.corners != 1:
        return False
    height = max(_index_height(first), _index_height(second))
    dx = abs(first.center_xy[0] - second.center_xy[0])
    dy = abs(first.center_xy[1] - second.center_xy[1])
    apart = math.hypot(dx, dy) / height
    return TWIN_REACH[0] <= apart <= TWIN_REACH[1] and min(dx, dy) >= TWIN_SLANT * max(dx, dy)


def _twin_corners(first: CardReading, second: CardReading) -> bool:
    """Whether two certain cards are twins read where one card's two corners lie."""
    return (
        not first.uncertain
        and not second.uncertain
        and twin_codes(first.code, second.code)
        and _read_as_corners(first, second)
    )


def _as_one_card(first: CardReading, second: CardReading) -> CardReading:
    """Two readings of one card's corners as one uncertain card: the surer reading, its box
    around both, the other reading first among its alternatives and named as its other corner."""
    surer, other = sorted((first, second), key=lambda card: -card.confidence)
    (x1, y1, x2, y2), (u1, v1, u2, v2) = surer.box_xyxy, other.box_xyxy
    return replace(
        surer,
        box_xyxy=(min(x1, u1), min(y1, v1), max(x2, u2), max(y2, v2)),
        corners=2,
        uncertain=True,
        alternatives=((other.code, other.confidence), *surer.alternatives),
        other_corners=(other.code, *surer.other_corners),
    )


def one_card_read_twice(cards: Sequence[CardReading], hand_size: int) -> tuple[CardReading, ...]:
    """``cards`` (one group) as they are, or, when they are one card more than ``hand_size`` and
    exactly one pair of them are certain twins (:func:`twin_codes`) read each at one corner
    where one card's two corners lie, the group with that pair as one uncertain card (see the
    module docstring)."""
    if len(cards) != hand_size + 1:
        return tuple(cards)
    pairs = [
        (a, b)
        for a in range(len(cards))
        for b in range(a + 1, len(cards))
        if _twin_corners(cards[a], cards[b])
    ]
    if len(pairs) != 1:
        return tuple(cards)
    a, b = pairs[0]
    one = _as_one_card(cards[a], cards[b])
    return _left_to_right([one, *(card for n, card in enumerate(cards) if n not in (a, b))])


def cards_read_twice(groups: Sequence[CardGroup], hand_size: int) -> list[CardGroup]:
    """The groups of a photo with each card read twice made one (see the module docstring):
    in a group of one card more than a hand (:func:`one_card_read_twice`), and a lone certain
    card that is the only twin of a card of a whole hand read where that card's other corner
    lies (the grouping cut it off as a stray card) joined to that card. Groups set aside are
    left as they are."""
    groups = [
        group if group.set_aside
        else replace(group, cards=one_card_read_twice(group.cards, hand_size))
        for group in groups
    ]  # fmt: skip
    hands = {n for n, group in enumerate(groups) if len(group.cards) == hand_size}
    joined: set[int] = set()  # the lone cards' groups, gone into a hand
    for number, group in enumerate(groups):
        if len(group.cards) != 1 or group.set_aside:
            continue
        found = [
            (hand, position)
            for hand in sorted(hands)
            for position, card in enumerate(groups[hand].cards)
            if _twin_corners(group.cards[0], card)
        ]
        if len(found) != 1:
            continue
        hand, position = found[0]
        cards = list(groups[hand].cards)
        cards[position] = _as_one_card(cards[position], group.cards[0])
        groups[hand] = replace(groups[hand], cards=_left_to_right(cards))
        hands.discard(hand)  # one card read twice a hand, at most
        joined.add(number)
    return [group for number, group in enumerate(groups) if number not in joined]


def card_width(card: CardReading) -> float:
    """A card-width estimate in pixels: ``index_px`` times :data:`CARD_WIDTH_PER_INDEX` when the
    reader measured its index; else (cards built by hand) the longer side of its box, or the
    shorter one for a card of several corners (its box spans the card)."""
    if card.index_px > 0:
        return card.index_px * CARD_WIDTH_PER_INDEX
    x1, y1, x2, y2 = card.box_xyxy
    sides = (x2 - x1, y2 - y1)
    return max(min(sides) if card.corners >= 2 else max(sides), 1e-6)


def card_body(card: CardReading) -> Box:
    """The part of the table the card surely covers (step 2 of the module docstring): its box
    grown about its centre to at least one card width each way."""
    width = card_width(card)
    x1, y1, x2, y2 = card.box_xyxy
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    half_x, half_y = max((x2 - x1) / 2, width / 2), max((y2 - y1) / 2, width / 2)
    return (cx - half_x, cy - half_y, cx + half_x, cy + half_y)


def distance_scale(cards: Sequence[CardReading]) -> float:
    """The median over the cards of :func:`card_width` (1.0 without cards)."""
    if not cards:
        return 1.0
    return max(float(np.median([card_width(card) for card in cards])), 1e-6)


def card_distances(cards: Sequence[CardReading]) -> NDArray[np.float64]:
    """(N, N) distances of the cards in card widths (step 3 of the module docstring): the gap
    between two bodies over the pair's mean card width, plus one."""
    if not cards:
        return np.zeros((0, 0), np.float64)
    bodies = np.array([card_body(card) for card in cards], np.float64).reshape(-1, 4)
    widths = np.array([card_width(card) for card in cards], np.float64)
    gap_x = np.maximum(
        np.maximum(bodies[:, None, 0], bodies[None, :, 0])
        - np.minimum(bodies[:, None, 2], bodies[None, :, 2]),
        0.0,
    )
    gap_y = np.maximum(
        np.maximum(bodies[:, None, 1], bodies[None, :, 1])
        - np.minimum(bodies[:, None, 3], bodies[None, :, 3]),
        0.0,
    )
    mean_width = (widths[:, None] + widths[None, :]) / 2
    distances: NDArray[np.float64] = np.hypot(gap_x, gap_y) / mean_width + 1.0
    np.fill_diagonal(distances, 0.0)
    return distances


def _spanning_tree(distance: NDArray[np.float64]) -> list[tuple[float, int, int]]:
    """Prim's minimum spanning tree under a distance matrix: ``(length, a, b)`` edges, O(n^2)."""
    count = len(distance)
    if count < 2:
        return []
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


def _join(
    parts: list[list[int]], distance: NDArray[np.float64], hand_size: int, limit: float
) -> list[list[int]]:
    """Join pairs of parts smaller than a hand that together make one (step 6), nearest first."""
    parts = [list(part) for part in parts]
    while True:
        best: tuple[float, int, int] | None = None
        for a, first in enumerate(parts):
            for b in range(a + 1, len(parts)):
                second = parts[b]
                if len(first) + len(second) != hand_size:
                    continue
                gap = float(distance[np.ix_(first, second)].min())
                if gap <= limit and (best is None or gap < best[0]):
                    best = (gap, a, b)
        if best is None:
            return parts
        _, a, b = best
        parts[a] = sorted(parts[a] + parts[b])
        del parts[b]


def group_cards(
    cards: Sequence[CardReading],
    *,
    link_factor: float = DEFAULT_LINK_FACTOR,
    hand_size: int = 5,
) -> tuple[CardGroup, ...]:
    """Cluster cards into groups by their bodies and the hand size (see the module docstring)."""
    if not 0 < link_factor <= 100 or not math.isfinite(link_factor):
        raise GroupingError(f"link factor {link_factor!r} must lie in (0, 100]")
    if not cards:
        return ()
    distance = card_distances(cards)
    tree = _spanning_tree(distance)
    kept = [edge for edge in tree if edge[0] <= link_factor]
    groups: list[CardGroup] = []
    parts: list[list[int]] = []
    for component in _components(range(len(cards)), kept):
        certain = [i for i in component if not cards[i].uncertain]
        if not certain:  # uncertain readings alone: no seat
            groups.append(CardGroup(_left_to_right([cards[i] for i in component]), set_aside=True))
            continue
        whole_hands = len(certain) % hand_size == 0 and 0 < len(certain) < len(component)
        nodes, edges = component, kept
        if len(component) > hand_size and whole_hands:
            unsure = [i for i in component if cards[i].uncertain]
            groups.append(CardGroup(_left_to_right([cards[i] for i in unsure]), set_aside=True))
            # the certain cards' own tree, cut as before (an uncertain card may have linked them)
            nodes = certain
            edges = [
                (length, certain[a], certain[b])
                for length, a, b in _spanning_tree(distance[np.ix_(certain, certain)])
                if length <= link_factor
            ]
        parts += _split_components(nodes, edges, hand_size)
    parts = _join(parts, distance, hand_size, JOIN_FACTOR * link_factor)
    groups += [CardGroup(_left_to_right([cards[i] for i in part])) for part in parts]
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

"""A locked table layout: the hands shown, turned into the regions that then group the cards
(:meth:`handreader.tables.live.LivePipeline.lock_layout`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from handreader.tables.grouping import Region
from handreader.tables.scoring import Role, TableResult

__all__ = ["LOCK_MARGIN", "Layout", "layout_of"]


LOCK_MARGIN = 0.5
"""How far a locked hand's region reaches past its cards, in the shorter side of their box."""


@dataclass(frozen=True, slots=True)
class Layout:
    """A locked table: the banker's region (None without a banker) and the players' (or the
    trainer's hands'), in seat order, as fractions of the frame."""

    banker: Region | None
    players: tuple[Region, ...]

    def to_dict(self) -> dict[str, object]:
        """JSON: ``banker`` [x1, y1, x2, y2] or null, ``players`` a list of them."""

        def box(region: Region) -> list[float]:
            return [round(value, 4) for value in (region.x1, region.y1, region.x2, region.y2)]

        return {
            "banker": None if self.banker is None else box(self.banker),
            "players": [box(region) for region in self.players],
        }


_Box = list[float]  # x1, y1, x2, y2 in pixels


def _part(grown: list[_Box], cores: list[_Box]) -> None:
    """Cut grown boxes that reach into each other where their hands' own boxes do not meet:
    each stops halfway between the two hands, across the widest gap between them, so that
    every card of a hand lies in its own region only (hands whose boxes overlap keep theirs)."""
    for i in range(len(grown)):
        for j in range(i + 1, len(grown)):
            a, b = grown[i], grown[j]
            if a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]:
                continue  # the regions do not meet
            core_a, core_b = cores[i], cores[j]
            gaps = [  # (gap, axis, is a before b)
                (core_b[0] - core_a[2], 0, True),
                (core_a[0] - core_b[2], 0, False),
                (core_b[1] - core_a[3], 1, True),
                (core_a[1] - core_b[3], 1, False),
            ]
            gap, axis, a_first = max(gaps)
            if gap <= 0:
                continue  # the hands themselves overlap
            first, second = (a, b) if a_first else (b, a)
            core_first = core_a if a_first else core_b
            middle = core_first[axis + 2] + gap / 2
            first[axis + 2] = min(first[axis + 2], middle)
            second[axis] = max(second[axis], middle)


def layout_of(table: TableResult, margin: float = LOCK_MARGIN) -> Layout | None:
    """The regions of the hands of ``table`` (scored from a frame: its boxes and size): each
    hand's cards' box, grown by ``margin`` of its shorter side on every side (within the
    frame, and never past halfway to another hand), the banker's as ``banker``, the others as
    ``players`` in seat order. None when the table has no hand with boxes."""
    hands = [hand for hand in table.hands if hand.box_xyxy is not None]
    if table.size_wh is None or not hands:
        return None
    width, height = table.size_wh
    cores = [list(cast(tuple[float, float, float, float], hand.box_xyxy)) for hand in hands]
    grown = []
    for box in cores:
        grow = margin * min(box[2] - box[0], box[3] - box[1])
        x1, y1 = max(0.0, box[0] - grow), max(0.0, box[1] - grow)
        x2, y2 = min(float(width), box[2] + grow), min(float(height), box[3] + grow)
        grown.append([x1, y1, x2, y2])
    _part(grown, cores)
    regions = [
        Region(box[0] / width, box[1] / height, box[2] / width, box[3] / height, fractional=True)
        for box in grown
    ]
    banker = next(
        (r for hand, r in zip(hands, regions, strict=True) if hand.role is Role.BANKER), None
    )
    players = tuple(
        r for hand, r in zip(hands, regions, strict=True) if hand.role is not Role.BANKER
    )
    return Layout(banker, players)

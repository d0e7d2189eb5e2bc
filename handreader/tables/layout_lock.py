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


def layout_of(table: TableResult, margin: float = LOCK_MARGIN) -> Layout | None:
    """The regions of the hands of ``table`` (scored from a frame: its boxes and size): each
    hand's cards' box, grown by ``margin`` of its shorter side on every side (within the
    frame), the banker's as ``banker``, the others as ``players`` in seat order. None when
    the table has no hand with boxes."""
    hands = [hand for hand in table.hands if hand.box_xyxy is not None]
    if table.size_wh is None or not hands:
        return None
    width, height = table.size_wh

    def region(box: tuple[float, float, float, float]) -> Region:
        grow = margin * min(box[2] - box[0], box[3] - box[1])
        x1, y1 = max(0.0, box[0] - grow) / width, max(0.0, box[1] - grow) / height
        x2, y2 = min(width, box[2] + grow) / width, min(height, box[3] + grow) / height
        return Region(x1, y1, x2, y2, fractional=True)

    boxes = [(hand, cast(tuple[float, float, float, float], hand.box_xyxy)) for hand in hands]
    banker = next((box for hand, box in boxes if hand.role is Role.BANKER), None)
    players = tuple(region(box) for hand, box in boxes if hand.role is not Role.BANKER)
    return Layout(None if banker is None else region(banker), players)

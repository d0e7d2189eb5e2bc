"""A locked live layout: the hands shown become regions that then hold the cards
(handreader.tables.live.LivePipeline.lock_layout, handreader.tables.layout_lock)."""

from __future__ import annotations

import numpy as np
import pytest
from live_scene import SIZE_WH
from numpy.typing import NDArray

from handreader.tables.live import LiveError, LiveFrame, LivePipeline, LiveSettings
from handreader.tables.scoring import TableOptions
from vision.detections import CardReading, Reading


class MovableTable:
    """Two hands (five cards, three cards) read every frame; cards can be added."""

    def __init__(self) -> None:
        left = [(60 + 34 * i, 200) for i in range(5)]
        right = [(420 + 34 * i, 200) for i in range(3)]
        codes = ["KS", "QS", "10S", "5C", "5S", "3H", "7S", "KD"]
        self.cards = list(zip(codes, left + right, strict=True))

    def read(self, image: NDArray[np.uint8]) -> Reading:
        return Reading(
            SIZE_WH,
            tuple(
                CardReading(code, 0.96, (x, y, x + 16, y + 26), index_px=26.0)
                for code, (x, y) in self.cards
            ),
        )


def _hands(frame: LiveFrame) -> list[list[str]]:
    return [sorted(card.code for card in hand.cards) for hand in frame.table.hands]


def test_a_locked_layout_holds_the_hands_to_their_regions() -> None:
    reader = MovableTable()
    pipeline = LivePipeline(reader, TableOptions.create(), LiveSettings(read_every=1))
    image = np.zeros((SIZE_WH[1], SIZE_WH[0], 3), np.uint8)
    with pytest.raises(LiveError, match="no hands to lock yet"):
        pipeline.lock_layout()
    for _ in range(6):
        before = pipeline.process(image)
    layout = pipeline.lock_layout()
    assert len(layout.players) + (layout.banker is not None) == len(before.table.hands) == 2
    width, height = SIZE_WH
    for hand, region in zip(
        [h for h in before.table.hands], [layout.banker, *layout.players], strict=True
    ):
        assert region is not None and hand.box_xyxy is not None
        x1, y1, x2, y2 = hand.box_xyxy
        assert region.x1 * width <= x1 and region.x2 * width >= x2
        assert region.y1 * height <= y1 and region.y2 * height >= y2
    # a card put down between the hands, nearer the three: clustering would join it to them,
    # the locked table leaves it over; one inside the three's region joins them
    reader.cards.append(("9H", (330, 200)))
    reader.cards.append(("2D", (440, 214)))
    for _ in range(12):
        locked = pipeline.process(image)
    assert locked.layout == layout and locked.to_dict()["layout"] == layout.to_dict()
    assert sorted(map(tuple, _hands(locked))) == sorted(
        [("10S", "5C", "5S", "KS", "QS"), ("2D", "3H", "7S", "KD")]
    )
    assert [card.code for card in locked.table.left_over] == ["9H"]
    pipeline.unlock_layout()
    for _ in range(12):
        free = pipeline.process(image)
    assert free.layout is None and "9H" not in [card.code for card in free.table.left_over]

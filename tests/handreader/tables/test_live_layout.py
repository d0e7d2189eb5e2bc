"""A locked live layout: the hands shown become regions that then hold the cards
(handreader.tables.live.LivePipeline.lock_layout, handreader.tables.layout_lock)."""

from __future__ import annotations

import numpy as np
import pytest
from live_scene import SIZE_WH
from numpy.typing import NDArray

from handreader.tables.grouping import Region
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


def _cards_in_hands(frame: LiveFrame) -> int:
    return sum(len(hand.cards) for hand in frame.table.hands) + len(frame.table.left_over)


def test_cards_dealt_into_regions_join_their_hands_at_once() -> None:
    """With regions, an empty table still scores as empty hands: the first cards in them are
    the first hands shown, not a regrouping to hold for ``hold_frames``."""
    reader = MovableTable()
    dealt, reader.cards = reader.cards, []
    whole = Region.parse([0, 0, 1, 1])
    pipeline = LivePipeline(reader, TableOptions.create(banker_region=whole), LiveSettings())
    image = np.zeros((SIZE_WH[1], SIZE_WH[0], 3), np.uint8)
    for _ in range(3):
        pipeline.process(image)  # an empty table
    reader.cards = dealt
    frames = [pipeline.process(image) for _ in range(6)]
    for frame in frames:  # every card shown is in a hand or left over, from the first frame
        assert _cards_in_hands(frame) == len(frame.shown), [len(f.shown) for f in frames]
    assert len(frames[-1].shown) == 8


def test_new_options_while_locked_keep_the_lock_and_give_theirs_back_on_unlock() -> None:
    reader = MovableTable()
    pipeline = LivePipeline(reader, TableOptions.create(), LiveSettings(read_every=1))
    image = np.zeros((SIZE_WH[1], SIZE_WH[0], 3), np.uint8)
    for _ in range(6):
        pipeline.process(image)
    layout = pipeline.lock_layout()
    reader.cards.append(("9H", (330, 200)))  # between the hands: the lock leaves it over
    pipeline.set_options(TableOptions.create(profile="classic"))
    for _ in range(12):
        locked = pipeline.process(image)
    assert pipeline.options.profile.name == "classic"
    assert locked.layout == layout and [c.code for c in locked.table.left_over] == ["9H"]
    assert pipeline.options.banker_region == layout.banker
    right = Region.parse([0.5, 0, 1, 1])
    pipeline.set_options(TableOptions.create(banker_region=right))
    pipeline.unlock_layout()  # the regions of the latest options, not the first ones
    assert pipeline.layout is None and pipeline.options.banker_region == right


def test_a_lock_never_moves_a_card_into_a_neighbours_region() -> None:
    """A wide hand beside a square one nearer than the square one's margin: its region, grown
    alone, would reach the wide hand's edge cards, nearer its centre than the wide hand's; the
    regions stop halfway between the hands, so locking changes no hand."""
    from handreader.tables.layout_lock import layout_of
    from handreader.tables.scoring import score_reading
    from rules.cards import CARD_CLASSES

    codes = iter(code for code in CARD_CLASSES if code not in ("JB", "JR"))
    wide = [(20 + 34 * column, 200 + 34 * row) for row in range(2) for column in range(13)]
    left = 20 + 34 * 12 + 16 + 55  # 55 px right of the wide hand: apart, under its margin
    square = [(left + 34 * column, 150 + 34 * row) for row in range(5) for column in range(5)]
    cards = tuple(
        CardReading(next(codes), 0.96, (x, y, x + 16, y + 26), index_px=26.0)
        for x, y in wide + square
    )
    reading = Reading((1000, 600), cards)
    before = score_reading(reading, TableOptions.create(mode="trainer"))
    assert sorted(len(hand.cards) for hand in before.hands) == [25, 26]
    layout = layout_of(before)
    assert layout is not None
    regions = [*([] if layout.banker is None else [layout.banker]), *layout.players]
    locked = score_reading(reading, TableOptions.create(mode="trainer", player_regions=regions))
    assert sorted(len(hand.cards) for hand in locked.hands) == [25, 26]
    assert not locked.left_over

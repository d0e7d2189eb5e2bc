"""Where the annotated image writes the card codes (handreader/drawing/layout.py, place_codes).

Expectations from the drawing's contract (docs/page.md, "Drawing"): no code's box overlaps
another code's box or a label, every code stays inside the frame, a code moved from its card
is joined to it by a leader line, and a hand whose codes fit at their cards keeps them there.
The scene is ``tests/fan_scene.py``'s tight table: three fans of five cards 8 degrees apart,
whose codes written at their cards overlap at every size the annotator draws them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from code_layout_checks import Box, check_codes_laid_out, overlapping
from fan_scene import FAN_HAND, SIZE_WH, fan_layout, fan_reading, tight_table
from numpy.typing import NDArray

from handreader.drawing.annotate import Annotator
from handreader.drawing.layout import overlap_area, place_codes
from handreader.tables.scoring import TableOptions, score_reading
from vision.detections import CardReading, Reading


@pytest.mark.parametrize("width", [320, 640, 1280])
def test_no_code_of_a_tight_fan_covers_another_code_or_a_label(width: int) -> None:
    size = (width, width * SIZE_WH[1] // SIZE_WH[0])
    reading = fan_reading(tight_table(size), size)
    result = score_reading(reading, TableOptions.create(stake=10))
    assert [len(hand.cards) for hand in result.hands] == [5, 5, 5]
    image = np.full((size[1], size[0], 3), 90, np.uint8)
    annotator = Annotator()
    layout = annotator.layout(image, result)
    labels = [place.box for _, _, place in layout.labels]
    # every code was moved (each hand's codes at their cards overlap), none covers a label,
    # and the drawing is that layout
    codes = check_codes_laid_out(layout, size, labels, annotator.annotate(image, result), 90)
    assert len(codes) == 15


def test_codes_that_fit_at_their_cards_stay_there() -> None:
    # cards 60 px apart: each code fits above its own card, no leader
    reading = Reading(
        (800, 600),
        tuple(
            CardReading(code, 0.9, (100 + 60 * i, 300, 140 + 60 * i, 360))
            for i, code in enumerate(["AS", "2S", "3S", "4S", "8S"])
        ),
    )
    result = score_reading(reading, TableOptions.create())
    layout = Annotator().layout(np.full((600, 800, 3), 90, np.uint8), result)
    assert layout.code_leaders == (None,) * 5
    assert all(box[3] <= 300 and box[0] == 100 + 60 * i for i, box in enumerate(layout.codes))


def test_a_crowded_hand_is_spread_in_the_order_of_its_cards_and_the_rest_kept() -> None:
    # hand 0: three cards 10 px apart whose 30 px codes overlap; hand 1 far off, roomy
    cards: list[Box] = [(100.0, 200.0, 120.0, 230.0), (110.0, 200.0, 130.0, 230.0),
                        (120.0, 200.0, 140.0, 230.0), (500.0, 200.0, 520.0, 230.0)]  # fmt: skip
    at_cards: list[Box] = [(x1, 180.0, x1 + 30.0, 198.0) for x1, _, _, _ in cards]
    places = place_codes(cards, at_cards, [0, 0, 0, 1], [], (800.0, 600.0), 4.0)
    assert places[3].box == at_cards[3] and places[3].leader is None
    moved = [place.box for place in places[:3]]
    assert overlapping([*moved, places[3].box]) == []
    assert [box for box in moved for card in cards if overlap_area(box, card)] == []
    assert [box[0] for box in moved] == sorted(box[0] for box in moved)  # left to right
    assert moved[1][0] - moved[0][2] == 4.0  # a gap apart, in one row
    assert all(place.leader is not None for place in places[:3])


def test_a_row_wider_than_the_frame_breaks_into_rows() -> None:
    cards: list[Box] = [(10.0 + 5 * i, 100.0, 25.0 + 5 * i, 120.0) for i in range(5)]
    at_cards: list[Box] = [(x1, 80.0, x1 + 40.0, 98.0) for x1, _, _, _ in cards]
    places = place_codes(cards, at_cards, [0] * 5, [], (100.0, 300.0), 4.0)
    boxes = [place.box for place in places]
    assert overlapping(boxes) == []
    assert [box for box in boxes for card in cards if overlap_area(box, card)] == []
    assert all(box[0] >= 0 and box[2] <= 100 for box in boxes)
    assert len({box[1] for box in boxes}) == 3  # 2 + 2 + 1 codes of 40 px in 100 px


def test_place_codes_wants_one_entry_per_card() -> None:
    with pytest.raises(ValueError, match="one entry per card, got 2, 1 and 2"):
        place_codes([(0, 0, 1, 1)] * 2, [(0, 0, 1, 1)], [0, 0], [], (10.0, 10.0), 1.0)


def test_the_codes_of_a_tight_pits_play_are_spread_too() -> None:
    """/v1/annotated?game=pits: four cards 12 px apart, whose codes at their cards overlap."""
    from handreader.tables.pits import judge_reading

    cards = tuple(
        CardReading(code, 0.95, (300 + 12 * i, 200, 324 + 12 * i, 240))
        for i, code in enumerate(["10H", "10D", "10C", "10S"])
    )
    play = judge_reading(Reading((640, 480), cards))
    drawn: list[list[Box]] = []

    class Recording(Annotator):
        def _code_places(self, *arguments: Any) -> Any:
            codes, leaders = super()._code_places(*arguments)
            drawn.append([tuple(map(float, box)) for box in codes])  # type: ignore[misc]
            assert all(leader is not None for leader in leaders)
            return codes, leaders

    Recording().annotate(np.full((480, 640, 3), 90, np.uint8), play)
    (codes,) = drawn
    assert len(codes) == 4 and overlapping(codes) == []


def _struck_pixels(image: NDArray[np.uint8], box: tuple[int, int, int, int]) -> int:
    """Pixels inside a code's box (its edge left out) that are neither its fill, its text, nor
    a blend of the two: a line drawn across it."""
    x1, y1, x2, y2 = box
    patch = image[y1 + 1 : y2 - 1, x1 + 1 : x2 - 1].reshape(-1, 3).astype(np.float64)
    colours, counts = np.unique(patch, axis=0, return_counts=True)
    fill = colours[np.argmax(counts)]
    ink = patch[np.argmax(np.linalg.norm(patch - fill, axis=1))] - fill
    along = np.clip((patch - fill) @ ink / max(float(ink @ ink), 1e-9), 0, 1)
    off = np.linalg.norm(patch - (fill + along[:, None] * ink), axis=1)
    return int((off > 40).sum())


BUSY_PIVOTS = ((0.29, 0.57), (0.37, 0.59), (0.55, 0.98), (0.69, 0.87))
"""Four fans of five on a 390 x 292 photo, cards 0.31 of its height, 7.4 degrees apart: two
hands' codes go in rows whose leader lines pass over the codes of the others."""


def test_no_leader_line_is_drawn_over_a_code() -> None:
    size = (390, 292)
    hands = (FAN_HAND, ("AH", "2H", "3H", "4H", "6H"), ("7C", "8C", "9C", "JC", "QC"),
             ("AD", "2D", "3D", "4D", "5D"))  # fmt: skip
    cards = [
        card
        for codes, pivot in zip(hands, BUSY_PIVOTS, strict=True)
        for card in fan_layout(size, codes, pivot=pivot, card_height=0.31, step_degrees=7.4)
    ]
    result = score_reading(fan_reading(cards, size), TableOptions.create(stake=10))
    image = np.full((size[1], size[0], 3), 90, np.uint8)
    annotator = Annotator()
    layout = annotator.layout(image, result)
    assert sum(leader is not None for leader in layout.code_leaders) >= 10
    drawn = annotator.annotate(image, result)
    assert [_struck_pixels(drawn, box) for box in layout.codes] == [0] * len(layout.codes)

"""Where a reading drawn without a game writes its card codes (``handreader read --annotate``,
``Annotator.annotate_reading``): laid out as a table's codes are (handreader/drawing/layout.py).

Expectations from the drawing's contract (the module docstring of handreader/drawing/layout.py):
no code's box overlaps another code's box or a card's index box, every code stays inside the
frame, a code moved from its card is joined to it by a leader line that ends on the card, and
codes that fit at their cards stay there. The scene is ``tests/fan_scene.py``'s tight table read
as one reading: fifteen cards in three fans, whose codes written at their cards overlap.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from code_layout_checks import Box, check_codes_laid_out, overlapping
from fan_scene import SIZE_WH, fan_reading, tight_table

from handreader.drawing.annotate import Annotator
from handreader.drawing.layout import code_groups
from vision.detections import CardReading, Reading

GREY = 90


@pytest.mark.parametrize("width", [320, 640, 1280])
def test_no_code_of_a_tight_fan_reading_covers_another_code_or_an_index(width: int) -> None:
    size = (width, width * SIZE_WH[1] // SIZE_WH[0])
    reading = fan_reading(tight_table(size), size)
    image = np.full((size[1], size[0], 3), GREY, np.uint8)
    annotator = Annotator()
    layout = annotator.reading_layout(image, reading)
    assert len(layout.codes) == len(layout.cards) == 15
    assert layout.hands == () and layout.labels == ()
    # every fan's codes at their cards overlap: each code was moved, none covers an index, and
    # the drawing is that layout
    drawn = annotator.annotate_reading(image, reading)
    check_codes_laid_out(layout, size, layout.cards, drawn, GREY)


def test_the_drawing_of_a_tight_fan_reading_lays_its_codes_out() -> None:
    """annotate_reading goes through the table's code layout: the codes it draws are apart."""
    reading = fan_reading(tight_table(SIZE_WH), SIZE_WH)
    laid_out: list[list[Box]] = []

    class Recording(Annotator):
        def _code_places(self, *arguments: Any) -> Any:
            codes, leaders = super()._code_places(*arguments)
            laid_out.append([tuple(map(float, box)) for box in codes])  # type: ignore[misc]
            return codes, leaders

    Recording().annotate_reading(np.full((SIZE_WH[1], SIZE_WH[0], 3), GREY, np.uint8), reading)
    (codes,) = laid_out
    assert len(codes) == 15 and overlapping(codes) == []


def test_the_fans_of_a_reading_are_its_code_groups() -> None:
    """Each fan's codes overlap among themselves and not across fans: three groups of five."""
    reading = fan_reading(tight_table(SIZE_WH), SIZE_WH)
    image = np.full((SIZE_WH[1], SIZE_WH[0], 3), GREY, np.uint8)
    annotator = Annotator()
    layout = annotator.reading_layout(image, reading)
    at_cards = [
        tuple(map(float, annotator._code_box(image, card)))
        for card in annotator._reading_cards(reading)
    ]
    groups = code_groups(list(layout.cards), at_cards)  # type: ignore[arg-type]
    assert sorted(groups.count(group) for group in set(groups)) == [5, 5, 5]


def test_codes_of_a_reading_that_fit_at_their_cards_stay_there() -> None:
    # cards 60 px apart: each code fits above its own card, no leader
    reading = Reading(
        (800, 600),
        tuple(
            CardReading(code, 0.9, (100 + 60 * i, 300, 140 + 60 * i, 360))
            for i, code in enumerate(["AS", "2S", "3S", "4S", "8S"])
        ),
    )
    layout = Annotator().reading_layout(np.full((600, 800, 3), GREY, np.uint8), reading)
    assert layout.code_leaders == (None,) * 5
    assert all(box[3] <= 300 and box[0] == 100 + 60 * i for i, box in enumerate(layout.codes))


def test_an_uncertain_card_moved_from_its_card_keeps_its_mark() -> None:
    """An uncertain card's code reads ``?`` after it and is boxed in the uncertain colour."""
    cards = tuple(
        CardReading(code, 0.95, (300 + 12 * i, 200, 324 + 12 * i, 240), uncertain=code == "10C")
        for i, code in enumerate(["10H", "10D", "10C", "10S"])
    )
    reading = Reading((640, 480), cards)
    image = np.full((480, 640, 3), GREY, np.uint8)
    annotator = Annotator()
    layout = annotator.reading_layout(image, reading)
    assert all(leader is not None for leader in layout.code_leaders)
    drawn = annotator.annotate_reading(image, reading)
    red, green, blue = annotator.uncertain_colour
    x1, y1, _, _ = layout.codes[2]
    assert tuple(drawn[y1 + 1, x1 + 1]) == (blue, green, red)
    assert [card.shown for card in annotator._reading_cards(reading)][2] == "10C?"


def test_code_groups_wants_one_entry_per_card() -> None:
    with pytest.raises(ValueError, match="one entry per card, got 2 and 1"):
        code_groups([(0, 0, 1, 1)] * 2, [(0, 0, 1, 1)])

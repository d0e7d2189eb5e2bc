"""Checks shared by the tests of where card codes are drawn (handreader/drawing/layout.py):
codes apart from each other and from what they must not cover, inside the frame, each moved
code's leader ending on its own card's index box, and each code's box painted."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from handreader.drawing.layout import overlap_area

Box = tuple[float, float, float, float]

__all__ = ["Box", "check_codes_laid_out", "overlapping"]


def overlapping(boxes: Sequence[Box]) -> list[tuple[Box, Box]]:
    """Each pair of ``boxes`` that overlap."""
    return [
        (box, other)
        for number, box in enumerate(boxes)
        for other in boxes[number + 1 :]
        if overlap_area(box, other) > 0
    ]


def check_codes_laid_out(
    layout: Any,
    size_wh: tuple[int, int],
    clear_of: Sequence[Box],
    drawn: NDArray[np.uint8],
    background: int,
) -> list[Box]:
    """Assert that ``layout``'s codes (a ``TableLayout``) overlap neither each other nor any
    box of ``clear_of``, stay inside the frame, were all moved with a leader ending on their
    card, and are painted on ``drawn`` (an image of ``background`` grey); the codes' boxes."""
    codes: list[Box] = [tuple(map(float, box)) for box in layout.codes]  # type: ignore[misc]
    assert overlapping(codes) == []
    assert [(code, box) for code in codes for box in clear_of if overlap_area(code, box)] == []
    for box in codes:
        assert box[0] >= 0 and box[1] >= 0 and box[2] <= size_wh[0] and box[3] <= size_wh[1]
    for leader, card in zip(layout.code_leaders, layout.cards, strict=True):
        assert leader is not None
        (x, y) = leader[1]
        assert card[0] <= x <= card[2] and card[1] <= y <= card[3]
    for box in codes:
        x, y = round(box[0]) + 1, round(box[1]) + 1
        assert tuple(drawn[y, x]) != (background,) * 3, box
    return codes

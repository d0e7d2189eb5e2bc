"""Text on the annotated image reads at WCAG 2.2's 4.5:1 (1.4.3, images of text) on its box.

Each card's code is written on a box of its hand's colour and each hand's label on a box of
that colour too; the text is black or white, whichever contrasts more with the box
(:func:`handreader.drawing.contrast.text_colour_on`): on any colour one of them reaches
sqrt(21) = 4.58:1. Checked for every colour the annotator draws a box in, by the rule and on
the drawn pixels (the box's own colour against its text's).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from numpy.typing import NDArray

from handreader.drawing.annotate import DEFAULT_PALETTE, Annotator, Rgb
from handreader.drawing.contrast import contrast_ratio, text_colour_on
from handreader.tables.scoring import TableOptions, score_reading
from vision.detections import CardReading, Reading

DEFAULT = Annotator()
BOX_COLOURS: tuple[Rgb, ...] = (
    *DEFAULT_PALETTE,
    DEFAULT.banker_colour,
    DEFAULT.uncertain_colour,
    DEFAULT.left_over_colour,
    (40, 40, 40),  # the summary line's box
)


@pytest.mark.parametrize("colour", BOX_COLOURS, ids=str)
def test_the_text_colour_on_each_box_colour_reaches_4_5_to_1(colour: Rgb) -> None:
    assert contrast_ratio(text_colour_on(colour), colour) >= 4.5


@pytest.mark.parametrize(
    ("first", "second", "ratio"),
    [((0, 0, 0), (255, 255, 255), 21.0), ((255, 255, 255), (255, 255, 255), 1.0),
     ((118, 118, 118), (255, 255, 255), 4.54)],  # WCAG's #767676 on white is 4.54:1
)  # fmt: skip
def test_contrast_ratio_follows_wcag(first: Rgb, second: Rgb, ratio: float) -> None:
    assert contrast_ratio(first, second) == pytest.approx(ratio, abs=0.01)
    assert contrast_ratio(second, first) == pytest.approx(ratio, abs=0.01)


def _hand(codes: str, x: float, y: float, uncertain: str = "") -> list[CardReading]:
    return [
        CardReading(code, 0.9, (x + 90 * i, y, x + 90 * i + 60, y + 90),
                    uncertain=code in uncertain.split())
        for i, code in enumerate(codes.split())
    ]  # fmt: skip


def _ink_contrast(image: NDArray[np.uint8], box: tuple[float, float, float, float]) -> float:
    """The contrast of a drawn text box: its commonest colour (the fill) against the pixel
    that differs from it most (the text's core)."""
    x1, y1, x2, y2 = (round(value) for value in box)
    patch = image[max(y1, 0) : y2, max(x1, 0) : x2].reshape(-1, 3)
    pixels = [(int(r), int(g), int(b)) for b, g, r in patch]
    fill = Counter(pixels).most_common(1)[0][0]
    return max(contrast_ratio(fill, pixel) for pixel in set(pixels))


@pytest.mark.parametrize("colour", [*DEFAULT_PALETTE, DEFAULT.banker_colour], ids=str)
def test_every_drawn_code_and_label_reaches_4_5_to_1_on_its_box(colour: Rgb) -> None:
    reading = Reading(
        (1200, 900),
        (*_hand("AS 2S 3S 4S 8S", 300, 150), *_hand("3H 7S KD 8C 6D", 300, 600, "KD")),
    )
    result = score_reading(reading, TableOptions.create(stake=10))
    annotator = Annotator(palette=[colour], banker_colour=colour)
    image = np.full((900, 1200, 3), 128, np.uint8)
    layout = annotator.layout(image, result)
    drawn = annotator.annotate(image, result)
    boxes = [
        *(tuple(map(float, box)) for box in layout.codes),
        *(p.box for _, _, p in layout.labels),
    ]
    assert len(boxes) == 12
    for box in boxes:
        assert _ink_contrast(drawn, box) >= 4.5, box  # type: ignore[arg-type]

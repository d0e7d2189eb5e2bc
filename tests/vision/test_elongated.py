"""A very elongated image is read as having no card, never a crash (reader and service).

Shrinking the long side of a strip to the network's input size (640 px) rounds its short side
to 0 pixels above about 1,000:1 (20,000 x 32 was the longest that used to read); the letterbox
keeps every side at least 1 pixel (``vision.letterbox``). The shapes are those of the strips
that used to fail: 35,000 x 32, 32 x 60,000 and 999,000 x 32 (under the pixel limit and the
1,000,000 px side limit of ``vision.imagelimits``).
"""

from __future__ import annotations

import numpy as np
import pytest

from vision.letterbox import letterbox
from vision.reader import Reader


@pytest.mark.parametrize(("width", "height"), [(35_000, 32), (32, 60_000), (999_000, 32)])
def test_letterbox_keeps_a_pixel_of_a_thin_strip(width: int, height: int) -> None:
    tensor, _ = letterbox(np.full((height, width, 3), 200, np.uint8), 640)
    assert tensor.shape == (1, 3, 640, 640)


@pytest.fixture(scope="module")
def reader() -> Reader:
    return Reader.load()


@pytest.mark.parametrize(("width", "height"), [(35_000, 32), (32, 60_000), (999_000, 32)])
def test_the_reader_finds_no_card_in_a_thin_strip(reader: Reader, width: int, height: int) -> None:
    reading = reader.read(np.full((height, width, 3), 200, np.uint8))
    assert reading.cards == ()
    assert reading.size_wh == (width, height)

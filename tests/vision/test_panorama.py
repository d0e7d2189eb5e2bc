"""A panorama (a photo over ``vision.settings.PANORAMA`` times as long as it is high) is read
by its height: decoded and shrunk as a 4:3 photo of that height would be, never taken for a
close-up, so the cards of a long row are read as those of one photo of the row."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.imageio import decode_reduced, load_image
from vision.reader import Reader, default_models_dir
from vision.settings import PANORAMA

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "hand.jpg"
COPIES = 6


def _jpeg(image: np.ndarray) -> bytes:
    ok, encoded = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 92])
    assert ok
    return encoded.tobytes()


@pytest.mark.parametrize(
    ("size_wh", "factor"),
    [
        ((8000, 750), 1),  # a panorama keeps its height: halved, it would be 375 px high
        ((8000, 2400), 2),  # halved it is still 1,200 px high
        ((4000, 3000), 2),  # a 4:3 photo as before: its longer side at least 1,401 px
        ((4000, 2000), 2),  # 2:1 is no panorama
    ],
)
def test_a_panorama_is_decoded_keeping_the_height_of_a_four_by_three_photo(
    size_wh: tuple[int, int], factor: int
) -> None:
    width, height = size_wh
    image = np.full((height, width, 3), 120, np.uint8)
    assert (width > PANORAMA * height) == (size_wh in ((8000, 750), (8000, 2400)))
    assert decode_reduced(_jpeg(image)).factor == factor


@pytest.mark.skipif(
    not (default_models_dir() / "manifest.json").is_file(), reason="no shipped models"
)
def test_a_row_of_hands_in_one_panorama_reads_each_hand() -> None:
    """Six copies of the example hand side by side (3,840 x 480): each copy gives cards of the
    hand, about half of them in all (the row is read at the scale of a large 4:3 photo, the
    hand alone at twice it); shrunk by its length, the row's indices would be a few pixels
    high and none would be read."""
    reader = Reader.load()
    alone = load_image(EXAMPLE)
    single = sorted(card.code for card in reader.read(alone).cards if not card.uncertain)
    assert len(single) >= 3
    row = np.concatenate([alone] * COPIES, axis=1)
    reading = reader.read(row)
    width = alone.shape[1]
    right = 0
    for copy in range(COPIES):
        inside = {
            card.code
            for card in reading.cards
            if not card.uncertain and copy * width <= card.center_xy[0] < (copy + 1) * width
        }
        assert len(inside & set(single)) >= 2, (copy, inside, single)
        right += len(inside & set(single))
    assert right >= COPIES * len(single) / 2

"""Real index crops for the classifier from labelled photos of single cards (photo_crops.py).

A fake detector stands in for the model, so these tests check the bookkeeping: which photos are
used (the split, one known card, readable files), which boxes count as corner indices, and
that each crop carries its photo's card.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np
import pytest
from numpy.typing import NDArray

from rules.cards import CARD_CLASSES
from training.photo_crops import corner_boxes, photo_crops
from vision.crops import CROP_SIZE
from vision.detections import Detections


class FakeDetector:
    """Finds the given boxes (most confident first) in every photo."""

    def __init__(self, boxes: Sequence[tuple[float, float, float, float]]) -> None:
        self.boxes = np.array(boxes, np.float32).reshape(-1, 4)
        self.calls = 0

    def detect(self, image: NDArray[np.uint8]) -> Detections:
        self.calls += 1
        count = len(self.boxes)
        confidence = np.linspace(0.9, 0.5, count).astype(np.float32)
        return Detections(self.boxes.copy(), confidence, np.zeros(count, np.int64))


@pytest.mark.parametrize(
    ("box", "kept"),
    [
        ((5, 5, 25, 35), True),  # top-left index
        ((175, 265, 195, 295), True),  # bottom-right index
        ((175, 5, 195, 35), True),  # top-right (decks with four indices)
        ((90, 130, 110, 170), False),  # the middle of the card: a pip, not an index
        ((5, 130, 25, 170), False),  # the left edge half-way down
        ((90, 5, 110, 35), False),  # the top edge half-way across
    ],
)
def test_corner_boxes_keep_boxes_in_the_four_corners(
    box: tuple[float, float, float, float], kept: bool
) -> None:
    """A 200 x 300 photo of one card: only boxes centred within 30% of two edges are indices."""
    found = corner_boxes(np.array([box], np.float32), 200, 300)
    assert (len(found) == 1) is kept


def _photo(path: Path) -> None:
    image = np.full((300, 200, 3), 230, np.uint8)
    cv2.putText(image, "7", (8, 30), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (0, 0, 200), 2)
    assert cv2.imwrite(str(path), image)


def test_photo_crops_use_only_training_photos_of_one_known_card(tmp_path: Path) -> None:
    rows = [
        {"image": "a.jpg", "cards": ["7H"], "split": "train"},
        {"image": "b.jpg", "cards": ["KS"], "split": "train"},
        {"image": "c.jpg", "cards": ["QD"], "split": "valid"},  # validation: never trained on
        {"image": "d.jpg", "cards": ["JOKER"], "split": "train"},  # colour unknown
        {"image": "e.jpg", "cards": ["2C", "3C"], "split": "train"},  # not one card
        {"image": "broken.jpg", "cards": ["4D"], "split": "train"},  # unreadable file
    ]
    for name in ("a.jpg", "b.jpg", "c.jpg", "d.jpg", "e.jpg"):
        _photo(tmp_path / name)
    (tmp_path / "broken.jpg").write_bytes(b"\xff\xd8\xff not really a jpeg")
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    boxes = [(5, 5, 25, 35), (175, 265, 195, 295), (175, 5, 195, 35), (90, 130, 110, 170)]
    detector = FakeDetector(boxes)

    crops, labels, used = photo_crops(detector, manifest, per_photo=2)

    assert used == 2  # a.jpg and b.jpg
    assert detector.calls == 2  # the broken file is skipped before detection
    assert crops.shape == (4, CROP_SIZE, CROP_SIZE, 3)  # two corner indices per photo
    assert [CARD_CLASSES[i] for i in labels] == ["7H", "7H", "KS", "KS"]


def test_photo_crops_with_no_corner_index_give_an_empty_set(tmp_path: Path) -> None:
    _photo(tmp_path / "a.jpg")
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text(json.dumps({"image": "a.jpg", "cards": ["7H"], "split": "train"}) + "\n")
    crops, labels, used = photo_crops(FakeDetector([(90, 130, 110, 170)]), manifest)
    assert (crops.shape, labels.shape, used) == ((0, CROP_SIZE, CROP_SIZE, 3), (0,), 0)

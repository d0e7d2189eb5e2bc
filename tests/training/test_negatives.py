"""Hard "none" examples for the classifier (training/negatives.py), with a fake detector.

The fake fires on given boxes; the tests check which of them become "none" crops: on scenes,
those overlapping no labelled index (IoU below 0.1); on single-card photos, those away from
the four corners.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray

from rules.cards import CARD_CLASSES
from training.negatives import photo_negatives, scene_negatives
from vision.crops import CROP_SIZE, crop_index
from vision.detections import Detections

NONE = len(CARD_CLASSES)


class FakeDetector:
    def __init__(self, boxes: Sequence[tuple[float, float, float, float]]) -> None:
        self.boxes = np.array(boxes, np.float32).reshape(-1, 4)

    def detect(self, image: NDArray[np.uint8]) -> Detections:
        count = len(self.boxes)
        confidence = np.linspace(0.9, 0.3, count).astype(np.float32)
        return Detections(self.boxes.copy(), confidence, np.zeros(count, np.int64))


def _scene(
    folder: Path,
    name: str,
    indices: list[tuple[float, float, float, float]],
    partial: list[tuple[float, float, float, float]] | None = None,
) -> None:
    (folder / "images").mkdir(parents=True, exist_ok=True)
    (folder / "meta").mkdir(exist_ok=True)
    image = np.random.default_rng(0).integers(0, 255, (240, 320, 3), dtype=np.uint8)
    assert cv2.imwrite(str(folder / "images" / f"{name}.jpg"), image)
    labelled = [{"card": "7H", "box_xyxy": list(box)} for box in indices]
    meta: dict[str, object] = {"indices": labelled}
    if partial is not None:
        meta["partial"] = [{"card": "2S", "box_xyxy": list(box)} for box in partial]
    (folder / "meta" / f"{name}.json").write_text(json.dumps(meta))


def test_scene_negatives_are_detections_that_overlap_no_labelled_index(tmp_path: Path) -> None:
    _scene(tmp_path, "000000", [(10, 10, 30, 40)])
    detector = FakeDetector(
        [
            (11, 11, 31, 41),  # the labelled index, found: not a negative
            (20, 25, 40, 55),  # IoU about 0.2 with it: not a negative either
            (200, 100, 220, 130),  # a pip somewhere else: a negative
            (100, 150, 120, 180),  # another: a negative
            (250, 10, 270, 40),  # a third: over the per-scene limit of 2
        ]
    )
    crops, labels = scene_negatives(detector, (tmp_path,), per_scene=2)
    assert crops.shape == (2, CROP_SIZE, CROP_SIZE, 3)
    assert labels.tolist() == [NONE, NONE]


def test_indices_showing_only_in_part_give_no_negatives(tmp_path: Path) -> None:
    """A detection on an unlabelled index that shows (a partly covered or small one, listed
    under "partial") is no false detection; one elsewhere still is."""
    _scene(tmp_path, "000000", [(10, 10, 30, 40)], partial=[(200, 100, 220, 130)])
    detector = FakeDetector([(202, 102, 221, 131), (100, 150, 120, 180)])
    crops, labels = scene_negatives(detector, (tmp_path,), per_scene=5)
    assert labels.tolist() == [NONE]
    expected = crop_index(cv2.imread(str(tmp_path / "images" / "000000.jpg")), (100, 150, 120, 180))
    np.testing.assert_array_equal(crops[0], expected)


def test_scene_without_labels_gives_its_surest_detections(tmp_path: Path) -> None:
    _scene(tmp_path, "000000", [])
    _, labels = scene_negatives(FakeDetector([(5, 5, 25, 35)]), (tmp_path,))
    assert labels.tolist() == [NONE]


def test_photo_negatives_are_detections_away_from_the_corners(tmp_path: Path) -> None:
    image = np.full((300, 200, 3), 230, np.uint8)
    for name in ("a.jpg", "b.jpg"):
        assert cv2.imwrite(str(tmp_path / name), image)
    rows = [
        {"image": "a.jpg", "cards": ["7H"], "split": "train"},
        {"image": "b.jpg", "cards": ["7H"], "split": "valid"},  # never used for training
    ]
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    detector = FakeDetector([(5, 5, 25, 35), (90, 130, 110, 170), (175, 265, 195, 295)])
    crops, labels = photo_negatives(detector, manifest)
    assert crops.shape == (1, CROP_SIZE, CROP_SIZE, 3)  # only the middle one, of photo a
    assert labels.tolist() == [NONE]


def test_no_negatives_give_an_empty_set(tmp_path: Path) -> None:
    _scene(tmp_path, "000000", [(10, 10, 30, 40)])
    crops, labels = scene_negatives(FakeDetector([(10, 10, 30, 40)]), (tmp_path,))
    assert (crops.shape, labels.shape) == ((0, CROP_SIZE, CROP_SIZE, 3), (0,))

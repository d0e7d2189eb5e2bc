"""The index verifier's training examples (training/verifier.py), with a fake detector: the
detector's boxes and each label's own box, on an index or on nothing, and random boxes; no
torch is needed to gather them."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
from test_negatives import FakeDetector, _scene

from training.verifier import verifier_examples
from vision.verifier import VERIFY_SIZE, verifier_crops


def test_boxes_on_labels_are_indices_boxes_on_nothing_are_not(tmp_path: Path) -> None:
    _scene(tmp_path, "000000", [(10, 10, 30, 40)], partial=[(200, 100, 220, 130)])
    detector = FakeDetector(
        [
            (11, 11, 31, 41),  # on the labelled index: an index
            (20, 25, 40, 55),  # IoU about 0.2 with it: left out
            (202, 102, 221, 131),  # on an index showing in part: left out
            (100, 150, 120, 180),  # on nothing: none
        ]
    )
    crops, labels = verifier_examples(detector, (tmp_path,), random_per_scene=0)
    assert crops.shape == (3, VERIFY_SIZE, VERIFY_SIZE, 3)
    assert labels.tolist() == [1, 0, 1]  # the detector's two kept boxes, then the label's own
    image = cv2.imread(str(tmp_path / "images" / "000000.jpg"))
    boxes = np.array([[11, 11, 31, 41], [100, 150, 120, 180], [10, 10, 30, 40]], np.float32)
    np.testing.assert_array_equal(crops, verifier_crops(image, boxes))


def test_a_detector_that_finds_nothing_still_gives_both_kinds(tmp_path: Path) -> None:
    for number in range(3):
        _scene(tmp_path, f"{number:07d}", [(10, 10, 30, 40)])
    crops, labels = verifier_examples(FakeDetector([]), (tmp_path,), random_per_scene=4, seed=1)
    assert (labels == 1).sum() == 3  # the labels' own boxes
    assert (labels == 0).sum() >= 6  # random boxes away from the index
    again = verifier_examples(FakeDetector([]), (tmp_path,), random_per_scene=4, seed=1)
    np.testing.assert_array_equal(again[1], labels)
    np.testing.assert_array_equal(again[0], crops)

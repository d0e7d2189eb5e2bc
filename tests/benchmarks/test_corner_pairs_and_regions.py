"""benchmarks/eval_corner_pairs.py (one card's corners read apart) and
benchmarks/fine_pass_regions.py (the regions a fine pass over the cards only would read)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import cv2
import numpy as np
from benchmark_modules import load_benchmark

from rules.cards import CARD_CLASSES

corner_pairs = load_benchmark("eval_corner_pairs")
fine_regions = load_benchmark("fine_pass_regions")


class _Reads:
    """A reader stand-in: each box's reading and sureness given by the test, in order."""

    def __init__(self, readings: list[tuple[str, float]]) -> None:
        self.readings = readings
        self.settings = SimpleNamespace(uncertain_below=0.7)

    def prepare(self, image: Any) -> Any:
        return image

    def classify(self, image: Any, xyxy: Any) -> tuple[Any, Any]:
        probabilities = np.zeros((len(xyxy), len(CARD_CLASSES) + 1), np.float32)
        for row, (code, sure) in enumerate(self.readings[: len(xyxy)]):
            probabilities[row, CARD_CLASSES.index(code)] = sure
            probabilities[row, -1] = 1 - sure
        del self.readings[: len(xyxy)]
        return probabilities, np.zeros((len(xyxy), 128), np.float32)


def test_corner_pairs_count_one_cards_corners_read_as_two_and_both_certain(tmp_path: Path) -> None:
    boxes = tmp_path / "boxes"
    boxes.mkdir()
    cv2.imwrite(str(boxes / "a.jpg"), np.full((60, 80, 3), 200, np.uint8))
    objects = [
        {"card": card, "box_xyxy": [0, 0, 10, 14], "kind": "index"}
        for card in ("10C", "10C", "7H", "7H", "KS")
    ]
    rows = [
        {"image": "a.jpg", "cards": ["10C", "7H", "KS"], "objects": objects, "split": "valid"},
        {"image": "a.jpg", "cards": ["10C"], "objects": objects[:2], "split": "train"},
    ]
    (boxes / "manifest.jsonl").write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    # 10C's corners read 10C and 10S, both sure; 7H's 7H and 7D, one unsure; KS alone
    reader = _Reads([("10C", 0.9), ("10S", 0.8), ("7H", 0.9), ("7D", 0.5), ("KS", 0.9)])
    counts = corner_pairs.measure(reader, tmp_path, "valid")
    assert counts == {"boxes": 5, "right": 3, "pairs": 2, "disagree": 2, "both_certain": 1}
    agreeing = _Reads([("10C", 0.9), ("10C", 0.9)])
    assert corner_pairs.measure(agreeing, tmp_path, "train")["disagree"] == 0


def test_regions_cover_the_cards_paper_and_merge_what_overlaps() -> None:
    felt = np.zeros((400, 536, 3), np.uint8)
    felt[:] = (40, 110, 30)  # green cloth
    cv2.rectangle(felt, (40, 40), (120, 150), (235, 235, 235), -1)  # a card
    cv2.rectangle(felt, (400, 250), (480, 360), (235, 235, 235), -1)  # another, far off
    rects = fine_regions.regions(felt, np.zeros((0, 4), np.float32))
    assert len(rects) == 2
    for x1, y1, x2, y2 in rects:
        assert x2 - x1 < 140 and y2 - y1 < 160  # the card and a margin, not the cloth
    covered = sum((x2 - x1) * (y2 - y1) for x1, y1, x2, y2 in rects) / (400 * 536)
    assert covered < 0.25
    assert fine_regions._merged([[0, 0, 10, 10], [5, 5, 20, 20], [30, 30, 40, 40]]) == [
        [0, 0, 20, 20],
        [30, 30, 40, 40],
    ]

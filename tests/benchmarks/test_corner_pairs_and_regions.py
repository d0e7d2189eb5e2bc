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
    """A reader stand-in: each box's reading and sureness given by the test, by the box's
    left edge; its detector finds the boxes ``found``, and its merging makes one card of the
    boxes read alike (uncertain below 0.7)."""

    def __init__(self, readings: dict[float, tuple[str, float]], found: list[list[int]]) -> None:
        self.readings = readings
        self.found = np.array(found, np.float32)
        self.settings = SimpleNamespace(uncertain_below=0.7)

    def prepare(self, image: Any) -> Any:
        return image

    def detect(self, image: Any) -> Any:
        return SimpleNamespace(xyxy=self.found)

    def classify(self, image: Any, xyxy: Any) -> tuple[Any, Any]:
        probabilities = np.zeros((len(xyxy), len(CARD_CLASSES) + 1), np.float32)
        for row, box in enumerate(xyxy):
            code, sure = self.readings[float(box[0])]
            probabilities[row, CARD_CLASSES.index(code)] = sure
            probabilities[row, -1] = 1 - sure
        return probabilities, np.zeros((len(xyxy), 128), np.float32)

    def _merge(self, xyxy: Any, probabilities: Any) -> list[tuple[Any, Any]]:
        codes = probabilities[:, :-1].argmax(axis=1)
        cards = []
        for code in sorted(set(codes.tolist())):
            rows = np.flatnonzero(codes == code)
            sure = float(probabilities[rows, code].max())
            cards.append((SimpleNamespace(uncertain=sure < 0.7), rows))
        return cards


def test_corner_pairs_count_one_cards_corners_read_as_two_and_both_certain(tmp_path: Path) -> None:
    boxes = tmp_path / "boxes"
    boxes.mkdir()
    cv2.imwrite(str(boxes / "a.jpg"), np.full((60, 80, 3), 200, np.uint8))
    lefts = [0, 12, 24, 36, 48]
    objects = [
        {"card": card, "box_xyxy": [left, 0, left + 10, 14], "kind": "index"}
        for card, left in zip(("10C", "10C", "7H", "7H", "KS"), lefts, strict=True)
    ]
    rows = [
        {"image": "a.jpg", "cards": ["10C", "7H", "KS"], "objects": objects, "split": "valid"},
        {"image": "a.jpg", "cards": ["10C"], "objects": objects[:2], "split": "train"},
    ]
    (boxes / "manifest.jsonl").write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    found = [obj["box_xyxy"] for obj in objects]
    # 10C's corners read 10C and 10S, both sure; 7H's 7H and 7D, one unsure; KS alone
    readings = [("10C", 0.9), ("10S", 0.8), ("7H", 0.9), ("7D", 0.5), ("KS", 0.9)]
    reader = _Reads(dict(zip(map(float, lefts), readings, strict=True)), found)
    counts = corner_pairs.measure(reader, tmp_path, "valid")
    # read whole, the 10C is two certain cards; the 7D, unsure, is no card of its own
    assert counts == {
        "boxes": 5, "right": 3, "pairs": 2, "disagree": 2, "both_certain": 1, "reported_twice": 1
    }  # fmt: skip
    agreeing = _Reads({0.0: ("10C", 0.9), 12.0: ("10C", 0.9)}, found[:2])
    counts = corner_pairs.measure(agreeing, tmp_path, "train")
    assert counts["disagree"] == 0 and counts["reported_twice"] == 0
    # a detector that finds neither corner: no card, so none reported twice
    missed = _Reads({0.0: ("10C", 0.9), 12.0: ("10S", 0.9)}, [[60, 40, 70, 54]])
    missed.readings[60.0] = ("KS", 0.9)
    counts = corner_pairs.measure(missed, tmp_path, "train")
    assert counts["both_certain"] == 1 and counts["reported_twice"] == 0


class _Embeds(_Reads):
    """A reader stand-in whose crops also give the embeddings the test sets, by left edge."""

    def __init__(
        self, readings: dict[float, tuple[str, float]], embeddings: dict[float, list[float]]
    ) -> None:
        super().__init__(readings, [])
        self.settings = SimpleNamespace(
            uncertain_below=0.7, other_corner_reach=(2.2, 5.5), other_corner_slant=0.25
        )
        self.embeddings = embeddings

    def classify(self, image: Any, xyxy: Any) -> tuple[Any, Any]:
        probabilities, _ = super().classify(image, xyxy)
        embeddings = np.zeros((len(xyxy), 128), np.float32)
        for row, box in enumerate(xyxy):
            values = self.embeddings[float(box[0])]
            embeddings[row, : len(values)] = values
        return probabilities, embeddings


def test_embedding_joins_count_certain_disagreeing_corners_by_their_cosine(
    tmp_path: Path,
) -> None:
    boxes = tmp_path / "boxes"
    boxes.mkdir()
    cv2.imwrite(str(boxes / "a.jpg"), np.full((260, 260, 3), 200, np.uint8))
    placed = {  # left edge: (label, box, reading, sureness, embedding)
        0.0: ("10C", [0, 0, 10, 14], "10C", 0.9, [1.0]),
        40.0: ("10C", [40, 40, 50, 54], "10S", 0.9, [0.96, 0.28]),  # its other corner, across
        200.0: ("7H", [200, 0, 210, 14], "7H", 0.9, [0, 0, 1.0]),
        240.0: ("7D", [240, 40, 250, 54], "7D", 0.9, [0, 0, 0.82, 0.57]),  # another card
        2.0: ("9S", [2, 200, 12, 214], "9S", 0.9, [0, 0, 0, 0, 1.0]),
        62.0: ("9C", [62, 200, 72, 214], "9C", 0.9, [0, 0, 0, 0, 1.0]),  # beside, not across
        120.0: ("QH", [120, 120, 130, 134], "QH", 0.9, [0, 0, 0, 0, 0, 1.0]),
        160.0: ("QD", [160, 160, 170, 174], "QD", 0.5, [0, 0, 0, 0, 0, 1.0]),  # unsure
    }
    objects = [{"card": v[0], "box_xyxy": v[1], "kind": "index"} for v in placed.values()]
    row = {"image": "a.jpg", "cards": [o["card"] for o in objects], "objects": objects}
    (boxes / "manifest.jsonl").write_text(json.dumps(row | {"split": "valid"}) + "\n")
    reader = _Embeds(
        {left: (v[2], v[3]) for left, v in placed.items()},
        {left: v[4] for left, v in placed.items()},
    )
    joins = corner_pairs.embedding_joins(reader, tmp_path, "valid")
    assert joins == {0.8: (1, 1), 0.85: (1, 0), 0.9: (1, 0), 0.95: (1, 0)}
    assert corner_pairs.embedding_joins(reader, tmp_path, "train") == dict.fromkeys(
        corner_pairs.COSINES, (0, 0)
    )


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

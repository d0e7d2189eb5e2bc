"""Do a card's corners read alike? Pairs of labelled index boxes on one card, read apart.

For each photo of ``REALDATA/boxes`` (the split chosen), every labelled index box is read by
the index classifier as the reader reads a detected box (``Reader.classify``: turns and cuts
for unsure crops). Two boxes labelled with the same card in one photo are one card's corners
(a photo holds one copy of a card). For each models folder it prints the boxes read right, the
pairs of one card's corners, those read as two different cards, and those of them with both
readings certain (at least ``uncertain_below``); then, with the whole photo read by the reader
(its detector's boxes and the merging of corners, before the verifier), the pairs whose two
boxes are found (the detector box each overlaps most) in two different certain cards: one
card reported as two.

With ``--embeddings`` it also asks whether the classifier's embeddings tell one card's corners
from two cards: over the pairs of labelled boxes placed as one card's corners are (2.2 to 5.5
box sides apart and across, ``ReaderSettings.other_corner_reach`` and ``other_corner_slant``)
whose two readings differ and are both certain, it prints how many pairs of one card and of two
cards a rule joining those whose embeddings' cosine is at least each threshold would join.

    python benchmarks/eval_corner_pairs.py REALDATA [--split valid] [--models DIR ...]
        [--embeddings]
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from rules.cards import CARD_CLASSES
from vision.index_detector import box_iou
from vision.reader import Reader, default_models_dir


def _rows(realdata: Path, split: str) -> list[dict[str, Any]]:
    manifest = realdata / "boxes" / "manifest.jsonl"
    rows = [json.loads(line) for line in manifest.read_text().splitlines() if line.strip()]
    return [row for row in rows if split == "all" or row.get("split") == split]


def _owners(reader: Reader, image: np.ndarray, xyxy: np.ndarray) -> list[int]:
    """For each labelled box, the number of the certain card the reader's merging of corners
    puts the detector box it overlaps most (intersection over union at least 0.3) in (-1: no
    such box, or its card is uncertain or none). Before the verifier, which only drops cards."""
    prepared = reader.prepare(image)
    found = reader.detect(prepared).xyxy
    if len(found) == 0:
        return [-1] * len(xyxy)
    probabilities, _ = reader.classify(prepared, found)
    card_of = np.full(len(found), -1)
    for number, (card, rows) in enumerate(reader._merge(found, probabilities)):
        if not card.uncertain:
            card_of[rows] = number
    overlaps = box_iou(xyxy.T[:, :, None], found[None])  # (labelled, found)
    nearest = overlaps.argmax(axis=1)
    placed = overlaps[np.arange(len(xyxy)), nearest] >= 0.3
    return [int(card_of[n]) if ok else -1 for n, ok in zip(nearest, placed, strict=True)]


def measure(reader: Reader, realdata: Path, split: str) -> dict[str, int]:
    """The counts the module's text names, for one reader."""
    counts = {
        "boxes": 0, "right": 0, "pairs": 0, "disagree": 0, "both_certain": 0, "reported_twice": 0
    }  # fmt: skip
    sure = reader.settings.uncertain_below
    for row in _rows(realdata, split):
        image = cv2.imread(str(realdata / "boxes" / str(row["image"])), cv2.IMREAD_COLOR)
        objects = [item for item in row.get("objects", []) if item.get("kind") == "index"]
        if image is None or not objects:
            continue
        prepared = reader.prepare(image)
        xyxy = np.array([item["box_xyxy"] for item in objects], np.float32)
        probabilities, _ = reader.classify(prepared, xyxy)
        codes = [CARD_CLASSES[int(i)] for i in probabilities[:, :-1].argmax(axis=1)]
        confident = probabilities[:, :-1].max(axis=1) >= sure
        labels = [str(item["card"]) for item in objects]
        owners = _owners(reader, image, xyxy)
        counts["boxes"] += len(labels)
        counts["right"] += sum(code == label for code, label in zip(codes, labels, strict=True))
        for first, second in itertools.combinations(range(len(labels)), 2):
            if labels[first] != labels[second]:
                continue
            counts["pairs"] += 1
            twice = owners[first] != owners[second] and min(owners[first], owners[second]) >= 0
            counts["reported_twice"] += int(twice)
            if codes[first] != codes[second]:
                counts["disagree"] += 1
                counts["both_certain"] += int(confident[first] and confident[second])
    return counts


COSINES = (0.8, 0.85, 0.9, 0.95)


def embedding_joins(reader: Any, realdata: Path, split: str) -> dict[float, tuple[int, int]]:
    """For each threshold of ``COSINES``: (pairs of one card, pairs of two cards) among the
    certain, disagreeing pairs placed as one card's corners whose embeddings' cosine reaches
    it (see the module's text)."""
    settings = reader.settings
    low, high = settings.other_corner_reach
    joins = {threshold: [0, 0] for threshold in COSINES}
    for row in _rows(realdata, split):
        image = cv2.imread(str(realdata / "boxes" / str(row["image"])), cv2.IMREAD_COLOR)
        objects = [item for item in row.get("objects", []) if item.get("kind") == "index"]
        if image is None or len(objects) < 2:
            continue
        xyxy = np.array([item["box_xyxy"] for item in objects], np.float32)
        probabilities, embeddings = reader.classify(reader.prepare(image), xyxy)
        codes = probabilities[:, :-1].argmax(axis=1)
        certain = probabilities[:, :-1].max(axis=1) >= settings.uncertain_below
        unit = embeddings / np.maximum(np.linalg.norm(embeddings, axis=1, keepdims=True), 1e-9)
        centres = (xyxy[:, :2] + xyxy[:, 2:]) / 2
        sides = np.maximum(xyxy[:, 2] - xyxy[:, 0], xyxy[:, 3] - xyxy[:, 1])
        for first, second in itertools.combinations(range(len(objects)), 2):
            if codes[first] == codes[second] or not (certain[first] and certain[second]):
                continue
            dx, dy = np.abs(centres[first] - centres[second])
            distance = float(np.hypot(dx, dy)) / float(max(sides[first], sides[second]))
            if not low <= distance <= high or min(dx, dy) < settings.other_corner_slant * max(
                dx, dy
            ):
                continue
            one_card = objects[first]["card"] == objects[second]["card"]
            cosine = float(unit[first] @ unit[second])
            for threshold in COSINES:
                if cosine >= threshold:
                    joins[threshold][0 if one_card else 1] += 1
    return {threshold: (one, two) for threshold, (one, two) in joins.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("realdata", type=Path)
    parser.add_argument("--split", default="valid", choices=["train", "valid", "all"])
    parser.add_argument("--models", type=Path, nargs="+", default=[default_models_dir()])
    parser.add_argument("--embeddings", action="store_true", help="also the embeddings' rule")
    args = parser.parse_args()
    for models in args.models:
        reader = Reader.load(models)
        counts = measure(reader, args.realdata, args.split)
        print(
            f"{models}: {counts['right']}/{counts['boxes']} boxes read right; "
            f"{counts['pairs']} pairs of one card's corners, {counts['disagree']} read as two "
            f"cards, {counts['both_certain']} of them both certain; read whole, "
            f"{counts['reported_twice']} pairs reported as two certain cards"
        )
        if args.embeddings:
            joins = embedding_joins(reader, args.realdata, args.split)
            for threshold, (one, two) in joins.items():
                print(
                    f"  joining certain, disagreeing corners whose embeddings' cosine is at "
                    f"least {threshold}: {one} pairs of one card, {two} of two cards"
                )


if __name__ == "__main__":
    main()

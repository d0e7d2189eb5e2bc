"""Deck calibration on an unfamiliar deck: accuracy before and after, and the time it takes.

    python benchmarks/bench_calibration.py REALDATA/scans

Calibrates with the ``*_00`` photo of each card only (one card per photo, named by the file),
then reads every other photo with and without the profile, two ways:

- with the detector's own crops: the whole reader; a photo counts as read right when its most
  confident card is the labelled one;
- with clean crops: the deck's index box, measured once as the median place of the top-left
  index the detector found on the calibration photos (relative to the photo's size), cut at the
  same place in every test photo and at its half-turned place in the opposite corner; the two
  corners' probabilities are multiplied and the surest card is the answer. This separates what
  the classifier and the profile can do from what the detector finds.

The profile is written to a temporary data folder.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from rules.cards import CARD_CLASSES
from training.photo_crops import corner_boxes
from vision.calibration import DeckProfile, combine_with_profile
from vision.imageio import load_image
from vision.reader import Reader


def _index_box(reader: Reader, photos: list[Path]) -> NDArray[np.float64]:
    """Median relative box (x1, y1, x2, y2) of the top-left corner index on these photos."""
    found = []
    for photo in photos:
        image = load_image(photo)
        height, width = image.shape[:2]
        corners = corner_boxes(reader.detect(image).xyxy, width, height)
        top_left = [box for box in corners if box[0] + box[2] < width and box[1] + box[3] < height]
        if top_left:
            found.append(np.array(top_left[0]) / [width, height, width, height])
    if not found:
        raise SystemExit("the detector found no top-left index on the calibration photos")
    return np.median(np.array(found), axis=0)


def _clean_read(
    reader: Reader, image: NDArray[np.uint8], box: NDArray[np.float64], deck: DeckProfile | None
) -> str:
    height, width = image.shape[:2]
    x1, y1, x2, y2 = box * [width, height, width, height]
    boxes = np.array([[x1, y1, x2, y2], [width - x2, height - y2, width - x1, height - y1]])
    probabilities, embeddings = reader.classify(image, boxes.astype(np.float32))
    if deck is not None:
        probabilities = combine_with_profile(probabilities, embeddings, deck)
    joint = np.log(probabilities[:, :-1] + 1e-9).sum(axis=0)
    return CARD_CLASSES[int(joint.argmax())]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "folder", type=Path, help="a folder with manifest.jsonl (e.g. realdata/scans)"
    )
    args = parser.parse_args()
    os.environ["HANDREADER_DATA"] = tempfile.mkdtemp(prefix="handreader-calibration-")
    from vision.calibrate_deck import calibrate

    entries = [
        json.loads(line)
        for line in (args.folder / "manifest.jsonl").read_text().splitlines()
        if line
    ]
    calibration = [
        args.folder / e["image"] for e in entries if Path(e["image"]).stem.endswith("_00")
    ]
    tests = [e for e in entries if not Path(e["image"]).stem.endswith("_00")]
    reader = Reader.load()
    started = time.perf_counter()
    result = calibrate(reader, "bench-deck", calibration)
    seconds = time.perf_counter() - started
    print(
        f"calibrated on {len(calibration)} photos in {seconds:.1f} s "
        f"({len(result.profile.prototypes)} cards, {len(result.warnings)} warnings)"
    )
    box = _index_box(reader, calibration)
    print("clean index box (share of width and height): " + ", ".join(f"{v:.3f}" for v in box))
    right = {(way, name): 0 for way in ("detector", "clean") for name in ("without", "with")}
    for entry in tests:
        image = load_image(args.folder / entry["image"])
        for name, deck in (("without", None), ("with", result.profile)):
            cards = reader.read(image, deck).cards
            best = max(cards, key=lambda card: card.confidence).code if cards else None
            right["detector", name] += int(best == entry["cards"][0])
            right["clean", name] += int(_clean_read(reader, image, box, deck) == entry["cards"][0])
    for way, label in (("detector", "the detector's own crops"), ("clean", "clean crops")):
        for name in ("without", "with"):
            count = right[way, name]
            print(
                f"{label}, {name} the profile: {count}/{len(tests)} photos read right "
                f"({count / len(tests):.3f})"
            )


if __name__ == "__main__":
    main()

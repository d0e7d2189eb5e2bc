"""Choose the reader's thresholds on synthetic scenes of the held-out decks (never real photos).

Each scene is read once with a low detection threshold; every combination of detection
threshold, "uncertain below" and "none above" is then scored on the same detections and
classifier outputs (greedy NMS keeps the same boxes above any higher threshold), and the grid
is printed best F1 first.

    python benchmarks/tune_reader.py SCENES [--limit 120] [--models DIR]

``SCENES`` is a folder written by ``handreader synth --config datasets/holdout.yaml`` (its
manifest is written to ``SCENES/manifest/manifest.jsonl``), or a manifest file.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
from pathlib import Path

import numpy as np

from vision.evaluate import EvalTotals, load_manifest, scenes_manifest
from vision.imageio import load_image
from vision.reader import Reader, ReaderSettings

DETECTION = (0.05, 0.075, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4)
UNCERTAIN = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
NONE_ABOVE = (0.2, 0.3, 0.5, 0.7)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("scenes", type=Path, help="a synth folder or a manifest")
    parser.add_argument("--limit", type=int, default=120, help="scenes used (default 120)")
    parser.add_argument("--models", type=Path, help="models folder (default: the shipped one)")
    parser.add_argument("--top", type=int, default=12, help="rows printed")
    parser.add_argument(
        "--turns", type=int, default=ReaderSettings().turns, help="quarter turns tried per crop"
    )
    args = parser.parse_args()

    floor = min(DETECTION)
    reader = Reader.load(args.models, ReaderSettings(detection_threshold=floor, turns=args.turns))
    cached = []
    manifest = args.scenes
    if manifest.is_dir():
        manifest = scenes_manifest(manifest, manifest / "manifest" / "manifest.jsonl")
    for entry in load_manifest(manifest)[: args.limit]:
        image = reader.prepare(load_image(entry.image))  # as read() sees it
        found = reader.detect(image)
        probabilities, _ = reader.classify(image, found.xyxy)
        cached.append((entry, found.xyxy, found.confidence, probabilities))

    rows = []
    for detection, uncertain, none in itertools.product(DETECTION, UNCERTAIN, NONE_ABOVE):
        reader.settings = dataclasses.replace(
            reader.settings,
            detection_threshold=detection,
            uncertain_below=uncertain,
            none_above=none,
        )
        totals = EvalTotals()
        for entry, xyxy, confidence, probabilities in cached:
            keep = confidence >= detection
            cards = reader.merge_corners(xyxy[keep], probabilities[keep])
            certain = [card.code for card in cards if not card.uncertain]
            unsure = sum(card.uncertain for card in cards)
            totals.add(entry.cards, certain, unsure, optional=entry.optional)
        rows.append((totals.f1, totals.precision, totals.recall, detection, uncertain, none))
    rows.sort(key=lambda row: -row[0])
    default = ReaderSettings()
    print(f"{len(cached)} scenes; F1, precision, recall for detection / uncertain / none:")
    for f1, precision, recall, detection, uncertain, none in rows[: args.top]:
        mark = (
            " (current default)"
            if np.allclose(
                (detection, uncertain, none),
                (default.detection_threshold, default.uncertain_below, default.none_above),
            )
            else ""
        )
        print(
            f"  F1 {f1:.4f}  P {precision:.4f}  R {recall:.4f}   "
            f"detection {detection}  uncertain {uncertain}  none {none}{mark}"
        )


if __name__ == "__main__":
    main()

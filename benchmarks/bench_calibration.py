"""Deck calibration on an unfamiliar deck: accuracy before and after, and the time it takes.

    python benchmarks/bench_calibration.py ../shared/realdata/scans

Calibrates with the ``*_00`` photo of each card only (one card per photo, named by the file),
then reads every other photo with and without the profile. A photo counts as read right when
its most confident card is the labelled one. The profile is written to a temporary data folder.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from vision.imageio import load_image
from vision.reader import Reader


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
    right = {"without": 0, "with": 0}
    for entry in tests:
        image = load_image(args.folder / entry["image"])
        for name, deck in (("without", None), ("with", result.profile)):
            cards = reader.read(image, deck).cards
            best = max(cards, key=lambda card: card.confidence).code if cards else None
            right[name] += int(best == entry["cards"][0])
    for name in ("without", "with"):
        print(
            f"{name} the profile: {right[name]}/{len(tests)} photos read right "
            f"({right[name] / len(tests):.3f})"
        )


if __name__ == "__main__":
    main()

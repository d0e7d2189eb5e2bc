"""Tables with print and no card: how many cards does the reader see that are not there?

    python benchmarks/eval_printed_pages.py [--count N] [--seed S] [--models DIR] [--json]

Each image is a table (a wallpaper photo or a drawn felt, wood or cloth, as the synthetic scenes
have) with one to three printed pages on it (:func:`training.synth.printed.draw_printed`: a book,
a menu, a score sheet; words, numbers and card words such as A, K, 10 and Joker) and no card,
at the sizes of the held-out scenes. Every certain card read is a false one, and every uncertain
one flags a photo as read with low confidence for nothing. The images are read by the shipped
reader and, as the baselines of the same run, by the same reader without the index verifier
(``verify_below`` 0) and with it checking certain cards alone (``verify_uncertain`` off),
each timed. The draws are seeded: two runs print the same
counts.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

import numpy as np
from card_free import count_false_cards, print_rows

from training.synth.backgrounds import background, photo_files
from training.synth.config import Backgrounds
from training.synth.printed import draw_printed
from vision.reader import Reader

SIZES = ((640, 480), (480, 640), (800, 600), (1024, 768))


def table_with_print(seed: int) -> np.ndarray:
    """One card-free table image with printed pages, drawn from ``seed``."""
    rng = np.random.default_rng([seed, 20261130])
    width, height = SIZES[int(rng.integers(len(SIZES)))]
    photos = photo_files(Backgrounds().photo_dirs)
    canvas = background(rng, width, height, photos, 0.5)
    draw_printed(canvas, rng)
    noisy = canvas + rng.normal(0.0, rng.uniform(1.0, 6.0), canvas.shape)
    return np.clip(noisy, 0, 255).astype(np.uint8)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=200, help="images (default 200)")
    parser.add_argument("--seed", type=int, default=0, help="first image's seed (default 0)")
    parser.add_argument("--models", type=Path, help="models folder (default: the shipped one)")
    parser.add_argument("--json", action="store_true", help="one JSON line instead of a table")
    args = parser.parse_args()

    reader = Reader.load(args.models)
    corroborated = reader.settings.verify_corroborated
    readers = {
        "shipped reader": reader,
        "without the index verifier": reader.with_settings(
            dataclasses.replace(reader.settings, verify_below=0.0)
        ),
        "verifying certain cards only": reader.with_settings(
            dataclasses.replace(reader.settings, verify_uncertain=False)
        ),
        f"two sure corners spared the checks {'off' if corroborated else 'on'}": (
            reader.with_settings(
                dataclasses.replace(reader.settings, verify_corroborated=not corroborated)
            )
        ),
    }
    images = ((seed, table_with_print(seed)) for seed in range(args.seed, args.seed + args.count))
    rows = count_false_cards(images, readers)
    if args.json:
        print(json.dumps({"verifier": reader.verifier is not None, **rows}))
        return
    if reader.verifier is None:
        print("(these models have no index verifier: both rows read the same)")
    print(f"{args.count} tables with printed pages and no card (seeds {args.seed}..):")
    print_rows(rows, "images")


if __name__ == "__main__":
    main()

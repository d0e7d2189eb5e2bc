"""Casino tables with no card face up: how many cards does the reader see that are not there?

    python benchmarks/eval_casino_tables.py [--count N] [--seed S] [--models DIR] [--json]

Each image is a casino table of ``datasets/casino-holdout.yaml`` (blackjack, baccarat, poker or
Niu Niu: printed felt with words, numbers, suit symbols, betting places and pictures of cards;
chips single and stacked, with values and suit symbols on their inlays; card backs, a shoe, a
discard tray, a chip rack, the dealer's hands; half of them under a dealer-side camera 30 to 70
degrees from the table's normal) drawn with no card face up (``casino.card_free_probability``
1). Every certain card read is a false one, and every uncertain one flags a table as read with
low confidence for nothing. The images are read by the shipped reader and, as the baselines of
the same run, with the card-face check switched the other way (``card_evidence``) and without
the index verifier (``verify_below`` 0), each timed. Scene ``i`` is drawn from the config's
seed and ``S + i``: two runs print the same counts.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from card_free import count_false_cards, print_rows  # noqa: E402

from training.round_report import card_free_config as round_card_free_config  # noqa: E402
from training.synth.generate import scene_at  # noqa: E402
from vision.reader import Reader  # noqa: E402

CONFIG = ROOT / "datasets" / "casino-holdout.yaml"


def card_free_config(path: Path = CONFIG) -> object:
    """The casino config with every table card-free and drawn as a casino table."""
    return round_card_free_config(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=200, help="tables (default 200)")
    parser.add_argument("--seed", type=int, default=0, help="first table's number (default 0)")
    parser.add_argument("--models", type=Path, help="models folder (default: the shipped one)")
    parser.add_argument("--json", action="store_true", help="one JSON line instead of a table")
    args = parser.parse_args()

    config = card_free_config()
    reader = Reader.load(args.models)
    flipped = not reader.settings.card_evidence
    corroborated = reader.settings.verify_corroborated
    readers = {
        "shipped reader": reader,
        f"card-face check {'on' if flipped else 'off'}": reader.with_settings(
            dataclasses.replace(reader.settings, card_evidence=flipped)
        ),
        "without the index verifier": reader.with_settings(
            dataclasses.replace(reader.settings, verify_below=0.0)
        ),
        f"two sure corners spared the checks {'off' if corroborated else 'on'}": (
            reader.with_settings(
                dataclasses.replace(reader.settings, verify_corroborated=not corroborated)
            )
        ),
    }
    games = Counter[str]()

    def tables() -> Iterator[tuple[int, NDArray[np.uint8]]]:
        for number in range(args.seed, args.seed + args.count):
            scene = scene_at(config, number)  # type: ignore[arg-type]
            if scene.labels:
                raise RuntimeError(f"card-free table {number} has labelled indices")
            games[scene.game] += 1
            yield number, scene.image

    rows = count_false_cards(tables(), readers)
    if args.json:
        print(json.dumps({"games": dict(games), **rows}))
        return
    print(
        f"{args.count} card-free casino tables (numbers {args.seed}..; "
        + ", ".join(f"{game} {count}" for game, count in sorted(games.items()))
        + "):"
    )
    print_rows(rows, "tables")


if __name__ == "__main__":
    main()

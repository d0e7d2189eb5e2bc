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
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from training.synth.config import Layouts, load_config  # noqa: E402
from training.synth.generate import scene_at  # noqa: E402
from vision.reader import Reader  # noqa: E402

CONFIG = ROOT / "datasets" / "casino-holdout.yaml"


def card_free_config(path: Path = CONFIG) -> object:
    """The casino config with every table card-free and drawn as a casino table."""
    config = load_config(path)
    only_casino = Layouts(**{field.name: 0.0 for field in dataclasses.fields(Layouts)})
    only_casino = dataclasses.replace(only_casino, casino=1.0)
    casino = dataclasses.replace(config.casino, card_free_probability=1.0)
    return dataclasses.replace(config, layouts=only_casino, casino=casino)


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
    readers = {
        "shipped reader": reader,
        f"card-face check {'on' if flipped else 'off'}": reader.with_settings(
            dataclasses.replace(reader.settings, card_evidence=flipped)
        ),
        "without the index verifier": reader.with_settings(
            dataclasses.replace(reader.settings, verify_below=0.0)
        ),
    }
    found = {name: Counter[str]() for name in readers}
    images_with = dict.fromkeys(readers, 0)
    uncertain = dict.fromkeys(readers, 0)
    flagged = dict.fromkeys(readers, 0)
    times: dict[str, list[float]] = {name: [] for name in readers}
    games = Counter[str]()
    names = list(readers)
    for number in range(args.seed, args.seed + args.count):
        scene = scene_at(config, number)  # type: ignore[arg-type]
        if scene.labels:
            raise RuntimeError(f"card-free table {number} has labelled indices")
        games[scene.game] += 1
        turn = number % len(names)  # each reader goes first as often
        for name in names[turn:] + names[:turn]:
            started = time.perf_counter()
            reading = readers[name].read(scene.image)
            times[name].append((time.perf_counter() - started) * 1000)
            certain = reading.certain
            found[name].update(card.code for card in certain)
            images_with[name] += int(bool(certain))
            unsure = sum(card.uncertain for card in reading.cards)
            uncertain[name] += unsure
            flagged[name] += int(unsure > 0)
    rows = {
        name: {
            "images": args.count,
            "false_cards": sum(found[name].values()),
            "images_with_a_false_card": images_with[name],
            "uncertain_cards": uncertain[name],
            "images_flagged_uncertain": flagged[name],
            "median_ms": round(statistics.median(times[name]), 1),
            "most_common": found[name].most_common(6),
        }
        for name in readers
    }
    if args.json:
        print(json.dumps({"games": dict(games), **rows}))
        return
    print(
        f"{args.count} card-free casino tables (numbers {args.seed}..; "
        + ", ".join(f"{game} {count}" for game, count in sorted(games.items()))
        + "):"
    )
    for name, row in rows.items():
        common = ", ".join(f"{code} {count}" for code, count in row["most_common"]) or "none"
        print(
            f"  {name}: {row['false_cards']} false certain cards on "
            f"{row['images_with_a_false_card']} tables, {row['uncertain_cards']} uncertain "
            f"ones on {row['images_flagged_uncertain']}; median read {row['median_ms']} ms; "
            f"most common: {common}"
        )


if __name__ == "__main__":
    main()

"""How often one card's corners become two cards, with and without ``other_corner``.

Every photo of each set is read four times: with the reader's ``other_corner`` off; on (the
other corner's reading named by the card); on at any direction (``other_corner_slant`` 0);
on with the corner's reading multiplied into the card's (``other_corner_votes``). The figures
of each are printed side by side: card F1 and wrong certain cards (certain readings only),
uncertain cards, uncertain cards naming a card the photo does not hold ("strangers": another
corner read otherwise, a chip, a card back), and the photos whose cards, certain and
uncertain, are as many as the labelled ones.

    python benchmarks/eval_other_corner.py REALDATA [--sets boxes tables ...] [--scenes DIR]
        [--models DIR] [--limit N]

``REALDATA`` holds the real folders (``boxes/manifest.jsonl``...): their ``valid`` rows are
read, or every row of a folder without splits. ``--scenes`` adds a folder written by
``handreader synth`` (its ``manifest/manifest.jsonl``).
"""

from __future__ import annotations

import argparse
import dataclasses
from collections import Counter
from pathlib import Path

from training.round_report import manifest_sets
from vision.evaluate import EvalTotals, ManifestEntry, scenes_manifest
from vision.imageio import load_image
from vision.reader import Reader


@dataclasses.dataclass
class Counts:
    """One setting's figures on one set."""

    totals: EvalTotals = dataclasses.field(default_factory=EvalTotals)
    strangers: int = 0
    count_exact: int = 0

    def row(self) -> str:
        t = self.totals
        return (
            f"F1 {t.f1:.4f}  wrong {t.wrong:3d}  uncertain {t.uncertain:4d}  "
            f"strangers {self.strangers:4d}  count exact {self.count_exact / max(1, t.photos):.1%}"
        )


def measure(reader: Reader, entries: list[ManifestEntry]) -> dict[str, Counts]:
    """Each variant's figures on ``entries`` (the module's docstring names them)."""
    variants = {
        "off": {"other_corner": False},
        "on": {"other_corner": True},
        "anywhere": {"other_corner": True, "other_corner_slant": 0.0},
        "votes": {"other_corner": True, "other_corner_votes": True},
    }
    readers = {
        name: reader.with_settings(dataclasses.replace(reader.settings, **change))
        for name, change in variants.items()
    }
    counts = {name: Counts() for name in readers}
    for entry in entries:
        image = load_image(entry.image)
        held = Counter(entry.cards)
        for name, one in readers.items():
            reading = one.read(image)
            counts[name].totals.add_reading(entry, reading)
            counts[name].strangers += sum(
                card.uncertain and card.code not in held for card in reading.cards
            )
            counts[name].count_exact += int(len(reading.cards) == len(entry.cards))
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("realdata", type=Path, help="the real folders' parent")
    parser.add_argument(
        "--sets", nargs="*", default=["boxes", "tables", "singles", "scans", "pinochle"]
    )
    parser.add_argument("--scenes", type=Path, help="a synth folder to read too")
    parser.add_argument("--models", type=Path, help="models folder (default: the shipped one)")
    parser.add_argument("--limit", type=int, default=0, help="photos per set (0: all)")
    args = parser.parse_args()

    reader = Reader.load(args.models)
    synthetic = {}
    if args.scenes is not None:
        manifest = scenes_manifest(args.scenes, args.scenes / "manifest" / "manifest.jsonl")
        synthetic["scenes"] = manifest
    every = manifest_sets(args.realdata, synthetic)  # valid splits, as a round reads them
    sets = {name: every[name] for name in [*args.sets, *synthetic] if name in every}
    for name, entries in sets.items():
        if args.limit:
            entries = entries[: args.limit]
        counts = measure(reader, entries)
        print(f"{name} ({len(entries)} photos)")
        for variant, figures in counts.items():
            print(f"  other_corner {variant:8s}  {figures.row()}")


if __name__ == "__main__":
    main()

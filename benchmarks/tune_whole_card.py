"""Choose the whole-card classifier's gate (``ReaderSettings.whole_card_above``) on one-card photos.

    python benchmarks/tune_whole_card.py --tune ../shared/realdata/crops/manifest.jsonl \\
        [--check ../shared/realdata/singles/manifest.jsonl ...] [--models DIR]

``--tune`` photos are the *tuning fold* of a manifest's ``split: train`` rows
(:func:`vision.train.card_classifier.in_tuning_fold`: one photo in seven, by a hash of its name),
which the whole-card classifier never trained on. ``--check`` manifests are read whole (their
``split: valid`` rows when they have a split): they are reported, not tuned on.

Each photo is read once by the index reader alone (``whole_card=False``) and once by the
whole-card classifier; each gate of the grid is then applied as ``Reader._with_whole_card``
does (only to photos with no certain card from the indices). For each gate and set the table
gives top-1 (the surest card, certain or not, is the photo's card), card F1 of the certain
cards, and how many photos the whole-card reading decided. The chosen gate is the tuning
fold's best top-1 (ties to the higher gate, the more cautious); "off" is the index reader alone.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rules.cards import CARD_CLASSES
from vision.evaluate import EvalTotals, ManifestEntry, load_manifest
from vision.imageio import ImageError, load_reduced
from vision.reader import Reader
from vision.train.card_classifier import in_tuning_fold

GATES = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95)


def _entries(manifest: Path, tuning: bool) -> list[ManifestEntry]:
    if tuning:
        return [e for e in load_manifest(manifest, "train") if in_tuning_fold(str(e.image))]
    entries = load_manifest(manifest)
    valid = [e for e in entries if e.split == "valid"]
    return valid or entries


def _observe(
    reader: Reader, entries: list[ManifestEntry]
) -> list[tuple[tuple[str, ...], list[tuple[str, float, bool]], np.ndarray]]:
    """Per photo: its labels, the index reader's cards (code, confidence, uncertain), and the
    whole-card classifier's card probabilities (54,)."""
    assert reader.whole_card is not None
    observed = []
    for entry in entries:
        try:
            image = load_reduced(entry.image).image
        except ImageError as error:
            print(f"skipped: {error}", file=sys.stderr)
            continue
        reading = reader.read(image)
        cards = [(c.code, c.confidence, c.uncertain) for c in reading.cards]
        observed.append((entry.cards, cards, reader.whole_card.probabilities(image)[:-1]))
    return observed


def _score(
    observed: list[tuple[tuple[str, ...], list[tuple[str, float, bool]], np.ndarray]],
    gate: float | None,
    uncertain_below: float,
) -> tuple[float, float, int]:
    totals = EvalTotals()
    decided = 0
    for labels, cards, probabilities in observed:
        if gate is not None and not any(not unsure for _, _, unsure in cards):
            best = int(probabilities.argmax())
            if probabilities[best] >= gate:
                cards = [(CARD_CLASSES[best], float(probabilities[best]), False)]
                cards = [(c, p, p < uncertain_below) for c, p, _ in cards]
                decided += 1
        certain = [code for code, _, unsure in cards if not unsure]
        surest = max(cards, key=lambda card: card[1], default=None)
        totals.add(
            labels, certain, sum(unsure for *_, unsure in cards), surest[0] if surest else None
        )
    summary = totals.summary()
    return float(summary["top1"] or 0.0), float(summary["f1"]), decided


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tune", type=Path, required=True, help="manifest; its tuning fold")
    parser.add_argument("--check", type=Path, action="append", default=[], help="manifest")
    parser.add_argument("--models", type=Path, default=None)
    args = parser.parse_args(argv)
    reader = Reader.load(args.models)
    if reader.whole_card is None:
        parser.error("these models have no whole-card classifier (manifest: card_classifier)")
    reader = reader.with_settings(dataclasses.replace(reader.settings, whole_card=False))
    uncertain_below = reader.settings.uncertain_below
    sets = {"tuning fold": _observe(reader, _entries(args.tune, tuning=True))}
    for manifest in args.check:
        sets[manifest.parent.name] = _observe(reader, _entries(manifest, tuning=False))
    header = f"{'gate':>6}" + "".join(f" | {name[:22]:>22} top1  F1   n" for name in sets)
    print(header)
    best_gate, best_top1 = None, -1.0
    for gate in (None, *GATES):
        row = f"{'off' if gate is None else gate:>6}"
        for name, observed in sets.items():
            top1, f1, decided = _score(observed, gate, uncertain_below)
            row += f" | {'':>16}{top1:6.3f} {f1:5.3f} {decided:3d}"
            if name == "tuning fold" and gate is not None and top1 >= best_top1:
                best_gate, best_top1 = gate, top1
        print(row)
    print("photos: " + ", ".join(f"{name} {len(observed)}" for name, observed in sets.items()))
    print(f"best gate on the tuning fold: {best_gate} (top-1 {best_top1:.3f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Choose the whole-card classifier's gate (``ReaderSettings.whole_card_above``) on one-card photos.

    python benchmarks/tune_whole_card.py --tune REALDATA/crops/manifest.jsonl \\
        [--check REALDATA/singles/manifest.jsonl ...] [--models DIR]

``--tune`` photos are the *tuning fold* of a manifest's ``split: train`` rows
(:func:`training.card_classifier.in_tuning_fold`: one photo in seven, by a hash of its name),
which the whole-card classifier never trained on. ``--check`` manifests are read whole (their
``split: valid`` rows when they have a split): they are reported, not tuned on.

Each photo is read once by the index reader alone (``whole_card=False``) and once by the
whole-card classifier; each pair of the grid (``whole_card_above``, ``whole_card_sure``) is
then applied by the reader's own rule (``vision.reader.apply_whole_card``). For each pair and
set the table gives top-1 (the surest card, certain or not, is the photo's card), card F1 of
the certain cards, and how many photos the whole-card reading changed. The chosen pair is the
tuning fold's best by top-1, then F1, ties to the higher thresholds (the more cautious); "off"
is the index reader alone.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from training.card_classifier import in_tuning_fold
from vision.detections import CardReading
from vision.evaluate import EvalTotals, ManifestEntry, load_manifest
from vision.imageio import ImageError, load_reduced
from vision.reader import Reader, ReaderSettings, apply_whole_card

GATES = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
SURE = (0.8, 0.9, 0.95, 1.01)
"""``whole_card_sure`` values; 1.01 never applies."""


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


Card = tuple[str, float, bool]


def _apply(cards: list[Card], probabilities: np.ndarray, above: float, sure: float) -> list[Card]:
    """The reader's rule (:func:`vision.reader.apply_whole_card`) on (code, confidence,
    uncertain) readings, with these thresholds."""
    settings = ReaderSettings(whole_card_above=above, whole_card_sure=sure)
    readings = [CardReading(code, p, (0.0, 0.0, 1.0, 1.0), uncertain=u) for code, p, u in cards]
    after = apply_whole_card(readings, probabilities, (1, 1), settings)
    return [(card.code, card.confidence, card.uncertain) for card in after]


def _score(
    observed: list[tuple[tuple[str, ...], list[Card], np.ndarray]],
    thresholds: tuple[float, float] | None,
) -> tuple[float, float, int]:
    totals = EvalTotals()
    changed = 0
    for labels, cards, probabilities in observed:
        if thresholds is not None:
            after = _apply(cards, probabilities, *thresholds)
            changed += after != cards
            cards = after
        certain = [code for code, _, unsure in cards if not unsure]
        surest = max(cards, key=lambda card: card[1], default=None)
        totals.add(
            labels, certain, sum(unsure for *_, unsure in cards), surest[0] if surest else None
        )
    summary = totals.summary()
    return float(summary["top1"] or 0.0), float(summary["f1"]), changed


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
    sets = {"tuning fold": _observe(reader, _entries(args.tune, tuning=True))}
    for manifest in args.check:
        sets[manifest.parent.name] = _observe(reader, _entries(manifest, tuning=False))
    names = "".join(f" | {name[:14]:>14} top1    F1   n" for name in sets)
    print(f"{'above':>5} {'sure':>4}{names}")
    best: tuple[float, float, float, float] | None = None
    grid = [None, *((above, sure) for above in GATES for sure in SURE)]
    for thresholds in grid:
        row = "  off      " if thresholds is None else "{:5.2f} {:4.2f}".format(*thresholds)
        for name, observed in sets.items():
            top1, f1, changed = _score(observed, thresholds)
            row += f" | {top1:19.3f} {f1:5.3f} {changed:3d}"
            if name == "tuning fold" and thresholds is not None:
                key = (top1, f1, *thresholds)
                best = key if best is None or key >= best else best
        print(row)
    print("photos: " + ", ".join(f"{name} {len(observed)}" for name, observed in sets.items()))
    if best is not None:
        print(
            f"best on the tuning fold: whole_card_above {best[2]}, whole_card_sure {best[3]} "
            f"(top-1 {best[0]:.3f}, F1 {best[1]:.3f}); 'sure' 1.01 never applies"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

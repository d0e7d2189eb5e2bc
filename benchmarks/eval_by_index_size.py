"""How well cards are read against how big their corner index is, on labelled synthetic scenes.

    python benchmarks/eval_by_index_size.py --scenes SCENES [--models DIR] [--bands 16,24,32,48]

``SCENES`` is a folder written by ``handreader synth`` (``images/`` and ``meta/``); for a fair
figure, scenes of the held-out decks (``--config datasets/holdout.yaml``). Every scene is read
with the default reader, as ``handreader eval`` reads it, and each card is put in a band by the
size of its index in the image's pixels (its index's longer side):

- a labelled card by its largest labelled index; it counts as read when a certain reading of its
  code is left for it (cards of one code are paired largest first);
- a certain reading by its ``index_px`` (the largest index the reader grouped into it); it
  counts as right when a labelled card of its code is left for it. A reading left over that
  names a card showing only through unlabelled indices (``optional`` in the scenes' manifest)
  is dropped (the smallest such reading), as ``handreader eval`` drops it.

Per band the table gives the labelled cards and their recall, the certain readings and their
precision, and F1. It answers what a user asks: how close must the camera be? The last line is
the whole set (the figure ``handreader eval`` prints on the same scenes' manifest). A second
table gives the recall per deck design (a reading belongs to no deck, so no precision there).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from vision.evaluate import drop_optional, f1_score, optional_cards  # noqa: E402
from vision.imageio import load_reduced  # noqa: E402
from vision.reader import Reader  # noqa: E402


@dataclass
class Band:
    """Counts of one index-size band."""

    cards: int = 0
    read: int = 0
    predicted: int = 0
    right: int = 0

    @property
    def recall(self) -> float:
        return self.read / self.cards if self.cards else 0.0

    @property
    def precision(self) -> float:
        return self.right / self.predicted if self.predicted else 0.0

    @property
    def f1(self) -> float:
        return f1_score(self.precision, self.recall)


@dataclass
class SizeTable:
    """Bands of index sizes (``edges`` are the lower bounds of all bands but the first)."""

    edges: tuple[float, ...]
    bands: list[Band] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.bands = [Band() for _ in range(len(self.edges) + 1)]

    def band(self, side: float) -> Band:
        return self.bands[int(np.searchsorted(self.edges, side, side="right"))]

    def labels(self) -> list[str]:
        bounds = [0.0, *self.edges, float("inf")]
        return [
            f"{lower:.0f}-{upper:.0f} px" if upper != float("inf") else f">= {lower:.0f} px"
            for lower, upper in itertools.pairwise(bounds)
        ]

    def add(self, truth: list[tuple[str, float]], readings: list[tuple[str, float]]) -> None:
        """One scene: labelled (code, index side) and certain readings (code, index_px)."""
        left_truth = sorted(truth, key=lambda item: -item[1])
        left_readings = sorted(readings, key=lambda item: -item[1])
        for _, side in truth:
            self.band(side).cards += 1
        for _, side in readings:
            self.band(side).predicted += 1
        for code, side in list(left_truth):
            match = next((item for item in left_readings if item[0] == code), None)
            if match is not None:
                left_readings.remove(match)
                left_truth.remove((code, side))
                self.band(side).read += 1
                self.band(match[1]).right += 1

    def total(self) -> Band:
        whole = Band()
        for band in self.bands:
            whole.cards += band.cards
            whole.read += band.read
            whole.predicted += band.predicted
            whole.right += band.right
        return whole


def scene_truth(meta: dict[str, object]) -> list[tuple[str, float]]:
    """Each labelled card of a scene's metadata with the longer side of its largest index."""
    return [(code, side) for code, side, _ in scene_cards(meta)]


def scene_cards(meta: dict[str, object]) -> list[tuple[str, float, str]]:
    """Each labelled card of a scene's metadata: code, its largest index's side, its deck."""
    largest: dict[int, tuple[str, float, str]] = {}
    for item in meta["indices"]:  # type: ignore[attr-defined]
        x1, y1, x2, y2 = item["box_xyxy"]
        side = max(x2 - x1, y2 - y1)
        number = int(item["card_index"])
        if number not in largest or side > largest[number][1]:
            largest[number] = (str(item["card"]), float(side), str(item.get("deck", "?")))
    return list(largest.values())


def deck_recall(
    cards: list[tuple[str, float, str]], readings: list[str], totals: dict[str, Band]
) -> None:
    """Add one scene's labelled cards to ``totals`` per deck, read when a certain reading of
    the code is left for them (larger cards first)."""
    left = list(readings)
    for code, _, deck in sorted(cards, key=lambda card: -card[1]):
        band = totals.setdefault(deck, Band())
        band.cards += 1
        if code in left:
            left.remove(code)
            band.read += 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenes", type=Path, required=True, help="a folder of synthetic scenes")
    parser.add_argument("--models", type=Path, help="models folder (default: the shipped one)")
    parser.add_argument(
        "--bands", default="16,24,32,48", help="band edges in pixels (default 16,24,32,48)"
    )
    parser.add_argument("--limit", type=int, help="read at most this many scenes")
    args = parser.parse_args(argv)
    metas = sorted((args.scenes / "meta").glob("*.json"))[: args.limit]
    if not metas:
        parser.error(f"no scenes in {args.scenes} (expected meta/*.json and images/*.jpg)")
    edges = tuple(float(edge) for edge in args.bands.split(","))
    table = SizeTable(edges)
    reader = Reader.load(args.models)
    decks: dict[str, Band] = {}
    for meta_path in metas:
        meta = json.loads(meta_path.read_text())
        image = load_reduced(args.scenes / "images" / f"{meta_path.stem}.jpg").image
        reading = reader.read(image)
        truth = scene_truth(meta)
        # readings of cards that show only in part are neither right nor wrong (as in eval):
        # of each code's readings, the largest ones are kept as many times as eval keeps it
        certain = sorted(
            (card for card in reading.cards if not card.uncertain), key=lambda card: -card.index_px
        )
        kept, _ = drop_optional(
            [code for code, _ in truth], [card.code for card in certain], optional_cards(meta)
        )
        counted = []
        for card in certain:
            if card.code in kept:
                kept.remove(card.code)
                counted.append(card)
        table.add(truth, [(card.code, card.index_px) for card in counted])
        deck_recall(scene_cards(meta), [card.code for card in counted], decks)
    print(f"{len(metas)} scenes of {args.scenes}, models {args.models or 'shipped'}")
    print(f"{'index side':>12} {'cards':>6} {'recall':>7} {'read':>6} {'precision':>9} {'F1':>6}")
    for label, band in [*zip(table.labels(), table.bands, strict=True), ("all", table.total())]:
        print(
            f"{label:>12} {band.cards:>6} {band.recall:>7.3f} {band.predicted:>6} "
            f"{band.precision:>9.3f} {band.f1:>6.3f}"
        )
    print(f"{'deck':>28} {'cards':>6} {'recall':>7}")
    for deck, band in sorted(decks.items(), key=lambda item: item[1].recall):
        print(f"{deck:>28} {band.cards:>6} {band.recall:>7.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

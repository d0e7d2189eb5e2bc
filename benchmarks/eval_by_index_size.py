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

With ``--why``, a third table says why each labelled card left unread was missed (see
:func:`miss_kind`), with the median side of its largest index: where the detector's boxes
and the classifier's reading of each box part from the labels. The detector and the classifier
are then run a second time per scene, outside :meth:`Reader.read`, so it takes twice as long.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from vision.evaluate import drop_optional, f1_score, optional_cards  # noqa: E402
from vision.imageio import load_reduced  # noqa: E402
from vision.index_detector import box_iou  # noqa: E402
from vision.reader import CLASSIFIER_CLASSES, Reader  # noqa: E402

MISS_KINDS = (
    "not detected",
    "read as no index",
    "right, uncertain",
    "right at an index, lost",
    "suit misread",
    "rank misread",
    "misread",
)
"""Why a labelled card was missed, in the order :func:`miss_kind` tries them."""


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
    return [(code, side, deck) for code, side, deck, _ in scene_indices(meta)]


def read_flags(cards: list[tuple[str, float]], readings: list[str]) -> list[bool]:
    """For each labelled (code, side), in the given order, whether a certain reading of its code
    is left for it; larger cards take the readings first."""
    left = list(readings)
    flags = [False] * len(cards)
    for number in sorted(range(len(cards)), key=lambda number: -cards[number][1]):
        if cards[number][0] in left:
            left.remove(cards[number][0])
            flags[number] = True
    return flags


def deck_recall(
    cards: list[tuple[str, float, str]], readings: list[str], totals: dict[str, Band]
) -> None:
    """Add one scene's labelled cards to ``totals`` per deck, read when a certain reading of
    the code is left for them (larger cards first, :func:`read_flags`)."""
    flags = read_flags([(code, side) for code, side, _ in cards], readings)
    for (_, _, deck), read in zip(cards, flags, strict=True):
        band = totals.setdefault(deck, Band())
        band.cards += 1
        band.read += read


def scene_indices(
    meta: dict[str, object],
) -> list[tuple[str, float, str, list[list[float]]]]:
    """Each labelled card of a scene's metadata: code, its largest index's side, its deck, and
    the boxes of all its labelled indices."""
    cards: dict[int, tuple[str, float, str, list[list[float]]]] = {}
    for item in meta["indices"]:  # type: ignore[attr-defined]
        x1, y1, x2, y2 = item["box_xyxy"]
        number = int(item["card_index"])
        code, side, deck, boxes = cards.get(
            number, (str(item["card"]), 0.0, str(item.get("deck", "?")), [])
        )
        side = max(side, float(max(x2 - x1, y2 - y1)))
        cards[number] = (code, side, deck, [*boxes, [x1, y1, x2, y2]])
    return list(cards.values())


def missed_cards(
    cards: list[tuple[str, float, str, list[list[float]]]], readings: list[str]
) -> list[tuple[str, float, str, list[list[float]]]]:
    """The labelled cards no certain reading is left for (:func:`read_flags`)."""
    flags = read_flags([(card[0], card[1]) for card in cards], readings)
    return [card for card, read in zip(cards, flags, strict=True) if not read]


def miss_kind(
    code: str,
    boxes: list[list[float]],
    xyxy: NDArray[np.float32],
    index_codes: list[str],
    uncertain: list[str],
) -> str:
    """Why a labelled card (``code``, its labelled index ``boxes``) has no certain reading.

    ``xyxy`` are the detector's boxes and ``index_codes`` the classifier's surest class at each
    (``"none"`` for no index); ``uncertain`` the codes of the image's uncertain readings. An
    index is seen when a detector box overlaps it by IoU 0.3 or more. Then, in this order: no
    index seen ("not detected"); the right code at a seen index, read in an uncertain card
    ("right, uncertain") or in none ("right at an index, lost": grouped with another card's
    corners); every seen index read as no index; else the first other code read, against the
    label: same rank ("suit misread"; a joker's letter counts as its suit), same suit ("rank
    misread"), or neither ("misread").
    """
    seen = []
    for box in boxes:
        if len(xyxy):
            overlaps = box_iou(np.asarray(box, np.float64), xyxy)
            best = int(overlaps.argmax())
            if overlaps[best] >= 0.3:
                seen.append(index_codes[best])
    if not seen:
        return "not detected"
    if code in seen:
        return "right, uncertain" if code in uncertain else "right at an index, lost"
    read = [other for other in seen if other != "none"]
    if not read:
        return "read as no index"
    if read[0][:-1] == code[:-1]:
        return "suit misread"
    if read[0][-1] == code[-1]:
        return "rank misread"
    return "misread"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenes", type=Path, required=True, help="a folder of synthetic scenes")
    parser.add_argument("--models", type=Path, help="models folder (default: the shipped one)")
    parser.add_argument(
        "--bands", default="16,24,32,48", help="band edges in pixels (default 16,24,32,48)"
    )
    parser.add_argument("--limit", type=int, help="read at most this many scenes")
    parser.add_argument(
        "--why", action="store_true", help="also say why each missed card was missed"
    )
    args = parser.parse_args(argv)
    metas = sorted((args.scenes / "meta").glob("*.json"))[: args.limit]
    if not metas:
        parser.error(f"no scenes in {args.scenes} (expected meta/*.json and images/*.jpg)")
    edges = tuple(float(edge) for edge in args.bands.split(","))
    table = SizeTable(edges)
    reader = Reader.load(args.models)
    decks: dict[str, Band] = {}
    why: dict[str, list[float]] = {kind: [] for kind in MISS_KINDS}
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
        if args.why:
            missed = missed_cards(scene_indices(meta), [card.code for card in counted])
            if missed:
                seen = reader.prepare(image)  # as read() sees it
                xyxy = reader.detect(seen).xyxy
                probabilities, _ = reader.classify(seen, xyxy)
                index_codes = [CLASSIFIER_CLASSES[int(i)] for i in probabilities.argmax(axis=1)]
                uncertain = [card.code for card in reading.cards if card.uncertain]
                for code, side, _, boxes in missed:
                    why[miss_kind(code, boxes, xyxy, index_codes, uncertain)].append(side)
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
    if args.why:
        print(f"{'why missed':>28} {'cards':>6} {'median index side':>18}")
        for kind, sides in why.items():
            median = f"{float(np.median(sides)):.1f} px" if sides else "-"
            print(f"{kind:>28} {len(sides):>6} {median:>18}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

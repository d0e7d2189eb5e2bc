"""Could a rule on twins tell one card read twice from two cards? Pairs of certain cards that
read twins, counted on labelled photos read whole.

A card's other corner, upside down or at a slant, is sometimes read for certain as its twin:
the same rank in the other suit of its colour (a club as a spade), or a 6 for a 9 of one suit.
For every photo of the manifests given, the reader reads the whole photo; a pair is a certain
card read at one index and a surer certain card that reads its twin, 2.2 to 5.5 index heights
away and across it (the smaller side of the offset at least a quarter of the larger: where a
card's other corner lies, ``ReaderSettings.other_corner_reach`` and ``other_corner_slant``).
The labels sort each pair: ``one card`` when the photo holds the surer card and not the other
(one card read twice), ``two cards`` when it holds both, ``other`` otherwise. Printed: the
counts, and how many pairs of each kind a rule joining those whose less sure reading lies
under each threshold would take; then the pairs the hand-level rule
(``handreader.tables.grouping.cards_read_twice``: a group of six, or a hand and a lone card cut
off beside it) takes as one card, making a hand of five with one uncertain card, sorted the
same way.

    python benchmarks/eval_twin_corners.py MANIFEST [MANIFEST ...] [--split valid] [--models DIR]

A manifest whose rows carry no ``split`` is read whole; ``--split all`` reads every row.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from handreader.tables.grouping import cards_read_twice, group_cards
from vision.imageio import load_image
from vision.reader import Reader

THRESHOLDS = (0.8, 0.85, 0.9, 0.95, 1.0)
RED = frozenset("HD")


def twins(first: str, second: str) -> bool:
    """Whether two card codes are twins: one rank in the two suits of one colour, or a 6 and a
    9 of one suit (jokers never)."""
    if first == second or {first, second} & {"JB", "JR"}:
        return False
    rank_a, suit_a, rank_b, suit_b = first[:-1], first[-1], second[:-1], second[-1]
    if rank_a == rank_b:
        return (suit_a in RED) == (suit_b in RED)
    return {rank_a, rank_b} == {"6", "9"} and suit_a == suit_b


def pairs(cards: Any, reach: tuple[float, float], slant: float) -> list[tuple[Any, Any]]:
    """(lone, surer) pairs of certain cards reading twins, placed as one card's corners."""
    certain = [card for card in cards if not card.uncertain]
    found = []
    for lone in certain:
        if lone.corners != 1:
            continue
        for other in certain:
            if other is lone or other.confidence < lone.confidence:
                continue
            if not twins(lone.code, other.code):
                continue
            dx = abs(other.center_xy[0] - lone.center_xy[0])
            dy = abs(other.center_xy[1] - lone.center_xy[1])
            distance = float(np.hypot(dx, dy)) / max(lone.index_px, other.index_px)
            if reach[0] <= distance <= reach[1] and min(dx, dy) >= slant * max(dx, dy):
                found.append((lone, other))
    return found


def kind(labels: Counter[str], lone: str, surer: str) -> str:
    """``one card``, ``two cards`` or ``other`` (see the module's text)."""
    if labels[lone] and labels[surer]:
        return "two cards"
    if labels[surer]:
        return "one card"
    return "other"


def hand_pairs(cards: Any) -> list[tuple[str, str]]:
    """(other, surer) readings of the pairs the hand-level rule makes one card, a pair for each
    group of the photo it changes."""
    groups = [group for group in group_cards(cards) if not group.set_aside]
    return [
        (card.other_corners[0], card.code)
        for group in cards_read_twice(groups, 5)
        for card in group.cards
        if card.other_corners and card not in cards
    ]


def measure(reader: Reader, manifests: list[Path], split: str) -> list[dict[str, Any]]:
    """Every pair of every photo: the set, the photo, both readings, the kind, and the rule
    (``pair``: placed as one card's corners; ``hand``: taken as one card by the hand-level
    rule)."""
    settings = reader.settings
    rows_out = []
    for manifest in manifests:
        rows = [json.loads(line) for line in manifest.read_text().splitlines() if line.strip()]
        if split != "all" and any(row.get("split") for row in rows):
            rows = [row for row in rows if row.get("split") == split]
        for row in rows:
            image = load_image(manifest.parent / str(row["image"]))
            labels = Counter(str(card) for card in row["cards"])
            reading = reader.read(image)
            found = pairs(reading.cards, settings.other_corner_reach, settings.other_corner_slant)
            for lone, surer in found:
                rows_out.append({
                    "set": manifest.parent.name, "photo": str(row["image"]),
                    "lone": lone.code, "lone_confidence": round(lone.confidence, 3),
                    "surer": surer.code, "surer_confidence": round(surer.confidence, 3),
                    "kind": kind(labels, lone.code, surer.code), "rule": "pair",
                })  # fmt: skip
            for other, code in hand_pairs(reading.cards):
                rows_out.append({
                    "set": manifest.parent.name, "photo": str(row["image"]), "lone": other,
                    "surer": code, "kind": kind(labels, other, code), "rule": "hand",
                })  # fmt: skip
    return rows_out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("manifests", type=Path, nargs="+")
    parser.add_argument("--split", default="valid", help="valid, train or all")
    parser.add_argument("--models", type=Path, help="models folder (default: the shipped one)")
    parser.add_argument("--json", action="store_true", help="print every pair as JSON")
    args = parser.parse_args()
    found = measure(Reader.load(args.models), args.manifests, args.split)
    if args.json:
        print(json.dumps(found))
        return
    placed = [pair for pair in found if pair["rule"] == "pair"]
    counts = Counter(pair["kind"] for pair in placed)
    print(f"pairs: {dict(counts)}")
    for threshold in THRESHOLDS:
        under = Counter(p["kind"] for p in placed if p["lone_confidence"] < threshold)
        print(
            f"joining those under {threshold}: {under['one card']} of one card, "
            f"{under['two cards']} of two cards, {under['other']} other"
        )
    hands = Counter(pair["kind"] for pair in found if pair["rule"] == "hand")
    print(
        f"pairs made one uncertain card of a hand: {hands['one card']} of one card, "
        f"{hands['two cards']} of two cards, {hands['other']} other"
    )


if __name__ == "__main__":
    main()

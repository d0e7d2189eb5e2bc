"""Deck assets loaded for scene rendering: card images (RGBA) and where each card prints its
corner index (the deck's box for the 52, each joker's own mark)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, cast

import cv2
import numpy as np
from numpy.typing import NDArray

from training.synth.decks import (
    CARD_ART_HINT,
    DECKS,
    JOKER_CODES,
    Deck,
    cache_dir,
    render_deck,
)
from training.synth.index_box import (
    MEASURE_VERSION,
    IndexBox,
    IndexPlace,
    corner_quads,
    measure_index_box,
    measure_joker_mark,
    paper_colour,
)

__all__ = [
    "JOKER_MARK_HEIGHT",
    "DeckAssets",
    "decks_for_split",
    "is_prepared",
    "load_assets",
    "prepare_assets",
    "read_assets",
]

JOKER_MARK_HEIGHT = 480
"""Jokers' corner marks are measured on renders at least this tall: some marks (orell's star in
a ring on the picture) merge with the picture at lower heights."""


@dataclass(frozen=True)
class DeckAssets:
    """One deck's renders (BGRA, one height), its measured corner-index box and its jokers'
    corner marks (None for a joker with no mark in its corner)."""

    deck: Deck
    cards: dict[str, NDArray[np.uint8]]
    index_box: IndexBox
    joker_marks: dict[str, IndexPlace | None] = field(default_factory=dict)

    def index_place(self, code: str) -> IndexPlace | None:
        """Where card ``code`` prints its corner index: the deck's box in the deck's corners
        for the 52, a joker's own mark for a joker (None when it has no corner mark: nothing
        to label)."""
        if code in JOKER_CODES:
            return self.joker_marks.get(code)
        return IndexPlace(self.index_box, self.deck.corners)

    def height_share(self, code: str) -> float:
        """The share of card ``code``'s index height that must reach ``min_index_px`` for it to
        be labelled: 1, except for a joker whose mark is taller than the deck's index (a word
        set down the edge), whose mark is then labelled from the card size at which the
        deck's indices are, not from a card a third that size."""
        place = self.index_place(code)
        if place is None or code not in JOKER_CODES:
            return 1.0
        index_height = self.index_box[3] - self.index_box[1]
        return min(1.0, index_height / (place.box[3] - place.box[1]))

    def index_quads(self, code: str) -> Sequence[NDArray[np.float32]]:
        """Card ``code``'s index quads in its render's pixels, in the order of
        :func:`training.synth.index_box.corner_quads`; empty for a joker with no corner mark."""
        place = self.index_place(code)
        if place is None:
            return ()
        height, width = self.cards[code].shape[:2]
        return corner_quads(place.box, width, height, place.corners)


def decks_for_split(split: str, height: int | None = None) -> tuple[Deck, ...]:
    """Usable decks of a split: ``train``, ``holdout``, ``extra`` (decks that lend only the
    cards whose indices read as ours), ``train+extra``, ``all`` (all but the next) or
    ``letters-french``, ``letters-german``, ``letters-russian`` (whole decks that print those
    letters, held out: :data:`training.synth.decks.DECKS`).

    A deck is usable when its SVG is installed, or, given the render ``height``, when its
    renders and measurements at that height are in the cache (:func:`is_prepared`): a machine
    without the Debian packages (a GPU machine that cannot reach them) draws scenes from a
    copied cache alone."""
    wanted = set(split.split("+"))
    chosen = tuple(
        d
        for d in DECKS
        if ((split == "all" and not d.split.startswith("letters-")) or d.split in wanted)
        and (d.available or (height is not None and is_prepared(d, height)))
    )
    if not chosen:
        cached = f" and no renders at {height} px in {cache_dir() / 'cards'}" if height else ""
        raise RuntimeError(f"no installed deck for split {split!r}{cached}: {CARD_ART_HINT}")
    return chosen


def _box_file(deck: Deck, height: int) -> Path:
    return cache_dir() / "cards" / f"h{height}" / deck.name / "index_box.json"


def _read_render(path: Path) -> NDArray[np.uint8]:
    """A card render as BGRA (fully opaque renders are stored as BGR); raises when unreadable."""
    image = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
    if image is None:
        raise RuntimeError(f"cannot read the card render {str(path)!r}")
    if image.shape[2] == 3:
        image = cv2.cvtColor(image, cv2.COLOR_BGR2BGRA)
    return cast(NDArray[np.uint8], image)


def _read_measurements(box_file: Path, deck: Deck) -> dict[str, Any] | None:
    """The cached measurements, or None when absent, unreadable, of another
    :data:`training.synth.index_box.MEASURE_VERSION` or for other jokers (then stale)."""
    try:
        cached = json.loads(box_file.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(cached, dict) or cached.get("version") != MEASURE_VERSION:
        return None
    jokers = cached.get("jokers")
    expected = {code for code, _ in deck.jokers}
    if not isinstance(jokers, dict) or set(jokers) != expected:
        return None
    return cached


def _measure(deck: Deck, height: int, paths: dict[str, Path]) -> dict[str, Any]:
    """Measure the deck's index box (at ``height``) and its jokers' marks (at least
    :data:`JOKER_MARK_HEIGHT` tall)."""
    cards = {code: _read_render(path) for code, path in paths.items()}
    box = measure_index_box(cards)
    jokers: dict[str, object] = {}
    if deck.jokers:
        mark_height = max(height, JOKER_MARK_HEIGHT)
        if mark_height != height:
            codes = ["2S", *(code for code, _ in deck.jokers)]
            cards = {c: _read_render(p) for c, p in render_deck(deck, mark_height, codes).items()}
        paper = paper_colour(cards["2S"])
        for code, _ in deck.jokers:
            mark = measure_joker_mark(cards[code], paper)
            place = None if mark is None else {"box": list(mark.box), "corners": mark.corners}
            jokers[code] = place
    return {"version": MEASURE_VERSION, "index_box": list(box), "jokers": jokers}


def is_prepared(deck: Deck, height: int) -> bool:
    """Whether the deck's renders at ``height`` and their current measurements are cached."""
    folder = _box_file(deck, height).parent
    if not all((folder / f"{code}.png").is_file() for code in deck.codes):
        return False
    return _read_measurements(_box_file(deck, height), deck) is not None


def prepare_assets(deck: Deck, height: int) -> Path:
    """Render the deck and measure its index box and jokers' marks (all cached; measurements
    of an older version are redone); returns the measurement file."""
    paths = render_deck(deck, height)
    box_file = _box_file(deck, height)
    if _read_measurements(box_file, deck) is None:
        measured = _measure(deck, height, paths)
        partial = box_file.with_name(f"{box_file.name}.{os.getpid()}.part")
        partial.write_text(json.dumps(measured))
        partial.replace(box_file)  # atomic: a reader never sees half a file
    return box_file


def _box(values: Sequence[float]) -> IndexBox:
    return (float(values[0]), float(values[1]), float(values[2]), float(values[3]))


@lru_cache(maxsize=64)
def load_assets(deck_name: str, height: int) -> DeckAssets:
    """Load a prepared deck (renders, index box, joker marks) once per process."""
    return read_assets(deck_name, height)


def read_assets(deck_name: str, height: int) -> DeckAssets:
    """Read a deck (renders, index box, joker marks), preparing it first if needed; unlike
    :func:`load_assets` nothing is kept once the caller lets go of it."""
    deck = next(d for d in DECKS if d.name == deck_name)
    box_file = prepare_assets(deck, height)
    measured = _read_measurements(box_file, deck)
    if measured is None:
        raise RuntimeError(f"unreadable index measurements {str(box_file)!r}")
    cards = {code: _read_render(path) for code, path in render_deck(deck, height).items()}
    marks: dict[str, IndexPlace | None] = {}
    for code, mark in measured["jokers"].items():
        marks[code] = None if mark is None else IndexPlace(_box(mark["box"]), int(mark["corners"]))
    return DeckAssets(deck, cards, _box(measured["index_box"]), marks)

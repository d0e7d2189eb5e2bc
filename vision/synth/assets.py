"""Deck assets loaded for scene rendering: card images (RGBA) and the deck's index box."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import cast

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.synth.decks import DECKS, Deck, cache_dir, render_deck
from vision.synth.index_box import IndexBox, measure_index_box

__all__ = ["DeckAssets", "decks_for_split", "load_assets", "prepare_assets"]


@dataclass(frozen=True)
class DeckAssets:
    """One deck's renders (BGRA, one height) and its measured corner-index box."""

    deck: Deck
    cards: dict[str, NDArray[np.uint8]]
    index_box: IndexBox


def decks_for_split(split: str) -> tuple[Deck, ...]:
    """Installed decks of a split: ``train``, ``holdout`` or ``all``."""
    chosen = tuple(d for d in DECKS if d.available and (split == "all" or d.split == split))
    if not chosen:
        raise RuntimeError(
            f"no installed deck for split {split!r}: run scripts/install-card-art "
            "(gnome-cards-data, kdegames-card-data-kf5, librsvg2-bin)"
        )
    return chosen


def _box_file(deck: Deck, height: int) -> Path:
    return cache_dir() / "cards" / f"h{height}" / deck.name / "index_box.json"


def _read_render(path: Path) -> NDArray[np.uint8]:
    """A card render as stored (BGRA, or BGR when fully opaque); raises when unreadable."""
    image = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
    if image is None:
        raise RuntimeError(f"cannot read the card render {str(path)!r}")
    return cast(NDArray[np.uint8], image)


def prepare_assets(deck: Deck, height: int) -> Path:
    """Render the deck and measure its index box (both cached); returns the box file."""
    paths = render_deck(deck, height)
    box_file = _box_file(deck, height)
    if not box_file.is_file():
        cards = {code: _read_render(path) for code, path in paths.items()}
        box = measure_index_box(cards)
        box_file.write_text(json.dumps({"index_box": list(box)}))
    return box_file


@lru_cache(maxsize=64)
def load_assets(deck_name: str, height: int) -> DeckAssets:
    """Load a prepared deck (renders and index box) once per process."""
    deck = next(d for d in DECKS if d.name == deck_name)
    box_file = prepare_assets(deck, height)
    paths = render_deck(deck, height)
    cards: dict[str, NDArray[np.uint8]] = {}
    for code, path in paths.items():
        image = _read_render(path)
        if image.shape[2] == 3:
            image = cast(NDArray[np.uint8], cv2.cvtColor(image, cv2.COLOR_BGR2BGRA))
        cards[code] = image
    box = tuple(json.loads(box_file.read_text())["index_box"])
    return DeckAssets(deck, cards, (box[0], box[1], box[2], box[3]))

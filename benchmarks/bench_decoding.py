"""Deck-aware decoding's cost: per photo, the reader's time without a deck in play beside its
time with one, and the decoding's own time within it; then the decoder alone on constructed
photos whose cards conflict (the assignment's path, which real photos seldom take).

    python benchmarks/bench_decoding.py [PHOTO ...] [--game niuniu] [--decks N] [--runs 20]

PHOTO defaults to ``examples/hand.jpg``, read as a 640x480 frame (the live overlay's size,
``Reader.for_frames``) and as a photo (decoded as the commands decode it); a folder stands for
its images. Both readers are timed in turn within each run, so both see the same load;
medians (the machine may be shared).
The decoding's own time is that of ``vision.reader``'s calls of ``restricted`` and
``decode_cards``, timed by wrapping them. Target: negligible beside the 25 ms frame budget.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

import vision.reader
from rules.cards import CARD_CLASSES
from rules.decks import Deck, deck_for_game
from vision.decoding import decode_cards
from vision.imageio import ImageError, load_reduced
from vision.reader import Reader

ROOT = Path(__file__).resolve().parent.parent

_spent: list[float] = [0.0]


def _timed(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function``, adding its time (ms) to ``_spent``."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            _spent[0] += (time.perf_counter() - started) * 1000

    return wrapper


def time_reads(
    image: NDArray[np.uint8], plain: Reader, decked: Reader, runs: int
) -> tuple[float, float, float]:
    """Medians (ms) over ``runs`` of a read without the deck, one with it, and the decoding's
    share of the latter, the two reads taken in turn."""
    without, with_deck, decoding = [], [], []
    for _ in range(runs):
        started = time.perf_counter()
        plain.read(image)
        without.append((time.perf_counter() - started) * 1000)
        _spent[0] = 0.0
        started = time.perf_counter()
        decked.read(image)
        with_deck.append((time.perf_counter() - started) * 1000)
        decoding.append(_spent[0])
    return statistics.median(without), statistics.median(with_deck), statistics.median(decoding)


def conflicting_cards(
    count: int, rng: np.random.Generator, pairs: int | None = None
) -> NDArray[np.float64]:
    """``count`` cards' probabilities (count, 54), the first ``pairs`` pairs (default: all)
    each claiming one card at 0.6-0.99 (a picture read as the card beside it), the others a
    card each of their own; the rest spread by a Dirichlet draw."""
    pairs = count // 2 if pairs is None else pairs
    rows = rng.dirichlet(np.full(len(CARD_CLASSES), 0.1), count) * 0.05
    for row in range(count):
        claimed = (row // 2 if row < 2 * pairs else row - pairs) % 52
        rows[row, claimed] += rng.uniform(0.6, 0.99)
    rows /= rows.sum(axis=1, keepdims=True)
    return np.asarray(rows, np.float64)


def time_decoder(
    count: int, deck: Deck, runs: int, seed: int = 0, pairs: int | None = None
) -> float:
    """Median ms of :func:`decode_cards` on ``count`` cards, ``pairs`` pairs of them
    conflicting (default: all)."""
    rng = np.random.default_rng(seed)
    cards = [conflicting_cards(count, rng, pairs) for _ in range(runs)]
    times = []
    for rows in cards:
        started = time.perf_counter()
        decode_cards(rows, deck)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def _photos(given: list[Path]) -> list[Path]:
    found: list[Path] = []
    for path in given:
        if path.is_dir():
            found += sorted(
                item
                for item in path.iterdir()
                if item.suffix.lower() in (".jpg", ".jpeg", ".png", ".webp")
            )
        else:
            found.append(path)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("photos", nargs="*", type=Path, default=[ROOT / "examples" / "hand.jpg"])
    parser.add_argument("--game", default="niuniu", help="the deck in play (default: niuniu)")
    parser.add_argument("--decks", type=int, help="packs in play (default: the game's)")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--models", type=Path, help="models folder (default: the shipped one)")
    args = parser.parse_args()

    deck = deck_for_game(args.game, args.decks)
    vision.reader.decode_cards = _timed(vision.reader.decode_cards)  # type: ignore[attr-defined]
    vision.reader.restricted = _timed(vision.reader.restricted)  # type: ignore[attr-defined]
    reader = Reader.load(args.models)
    print(f"deck in play: {deck}; medians of {args.runs} runs, ms")
    print(f"{'photo':<34} {'as':<6} {'cards':>5} {'no deck':>8} {'deck':>8} {'decoding':>9}")
    seen: dict[str, list[tuple[float, float]]] = {"frame": [], "photo": []}
    for photo in _photos(args.photos):
        try:
            image = load_reduced(photo).image  # as the commands decode a photo
        except ImageError:
            print(f"{photo.name:<34} unreadable")
            continue
        frame = np.asarray(cv2.resize(image, (640, 480), interpolation=cv2.INTER_AREA), np.uint8)
        for label, picture, base in (
            ("frame", frame, reader.for_frames()),
            ("photo", image, reader),
        ):
            decked = base.with_settings(dataclasses.replace(base.settings, in_play=deck))
            cards = len(decked.read(picture).cards)
            without, with_deck, decoding = time_reads(picture, base, decked, args.runs)
            seen[label].append((without, decoding))
            print(
                f"{photo.name[:34]:<34} {label:<6} {cards:>5} {without:>8.2f} {with_deck:>8.2f} "
                f"{decoding:>9.3f}"
            )
    for label, times in seen.items():
        if len(times) > 1:
            reads, decodings = np.array(times).T
            print(
                f"{len(times)} photos as a {label}: read without a deck, median "
                f"{np.median(reads):.2f} ms; decoding median {np.median(decodings):.3f} ms, "
                f"most {decodings.max():.3f} ms"
            )
    print("decoder alone on constructed photos, ms: one pair of cards conflicting / every card")
    for count in (6, 20, 50):
        for other in (deck, deck_for_game("baccarat")):
            one = time_decoder(count, other, max(args.runs, 50), pairs=1)
            every = time_decoder(count, other, max(args.runs, 50))
            print(f"  {count:>3} cards, {other}: {one:.3f} / {every:.3f}")


if __name__ == "__main__":
    main()

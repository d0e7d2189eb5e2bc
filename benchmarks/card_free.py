"""Counting what readers see on images with no card: shared by the card-free benchmarks
(``eval_printed_pages.py``, ``eval_casino_tables.py``).

Every certain card read on such an image is a false one, and every uncertain one flags the image
as read with low confidence for nothing. :func:`count_false_cards` reads each image with every
reader (each goes first as often, so none pays the first look), timed; :func:`print_rows` prints
the rows one line a reader.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from vision.detections import Reading


class ReaderLike(Protocol):
    """Anything with ``read(image) -> Reading`` (the shipped reader, or one with other settings)."""

    def read(self, image_bgr: NDArray[np.uint8]) -> Reading:
        """The cards read from a BGR image."""
        ...


def count_false_cards(
    images: Iterable[tuple[int, NDArray[np.uint8]]], readers: Mapping[str, ReaderLike]
) -> dict[str, dict[str, Any]]:
    """Per reader: images read, false certain cards and the images with one, uncertain cards and
    the images they flag, the median read in ms, and the six codes read most often.

    ``images`` yields ``(number, image)``; the number decides which reader goes first.
    """
    names = list(readers)
    found = {name: Counter[str]() for name in names}
    images_with = dict.fromkeys(names, 0)
    uncertain = dict.fromkeys(names, 0)
    flagged = dict.fromkeys(names, 0)
    times: dict[str, list[float]] = {name: [] for name in names}
    count = 0
    for number, image in images:
        count += 1
        turn = number % len(names)
        for name in names[turn:] + names[:turn]:
            started = time.perf_counter()
            reading = readers[name].read(image)
            times[name].append((time.perf_counter() - started) * 1000)
            certain = reading.certain
            found[name].update(card.code for card in certain)
            images_with[name] += int(bool(certain))
            unsure = sum(card.uncertain for card in reading.cards)
            uncertain[name] += unsure
            flagged[name] += int(unsure > 0)
    return {
        name: {
            "images": count,
            "false_cards": sum(found[name].values()),
            "images_with_a_false_card": images_with[name],
            "uncertain_cards": uncertain[name],
            "images_flagged_uncertain": flagged[name],
            "median_ms": round(statistics.median(times[name]), 1) if times[name] else None,
            "most_common": found[name].most_common(6),
        }
        for name in names
    }


def print_rows(rows: Mapping[str, Mapping[str, Any]], unit: str) -> None:
    """One line a reader: false and uncertain cards on how many ``unit`` (images, tables)."""
    for name, row in rows.items():
        common = ", ".join(f"{code} {count}" for code, count in row["most_common"]) or "none"
        print(
            f"  {name}: {row['false_cards']} false certain cards on "
            f"{row['images_with_a_false_card']} {unit}, {row['uncertain_cards']} uncertain "
            f"ones on {row['images_flagged_uncertain']}; median read {row['median_ms']} ms; "
            f"most common: {common}"
        )

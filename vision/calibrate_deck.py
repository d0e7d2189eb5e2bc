"""Calibration from photos: find each card's indices, embed them, build a ``DeckProfile``."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray

from rules.cards import CARD_CLASSES
from vision.calibration import (
    DeckProfile,
    DeckProfileError,
    assign_cells,
    code_from_filename,
    grid_order,
    new_profile,
    save_profile,
)
from vision.crops import crop_index
from vision.imageio import load_image
from vision.reader import Reader

__all__ = ["CalibrationError", "CalibrationResult", "calibrate", "embed_card_photo"]

GRID_ROWS, GRID_COLUMNS = 4, 13
SINGLE_ORDER: tuple[str, ...] = (*grid_order(), "JB", "JR")
"""The order of one-card photos whose file names name no card: S, H, D, C from A to K, jokers."""


class CalibrationError(DeckProfileError):
    """Calibration photos that cannot give a profile: cards missing, twice, or unreadable."""


@dataclass(frozen=True)
class CalibrationResult:
    """The saved profile, where it went, a contact sheet of the assignments, and warnings."""

    profile: DeckProfile
    path: Path
    sheet: NDArray[np.uint8]
    warnings: tuple[str, ...]


def _model_sha(reader: Reader) -> str:
    entry = reader.manifest.get("classifier", {})
    return str(entry.get("sha256") or hashlib.sha256(repr(entry).encode()).hexdigest())


def embed_card_photo(
    reader: Reader, image: NDArray[np.uint8], most: int = 4
) -> tuple[NDArray[np.float32], NDArray[np.float32], NDArray[np.float32]]:
    """Embeddings, probabilities and boxes of the (up to ``most``) strongest indices in a photo."""
    detections = reader.detect(image)
    order = np.argsort(-detections.confidence)[:most]
    boxes = detections.xyxy[order]
    probabilities, embeddings = reader.classify(image, boxes)
    return embeddings, probabilities, boxes


def _sheet(tiles: Sequence[tuple[NDArray[np.uint8], str]], columns: int = 13) -> NDArray[np.uint8]:
    size = 72
    cells = []
    for crop, code in tiles:
        tile = cv2.resize(crop, (size, size), interpolation=cv2.INTER_NEAREST)
        cv2.rectangle(tile, (0, size - 14), (size, size), (255, 255, 255), -1)
        cv2.putText(tile, code, (2, size - 3), cv2.FONT_HERSHEY_SIMPLEX, 0.4, (0, 0, 160), 1)
        cells.append(tile)
    while len(cells) % columns:
        cells.append(np.zeros((size, size, 3), np.uint8))
    return np.vstack([np.hstack(cells[i : i + columns]) for i in range(0, len(cells), columns)])


def _position(cell: int) -> str:
    row, column = divmod(cell, GRID_COLUMNS)
    return f"row {row + 1}, column {column + 1} ({grid_order()[cell]})"


def _from_grid(
    reader: Reader, photo: Path
) -> tuple[dict[str, list[NDArray[np.float32]]], list[tuple[NDArray[np.uint8], str]], list[str]]:
    image = load_image(photo)
    detections = reader.detect(image)
    if len(detections) < GRID_ROWS * GRID_COLUMNS:
        raise CalibrationError(
            f"{photo}: found {len(detections)} indices, a 13 x 4 deck shows at least 52"
        )
    probabilities, embeddings = reader.classify(image, detections.xyxy)
    centers = (detections.xyxy[:, :2] + detections.xyxy[:, 2:]) / 2
    cells, _ = assign_cells(centers, GRID_ROWS, GRID_COLUMNS)
    order = grid_order()
    missing = [cell for cell in range(len(order)) if not (cells == cell).any()]
    if missing:
        where = "; ".join(_position(cell) for cell in missing)
        raise CalibrationError(f"{photo}: no card found at {where}")
    # a card twice: two cells whose indices the classifier reads confidently as the same card
    confident: dict[str, list[int]] = {}
    for cell in range(len(order)):
        chosen = probabilities[cells == cell, :-1]
        joint = np.log(chosen + 1e-9).sum(axis=0)
        best = int(joint.argmax())
        if float(chosen[:, best].min()) > 0.9:
            confident.setdefault(CARD_CLASSES[best], []).append(cell)
    doubles = {code: places for code, places in confident.items() if len(places) > 1}
    if doubles:
        parts = [
            f"{code} at " + " and ".join(_position(c) for c in places)
            for code, places in doubles.items()
        ]
        raise CalibrationError(f"{photo}: the same card appears twice: {'; '.join(parts)}")
    prototypes: dict[str, list[NDArray[np.float32]]] = {}
    tiles = []
    for index, cell in enumerate(cells):
        code = order[int(cell)]
        prototypes.setdefault(code, []).append(embeddings[index])
        tiles.append((crop_index(image, detections.xyxy[index]), code))
    return prototypes, tiles, []


def calibrate(
    reader: Reader, name: str, photos: Sequence[Path], grid: bool = False
) -> CalibrationResult:
    """Build and save the profile ``name`` from the photos (one card each, or one grid photo)."""
    warnings: list[str] = []
    if grid:
        if len(photos) != 1:
            raise CalibrationError(f"--grid takes one photo of the whole deck, got {len(photos)}")
        prototypes, tiles, warnings = _from_grid(reader, photos[0])
    else:
        prototypes = {}
        tiles = []
        named = [code_from_filename(photo) for photo in photos]
        if all(code is None for code in named) and len(photos) > len(SINGLE_ORDER):
            raise CalibrationError(
                f"{len(photos)} unnamed photos, but the documented order has "
                f"{len(SINGLE_ORDER)} cards"
            )
        seen: dict[str, Path] = {}
        for position, photo in enumerate(photos):
            code = named[position] if named[position] is not None else SINGLE_ORDER[position]
            assert code is not None
            image = load_image(photo)
            embeddings, _, boxes = embed_card_photo(reader, image)
            if len(embeddings) == 0:
                warnings.append(f"{photo}: no card index found; {code} left out")
                continue
            if code in seen and seen[code] != photo:
                warnings.append(f"{photo}: {code} again (also {seen[code]}); both kept as samples")
            seen.setdefault(code, photo)
            prototypes.setdefault(code, []).extend(embeddings)
            tiles += [(crop_index(image, box), code) for box in boxes[:2]]
    profile = new_profile(name, prototypes, _model_sha(reader), [str(p) for p in photos])
    path = save_profile(profile)
    return CalibrationResult(profile, path, _sheet(tiles), tuple(warnings))

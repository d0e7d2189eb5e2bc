"""Calibration from photos: find each card's indices, embed them, build a ``DeckProfile``."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Protocol

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
from vision.dark_faces import negative
from vision.detections import Detections
from vision.imageio import load_reduced
from vision.settings import ReaderSettings

__all__ = [
    "CalibrationError",
    "CalibrationPhoto",
    "CalibrationReader",
    "CalibrationResult",
    "calibrate",
    "calibrate_photos",
    "card_faces",
    "embed_card_photo",
    "model_sha",
]

GRID_ROWS, GRID_COLUMNS = 4, 13
SINGLE_ORDER: tuple[str, ...] = (*grid_order(), "JB", "JR")
"""The order of one-card photos whose file names name no card: S, H, D, C from A to K, jokers."""


class CalibrationError(DeckProfileError):
    """Calibration photos that cannot give a profile: cards missing, twice, or unreadable."""


class CalibrationReader(Protocol):
    """What calibration needs of the recognizer (``vision.reader.Reader``, or a test fake)."""

    @property
    def manifest(self) -> Mapping[str, Any]:
        """The models' manifest (the classifier's sha256 names the models a profile fits)."""
        ...

    def detect(self, image: NDArray[np.uint8]) -> Detections:
        """Corner-index boxes in image pixels."""
        ...

    def classify(
        self, image: NDArray[np.uint8], xyxy: NDArray[np.float32]
    ) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        """Class probabilities (N, 55) and embeddings (N, D) of the crops around the boxes."""
        ...


@dataclass(frozen=True)
class CalibrationPhoto:
    """One calibration photo: ``label`` names it in messages and in the profile (a file name),
    ``load`` decodes it when its turn comes (so photos are held one at a time), ``code`` is the
    card it shows (None: from its place in :data:`SINGLE_ORDER`; unused for a grid)."""

    label: str
    load: Callable[[], NDArray[np.uint8]]
    code: str | None = None


@dataclass(frozen=True)
class CalibrationResult:
    """The saved profile, where it went (a file, or a store's location), a contact sheet of
    the assignments, and warnings."""

    profile: DeckProfile
    path: Path | str
    sheet: NDArray[np.uint8]
    warnings: tuple[str, ...]


def model_sha(manifest: Mapping[str, Any]) -> str:
    """The sha256 that names the classifier of a models manifest (what a profile is made for)."""
    entry = manifest.get("classifier", {})
    return str(entry.get("sha256") or hashlib.sha256(repr(entry).encode()).hexdigest())


def card_faces(
    reader: CalibrationReader, image: NDArray[np.uint8], most: int
) -> tuple[NDArray[np.uint8], Detections]:
    """The photo and the indices the detector finds in it, or its negative and those found
    there when the negative's ``most`` strongest indices (each at least
    ``ReaderSettings.dark_face_threshold`` sure) are surer together than the photo's: a deck
    printed light on dark, which the reader also reads in the negative
    (:mod:`vision.dark_faces`)."""
    detections = reader.detect(image)
    dark = negative(image)
    dark_detections = reader.detect(dark)

    threshold = ReaderSettings().dark_face_threshold

    def strength(found: Detections) -> float:  # the surest boxes, each at least the reader's
        sure = found.confidence[found.confidence >= threshold]
        return float(np.sort(sure)[::-1][:most].sum())

    if strength(dark_detections) > strength(detections):
        return dark, dark_detections
    return image, detections


def embed_card_photo(
    reader: CalibrationReader, image: NDArray[np.uint8], most: int = 4
) -> tuple[NDArray[np.float32], NDArray[np.float32], NDArray[np.float32], NDArray[np.uint8]]:
    """Embeddings, probabilities and boxes of the (up to ``most``) strongest indices in a photo,
    and the image they were read in (the photo, or its negative: :func:`card_faces`)."""
    face, detections = card_faces(reader, image, most)
    order = np.argsort(-detections.confidence)[:most]
    boxes = detections.xyxy[order]
    probabilities, embeddings = reader.classify(face, boxes)
    return embeddings, probabilities, boxes, face


OTHER_CARD_ABOVE = 0.9
"""How sure the standard reading must be of another card to question a photo's card."""


def surely_another_card(probabilities: NDArray[np.float32], code: str) -> str | None:
    """The card a one-card photo's indices read together (their probabilities multiplied)
    when that is another card than ``code`` with at least :data:`OTHER_CARD_ABOVE`; None
    otherwise (the photo agrees, or the reading is unsure, as a deck of its own design may
    be: that is what calibrating is for)."""
    from vision.detections import CLASSIFIER_CLASSES

    cards = np.asarray(probabilities, np.float64)
    if cards.ndim != 2 or cards.shape[1] < len(CLASSIFIER_CLASSES) - 1:
        return None
    cards = cards[:, : len(CLASSIFIER_CLASSES) - 1]  # the cards, not "none"
    if len(cards) == 0:
        return None
    joint = np.exp(np.log(cards + 1e-9).sum(axis=0))
    joint /= joint.sum()
    best = int(joint.argmax())
    read = CLASSIFIER_CLASSES[best]
    return read if read != code and joint[best] >= OTHER_CARD_ABOVE else None


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
    reader: CalibrationReader, photo: CalibrationPhoto
) -> tuple[dict[str, list[NDArray[np.float32]]], list[tuple[NDArray[np.uint8], str]], list[str]]:
    image, detections = card_faces(reader, photo.load(), GRID_ROWS * GRID_COLUMNS * 2)
    if len(detections) < GRID_ROWS * GRID_COLUMNS:
        raise CalibrationError(
            f"{photo.label}: found {len(detections)} indices, a 13 x 4 deck shows at least 52"
        )
    probabilities, embeddings = reader.classify(image, detections.xyxy)
    centers = (detections.xyxy[:, :2] + detections.xyxy[:, 2:]) / 2
    cells, _ = assign_cells(centers, GRID_ROWS, GRID_COLUMNS)
    order = grid_order()
    missing = [cell for cell in range(len(order)) if not (cells == cell).any()]
    if missing:
        where = "; ".join(_position(cell) for cell in missing)
        raise CalibrationError(f"{photo.label}: no card found at {where}")
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
        raise CalibrationError(f"{photo.label}: the same card appears twice: {'; '.join(parts)}")
    prototypes: dict[str, list[NDArray[np.float32]]] = {}
    tiles = []
    for index, cell in enumerate(cells):
        code = order[int(cell)]
        prototypes.setdefault(code, []).append(embeddings[index])
        tiles.append((crop_index(image, detections.xyxy[index]), code))
    return prototypes, tiles, []


def _load(path: Path) -> NDArray[np.uint8]:
    """The photo decoded as the reader's callers decode it (a large JPEG at a reduced scale:
    ``vision.imageio.load_reduced``), so its crops look like those read later."""
    return load_reduced(path).image


def calibrate(
    reader: CalibrationReader,
    name: str,
    photos: Sequence[Path],
    grid: bool = False,
    save: Callable[[DeckProfile], Path | str] = save_profile,
) -> CalibrationResult:
    """Build the profile ``name`` from the photos (one card each, or one grid photo) and
    ``save`` it (default: a file in the data folder; it returns where the profile went); a
    one-card photo's card comes from its file name, else from its place in the order."""
    return calibrate_photos(
        reader,
        name,
        [
            CalibrationPhoto(str(path), partial(_load, path), code_from_filename(path))
            for path in photos
        ],
        grid,
        save,
    )


def calibrate_photos(
    reader: CalibrationReader,
    name: str,
    photos: Sequence[CalibrationPhoto],
    grid: bool = False,
    save: Callable[[DeckProfile], Path | str] = save_profile,
) -> CalibrationResult:
    """Build and ``save`` the profile ``name`` from photos in memory (see :func:`calibrate`)."""
    warnings: list[str] = []
    if grid:
        if len(photos) != 1:
            raise CalibrationError(f"--grid takes one photo of the whole deck, got {len(photos)}")
        prototypes, tiles, warnings = _from_grid(reader, photos[0])
    else:
        prototypes = {}
        tiles = []
        if all(photo.code is None for photo in photos) and len(photos) > len(SINGLE_ORDER):
            raise CalibrationError(
                f"{len(photos)} unnamed photos, but the documented order has "
                f"{len(SINGLE_ORDER)} cards"
            )
        seen: dict[str, str] = {}
        taken: dict[bytes, tuple[str, str]] = {}  # a photo's pixels, hashed: label and card
        for position, photo in enumerate(photos):
            if photo.code is None and position >= len(SINGLE_ORDER):
                raise CalibrationError(
                    f"{photo.label}: photo {position + 1} names no card and is past the "
                    f"documented order of {len(SINGLE_ORDER)}"
                )
            code = photo.code if photo.code is not None else SINGLE_ORDER[position]
            image = photo.load()
            digest = hashlib.sha256(image.tobytes()).digest()
            if digest in taken:
                label, card = taken[digest]
                if card == code:  # one photo counts once
                    warnings.append(f"{photo.label}: the same photo as {label}; taken once")
                    continue
                warnings.append(
                    f"{photo.label}: the same photo as {label}, taken for {card}: is it the "
                    f"photo of {code}?"
                )
            taken.setdefault(digest, (photo.label, code))
            embeddings, probabilities, boxes, face = embed_card_photo(reader, image)
            if len(embeddings) == 0:
                warnings.append(f"{photo.label}: no card index found; {code} left out")
                continue
            shown = surely_another_card(probabilities, code)
            if shown is not None:
                warnings.append(
                    f"{photo.label}: taken for {code}, but its corners read {shown} for "
                    f"certain: is it the photo of {code}?"
                )
            if code in seen and seen[code] != photo.label:
                warnings.append(
                    f"{photo.label}: {code} again (also {seen[code]}); both kept as samples"
                )
            seen.setdefault(code, photo.label)
            prototypes.setdefault(code, []).extend(embeddings)
            tiles += [(crop_index(face, box), code) for box in boxes[:2]]
    profile = new_profile(
        name, prototypes, model_sha(reader.manifest), [photo.label for photo in photos]
    )
    return CalibrationResult(profile, save(profile), _sheet(tiles), tuple(warnings))

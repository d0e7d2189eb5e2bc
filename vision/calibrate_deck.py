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
    model_sha,
    new_profile,
    save_profile,
)
from vision.crops import crop_index
from vision.dark_faces import negative
from vision.detections import Detections
from vision.imageio import load_reduced
from vision.index_letters import ENGLISH, INDEX_LETTERS
from vision.settings import ReaderSettings

__all__ = [
    "CalibrationError",
    "CalibrationPhoto",
    "CalibrationReader",
    "CalibrationResult",
    "GridTurn",
    "calibrate",
    "calibrate_photos",
    "card_faces",
    "check_turn",
    "check_twice",
    "embed_card_photo",
    "misplaced_cards",
    "model_sha",
    "sure_readings",
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


SURE_ABOVE = 0.9
"""How sure every index of a grid cell must be of one card for the cell to be read for certain
(documented as "every corner over 0.9")."""


def sure_readings(probabilities: NDArray[np.float32], cells: NDArray[np.int64]) -> dict[int, str]:
    """The card each grid cell is read as for certain, by cell: the card its indices read
    together (probabilities multiplied) when every index gives it over :data:`SURE_ABOVE`.
    Cells read less surely, or holding no index, are left out: a deck of its own design may be
    read so, and that is what calibrating is for."""
    sure: dict[int, str] = {}
    for cell in np.unique(cells):
        chosen = probabilities[cells == cell, : len(CARD_CLASSES)]  # the cards, not "none"
        best = int(np.log(chosen + 1e-9).sum(axis=0).argmax())
        if float(chosen[:, best].min()) > SURE_ABOVE:
            sure[int(cell)] = CARD_CLASSES[best]
    return sure


@dataclass(frozen=True)
class GridTurn:
    """A way a grid photo can show the documented layout turned or mirrored: the card lying at
    ``cell`` is the documented layout's card at ``source[cell]``; ``what`` names the way and
    ``advice`` tells the user what to do."""

    what: str
    advice: str
    source: tuple[int, ...]


def _grid_turns() -> tuple[GridTurn, ...]:
    places = [divmod(cell, GRID_COLUMNS) for cell in range(GRID_ROWS * GRID_COLUMNS)]
    last_row, last_column = GRID_ROWS - 1, GRID_COLUMNS - 1
    return (
        GridTurn(
            "upside down",
            "turn the photo a half turn, AS at the top left",
            tuple((last_row - row) * GRID_COLUMNS + last_column - column for row, column in places),
        ),
        GridTurn(
            "mirrored left to right (its rows run K to A)",
            "flip the photo left to right, or lay each row A to K from the left",
            tuple(row * GRID_COLUMNS + last_column - column for row, column in places),
        ),
        GridTurn(
            "mirrored top to bottom (its rows run C, D, H, S from the top)",
            "flip the photo top to bottom, or lay the rows S, H, D, C from the top",
            tuple((last_row - row) * GRID_COLUMNS + column for row, column in places),
        ),
    )


GRID_TURNS = _grid_turns()
"""The turned and mirrored grids a photo is checked for: a half turn, and either mirror."""
TURN_EVIDENCE = 4
"""Cells read for certain that must hold the card a turned or mirrored grid puts there (also
over half of those cells, and more than hold the documented layout's card) for a photo to be
refused as turned: one or two misplaced cards of a deck read poorly never make a photo turned,
nor do the few cells a layout out of order shares with a turned one."""
MISPLACED_REFUSED_FROM = 4
"""Cells read for certain as another card than their place's from which, when they are also
over a third of the cells read for certain, a grid is refused (:func:`misplaced_cards`)."""


NAMED_AT_MOST = 4
"""Misplaced cells a refusal names (the contact sheet shows them all)."""


def check_turn(label: str, sure: Mapping[int, str]) -> None:
    """CalibrationError (one line naming ``label``, saying how to turn the photo) when the
    cells read for certain (:func:`sure_readings`) show the documented layout turned or
    mirrored (:data:`GRID_TURNS`): at least :data:`TURN_EVIDENCE` of them, over half of them
    and more than hold the documented layout's card, hold the card that way puts there."""
    order = grid_order()
    upright = sum(card == order[cell] for cell, card in sure.items())
    turned = [
        (sum(card == order[turn.source[cell]] for cell, card in sure.items()), turn)
        for turn in GRID_TURNS
    ]
    most, turn = max(turned, key=lambda pair: pair[0])
    if most >= TURN_EVIDENCE and 2 * most > len(sure) and most > upright:
        raise CalibrationError(
            f"{label}: the grid is {turn.what}: {most} of the {len(sure)} cards read for "
            f"certain lie where that puts them; {turn.advice}, and calibrate again"
        )


def misplaced_cards(label: str, sure: Mapping[int, str]) -> list[str]:
    """Warnings naming each cell read for certain (:func:`sure_readings`) as another card than
    the documented layout puts there; CalibrationError (one line naming ``label`` and the
    cells) when they are many.

    The rule: one card out of place, or two swapped, spoil only their own samples, and a deck
    with other index letters may show a letter the classifier takes for another card for
    certain (the Russian jack's letter read as an 8), which is what calibrating is for: such
    cells are warnings, and the contact sheet shows them. When they are at least
    :data:`MISPLACED_REFUSED_FROM` and over a third of the cells read for certain, the deck
    does not lie as documented (two rows swapped make half the cells misplaced): most of those
    samples would be taken for the wrong card, and the photo is refused. A deck whose court and
    ace letters alone are misread (16 cells at most) still has its 36 number cards read in
    place, over twice as many. Cells read unsurely, or not read, are never questioned.
    """
    order = grid_order()
    misplaced = {cell: card for cell, card in sure.items() if card != order[cell]}
    if len(misplaced) >= MISPLACED_REFUSED_FROM and 3 * len(misplaced) > len(sure):
        shown = [f"{card} at {_position(cell)}" for cell, card in misplaced.items()]
        more = len(shown) - NAMED_AT_MOST
        named = ", ".join(shown[:NAMED_AT_MOST]) + (f" and {more} more" if more > 0 else "")
        raise CalibrationError(
            f"{label}: {len(misplaced)} of the {len(sure)} cards read for certain lie where the "
            f"documented layout has another ({named}): lay the deck out in 4 rows S, H, D, C "
            "of A to K, and calibrate again"
        )
    return [
        f"{label}: {_position(cell)} taken for {order[cell]}, but its corners read {card} for "
        f"certain: is {card} in the place of {order[cell]}?"
        for cell, card in misplaced.items()
    ]


LETTERED_RANKS = frozenset(INDEX_LETTERS[ENGLISH])
"""The ranks whose index differs from deck to deck (the ace and the court cards:
:data:`vision.index_letters.INDEX_LETTERS`); 2 to 10 are printed as digits in every deck."""


def check_twice(label: str, sure: Mapping[int, str]) -> None:
    """CalibrationError (one line naming ``label``, each such card and all its cells) when a
    card is read for certain (:func:`sure_readings`) in two or more cells, one of which is
    not its own place in the documented layout and is a number card's (2 to 10).

    The rule: a deck with other index letters may print one that the classifier takes for
    another card for certain, in every suit: the Russian jack's letter reads as an 8, so the
    JS cell reads 8S for certain as the 8S cell does. Such a cell holds the layout's card,
    misread; it is named in a warning by :func:`misplaced_cards` (which refuses a photo with
    many), and refusing it here would refuse every correctly laid-out grid of that deck.
    These letters are on the aces and court cards alone (:data:`LETTERED_RANKS`); 2 to 10 are
    digits in every deck, so a number card's place read for certain as a card also read for
    certain elsewhere holds that card a second time and its own card is not in the photo: it
    is refused, as a grid with a card missing is. A card read twice whose other places are
    aces' or court cards' cannot be told from a misread letter by its readings (nor by its
    embeddings, which the classifier makes alike for what it reads alike): it is left to the
    warning, as a card in another's place is. One-card photos keep their warnings alone
    (:func:`calibrate_photos`).
    """
    order = grid_order()
    cells_by_card: dict[str, list[int]] = {}
    for cell, card in sorted(sure.items()):
        cells_by_card.setdefault(card, []).append(cell)
    doubles = {
        card: cells
        for card, cells in cells_by_card.items()
        if len(cells) > 1
        and any(order[cell] != card and order[cell][:-1] not in LETTERED_RANKS for cell in cells)
    }
    if doubles:
        parts = [
            f"{card} at " + " and ".join(_position(cell) for cell in cells)
            for card, cells in doubles.items()
        ]
        raise CalibrationError(f"{label}: the same card appears twice: {'; '.join(parts)}")


def _from_grid(
    reader: CalibrationReader, photo: CalibrationPhoto
) -> tuple[dict[str, list[NDArray[np.float32]]], list[tuple[NDArray[np.uint8], str]], list[str]]:
    image, detections = card_faces(reader, photo.load(), GRID_ROWS * GRID_COLUMNS * 2)
    if len(detections) < GRID_ROWS * GRID_COLUMNS:
        raise CalibrationError(
            f"{photo.label}: found {len(detections)} indices, a 13 x 4 deck shows at least 52"
        )
    centers = (detections.xyxy[:, :2] + detections.xyxy[:, 2:]) / 2
    width, height = centers.max(axis=0) - centers.min(axis=0)
    if height > width:  # 13 columns of cards lie far wider than 4 rows lie tall
        raise CalibrationError(
            f"{photo.label}: the grid is taller than wide: turn the photo a quarter turn so that "
            "its 13 columns run across, AS at the top left, and calibrate again"
        )
    probabilities, embeddings = reader.classify(image, detections.xyxy)
    cells, _ = assign_cells(centers, GRID_ROWS, GRID_COLUMNS)
    sure = sure_readings(probabilities, cells)
    check_turn(photo.label, sure)  # first: a turned photo's cards are all there once turned
    order = grid_order()
    missing = [cell for cell in range(len(order)) if not (cells == cell).any()]
    if missing:
        where = "; ".join(_position(cell) for cell in missing)
        raise CalibrationError(f"{photo.label}: no card found at {where}")
    check_twice(photo.label, sure)
    warnings = misplaced_cards(photo.label, sure)
    prototypes: dict[str, list[NDArray[np.float32]]] = {}
    tiles = []
    for index, cell in enumerate(cells):
        code = order[int(cell)]
        prototypes.setdefault(code, []).append(embeddings[index])
        tiles.append((crop_index(image, detections.xyxy[index]), code))
    return prototypes, tiles, warnings


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
    one-card photo's card comes from its file name, else from its place in the order. A grid
    photo is refused (CalibrationError) with a card missing, a card twice (:func:`check_twice`),
    turned or mirrored (:func:`check_turn`) or with many cards out of place
    (:func:`misplaced_cards`), which also gives the warnings naming fewer."""
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
    """Build and ``save`` the profile ``name`` from photos in memory (see :func:`calibrate`).

    One-card photos are never refused for what their indices read: each is taken for the card
    its name (or place in the order) gives, one read for certain as another card is named in a
    warning (:func:`surely_another_card`), and two photos of one card are both kept, with a
    warning. A grid refuses a card read twice in a number card's place (:func:`check_twice`)
    because that place's own card is then not in the photo, as a grid with a card missing is
    refused; one-card photos may cover any part of a deck, so a misnamed photo is a warning."""
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

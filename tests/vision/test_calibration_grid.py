"""Grid calibration checks each cell's reading against the card the documented layout puts
there (4 rows S, H, D, C of 13 cards A to K): a turned or mirrored photo is refused with how to
turn it, a card read for certain in another's place is named, and many are refused; cells read
unsurely are always taken. A card read twice for certain is refused when a number card's place
holds it (digits read alike in every deck), named in a warning when an ace's or a court card's
does (a deck's own letters, as a Russian jack read as an 8)."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rules.cards import CARD_CLASSES
from vision.calibrate_deck import (
    MISPLACED_REFUSED_FROM,
    TURN_EVIDENCE,
    CalibrationError,
    calibrate,
    check_turn,
    check_twice,
    misplaced_cards,
)
from vision.calibration import grid_order
from vision.detections import Detections

ORDER = grid_order()
HALF_TURN = [ORDER[51 - cell] for cell in range(52)]
"""The cards a grid photo turned a half turn shows, cell by cell (a card's indices read the
same either way up)."""


class _LaidOut:
    """Two corner indices in each cell of a 13 x 4 grid (``width`` by ``height`` pixels),
    read for certain as the card ``cards`` lays there, or unsurely (0.6) in ``unsure`` cells."""

    def __init__(
        self, cards: list[str], unsure: frozenset[int] = frozenset(), tall: bool = False
    ) -> None:
        self.cards, self.unsure = cards, unsure
        self.manifest = {"classifier": {"sha256": "x"}}
        boxes, self.cells = [], []
        for cell in range(52):
            row, column = divmod(cell, 13)
            x, y = 100 * column, 150 * row
            boxes += [[x, y, x + 15, y + 25], [x + 55, y + 95, x + 70, y + 120]]
            self.cells += [cell, cell]
        if tall:  # the same grid, a quarter turn: 13 rows of 4
            boxes = [[y, x, y + 25, x + 15] for x, y, _, _ in boxes]
        self.boxes = np.array(boxes, np.float32)

    def detect(self, image: Any) -> Detections:
        count = len(self.boxes)
        return Detections(self.boxes, np.ones(count, np.float32), np.zeros(count, np.int64))

    def classify(self, image: Any, xyxy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        probabilities = np.full((len(xyxy), 55), 0.4 / 54, np.float32)
        for row, cell in enumerate(self.cells):
            sure = 0.6 if cell in self.unsure else 1.0
            probabilities[row, CARD_CLASSES.index(self.cards[cell])] = sure
        vectors = np.random.default_rng(5).normal(size=(len(xyxy), 16)).astype(np.float32)
        return probabilities, vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


@pytest.fixture
def photo(tmp_path: Path) -> Path:
    import cv2

    path = tmp_path / "deck.png"
    cv2.imwrite(str(path), np.full((700, 1400, 3), 200, np.uint8))
    return path


def _calibrate(reader: _LaidOut, photo: Path) -> Any:
    return calibrate(reader, "grid", [photo], grid=True, save=lambda _: "")


def test_a_grid_laid_out_as_documented_is_taken_without_a_warning(photo: Path) -> None:
    result = _calibrate(_LaidOut(ORDER), photo)
    assert set(result.profile.prototypes) == set(ORDER) and result.warnings == ()


def test_a_grid_turned_a_half_turn_is_refused_with_how_to_turn_it(photo: Path) -> None:
    """Before this check every card's samples went to the opposite cell's card (AS got KC)."""
    with pytest.raises(CalibrationError) as refused:
        _calibrate(_LaidOut(HALF_TURN), photo)
    message = str(refused.value)
    assert message.startswith(f"{photo}: the grid is upside down: 52 of the 52 cards read")
    assert "turn the photo a half turn, AS at the top left" in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("cards", "what"),
    [
        ([ORDER[row * 13 + 12 - column] for row in range(4) for column in range(13)], "left to"),
        ([ORDER[(3 - row) * 13 + column] for row in range(4) for column in range(13)], "top to"),
    ],
    ids=["columns K to A", "rows C to S"],
)
def test_a_mirrored_grid_is_refused(photo: Path, cards: list[str], what: str) -> None:
    with pytest.raises(CalibrationError, match=f"the grid is mirrored {what} bottom|{what} right"):
        _calibrate(_LaidOut(cards), photo)


def test_a_grid_a_quarter_turn_away_is_refused(photo: Path) -> None:
    with pytest.raises(CalibrationError, match="taller than wide: turn the photo a quarter turn"):
        _calibrate(_LaidOut(ORDER, tall=True), photo)


def test_two_swapped_cards_are_named_and_taken(photo: Path) -> None:
    """7H and 8H swapped: both cells are named; the rest of the deck is calibrated."""
    cards = list(ORDER)
    cards[19], cards[20] = "8H", "7H"
    result = _calibrate(_LaidOut(cards), photo)
    assert result.warnings == (
        f"{photo}: row 2, column 7 (7H) taken for 7H, but its corners read 8H for certain: "
        "is 8H in the place of 7H?",
        f"{photo}: row 2, column 8 (8H) taken for 8H, but its corners read 7H for certain: "
        "is 7H in the place of 8H?",
    )
    assert set(result.profile.prototypes) == set(ORDER)


def test_a_card_in_anothers_place_is_named_when_its_own_place_reads_unsurely(
    photo: Path,
) -> None:
    """8H lies in 7H's cell; the 8H cell reads 8H unsurely (no card twice for certain)."""
    cards = list(ORDER)
    cards[19] = "8H"
    result = _calibrate(_LaidOut(cards, unsure=frozenset({20})), photo)
    assert result.warnings == (
        f"{photo}: row 2, column 7 (7H) taken for 7H, but its corners read 8H for certain: "
        "is 8H in the place of 7H?",
    )


def test_two_rows_swapped_are_refused_naming_some_cells(photo: Path) -> None:
    cards = ORDER[:26] + ORDER[39:] + ORDER[26:39]  # clubs above diamonds
    with pytest.raises(CalibrationError) as refused:
        _calibrate(_LaidOut(cards), photo)
    message = str(refused.value)
    assert "26 of the 52 cards read for certain lie where the documented layout has another" in (
        message
    )
    assert "AC at row 3, column 1 (AD)" in message and "and 22 more" in message


def test_cells_read_unsurely_are_never_questioned(photo: Path) -> None:
    """A deck read poorly (its own index letters): a half turn's cards, all unsure, are taken
    without a word, as any unsure reading is."""
    result = _calibrate(_LaidOut(HALF_TURN, unsure=frozenset(range(52))), photo)
    assert result.warnings == () and len(result.profile.prototypes) == 52


@pytest.mark.parametrize(
    ("sure", "refused"),
    [
        ({cell: HALF_TURN[cell] for cell in range(TURN_EVIDENCE - 1)}, False),  # too few
        ({cell: HALF_TURN[cell] for cell in range(TURN_EVIDENCE)}, True),
        # as many in place as turned: not turned
        ({**{c: HALF_TURN[c] for c in range(6)}, **{c: ORDER[c] for c in range(10, 16)}}, False),
        # turned ones under half the sure cells: a layout out of order, not a turned one
        (
            {**{c: HALF_TURN[c] for c in range(6)}, **{c: ORDER[c + 1] for c in range(10, 17)}},
            False,
        ),
    ],
    ids=["3 cells", "4 cells", "a tie", "under half"],
)
def test_how_much_evidence_makes_a_photo_turned(sure: dict[int, str], refused: bool) -> None:
    if refused:
        with pytest.raises(CalibrationError, match="upside down"):
            check_turn("deck.jpg", sure)
    else:
        check_turn("deck.jpg", sure)


@pytest.mark.parametrize(
    ("misplaced", "in_place", "refused"),
    [
        (MISPLACED_REFUSED_FROM - 1, 0, False),  # few: warnings, whatever the share
        (MISPLACED_REFUSED_FROM, 8, False),  # a third of 12: not over a third
        (MISPLACED_REFUSED_FROM, 7, True),
        (16, 36, False),  # a deck's court and ace letters misread in every suit
    ],
)
def test_when_misplaced_cards_are_too_many(misplaced: int, in_place: int, refused: bool) -> None:
    sure = {cell: ORDER[(cell + 1) % 52] for cell in range(misplaced)}
    sure |= {cell: ORDER[cell] for cell in range(misplaced, misplaced + in_place)}
    if refused:
        with pytest.raises(CalibrationError, match=f"{misplaced} of the {len(sure)} cards"):
            misplaced_cards("deck.jpg", sure)
    else:
        assert len(misplaced_cards("deck.jpg", sure)) == misplaced


RUSSIAN_JACKS = {10: "8S", 23: "8H", 36: "8D", 49: "8C"}
"""A Russian deck's jack letter (В) read as an 8 of its suit for certain, as the shipped
classifier reads the drawn ``slavic_costumes-russian`` deck, in every suit."""


def test_a_grid_whose_jack_letters_read_as_8s_for_certain_is_taken_with_warnings(
    photo: Path,
) -> None:
    """Each 8 is read twice for certain (its own cell and its suit's jack's), yet the grid lies
    as documented: the jack cells are named, the deck is calibrated."""
    cards = [RUSSIAN_JACKS.get(cell, card) for cell, card in enumerate(ORDER)]
    result = _calibrate(_LaidOut(cards), photo)
    assert result.warnings == tuple(
        f"{photo}: row {row}, column 11 (J{suit}) taken for J{suit}, but its corners read 8{suit} "
        f"for certain: is 8{suit} in the place of J{suit}?"
        for row, suit in enumerate("SHDC", start=1)
    )
    assert set(result.profile.prototypes) == set(ORDER)


@pytest.mark.parametrize(
    ("reads", "named"),
    [
        ({1: "AS"}, "AS at row 1, column 1 (AS) and row 1, column 2 (2S)"),  # a second AS at 2S
        ({8: "8S"}, "8S at row 1, column 8 (8S) and row 1, column 9 (9S)"),
        (
            {8: "8S", 10: "8S"},  # at the 9S place and the JS place
            "8S at row 1, column 8 (8S) and row 1, column 9 (9S) and row 1, column 11 (JS)",
        ),
    ],
    ids=["AS at 2S", "8S at 9S", "8S at 9S and JS"],
)
def test_a_card_twice_in_a_number_cards_place_is_refused(
    photo: Path, reads: dict[int, str], named: str
) -> None:
    """2 to 10 print as digits in every deck: a number card's place read for certain as a card
    read for certain elsewhere holds that card a second time."""
    cards = [reads.get(cell, card) for cell, card in enumerate(ORDER)]
    with pytest.raises(CalibrationError, match=re.escape(f"the same card appears twice: {named}")):
        _calibrate(_LaidOut(cards), photo)


@pytest.mark.parametrize(
    ("sure", "refused"),
    [
        ({7: "8S", 10: "8S"}, False),  # the jack's place: a letter, maybe misread
        ({0: "AS", 12: "AS"}, False),  # the king's place
        ({7: "8S", 8: "8S"}, True),  # the 9's place: digits read alike in every deck
        ({10: "8S", 11: "8S"}, False),  # neither is its own place; both lettered
        ({9: "8S", 11: "8S"}, True),  # neither is its own place; the 10's place is a number's
        ({7: "8S", 20: "8H"}, False),  # two cards, once each
    ],
    ids=["J place", "K place", "9 place", "J and Q places", "10 and Q places", "once each"],
)
def test_which_cards_read_twice_are_refused(sure: dict[int, str], refused: bool) -> None:
    if refused:
        with pytest.raises(CalibrationError, match="the same card appears twice: 8S at"):
            check_twice("deck.jpg", sure)
    else:
        check_twice("deck.jpg", sure)


def _drawn_grid(deck: str, cards: list[str], path: Path) -> Path:
    """``cards`` of the synthetic deck ``deck`` drawn in a 13 x 4 grid, saved at ``path``
    (skips without the card art)."""
    import cv2

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    try:
        import synth_drawing
    finally:
        sys.path.pop(0)
    missing = synth_drawing.art_missing([deck])
    if missing:
        pytest.skip(missing)
    assets = synth_drawing.deck(deck)
    width = assets.cards["AS"].shape[1]
    pitch_x, pitch_y = width * 1.12, synth_drawing.HEIGHT * 1.1
    placements = [
        synth_drawing.place(
            assets,
            code,
            (
                40 + width / 2 + cell % 13 * pitch_x,
                40 + synth_drawing.HEIGHT / 2 + cell // 13 * pitch_y,
            ),
        )
        for cell, code in enumerate(cards)
    ]
    size = (int(80 + 13 * pitch_x), int(80 + 4 * pitch_y))
    cv2.imwrite(str(path), synth_drawing.draw(placements, size).image)
    return path


def _shipped_reader() -> Any:
    from vision.reader import Reader, default_models_dir

    if not (default_models_dir() / "manifest.json").is_file():
        pytest.skip("no shipped models")
    return Reader.load()


def test_a_rendered_deck_turned_a_half_turn_is_refused(tmp_path: Path) -> None:
    """The shipped models on a drawn 13 x 4 grid of a standard deck: taken the right way up,
    refused turned a half turn."""
    import cv2

    reader = _shipped_reader()
    upright = _drawn_grid("anglo", ORDER, tmp_path / "upright.png")
    turned = tmp_path / "turned.png"
    cv2.imwrite(str(turned), cv2.imread(str(upright))[::-1, ::-1])
    result = calibrate(reader, "drawn", [upright], grid=True, save=lambda _: "")
    assert set(result.profile.prototypes) == set(ORDER) and result.warnings == ()
    with pytest.raises(CalibrationError, match="the grid is upside down"):
        calibrate(reader, "drawn", [turned], grid=True, save=lambda _: "")


def test_a_rendered_russian_deck_is_calibrated_and_a_card_twice_refused(tmp_path: Path) -> None:
    """The shipped classifier reads the drawn Russian deck's jack letter as an 8 for certain
    (the premise, checked): its grid laid out as documented is calibrated, the jack cells
    named; the same grid with a second 8S in the 9S place is refused."""
    reader = _shipped_reader()
    deck = "slavic_costumes-russian"
    laid_out = _drawn_grid(deck, ORDER, tmp_path / "laid_out.png")
    result = calibrate(reader, "russian", [laid_out], grid=True, save=lambda _: "")
    assert set(result.profile.prototypes) == set(ORDER)
    assert result.warnings, "the classifier no longer misreads this deck for certain"
    for warning in result.warnings:
        assert re.search(r"column 11 \(J(.)\) taken for J\1, but its corners read 8\1 ", warning)
    cards = list(ORDER)
    cards[8] = "8S"
    doubled = _drawn_grid(deck, cards, tmp_path / "doubled.png")
    with pytest.raises(CalibrationError, match=r"8S at row 1, column 8 \(8S\) and row 1, column 9"):
        calibrate(reader, "russian", [doubled], grid=True, save=lambda _: "")

"""Cards read but not vouched for (vision/doubted.py): black suits in a photo without colour,
ranks printed in letters the classifier does not read."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.detections import CardReading, ReadingFlag
from vision.doubted import (
    COLOURLESS_SHARE,
    black_suits_in_doubt,
    colour_share,
    colourless,
    unread_letters_in_doubt,
)
from vision.imageio import load_image
from vision.reader import Reader, default_models_dir

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "hand.jpg"


def _grey(image: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)


def test_a_greyscale_photo_has_no_colour_and_a_colour_one_has() -> None:
    photo = load_image(EXAMPLE)
    assert colour_share(photo) > 100 * COLOURLESS_SHARE and not colourless(photo)
    grey = _grey(photo)
    assert colour_share(grey) == 0 and colourless(grey)
    ok, encoded = cv2.imencode(".jpg", grey)  # a greyscale JPEG decodes to equal channels
    assert ok and colourless(cv2.imdecode(encoded, cv2.IMREAD_COLOR))
    # a grey photo with one small red index in a corner still has colour to go by
    marked = grey.copy()
    marked[:14, :10] = (40, 40, 220)
    assert not colourless(marked)
    # nor does a grey photo's faint noise, as a mono filter's colour JPEG leaves it
    noisy = np.clip(
        grey.astype(np.int16) + np.random.default_rng(0).integers(-3, 4, grey.shape), 0, 255
    )
    assert colourless(noisy.astype(np.uint8))


def test_black_suits_and_the_black_joker_are_doubted_red_ones_kept() -> None:
    box = (0.0, 0.0, 10.0, 14.0)
    cards = [
        CardReading("7S", 0.99, box),
        CardReading("7D", 0.99, box),
        CardReading("KC", 0.95, box),
        CardReading("QH", 0.9, box),
        CardReading("JB", 0.9, box),
        CardReading("JR", 0.9, box),
        CardReading("2C", 0.4, box, uncertain=True),
    ]
    doubted = black_suits_in_doubt(cards)
    assert [card.uncertain for card in doubted] == [True, False, True, False, True, False, True]
    assert [card.code for card in doubted] == [card.code for card in cards]  # nothing renamed


def test_unread_letters_make_only_those_ranks_uncertain() -> None:
    box = (0.0, 0.0, 10.0, 14.0)
    cards = [CardReading("QS", 0.99, box), CardReading("7S", 0.99, box)]
    known = {"Q": ("Q",), "K": ("K",), "J": ("J",), "A": ("A",)}
    doubted = unread_letters_in_doubt(cards, "french", known)
    assert [card.uncertain for card in doubted] == [True, False]  # French queens print a D


@pytest.mark.skipif(
    not (default_models_dir() / "manifest.json").is_file(), reason="no shipped models"
)
def test_a_greyscale_table_reads_no_black_suit_for_certain() -> None:
    """The example hand (2D, 3D, JD, JC, KS) in grey: the diamonds' indices read as spades
    without colour; no black reading is certain and the reading says why. In colour the
    reading has no such flag."""
    reader = Reader.load()
    colour = reader.read(load_image(EXAMPLE))
    assert ReadingFlag.COLOURLESS not in colour.flags
    grey = reader.read(_grey(load_image(EXAMPLE)))
    assert ReadingFlag.COLOURLESS in grey.flags
    assert len(grey.cards) > 2
    certain = [card.code for card in grey.cards if not card.uncertain]
    assert all(code[-1] in "DH" for code in certain), certain
    assert "colourless" in grey.to_dict()["flags"]


@pytest.mark.skipif(
    not (default_models_dir() / "manifest.json").is_file(), reason="no shipped models"
)
def test_score_says_why_a_greyscale_photos_black_cards_are_uncertain(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from handreader.cli import main
    from handreader.cli.score import COLOURLESS_NOTE

    grey = tmp_path / "grey.png"
    cv2.imwrite(str(grey), _grey(load_image(EXAMPLE)))
    assert main(["score", str(grey)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == f"note: {COLOURLESS_NOTE}"
    assert main(["score", str(EXAMPLE)]) == 0
    assert "note:" not in capsys.readouterr().out

"""The letters a deck prints in its indices (``vision.index_letters``) and the reader's
``indices`` setting: a shared letter (V) read as the deck prints it, and a rank whose letter
the classifier was not trained on read as uncertain.

The tables come from the decks themselves: a French deck prints R (roi), D (dame), V (valet)
and its aces as 1; a Dutch one H (heer), V (vrouw), B (boer).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from rules.cards import CARD_CLASSES
from vision.detections import CLASSIFIER_CLASSES
from vision.imageio import load_image
from vision.index_letters import (
    INDEX_LETTERS,
    IndexLettersError,
    classifier_letters,
    deck_letters,
    fold_letters,
    shared_letters,
    unambiguous_letters,
    unread_ranks,
)
from vision.reader import Reader, default_models_dir

ROOT = Path(__file__).resolve().parents[2]
POSITION = {code: index for index, code in enumerate(CLASSIFIER_CLASSES)}

TRAINED = {
    "manifest": {
        "classifier": {
            "index_letters": {
                "1": ["A"], "R": ["K"], "D": ["Q"], "B": ["J"], "H": ["K"], "Т": ["A"],
                "К": ["K"], "Д": ["Q"], "В": ["J"], "V": ["J", "Q"],
            }
        }
    }
}  # fmt: skip
"""A manifest of a classifier trained on every local letter (as a training round writes it)."""


def _row(**probabilities: float) -> np.ndarray:
    """One index's probabilities over the 55 classes: those given, the rest on "none"."""
    row = np.zeros(len(CLASSIFIER_CLASSES), np.float32)
    for code, probability in probabilities.items():
        row[POSITION[code.replace("_", "")]] = probability
    row[-1] = 1.0 - row.sum()
    return row


def test_the_tables_give_v_two_ranks_and_every_other_letter_one() -> None:
    assert shared_letters() == {"V": ("Q", "J")}
    letters = unambiguous_letters()
    assert letters["R"] == "K" and letters["1"] == "A" and letters["Т"] == "A"
    assert letters["B"] == "J" and letters["D"] == "Q" and letters["H"] == "K"
    assert all(set(deck) == {"A", "K", "Q", "J"} for deck in INDEX_LETTERS.values())


@pytest.mark.parametrize(
    ("name", "expected"),
    [("french", "1"), ("FRENCH ", "1"), ("english", "A"), ("russian", "Т")],
)
def test_deck_letters_by_name_in_any_case(name: str, expected: str) -> None:
    assert deck_letters(name)["A"] == expected


@pytest.mark.parametrize("name", ["klingon", "", 3])
def test_an_unknown_name_names_the_known_ones(name: object) -> None:
    with pytest.raises(IndexLettersError, match="expected one of dutch, english, french"):
        deck_letters(name)  # type: ignore[arg-type]


def test_a_v_read_half_jack_half_queen_is_a_french_jack_and_a_dutch_queen() -> None:
    known = classifier_letters(TRAINED["manifest"])
    v_of_hearts = _row(JH=0.48, QH=0.46, _7H=0.02)
    d_of_hearts = _row(QH=0.95, JH=0.01)
    b_of_hearts = _row(JH=0.95, QH=0.02)
    rows = np.stack([v_of_hearts, d_of_hearts, b_of_hearts])
    french = fold_letters(rows, "french", known)
    dutch = fold_letters(rows, "dutch", known)
    # French: V -> J (twice the smaller share), D stays Q
    assert french[0, POSITION["JH"]] == pytest.approx(0.94) and french[0, POSITION["QH"]] < 0.03
    assert french[1, POSITION["QH"]] == pytest.approx(0.94)
    # Dutch: V -> Q, B stays J
    assert dutch[0, POSITION["QH"]] == pytest.approx(0.92)
    assert dutch[2, POSITION["JH"]] == pytest.approx(0.93)
    np.testing.assert_allclose(french.sum(axis=1), rows.sum(axis=1), rtol=1e-6)
    np.testing.assert_allclose(dutch.sum(axis=1), rows.sum(axis=1), rtol=1e-6)
    for name in ("english", "german", "russian"):  # no shared letter printed: unchanged
        np.testing.assert_array_equal(fold_letters(rows, name, known), rows)


def test_a_classifier_that_never_learned_v_is_read_as_it_is() -> None:
    rows = np.stack([_row(JH=0.48, QH=0.46)])
    np.testing.assert_array_equal(fold_letters(rows, "french", classifier_letters({})), rows)


@pytest.mark.parametrize(
    ("name", "manifest", "expected"),
    [
        ("english", {}, set()),
        ("french", {}, {"A", "K", "Q", "J"}),
        ("german", {}, {"Q", "J"}),
        ("dutch", {}, {"K", "Q", "J"}),
        ("russian", {}, {"A", "K", "Q", "J"}),
        ("french", TRAINED["manifest"], set()),
        ("dutch", TRAINED["manifest"], set()),
        ("russian", TRAINED["manifest"], set()),
    ],
)
def test_the_ranks_a_classifier_cannot_read_in_a_decks_letters(
    name: str, manifest: dict[str, object], expected: set[str]
) -> None:
    assert unread_ranks(name, classifier_letters(manifest)) == expected


needs_models = pytest.mark.skipif(
    not (default_models_dir() / "manifest.json").is_file(), reason="no shipped models"
)


def _models_without_letters(folder: Path) -> Path:
    """A copy of the shipped models whose manifest names no local letters: a classifier
    trained on the English letters alone."""
    folder.mkdir()
    for model in default_models_dir().iterdir():
        if model.is_file():
            shutil.copyfile(model, folder / model.name)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["classifier"].pop("index_letters", None)
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder


@needs_models
def test_a_reader_of_no_local_letters_reads_a_french_decks_courts_and_aces_as_uncertain(
    tmp_path: Path,
) -> None:
    """A classifier whose manifest names no local letters: on a deck said to print R D V and
    aces as 1, a card read as an ace or a court was read from something else and cannot
    decide a round; the number cards read as before (examples/hand.jpg: KS 2D JD 3D JC)."""
    reader = Reader.load(_models_without_letters(tmp_path / "models"))
    image = load_image(ROOT / "examples" / "hand.jpg")
    plain = {card.code: card.uncertain for card in reader.read(image).cards}
    french = {card.code: card.uncertain for card in reader.with_indices("French").read(image).cards}
    assert plain.keys() == french.keys()
    courts = {code for code in plain if code[:-1] in {"A", "K", "Q", "J"}}
    assert courts and all(french[code] for code in courts)
    assert all(french[code] == plain[code] for code in plain if code not in courts)
    english = reader.with_indices("english")
    assert [c.uncertain for c in english.read(image).cards] == list(plain.values())
    assert reader.with_indices(None) is reader
    with pytest.raises(IndexLettersError):
        reader.with_indices("klingon")


@needs_models
def test_the_shipped_classifier_reads_every_decks_letters() -> None:
    """The shipped classifier was trained on the local letters (its manifest names them), so
    no rank of a French, German, Russian or Dutch deck is left unread, and the example's
    courts keep their readings with the letters named."""
    manifest = json.loads((default_models_dir() / "manifest.json").read_text())
    letters = classifier_letters(manifest)
    for name in ("french", "german", "russian", "dutch"):
        assert unread_ranks(name, letters) == set()
    reader = Reader.load()
    image = load_image(ROOT / "examples" / "hand.jpg")
    plain = [(card.code, card.uncertain) for card in reader.read(image).cards]
    assert [(c.code, c.uncertain) for c in reader.with_indices("french").read(image).cards] == plain


def test_every_index_letters_name_is_a_cli_choice_and_an_api_option() -> None:
    import argparse

    from handreader.cli.in_play import add_deck_options
    from handreader.service.schemas import ReadOptionsIn, TableOptionsIn

    parser = argparse.ArgumentParser()
    add_deck_options(parser, default="any")
    assert parser.parse_args(["--indices", "Dutch"]).indices == "dutch"
    assert TableOptionsIn(indices="french").indices == "french"
    assert ReadOptionsIn().indices is None
    assert CARD_CLASSES[POSITION["JH"]] == "JH"

"""``--game`` and ``--decks`` of the photo commands: the deck in play each loads the reader with.

A fake recognizer records the settings it was loaded with (``ReaderSettings.in_play``); what
the deck changes in a reading is tested in tests/vision/test_decoding.py.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest
from numpy.typing import NDArray
from web_fakes import NIU_4, NIU_TABLE, FakeReader

from handreader.cli import main
from rules.decks import Deck, deck_for_game
from vision.detections import Reading
from vision.settings import ReaderSettings

ROOT = Path(__file__).resolve().parents[3]


class _Recorder(FakeReader):
    """The web tests' fake, remembering the settings each load was given."""

    def __init__(self, hands: dict[str, tuple[float, float]] = NIU_TABLE) -> None:
        super().__init__(hands)
        self.loaded: list[ReaderSettings | None] = []

    def read(self, image_bgr: NDArray[np.uint8], deck: object = None) -> Reading:
        return super().read(image_bgr)


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> _Recorder:
    fake = _Recorder()

    def load(models: object = None, settings: ReaderSettings | None = None) -> _Recorder:
        fake.loaded.append(settings)
        return fake

    monkeypatch.setattr("vision.reader.Reader.load", load)
    return fake


def _loaded(
    recorder: _Recorder, argv: list[str], capsys: pytest.CaptureFixture[str], setting: str
) -> list[object]:
    """Run the command ``argv``; the ``setting`` of each ReaderSettings the reader was loaded
    with (None for a load without settings)."""
    assert main(argv) == 0, capsys.readouterr().err
    return [getattr(settings, setting) if settings else None for settings in recorder.loaded]


@pytest.fixture
def photo(tmp_path: Path) -> Path:
    path = tmp_path / "table.png"
    cv2.imwrite(str(path), np.full((480, 640, 3), 100, np.uint8))
    return path


@pytest.mark.parametrize(
    ("command", "options", "expected", "why"),
    [
        ("read", [], None, "read: any card unless a game is named"),
        ("read", ["--game", "niuniu"], Deck.standard(), "Niu Niu: 52 cards"),
        ("read", ["--game", "pinochle", "--decks", "2"], Deck.pinochle(2), "two pinochle packs"),
        ("read", ["--game", "PITS"], deck_for_game("pits"), "names in any case"),
        ("score", [], Deck.standard(), "score: the profile's Niu Niu deck (one pack)"),
        ("score", ["--decks", "2"], Deck.standard(2), "score: two packs of it"),
        ("score", ["--game", "any"], None, "score: any card when asked"),
        ("score", ["--profile", "classic"], Deck.standard(), "every profile plays one pack"),
        ("baccarat", [], Deck.standard(8), "Baccarat: the shoe's 8 decks"),
        ("blackjack", ["--decks", "4"], Deck.standard(4), "the shoe's --decks count the packs"),
        ("paigow", [], deck_for_game("paigow"), "Pai Gow Poker: 52 and a joker"),
        ("paigow", ["--game", "any"], None, "any card when asked"),
    ],
)
def test_photo_commands_load_the_reader_with_the_deck_in_play(
    recorder: _Recorder,
    photo: Path,
    capsys: pytest.CaptureFixture[str],
    command: str,
    options: list[str],
    expected: Deck | None,
    why: str,
) -> None:
    assert _loaded(recorder, [command, str(photo), *options], capsys, "in_play") == [expected], why


@pytest.mark.parametrize(
    ("command", "options", "message"),
    [
        ("read", ["--decks", "2"], "decks 2 given without a game"),
        ("read", ["--game", "any", "--decks", "2"], "decks 2 given with game 'any'"),
        # a count out of range is a usage error of --decks, the same for every command
        ("score", ["--decks", "0"], "argument --decks: expected at least 1, got '0'"),
        ("score", ["--decks", "17"], "argument --decks: expected at most 16, got '17'"),
        ("read", ["--game", "pinochle", "--decks", "17"], "expected at most 16, got '17'"),
        ("blackjack", ["--decks", "10000000"], "expected at most 16, got '10000000'"),
        ("baccarat", ["--decks", "17"], "argument --decks: expected at most 16, got '17'"),
    ],
)
def test_a_bad_count_is_an_error_before_the_models_load(
    recorder: _Recorder,
    photo: Path,
    capsys: pytest.CaptureFixture[str],
    command: str,
    options: list[str],
    message: str,
) -> None:
    try:
        status = main([command, str(photo), *options])
    except SystemExit as exited:  # argparse's own refusal
        status = int(exited.code or 0)
    assert status == 2
    assert message in capsys.readouterr().err
    assert recorder.loaded == []


def test_an_unknown_game_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["read", "x.jpg", "--game", "poker"])
    assert exited.value.code == 2
    assert "invalid choice: 'poker'" in capsys.readouterr().err


def test_eval_reads_with_the_deck_and_says_which(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The shipped models on the example photo (its labels in examples/hand.json): the JSON
    line names the deck in play, and counts the certain cards read wrong."""
    cards = json.loads((ROOT / "examples" / "hand.json").read_text())["cards"]
    (tmp_path / "hand.jpg").write_bytes((ROOT / "examples" / "hand.jpg").read_bytes())
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text(json.dumps({"image": "hand.jpg", "cards": cards}) + "\n")
    assert main(["eval", str(manifest), "--json", "--game", "niuniu"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["in_play"] == "niuniu: 52 cards" and summary["wrong"] >= 0
    assert main(["eval", str(manifest), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["in_play"] is None and summary["indices"] is None
    assert main(["eval", str(manifest), "--json", "--indices", "french"]) == 0
    assert json.loads(capsys.readouterr().out)["indices"] == "french"


@pytest.mark.parametrize(
    ("command", "options", "expected"),
    [
        ("read", [], None),
        ("read", ["--indices", "french"], "french"),
        ("score", ["--indices", "Dutch"], "dutch"),
        ("baccarat", ["--indices", "german"], "german"),
        ("blackjack", ["--indices", "russian"], "russian"),
        ("paigow", ["--indices", "english"], "english"),
    ],
)
def test_photo_commands_load_the_reader_with_the_decks_index_letters(
    recorder: _Recorder,
    photo: Path,
    capsys: pytest.CaptureFixture[str],
    command: str,
    options: list[str],
    expected: str | None,
) -> None:
    """``--indices`` names the letters the deck prints (vision.index_letters), in any case."""
    assert _loaded(recorder, [command, str(photo), *options], capsys, "indices") == [expected]


def test_unknown_index_letters_are_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["score", "x.jpg", "--indices", "klingon"])
    assert exited.value.code == 2
    assert "invalid choice: 'klingon'" in capsys.readouterr().err


def test_read_with_a_french_decks_letters_marks_courts_a_classifier_cannot_read_uncertain(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A classifier that reads no French letter (its manifest names none): the example
    photo's KS, JD and JC (examples/hand.json) are uncertain when the deck prints R D V; the
    shipped classifier, trained on the letters, keeps them."""
    models = tmp_path / "models"
    shutil.copytree(ROOT / "models", models)
    manifest = json.loads((models / "manifest.json").read_text())
    manifest["classifier"].pop("index_letters", None)
    (models / "manifest.json").write_text(json.dumps(manifest))
    photo = str(ROOT / "examples" / "hand.jpg")
    for folder, courts_uncertain in ((models, True), (ROOT / "models", False)):
        command = ["read", photo, "--json", "--indices", "french", "--models", str(folder)]
        assert main(command) == 0
        cards = json.loads(capsys.readouterr().out)["cards"]
        courts = [card for card in cards if card["card"][:-1] in {"K", "Q", "J", "A"}]
        assert courts and all(card["uncertain"] == courts_uncertain for card in courts)
        assert any(not card["uncertain"] for card in cards)  # the number cards stay certain


@pytest.mark.parametrize(
    ("options", "statuses"),
    [([], ["invalid", "invalid"]), (["--decks", "2"], ["scored", "scored"])],
)
def test_score_counts_the_decks_at_the_table_too(
    monkeypatch: pytest.MonkeyPatch,
    photo: Path,
    capsys: pytest.CaptureFixture[str],
    options: list[str],
    statuses: list[str],
) -> None:
    """A hand read twice (two copies of each card) is two hands with ``--decks 2``, and a
    duplicate that voids both with the profile's one deck."""
    twice = _Recorder({NIU_4: (0.1, 0.2), NIU_4 + " ": (0.1, 0.8)})
    monkeypatch.setattr("vision.reader.Reader.load", lambda *_args, **_kwargs: twice)
    assert main(["score", str(photo), "--json", *options]) == 0
    hands = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert [hand["status"] for hand in hands if "status" in hand] == statuses

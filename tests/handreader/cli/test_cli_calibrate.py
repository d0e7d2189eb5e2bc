"""``handreader calibrate`` end to end with a stand-in recognizer (tests/web_fakes.py's
``DeckFakeReader``): the grid checks, a contact sheet never written over a photo nor before
the deck is saved, and a deck replaced only when nothing of it is lost or ``--replace`` says so
(docs/cli.md, Decks)."""

from __future__ import annotations

import os
from pathlib import Path

import cv2
import numpy as np
import pytest
from web_fakes import DeckFakeReader

from handreader.cli import main
from handreader.store.decks import FolderDeckStore
from vision.calibration import grid_order


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> DeckFakeReader:
    """The stand-in recognizer ``Reader.load`` gives; the data folder and the working folder
    (where the contact sheet goes by default) under ``tmp_path``."""
    reader = DeckFakeReader({})
    monkeypatch.setattr("vision.reader.Reader.load", lambda *args, **kwargs: reader)
    monkeypatch.setenv("HANDREADER_DATA", str(tmp_path / "data"))
    monkeypatch.delenv("HANDREADER_DATABASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    return reader


def _photos(folder: Path, *names: str) -> list[str]:
    """One-card photos of their own (a pixel set by the name: the same pixels count once)."""
    paths = []
    for name in names:
        image = np.random.default_rng(1).integers(60, 120, (240, 320, 3), dtype=np.uint8)
        image[0, 0] = [sum(name.encode()) % 256, len(name), 7]
        path = folder / name
        cv2.imwrite(str(path), image)
        paths.append(str(path))
    return paths


def _grid(folder: Path) -> str:
    path = folder / "deck.png"
    cv2.imwrite(str(path), np.full((700, DeckFakeReader.GRID_WIDTH + 100, 3), 200, np.uint8))
    return str(path)


def _one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.startswith("handreader calibrate: error: "), err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err.strip()


def _cards(name: str) -> int:
    return len(FolderDeckStore().get(name).prototypes)


def test_a_grid_turned_a_half_turn_is_refused_and_nothing_is_written(
    fake: DeckFakeReader, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It was saved with every card's samples taken for the opposite cell's card."""
    fake.grid_reads = {cell: grid_order()[51 - cell] for cell in range(52)}
    assert main(["calibrate", "--name", "grot", "--grid", _grid(tmp_path)]) == 2
    error = _one_line_error(capsys)
    assert "the grid is upside down" in error and "turn the photo a half turn" in error
    assert FolderDeckStore().names() == [] and not (tmp_path / "grot-calibration.png").exists()


def test_a_swapped_pair_in_a_grid_is_named_on_stderr(
    fake: DeckFakeReader, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.grid_reads = {19: "8H", 20: "7H"}
    assert main(["calibrate", "--name", "swapped", "--grid", _grid(tmp_path)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert [line.split(": ", 3)[-1] for line in err] == [
        "row 2, column 7 (7H) taken for 7H, but its corners read 8H for certain: "
        "is 8H in the place of 7H?",
        "row 2, column 8 (8H) taken for 8H, but its corners read 7H for certain: "
        "is 7H in the place of 8H?",
    ]
    assert all(line.startswith("handreader calibrate: warning: ") for line in err)
    assert _cards("swapped") == 52


@pytest.mark.parametrize("spelling", ["same", "dotted", "link", "hard link", "default"])
def test_a_contact_sheet_that_is_one_of_the_photos_is_refused_before_reading(
    fake: DeckFakeReader,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    spelling: str,
) -> None:
    """The photo was overwritten by the contact sheet."""

    def load(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the models were loaded")

    monkeypatch.setattr("vision.reader.Reader.load", load)
    (tmp_path / "sub").mkdir()
    photo = Path(_photos(tmp_path, "9C.png")[0])
    before = photo.read_bytes()
    sheet = {
        "same": str(photo),
        "dotted": str(tmp_path / "sub" / ".." / "9C.png"),
        "link": str(tmp_path / "sub" / "link.png"),
        "hard link": str(tmp_path / "sub" / "hard.png"),
        "default": None,
    }[spelling]
    if spelling == "link":
        os.symlink(photo, sheet)  # type: ignore[arg-type]
    if spelling == "hard link":
        os.link(photo, sheet)  # type: ignore[arg-type]
    name = "t"
    if spelling == "default":  # the default sheet, NAME-calibration.png, given as a photo
        name = "9C"
        photo = photo.rename(tmp_path / "9C-calibration.png")
    argv = ["calibrate", "--name", name, str(photo)] + (["--sheet", sheet] if sheet else [])
    assert main(argv) == 2
    assert f"is the photo {str(photo)!r}: name another file with --sheet" in (
        _one_line_error(capsys)
    )
    assert photo.read_bytes() == before and FolderDeckStore().names() == []


def test_a_deck_is_replaced_whole_only_when_no_card_is_lost_or_with_replace(
    fake: DeckFakeReader, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 52-card deck became a 1-card deck, silently."""
    assert main(["calibrate", "--name", "mine", *_photos(tmp_path, "AS.png", "KH.png")]) == 0
    assert capsys.readouterr().out.startswith("deck 'mine': 2 cards")
    made = FolderDeckStore().get("mine").created

    assert main(["calibrate", "--name", "mine", *_photos(tmp_path, "AS.png")]) == 2
    assert (
        "deck 'mine' has 2 cards; this calibration has 1 and would lose KH: give --replace to "
        "replace it, or another --name"
    ) in _one_line_error(capsys)
    assert _cards("mine") == 2

    photos = _photos(tmp_path, "AS.png", "KH.png", "QD.png")  # keeps every card: replaced
    assert main(["calibrate", "--name", "mine", *photos]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"deck 'mine' replaced: it had 2 cards, made {made}"
    assert out[1].startswith("deck 'mine': 3 cards") and _cards("mine") == 3

    assert main(["calibrate", "--name", "mine", "--replace", *_photos(tmp_path, "AS.png")]) == 0
    assert capsys.readouterr().out.startswith("deck 'mine' replaced: it had 3 cards, made ")
    assert _cards("mine") == 1


def test_a_deck_that_cannot_be_read_is_replaced_only_with_replace(
    fake: DeckFakeReader, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    decks = tmp_path / "data" / "decks"
    decks.mkdir(parents=True)
    (decks / "mine.json").write_text("{not json")
    photo = _photos(tmp_path, "AS.png")
    assert main(["calibrate", "--name", "mine", *photo]) == 2
    assert "deck 'mine' exists but cannot be read (deck profile 'mine' is corrupt" in (
        _one_line_error(capsys)
    )
    assert (decks / "mine.json").read_text() == "{not json"
    assert main(["calibrate", "--name", "mine", "--replace", *photo]) == 0
    assert "replaced: it had a profile that could not be read" in capsys.readouterr().out
    assert _cards("mine") == 1


def test_a_deck_that_cannot_be_saved_leaves_the_contact_sheet_as_it_was(
    fake: DeckFakeReader, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The sheet was written before the deck was saved, so a failed run overwrote it."""
    (tmp_path / "data" / "decks" / "mine.json").mkdir(parents=True)  # in the deck file's way
    sheet = tmp_path / "mine-calibration.png"
    sheet.write_bytes(b"the sheet of the deck saved before")
    assert main(["calibrate", "--name", "mine", *_photos(tmp_path, "AS.png")]) == 2
    assert "cannot save deck 'mine': a folder of its file's name is there" in (
        _one_line_error(capsys)
    )
    assert sheet.read_bytes() == b"the sheet of the deck saved before"
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "AS.png",
        "data",
        "mine-calibration.png",
    ]  # no half-made sheet left beside it


def test_the_contact_sheet_is_written_once_the_deck_is_saved(
    fake: DeckFakeReader, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sheet = tmp_path / "sheet.png"
    argv = ["calibrate", "--name", "mine", "--sheet", str(sheet), *_photos(tmp_path, "AS.png")]
    assert main(argv) == 0
    assert cv2.imread(str(sheet)) is not None and _cards("mine") == 1
    assert capsys.readouterr().out.rstrip().endswith(f"contact sheet {sheet}")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["AS.png", "data", "sheet.png"]


def test_a_deck_made_with_other_models_is_read_with_after_a_warning(
    fake: DeckFakeReader, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It was used silently; the API reports it as ``models_match``."""
    from vision.calibration import new_profile

    assert main(["calibrate", "--name", "mine", *_photos(tmp_path, "AS.png")]) == 0
    vector = np.eye(1, 128, dtype=np.float32)[0]
    FolderDeckStore().save(new_profile("old", {"AS": [vector]}, "another-classifier", []))
    capsys.readouterr()
    photo = _photos(tmp_path, "hand.png")[0]
    assert main(["read", photo, "--deck", "mine"]) == 0
    assert capsys.readouterr().err == ""
    assert main(["read", photo, "--deck", "old"]) == 0
    assert capsys.readouterr().err == (
        "handreader read: warning: deck 'old' was calibrated with other models than those "
        "loaded and may read worse than no deck: calibrate it again\n"
    )
    assert fake.deck_calls[-1] == "old"  # read with all the same
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text('{"image": "hand.png", "cards": ["AS"]}\n')
    assert main(["eval", str(manifest), "--deck", "old"]) == 0
    printed = capsys.readouterr()
    assert printed.err.startswith("handreader eval: warning: deck 'old' was calibrated")
    assert printed.out.startswith(f"{manifest}: 1 photo, 1 card\n")  # one of each: singular
    assert "on 1 one-card photo: " in printed.out

    models = tmp_path / "models"
    models.mkdir()
    for name in ("detector.onnx", "classifier.onnx"):
        (models / name).write_bytes(b"")
    (models / "manifest.json").write_text(
        '{"detector": {"file": "detector.onnx"}, '
        '"classifier": {"file": "classifier.onnx", "sha256": "fake-classifier"}}'
    )
    assert main(["decks", "--models", str(models)]) == 0
    mine, old = capsys.readouterr().out.splitlines()  # sorted by name
    assert old.endswith("; calibrated with other models than --models: calibrate it again")
    assert old.startswith("old: 1 card, made ") and mine.startswith("mine: 1 card, made ")
    assert "other models" not in mine


def test_decks_with_a_models_folder_that_is_none_is_one_line(
    fake: DeckFakeReader, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A mistyped --models silently turned off the remark on decks made with other models."""
    assert main(["decks", "--models", str(tmp_path / "nope")]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    missing = str(tmp_path / "nope" / "manifest.json")
    assert err == f"handreader decks: error: no model manifest at {missing!r}\n"

"""`handreader train` names a bad argument before it needs torch or starts any work."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from handreader.cli import main


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--classifier-widths", "16,32,64"], "--classifier-widths must be four positive"),
        (["--classifier-widths", "16,32,x,96"], "got '16,32,x,96'"),
        (["--classifier-widths", "16,0,64,96"], "--classifier-widths must be four positive"),
        (["--scenes", "0"], "--scenes must be at least 1, got 0"),
        (["--finetune-epochs", "-1"], "--finetune-epochs must be 0 or more"),
        (["--closeup-scenes", "-5"], "--closeup-scenes must be 0 or more, got -5"),
        (["--card-scenes", "-1"], "--card-scenes must be 0 or more, got -1"),
        (["--glyph-crops", "-3"], "--glyph-crops must be 0 or more, got -3"),
        (["--card-epochs", "0"], "--card-epochs must be at least 1, got 0"),
        (["--verifier-scenes", "-2"], "--verifier-scenes must be 0 or more, got -2"),
        (["--verifier-epochs", "0"], "--verifier-epochs must be at least 1, got 0"),
        (["--only-verifier", "--verifier-scenes", "0"], "--only-verifier needs --verifier-scenes"),
        (["--photos", "no/such.jsonl"], "no such manifest file"),
        (["--shape-jitter", "1.5"], "--shape-jitter must be a share from 0 to 1, got 1.5"),
        (["--shape-jitter", "-0.1"], "--shape-jitter must be a share from 0 to 1, got -0.1"),
        (["--device", "tpu"], "device 'tpu': expected auto, cpu, cuda or cuda:N"),
        (["--device", "cuda:x"], "device 'cuda:x': expected"),
        (["--workers", "0"], "--workers must be at least 1, got 0"),
        (["--photos", "BAD"], "line 1 is not a manifest entry"),
        (["--photos", "EMPTY"], "no row of split train"),
        (["--minutes", "5"], "--minutes is an option of --round: give --round with it"),
        (["--promote"], "--promote is an option of --round"),
        (["--set", "closeup_scenes=1"], "--set is an option of --round"),
        (["--evaluate", "m2"], "--evaluate is an option of --round"),
        (["--realdata", "r"], "--realdata is an option of --round"),
        (["--round", "--scenes", "10"], "--scenes is an option of the full training, not of"),
        (["--round", "--photos", "EMPTY"], "--photos is an option of the full training"),
        (["--round", "--minutes", "inf"], "--minutes must be a positive number, got inf"),
        (["--round", "--minutes", "nan"], "--minutes must be a positive number, got nan"),
        (["--round", "--minutes", "1e400"], "--minutes must be a positive number, got inf"),
    ],
)
def test_bad_training_arguments_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], arguments: list[str], message: str
) -> None:
    (tmp_path / "bad.jsonl").write_text('{"image": "a.jpg"\n')
    (tmp_path / "empty.jsonl").write_text("")
    names = {"BAD": str(tmp_path / "bad.jsonl"), "EMPTY": str(tmp_path / "empty.jsonl")}
    arguments = [names.get(argument, argument) for argument in arguments]
    work = tmp_path / "runs"
    status = main(["train", "--work", str(work), "--models", str(tmp_path / "m"), *arguments])
    assert status == 2
    assert message in capsys.readouterr().err
    assert not work.exists()  # nothing generated or trained


def test_the_recipe_writes_its_models_into_its_work_folder_unless_told(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Never over the shipped ``models/`` unasked: the recipe's default is WORK/models."""
    pytest.importorskip("torch")
    pytest.importorskip("ultralytics")
    planned: list[Any] = []
    monkeypatch.setattr("training.pipeline.run_training", lambda plan: planned.append(plan))
    assert main(["train", "--work", str(tmp_path / "w")]) == 0
    assert planned[0].models_dir == tmp_path / "w" / "models"
    (tmp_path / "file").write_text("")
    assert main(["train", "--work", str(tmp_path / "w"), "--models", str(tmp_path / "file")]) == 2
    assert "is a file: name a folder" in capsys.readouterr().err


def test_a_round_starts_from_the_shipped_models_wherever_it_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("ultralytics")
    from vision.reader import default_models_dir

    if not (default_models_dir() / "manifest.json").is_file():
        pytest.skip("no shipped models")
    started: list[Any] = []
    monkeypatch.setattr("training.round.run_from_arguments", lambda args: started.append(args) or 0)
    monkeypatch.chdir(tmp_path)  # a folder with no models/ of its own
    assert main(["train", "--round", "--work", str(tmp_path / "w")]) == 0
    assert started[0].models == default_models_dir() and started[0].minutes == 120.0


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        # ultralytics would round 300 up to 320 and train at that size, the export at 300
        (["--imgsz", "300"], "--imgsz must be a multiple of 32 from 32 to 1280, got 300"),
        (["--imgsz", "0"], "--imgsz must be a multiple of 32 from 32 to 1280, got 0"),
        (["--imgsz", "-32"], "--imgsz must be a multiple of 32 from 32 to 1280, got -32"),
        (["--imgsz", "1312"], "--imgsz must be a multiple of 32 from 32 to 1280, got 1312"),
        (["--photos", "NO_BOX"], "no_box.jsonl: line 2: object 1 has no 'box_xyxy'"),
        (["--photos", "BAD_BOX"], "bad_box.jsonl: line 1: object 2's 'box_xyxy' must be"),
    ],
)
def test_a_bad_image_size_or_photo_box_is_named_without_torch(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    arguments: list[str],
    message: str,
) -> None:
    """Named in one line before any work, with torch and ultralytics not importable (the
    train extra's absence would be named instead if the check came after them)."""
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch raises ImportError
    monkeypatch.setitem(sys.modules, "ultralytics", None)
    good = {"card": "7H", "box_xyxy": [1, 2, 11, 22], "kind": "index"}
    rows = {
        "no_box.jsonl": [
            {"image": "a.jpg", "cards": ["7H"], "split": "train", "objects": [good]},
            {"image": "b.jpg", "cards": ["7H"], "split": "train", "objects": [{"card": "7H"}]},
        ],
        "bad_box.jsonl": [
            {"image": "a.jpg", "cards": ["7H"], "split": "train",
             "objects": [good, {"card": "7H", "box_xyxy": [1, 2, 11]}]},
        ],
    }  # fmt: skip
    for name, lines in rows.items():
        (tmp_path / name).write_text("".join(json.dumps(line) + "\n" for line in lines))
    names = {"NO_BOX": str(tmp_path / "no_box.jsonl"), "BAD_BOX": str(tmp_path / "bad_box.jsonl")}
    arguments = [names.get(argument, argument) for argument in arguments]
    work = tmp_path / "runs"
    status = main(["train", "--work", str(work), "--models", str(tmp_path / "m"), *arguments])
    err = capsys.readouterr().err
    assert status == 2
    assert err.count("\n") == 1 and message in err, err
    assert not work.exists()


def test_every_option_with_a_default_says_it_in_its_help() -> None:
    from handreader.cli import build_parser

    train = build_parser().commands["train"]  # type: ignore[attr-defined]
    for action in train._actions:
        if action.default in (None, False, [], "==SUPPRESS==") or not action.option_strings:
            continue
        assert action.help is not None, action.option_strings
        assert "default" in action.help, action.option_strings
        if isinstance(action.default, int):
            assert str(action.default) in action.help, action.option_strings

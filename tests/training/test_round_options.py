"""A training round's options are checked before anything is drawn or trained
(training/round_options.py): each ``--set`` number finite and in its field's range, and the
real-photo folder holding the manifests the round reads, each of them readable."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from handreader.cli import main
from training.round_options import DETECTOR_LAYERS, check_realdata, plan_changes


@pytest.fixture
def nothing_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Drawing a scene or running a round fails the test: the mistake must be named first."""

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the round started")

    for name in ("_draw", "run_round", "evaluate_candidate"):
        monkeypatch.setattr(f"training.round.{name}", refuse)


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ("classifier_learning_rate=nan", "classifier_learning_rate takes a finite number"),
        ("detector_learning_rate=inf", "detector_learning_rate takes a finite number"),
        ("detector_learning_rate=-inf", "detector_learning_rate takes a finite number"),
        ("distill_weight=1e400", "distill_weight takes a finite number"),  # read as inf
        ("distill_temperature=0", "must be positive"),  # the readings are divided by it
        ("distill_temperature=-1", "must be at least 0"),
        ("distill_weight=1.5", "a share of the loss: from 0 to 1"),
        ("classifier_learning_rate=0", "must be positive"),
        (f"detector_freeze={DETECTOR_LAYERS}", f"the detector has {DETECTOR_LAYERS} layers"),
        ("detector_imgsz=300", "the detector's size must be a multiple of 32 from 32 to 1280"),
        ("detector_imgsz=1312", "the detector's size must be a multiple of 32 from 32 to 1280"),
        ("classifier_strided=4", "the classifier has 3 blocks to stride"),
    ],
)
def test_a_plan_number_out_of_its_range_is_named(item: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as refused:
        plan_changes([item])
    assert str(refused.value).startswith(f"--set {item!r}: ")


def test_the_ends_of_each_range_are_taken() -> None:
    """distill_weight from 0 to 1 (training.distill.distillation_loss); the detector keeps at
    most all its layers but the head; a size of a multiple of the stride."""
    assert plan_changes(
        ["distill_weight=0", "distill_weight=1", "distill_temperature=0.5", "detector_imgsz=416"]
    ) == {"distill_weight": 1.0, "distill_temperature": 0.5, "detector_imgsz": 416}
    assert plan_changes([f"detector_freeze={DETECTOR_LAYERS - 1}"]) == {
        "detector_freeze": DETECTOR_LAYERS - 1
    }


def _models(root: Path) -> Path:
    models = root / "models"
    models.mkdir()
    (models / "manifest.json").write_text("{}")
    return models


def _real_folder(root: Path, *names: str) -> Path:
    for name in names:
        (root / name).mkdir(parents=True)
        row = {"image": "a.jpg", "cards": ["7H"], "split": "train"}
        (root / name / "manifest.jsonl").write_text(json.dumps(row) + "\n")
    return root


@pytest.mark.parametrize(
    "item", ["classifier_learning_rate=nan", "detector_learning_rate=inf", "distill_temperature=0"]
)
def test_train_round_refuses_the_number_before_anything_is_written(
    item: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], nothing_runs: None
) -> None:
    work = tmp_path / "w"
    argv = ["train", "--round", "--work", str(work), "--models", str(_models(tmp_path))]
    assert main([*argv, "--minutes", "1", "--set", item]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"handreader train: error: --set {item!r}: ")
    assert len(err.splitlines()) == 1
    assert not work.exists()  # no plan.json, no scene


def test_a_real_folder_without_the_manifests_a_round_trains_on_is_named_before_drawing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], nothing_runs: None
) -> None:
    """``--realdata REALDATA/tables`` (one folder, not the folder of folders) was taken, every
    scene drawn, and only then the missing ``boxes/manifest.jsonl`` found."""
    tables = tmp_path / "realdata" / "tables"
    tables.mkdir(parents=True)
    (tables / "manifest.jsonl").write_text('{"image": "a.jpg", "cards": ["7H"]}\n')
    work = tmp_path / "w"
    argv = ["train", "--round", "--work", str(work), "--models", str(_models(tmp_path))]
    assert main([*argv, "--minutes", "1", "--realdata", str(tables)]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"handreader train: error: --realdata {str(tables)!r} holds no boxes/manifest.jsonl or "
        "tables/manifest.jsonl: a round trains on the real folders boxes/ and tables/ (name "
        "the folder above them)\n"
    )
    assert not work.exists()


@pytest.mark.parametrize(
    ("folders", "trains", "message"),
    [
        (("boxes",), True, "holds no tables/manifest.jsonl: a round trains on"),
        (("singles", "crops"), True, "holds no boxes/manifest.jsonl or tables/manifest.jsonl"),
        ((), False, "holds no real folder with a manifest.jsonl (boxes/, tables/, singles/"),
    ],
)
def test_check_realdata_names_the_manifests_missing(
    tmp_path: Path, folders: tuple[str, ...], trains: bool, message: str
) -> None:
    realdata = _real_folder(tmp_path / "realdata", *folders)
    with pytest.raises(ValueError, match=re.escape(message)):
        check_realdata(realdata, trains)


def test_check_realdata_reads_each_manifest_and_evaluation_needs_only_one(tmp_path: Path) -> None:
    """Only ``--evaluate`` (which trains nothing) takes a folder without ``boxes/`` and
    ``tables/``; a manifest that would fail the report after the training is named now."""
    realdata = _real_folder(tmp_path / "realdata", "boxes", "tables", "singles")
    check_realdata(realdata)
    check_realdata(_real_folder(tmp_path / "other", "singles"), trains=False)
    row = json.dumps({"image": "a.jpg", "cards": ["7H"], "split": "valid"})
    (realdata / "singles" / "manifest.jsonl").write_text(row + "\n" + row + "\n")
    with pytest.raises(ValueError, match=re.escape("lines 1 and 2 both name the photo 'a.jpg'")):
        check_realdata(realdata)
    (realdata / "singles" / "manifest.jsonl").write_bytes(b"\xff\n")
    with pytest.raises(ValueError, match=re.escape("singles/manifest.jsonl: not UTF-8 text")):
        check_realdata(realdata)
    box = {"card": "7H", "box_xyxy": [1, 2, 11, 22], "kind": "index"}
    rows = [{"image": f"{name}.jpg", "cards": ["7H"], "split": "train"} for name in "ab"]
    rows[1]["objects"] = [box, {"card": "7H", "kind": "index"}]  # a box the round would train on
    (realdata / "boxes" / "manifest.jsonl").write_text(
        "".join(map("{}\n".format, map(json.dumps, rows)))
    )
    (realdata / "singles" / "manifest.jsonl").write_text("")
    with pytest.raises(ValueError, match=re.escape("line 2: object 2 has no 'box_xyxy'")):
        check_realdata(realdata)

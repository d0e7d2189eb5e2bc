"""The prepared GPU training script (scripts/train_gpu.py) and the device choice of training.

The report and the presets are checked without torch; the device rules and a smoke-sized run
of the whole script (train, export, read with the new and the shipped models, report) need the
train extra and run in CI's training tier, on the CPU.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("train_gpu", ROOT / "scripts" / "train_gpu.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["train_gpu"] = module
    spec.loader.exec_module(module)
    return module


def test_presets_only_name_fields_of_the_training_plan(tmp_path: Path) -> None:
    script = _script()
    for size in script.PRESETS:
        plan = script.plan_for(size, tmp_path, None, "cpu")
        assert plan.models_dir == tmp_path / "models"  # never the shipped models/
        assert plan.photo_manifests == ()
    full, quick = (
        script.plan_for("full", tmp_path, None, "cpu"),
        script.plan_for("quick", tmp_path, None, "cpu"),
    )
    # larger than the shipped CPU recipe, the full size larger than the quick one
    from training.pipeline import TrainingPlan

    cpu = TrainingPlan(work_dir=tmp_path, models_dir=tmp_path)
    for field in ("train_scenes", "glyph_crops", "detector_epochs", "classifier_epochs"):
        assert getattr(full, field) > getattr(quick, field)
        assert getattr(full, field) > getattr(cpu, field)
    with_photos = script.plan_for("quick", tmp_path, tmp_path / "realdata", "cpu")
    assert with_photos.photo_manifests == (tmp_path / "realdata" / "crops" / "manifest.jsonl",)


def _figures(f1: float, top1: float | None, photos: int = 10) -> dict[str, Any]:
    return {"photos": photos, "f1": f1, "top1": top1}


def test_report_puts_shipped_and_new_figures_side_by_side() -> None:
    script = _script()
    report = {
        "size": "quick",
        "device": "cuda:0",
        "models": "runs-gpu/models",
        "train_minutes": 12.25,
        "eval_minutes": 1.5,
        "new": {"held-out": _figures(0.9512, 0.85, 400), "crops": _figures(0.9, 0.93, 260)},
        "shipped": {"held-out": _figures(0.9246, 0.8143, 400), "crops": _figures(0.9365, None)},
        "files": {"detector.onnx": 12_394_283, "classifier.onnx": 735_401},
    }
    text = script.report_markdown(report)
    assert "size quick, on cuda:0" in text
    assert "| held-out | 400 | 0.9246 | 0.9512 | 0.8143 | 0.8500 |" in text
    assert "| crops | 260 | 0.9365 | 0.9000 |  | 0.9300 |" in text  # no shipped top-1: blank
    assert "detector.onnx 12.4 MB, classifier.onnx 0.7 MB" in text
    assert "Training 12.2 min" in text or "Training 12.3 min" in text


def test_report_says_where_the_held_out_shortfall_comes_from() -> None:
    """The control rows name the limit: new decks, new scenes, or the fit itself."""
    script = _script()
    held, control, trained = script.HELD_OUT_ROW, script.CONTROL_ROW, script.TRAINED_ROW

    def rows(h: float, c: float | None, t: float | None) -> dict[str, Any]:
        figures = {held: _figures(h, None, 400)}
        if c is not None:
            figures[control] = _figures(c, None, 400)
        if t is not None:
            figures[trained] = _figures(t, None, 400)
        return figures

    assert script.diagnosis(rows(0.93, None, 0.99)) == ""  # no control row, no verdict
    decks = script.diagnosis(rows(0.90, 0.95, 0.96))
    assert "held-out F1 0.9000, control 0.9500, training scenes 0.9600" in decks
    assert "held-out decks are read worse than the training decks" in decks
    scenes = script.diagnosis(rows(0.93, 0.935, 0.99))
    assert "new scenes are read worse than the training scenes" in scenes
    fit = script.diagnosis(rows(0.9323, 0.9285, 0.9348))
    assert "read no better than new ones" in fit
    # models not trained on the run's scenes are judged on the held-out and control rows only
    shipped = script.diagnosis(rows(0.93, 0.935, 0.99), trained_on=False)
    assert "training scenes" not in shipped and "no gap of decks" in shipped
    deck_gap = script.diagnosis(rows(0.90, 0.95, None), trained_on=False)
    assert "held-out decks are read worse" in deck_gap
    report = {
        "size": "quick",
        "device": "cuda:0",
        "models": "m",
        "train_minutes": 1.0,
        "eval_minutes": 1.0,
        "new": rows(0.97, 0.975, 0.99),
        "shipped": rows(0.9323, 0.9285, 0.9348),
        "files": {},
    }
    text = script.report_markdown(report)
    assert "The new models: held-out F1 0.9700" in text and "new scenes are read worse" in text
    assert "The shipped models: held-out F1 0.9323, control 0.9285:" in text


def _refusal(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """What the script prints when it refuses ``args`` (it must: exit status 2)."""
    with pytest.raises(SystemExit) as stopped:
        _script().main(args)
    assert stopped.value.code == 2
    return capsys.readouterr().err


@pytest.mark.train
def test_realdata_without_crops_is_refused_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work, realdata = str(tmp_path / "w"), str(tmp_path)
    args = ["--size", "smoke", "--device", "cpu", "--work", work, "--realdata", realdata]
    assert "no crops/manifest.jsonl" in _refusal(args, capsys)
    assert not (tmp_path / "w").exists()


@pytest.mark.train
def test_device_names() -> None:
    import torch

    from training.fitting import resolve_device, ultralytics_device

    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    assert resolve_device("auto") == ("cuda:0" if gpus else "cpu")
    assert resolve_device(" CPU ") == "cpu"
    assert ultralytics_device("cpu") == "cpu"
    assert ultralytics_device("cuda:3") == "3"
    with pytest.raises(ValueError, match=r"cuda:\d+.*sees \d+ CUDA GPU"):
        resolve_device(f"cuda:{gpus}")  # one past the last GPU
    with pytest.raises(ValueError, match="expected auto, cpu, cuda or cuda:N"):
        resolve_device("tpu")


@pytest.mark.train
def test_gpu_sizes_refuse_a_machine_without_a_gpu(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("torch sees a CUDA GPU: the refusal is for a machine without one")
    err = _refusal(["--size", "quick", "--work", str(tmp_path / "w")], capsys)
    assert "sized for a GPU and torch sees none" in err
    assert not (tmp_path / "w").exists()  # nothing drawn, nothing trained


@pytest.mark.train
@pytest.mark.skipif(
    shutil.which("rsvg-convert") is None, reason="needs librsvg2-bin and the card decks"
)
def test_smoke_size_trains_evaluates_and_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = _script()
    work = tmp_path / "work"
    assert script.main(["--size", "smoke", "--device", "cpu", "--work", str(work)]) == 0
    report = json.loads((work / "report.json").read_text())
    assert report["device"] == "cpu"
    assert set(report["files"]) == {
        "detector.onnx",
        "classifier.onnx",
        "card.onnx",
        "verifier.onnx",
    }
    for models in ("new", "shipped"):
        for name in (script.HELD_OUT_ROW, script.CONTROL_ROW, script.TRAINED_ROW):
            row = report[models][name]
            assert row["photos"] == 3 and 0.0 <= row["f1"] <= 1.0
    # the control scenes are the training decks' scenes from CONTROL_START on
    names = sorted(p.stem for p in (work / "scenes-control" / "images").glob("*.jpg"))
    assert names == [f"{script.CONTROL_START + k:07d}" for k in range(3)]
    # the shipped models read the same three scenes far better than a one-epoch training
    assert report["shipped"]["held-out synthetic decks"]["f1"] > 0.5
    manifest = json.loads((work / "models" / "manifest.json").read_text())
    assert manifest["training"]["device"] == "cpu"  # where it ran, not "auto"
    printed = capsys.readouterr().out
    assert "| held-out synthetic decks | 3 |" in printed
    assert f"| {script.CONTROL_ROW} | 3 |" in printed and "The new models: held-out F1" in printed
    assert (work / "report.md").read_text().startswith("# GPU training, size smoke, on cpu")


def test_widths_and_epochs_within_a_lease() -> None:
    script = _script()
    assert script.parse_widths("48,96,192,192") == (48, 96, 192, 192)
    for bad in ("32,64,128", "32,64,x,128", "0,64,128,128", ""):
        with pytest.raises(ValueError, match="four positive channel counts"):
            script.parse_widths(bad)
    # 10 minutes at 0.02 s a step and 500 steps an epoch (10 s): 51 epochs in 85 % of them
    assert script.epochs_within(10, 0.02, 500, most=80) == 51
    assert script.epochs_within(10, 0.02, 500, most=30) == 30
    assert script.epochs_within(0.01, 5.0, 500, most=30) == 1  # always at least one


def _bundle(tmp_path: Path) -> Path:
    """A bundle of 240 training crops (two copies of 120) and 60 valid ones: each crop a dark
    mark whose place follows its label."""
    import numpy as np

    from training.crop_bundle import main as bundle_main

    rng = np.random.default_rng(0)
    for name, count in (("train", 120), ("valid", 60)):
        labels = rng.integers(0, 6, count)
        crops = np.full((count, 32, 32, 3), 225, np.uint8)
        for crop, label in zip(crops, labels, strict=True):
            crop[4 + int(label) * 4 : 10 + int(label) * 4, 8:24] = 25
        np.savez(tmp_path / f"{name}.npz", crops=crops, labels=labels)
    out = tmp_path / "bundle"
    assert (
        bundle_main(
            ["pack", str(out), f"{tmp_path / 'train.npz'}:2", f"{tmp_path / 'valid.npz'}:valid"]
        )
        == 0
    )
    return out


def _crops_args(bundle: Path, work: Path, epochs: str, *extra: str) -> list[str]:
    """A --crops run of a tiny network on the CPU, 32 crops a batch."""
    return [
        *("--crops", str(bundle), "--work", str(work), "--device", "cpu", "--epochs", epochs),
        *("--batch", "32", "--widths", "8,16,16,24", *extra),
    ]


@pytest.mark.train
def test_crops_run_trains_the_classifier_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import torch

    script = _script()
    bundle, work = _bundle(tmp_path), tmp_path / "work"
    args = _crops_args(bundle, work, "2", "--export")
    assert script.main(args) == 0
    report = json.loads((work / "crops-report.json").read_text())
    assert (report["train_crops"], report["valid_crops"], report["epochs"]) == (240, 60, 2)
    assert report["device"] == "cpu" and report["widths"] == [8, 16, 16, 24]
    best = torch.load(work / "classifier_best.pt", weights_only=False)
    assert "optimizer" not in best and best["widths"] == [8, 16, 16, 24]  # weights only
    assert "optimizer" in torch.load(work / "classifier_last.pt", weights_only=False)
    assert (work / "models" / "classifier.onnx").is_file()
    out = capsys.readouterr().out
    assert "240 train crops, 60 valid; 2 epochs" in out
    assert "classifier epoch 2:" in out
    # the int8 export has the reader's two outputs
    import onnxruntime

    session = onnxruntime.InferenceSession(str(work / "models" / "classifier.onnx"))
    assert [o.name for o in session.get_outputs()] == ["logits", "embedding"]
    # a rerun resumes: nothing left to train, the same epoch count kept
    assert script.main(args[:-1]) == 0
    assert json.loads((work / "crops-report.json").read_text())["epochs"] == 2


@pytest.mark.train
def test_crops_run_distils_a_strided_network_from_a_teacher(tmp_path: Path) -> None:
    import torch

    script = _script()
    bundle, teacher_work, work = _bundle(tmp_path), tmp_path / "teacher", tmp_path / "work"
    assert script.main(_crops_args(bundle, teacher_work, "1", "--export")) == 0
    teacher = teacher_work / "models" / "classifier.onnx"
    args = _crops_args(bundle, work, "1", "--strided", "2", "--teacher", str(teacher), "--export")
    assert script.main(args) == 0
    report = json.loads((work / "crops-report.json").read_text())
    assert report["strided"] == 2 and report["teacher"] == str(teacher)
    assert torch.load(work / "classifier_best.pt", weights_only=False)["strided"] == 2
    import onnx

    graph = onnx.load(str(work / "models" / "classifier-float.onnx")).graph
    strides = [
        max(next((list(a.ints) for a in node.attribute if a.name == "strides"), [1]))
        for node in graph.node
        if node.op_type == "Conv"
    ]
    assert strides == [1, 2, 1, 2, 1, 1, 1]


@pytest.mark.train
def test_crops_run_sizes_its_epochs_to_the_minutes(tmp_path: Path) -> None:
    script = _script()
    bundle, work = _bundle(tmp_path), tmp_path / "work"
    args = _crops_args(bundle, work, "50", "--minutes", "0.02")
    assert script.main(args) == 0
    report = json.loads((work / "crops-report.json").read_text())
    assert report["step_seconds"] > 0
    # 8 steps an epoch: 0.02 minutes hold far fewer than 50 epochs
    expected = script.epochs_within(0.02, report["step_seconds"], 8, 50)
    assert report["epochs"] == expected < 50


@pytest.mark.train
@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--widths", "1,2,3"], "four positive channel counts"),
        (["--shape-jitter", "1.5"], "--shape-jitter 1.5: expected 0..1"),
        (["--epochs", "0"], "must be positive"),
        (["--init", "/nowhere/ckpt.pt"], "no such checkpoint"),
        (["--strided", "4"], "--strided 4: expected 0 to 3 blocks"),
        (["--teacher", "/nowhere/classifier.onnx"], "no such ONNX classifier"),
    ],
)
def test_crops_run_refuses_bad_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    args = ["--crops", str(tmp_path), "--device", "cpu", "--work", str(tmp_path / "w"), *extra]
    assert message in _refusal(args, capsys)
    assert not (tmp_path / "w").exists()


@pytest.mark.train
def test_crops_run_names_a_folder_that_is_no_bundle(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--crops", str(tmp_path), "--device", "cpu", "--work", str(tmp_path / "w")]
    assert "no bundle.json (not a crop bundle)" in _refusal(args, capsys)


def test_budget_size_scales_its_scenes_with_the_minutes_and_a_rerun_keeps_them(
    tmp_path: Path,
) -> None:
    script = _script()
    ten = script.budget_counts("budget", None)
    five = script.budget_counts("budget", 5.0)
    for key in script.SCALED_BY_MINUTES:
        assert five[key] == round(ten[key] / 2)
    assert five["detector_epochs"] == ten["detector_epochs"]  # epochs stay
    # the casino scenes join the detector's and the verifier's data at every size but smoke's 2
    for size in ("full", "quick", "budget"):
        counts = script.PRESETS[size]
        assert counts["casino_scenes"] == counts["train_scenes"] // 4
    plan = script.plan_for("budget", tmp_path, None, "cpu", five)
    assert plan.casino_scenes == five["casino_scenes"]
    assert plan.casino_config == ROOT / "datasets" / "casino.yaml"
    # a run records its counts when it begins; a rerun with other minutes resumes the same run
    work = tmp_path / "work"
    assert script.run_counts(work, "budget", 5.0) == five
    assert script.run_counts(work, "budget", 20.0) == five
    assert json.loads((work / "run.json").read_text())["minutes"] == 5.0


def test_minutes_go_with_the_budget_size(capsys: pytest.CaptureFixture[str]) -> None:
    err = _refusal(["--size", "quick", "--minutes", "5", "--device", "cpu"], capsys)
    assert "--minutes must be positive and goes with --size budget" in err
    err = _refusal(["--pack", "/nonexistent/pack.tar", "--device", "cpu"], capsys)
    assert "no such file" in err


@pytest.mark.train
@pytest.mark.skipif(
    shutil.which("rsvg-convert") is None, reason="needs librsvg2-bin and the card decks"
)
def test_smoke_size_trains_from_a_pack_without_the_card_art(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from training import pack
    from training.synth import decks

    pack_file = tmp_path / "pack.tar"
    assert pack.main(["build", str(pack_file)]) == 0
    assert pack_file.stat().st_size < pack.PACK_LIMIT_BYTES

    def no_art(*_: object) -> None:
        raise AssertionError("a scene of the pack's run needed the card art")

    # as on a machine without the Debian decks and rsvg-convert: only the pack draws
    monkeypatch.setattr(decks.Deck, "available", property(lambda self: False))
    monkeypatch.setattr(decks, "_rsvg", no_art)
    monkeypatch.setenv("HANDREADER_CACHE", str(tmp_path / "elsewhere"))
    script = _script()
    work = tmp_path / "work"
    args = ["--pack", str(pack_file), "--size", "smoke", "--device", "cpu", "--work", str(work)]
    try:
        assert script.main(args) == 0
    finally:
        pack.draw_from(tmp_path / "elsewhere")  # the run's decks and fonts stay with it
    report = json.loads((work / "report.json").read_text())
    assert report["pack"]["decks"] >= 20 and report["counts"]["casino_scenes"] == 2
    assert len(list((work / "scenes-casino" / "images").glob("*.jpg"))) == 2
    assert {"detector.onnx", "classifier.onnx", "verifier.onnx"} <= set(report["files"])
    assert "Drawn from the pack" in (work / "report.md").read_text()

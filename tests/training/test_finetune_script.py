"""scripts/finetune_classifier.py: parallel fine-tunes of the index classifier from a crop
bundle, averaged. The options are checked without torch; a two-run smoke fine-tune on the CPU
needs the train extra and runs in the training tier."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from training.crop_bundle import BundlePart, pack_bundle
from vision.crops import CROP_SIZE
from vision.detections import CLASSIFIER_CLASSES

ROOT = Path(__file__).resolve().parents[2]


def _script() -> ModuleType:
    path = ROOT / "scripts" / "finetune_classifier.py"
    spec = importlib.util.spec_from_file_location("finetune_classifier", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["finetune_classifier"] = module
    spec.loader.exec_module(module)
    return module


def _bundle(folder: Path, train: int = 96, valid: int = 24) -> Path:
    """A small bundle of crops that each show their label (a dark square placed by it)."""
    rng = np.random.default_rng(0)
    for name, count in (("train", train), ("valid", valid)):
        labels = rng.integers(0, len(CLASSIFIER_CLASSES), count)
        crops = np.full((count, CROP_SIZE, CROP_SIZE, 3), 225, np.uint8)
        for crop, label in zip(crops, labels, strict=True):
            x, y = 2 + int(label) % 5 * 5, 2 + int(label) // 5 % 5 * 5
            crop[y : y + 8, x : x + 8] = 25
        np.savez(folder / f"{name}.npz", crops=crops, labels=labels)
    out = folder / "bundle"
    pack_bundle(
        [BundlePart(folder / "train.npz"), BundlePart(folder / "valid.npz", "valid", 0)], out
    )
    return out


def test_a_run_is_seed_rate_and_jitter() -> None:
    script = _script()
    assert script.parse_run("5:0.001:0.5") == script.Run(5, 0.001, 0.5)
    assert script.parse_run("17:2e-4:0") == script.Run(17, 0.0002, 0.0)
    for bad in ("5", "5:0.001", "x:0.001:0.5", "5:fast:0.5", "5:0.001:0.5:1"):
        with pytest.raises(ValueError, match="expected SEED:LEARNING_RATE:SHAPE_JITTER"):
            script.parse_run(bad)
    for bad in ("5:0:0.5", "5:-0.1:0.5", "5:0.001:1.5"):
        with pytest.raises(ValueError, match="the learning rate must be positive"):
            script.parse_run(bad)


def test_bad_options_are_named_before_anything_trains(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = _script()
    bundle = _bundle(tmp_path)
    base = ["--crops", str(bundle), "--work", str(tmp_path / "w")]
    for args, message in (
        ([*base, "--run", "1:0.001:0.5", "--run", "1:0.0003:0.5"], "two --run share a seed"),
        ([*base, "--run", "1:0.001"], "expected SEED:LEARNING_RATE:SHAPE_JITTER"),
        ([*base, "--run", "1:0.001:0.5", "--epochs", "0"], "must be positive"),
        ([*base, "--run", "1:0.001:0.5", "--init", str(tmp_path / "x.pt")], "no such checkpoint"),
        ([*base, "--run", "1:0.001:0.5", "--start", str(tmp_path / "x.onnx")], "no such model"),
        (
            ["--crops", str(tmp_path), "--work", str(tmp_path / "w"), "--run", "1:0.001:0.5"],
            "no bundle.json",
        ),
    ):
        with pytest.raises(SystemExit) as stopped:
            script.main(args)
        assert stopped.value.code == 2
        assert message in capsys.readouterr().err
    assert not (tmp_path / "w").exists()  # nothing started


@pytest.mark.train
def test_two_runs_are_averaged_and_exported(tmp_path: Path) -> None:
    """Two one-epoch runs from the shipped classifier, on the CPU: the average holds the mean
    of their last weights, exports to an int8 classifier of the shipped interface, and the
    record names both runs."""
    torch = pytest.importorskip("torch")
    ort = pytest.importorskip("onnxruntime")
    script = _script()
    work = tmp_path / "w"
    args = [
        "--crops", str(_bundle(tmp_path)), "--work", str(work), "--run", "1:0.001:0.5",
        "--run", "2:0.0003:0.7", "--epochs", "1", "--device", "cpu", "--export",
    ]  # fmt: skip
    assert script.main(args) == 0
    record = json.loads((work / "finetune.json").read_text())
    assert [(run["seed"], run["epochs"], run["planned"]) for run in record["runs"]] == [
        (1, 1, 1),
        (2, 1, 1),
    ]
    assert all(0 <= run["held_out_accuracy"] <= 1 for run in record["runs"])
    lasts = [
        torch.load(work / f"run-{seed}" / "classifier_last.pt", weights_only=False)["model"]
        for seed in (1, 2)
    ]
    averaged = torch.load(work / "averaged.pt", weights_only=False)
    assert tuple(averaged["widths"]) == (48, 96, 192, 192)  # the shipped classifier's
    for name, value in averaged["model"].items():
        if value.is_floating_point():
            assert torch.allclose(value, (lasts[0][name] + lasts[1][name]) / 2)
    session = ort.InferenceSession(str(work / "models" / "classifier.onnx"))
    logits, embedding = session.run(None, {"crops": np.zeros((3, 3, 32, 32), np.float32)})
    assert logits.shape == (3, len(CLASSIFIER_CLASSES)) and embedding.shape == (3, 128)
    assert not list((work / "models").glob("*.prepared.onnx"))

"""Training never rots: a tiny run of the whole recipe, exported, loaded by the runtime reader.

Needs the train extra (torch, ultralytics, onnxslim) and the card art (scripts/install-card-art);
CI installs both and runs ``pytest -m train``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.train

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(
    shutil.which("rsvg-convert") is None, reason="needs librsvg2-bin and the card decks"
)
def test_tiny_training_exports_models_the_reader_loads(tmp_path: Path) -> None:
    from training.pipeline import TrainingPlan, run_training
    from vision.imageio import load_image
    from vision.reader import Reader

    # a labelled photo adds real index crops (an untrained detector may find none: it must run)
    photos = tmp_path / "photos"
    photos.mkdir()
    shutil.copyfile(ROOT / "examples" / "hand.jpg", photos / "hand.jpg")
    (photos / "manifest.jsonl").write_text(
        '{"image": "hand.jpg", "cards": ["2D"], "split": "train"}\n'
    )
    plan = TrainingPlan(
        work_dir=tmp_path / "runs",
        models_dir=tmp_path / "models",
        train_config=ROOT / "datasets" / "scenes.yaml",
        holdout_config=ROOT / "datasets" / "holdout.yaml",
        closeup_config=ROOT / "datasets" / "closeups.yaml",
        closeup_scenes=2,
        card_config=ROOT / "datasets" / "cards.yaml",
        card_scenes=3,
        card_epochs=1,
        verifier_config=ROOT / "datasets" / "verifier.yaml",
        verifier_scenes=3,
        verifier_epochs=1,
        train_scenes=6,
        holdout_scenes=2,
        detector_epochs=1,
        detector_finetune_epochs=1,
        detector_imgsz=160,
        detector_batch=2,
        classifier_epochs=1,
        classifier_finetune_epochs=1,
        classifier_widths=(8, 16, 16, 24),
        glyph_crops=20,
        photo_manifests=(photos / "manifest.jsonl",),
        workers=1,
    )
    manifest = run_training(plan)
    assert manifest.is_file()
    assert (tmp_path / "models" / "detector.onnx").stat().st_size > 100_000
    assert (tmp_path / "runs" / "classifier" / "photo_crops.npz").is_file()
    assert len(np.load(tmp_path / "runs" / "classifier" / "glyph_crops.npz")["labels"]) == 20
    assert len(list((tmp_path / "runs" / "scenes-closeups" / "images").glob("*.jpg"))) == 2
    assert (tmp_path / "runs" / "classifier-finetune" / "negatives.npz").is_file()
    classifier = json.loads(manifest.read_text())["classifier"]
    assert "8-16-16 channels, then 24 channels" in classifier["architecture"]
    assert classifier["precision"].startswith("int8")  # quantized, and the runtime loads it
    assert json.loads(manifest.read_text())["card_classifier"]["file"] == "card.onnx"
    assert json.loads(manifest.read_text())["verifier"]["classes"] == ["none", "index"]
    reader = Reader.load(tmp_path / "models")
    assert reader.whole_card is not None  # the whole-card classifier's export loads
    assert reader.verifier is not None  # and the index verifier's
    assert reader.detector.dynamic  # any input size: the finer pass for small indices can run
    reading = reader.read(load_image(ROOT / "examples" / "hand.jpg"))
    assert reading.size_wh == (640, 480)  # an untrained model may find nothing: it must run
    # a second run resumes instead of starting over (scenes kept, detector finished)
    assert run_training(plan) == manifest


@pytest.mark.skipif(
    shutil.which("rsvg-convert") is None, reason="needs librsvg2-bin and the card decks"
)
def test_verifier_alone_is_added_to_shipped_models(tmp_path: Path) -> None:
    """``handreader train --only-verifier``: the verifier trains against the detector already
    in the models folder and joins its manifest; the other models and entries stay."""
    from training.pipeline import TrainingPlan, add_verifier
    from vision.reader import Reader

    models = tmp_path / "models"
    shutil.copytree(ROOT / "models", models)
    (models / "verifier.onnx").unlink(missing_ok=True)
    before = json.loads((models / "manifest.json").read_text())
    before.pop("verifier", None)
    (models / "manifest.json").write_text(json.dumps(before))
    plan = TrainingPlan(
        work_dir=tmp_path / "runs",
        models_dir=models,
        holdout_config=ROOT / "datasets" / "holdout.yaml",
        verifier_config=ROOT / "datasets" / "verifier.yaml",
        closeup_config=ROOT / "datasets" / "closeups.yaml",
        holdout_scenes=2,
        closeup_scenes=2,
        verifier_scenes=4,
        verifier_epochs=1,
        workers=1,
        device="cpu",
    )
    manifest = json.loads(add_verifier(plan).read_text())
    assert manifest["verifier"]["file"] == "verifier.onnx"
    assert manifest["training"]["verifier_scenes"] == 4
    assert manifest["training"]["verifier_closeup_scenes"] == 2
    assert len(list((tmp_path / "runs" / "scenes-closeups" / "images").glob("*.jpg"))) == 2
    assert manifest["classifier"] == before["classifier"]
    assert manifest["metrics"] == before["metrics"]
    reader = Reader.load(models)
    assert reader.verifier is not None
    probability = reader.verifier.index_probability(
        np.zeros((120, 160, 3), np.uint8), np.array([[10, 10, 30, 40]], np.float32)
    )
    assert probability.shape == (1,) and 0.0 <= float(probability[0]) <= 1.0

"""The whole training recipe: scenes -> detector -> classifier -> ONNX -> ``models/manifest.json``.

Every step is resumable: scenes already written are kept (same seed, same bytes), an
interrupted detector run resumes from its ``last.pt``, the classifier from its checkpoint.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from vision.synth.config import load_config
from vision.synth.generate import generate

__all__ = ["TrainingPlan", "run_training", "write_manifest"]


@dataclass(frozen=True)
class TrainingPlan:
    """What ``handreader train`` does; defaults are the shipped models' recipe."""

    work_dir: Path
    models_dir: Path
    train_config: Path = Path("datasets/scenes.yaml")
    holdout_config: Path = Path("datasets/holdout.yaml")
    train_scenes: int = 4500
    holdout_scenes: int = 400
    detector_epochs: int = 6
    detector_finetune_epochs: int = 2
    detector_imgsz: int = 320
    detector_batch: int = 32
    classifier_epochs: int = 14
    workers: int | None = None


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _count(folder: Path) -> int:
    return len(list((folder / "images").glob("*.jpg"))) if (folder / "images").is_dir() else 0


def write_manifest(
    plan: TrainingPlan, detector: Path, classifier: Path, extra: dict[str, Any] | None = None
) -> Path:
    """Write ``models/manifest.json``: files, hashes, classes, input sizes, data and recipe."""
    from vision.crops import CROP_CONTEXT, CROP_SIZE
    from vision.features import FEATURE_SIZE
    from vision.reader import CLASSIFIER_CLASSES

    manifest_path = plan.models_dir / "manifest.json"
    previous: dict[str, Any] = {}
    if manifest_path.is_file():
        previous = json.loads(manifest_path.read_text())
    manifest = {
        "format": 1,
        "created": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "detector": {
            "file": detector.name,
            "sha256": _sha256(detector),
            "bytes": detector.stat().st_size,
            "architecture": "YOLOv8n (ultralytics), from scratch, one class",
            "classes": ["index"],
            "imgsz": plan.detector_imgsz,
            "input": "1x3xSxS RGB float [0,1], letterboxed, pad 114",
            "output": "1x5xA: cx, cy, w, h, score (NMS done by the reader)",
        },
        "classifier": {
            "file": classifier.name,
            "sha256": _sha256(classifier),
            "bytes": classifier.stat().st_size,
            "architecture": "MLP 972-384-128-55 on HOG + colour features (vision/features.py)",
            "classes": list(CLASSIFIER_CLASSES),
            "input": f"Nx{FEATURE_SIZE} features of a {CROP_SIZE} px square crop, "
            f"{CROP_CONTEXT}x the box's longer side; four quarter turns tried per crop",
            "outputs": {"logits": "Nx55", "embedding": "Nx128, L2-normalised"},
        },
        "training": {
            **{k: str(v) if isinstance(v, Path) else v for k, v in asdict(plan).items()},
            "decks": "datasets/README.md; holdout decks never trained on",
        },
        "metrics": previous.get("metrics", {}),
    }
    if extra:
        manifest.update(extra)
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest_path


def run_training(plan: TrainingPlan) -> Path:
    """Run every step of the recipe; returns the manifest path."""
    from vision.train.classifier import ClassifierTraining, export_classifier, train_classifier
    from vision.train.detector import (
        DetectorTraining,
        export_detector,
        finetune_detector,
        train_detector,
    )

    train_dir, holdout_dir = plan.work_dir / "scenes-train", plan.work_dir / "scenes-holdout"
    for config_path, folder, count in (
        (plan.train_config, train_dir, plan.train_scenes),
        (plan.holdout_config, holdout_dir, plan.holdout_scenes),
    ):
        have = _count(folder)
        if have < count:
            generate(
                load_config(config_path), folder, count - have, start=have, workers=plan.workers
            )
    detector_settings = DetectorTraining(
        train_images=train_dir / "images",
        val_images=holdout_dir / "images",
        run_dir=plan.work_dir,
        epochs=plan.detector_epochs,
        imgsz=plan.detector_imgsz,
        batch=plan.detector_batch,
    )
    weights = train_detector(detector_settings)
    if plan.detector_finetune_epochs > 0:
        weights = finetune_detector(detector_settings, weights, plan.detector_finetune_epochs)
    plan.models_dir.mkdir(parents=True, exist_ok=True)
    detector = export_detector(weights, plan.detector_imgsz, plan.models_dir / "detector.onnx")
    state = train_classifier(
        ClassifierTraining(
            scene_dirs=(train_dir,),
            run_dir=plan.work_dir / "classifier",
            epochs=plan.classifier_epochs,
            jitter_copies=1,
            none_per_scene=2,
        )
    )
    classifier = export_classifier(state, plan.models_dir / "classifier.onnx")
    shutil.copyfile(plan.train_config, plan.work_dir / "scenes.yaml")
    return write_manifest(plan, detector, classifier)

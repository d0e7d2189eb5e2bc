"""The training recipe: scenes -> detector -> classifiers -> verifier -> ONNX + manifest.

Every step is resumable: scenes already written are kept (same seed, same bytes), an
interrupted detector run resumes from its ``last.pt``, the classifier from its checkpoint.
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from training.classifier import DEFAULT_WIDTHS
from training.synth.config import load_config, project_file
from training.synth.generate import generate

__all__ = ["TrainingPlan", "add_verifier", "run_training", "write_manifest"]


@dataclass(frozen=True)
class TrainingPlan:
    """What ``handreader train`` does; defaults are the shipped models' recipe."""

    work_dir: Path
    models_dir: Path
    train_config: Path = Path("datasets/scenes.yaml")
    holdout_config: Path = Path("datasets/holdout.yaml")
    closeup_config: Path = Path("datasets/closeups.yaml")
    card_config: Path = Path("datasets/cards.yaml")
    train_scenes: int = 4500
    holdout_scenes: int = 400
    closeup_scenes: int = 900
    """Close-ups (one card filling the frame) added to the detector's and the classifier's
    training scenes; 0 for none."""
    card_scenes: int = 16000
    """Scenes of one card filling the frame for the whole-card classifier
    (:mod:`training.card_classifier`); 0 ships no whole-card classifier."""
    card_epochs: int = 12
    verifier_config: Path = Path("datasets/verifier.yaml")
    verifier_scenes: int = 3000
    """Scenes (most on printed pages) whose detections train the index verifier
    (:mod:`training.verifier`); 0 ships no verifier."""
    verifier_epochs: int = 6
    casino_config: Path = Path("datasets/casino.yaml")
    casino_scenes: int = 0
    """Casino tables and tight fans (``datasets/casino.yaml``) added to the detector's training
    scenes and to the verifier's; 0 (the shipped recipe) for none."""
    detector_epochs: int = 6
    detector_finetune_epochs: int = 12
    detector_imgsz: int = 320
    detector_batch: int = 32
    classifier_epochs: int = 14
    classifier_finetune_epochs: int = 4
    """Epochs of a second classifier stage that adds hard "none" examples mined with the new
    detector (:mod:`training.negatives`), at a lower learning rate; 0 skips it."""
    classifier_widths: tuple[int, int, int, int] = DEFAULT_WIDTHS
    """Channels of the classifier's three convolution blocks and of its last convolution."""
    classifier_shape_jitter: float = 0.5
    """Share of the classifier's training crops whose shapes are also changed in both stages
    (:func:`training.classifier.shape_jitter`: a small warp, thicker or thinner strokes,
    a coarser resolution); 0 for none."""
    quantize_classifier: bool = True
    """Ship the classifier with int8 weights and activations (static QDQ, calibrated on
    training crops): it reads the same, several times faster."""
    glyph_crops: int = 50000
    """Procedural index crops (:mod:`training.glyph_crops`: ranks in the installed fonts,
    pips from fonts or drawn shapes) added to both classifier stages; 0 for none."""
    photo_manifests: tuple[Path, ...] = ()
    """Manifests of labelled single-card photos whose ``split: train`` rows add real index
    crops to the classifier's training (:mod:`training.photo_crops`)."""
    workers: int | None = None
    """Scene-generation processes (default: every core)."""
    device: str = "auto"
    """Where the networks train: ``auto`` (the first GPU torch sees, else the CPU), ``cpu``,
    ``cuda`` or ``cuda:N`` (:func:`training.fitting.resolve_device`). On a GPU the
    detector's data loader also gets worker processes (ultralytics forces none on the CPU)."""


def _file_fields(model: Path) -> dict[str, Any]:
    """A manifest entry's file, its hash and its size."""
    from vision.reader import file_sha256

    return {"file": model.name, "sha256": file_sha256(model), "bytes": model.stat().st_size}


def _count(folder: Path) -> int:
    return len(list((folder / "images").glob("*.jpg"))) if (folder / "images").is_dir() else 0


def _plain(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    return value


def write_manifest(
    plan: TrainingPlan,
    detector: Path,
    classifier: Path,
    extra: dict[str, Any] | None = None,
    card_classifier: Path | None = None,
    verifier: Path | None = None,
) -> Path:
    """Write ``models/manifest.json``: files, hashes, classes, input sizes, data and recipe."""
    from vision.crops import CROP_CONTEXT, CROP_SIZE
    from vision.reader import CLASSIFIER_CLASSES

    manifest_path = plan.models_dir / "manifest.json"
    previous: dict[str, Any] = {}
    if manifest_path.is_file():
        previous = json.loads(manifest_path.read_text())
    manifest = {
        "format": 1,
        "created": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "detector": {
            **_file_fields(detector),
            "architecture": "YOLOv8n (ultralytics), from scratch, one class",
            "classes": ["index"],
            "imgsz": plan.detector_imgsz,
            "input": "1x3xSxS RGB float [0,1], letterboxed, pad 114; S free: imgsz, or "
            "ReaderSettings.fine_imgsz when the indices are small",
            "output": "1x5xA: cx, cy, w, h, score (NMS done by the reader)",
        },
        "classifier": {
            **_file_fields(classifier),
            "architecture": "CNN (3 blocks of two 3x3 convolutions, {}-{}-{} channels, then "
            "{} channels at 4x4) -> 128 embedding -> 55 (training/classifier.py)".format(
                *plan.classifier_widths
            ),
            "classes": list(CLASSIFIER_CLASSES),
            "input": f"Nx3x{CROP_SIZE}x{CROP_SIZE} RGB float [0,1]: a square crop centred on "
            f"the detected index, {CROP_CONTEXT}x the box's longer side, at any angle "
            "(trained on every turn)",
            "outputs": {"logits": "Nx55", "embedding": "Nx128, L2-normalised"},
            "precision": "int8 weights and activations (onnxruntime static QDQ quantization, "
            "per-channel weights, calibrated on 512 training crops)"
            if plan.quantize_classifier
            else "float32",
        },
        **({"card_classifier": _card_entry(card_classifier)} if card_classifier else {}),
        **({"verifier": _verifier_entry(verifier)} if verifier else {}),
        "training": {
            **{k: _plain(v) for k, v in asdict(plan).items()},
            "decks": "datasets/README.md; holdout decks never trained on",
        },
        "metrics": previous.get("metrics", {}),
    }
    if extra:
        manifest.update(extra)
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest_path


def _card_entry(card_classifier: Path) -> dict[str, Any]:
    from training.card_classifier import DEFAULT_WIDTHS
    from vision.detections import CLASSIFIER_CLASSES
    from vision.whole_card import VIEW_SIZE_WH

    width, height = VIEW_SIZE_WH
    return {
        **_file_fields(card_classifier),
        "architecture": "CNN (4 blocks of two 3x3 convolutions, {}-{}-{}-{} channels, to a "
        "5x3 map) -> 128 -> 55 (training/card_classifier.py)".format(*DEFAULT_WIDTHS),
        "classes": list(CLASSIFIER_CLASSES),
        "input": f"Nx3x{height}x{width} RGB float [0,1]: the whole image, a quarter turn if "
        "wider than tall, stretched (vision.whole_card.card_view)",
        "outputs": {"logits": "Nx55"},
        "precision": "float32",
    }


def _verifier_entry(verifier: Path) -> dict[str, Any]:
    from training.verifier import DEFAULT_WIDTHS
    from vision.verifier import VERIFIER_CLASSES, VERIFY_CONTEXT, VERIFY_SIZE

    return {
        **_file_fields(verifier),
        "architecture": "CNN (3 blocks of two 3x3 convolutions, {}-{}-{} channels, then {} "
        "channels at 5x5, global average) -> 2 (training/verifier.py)".format(*DEFAULT_WIDTHS),
        "classes": list(VERIFIER_CLASSES),
        "input": f"Nx3x{VERIFY_SIZE}x{VERIFY_SIZE} RGB float [0,1]: a square crop centred on "
        f"a detected index, {VERIFY_CONTEXT}x the box's longer side (vision.verifier)",
        "outputs": {"logits": "Nx2"},
        "precision": "float32",
    }


def _device_name(device: str) -> str:
    """``device`` with the GPU's name, for the first line of a training's output."""
    if device == "cpu":
        return "the CPU"
    import torch

    return f"{device} ({torch.cuda.get_device_name(torch.device(device))})"


def _photo_crops(plan: TrainingPlan, detector: Path) -> Path:
    """Index crops of the manifests' training photos, found by the new detector (cached)."""
    import numpy as np

    from training.photo_crops import photos_crops
    from vision.index_detector import IndexDetector

    out = plan.work_dir / "classifier" / "photo_crops.npz"
    if out.is_file():
        return out
    finder = IndexDetector(detector, plan.detector_imgsz)
    crops, labels = photos_crops(finder, plan.photo_manifests)
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(out, crops=crops, labels=labels)
    return out


def _glyph_crops(plan: TrainingPlan) -> Path | None:
    """The procedural index crops (cached); None when the plan asks for none."""
    import numpy as np

    from training.glyph_crops import glyph_crops

    if plan.glyph_crops <= 0:
        return None
    out = plan.work_dir / "classifier" / "glyph_crops.npz"
    if out.is_file() and len(np.load(out)["labels"]) == plan.glyph_crops:
        return out
    crops, labels = glyph_crops(plan.glyph_crops, seed=1)
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(out, crops=crops, labels=labels)
    return out


def _negatives(plan: TrainingPlan, detector: Path) -> Path:
    """Hard "none" crops where the new detector fires on no index (cached)."""
    import numpy as np

    from training.negatives import hard_negatives
    from vision.index_detector import IndexDetector

    out = plan.work_dir / "classifier-finetune" / "negatives.npz"
    if out.is_file():
        return out
    finder = IndexDetector(detector, plan.detector_imgsz)
    crops, labels = hard_negatives(finder, (plan.work_dir / "scenes-train",), plan.photo_manifests)
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(out, crops=crops, labels=labels)
    return out


def draw_scenes(
    plan: TrainingPlan, config_path: Path, folder: Path, count: int, first: int = 0
) -> None:
    """Write ``count`` scenes of the config in ``folder``, from scene ``first`` on (those
    present are kept: a rerun draws only the rest), with the plan's workers."""
    have = _count(folder)
    if have < count:
        config = load_config(config_path)
        generate(config, folder, count - have, start=first + have, workers=plan.workers)


def _extra_detector_images(plan: TrainingPlan) -> tuple[Path, ...]:
    """The detector's training images besides the table scenes: the close-ups and the casino
    scenes, where the plan draws them."""
    extra = (plan.work_dir / "scenes-closeups" / "images",) if plan.closeup_scenes else ()
    return extra + ((plan.work_dir / "scenes-casino" / "images",) if plan.casino_scenes else ())


def _verifier(plan: TrainingPlan, detector: Path, holdout_dir: Path, device: str) -> Path:
    """Train the index verifier on the detector's boxes in the verifier scenes and the
    close-ups (a card filling the frame, its corners against the image's edges, as in a photo
    cropped to the card; the held-out scenes choose its epoch) and export it to
    ``models_dir/verifier.onnx``."""
    from training.verifier import VerifierTraining, export_verifier, train_verifier
    from vision.index_detector import IndexDetector

    state = train_verifier(
        VerifierTraining(
            scene_dirs=(plan.work_dir / "scenes-verifier",)
            + ((plan.work_dir / "scenes-closeups",) if plan.closeup_scenes else ())
            + ((plan.work_dir / "scenes-casino",) if plan.casino_scenes else ()),
            run_dir=plan.work_dir / "verifier",
            epochs=plan.verifier_epochs,
            val_scene_dirs=(holdout_dir,),
            device=device,
        ),
        IndexDetector(detector, plan.detector_imgsz),
    )
    return export_verifier(state, plan.models_dir / "verifier.onnx")


def add_verifier(plan: TrainingPlan) -> Path:
    """Train only the index verifier, against the detector already shipped in
    ``plan.models_dir``, and add it to that folder's manifest (the other models and entries
    are kept; the recipe's verifier fields are recorded under ``training``). Resumable like
    :func:`run_training`; returns the manifest path."""
    from training.fitting import resolve_device

    device = resolve_device(plan.device)
    print(f"training the index verifier on {_device_name(device)}", flush=True)
    manifest_path = plan.models_dir / "manifest.json"
    if not manifest_path.is_file():
        raise ValueError(f"no models to add a verifier to: {str(manifest_path)!r} is missing")
    manifest = json.loads(manifest_path.read_text())
    detector = plan.models_dir / manifest["detector"]["file"]
    holdout_dir = plan.work_dir / "scenes-holdout"
    draw_scenes(plan, plan.holdout_config, holdout_dir, plan.holdout_scenes)
    verifier_dir = plan.work_dir / "scenes-verifier"
    draw_scenes(plan, plan.verifier_config, verifier_dir, plan.verifier_scenes)
    draw_scenes(plan, plan.closeup_config, plan.work_dir / "scenes-closeups", plan.closeup_scenes)
    draw_scenes(plan, plan.casino_config, plan.work_dir / "scenes-casino", plan.casino_scenes)
    verifier = _verifier(plan, detector, holdout_dir, device)
    manifest["verifier"] = _verifier_entry(verifier)
    manifest.setdefault("training", {}).update(
        {
            "verifier_config": str(plan.verifier_config),
            "verifier_scenes": plan.verifier_scenes,
            "verifier_closeup_scenes": plan.closeup_scenes,
            "verifier_epochs": plan.verifier_epochs,
            "verifier_device": device,
        }
    )
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest_path


def run_training(plan: TrainingPlan) -> Path:
    """Run every step of the recipe; returns the manifest path."""
    from training.classifier import (
        ClassifierTraining,
        export_classifier,
        quantize_classifier,
        train_classifier,
    )
    from training.detector import (
        DetectorTraining,
        export_detector,
        finetune_detector,
        train_detector,
    )
    from training.fitting import resolve_device, ultralytics_device

    device = resolve_device(plan.device)  # a GPU asked for but absent fails before any work
    print(f"training on {_device_name(device)}", flush=True)

    train_dir, holdout_dir = plan.work_dir / "scenes-train", plan.work_dir / "scenes-holdout"
    closeup_dir = plan.work_dir / "scenes-closeups"
    card_dir = plan.work_dir / "scenes-cards"
    for config_path, folder, count in (
        (plan.train_config, train_dir, plan.train_scenes),
        (plan.holdout_config, holdout_dir, plan.holdout_scenes),
        (plan.closeup_config, closeup_dir, plan.closeup_scenes),
        (plan.card_config, card_dir, plan.card_scenes),
        (plan.verifier_config, plan.work_dir / "scenes-verifier", plan.verifier_scenes),
        (plan.casino_config, plan.work_dir / "scenes-casino", plan.casino_scenes),
    ):
        draw_scenes(plan, config_path, folder, count)
    detector_settings = DetectorTraining(
        train_images=train_dir / "images",
        val_images=holdout_dir / "images",
        run_dir=plan.work_dir,
        epochs=plan.detector_epochs,
        imgsz=plan.detector_imgsz,
        batch=plan.detector_batch,
        extra_train_images=_extra_detector_images(plan),
        device=ultralytics_device(device),
        workers=0 if device == "cpu" else min(8, os.cpu_count() or 1),
    )
    weights = train_detector(detector_settings)
    if plan.detector_finetune_epochs > 0:
        weights = finetune_detector(detector_settings, weights, plan.detector_finetune_epochs)
    plan.models_dir.mkdir(parents=True, exist_ok=True)
    detector = export_detector(weights, plan.detector_imgsz, plan.models_dir / "detector.onnx")
    photos = None
    if plan.photo_manifests:
        photos = _photo_crops(plan, detector)
    scene_dirs = (train_dir, closeup_dir) if plan.closeup_scenes else (train_dir,)
    glyphs = _glyph_crops(plan)
    state = train_classifier(
        ClassifierTraining(
            scene_dirs=scene_dirs,
            run_dir=plan.work_dir / "classifier",
            epochs=plan.classifier_epochs,
            val_scene_dirs=(holdout_dir,),
            photo_crops=photos,
            glyph_crops=glyphs,
            widths=plan.classifier_widths,
            shape_jitter=plan.classifier_shape_jitter,
            device=device,
        )
    )
    if plan.classifier_finetune_epochs > 0:
        state = train_classifier(
            ClassifierTraining(
                scene_dirs=scene_dirs,
                run_dir=plan.work_dir / "classifier-finetune",
                epochs=plan.classifier_finetune_epochs,
                learning_rate=0.001,
                val_scene_dirs=(holdout_dir,),
                photo_crops=photos,
                glyph_crops=glyphs,
                negatives=_negatives(plan, detector),
                init_weights=state,
                widths=plan.classifier_widths,
                shape_jitter=plan.classifier_shape_jitter,
                device=device,
            )
        )
    if plan.quantize_classifier:
        import numpy as np

        exported = export_classifier(state, plan.work_dir / "classifier-float.onnx")
        crops = np.load(plan.work_dir / "classifier" / "classifier_crops.npz")["crops"]
        classifier = quantize_classifier(exported, plan.models_dir / "classifier.onnx", crops)
    else:
        classifier = export_classifier(state, plan.models_dir / "classifier.onnx")
    card_classifier = None
    if plan.card_scenes > 0:
        from training.card_classifier import (
            CardTraining,
            export_card_classifier,
            train_card_classifier,
        )

        card_state = train_card_classifier(
            CardTraining(
                card_dirs=(card_dir,),
                none_dirs=(train_dir,),
                run_dir=plan.work_dir / "card-classifier",
                photo_manifests=plan.photo_manifests,
                epochs=plan.card_epochs,
                device=device,
            )
        )
        card_classifier = export_card_classifier(card_state, plan.models_dir / "card.onnx")
    verifier = None
    if plan.verifier_scenes > 0:
        verifier = _verifier(plan, detector, holdout_dir, device)
    shutil.copyfile(project_file(plan.train_config), plan.work_dir / "scenes.yaml")
    # the manifest records where the networks were trained, not the "auto" asked for
    return write_manifest(
        replace(plan, device=device),
        detector,
        classifier,
        card_classifier=card_classifier,
        verifier=verifier,
    )

"""Train the corner-index detector (YOLOv8n, one class) on synthetic scenes; export to ONNX."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from training.environment import offline_ultralytics
from vision.index_detector import STRIDE

__all__ = [
    "IMGSZ_RANGE",
    "DetectorTraining",
    "export_detector",
    "finetune_detector",
    "imgsz_problem",
    "train_detector",
]

IMGSZ_RANGE = (STRIDE, 1280)
"""The detector input sizes trained at, each a multiple of :data:`vision.index_detector.STRIDE`
(ultralytics rounds any other size up and trains at that, while the export and the manifest
keep the size asked for); the largest is the longest side of the largest synthetic scene
(``sizes`` of ``datasets/*.yaml``), above which every scene would only be enlarged."""


def imgsz_problem(size: int) -> str | None:
    """What is wrong with ``size`` as a detector input size to train at, or None
    (:data:`IMGSZ_RANGE`)."""
    least, most = IMGSZ_RANGE
    if least <= size <= most and size % STRIDE == 0:
        return None
    return f"must be a multiple of {STRIDE} from {least} to {most}, got {size}"


@dataclass(frozen=True)
class DetectorTraining:
    """Settings of one detector training run."""

    train_images: Path
    val_images: Path
    run_dir: Path
    epochs: int = 10
    imgsz: int = 320
    batch: int = 32
    model: str = "yolov8n.yaml"
    seed: int = 0
    workers: int = 0
    device: str = "cpu"
    extra_train_images: tuple[Path, ...] = ()
    """More folders of training images (the close-ups of ``datasets/closeups.yaml``)."""


def _dataset_yaml(settings: DetectorTraining) -> Path:
    settings.run_dir.mkdir(parents=True, exist_ok=True)
    path = settings.run_dir / "dataset.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "train": [
                    str(folder.resolve())
                    for folder in (settings.train_images, *settings.extra_train_images)
                ],
                "val": str(settings.val_images.resolve()),
                "names": {0: "index"},
            }
        )
    )
    return path


def _arguments(settings: DetectorTraining, name: str, epochs: int, seed: int) -> dict[str, Any]:
    """The ultralytics training arguments both runs share (run folder ``run_dir/name``)."""
    return {
        "data": str(_dataset_yaml(settings)),
        "epochs": epochs,
        "imgsz": settings.imgsz,
        "batch": settings.batch,
        "workers": settings.workers,
        "device": settings.device,
        "project": str(settings.run_dir.resolve()),
        "name": name,
        "exist_ok": True,
        "seed": seed,
        "deterministic": True,
        "amp": False,
        "fliplr": 0.0,  # a mirrored index is not a card
        "mosaic": 1.0,
        "degrees": 0.0,  # the scenes already turn cards every way
        "plots": False,
    }


def _run(settings: DetectorTraining, name: str, start: str, arguments: dict[str, Any]) -> Path:
    """Train ``start`` (a model config or weights) with ``arguments`` unless the run ``name``
    exists: an interrupted run resumes where it stopped, a finished one is not repeated.
    Returns the run's best weights (its last ones if it has no best)."""
    offline_ultralytics(settings.run_dir / "ultralytics")
    from ultralytics import YOLO

    weights = settings.run_dir / name / "weights"
    last = weights / "last.pt"
    if last.is_file():
        import torch

        # a finished run's checkpoint is stripped (epoch -1, no training arguments)
        if torch.load(last, map_location="cpu", weights_only=False).get("epoch", -1) != -1:
            YOLO(str(last)).train(resume=True)
    else:
        YOLO(start).train(**arguments)
    best = weights / "best.pt"
    return best if best.is_file() else last


def train_detector(settings: DetectorTraining) -> Path:
    """Train (or resume an interrupted run of) the detector; returns the best weights' path."""
    arguments = _arguments(settings, "detector", settings.epochs, settings.seed)
    arguments.update(pretrained=False, close_mosaic=max(1, settings.epochs // 5), patience=100)
    return _run(settings, "detector", settings.model, arguments)


def finetune_detector(
    settings: DetectorTraining,
    weights: Path,
    epochs: int,
    learning_rate: float = 0.001,
    freeze: int = 0,
) -> Path:
    """Continue from ``weights`` for ``epochs`` more (AdamW, lr0 ``learning_rate`` on a cosine
    schedule, no warm-up; the first ``freeze`` layers keep their weights); returns the best
    weights. A finished fine-tuning run is not repeated, an
    interrupted one resumes. How the shipped detector was fine-tuned is in the model manifest.
    """
    arguments = _arguments(settings, "finetune", epochs, settings.seed + 1)
    arguments.update(
        close_mosaic=min(2, epochs),
        optimizer="AdamW",
        lr0=learning_rate,
        cos_lr=True,
        warmup_epochs=0,
    )
    if freeze:
        arguments["freeze"] = freeze
    return _run(settings, "finetune", str(weights), arguments)


def average_detectors(start: Path, tuned: Path, tuned_share: float, out: Path) -> Path:
    """Write at ``out`` a detector checkpoint whose every weight and batch-norm statistic is
    ``tuned_share`` of ``tuned``'s and the rest of ``start``'s (the network ``tuned`` was
    fine-tuned from); counters are ``tuned``'s. ``tuned_share`` lies in [0, 1]. The checkpoint
    trains on or exports like a finished run's."""
    import torch

    from training.checkpoints import save_finished_detector, weighted_state

    if not 0.0 <= tuned_share <= 1.0:
        raise ValueError(f"tuned_share must lie in [0, 1], not {tuned_share}")
    offline_ultralytics(out.parent / "ultralytics")

    def network(path: Path) -> Any:
        checkpoint = torch.load(path, map_location="cpu", weights_only=False)
        ema = checkpoint.get("ema")
        return (ema if ema is not None else checkpoint["model"]).float()

    mixed, first = network(tuned), network(start)
    try:
        state = weighted_state(
            [mixed.state_dict(), first.state_dict()], [tuned_share, 1.0 - tuned_share]
        )
    except ValueError as error:
        raise ValueError(f"{start} and {tuned}: {error}") from None
    mixed.load_state_dict(state)
    return save_finished_detector(
        mixed, out, averaged_from={str(start): 1.0 - tuned_share, str(tuned): tuned_share}
    )


def export_detector(weights: Path, imgsz: int, out: Path) -> Path:
    """Export trained weights to ONNX (opset 17, no NMS) at ``out``.

    The input size is left free: the reader runs it at ``imgsz``, and again at
    ``ReaderSettings.fine_imgsz`` for a photo whose indices it sees small (the same speed at
    ``imgsz`` as a fixed-size export).
    """
    offline_ultralytics(weights.parent / "ultralytics")
    from ultralytics import YOLO

    exported = Path(
        YOLO(str(weights)).export(format="onnx", imgsz=imgsz, opset=17, simplify=True, dynamic=True)
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    exported.replace(out)
    return out

"""Training of the index verifier (:mod:`vision.verifier`) on the detector's own boxes.

The examples are mostly what the reader will show it: the boxes the detector finds in
synthetic scenes (with each labelled index's own box and a few boxes drawn at random), cut with
:func:`vision.verifier.verifier_crops`. A box on a labelled index is an index;
a box that overlaps no index showing there (labelled, or partly covered, cut by the frame or too
small: ``meta/*.json``'s "indices" and "partial") is none: a pip, a court figure, the table, or
printed text when the scenes have pages under the cards (``datasets/verifier.yaml``,
``backgrounds.printed_probability``). Boxes in between are left out.

Training needs torch (the ``train`` extra); the crops are gathered with onnxruntime.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from training.fitting import (
    accuracy,
    conv_block,
    export_with_classes,
    fit,
    light_blur_noise,
    load_trained,
    quarter_turns,
    start_run,
)
from training.negatives import MAX_OVERLAP, labelled_scenes
from training.photo_crops import FindsIndices
from vision.index_detector import box_iou
from vision.verifier import VERIFIER_CLASSES, VERIFY_SIZE, verifier_crops

__all__ = [
    "DEFAULT_WIDTHS",
    "INDEX_OVERLAP",
    "VerifierTraining",
    "export_verifier",
    "train_verifier",
    "verifier_examples",
]

DEFAULT_WIDTHS = (16, 32, 64, 64)
"""Channels of the verifier's three convolution blocks and of its last convolution."""

INDEX_OVERLAP = 0.3
"""A box whose IoU with a labelled index reaches this is an example of an index."""


@dataclass(frozen=True)
class VerifierTraining:
    """Settings of one verifier training run (``fit``'s ``RunSettings``)."""

    scene_dirs: tuple[Path, ...]
    run_dir: Path
    epochs: int = 6
    val_scene_dirs: tuple[Path, ...] = ()
    """Scenes whose examples choose the best epoch (by the mean of the accuracy on indices
    and on the rest, as the rest is the rarer)."""
    batch: int = 128
    learning_rate: float = 0.004
    seed: int = 0
    threads: int | None = None
    init_weights: Path | None = None
    widths: tuple[int, int, int, int] = DEFAULT_WIDTHS
    device: str = "cpu"


def _random_boxes(
    rng: np.random.Generator, sides: NDArray[np.float32], width: int, height: int, count: int
) -> NDArray[np.float32]:
    """``count`` boxes of an index's shape (0.65 as wide as tall) anywhere in the image, as
    tall as the scene's labelled indices (12 to 40 px when it has none)."""
    tall = rng.choice(sides, count) if len(sides) else rng.uniform(12, 40, count)
    wide = tall * 0.65
    left = rng.uniform(0, np.maximum(width - wide, 1))
    top = rng.uniform(0, np.maximum(height - tall, 1))
    return np.stack([left, top, left + wide, top + tall], axis=1).astype(np.float32)


def verifier_examples(
    detector: FindsIndices,
    scene_dirs: tuple[Path, ...],
    max_scenes: int | None = None,
    random_per_scene: int = 2,
    seed: int = 0,
) -> tuple[NDArray[np.uint8], NDArray[np.int64]]:
    """Verifier crops (N, 40, 40, 3) and labels (1 index, 0 none) from the scenes: the
    detector's boxes (see the module's docstring), every labelled index's own box, and
    ``random_per_scene`` boxes of an index's size drawn anywhere (kept when they overlap no
    index that shows), so a detector that finds little still gives both kinds."""
    rng = np.random.default_rng(seed)
    crops: list[NDArray[np.uint8]] = []
    labels: list[int] = []
    for image, meta in labelled_scenes(scene_dirs, max_scenes, "verifier examples"):
        labelled = np.array([i["box_xyxy"] for i in meta["indices"]], np.float32).reshape(-1, 4)
        shown = meta["indices"] + meta.get("partial", [])
        showing = np.array([i["box_xyxy"] for i in shown], np.float32).reshape(-1, 4)
        sides = np.maximum(labelled[:, 2] - labelled[:, 0], labelled[:, 3] - labelled[:, 1])
        height, width = image.shape[:2]
        candidates = np.concatenate(
            [
                detector.detect(image).xyxy.reshape(-1, 4),
                labelled,
                _random_boxes(rng, sides, width, height, random_per_scene),
            ]
        )
        kept: list[NDArray[np.float32]] = []
        for box in candidates:
            on_label = len(labelled) > 0 and float(box_iou(box, labelled).max()) >= INDEX_OVERLAP
            near = len(showing) > 0 and float(box_iou(box, showing).max()) >= MAX_OVERLAP
            if on_label or not near:
                kept.append(box)
                labels.append(int(on_label))
        if kept:
            crops.append(verifier_crops(image, np.stack(kept)))
    if not crops:
        return np.zeros((0, VERIFY_SIZE, VERIFY_SIZE, 3), np.uint8), np.zeros(0, np.int64)
    return np.concatenate(crops), np.array(labels, np.int64)


def _network(widths: tuple[int, ...]) -> Any:
    """Three convolution blocks (40 -> 5 px), a last convolution, global average, two logits."""
    from torch import nn

    first, second, third, last = widths
    return nn.Sequential(
        *conv_block(3, first),
        *conv_block(first, second),
        *conv_block(second, third),
        nn.Conv2d(third, last, 3, padding=1, bias=False),
        nn.BatchNorm2d(last),
        nn.ReLU(inplace=True),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Dropout(0.2),
        nn.Linear(last, len(VERIFIER_CLASSES)),
    )


def _augment(batch: Any, generator: Any) -> Any:
    """Random quarter turns and mirrorings (a box is an index or not at any angle), then
    lighting, colour cast, blur and noise, on a (B, 3, S, S) batch."""
    import torch

    out = quarter_turns(batch, generator)
    mirrored = torch.rand(batch.shape[0], generator=generator, device=batch.device) < 0.5
    out[mirrored] = out[mirrored].flip(3)
    return light_blur_noise(out, generator, blur_probability=0.3)


def _examples(
    detector: FindsIndices, dirs: tuple[Path, ...], cache: Path, seed: int
) -> tuple[NDArray[np.uint8], NDArray[np.int64]]:
    if cache.is_file():
        stored = np.load(cache)
        return stored["crops"], stored["labels"]
    crops, labels = verifier_examples(detector, dirs, seed=seed)
    np.savez(cache, crops=crops, labels=labels)
    return crops, labels


def train_verifier(settings: VerifierTraining, detector: FindsIndices) -> Path:
    """Train the verifier on the detector's boxes in ``settings.scene_dirs``; returns the
    checkpoint. The examples are cached in ``run_dir``; the checkpoint is written after every
    epoch and a rerun resumes from it. The loss weighs both classes equally, whatever their
    counts."""
    import torch
    from torch import nn

    from vision.crops import crops_to_tensor

    settings.run_dir.mkdir(parents=True, exist_ok=True)
    crops, labels = _examples(
        detector, settings.scene_dirs, settings.run_dir / "examples.npz", settings.seed
    )
    counts = np.bincount(labels, minlength=2)
    if counts.min() == 0:
        raise ValueError(
            f"the verifier needs boxes of both kinds; the scenes gave {counts[1]} on indices "
            f"and {counts[0]} elsewhere"
        )
    print(f"verifier examples: {counts[1]} indices, {counts[0]} other boxes", flush=True)
    start_run(settings)
    model = _network(settings.widths)
    weights = torch.tensor(len(labels) / (2.0 * counts), dtype=torch.float32)

    def logits_of(network: Any, batch: Any) -> Any:
        return network(batch)

    def right(predicted: Any, wanted: Any) -> Any:
        return predicted == wanted

    def loss(logits: Any, targets: Any) -> Any:
        return nn.functional.cross_entropy(logits, targets, weight=weights.to(logits.device))

    held_out = None
    if settings.val_scene_dirs:
        val_crops, val_labels = _examples(
            detector, settings.val_scene_dirs, settings.run_dir / "validation.npz", settings.seed
        )
        # each kind's share read right, on its own: the other boxes are the rarer
        kinds = [
            (
                torch.from_numpy(crops_to_tensor(val_crops[val_labels == kind])),
                torch.from_numpy(val_labels[val_labels == kind]),
            )
            for kind in (0, 1)
            if (val_labels == kind).any()
        ]

        def held_out(network: Any) -> float:
            shares = [
                accuracy(network, inputs, targets, logits_of, right) for inputs, targets in kinds
            ]
            return sum(shares) / len(shares)

    return fit(
        model,
        torch.from_numpy(crops_to_tensor(crops)),
        torch.from_numpy(labels),
        settings,
        name="verifier",
        augment=_augment,
        logits_of=logits_of,
        loss=loss,
        right=right,
        held_out=held_out,
        held_out_label="held-out balanced accuracy",
    )


def export_verifier(state_path: Path, out: Path) -> Path:
    """Export to ONNX: input ``crops`` (N, 3, 40, 40) RGB in [0, 1], output ``logits``
    (N, 2); the class list as JSON in the model's ``classes`` metadata."""
    import torch

    return export_with_classes(
        load_trained(state_path, _network),
        torch.zeros(1, 3, VERIFY_SIZE, VERIFY_SIZE),
        out,
        "crops",
        ["logits"],
        VERIFIER_CLASSES,
    )

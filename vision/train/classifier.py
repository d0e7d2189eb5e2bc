"""Train the index classifier (54 cards + "none") on crops of the synthetic scenes; export to ONNX.

The network is small on purpose (about 25 MFLOPs per crop at 48 px) so that reading a table
stays within the frame budget on two CPU cores. Its ONNX export has two outputs: ``logits``
(N, 55) and ``embedding`` (N, 128, L2-normalised), the latter used by deck calibration.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import cv2
import numpy as np
from numpy.typing import NDArray
from tqdm import tqdm

from rules.cards import CARD_CLASSES
from vision.crops import CROP_SIZE, crop_index

__all__ = ["CLASSIFIER_CLASSES", "ClassifierTraining", "extract_crops", "train_classifier"]

CLASSIFIER_CLASSES: tuple[str, ...] = (*CARD_CLASSES, "none")
"""The classifier's outputs: the 54 cards, then "none" (not an index: a pip, a picture, felt)."""

NONE_CLASS = len(CARD_CLASSES)


@dataclass(frozen=True)
class ClassifierTraining:
    """Settings of one classifier training run."""

    scene_dirs: tuple[Path, ...]
    run_dir: Path
    epochs: int = 12
    batch: int = 128
    learning_rate: float = 0.003
    jitter_copies: int = 2
    none_per_scene: int = 3
    seed: int = 0
    width: int = 16
    warm_start: Path | None = None
    """Start from these weights (a checkpoint of this network) with a fresh schedule."""
    epoch_fraction: float = 1.0
    """Share of the crops drawn (at random, anew) for each epoch; below 1 for shorter epochs."""


def _jitter_box(rng: np.random.Generator, box: NDArray[np.float64]) -> NDArray[np.float64]:
    """Move and resize a box the way the detector's boxes differ from the truth."""
    x1, y1, x2, y2 = box
    w, h = x2 - x1, y2 - y1
    scale = rng.uniform(0.85, 1.2, 2)
    shift = rng.normal(0, 0.08, 2) * [w, h]
    cx, cy = (x1 + x2) / 2 + shift[0], (y1 + y2) / 2 + shift[1]
    w, h = w * scale[0], h * scale[1]
    return np.array([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2])


def _overlaps(box: NDArray[np.float64], boxes: NDArray[np.float64]) -> bool:
    if len(boxes) == 0:
        return False
    ix = np.minimum(box[2], boxes[:, 2]) - np.maximum(box[0], boxes[:, 0])
    iy = np.minimum(box[3], boxes[:, 3]) - np.maximum(box[1], boxes[:, 1])
    return bool(((ix > 0) & (iy > 0)).any())


def upright_turns(quad: NDArray[np.float64]) -> int:
    """Quarter turns (``np.rot90``'s k) that bring a glyph within 45 degrees of upright.

    ``quad`` is the index's outline from its glyph's own top-left corner, clockwise; its
    up vector runs from the bottom-left corner to the top-left one. Training crops are turned
    so; the reader tries the four turns of each crop and keeps the most confident.
    """
    up_x, up_y = quad[0] - quad[3]
    angle = np.degrees(np.arctan2(up_x, -up_y))  # 0 upright, 90 when the glyph lies turned clockwise
    return int(round(angle / 90)) % 4


def extract_crops(
    scene_dirs: tuple[Path, ...],
    jitter_copies: int,
    none_per_scene: int,
    seed: int,
    max_scenes: int | None = None,
) -> tuple[NDArray[np.uint8], NDArray[np.int64]]:
    """Crops (N, S, S, 3) and class ids from scene folders written by ``vision.synth.generate``.

    Each labelled index gives ``jitter_copies`` crops with jittered boxes, turned upright
    (:func:`upright_turns`); ``none_per_scene``
    random boxes that touch no index give "none" examples.
    """
    rng = np.random.default_rng(seed)
    crops: list[NDArray[np.uint8]] = []
    labels: list[int] = []
    class_of = {code: i for i, code in enumerate(CARD_CLASSES)}
    metas = sorted(p for folder in scene_dirs for p in (folder / "meta").glob("*.json"))
    if max_scenes is not None:
        metas = metas[:max_scenes]
    for meta_path in tqdm(metas, desc="crops", unit="scene"):
        meta = json.loads(meta_path.read_text())
        image = cast(
            "NDArray[np.uint8] | None",
            cv2.imread(str(meta_path.parent.parent / "images" / f"{meta_path.stem}.jpg")),
        )
        if image is None:
            continue
        boxes = np.array([item["box_xyxy"] for item in meta["indices"]], np.float64).reshape(-1, 4)
        for item, box in zip(meta["indices"], boxes, strict=True):
            turns = upright_turns(np.array(item["quad"], np.float64))
            for _ in range(jitter_copies):
                crop = np.rot90(crop_index(image, _jitter_box(rng, box)), turns)
                crops.append(np.ascontiguousarray(crop))
                labels.append(class_of[item["card"]])
        height, width = image.shape[:2]
        typical = float(np.median(boxes[:, 3] - boxes[:, 1])) if len(boxes) else 0.08 * height
        for _ in range(none_per_scene):
            side = typical * rng.uniform(0.6, 1.6)
            x = rng.uniform(0, max(1.0, width - side))
            y = rng.uniform(0, max(1.0, height - side))
            box = np.array([x, y, x + side * rng.uniform(0.5, 0.9), y + side])
            if not _overlaps(box, boxes):
                crops.append(crop_index(image, box))
                labels.append(NONE_CLASS)
    return np.stack(crops), np.array(labels, np.int64)


def _network(width: int, classes: int) -> Any:
    import torch
    from torch import nn

    def block(cin: int, cout: int) -> list[nn.Module]:
        return [
            nn.Conv2d(cin, cout, 3, padding=1, bias=False),
            nn.BatchNorm2d(cout),
            nn.ReLU(inplace=True),
        ]

    class IndexNet(nn.Module):  # type: ignore[misc,unused-ignore]  # torch is untyped here
        def __init__(self) -> None:
            super().__init__()
            w = width
            self.features = nn.Sequential(
                *block(3, w),
                *block(w, w),
                nn.MaxPool2d(2),
                *block(w, 2 * w),
                *block(2 * w, 2 * w),
                nn.MaxPool2d(2),
                *block(2 * w, 4 * w),
                *block(4 * w, 4 * w),
                nn.MaxPool2d(2),
                *block(4 * w, 8 * w),
                nn.AdaptiveAvgPool2d(1),
                nn.Flatten(),
            )
            self.embed = nn.Linear(8 * w, 128)
            self.head = nn.Linear(128, classes)
            self.dropout = nn.Dropout(0.2)

        def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            embedding = self.embed(self.features(x))
            logits = self.head(self.dropout(torch.relu(embedding)))
            return logits, nn.functional.normalize(embedding, dim=1)

    return IndexNet()


def _augment(batch: Any, generator: Any) -> Any:
    """Photometric jitter on a (B, 3, S, S) batch in [0, 1]: brightness, contrast, colour, noise."""
    import torch

    size = batch.shape[0]
    gain = 1 + 0.25 * (torch.rand(size, 1, 1, 1, generator=generator) - 0.5) * 2
    colour = 1 + 0.12 * (torch.rand(size, 3, 1, 1, generator=generator) - 0.5) * 2
    mean = batch.mean(dim=(1, 2, 3), keepdim=True)
    contrast = 1 + 0.3 * (torch.rand(size, 1, 1, 1, generator=generator) - 0.5) * 2
    out = (batch - mean) * contrast + mean
    out = out * gain * colour + 0.02 * torch.randn(batch.shape, generator=generator)
    return out.clamp(0, 1)


def train_classifier(
    settings: ClassifierTraining,
    crops: NDArray[np.uint8] | None = None,
    labels: NDArray[np.int64] | None = None,
) -> Path:
    """Train (resuming from ``run_dir/classifier_last.pt`` if there) and return the weights path."""
    import torch
    from torch import nn

    from vision.crops import crops_to_tensor

    torch.manual_seed(settings.seed)
    settings.run_dir.mkdir(parents=True, exist_ok=True)
    cache = settings.run_dir / "classifier_crops.npz"
    if crops is None or labels is None:
        if cache.is_file():
            stored = np.load(cache)
            crops, labels = stored["crops"], stored["labels"]
        else:
            crops, labels = extract_crops(
                settings.scene_dirs, settings.jitter_copies, settings.none_per_scene, settings.seed
            )
            np.savez(cache, crops=crops, labels=labels)
    inputs = torch.from_numpy(crops_to_tensor(crops))
    targets = torch.from_numpy(labels)
    model = _network(settings.width, len(CLASSIFIER_CLASSES))
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings.learning_rate, weight_decay=1e-4)
    per_epoch = max(settings.batch, int(len(inputs) * settings.epoch_fraction))
    steps_per_epoch = math.ceil(per_epoch / settings.batch)
    warm = settings.warm_start is not None
    if warm:
        model.load_state_dict(torch.load(settings.warm_start, weights_only=False)["model"])
    schedule = torch.optim.lr_scheduler.OneCycleLR(
        optimizer,
        settings.learning_rate,
        total_steps=settings.epochs * steps_per_epoch,
        pct_start=0.05 if warm else 0.3,
    )
    state_path = settings.run_dir / "classifier_last.pt"
    start = 0
    if state_path.is_file():
        state = torch.load(state_path, weights_only=False)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        schedule.load_state_dict(state["schedule"])
        start = state["epoch"] + 1
    generator = torch.Generator().manual_seed(settings.seed)
    loss_function = nn.CrossEntropyLoss(label_smoothing=0.05)
    for epoch in range(start, settings.epochs):
        model.train()
        order = torch.randperm(len(inputs), generator=generator)[:per_epoch]
        correct, seen, total_loss = 0, 0, 0.0
        bar = tqdm(
            range(steps_per_epoch), desc=f"classifier {epoch + 1}/{settings.epochs}", unit="batch"
        )
        for step in bar:
            index = order[step * settings.batch : (step + 1) * settings.batch]
            batch = _augment(inputs[index], generator)
            logits, _ = model(batch)
            loss = loss_function(logits, targets[index])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
            total_loss += float(loss.detach()) * len(index)
            correct += int((logits.argmax(1) == targets[index]).sum())
            seen += len(index)
            bar.set_postfix(loss=f"{total_loss / seen:.3f}", acc=f"{correct / seen:.3f}")
        torch.save(
            {
                "model": model.state_dict(),
                "optimizer": optimizer.state_dict(),
                "schedule": schedule.state_dict(),
                "epoch": epoch,
                "width": settings.width,
            },
            state_path,
        )
    return state_path


def export_classifier(state_path: Path, out: Path) -> Path:
    """Export trained weights to ONNX with outputs ``logits`` and ``embedding`` (dynamic batch)."""
    import torch

    state = torch.load(state_path, weights_only=False)
    model = _network(state["width"], len(CLASSIFIER_CLASSES))
    model.load_state_dict(state["model"])
    model.eval()
    out.parent.mkdir(parents=True, exist_ok=True)
    example = torch.zeros(1, 3, CROP_SIZE, CROP_SIZE)
    torch.onnx.export(
        model,
        (example,),
        str(out),
        input_names=["crops"],
        output_names=["logits", "embedding"],
        dynamic_axes={"crops": {0: "batch"}, "logits": {0: "batch"}, "embedding": {0: "batch"}},
        opset_version=17,
        dynamo=False,
    )
    return out

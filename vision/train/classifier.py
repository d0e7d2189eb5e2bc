"""Train the index classifier (54 cards + "none") on crops of the synthetic scenes; export to ONNX.

The classifier is a small MLP on gradient-orientation features of the crop
(:mod:`vision.features`): a small CNN trained from scratch on these crops did not get past
about 20% accuracy within this machine's CPU budget, the features-plus-MLP reached about 48% on
held-out crops in minutes. Its ONNX export has two outputs: ``logits`` (N, 55) and
``embedding`` (N, 128, L2-normalised), the latter used by deck calibration.
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
from vision.crops import crop_index
from vision.reader import CLASSIFIER_CLASSES

__all__ = ["ClassifierTraining", "extract_crops", "train_classifier"]

NONE_CLASS = len(CARD_CLASSES)


@dataclass(frozen=True)
class ClassifierTraining:
    """Settings of one classifier training run."""

    scene_dirs: tuple[Path, ...]
    run_dir: Path
    epochs: int = 14
    batch: int = 256
    learning_rate: float = 0.002
    jitter_copies: int = 1
    none_per_scene: int = 2
    seed: int = 0


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
    angle = np.degrees(
        np.arctan2(up_x, -up_y)
    )  # 0 upright, 90 when the glyph lies turned clockwise
    return round(float(angle) / 90) % 4


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


def _network(features: int, classes: int) -> Any:
    """An MLP on index features: 972 -> 384 -> 128 (the embedding) -> 55."""
    import torch
    from torch import nn

    class IndexNet(nn.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("mean", torch.zeros(features))
            self.register_buffer("scale", torch.ones(features))
            self.hidden = nn.Linear(features, 384)
            self.embed = nn.Linear(384, 128)
            self.head = nn.Linear(128, classes)
            self.dropout = nn.Dropout(0.3)

        def forward(self, x: Any) -> tuple[Any, Any]:
            x = (x - self.mean) / self.scale
            hidden = self.dropout(torch.relu(self.hidden(x)))
            embedding = self.embed(hidden)
            logits = self.head(torch.relu(embedding))
            return logits, nn.functional.normalize(embedding, dim=1)

    return IndexNet()


def train_classifier(
    settings: ClassifierTraining,
    crops: NDArray[np.uint8] | None = None,
    labels: NDArray[np.int64] | None = None,
) -> Path:
    """Train the classifier on features of the scene crops; returns the checkpoint path.

    Crops (and their features) are cached in ``run_dir``; the checkpoint is written after every
    epoch and a rerun resumes from it.
    """
    import torch
    from torch import nn

    from vision.features import FEATURE_SIZE, index_features

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
    feature_cache = settings.run_dir / "classifier_features.npy"
    if feature_cache.is_file() and np.load(feature_cache, mmap_mode="r").shape[0] == len(crops):
        features = np.load(feature_cache)
    else:
        features = np.concatenate(
            [
                index_features(crops[i : i + 4096])
                for i in tqdm(range(0, len(crops), 4096), desc="features")
            ]
        )
        np.save(feature_cache, features)
    inputs = torch.from_numpy(features)
    targets = torch.from_numpy(labels)
    model = _network(FEATURE_SIZE, len(CLASSIFIER_CLASSES))
    model.mean.copy_(inputs.mean(dim=0))
    model.scale.copy_(inputs.std(dim=0) + 1e-6)
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings.learning_rate, weight_decay=1e-4)
    steps_per_epoch = math.ceil(len(inputs) / settings.batch)
    schedule = torch.optim.lr_scheduler.OneCycleLR(
        optimizer,
        settings.learning_rate,
        total_steps=settings.epochs * steps_per_epoch,
        pct_start=0.1,
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
        order = torch.randperm(len(inputs), generator=generator)
        correct, seen, total_loss = 0, 0, 0.0
        bar = tqdm(
            range(steps_per_epoch), desc=f"classifier {epoch + 1}/{settings.epochs}", unit="batch"
        )
        for step in bar:
            index = order[step * settings.batch : (step + 1) * settings.batch]
            logits, _ = model(inputs[index])
            loss = loss_function(logits, targets[index])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
            total_loss += float(loss.detach()) * len(index)
            correct += int((logits.argmax(1) == targets[index]).sum())
            seen += len(index)
        bar.close()
        print(
            f"classifier epoch {epoch + 1}: loss {total_loss / seen:.3f}, "
            f"train accuracy {correct / seen:.3f}"
        )
        torch.save(
            {
                "model": model.state_dict(),
                "optimizer": optimizer.state_dict(),
                "schedule": schedule.state_dict(),
                "epoch": epoch,
            },
            state_path,
        )
    return state_path


def export_classifier(state_path: Path, out: Path) -> Path:
    """Export to ONNX: input ``features`` (N, 972); outputs ``logits`` and ``embedding``."""
    import torch

    from vision.features import FEATURE_SIZE

    state = torch.load(state_path, weights_only=False)
    model = _network(FEATURE_SIZE, len(CLASSIFIER_CLASSES))
    model.load_state_dict(state["model"])
    model.eval()
    out.parent.mkdir(parents=True, exist_ok=True)
    example = torch.zeros(1, FEATURE_SIZE)
    torch.onnx.export(
        model,
        (example,),
        str(out),
        input_names=["features"],
        output_names=["logits", "embedding"],
        dynamic_axes={"features": {0: "batch"}, "logits": {0: "batch"}, "embedding": {0: "batch"}},
        opset_version=17,
        dynamo=False,
    )
    return out

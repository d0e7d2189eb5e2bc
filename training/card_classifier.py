"""Train the whole-card classifier (:mod:`vision.whole_card`) and export it to ONNX.

Training views come from three sources:

- close-up scenes of one card filling the frame (``datasets/cards.yaml``): the card's label;
- table scenes (``datasets/scenes.yaml``): the whole image and random windows of it, "none";
- labelled photos of single cards (``split: train`` rows of a realdata manifest). A ``JOKER``
  label (colour not given) counts as right when either joker is named.

The faces of real decks differ from the rendered ones in ink colour (green clubs, blue
diamonds), ground (black, aged paper) and cut, so training swaps colour channels, inverts,
overlays a smooth "paper" texture and zooms and shifts the view, besides the lighting, blur
and noise that the index classifier also sees.
"""

from __future__ import annotations

import itertools
import json
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import cv2
import numpy as np
from numpy.typing import NDArray
from tqdm import tqdm

from rules.cards import CARD_CLASSES
from training.fitting import (
    accuracy,
    conv_block,
    export_with_classes,
    fit,
    light_blur_noise,
    load_trained,
    start_run,
)
from vision.detections import CLASSIFIER_CLASSES
from vision.evaluate import load_manifest
from vision.imageio import ImageError, load_image
from vision.whole_card import VIEW_SIZE_WH, card_view, views_to_tensor

__all__ = [
    "DEFAULT_WIDTHS",
    "EITHER_JOKER",
    "CardTraining",
    "export_card_classifier",
    "in_tuning_fold",
    "photo_views",
    "scene_views",
    "train_card_classifier",
]

NONE_CLASS = len(CARD_CLASSES)
DEFAULT_WIDTHS: tuple[int, int, int, int] = (16, 32, 64, 128)
"""Channels of the four convolution blocks (the shipped network's)."""
EITHER_JOKER = -1
"""The label of a joker photo whose colour is not given: either joker is right."""
JOKERS = (CARD_CLASSES.index("JR"), CARD_CLASSES.index("JB"))


@dataclass(frozen=True)
class CardTraining:
    """Settings of one whole-card classifier training run."""

    card_dirs: tuple[Path, ...]
    """Scene folders of one card filling the frame (their first index's card is the label)."""
    none_dirs: tuple[Path, ...]
    """Scene folders of tables and hands: their views are "none"."""
    run_dir: Path
    photo_manifests: tuple[Path, ...] = ()
    photo_copies: int = 4
    epochs: int = 16
    batch: int = 128
    learning_rate: float = 0.003
    windows_per_scene: int = 1
    init_weights: Path | None = None
    """Start from this checkpoint's weights (a second round) instead of random ones."""
    widths: tuple[int, int, int, int] = DEFAULT_WIDTHS
    seed: int = 0
    threads: int | None = None
    device: str = "cpu"
    """Where the network trains (:func:`training.fitting.resolve_device`: ``auto``, ``cpu``,
    ``cuda``, ``cuda:N``); the crops are augmented on the CPU either way."""


def in_tuning_fold(name: str, share: int = 7) -> bool:
    """Whether a photo (by file name) is kept out of training to choose the reader's gate: one
    photo in ``share``, by a hash of its name (the same on every machine)."""
    return zlib.crc32(Path(name).name.encode()) % share == 0


def scene_views(
    card_dirs: tuple[Path, ...],
    none_dirs: tuple[Path, ...],
    windows_per_scene: int,
    seed: int,
) -> tuple[NDArray[np.uint8], NDArray[np.int64]]:
    """Views (N, 80, 56, 3) and class ids from scene folders written by ``training.synth``."""
    rng = np.random.default_rng(seed)
    class_of = {code: i for i, code in enumerate(CARD_CLASSES)}
    views: list[NDArray[np.uint8]] = []
    labels: list[int] = []

    def metas(folders: tuple[Path, ...]) -> list[Path]:
        return sorted(p for folder in folders for p in (folder / "meta").glob("*.json"))

    def image_of(meta_path: Path) -> NDArray[np.uint8] | None:
        path = meta_path.parent.parent / "images" / f"{meta_path.stem}.jpg"
        return cast("NDArray[np.uint8] | None", cv2.imread(str(path)))

    for meta_path in tqdm(metas(card_dirs), desc="card views", unit="scene"):
        cards = {item["card"] for item in json.loads(meta_path.read_text())["indices"]}
        image = image_of(meta_path)
        if len(cards) != 1 or image is None:
            continue  # no index in view, or not one card
        views.append(card_view(image))
        labels.append(class_of[cards.pop()])
    for meta_path in tqdm(metas(none_dirs), desc="none views", unit="scene"):
        image = image_of(meta_path)
        if image is None:
            continue
        views.append(card_view(image))
        labels.append(NONE_CLASS)
        height, width = image.shape[:2]
        for _ in range(windows_per_scene):
            w = int(width * rng.uniform(0.3, 0.8))
            h = int(height * rng.uniform(0.3, 0.8))
            x, y = int(rng.integers(0, width - w + 1)), int(rng.integers(0, height - h + 1))
            views.append(card_view(np.ascontiguousarray(image[y : y + h, x : x + w])))
            labels.append(NONE_CLASS)
    width, height = VIEW_SIZE_WH
    if not views:
        return np.zeros((0, height, width, 3), np.uint8), np.zeros(0, np.int64)
    return np.stack(views), np.array(labels, np.int64)


def photo_views(
    manifest: Path, split: str = "train", keep: Callable[[str], bool] | None = None
) -> tuple[NDArray[np.uint8], NDArray[np.int64]]:
    """Views and class ids of the one-card photos of ``split`` rows (``keep(image)`` filters
    them further); ``JOKER`` becomes :data:`EITHER_JOKER`; other labels (``K?``) are skipped."""
    class_of = {code: i for i, code in enumerate(CARD_CLASSES)} | {"JOKER": EITHER_JOKER}
    views: list[NDArray[np.uint8]] = []
    labels: list[int] = []
    for entry in tqdm(load_manifest(manifest, split), desc="photo views", unit="photo"):
        if len(entry.cards) != 1 or entry.cards[0] not in class_of:
            continue
        if keep is not None and not keep(str(entry.image)):
            continue
        try:
            image = load_image(entry.image)
        except ImageError:
            continue
        views.append(card_view(image))
        labels.append(class_of[entry.cards[0]])
    width, height = VIEW_SIZE_WH
    if not views:
        return np.zeros((0, height, width, 3), np.uint8), np.zeros(0, np.int64)
    return np.stack(views), np.array(labels, np.int64)


def _network(widths: tuple[int, int, int, int]) -> Any:
    """Four blocks of two 3x3 convolutions (batch norm, max pooling) take the 80 x 56 view to a
    5 x 3 map, kept whole (where the pips lie tells their count), then 128 -> 55."""
    import torch
    from torch import nn

    class CardNet(nn.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            channels = (3, *widths)
            layers: list[Any] = []
            for inputs, outputs in itertools.pairwise(channels):
                layers += conv_block(inputs, outputs)
            self.features = nn.Sequential(*layers)
            width, height = VIEW_SIZE_WH
            self.hidden = nn.Linear(widths[-1] * (height // 16) * (width // 16), 128)
            self.head = nn.Linear(128, len(CLASSIFIER_CLASSES))
            self.dropout = nn.Dropout(0.3)

        def forward(self, x: Any) -> Any:
            hidden = torch.relu(self.hidden(self.dropout(torch.flatten(self.features(x), 1))))
            return self.head(self.dropout(hidden))

    return CardNet()


def _augment(batch: Any, generator: Any) -> Any:
    """Half turns, zoom, shift and tilt, colour swaps and inversion, paper texture, lighting,
    blur and noise on a (B, 3, 80, 56) batch."""
    import torch
    from torch.nn import functional

    count = batch.shape[0]

    def uniform(low: float, high: float, *shape: int) -> Any:
        return torch.empty(count, *shape).uniform_(low, high, generator=generator)

    def chance(p: float) -> Any:
        return torch.rand(count, generator=generator) < p

    out = batch.clone()
    half = chance(0.5)
    out[half] = torch.flip(out[half], dims=(2, 3))
    # zoom in (the card's edges cut, as in a tight crop) or out a little, shift, tilt
    angle = uniform(-0.07, 0.07)
    scale = uniform(0.85, 1.08, 2)
    theta = torch.zeros(count, 2, 3)
    theta[:, 0, 0] = scale[:, 0] * torch.cos(angle)
    theta[:, 0, 1] = -scale[:, 0] * torch.sin(angle)
    theta[:, 1, 0] = scale[:, 1] * torch.sin(angle)
    theta[:, 1, 1] = scale[:, 1] * torch.cos(angle)
    theta[:, :, 2] = uniform(-0.06, 0.06, 2)
    grid = functional.affine_grid(theta, list(out.shape), align_corners=False)
    out = functional.grid_sample(out, grid, padding_mode="border", align_corners=False)
    swap = chance(0.2)
    if swap.any():
        order = torch.stack(
            [torch.randperm(3, generator=generator) for _ in range(int(swap.sum()))]
        )
        out[swap] = torch.stack([image[o] for image, o in zip(out[swap], order, strict=True)])
    grey = chance(0.1)
    out[grey] = out[grey].mean(dim=1, keepdim=True).expand(-1, 3, -1, -1)
    invert = chance(0.1)
    out[invert] = 1.0 - out[invert]
    paper = chance(0.3)
    if paper.any():
        field = torch.rand(int(paper.sum()), 3, 6, 4, generator=generator)
        field = functional.interpolate(field, size=out.shape[2:], mode="bilinear")
        strength = torch.empty(int(paper.sum()), 1, 1, 1).uniform_(0.1, 0.4, generator=generator)
        tone = torch.tensor([0.75, 0.85, 0.95]).view(1, 3, 1, 1)  # sepia, RGB
        out[paper] = out[paper] * (1 - strength + strength * tone * (0.7 + 0.6 * field))
    return light_blur_noise(out, generator, blur_probability=0.25)


def _loss(logits: Any, targets: Any) -> Any:
    """Cross-entropy, where :data:`EITHER_JOKER` targets take both jokers' probability."""
    import torch
    from torch.nn import functional

    log_probabilities = functional.log_softmax(logits, dim=1)
    either = targets == EITHER_JOKER
    picked = log_probabilities.gather(1, targets.clamp(min=0).unsqueeze(1)).squeeze(1)
    jokers = torch.logsumexp(log_probabilities[:, list(JOKERS)], dim=1)
    chosen = torch.where(either, jokers, picked)
    smoothing = 0.05
    return -((1 - smoothing) * chosen + smoothing * log_probabilities.mean(dim=1)).mean()


def _right(predicted: Any, targets: Any) -> Any:
    import torch

    joker = (predicted == JOKERS[0]) | (predicted == JOKERS[1])
    return torch.where(targets == EITHER_JOKER, joker, predicted == targets)


def _views(settings: CardTraining) -> tuple[NDArray[np.uint8], NDArray[np.int64]]:
    cache = settings.run_dir / "views.npz"
    if cache.is_file():
        stored = np.load(cache)
        return stored["views"], stored["labels"]
    views, labels = scene_views(
        settings.card_dirs, settings.none_dirs, settings.windows_per_scene, settings.seed
    )
    for manifest in settings.photo_manifests:
        photos, photo_labels = photo_views(manifest, "train", lambda name: not in_tuning_fold(name))
        views = np.concatenate([views, *[photos] * settings.photo_copies])
        labels = np.concatenate([labels, *[photo_labels] * settings.photo_copies])
    np.savez(cache, views=views, labels=labels)
    return views, labels


def train_card_classifier(settings: CardTraining) -> Path:
    """Train; returns the checkpoint. The views are cached in ``run_dir``; the checkpoint is
    written after every epoch and a rerun resumes from it. The tuning fold of the photo
    manifests (:func:`in_tuning_fold`), never trained on, is scored after every epoch and the
    best epoch is kept as ``card_best.pt``."""
    import torch

    start_run(settings)
    views, labels = _views(settings)
    inputs = torch.from_numpy(views_to_tensor(views))
    targets = torch.from_numpy(labels)
    held_views, held_labels = [], []
    for manifest in settings.photo_manifests:
        held = photo_views(manifest, "train", in_tuning_fold)
        held_views.append(held[0])
        held_labels.append(held[1])
    held_inputs = held_targets = None
    if held_views and sum(len(v) for v in held_views):
        held_inputs = torch.from_numpy(views_to_tensor(np.concatenate(held_views)))
        held_targets = torch.from_numpy(np.concatenate(held_labels))
    model = _network(settings.widths)

    def logits_of(network: Any, batch: Any) -> Any:
        return network(batch)

    def held_out(network: Any) -> float:
        return accuracy(network, held_inputs, held_targets, logits_of, _right, chunk=512)

    return fit(
        model,
        inputs,
        targets,
        settings,
        name="card",
        augment=_augment,
        logits_of=logits_of,
        loss=_loss,
        right=_right,
        held_out=held_out if held_inputs is not None else None,
        held_out_label="tuning-fold photo accuracy",
    )


def export_card_classifier(state_path: Path, out: Path) -> Path:
    """Export to ONNX: input ``views`` (N, 3, 80, 56) RGB in [0, 1]; output ``logits``
    (N, 55); the class list as JSON in the model's ``classes`` metadata."""
    import torch

    width, height = VIEW_SIZE_WH
    return export_with_classes(
        load_trained(state_path, _network),
        torch.zeros(1, 3, height, width),
        out,
        "views",
        ["logits"],
        CLASSIFIER_CLASSES,
    )

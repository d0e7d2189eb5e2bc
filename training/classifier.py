"""Train the index classifier (54 cards + "none") on crops of the synthetic scenes; export to ONNX.

The classifier is a small convolutional network on 32 px colour crops of the detected index
(:mod:`vision.crops`), trained on the crops as they lie in the scenes, at every angle: it reads
a turned index in one pass and tells a 6 from an upside-down 9 by where the suit pip sits.
Labelled photos of single cards (``split: train`` rows of a realdata manifest) can be added:
their indices are found by the detector and take the photo's card as label.
Its ONNX export has two outputs: ``logits`` (N, 55) and ``embedding`` (N, 128, L2-normalised),
the latter used by deck calibration.
"""

from __future__ import annotations

import functools
import json
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
    quarter_turns,
    start_run,
)
from vision.crops import CROP_SIZE, crop_index
from vision.reader import CLASSIFIER_CLASSES

__all__ = [
    "ClassifierTraining",
    "architecture",
    "average_checkpoints",
    "export_classifier",
    "extract_crops",
    "fit_classifier",
    "jitter_box",
    "parse_widths",
    "quantize_classifier",
    "shape_jitter",
    "train_classifier",
]

NONE_CLASS = len(CARD_CLASSES)
DEFAULT_WIDTHS: tuple[int, int, int, int] = (32, 64, 128, 128)
LEGACY_WIDTHS = (16, 32, 64, 96)
"""The network of checkpoints from before the widths were a setting."""


def parse_widths(text: str, option: str = "--widths") -> tuple[int, int, int, int]:
    """``32,64,128,128`` as the network's four channel counts; ValueError naming ``option``
    and the text otherwise."""
    parts = text.split(",")
    if len(parts) != 4 or not all(part.strip().isdigit() and int(part) > 0 for part in parts):
        raise ValueError(
            f"{option} must be four positive channel counts such as 32,64,128,128, got {text!r}"
        )
    first, second, third, last = (int(part) for part in parts)
    return first, second, third, last


def _checkpoint_widths(state: dict[str, Any]) -> tuple[int, ...]:
    """The widths a loaded checkpoint was trained with (:data:`LEGACY_WIDTHS` if it predates
    the setting)."""
    return tuple(state.get("widths", LEGACY_WIDTHS))


def _checkpoint_shape(state: dict[str, Any]) -> tuple[int, ...]:
    """A loaded checkpoint's widths, then its count of strided blocks (0 if it predates the
    setting): what :func:`_shaped_network` builds its network from."""
    return (*_checkpoint_widths(state), int(state.get("strided", 0)))


def _shaped_network(shape: tuple[int, ...]) -> Any:
    """The network of a :func:`_checkpoint_shape`."""
    return _network(len(CLASSIFIER_CLASSES), shape[:-1], shape[-1])


@dataclass(frozen=True)
class ClassifierTraining:
    """Settings of one classifier training run."""

    scene_dirs: tuple[Path, ...]
    run_dir: Path
    epochs: int = 12
    batch: int = 128
    learning_rate: float = 0.003
    jitter_copies: int = 2
    none_per_scene: int = 2
    seed: int = 0
    val_scene_dirs: tuple[Path, ...] = ()
    photo_crops: Path | None = None
    """An ``.npz`` of crops and labels from labelled photos (:mod:`training.photo_crops`)."""
    photo_copies: int = 4
    glyph_crops: Path | None = None
    """An ``.npz`` of procedural index crops in many typefaces and pip shapes
    (:mod:`training.glyph_crops`), added once."""
    negatives: Path | None = None
    """An ``.npz`` of "none" crops where the detector fires on no index
    (:mod:`training.negatives`)."""
    init_weights: Path | None = None
    """Start from this checkpoint's weights (fine-tuning) instead of random ones."""
    threads: int | None = None
    device: str = "cpu"
    """Where the network trains (:func:`training.fitting.resolve_device`: ``auto``, ``cpu``,
    ``cuda``, ``cuda:N``); on a GPU the crops are also augmented there."""
    widths: tuple[int, int, int, int] = DEFAULT_WIDTHS
    """Channels of the three convolution blocks and of the last 4 x 4 convolution."""
    strided: int = 0
    """How many of the three blocks, from the first, end in a convolution that steps two
    pixels instead of in max pooling (:func:`_network`): the same weights, fewer products."""
    shape_jitter: float = 0.0
    """Share of the training crops whose shapes are also changed (:func:`shape_jitter`): a
    small turn, stretch and shift, thicker or thinner strokes, or a coarser resolution, so
    that the glyphs of a deck never seen (another typeface, other pips) look less new."""
    distill_temperature: float = 2.0
    distill_weight: float = 0.7
    """With a teacher (:func:`fit_classifier`), the share of the loss that follows its softened
    readings, at ``distill_temperature`` (:func:`training.distill.distillation_loss`)."""


def architecture(widths: tuple[int, ...], strided: int = 0) -> str:
    """The manifest's words for the network of ``widths`` with ``strided`` blocks."""
    first, second, third, last = widths
    halving = f" (the first {strided} halve the map by a stride-2 convolution)" if strided else ""
    return (
        f"CNN (3 blocks of two 3x3 convolutions, {first}-{second}-{third} channels{halving}, "
        f"then {last} channels at 4x4) -> 128 embedding -> 55 (training/classifier.py)"
    )


def jitter_box(rng: np.random.Generator, box: NDArray[np.float64]) -> NDArray[np.float64]:
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


def extract_crops(
    scene_dirs: tuple[Path, ...],
    jitter_copies: int,
    none_per_scene: int,
    seed: int,
    max_scenes: int | None = None,
) -> tuple[NDArray[np.uint8], NDArray[np.int64]]:
    """Crops (N, S, S, 3) and class ids from scene folders written by ``training.synth.generate``.

    Each labelled index gives ``jitter_copies`` crops with jittered boxes, as it lies in the
    scene (any angle); ``none_per_scene`` random boxes that touch no index give "none" examples.
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
            for _ in range(jitter_copies):
                crops.append(crop_index(image, jitter_box(rng, box)))
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


def _network(classes: int, widths: tuple[int, ...] = DEFAULT_WIDTHS, strided: int = 0) -> Any:
    """Three blocks of two 3x3 convolutions (``widths[:3]`` channels, by default 32, 64, 128;
    batch norm, max pooling), a ``widths[3]``-channel convolution at 4 x 4 (128), then
    the flattened map -> 128 (the embedding) -> ``classes``.

    The first ``strided`` blocks (0 to 3) halve the map with their second convolution, which
    steps two pixels, instead of with max pooling: the state dict is the same, so a network
    of either kind loads the other's weights, and each such block's second convolution
    computes a quarter of the products (the 48-96-192-192 network: about 0.83 of the
    products with the first block strided, 0.65 with two, 0.48 with three).

    The flattened 4 x 4 map keeps where things are in the crop (the pip under the rank).
    """
    if not 0 <= strided <= 3:
        raise ValueError(f"strided must be 0 to 3 blocks, got {strided}")
    import torch
    from torch import nn

    class IndexNet(nn.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            first, second, third, last = widths
            self.features = nn.Sequential(
                *conv_block(3, first, strided > 0),
                *conv_block(first, second, strided > 1),
                *conv_block(second, third, strided > 2),
                nn.Conv2d(third, last, 3, padding=1, bias=False),
                nn.BatchNorm2d(last),
                nn.ReLU(inplace=True),
            )
            side = CROP_SIZE // 8
            self.embed = nn.Linear(last * side * side, 128)
            self.head = nn.Linear(128, classes)
            self.dropout = nn.Dropout(0.3)

        def forward(self, x: Any) -> tuple[Any, Any]:
            hidden = self.dropout(torch.flatten(self.features(x), 1))
            embedding = self.embed(hidden)
            logits = self.head(torch.relu(embedding))
            return logits, nn.functional.normalize(embedding, dim=1)

    return IndexNet()


def shape_jitter(batch: Any, generator: Any, share: float) -> Any:
    """Change the shapes in ``share`` of a (B, 3, S, S) batch in [0, 1], each change drawn
    apart for every crop it touches:

    * an affine warp of every chosen crop: a turn of up to 12 degrees, a stretch of 0.85 to
      1.15 along each axis (a narrower or wider typeface), a shear of up to 0.1 and a shift of
      up to 1/16 of the side (the edge pixels are repeated);
    * on half of them, strokes made thicker or thinner: the ink (the dark or the coloured
      side) is grown or shrunk by a 3 x 3 minimum or maximum, mixed in at 30-70 %;
    * on a third of them, a coarser resolution: shrunk to 40-75 % of the side, then enlarged
      back (an index photographed smaller than the crop).
    """
    import torch
    from torch.nn import functional

    count, _, side, _ = batch.shape
    device = batch.device
    chosen = torch.nonzero(torch.rand(count, generator=generator, device=device) < share).flatten()
    if len(chosen) == 0:
        return batch
    picked = batch[chosen]  # a copy: the batch itself is left as it is
    n = len(chosen)

    def uniform(low: float, high: float) -> Any:
        return torch.empty(n, device=device).uniform_(low, high, generator=generator)

    angle = uniform(-12.0, 12.0) * torch.pi / 180
    scale_x, scale_y, shear = uniform(0.85, 1.15), uniform(0.85, 1.15), uniform(-0.1, 0.1)
    cos, sin = torch.cos(angle), torch.sin(angle)
    theta = torch.zeros(n, 2, 3, device=device)
    theta[:, 0, 0] = cos * scale_x
    theta[:, 0, 1] = -sin * scale_y + shear
    theta[:, 1, 0] = sin * scale_x
    theta[:, 1, 1] = cos * scale_y
    theta[:, :, 2] = torch.stack([uniform(-0.125, 0.125), uniform(-0.125, 0.125)], dim=1)
    grid = functional.affine_grid(theta, list(picked.shape), align_corners=False)
    picked = functional.grid_sample(picked, grid, padding_mode="border", align_corners=False)

    strokes = torch.rand(n, generator=generator, device=device) < 0.5
    if strokes.any():
        part = picked[strokes]
        # the ink is darker than the paper: a minimum thickens it, a maximum thins it
        thicker = -functional.max_pool2d(-part, 3, stride=1, padding=1)
        thinner = functional.max_pool2d(part, 3, stride=1, padding=1)
        grow = (torch.rand(len(part), generator=generator, device=device) < 0.5).view(-1, 1, 1, 1)
        changed = torch.where(grow, thicker, thinner)
        mix = torch.empty(len(part), 1, 1, 1, device=device).uniform_(0.3, 0.7, generator=generator)
        picked[strokes] = part + (changed - part) * mix

    coarse = torch.nonzero(torch.rand(n, generator=generator, device=device) < 1 / 3).flatten()
    shrink = torch.empty(len(coarse), device=device).uniform_(0.4, 0.75, generator=generator)
    for index, share_of_side in zip(coarse.tolist(), shrink.tolist(), strict=True):
        small = max(4, int(side * share_of_side))
        shrunk = functional.interpolate(picked[index : index + 1], size=(small, small), mode="area")
        picked[index] = functional.interpolate(
            shrunk, size=(side, side), mode="bilinear", align_corners=False
        )[0]
    return batch.index_copy(0, chosen, picked)


def _augment(batch: Any, generator: Any, shapes: float = 0.0) -> Any:
    """Random quarter turns, shape changes on ``shapes`` of the crops (:func:`shape_jitter`),
    lighting, colour cast, blur and noise on a (B, 3, S, S) batch."""
    out = quarter_turns(batch, generator)
    if shapes > 0:
        out = shape_jitter(out, generator, shapes)
    return light_blur_noise(out, generator, blur_probability=0.2)


def _load_or_extract(
    settings: ClassifierTraining,
    dirs: tuple[Path, ...],
    name: str,
    copies: int,
    none_per_scene: int,
) -> tuple[NDArray[np.uint8], NDArray[np.int64]]:
    cache = settings.run_dir / f"{name}_crops.npz"
    if cache.is_file():
        stored = np.load(cache)
        return stored["crops"], stored["labels"]
    crops, labels = extract_crops(dirs, copies, none_per_scene, settings.seed)
    np.savez(cache, crops=crops, labels=labels)
    return crops, labels


def train_classifier(settings: ClassifierTraining) -> Path:
    """Train the classifier on scene crops (plus photo, procedural and negative crops if given);
    returns the checkpoint.

    Crops are cached in ``run_dir``; the checkpoint is written after every epoch and a rerun
    resumes from it. With ``val_scene_dirs``, top-1 accuracy on their crops is printed per epoch
    and the epoch with the best one is kept as ``classifier_best.pt``.
    """
    settings.run_dir.mkdir(parents=True, exist_ok=True)  # the crop caches are written there
    crops, labels = _load_or_extract(
        settings, settings.scene_dirs, "classifier", settings.jitter_copies, settings.none_per_scene
    )
    # the added sets, in this order (photos repeated), joined to the scene crops in one copy
    crop_parts, label_parts = [crops], [labels]
    for path, copies in (
        (settings.photo_crops, settings.photo_copies),
        (settings.glyph_crops, 1),
        (settings.negatives, 1),
    ):
        if path is not None:
            stored = np.load(path)
            crop_parts += [stored["crops"]] * copies
            label_parts += [stored["labels"]] * copies
    crops, labels = np.concatenate(crop_parts), np.concatenate(label_parts)
    validation = None
    if settings.val_scene_dirs:
        validation = _load_or_extract(settings, settings.val_scene_dirs, "validation", 1, 1)
    return fit_classifier(crops, labels, settings, validation)


def _training_parts(settings: ClassifierTraining) -> dict[str, Any]:
    """What :func:`fit` (and its timing) takes for the index classifier: the augmentation,
    the logits, the loss and where the crops are augmented."""
    from torch import nn

    def logits_of(network: Any, batch: Any) -> Any:
        return network(batch)[0]  # (logits, embedding)

    return {
        "augment": functools.partial(_augment, shapes=settings.shape_jitter),
        "logits_of": logits_of,
        "loss": nn.CrossEntropyLoss(label_smoothing=0.05),
        "augment_on_device": True,
    }


def fit_classifier(
    crops: NDArray[np.uint8],
    labels: NDArray[np.int64],
    settings: ClassifierTraining,
    validation: tuple[NDArray[np.uint8], NDArray[np.int64]] | None = None,
    teacher: NDArray[np.float32] | None = None,
) -> Path:
    """Train on crops already gathered ((N, S, S, 3) BGR and class ids; ``settings``' scene,
    photo, glyph and negative sources are not read), choosing the best epoch on
    ``validation``'s crops when given; returns the checkpoint. On a GPU the crops are
    augmented there (``fit``'s ``augment_on_device``). With ``teacher``, another
    classifier's logits on the crops (N, classes), the network learns from them too
    (:mod:`training.distill`)."""
    import torch

    from training.distill import distillation_loss, hard_labels, teacher_targets
    from vision.crops import crops_to_tensor

    start_run(settings)
    inputs = torch.from_numpy(crops_to_tensor(crops))
    model = _network(len(CLASSIFIER_CLASSES), settings.widths, settings.strided)
    parts = _training_parts(settings)
    if teacher is None:
        targets = torch.from_numpy(labels)
    else:
        targets = torch.from_numpy(teacher_targets(labels, teacher))
        parts["loss"] = distillation_loss(settings.distill_temperature, settings.distill_weight)

    def right(predicted: Any, wanted: Any) -> Any:
        # a teacher's targets carry the label in their first column (training.distill)
        return predicted == (hard_labels(wanted) if wanted.ndim == 2 else wanted)

    val_inputs = val_targets = None
    if validation is not None:
        val_inputs = torch.from_numpy(crops_to_tensor(validation[0]))
        val_targets = torch.from_numpy(validation[1])

    def held_out(network: Any) -> float:
        return accuracy(network, val_inputs, val_targets, parts["logits_of"], torch.eq)

    return fit(
        model,
        inputs,
        targets,
        settings,
        name="classifier",
        right=right,
        held_out=held_out if validation is not None else None,
        **parts,
    )


def average_checkpoints(paths: list[Path], out: Path) -> Path:
    """Write at ``out`` a checkpoint whose weights are the mean of the checkpoints at ``paths``.

    Runs fine-tuned from one checkpoint with other seeds and settings end in nearby weights,
    and their plain average (batch norm statistics included; integer counters taken from the
    first) can read unseen decks better than each of them, at no cost when reading. Every
    checkpoint must have the same widths and strided blocks (ValueError naming the one that
    differs); the result exports with :func:`export_classifier` like any other.
    """
    import torch

    from training.checkpoints import weighted_state

    if not paths:
        raise ValueError("no checkpoints to average")
    states = [torch.load(path, map_location="cpu", weights_only=False) for path in paths]
    shape = _checkpoint_shape(states[0])
    for path, state in zip(paths, states, strict=True):
        if (other := _checkpoint_shape(state)) != shape:
            raise ValueError(
                f"{path}: widths {other[:-1]} with {other[-1]} strided blocks, but {paths[0]} "
                f"has {shape[:-1]} with {shape[-1]}"
            )
    averaged = weighted_state([state["model"] for state in states], [1 / len(states)] * len(states))
    out.parent.mkdir(parents=True, exist_ok=True)
    torch.save(
        {
            "model": averaged,
            "widths": shape[:-1],
            "strided": shape[-1],
            "averaged": [str(p) for p in paths],
        },
        out,
    )
    return out


def export_classifier(state_path: Path, out: Path) -> Path:
    """Export to ONNX: input ``crops`` (N, 3, S, S) RGB in [0, 1]; outputs ``logits`` and
    ``embedding``; the class list as JSON in the model's ``classes`` metadata."""
    import torch

    model = load_trained(state_path, _shaped_network, _checkpoint_shape)
    return export_with_classes(
        model,
        torch.zeros(1, 3, CROP_SIZE, CROP_SIZE),
        out,
        "crops",
        ["logits", "embedding"],
        CLASSIFIER_CLASSES,
    )


def quantize_classifier(
    model: Path,
    out: Path,
    crops: NDArray[np.uint8],
    samples: int = 512,
    seed: int = 0,
    reduce_range: bool = True,
) -> Path:
    """The exported classifier with int8 weights and activations (onnxruntime's static QDQ
    quantization, per-channel weights), calibrated on ``samples`` of ``crops`` (training crops,
    (N, S, S, 3)). It runs in plain onnxruntime and reads the same, faster (the 32-64-128-128
    network: held-out crop accuracy 0.867 in int8, 0.866 in float; ten crops in 2.7 against
    7.2 ms); the inputs, outputs and the class list stay as they were.

    ``reduce_range`` quantizes the weights to 7 bits: on an x86 CPU without VNNI, onnxruntime's
    8-bit products saturate (the 48-96-192-192 classifier read 0.853 of 312 procedural crops
    there quantized to 8 bits, 0.936 to 7 bits, 0.939 in float, at the 8-bit speed).
    """
    from onnxruntime.quantization import (
        CalibrationDataReader,
        QuantFormat,
        QuantType,
        quantize_static,
    )
    from onnxruntime.quantization.shape_inference import quant_pre_process

    from vision.crops import crops_to_tensor

    chosen = np.random.default_rng(seed).choice(len(crops), min(samples, len(crops)), replace=False)
    batches = [crops_to_tensor(crops[chosen[i : i + 32]]) for i in range(0, len(chosen), 32)]

    class Batches(CalibrationDataReader):  # type: ignore[misc]
        def __init__(self) -> None:
            self.left = iter(batches)

        def get_next(self) -> dict[str, Any] | None:
            batch = next(self.left, None)
            return None if batch is None else {"crops": batch}

    out.parent.mkdir(parents=True, exist_ok=True)
    prepared = out.with_suffix(".prepared.onnx")
    quant_pre_process(str(model), str(prepared))
    try:
        quantize_static(
            str(prepared),
            str(out),
            Batches(),
            quant_format=QuantFormat.QDQ,
            per_channel=True,
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QInt8,
            reduce_range=reduce_range,
        )
    finally:
        prepared.unlink(missing_ok=True)
    return out


def seconds_per_step(
    crops: NDArray[np.uint8],
    labels: NDArray[np.int64],
    settings: ClassifierTraining,
    steps: int = 20,
) -> float:
    """Seconds one training step of :func:`fit_classifier` takes (``settings.batch`` crops
    augmented, forward, backward, AdamW) on ``settings.device`` with the network of
    ``settings.widths`` and ``settings.strided`` (:func:`training.fitting.seconds_per_step`, on
    a throwaway network and up to four batches of the crops)."""
    import torch

    from training.fitting import seconds_per_step as time_steps
    from vision.crops import crops_to_tensor

    chosen = np.random.default_rng(settings.seed).choice(
        len(crops), min(len(crops), settings.batch * 4), replace=False
    )
    return time_steps(
        _network(len(CLASSIFIER_CLASSES), settings.widths, settings.strided),
        torch.from_numpy(crops_to_tensor(crops[chosen])),
        torch.from_numpy(labels[chosen]),
        settings,
        steps=steps,
        **_training_parts(settings),
    )

"""The index classifier's and the index verifier's stages of a training round
(:mod:`training.round`): real crops and real negatives beside synthetic ones.

The classifier starts from the shipped ONNX
(:func:`training.recover.classifier_checkpoint_from_onnx`) and is fine-tuned at a low learning
rate on: every labelled index of the ``boxes/`` training photos (jittered, as they are and
degraded toward webcams), the ``tables/`` pseudo-boxes, ``none`` crops where the round's
detector fires on a ``boxes/`` photo away from every labelled index and where the shipped
reader read a card a ``tables/`` photo does not hold (chips, felt, backs), crops of the round's
synthetic scenes (so that nothing learned is lost), procedural crops
(:func:`training.glyph_crops.glyph_crops`), local decks' letters
(:func:`training.glyph_crops.local_index_crops`) and the ``crops/`` training cards: each is
one card filling its image, so the detector's boxes in its corners are that card's indices
(:func:`corner_boxes`). Real crops are repeated
(``RoundPlan.real_copies``) against the synthetic ones.

The verifier is trained again on the round's detector boxes in the synthetic scenes (their
labels decide) and on the same real photos: boxes on a labelled index are indices, boxes that
overlap none are not, the ``tables/`` negatives are not.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from training.round_plan import RoundPlan

__all__ = [
    "corner_boxes",
    "keep_shipped",
    "real_classifier_crops",
    "real_verifier_examples",
    "train_round_classifier",
    "train_round_verifier",
]

_EMPTY_BOXES = np.zeros((0, 4), np.float32)


def _iou_max(boxes: NDArray[np.float32], others: NDArray[np.float32]) -> NDArray[np.float32]:
    """Each box's largest IoU with any of ``others`` (0 when there are none)."""
    if len(boxes) == 0 or len(others) == 0:
        return np.zeros(len(boxes), np.float32)
    x0 = np.maximum(boxes[:, None, 0], others[None, :, 0])
    y0 = np.maximum(boxes[:, None, 1], others[None, :, 1])
    x1 = np.minimum(boxes[:, None, 2], others[None, :, 2])
    y1 = np.minimum(boxes[:, None, 3], others[None, :, 3])
    inter = np.clip(x1 - x0, 0, None) * np.clip(y1 - y0, 0, None)
    area_a = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    area_b = (others[:, 2] - others[:, 0]) * (others[:, 3] - others[:, 1])
    union = area_a[:, None] + area_b[None, :] - inter
    return np.asarray((inter / np.maximum(union, 1e-6)).max(axis=1), np.float32)


def _real_sources(
    plan: RoundPlan,
) -> list[tuple[NDArray[np.uint8], NDArray[np.float32], list[str], NDArray[np.float32], bool]]:
    """Each real training photo as (image, labelled boxes, their cards, negative boxes,
    fully labelled): ``boxes/`` photos label every index, ``tables/`` photos only their
    pseudo-boxes."""
    import cv2

    from training.real_photos import read_images, train_photos
    from training.round_plan import pseudo_labelled

    assert plan.realdata is not None
    out = []
    manifest = plan.realdata / "boxes" / "manifest.jsonl"
    for photo, image in read_images(train_photos(manifest)):
        out.append((image, photo.boxes_xyxy, list(photo.box_cards), _EMPTY_BOXES, True))
    for row in json.loads(pseudo_labelled(plan).read_text()):
        read = cast("NDArray[np.uint8] | None", cv2.imread(row["image"], cv2.IMREAD_COLOR))
        if read is None:
            continue
        positive = np.array(row["positive_xyxy"], np.float32).reshape(-1, 4)
        negative = np.array(row["negative_xyxy"], np.float32).reshape(-1, 4)
        out.append((read, positive, list(row["positive_cards"]), negative, not row["cards"]))
    return out


def corner_boxes(
    boxes: NDArray[np.float32], width: int, height: int, reach: float = 0.35
) -> NDArray[np.float32]:
    """The ``boxes`` whose centre lies in a corner of a ``width`` x ``height`` image of one
    card: within ``reach`` of the width from a side and of the height from the top or the
    bottom (where a card's indices are; pips and court figures lie between)."""
    boxes = boxes.reshape(-1, 4)
    cx = (boxes[:, 0] + boxes[:, 2]) / 2 / max(width, 1)
    cy = (boxes[:, 1] + boxes[:, 3]) / 2 / max(height, 1)
    near_side = (cx < reach) | (cx > 1 - reach)
    near_end = (cy < reach) | (cy > 1 - reach)
    return np.asarray(boxes[near_side & near_end], np.float32)


def _card_crops(
    plan: RoundPlan, detector: Any
) -> Iterator[tuple[NDArray[np.uint8], NDArray[np.float32], list[str]]]:
    """The ``crops/`` training cards as (image, the detector's corner boxes, their card)."""
    from training.real_photos import read_images, train_photos

    assert plan.realdata is not None
    manifest = plan.realdata / "crops" / "manifest.jsonl"
    if not manifest.is_file():
        return
    for photo, image in read_images(train_photos(manifest)):
        if len(photo.cards) != 1:
            continue
        found = detector.detect(image).xyxy.reshape(-1, 4)
        kept = corner_boxes(found, image.shape[1], image.shape[0])
        if len(kept):
            yield image, kept, [photo.cards[0]] * len(kept)


def real_classifier_crops(
    plan: RoundPlan, detector: Any, copies: int, seed: int = 0
) -> tuple[NDArray[np.uint8], NDArray[np.int64]]:
    """The real photos' classifier crops: ``copies`` jittered crops of each labelled index
    (every other one from a degraded copy of the photo), and ``none`` crops of the negative
    boxes and, on fully labelled photos, of the ``detector``'s boxes that overlap no labelled
    index (IoU under 0.1); and ``copies`` crops of each corner box of the ``crops/``
    training cards."""
    from rules.cards import CARD_CLASSES
    from training.classifier import NONE_CLASS, jitter_box
    from training.real_photos import degrade
    from vision.crops import crop_index

    rng = np.random.default_rng(seed)
    class_of = {code: i for i, code in enumerate(CARD_CLASSES)}
    crops: list[NDArray[np.uint8]] = []
    labels: list[int] = []

    def labelled(
        image: NDArray[np.uint8],
        soft: NDArray[np.uint8],
        boxes: NDArray[np.float32],
        cards: list[str],
    ) -> None:
        for box, card in zip(boxes, cards, strict=True):
            if card not in class_of:  # a joker of no colour, a rank with no suit
                continue
            for copy in range(copies):
                source = image if copy % 2 == 0 else soft
                crops.append(crop_index(source, jitter_box(rng, box.astype(np.float64))))
                labels.append(class_of[card])

    for image, boxes, cards, negatives, complete in _real_sources(plan):
        soft = degrade(image, rng)
        labelled(image, soft, boxes, cards)
        strays = negatives
        if complete:
            found = detector.detect(image).xyxy.reshape(-1, 4)
            strays = np.concatenate([strays, found[_iou_max(found, boxes) < 0.1]])
        for box in strays:
            for source in (image, soft):
                crops.append(crop_index(source, box))
                labels.append(NONE_CLASS)
    for image, boxes, cards in _card_crops(plan, detector):
        labelled(image, degrade(image, rng), boxes, cards)
    if not crops:
        return np.zeros((0, 32, 32, 3), np.uint8), np.zeros(0, np.int64)
    return np.stack(crops), np.array(labels, np.int64)


def real_verifier_examples(
    plan: RoundPlan, detector: Any, seed: int = 0
) -> tuple[NDArray[np.uint8], NDArray[np.int64]]:
    """The real photos' verifier examples (1 index, 0 none), from each photo as it is and
    degraded: labelled boxes and detector boxes on them (IoU >= 0.3) are indices; negative
    boxes, and detector boxes of fully labelled photos that overlap no labelled index (IoU
    under 0.1), are not."""
    from training.real_photos import degrade
    from vision.verifier import VERIFY_SIZE, verifier_crops

    rng = np.random.default_rng(seed)
    crops: list[NDArray[np.uint8]] = []
    labels: list[int] = []
    for image, boxes, _cards, negatives, complete in _real_sources(plan):
        found = detector.detect(image).xyxy.reshape(-1, 4)
        overlap = _iou_max(found, boxes)
        positive = np.concatenate([boxes, found[overlap >= 0.3]])
        negative = np.concatenate([negatives, found[overlap < 0.1]]) if complete else negatives
        kept = np.concatenate([positive, negative]).astype(np.float32)
        if len(kept) == 0:
            continue
        kinds = [1] * len(positive) + [0] * len(negative)
        for source in (image, degrade(image, rng)):
            crops.append(verifier_crops(source, kept))
            labels += kinds
    if not crops:
        return np.zeros((0, VERIFY_SIZE, VERIFY_SIZE, 3), np.uint8), np.zeros(0, np.int64)
    return np.concatenate(crops), np.array(labels, np.int64)


def _stored(path: Path, make: Any, names: tuple[str, ...]) -> tuple[NDArray[Any], ...]:
    """The arrays ``make()`` returns, kept in the ``.npz`` at ``path`` under ``names`` (read
    back from it when it is there; written whole or not at all)."""
    if path.is_file():
        stored = np.load(path)
        return tuple(stored[name] for name in names)
    arrays = tuple(make())
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.stem + ".part.npz")
    np.savez(partial, **dict(zip(names, arrays, strict=True)))
    partial.replace(path)
    return arrays


def _cached(path: Path, make: Any) -> tuple[NDArray[np.uint8], NDArray[np.int64]]:
    crops, labels = _stored(path, make, ("crops", "labels"))
    return crops, labels


def keep_shipped(plan: RoundPlan, name: str) -> Path:
    """The shipped model ``name`` copied into ``W/models`` unchanged (one a round does not
    train, or a stage of 0 epochs)."""
    import shutil

    out = plan.work_dir / "models" / name
    out.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(plan.shipped_models / name, out)
    return out


def train_round_classifier(plan: RoundPlan, folders: dict[str, Path], detector: Path) -> Path:
    """Fine-tune the shipped index classifier on the round's crops, or with
    ``plan.student_width`` distil a smaller one from it (with ``plan.classifier_strided``, a
    strided one, taught by the shipped one); returns ``W/models/classifier.onnx``
    (int8, as shipped)."""
    from training.classifier import (
        ClassifierTraining,
        export_classifier,
        extract_crops,
        fit_classifier,
        quantize_classifier,
    )
    from training.fitting import resolve_device
    from training.glyph_crops import glyph_crops, local_index_crops
    from training.recover import classifier_checkpoint_from_onnx
    from vision.index_detector import IndexDetector

    out = plan.work_dir / "models" / "classifier.onnx"
    if out.is_file():
        return out
    if plan.classifier_epochs == 0:
        return keep_shipped(plan, "classifier.onnx")
    run = plan.work_dir / "classifier"
    scene_dirs = tuple(folders[name] for name in ("tables", "casino", "closeups"))
    synthetic = _cached(run / "synthetic.npz", lambda: extract_crops(scene_dirs, 2, 2, plan.seed))
    glyphs = _cached(run / "glyphs.npz", lambda: glyph_crops(plan.glyph_crops, plan.seed + 3))
    local = _cached(run / "local.npz", lambda: local_index_crops(plan.local_crops, plan.seed + 4))
    parts = [synthetic, glyphs, local]
    if plan.realdata is not None:
        finder = IndexDetector(detector, plan.detector_imgsz)
        parts.append(
            _cached(
                run / "real.npz",
                lambda: real_classifier_crops(plan, finder, plan.real_copies * 2, plan.seed),
            )
        )
    validation = _cached(
        run / "validation.npz", lambda: extract_crops((folders["val"],), 1, 1, plan.seed)
    )
    crops = np.concatenate([part[0] for part in parts])
    labels = np.concatenate([part[1] for part in parts])
    print(
        f"classifier crops: {len(crops)} ({', '.join(str(len(p[1])) for p in parts)})", flush=True
    )
    teacher = None
    if plan.student_width > 0 or plan.classifier_strided > 0:
        from training.distill import teacher_logits

        (teacher,) = _stored(
            run / "teacher.npz",
            lambda: (teacher_logits(plan.shipped_models / "classifier.onnx", crops),),
            ("logits",),
        )
    if plan.student_width > 0:  # distilled from the shipped classifier, from scratch
        from training.distill import student_widths

        widths = student_widths(plan.student_width)
        start: Path | None = None
    else:
        start = run / "start.pt"
        if not start.is_file():
            sample = np.random.default_rng(plan.seed).permutation(len(crops))[:4000]
            classifier_checkpoint_from_onnx(
                plan.shipped_models / "classifier.onnx", start, crops[sample]
            )
        import torch

        first, second, third, last = torch.load(start, map_location="cpu", weights_only=False)[
            "widths"
        ]
        widths = (int(first), int(second), int(third), int(last))
    settings = ClassifierTraining(
        scene_dirs=(),
        run_dir=run,
        epochs=plan.classifier_epochs,
        learning_rate=plan.classifier_learning_rate,
        init_weights=start,
        widths=widths,
        strided=plan.classifier_strided,
        shape_jitter=0.5,
        device=resolve_device(plan.device),
        seed=plan.seed,
        distill_temperature=plan.distill_temperature,
        distill_weight=plan.distill_weight,
    )
    state = fit_classifier(crops, labels, settings, validation, teacher)
    exported = export_classifier(state, run / "classifier-float.onnx")
    return quantize_classifier(exported, out, crops)


def train_round_verifier(plan: RoundPlan, folders: dict[str, Path], detector: Path) -> Path:
    """Train the index verifier on the round's detector boxes; returns
    ``W/models/verifier.onnx``."""
    from training.fitting import resolve_device
    from training.verifier import (
        VerifierTraining,
        export_verifier,
        train_verifier,
        verifier_examples,
    )
    from vision.index_detector import IndexDetector

    out = plan.work_dir / "models" / "verifier.onnx"
    if out.is_file():
        return out
    if plan.verifier_epochs == 0:
        return keep_shipped(plan, "verifier.onnx")
    run = plan.work_dir / "verifier"
    finder = IndexDetector(detector, plan.detector_imgsz)
    scene_dirs = tuple(folders[name] for name in ("verifier", "casino", "closeups", "tables"))

    def examples() -> tuple[NDArray[np.uint8], NDArray[np.int64]]:
        parts = [verifier_examples(finder, scene_dirs, seed=plan.seed)]
        if plan.realdata is not None:
            real = real_verifier_examples(plan, finder, plan.seed)
            parts += [real] * plan.real_copies
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

    _cached(run / "examples.npz", examples)  # train_verifier reads this cache
    state = train_verifier(
        VerifierTraining(
            scene_dirs=scene_dirs,
            run_dir=run,
            epochs=plan.verifier_epochs,
            val_scene_dirs=(folders["val"],),
            device=resolve_device(plan.device),
            seed=plan.seed,
        ),
        finder,
    )
    return export_verifier(state, out)

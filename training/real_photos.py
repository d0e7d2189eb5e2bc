"""Real labelled photos as training data: index boxes in YOLO form, webcam-like copies, and
pseudo-boxes for photos labelled only with their cards.

``boxes/``-style manifests give a box on every corner index (``objects`` of ``kind: index``):
those boxes are the detector's positives as they are. ``tables/``-style manifests give only the
cards of a photo: the shipped reader's index detections whose read card is in that list become
pseudo-boxes (:func:`pseudo_boxes`), and the detections that match no labelled card (chips,
felt print, backs) become negatives for the classifier and the verifier. Only ``split: train``
rows are ever used; the valid rows are for measuring.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.evaluate import manifest_lines

__all__ = [
    "LabelledPhoto",
    "PseudoBoxes",
    "degrade",
    "pseudo_boxes",
    "train_photos",
    "write_yolo_set",
]


@dataclass(frozen=True)
class LabelledPhoto:
    """One training photo: its path, its cards and, where given, its index boxes (pixels)."""

    image: Path
    cards: tuple[str, ...]
    boxes_xyxy: NDArray[np.float32]
    box_cards: tuple[str, ...]
    optional: tuple[str, ...] = ()


def train_photos(manifest: Path) -> list[LabelledPhoto]:
    """The ``split: train`` rows of a real-photo manifest (``cards``; ``objects`` of
    ``kind: index`` with ``box_xyxy`` where the folder has them), read as
    :func:`vision.evaluate.manifest_lines` reads it."""
    photos = []
    for number, line in enumerate(manifest_lines(manifest), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"{manifest}:{number}: not JSON ({error.msg})") from None
        if row.get("split") != "train":
            continue
        objects = [item for item in row.get("objects", ()) if item.get("kind") == "index"]
        boxes = np.array([item["box_xyxy"] for item in objects], np.float32).reshape(-1, 4)
        photos.append(
            LabelledPhoto(
                image=manifest.parent / row["image"],
                cards=tuple(row.get("cards", ())),
                boxes_xyxy=boxes,
                box_cards=tuple(str(item.get("card", "")) for item in objects),
                optional=tuple(row.get("optional", ())) + tuple(row.get("doubtful", ())),
            )
        )
    return photos


def degrade(image: NDArray[np.uint8], rng: np.random.Generator) -> NDArray[np.uint8]:
    """A copy of ``image`` as a soft camera would give it: shrunk and enlarged back, blurred,
    darkened, noisy and JPEG-compressed, each step drawn at random (at least one applied)."""
    height, width = image.shape[:2]
    out: NDArray[Any] = image
    steps = rng.random(5) < (0.7, 0.4, 0.4, 0.5, 0.8)
    if not steps.any():
        steps[0] = True
    if steps[0]:  # low resolution: 30-70 % of the side, enlarged back
        factor = float(rng.uniform(0.3, 0.7))
        small = cv2.resize(
            out,
            (max(8, round(width * factor)), max(8, round(height * factor))),
            interpolation=cv2.INTER_AREA,
        )
        out = cv2.resize(small, (width, height), interpolation=cv2.INTER_LINEAR)
    if steps[1]:  # defocus
        sigma = float(rng.uniform(0.6, 1.8)) * max(1.0, min(height, width) / 480)
        out = cv2.GaussianBlur(out, (0, 0), sigma)
    if steps[2]:  # low light, a colour cast
        gain = rng.uniform(0.35, 0.8) * rng.uniform(0.9, 1.1, 3)
        out = np.clip(out.astype(np.float32) * gain, 0, 255).astype(np.uint8)
    if steps[3]:  # sensor noise
        noise = rng.normal(0.0, float(rng.uniform(3, 12)), out.shape)
        out = np.clip(out.astype(np.float32) + noise, 0, 255).astype(np.uint8)
    if steps[4]:  # JPEG artefacts
        quality = int(rng.integers(20, 60))
        ok, encoded = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, quality])
        decoded = cv2.imdecode(encoded, cv2.IMREAD_COLOR) if ok else None
        if decoded is not None:
            out = decoded
    return np.ascontiguousarray(out, np.uint8)


def _yolo_lines(boxes_xyxy: NDArray[np.float32], width: int, height: int) -> str:
    lines = []
    for x0, y0, x1, y1 in np.asarray(boxes_xyxy, np.float64):
        x0, x1 = max(0.0, x0), min(float(width), x1)
        y0, y1 = max(0.0, y0), min(float(height), y1)
        if x1 - x0 < 2 or y1 - y0 < 2:
            continue
        lines.append(
            f"0 {(x0 + x1) / 2 / width:.6f} {(y0 + y1) / 2 / height:.6f} "
            f"{(x1 - x0) / width:.6f} {(y1 - y0) / height:.6f}\n"
        )
    return "".join(lines)


def write_yolo_set(
    photos: Iterator[tuple[str, NDArray[np.uint8], NDArray[np.float32]]],
    out: Path,
    copies: int,
    seed: int = 0,
    longest_side: int = 960,
) -> int:
    """Write ``(name, image, boxes)`` as a YOLO folder (``out/images``, ``out/labels``):
    the photo itself and ``copies - 1`` degraded copies (:func:`degrade`), each shrunk to
    ``longest_side`` at most. Photos already written are kept. Returns the images written."""
    (out / "images").mkdir(parents=True, exist_ok=True)
    (out / "labels").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    written = 0
    for name, photo, boxes in photos:
        image: NDArray[Any] = photo
        scale = min(1.0, longest_side / max(image.shape[:2]))
        if scale < 1.0:
            image = cv2.resize(
                image,
                (round(image.shape[1] * scale), round(image.shape[0] * scale)),
                interpolation=cv2.INTER_AREA,
            )
            boxes = boxes * scale
        height, width = image.shape[:2]
        labels = _yolo_lines(boxes, width, height)
        for copy in range(max(1, copies)):
            stem = f"{name}-{copy}"
            target = out / "images" / f"{stem}.jpg"
            variant = image if copy == 0 else degrade(image, rng)
            if target.is_file():
                continue
            cv2.imwrite(str(target), variant, [cv2.IMWRITE_JPEG_QUALITY, 92])
            (out / "labels" / f"{stem}.txt").write_text(labels)
            written += 1
    return written


@dataclass(frozen=True)
class PseudoBoxes:
    """What the shipped reader found on a photo labelled with its cards alone: index boxes
    whose read card is one of the photo's (``positive_xyxy``, ``positive_cards``) and boxes
    whose read card is none of them nor optional (``negative_xyxy``)."""

    positive_xyxy: NDArray[np.float32]
    positive_cards: tuple[str, ...]
    negative_xyxy: NDArray[np.float32]


def pseudo_boxes(
    boxes_xyxy: NDArray[np.float32],
    codes: list[str],
    certain: list[bool],
    cards: tuple[str, ...],
    optional: tuple[str, ...] = (),
) -> PseudoBoxes:
    """Split the index boxes a reader found on a photo by its labelled ``cards``: a box whose
    code is a labelled card is a positive (uncertain ones too: the label names it), a certain
    box whose code is neither labelled nor optional is a negative (a chip, felt, a card's
    back), the rest (uncertain strangers, optional cards) are left out."""
    wanted, maybe = set(cards), set(optional)
    positive, negative = [], []
    for index, code in enumerate(codes):
        if code in wanted:
            positive.append(index)
        elif certain[index] and code not in maybe and code != "none":
            negative.append(index)
    boxes = np.asarray(boxes_xyxy, np.float32).reshape(-1, 4)
    return PseudoBoxes(
        positive_xyxy=boxes[positive],
        positive_cards=tuple(codes[index] for index in positive),
        negative_xyxy=boxes[negative],
    )


def photo_index_reads(
    reader: Any, image: NDArray[np.uint8]
) -> tuple[NDArray[np.float32], list[str], list[bool], NDArray[np.float32]]:
    """Every index box the reader's detector finds on ``image``, the card the index
    classifier reads there (``none`` included), whether that reading is certain (the
    reader's ``uncertain_below``) and the index verifier's belief that the box is an index
    (1 for every box without a verifier)."""
    from vision.detections import CLASSIFIER_CLASSES

    image = reader.prepare(image)
    detections = reader.detect(image)
    if len(detections.xyxy) == 0:
        return np.zeros((0, 4), np.float32), [], [], np.zeros(0, np.float32)
    probabilities, _ = reader.classify(image, detections.xyxy)
    best = probabilities.argmax(axis=1)
    codes = [CLASSIFIER_CLASSES[index] for index in best]
    certain = [
        bool(value) for value in probabilities.max(axis=1) >= reader.settings.uncertain_below
    ]
    belief = (
        reader.verifier.index_probability(image, detections.xyxy)
        if reader.verifier is not None
        else np.ones(len(codes), np.float32)
    )
    return detections.xyxy, codes, certain, np.asarray(belief, np.float32)


def read_images(photos: list[LabelledPhoto]) -> Iterator[tuple[LabelledPhoto, NDArray[np.uint8]]]:
    """The photos' images, decoded; a photo that does not decode is skipped."""
    for photo in photos:
        image = cast("NDArray[np.uint8] | None", cv2.imread(str(photo.image), cv2.IMREAD_COLOR))
        if image is not None:
            yield photo, image

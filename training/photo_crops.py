"""Index crops from labelled photos of single cards, for training the classifier on real ink.

A manifest in the format of :mod:`vision.evaluate` (one JSON object per line: ``image``,
``cards``, optional ``split``) names one card per photo. The detector finds the indices; those
near a corner of the photo (where a tight photo of one card prints its indices) become crops
labelled with the photo's card. Only rows of the chosen split are used, so validation photos
never enter training; jokers whose colour is not labelled (``JOKER``) are left out.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import numpy as np
from numpy.typing import NDArray
from tqdm import tqdm

from rules.cards import CARD_CLASSES
from vision.crops import CROP_SIZE, crop_index
from vision.detections import Detections
from vision.evaluate import load_manifest
from vision.imageio import ImageError, load_image

__all__ = ["FindsIndices", "corner_boxes", "corner_mask", "photo_crops", "photos_crops"]


class FindsIndices(Protocol):
    """What is needed of the detector (:class:`vision.index_detector.IndexDetector` has it)."""

    def detect(self, image: NDArray[np.uint8]) -> Detections:
        """Index boxes, the most confident first."""
        ...


CORNER_REACH = 0.3
"""An index counts as a corner index when its centre lies within this share of the photo's
width of a left or right edge and this share of its height of a top or bottom edge."""


def corner_mask(
    xyxy: NDArray[np.float32], width: int, height: int, reach: float = CORNER_REACH
) -> NDArray[np.bool_]:
    """Which boxes have their centres in one of the photo's four corner areas."""
    cx = (xyxy[:, 0] + xyxy[:, 2]) / 2 / width
    cy = (xyxy[:, 1] + xyxy[:, 3]) / 2 / height
    near_x = (cx < reach) | (cx > 1 - reach)
    near_y = (cy < reach) | (cy > 1 - reach)
    mask: NDArray[np.bool_] = near_x & near_y
    return mask


def corner_boxes(
    xyxy: NDArray[np.float32], width: int, height: int, reach: float = CORNER_REACH
) -> NDArray[np.float32]:
    """The boxes whose centres lie in one of the photo's four corner areas."""
    return xyxy[corner_mask(xyxy, width, height, reach)]


def photo_crops(
    detector: FindsIndices, manifest: Path, split: str = "train", per_photo: int = 2
) -> tuple[NDArray[np.uint8], NDArray[np.int64], int]:
    """Crops, class ids and the number of photos used, from ``split`` rows of ``manifest``.

    At most ``per_photo`` corner detections per photo are kept, the most confident first.
    """
    class_of = {code: i for i, code in enumerate(CARD_CLASSES)}
    entries = [
        entry
        for entry in load_manifest(manifest, split)
        if len(entry.cards) == 1 and entry.cards[0] in class_of
    ]
    crops: list[NDArray[np.uint8]] = []
    labels: list[int] = []
    used = 0
    for entry in tqdm(entries, desc="photo crops", unit="photo"):
        try:
            image = load_image(entry.image)
        except ImageError:
            continue
        detections = detector.detect(image)
        boxes = corner_boxes(detections.xyxy, image.shape[1], image.shape[0])[:per_photo]
        if len(boxes) == 0:
            continue
        used += 1
        for box in boxes:
            crops.append(crop_index(image, box))
            labels.append(class_of[entry.cards[0]])
    if not crops:
        return np.zeros((0, CROP_SIZE, CROP_SIZE, 3), np.uint8), np.zeros(0, np.int64), 0
    return np.stack(crops), np.array(labels, np.int64), used


def photos_crops(
    detector: FindsIndices, manifests: tuple[Path, ...]
) -> tuple[NDArray[np.uint8], NDArray[np.int64]]:
    """:func:`photo_crops` of each manifest's training photos, joined in order (crops, class
    ids)."""
    parts = [photo_crops(detector, manifest)[:2] for manifest in manifests]
    crops = np.concatenate([crops for crops, _ in parts])
    return crops, np.concatenate([labels for _, labels in parts])

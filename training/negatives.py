"""Hard "none" examples for the classifier: crops where the detector fires but no index is.

A detector trained on corner indices also fires, less surely, on pips, court-card art and
printed patterns. The classifier learns to answer "none" there from crops of those very
detections: on synthetic scenes, detections that overlap no index (labelled, or showing only in
part); on labelled photos of a single card, detections away from the photo's four corners
(where its indices are).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import cv2
import numpy as np
from numpy.typing import NDArray
from tqdm import tqdm

from rules.cards import CARD_CLASSES
from training.photo_crops import FindsIndices, corner_mask
from vision.crops import CROP_SIZE, crop_index
from vision.evaluate import load_manifest
from vision.imageio import ImageError, load_image
from vision.index_detector import box_iou

__all__ = ["hard_negatives", "labelled_scenes", "photo_negatives", "scene_negatives"]

NONE_CLASS = len(CARD_CLASSES)

MAX_OVERLAP = 0.1
"""A detection counts as a false one when its IoU with every index is below this."""


def _stack(crops: list[NDArray[np.uint8]]) -> tuple[NDArray[np.uint8], NDArray[np.int64]]:
    if not crops:
        return np.zeros((0, CROP_SIZE, CROP_SIZE, 3), np.uint8), np.zeros(0, np.int64)
    return np.stack(crops), np.full(len(crops), NONE_CLASS, np.int64)


def labelled_scenes(
    scene_dirs: tuple[Path, ...], max_scenes: int | None = None, desc: str = "scenes"
) -> Iterator[tuple[NDArray[np.uint8], dict[str, Any]]]:
    """Each synthetic scene of the folders (sorted, the first ``max_scenes``) as its image
    and its ``meta/*.json`` (``training.synth.generate``), with a progress bar named ``desc``;
    a scene whose image is unreadable is skipped."""
    metas = sorted(p for folder in scene_dirs for p in (folder / "meta").glob("*.json"))
    if max_scenes is not None:
        metas = metas[:max_scenes]
    for meta_path in tqdm(metas, desc=desc, unit="scene"):
        read = cv2.imread(str(meta_path.parent.parent / "images" / f"{meta_path.stem}.jpg"))
        if read is not None:
            yield cast(NDArray[np.uint8], read), json.loads(meta_path.read_text())


def scene_negatives(
    detector: FindsIndices,
    scene_dirs: tuple[Path, ...],
    per_scene: int = 3,
    max_scenes: int | None = None,
) -> tuple[NDArray[np.uint8], NDArray[np.int64]]:
    """Up to ``per_scene`` crops per scene of the surest detections that overlap no index
    that shows, labelled or not (``training.synth.generate``'s ``meta/*.json``: its "indices"
    and "partial"; scenes written before "partial" existed give only the labelled ones),
    labelled "none"."""
    crops: list[NDArray[np.uint8]] = []
    for image, meta in labelled_scenes(scene_dirs, max_scenes, "negatives"):
        # labelled indices, and those that show without a label (partly covered, or small):
        # a detection there is no false one
        shown = meta["indices"] + meta.get("partial", [])
        truth = np.array([i["box_xyxy"] for i in shown], np.float32).reshape(-1, 4)
        taken = 0
        for box in detector.detect(image).xyxy:
            if taken == per_scene:
                break
            if len(truth) and float(box_iou(box, truth).max()) >= MAX_OVERLAP:
                continue
            crops.append(crop_index(image, box))
            taken += 1
    return _stack(crops)


def photo_negatives(
    detector: FindsIndices, manifest: Path, split: str = "train", per_photo: int = 2
) -> tuple[NDArray[np.uint8], NDArray[np.int64]]:
    """Up to ``per_photo`` crops per photo of detections away from its corners, labelled
    "none", from the ``split`` rows of a manifest of single-card photos."""
    entries = [entry for entry in load_manifest(manifest, split) if len(entry.cards) == 1]
    crops: list[NDArray[np.uint8]] = []
    for entry in tqdm(entries, desc="photo negatives", unit="photo"):
        try:
            image = load_image(entry.image)
        except ImageError:
            continue
        found = detector.detect(image).xyxy
        inner = found[~corner_mask(found, image.shape[1], image.shape[0])]
        crops += [crop_index(image, box) for box in inner[:per_photo]]
    return _stack(crops)


def hard_negatives(
    detector: FindsIndices, scene_dirs: tuple[Path, ...], manifests: tuple[Path, ...] = ()
) -> tuple[NDArray[np.uint8], NDArray[np.int64]]:
    """The classifier's hard "none" crops: :func:`scene_negatives` of the scenes, then
    :func:`photo_negatives` of each manifest's training photos, in that order."""
    parts = [scene_negatives(detector, scene_dirs)]
    parts += [photo_negatives(detector, manifest) for manifest in manifests]
    crops = np.concatenate([crops for crops, _ in parts])
    return crops, np.concatenate([labels for _, labels in parts])

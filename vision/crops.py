"""The classifier's input: a square crop around a detected index, identical in training and use."""

from __future__ import annotations

from typing import Any, cast

import cv2
import numpy as np
from numpy.typing import NDArray

__all__ = ["CROP_CONTEXT", "CROP_SIZE", "crop_index", "crops_to_tensor", "planes_to_tensor"]

CROP_SIZE = 32
"""Side of the classifier's input in pixels."""

CROP_CONTEXT = 1.3
"""The crop's side is this many times the box's longer side (keeps the whole glyph and pip)."""


def crop_index(
    image: NDArray[np.uint8],
    box_xyxy: tuple[float, float, float, float] | NDArray[np.floating[Any]],
    size: int = CROP_SIZE,
    context: float = CROP_CONTEXT,
) -> NDArray[np.uint8]:
    """A ``size`` x ``size`` BGR crop centred on the box, ``context`` times its longer side.

    Parts outside the image are filled by replicating the border; shrinking uses area
    averaging, so a small index in a large photo keeps its strokes.
    """
    x1, y1, x2, y2 = (float(v) for v in box_xyxy)
    side = max(x2 - x1, y2 - y1, 2.0) * context
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    left, top = round(cx - side / 2), round(cy - side / 2)
    span = max(2, round(side))
    height, width = image.shape[:2]
    pad_left, pad_top = max(0, -left), max(0, -top)
    pad_right, pad_bottom = max(0, left + span - width), max(0, top + span - height)
    region = image[max(0, top) : min(height, top + span), max(0, left) : min(width, left + span)]
    if region.size == 0:
        return np.zeros((size, size, 3), np.uint8)
    if pad_left or pad_top or pad_right or pad_bottom:
        region = cast(
            NDArray[np.uint8],
            cv2.copyMakeBorder(
                region, pad_top, pad_bottom, pad_left, pad_right, cv2.BORDER_REPLICATE
            ),
        )
    interpolation = cv2.INTER_AREA if span > size else cv2.INTER_LINEAR
    return cast(NDArray[np.uint8], cv2.resize(region, (size, size), interpolation=interpolation))


def crops_to_tensor(crops: NDArray[np.uint8]) -> NDArray[np.float32]:
    """(N, S, S, 3) BGR uint8 crops to the network's (N, 3, S, S) RGB float32 input in [0, 1]."""
    return planes_to_tensor(crops)


def planes_to_tensor(images: NDArray[np.uint8]) -> NDArray[np.float32]:
    """(N, H, W, 3) BGR uint8 images as an (N, 3, H, W) RGB float32 array in [0, 1]: each
    channel divided by 255 straight into its plane (one pass, where a transpose, a cast and a
    division take three; the same values)."""
    count, height, width = images.shape[:3]
    out = np.empty((count, 3, height, width), np.float32)
    for plane in range(3):
        np.divide(images[..., 2 - plane], np.float32(255.0), out=out[:, plane], dtype=np.float32)
    return out

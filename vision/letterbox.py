"""Detector preprocessing: letterbox an image to the network's square input, as in training.

Ultralytics trains on images resized with their aspect ratio kept (bilinear) and padded with
grey (114) to a square, centred; boxes map back through the returned ``Letterbox``.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.crops import planes_to_tensor

__all__ = ["Letterbox", "letterbox"]

PAD_VALUE = 114


@dataclass(frozen=True, slots=True)
class Letterbox:
    """The transform used: network pixels = image pixels * scale + (pad_x, pad_y)."""

    scale: float
    pad_x: float
    pad_y: float

    def to_image(self, xyxy: NDArray[np.float32]) -> NDArray[np.float32]:
        """Map (N, 4) boxes from network input pixels back to image pixels."""
        out = xyxy.copy()
        out[:, [0, 2]] = (out[:, [0, 2]] - self.pad_x) / self.scale
        out[:, [1, 3]] = (out[:, [1, 3]] - self.pad_y) / self.scale
        return out


def letterbox(
    image: NDArray[np.uint8], size: int, stride: int = 0
) -> tuple[NDArray[np.float32], Letterbox]:
    """The (1, 3, size, size) RGB float32 input in [0, 1] and the transform that made it: the
    image scaled to fit ``size`` with its aspect kept, centred on grey.

    With a ``stride`` (a network that takes any input size), the shorter side is padded only
    up to a multiple of it, not to ``size``: a 4:3 image becomes 320 x 256 instead of 320 x
    320, a fifth less work for the same pixels of the image (YOLO's rectangular inference)."""
    height, width = image.shape[:2]
    scale = min(size / height, size / width)
    # (a side of a very elongated image would round to 0 pixels, which OpenCV refuses)
    new_w, new_h = max(1, round(width * scale)), max(1, round(height * scale))
    interpolation = cv2.INTER_AREA if scale < 0.5 else cv2.INTER_LINEAR
    resized = (
        cv2.resize(image, (new_w, new_h), interpolation=interpolation) if scale != 1 else image
    )
    out_w, out_h = (
        (-(-new_w // stride) * stride, -(-new_h // stride) * stride) if stride else (size, size)
    )
    pad_x, pad_y = (out_w - new_w) / 2, (out_h - new_h) / 2
    top, left = round(pad_y - 0.1), round(pad_x - 0.1)
    canvas = np.full((out_h, out_w, 3), PAD_VALUE, np.uint8)
    canvas[top : top + new_h, left : left + new_w] = resized
    return planes_to_tensor(canvas[None]), Letterbox(scale, float(left), float(top))

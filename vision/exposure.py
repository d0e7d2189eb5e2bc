"""Exposure: a dim photo brightened before it is read (``ReaderSettings.exposure_target``), and
the check that what is read is a colour image at all."""

from __future__ import annotations

import math

import cv2
import numpy as np
from numpy.typing import NDArray

__all__ = ["bgr_image", "brightened"]


def brightened(image: NDArray[np.uint8], target: float) -> NDArray[np.uint8]:
    """``image`` scaled up so that its 99th-percentile brightness is ``target``, if it is
    darker than that (a photo in a dim room, an underexposed webcam frame); else ``image``
    itself.

    The percentile is taken on at most 20,000 pixels of a grey view, so a 12 MP photo costs
    little more than a frame. Brightness here is the grey level (0-255) of OpenCV's BGR to
    grey conversion; ``target`` 0 turns the step off.
    """
    if target <= 0:
        return image
    height, width = image.shape[:2]
    step = max(1, math.ceil((height * width / 20_000) ** 0.5))
    grey = cv2.cvtColor(np.ascontiguousarray(image[::step, ::step]), cv2.COLOR_BGR2GRAY)
    counts = np.cumsum(cv2.calcHist([grey], [0], None, [256], [0, 256]).ravel())
    bright = float(np.searchsorted(counts, 0.99 * counts[-1]))  # the 99th-percentile level
    if bright >= target:
        return image
    return np.asarray(cv2.convertScaleAbs(image, alpha=target / max(bright, 1.0)), np.uint8)


def bgr_image(
    image: object, what: str = "image", error: type[ValueError] = ValueError
) -> NDArray[np.uint8]:
    """``image`` itself when it is a BGR uint8 array (H, W, 3); else ``error`` naming it
    ``what`` with its shape and type."""
    if (
        not isinstance(image, np.ndarray)
        or image.dtype != np.uint8
        or image.ndim != 3
        or image.shape[2] != 3
    ):
        shape, dtype = getattr(image, "shape", None), getattr(image, "dtype", None)
        raise error(f"expected a BGR uint8 {what} of shape (H, W, 3), got {shape} {dtype}")
    return image

"""What the index classifier sees: gradient-orientation histograms and colour maps of a crop.

A 48 x 48 crop gives a 972-number vector: HOG (6 x 6 cells of 8 px, 9 unsigned orientation
bins, 2 x 2-cell blocks L2-Hys normalised: 900 numbers), then a 6 x 6 map of "red ink"
(saturated red hues) and a 6 x 6 map of dark ink. Computed with numpy and OpenCV only, the same
way in training and at run time.
"""

from __future__ import annotations

import cv2
import numpy as np
from numpy.typing import NDArray

__all__ = ["FEATURE_CROP_SIZE", "FEATURE_SIZE", "index_features"]

FEATURE_CROP_SIZE = 48
"""Side of the crops these features describe."""
CROP_SIZE = FEATURE_CROP_SIZE

_CELL = 8
_CELLS = CROP_SIZE // _CELL
_BINS = 9
FEATURE_SIZE = (_CELLS - 1) ** 2 * 4 * _BINS + 2 * _CELLS * _CELLS
"""Length of one feature vector (972 for 48 px crops)."""


def _hog(gray: NDArray[np.float32]) -> NDArray[np.float32]:
    count = gray.shape[0]
    gx = np.zeros_like(gray)
    gy = np.zeros_like(gray)
    gx[:, :, 1:-1] = gray[:, :, 2:] - gray[:, :, :-2]
    gy[:, 1:-1, :] = gray[:, 2:, :] - gray[:, :-2, :]
    magnitude = np.hypot(gx, gy)
    position = (np.degrees(np.arctan2(gy, gx)) % 180.0) / (180.0 / _BINS)
    low = np.floor(position).astype(np.int64) % _BINS
    share = position - np.floor(position)
    high = (low + 1) % _BINS
    cells = np.zeros((count, _CELLS, _CELLS, _BINS), np.float32)
    for bin_index in range(_BINS):
        weight = magnitude * ((low == bin_index) * (1 - share) + (high == bin_index) * share)
        cells[..., bin_index] = weight.reshape(count, _CELLS, _CELL, _CELLS, _CELL).sum(axis=(2, 4))
    blocks = np.stack(
        [
            cells[:, i : i + 2, j : j + 2].reshape(count, 4 * _BINS)
            for i in range(_CELLS - 1)
            for j in range(_CELLS - 1)
        ],
        axis=1,
    )
    blocks /= np.sqrt((blocks**2).sum(axis=2, keepdims=True) + 1e-3)
    blocks = np.minimum(blocks, 0.2)
    blocks /= np.sqrt((blocks**2).sum(axis=2, keepdims=True) + 1e-3)
    return blocks.reshape(count, -1).astype(np.float32)


def index_features(crops: NDArray[np.uint8]) -> NDArray[np.float32]:
    """(N, S, S, 3) BGR crops to (N, FEATURE_SIZE) float32 features."""
    if crops.ndim != 4 or crops.shape[1:] != (CROP_SIZE, CROP_SIZE, 3):
        raise ValueError(
            f"crops must have shape (N, {CROP_SIZE}, {CROP_SIZE}, 3), got {crops.shape}"
        )
    count = crops.shape[0]
    if count == 0:
        return np.zeros((0, FEATURE_SIZE), np.float32)
    gray = crops.astype(np.float32).mean(axis=3) / 255.0
    hog = _hog(gray)
    flat = crops.reshape(count * CROP_SIZE, CROP_SIZE, 3)
    hsv = cv2.cvtColor(np.ascontiguousarray(flat), cv2.COLOR_BGR2HSV).reshape(crops.shape)
    hue = hsv[..., 0]
    saturation = hsv[..., 1].astype(np.float32) / 255.0
    red = ((hue < 10) | (hue > 170)).astype(np.float32) * saturation
    dark = (hsv[..., 2] < 100).astype(np.float32)
    pooled = [
        m.reshape(count, _CELLS, _CELL, _CELLS, _CELL).mean(axis=(2, 4)).reshape(count, -1)
        for m in (red, dark)
    ]
    return np.concatenate([hog, *pooled], axis=1).astype(np.float32)

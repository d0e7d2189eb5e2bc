"""Camera and lighting effects applied to a composed scene (float32 BGR, about 0..255)."""

from __future__ import annotations

from typing import Any, cast

import cv2
import numpy as np
from numpy.typing import NDArray

from training.synth.config import Photometry

__all__ = ["apply_photometry", "cast_shadow"]


def cast_shadow(
    canvas: NDArray[np.float32],
    alpha: NDArray[np.float32],
    x0: int,
    y0: int,
    rng: np.random.Generator,
) -> None:
    """Darken ``canvas`` under a blurred, offset copy of a card's alpha (in place)."""
    height, width = canvas.shape[:2]
    dx, dy = (int(v) for v in rng.integers(-6, 7, 2))
    blur = int(rng.integers(1, 6)) * 2 + 1
    shade = cv2.GaussianBlur(alpha, (blur, blur), 0) * rng.uniform(0.15, 0.45)
    ah, aw = shade.shape
    x1, y1 = x0 + dx, y0 + dy
    cx0, cy0, cx1, cy1 = max(0, x1), max(0, y1), min(width, x1 + aw), min(height, y1 + ah)
    if cx0 >= cx1 or cy0 >= cy1:
        return
    region = shade[cy0 - y1 : cy1 - y1, cx0 - x1 : cx1 - x1]
    canvas[cy0:cy1, cx0:cx1] *= (1.0 - region)[..., None]


def _axes(width: int, height: int) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """Pixel coordinates as a row (1, width) and a column (height, 1): broadcast together they
    give, pixel for pixel, the values of a full ``np.mgrid`` grid at a fraction of the cost."""
    xs = np.arange(width, dtype=np.float32)[None, :]
    ys = np.arange(height, dtype=np.float32)[:, None]
    return xs, ys


def _gradient(rng: np.random.Generator, width: int, height: int) -> NDArray[np.float64]:
    # float64: the NumPy scalars np.cos(angle) and np.sin(angle) promote the float32 grid
    xs, ys = _axes(width, height)
    angle = rng.uniform(0, 2 * np.pi)
    ramp = (xs * np.cos(angle) + ys * np.sin(angle)) / max(width, height)
    ramp -= ramp.min()
    strength = rng.uniform(0.2, 0.6)
    gradient: NDArray[np.float64] = (
        1.0 - strength * ramp / max(float(ramp.max()), 1e-6)
    ) * rng.uniform(0.85, 1.25)
    return gradient


def _glare(rng: np.random.Generator, width: int, height: int) -> NDArray[np.float32]:
    xs, ys = _axes(width, height)
    cx, cy = rng.uniform(0, width), rng.uniform(0, height)
    radius = rng.uniform(0.05, 0.3) * max(width, height)
    glare = np.exp(-((xs - cx) ** 2 + (ys - cy) ** 2) / (2 * radius**2)) * rng.uniform(60, 180)
    return cast(NDArray[np.float32], glare)  # float32: Python floats do not promote it


def _motion_kernel(rng: np.random.Generator) -> NDArray[np.float32]:
    length = int(rng.integers(3, 7))
    kernel = np.zeros((length, length), np.float32)
    kernel[length // 2, :] = 1.0
    rotation = cv2.getRotationMatrix2D(
        (length / 2 - 0.5, length / 2 - 0.5), rng.uniform(0, 180), 1.0
    )
    kernel = cast(NDArray[np.float32], cv2.warpAffine(kernel, rotation, (length, length)))
    return kernel / max(float(kernel.sum()), 1e-6)


def _floating(image: object) -> NDArray[np.floating[Any]]:
    """An OpenCV result typed as what it is: a float image of the input's dtype."""
    return cast(NDArray[np.floating[Any]], image)


def apply_photometry(
    image: NDArray[np.floating[Any]], settings: Photometry, rng: np.random.Generator
) -> NDArray[np.uint8]:
    """Lighting, glare, colour cast, blur, overexposure, noise and low resolution; returns
    uint8 BGR.

    ``image`` is left as it was; the effects work in place on the first copy made of it.
    """
    # the scene is float32, float64 once a lighting gradient has been applied; in-place steps
    # are taken only where the result keeps the image's type, so values are those of
    # ``image = image + effect`` exactly
    height, width = image.shape[:2]
    owned = False  # whether ``image`` is already a copy of our own
    if rng.random() < settings.gradient_probability:
        image = image * _gradient(rng, width, height)[..., None]
        owned = True
    if rng.random() < settings.glare_probability:
        glare = _glare(rng, width, height)[..., None]
        if owned:
            image += glare
        else:
            image, owned = image + glare, True
    if rng.random() < settings.color_cast_probability:
        casts = np.array(
            [[1.25, 1.0, 0.8], [0.75, 0.95, 1.2], [1.0, 1.1, 1.0], [1.1, 1.05, 0.9]], np.float32
        )  # BGR: webcam blue, tungsten yellow, green fluorescent, warm
        cast = casts[rng.integers(len(casts))] * rng.uniform(0.9, 1.1, 3).astype(np.float32)
        if owned:
            image *= cast[None, None, :]
        else:
            image, owned = image * cast[None, None, :], True
    # at most one kind of blur per scene, and mild: a 12 px index must stay legible, as it does
    # in a real photo that a person would ask to read (heavier blur made unreadable labels)
    blurred = False
    if rng.random() < settings.blur_probability:
        sigma = rng.uniform(0.4, 1.1)
        image, owned = _floating(cv2.GaussianBlur(image, (0, 0), sigma)), True
        blurred = True
    if not blurred and rng.random() < settings.motion_blur_probability:
        image, owned = _floating(cv2.filter2D(image, -1, _motion_kernel(rng))), True
        blurred = True
    # overexposure draws only when asked for, so that older configs keep their exact scenes
    if settings.overexposure_probability > 0 and rng.random() < settings.overexposure_probability:
        gain = rng.uniform(1.3, 1.9)
        if owned:
            image *= gain
        else:
            image, owned = image * gain, True
        np.minimum(image, 255.0, out=image)  # the sensor clips at white before its noise
    if rng.random() < settings.noise_probability:
        noise = rng.normal(0, rng.uniform(2, 12), image.shape).astype(np.float32)
        if owned:
            image += noise
        else:
            image, owned = image + noise, True
    if not blurred and rng.random() < settings.low_resolution_probability:
        factor = rng.uniform(0.55, 0.8)
        small = cv2.resize(
            image,
            (max(8, int(width * factor)), max(8, int(height * factor))),
            interpolation=cv2.INTER_AREA,
        )
        image = _floating(cv2.resize(small, (width, height), interpolation=cv2.INTER_LINEAR))
        owned = True
    result: NDArray[np.uint8] = np.clip(image, 0, 255, out=image if owned else None).astype(
        np.uint8
    )
    return result

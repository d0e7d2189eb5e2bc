"""Table backgrounds: real photos (wallpaper packages) and procedural felt, wood and cloth.

Photos are decoded at half size; decoding a wallpaper takes 40-120 ms, more than the rest of a
scene, so each decoded photo is cached outside git (``$HANDREADER_CACHE`` or
``~/.cache/handreader``, ``backgrounds/<key>.npy``, about 3 MB each) and memory-mapped from
there: processes share the pages and a later run decodes nothing. The key covers the photo's
path, size and modification time, so an edited photo is decoded again.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import cast

import cv2
import numpy as np
from numpy.typing import NDArray

from training.synth.decks import cache_dir

__all__ = ["background", "photo_files", "prepare_photos"]

_PHOTO_SUFFIXES = {".jpg", ".jpeg", ".png"}

_DECODED_VERSION = 1
"""Version of the decoded-photo cache (1: ``cv2.IMREAD_REDUCED_COLOR_2``, BGR uint8)."""


@lru_cache(maxsize=8)
def photo_files(folders: tuple[str, ...]) -> tuple[Path, ...]:
    """Background photos under the folders, sorted so that draws are reproducible."""
    found: list[Path] = []
    for folder in folders:
        root = Path(folder)
        if root.is_dir():
            found += [
                p for p in root.rglob("*") if p.suffix.lower() in _PHOTO_SUFFIXES and p.is_file()
            ]
    return tuple(sorted(found))


def _decoded_file(path: Path) -> Path:
    """Where the decoded photo is cached (keyed by path, size and modification time)."""
    status = path.stat()
    key = f"{path.resolve()}|{status.st_size}|{status.st_mtime_ns}|{_DECODED_VERSION}"
    digest = hashlib.sha256(key.encode()).hexdigest()[:24]
    return cache_dir() / "backgrounds" / f"{digest}.npy"


def _decode_photo(path: Path, cached: Path) -> NDArray[np.uint8] | None:
    """Decode the photo at half size and cache it (atomically); None when unreadable."""
    image = cv2.imread(str(path), cv2.IMREAD_REDUCED_COLOR_2)
    if image is None:
        return None
    cached.parent.mkdir(parents=True, exist_ok=True)
    partial = cached.with_name(f"{cached.stem}.{os.getpid()}.part.npy")
    np.save(partial, image)
    partial.replace(cached)
    return cast(NDArray[np.uint8], image)


@lru_cache(maxsize=1024)
def _load_photo(path: Path) -> NDArray[np.uint8] | None:
    """The photo decoded at half size (``cv2.IMREAD_REDUCED_COLOR_2``), read-only: mapped from
    the decoded-photo cache, decoded (and cached) on first use. None when unreadable."""
    try:
        cached = _decoded_file(path)
    except OSError:
        return None
    try:
        return cast(NDArray[np.uint8], np.load(cached, mmap_mode="r"))
    except (OSError, ValueError):
        return _decode_photo(path, cached)


def prepare_photos(photos: Iterable[Path]) -> int:
    """Decode into the cache the photos not yet there; returns how many were decoded."""
    decoded = 0
    for path in photos:
        cached = _decoded_file(path)
        if not cached.is_file():
            decoded += _decode_photo(path, cached) is not None
    return decoded


def _smooth_noise(
    rng: np.random.Generator, width: int, height: int, cells: int
) -> NDArray[np.float32]:
    """Low-frequency noise in [0, 1]: a small random grid scaled up smoothly."""
    grid = rng.random((max(2, cells * height // max(width, 1) + 1), cells + 1)).astype(np.float32)
    resized = cast(
        NDArray[np.float32], cv2.resize(grid, (width, height), interpolation=cv2.INTER_CUBIC)
    )
    return resized.clip(0, 1)


def _felt(rng: np.random.Generator, width: int, height: int) -> NDArray[np.float32]:
    palette = np.array(
        [
            [40, 110, 35],
            [30, 90, 60],
            [120, 60, 20],
            [40, 40, 140],
            [60, 60, 60],
            [20, 70, 20],
            [90, 30, 30],
            [150, 150, 150],
            [30, 30, 30],
            [200, 200, 205],
            [100, 140, 170],
        ],
        np.float32,
    )
    base = palette[rng.integers(len(palette))] * rng.uniform(0.7, 1.3)
    low = _smooth_noise(rng, width, height, int(rng.integers(3, 9)))[..., None]
    fine = rng.normal(0, rng.uniform(2, 10), (height, width, 1)).astype(np.float32)
    felt: NDArray[np.float32] = base[None, None, :] * (0.85 + 0.3 * low) + fine
    return felt


def _axes(width: int, height: int) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """Pixel coordinates as a row (1, width) and a column (height, 1): broadcast together they
    give, pixel for pixel, the values of a full ``np.mgrid`` grid at a fraction of the cost."""
    xs = np.arange(width, dtype=np.float32)[None, :]
    ys = np.arange(height, dtype=np.float32)[:, None]
    return xs, ys


def _wood(rng: np.random.Generator, width: int, height: int) -> NDArray[np.float64]:
    # float64: the NumPy scalars np.cos(angle) and np.sin(angle) promote the float32 grid
    tone = np.array([rng.uniform(20, 70), rng.uniform(60, 120), rng.uniform(110, 190)], np.float32)
    xs, ys = _axes(width, height)
    angle = rng.uniform(0, np.pi)
    along = xs * np.cos(angle) + ys * np.sin(angle)
    across = -xs * np.sin(angle) + ys * np.cos(angle)
    warp = _smooth_noise(rng, width, height, 4) * rng.uniform(5, 30)
    grain = 0.5 + 0.5 * np.sin((across + warp) * rng.uniform(0.05, 0.3) + 0.002 * along)
    wood: NDArray[np.float64] = tone[None, None, :] * (0.75 + 0.35 * grain[..., None])
    return wood


def _cloth(rng: np.random.Generator, width: int, height: int) -> NDArray[np.float32]:
    colour = rng.uniform(30, 220, 3).astype(np.float32)
    xs, ys = _axes(width, height)
    period = rng.uniform(2, 6)
    weave = 0.5 + 0.25 * (np.sin(xs * np.pi / period) + np.sin(ys * np.pi / period))
    cloth: NDArray[np.float32] = colour[None, None, :] * (0.8 + 0.3 * weave[..., None])
    return cloth


def background(
    rng: np.random.Generator,
    width: int,
    height: int,
    photos: tuple[Path, ...],
    photo_probability: float,
) -> NDArray[np.float32]:
    """A BGR float32 background of the given size (values about 0..255)."""
    if photos and rng.random() < photo_probability:
        photo = _load_photo(photos[int(rng.integers(len(photos)))])
        if photo is not None:
            ph, pw = photo.shape[:2]
            scale = max(width / pw, height / ph) * rng.uniform(1.0, 2.0)
            crop_w, crop_h = min(pw, int(width / scale) + 1), min(ph, int(height / scale) + 1)
            x0 = int(rng.integers(0, pw - crop_w + 1))
            y0 = int(rng.integers(0, ph - crop_h + 1))
            crop = photo[y0 : y0 + crop_h, x0 : x0 + crop_w]
            return cv2.resize(crop, (width, height), interpolation=cv2.INTER_LINEAR).astype(
                np.float32
            )
    kind = rng.integers(3)
    maker = (_felt, _wood, _cloth)[int(kind)]
    return maker(rng, width, height).astype(np.float32)

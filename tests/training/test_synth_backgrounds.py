"""Backgrounds and photometry of the synthetic scenes: the decoded-photo cache and the
value-preserving shortcuts taken for speed ("Benchmark": 30 images/s or more).

Decoding a wallpaper costs more than the rest of a scene, so decoded photos are cached on disk
and memory-mapped (training/synth/backgrounds.py); the cache must give exactly the pixels a fresh
decode gives, and an edited or unreadable photo must not be served stale. Nothing here needs
the card art: photos are written by the tests, the cache lives in a temporary folder.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import cv2
import numpy as np
import pytest
from numpy.typing import NDArray

from training.synth import backgrounds, photometry
from training.synth.backgrounds import background, prepare_photos
from training.synth.config import Photometry


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty render cache (``$HANDREADER_CACHE``) and a cold in-process photo cache."""
    root = tmp_path / "cache"
    monkeypatch.setenv("HANDREADER_CACHE", str(root))
    backgrounds._load_photo.cache_clear()
    yield root
    backgrounds._load_photo.cache_clear()


def write_photo(path: Path, seed: int, size_wh: tuple[int, int] = (160, 120)) -> Path:
    """A JPEG of smooth random colour, ``size_wh`` pixels."""
    rng = np.random.default_rng(seed)
    small = rng.integers(0, 256, (6, 8, 3), dtype=np.uint8)
    image = cv2.resize(small, size_wh, interpolation=cv2.INTER_CUBIC)
    assert cv2.imwrite(str(path), image)
    return path


def decoded(path: Path) -> NDArray[np.uint8]:
    image = cv2.imread(str(path), cv2.IMREAD_REDUCED_COLOR_2)
    assert image is not None
    return np.asarray(image, np.uint8)


def test_cached_photo_is_the_decoded_photo(cache: Path, tmp_path: Path) -> None:
    """First use decodes and caches; later uses map the cache: the same pixels either way."""
    photo = write_photo(tmp_path / "table.jpg", 1)
    first = backgrounds._load_photo(photo)
    assert first is not None
    np.testing.assert_array_equal(first, decoded(photo))
    assert len(list((cache / "backgrounds").glob("*.npy"))) == 1
    backgrounds._load_photo.cache_clear()
    second = backgrounds._load_photo(photo)
    assert isinstance(second, np.memmap) and not second.flags.writeable
    np.testing.assert_array_equal(second, decoded(photo))


def test_edited_photo_is_decoded_again(cache: Path, tmp_path: Path) -> None:
    """The cache key holds the photo's size and modification time: no stale pixels."""
    photo = write_photo(tmp_path / "table.jpg", 1)
    assert backgrounds._load_photo(photo) is not None
    write_photo(photo, 2, (200, 150))
    os.utime(photo, ns=(1, 1))  # and a different modification time for certain
    backgrounds._load_photo.cache_clear()
    again = backgrounds._load_photo(photo)
    assert again is not None
    np.testing.assert_array_equal(again, decoded(photo))
    assert len(list((cache / "backgrounds").glob("*.npy"))) == 2


@pytest.mark.parametrize(
    ("case", "content"),
    [
        ("not an image", b"this is no JPEG"),
        ("empty file", b""),
    ],
)
def test_unreadable_photo_is_none_and_not_cached(
    cache: Path, tmp_path: Path, case: str, content: bytes
) -> None:
    photo = tmp_path / "broken.jpg"
    photo.write_bytes(content)
    assert backgrounds._load_photo(photo) is None, case
    assert not list(cache.rglob("*.npy"))


def test_corrupt_cache_entry_is_decoded_again(cache: Path, tmp_path: Path) -> None:
    photo = write_photo(tmp_path / "table.jpg", 3)
    assert backgrounds._load_photo(photo) is not None
    (entry,) = (cache / "backgrounds").glob("*.npy")
    entry.write_bytes(b"truncated")
    backgrounds._load_photo.cache_clear()
    again = backgrounds._load_photo(photo)
    assert again is not None
    np.testing.assert_array_equal(again, decoded(photo))


def test_prepare_photos_decodes_each_photo_once(cache: Path, tmp_path: Path) -> None:
    photos = [write_photo(tmp_path / f"p{index}.jpg", index) for index in range(3)]
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"no PNG")
    assert prepare_photos([*photos, broken]) == 3
    assert prepare_photos([*photos, broken]) == 0


def test_background_is_the_same_from_a_cold_or_a_warm_cache(cache: Path, tmp_path: Path) -> None:
    """A scene's background does not depend on whether its photo was cached."""
    photos = (write_photo(tmp_path / "a.jpg", 4, (400, 300)),)
    cold = background(np.random.default_rng(9), 64, 48, photos, 1.0)
    backgrounds._load_photo.cache_clear()
    warm = background(np.random.default_rng(9), 64, 48, photos, 1.0)
    np.testing.assert_array_equal(cold, warm)
    assert cold.shape == (48, 64, 3) and cold.dtype == np.float32


Axes = Callable[[int, int], tuple[NDArray[np.float32], NDArray[np.float32]]]


@pytest.mark.parametrize(
    "axes", [backgrounds._axes, photometry._axes], ids=["backgrounds", "photometry"]
)
def test_axes_broadcast_to_the_full_grid(axes: Axes) -> None:
    """The row and column of pixel coordinates give the values of ``np.mgrid``, so effects
    computed from them equal those computed on the full grid."""
    xs, ys = axes(7, 5)
    grid_ys, grid_xs = np.mgrid[0:5, 0:7].astype(np.float32)
    np.testing.assert_array_equal(np.broadcast_to(xs, (5, 7)), grid_xs)
    np.testing.assert_array_equal(np.broadcast_to(ys, (5, 7)), grid_ys)
    assert xs.dtype == ys.dtype == np.float32


ALL_ON = Photometry(
    gradient_probability=1.0,
    shadow_probability=1.0,
    glare_probability=1.0,
    color_cast_probability=1.0,
    blur_probability=1.0,
    motion_blur_probability=1.0,
    noise_probability=1.0,
    low_resolution_probability=1.0,
)
ALL_OFF = Photometry(
    gradient_probability=0.0,
    shadow_probability=0.0,
    glare_probability=0.0,
    color_cast_probability=0.0,
    blur_probability=0.0,
    motion_blur_probability=0.0,
    noise_probability=0.0,
    low_resolution_probability=0.0,
)


@pytest.mark.parametrize(
    ("case", "settings"),
    [
        ("every effect", ALL_ON),
        ("no effect", ALL_OFF),
        ("glare alone", dataclasses.replace(ALL_OFF, glare_probability=1.0)),
        ("cast alone", dataclasses.replace(ALL_OFF, color_cast_probability=1.0)),
        ("noise alone", dataclasses.replace(ALL_OFF, noise_probability=1.0)),
        (
            "gradient and noise",
            dataclasses.replace(ALL_OFF, gradient_probability=1.0, noise_probability=1.0),
        ),
        ("overexposure alone", dataclasses.replace(ALL_OFF, overexposure_probability=1.0)),
        (
            "gradient and overexposure",
            dataclasses.replace(ALL_OFF, gradient_probability=1.0, overexposure_probability=1.0),
        ),
    ],
)
def test_photometry_leaves_its_input_alone(case: str, settings: Photometry) -> None:
    """Effects work in place only on a copy of their own: the scene passed in is unchanged,
    and the same input and draws give the same image."""
    scene = np.random.default_rng(0).uniform(0, 255, (48, 64, 3)).astype(np.float32)
    kept = scene.copy()
    first = photometry.apply_photometry(scene, settings, np.random.default_rng(1))
    np.testing.assert_array_equal(scene, kept)
    second = photometry.apply_photometry(kept, settings, np.random.default_rng(1))
    np.testing.assert_array_equal(first, second)
    assert first.dtype == np.uint8 and first.shape == scene.shape, case


def test_overexposure_brightens_and_clips_at_white() -> None:
    """Every value times 1.3 to 1.9, clipped at 255: a value of 100 lands in 130-190, one of
    200 at white."""
    scene = np.full((8, 8, 3), 100.0, np.float32)
    scene[:4] = 200.0
    out = photometry.apply_photometry(
        scene, dataclasses.replace(ALL_OFF, overexposure_probability=1.0), np.random.default_rng(3)
    )
    assert (out[:4] == 255).all()
    assert 130 <= int(out[4:].min()) == int(out[4:].max()) <= 190


def test_no_overexposure_draws_nothing() -> None:
    """Its probability 0 (every config before it) draws no number: with every effect off,
    apply_photometry draws one number per effect it considers (gradient, glare, cast, blur,
    motion blur, noise, low resolution: seven), as it did before overexposure existed, so
    scenes stay byte for byte what they were."""
    scene = np.random.default_rng(0).uniform(0, 255, (16, 16, 3)).astype(np.float32)
    used = np.random.default_rng(5)
    photometry.apply_photometry(scene, ALL_OFF, used)
    assert ALL_OFF.overexposure_probability == 0.0
    counted = np.random.default_rng(5)
    for _ in range(7):
        counted.random()
    assert used.random() == counted.random()
    drawn = np.random.default_rng(5)  # asked for, it draws two more: the chance, the gain
    photometry.apply_photometry(
        scene, dataclasses.replace(ALL_OFF, overexposure_probability=1.0), drawn
    )
    counted = np.random.default_rng(5)
    for _ in range(9):
        counted.random()
    assert drawn.random() == counted.random()

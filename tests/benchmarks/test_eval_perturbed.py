"""The perturbations and the table of ``benchmarks/eval_perturbed.py``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest
from benchmark_modules import load_benchmark

perturbed = load_benchmark("eval_perturbed")
ROOT = Path(__file__).resolve().parents[2]


def _picture() -> np.ndarray:
    """A 60 x 90 (h x w) picture with a white square near its top-left corner."""
    image = np.full((60, 90, 3), 40, np.uint8)
    image[5:15, 5:15] = 255
    return image


def test_quarter_turns_keep_every_pixel() -> None:
    image = _picture()
    once = perturbed.turned(image, 90)
    assert once.shape == (90, 60, 3)
    assert once[-15:-5, 5:15].min() == 255  # counter-clockwise: top-left goes bottom-left
    four = image
    for _ in range(4):
        four = perturbed.turned(four, 90)
    assert np.array_equal(four, image)
    assert np.array_equal(perturbed.turned(perturbed.turned(image, 180), 180), image)


def test_an_odd_turn_grows_the_canvas_and_fills_it_with_the_median() -> None:
    image = _picture()
    out = perturbed.turned(image, 30)
    cos, sin = np.cos(np.radians(30)), np.sin(np.radians(30))
    assert out.shape[:2] == (round(60 * cos + 90 * sin), round(60 * sin + 90 * cos))
    assert tuple(out[0, 0]) == (40, 40, 40)  # a corner outside the photo: its median colour
    assert int((out == 255).all(axis=2).sum()) >= 60  # the white square is still there


def test_scaled_tilted_darker_blurred_compressed_keep_a_colour_image() -> None:
    image = _picture()
    assert perturbed.scaled(image, 0.5).shape == (30, 45, 3)
    slanted = perturbed.tilted(image, 0.3)
    assert slanted.shape == image.shape
    assert tuple(slanted[0, 0]) == (40, 40, 40) and slanted[59, 0].max() == 40  # top narrowed
    assert perturbed.relit(image, 0.5).max() == 127
    soft = perturbed.blurred(image, 0.05)
    assert soft.shape == image.shape and soft.max() < 255
    jpeg = perturbed.compressed(image, 25)
    assert jpeg.shape == image.shape and jpeg.dtype == np.uint8
    assert np.abs(jpeg.astype(int) - image).mean() < 20


def test_greyscale_keeps_three_equal_channels() -> None:
    image = _picture()
    grey = perturbed.greyscale(image)
    assert grey.shape == image.shape and grey.dtype == np.uint8
    assert np.array_equal(grey[..., 0], grey[..., 1])
    assert np.array_equal(grey[..., 1], grey[..., 2])


def test_tint_and_overexposure() -> None:
    image = _picture()
    warm = perturbed.tinted(image, (0.5, 0.8, 1.0))
    assert warm[10, 10].tolist() == [127, 204, 255] and warm[0, 0].tolist() == [20, 32, 40]
    assert perturbed.relit(image, 1.6)[10, 10].tolist() == [255, 255, 255]  # clipped
    assert perturbed.relit(image, 1.6)[0, 0].tolist() == [64, 64, 64]


def test_noise_is_seeded() -> None:
    image = _picture()
    first, again = perturbed.noisy(image, 12.0, 7), perturbed.noisy(image, 12.0, 7)
    assert np.array_equal(first, again)
    assert not np.array_equal(first, perturbed.noisy(image, 12.0, 8))
    assert 8 < np.abs(first.astype(int) - image).mean() < 12


def test_every_perturbation_keeps_the_photo_readable_as_an_image() -> None:
    image = _picture()
    for name, perturb in perturbed.PERTURBATIONS.items():
        out = perturb(image, 3)
        assert out.dtype == np.uint8 and out.ndim == 3 and out.shape[2] == 3, name
    assert next(iter(perturbed.PERTURBATIONS)) == "as taken"


def test_table_on_the_example_photo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The shipped models read the example hand as taken and turned half a turn (a 6 is not
    a 9); the table puts the baseline first and the change of F1 beside each perturbation."""
    shutil.copyfile(ROOT / "examples" / "hand.jpg", tmp_path / "hand.jpg")
    cards = json.loads((ROOT / "examples" / "hand.json").read_text())["cards"]
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text(json.dumps({"image": "hand.jpg", "cards": cards}) + "\n")
    assert perturbed.main([str(manifest), "--only", "turned 180,half size"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"{manifest}: 1 photos, {len(cards)} cards"
    rows = {line[2:14].strip(): line[14:].split() for line in lines[2:]}
    assert list(rows) == ["as taken", "turned 180", "half size"]
    assert len(rows["as taken"]) == 4  # precision, recall, F1, uncertain: no change column
    assert len(rows["turned 180"]) == 5 and rows["turned 180"][-1][0] in "+-"
    totals = perturbed.evaluate(
        perturbed.Reader.load(ROOT / "models"), manifest, ["as taken", "turned 180"]
    )
    assert totals["as taken"].f1 >= 0.8 and totals["turned 180"].f1 >= 0.8


def test_unknown_perturbation_and_missing_manifest_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        perturbed.main([str(tmp_path / "m.jsonl"), "--only", "sideways"])
    assert "unknown perturbation 'sideways'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        perturbed.main([str(tmp_path / "m.jsonl")])
    assert f"no such manifest: {tmp_path / 'm.jsonl'}" in capsys.readouterr().err


def test_an_unreadable_photo_counts_as_failed_in_every_row(tmp_path: Path) -> None:
    (tmp_path / "broken.jpg").write_bytes(b"not an image")
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text(json.dumps({"image": "broken.jpg", "cards": ["7H"]}) + "\n")
    totals = perturbed.evaluate(
        perturbed.Reader.load(ROOT / "models"), manifest, ["as taken", "noisy"]
    )
    assert [t.failed for t in totals.values()] == [1, 1]
    assert [t.recall for t in totals.values()] == [0.0, 0.0]


def test_jpeg_quality_is_lower_at_25() -> None:
    """A sanity check that the perturbation really compresses: 25 loses more than 95."""
    rng = np.random.default_rng(0)
    image = cv2.GaussianBlur(rng.integers(0, 255, (64, 64, 3), dtype=np.uint8), (0, 0), 2)
    loss25 = np.abs(perturbed.compressed(image, 25).astype(int) - image).mean()
    loss95 = np.abs(perturbed.compressed(image, 95).astype(int) - image).mean()
    assert loss25 > loss95

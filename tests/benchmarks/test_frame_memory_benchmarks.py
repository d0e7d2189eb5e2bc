"""``benchmarks/eval_frame_memory.py`` (clips of a photo read with and without the frame
memory) and ``bench_reader.py``'s video frame, on the example hand."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from benchmark_modules import load_benchmark

from vision.evaluate import ManifestEntry
from vision.reader import Reader

ROOT = Path(__file__).resolve().parents[2]
HAND = ROOT / "examples" / "hand.jpg"
CARDS = ("2D", "3D", "JC", "JD", "KS")  # examples/hand.json

frame_memory = load_benchmark("eval_frame_memory")
bench_reader = load_benchmark("bench_reader")


@pytest.fixture(scope="module")
def reader() -> Reader:
    return Reader.load()


def test_a_clip_is_the_fitted_photo_with_fresh_noise_in_each_frame() -> None:
    image = np.full((300, 400, 3), 128, np.uint8)
    clip = frame_memory.clip(image, frames=3, side=200, wobble=False, seed=0)
    assert [frame.shape for frame in clip] == [(150, 200, 3)] * 3
    assert not np.array_equal(clip[0], clip[1])  # fresh noise
    assert abs(float(clip[0].mean()) - 128) < 1
    again = frame_memory.clip(image, frames=3, side=200, wobble=False, seed=0)
    assert all(np.array_equal(a, b) for a, b in zip(clip, again, strict=True))  # seeded


def test_both_readers_read_the_hands_clip_and_the_memory_spares_crops(reader: Reader) -> None:
    entry = ManifestEntry(HAND, CARDS)
    figures, differing, total = frame_memory.measure(reader, [entry], 8, 640, False)
    assert total == 8 and 0 <= differing <= total
    plain, remembering = figures["without memory"], figures["with memory"]
    assert plain.frames == remembering.frames == 8
    assert plain.totals.f1 > 0.9 and remembering.totals.f1 > 0.9
    assert remembering.crops < plain.crops  # five alike readings, then remembered
    assert remembering.verified <= plain.verified


def test_the_video_frame_is_timed_beside_the_bare_detector(reader: Reader) -> None:
    image = cv2.imread(str(HAND))
    assert image is not None
    frame = np.asarray(cv2.resize(image, (640, 480), interpolation=cv2.INTER_AREA), np.uint8)
    video_ms, bare_ms = bench_reader._video_frame_ms(reader, frame, 8)
    assert video_ms > 0 and bare_ms > 0

"""Printed pages under the cards (training/synth/printed.py): text in the installed fonts, drawn
reproducibly, only when a config asks for it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from training.synth.printed import WORDS, draw_printed, printing_fonts

DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")

pytestmark = pytest.mark.skipif(not DEJAVU.is_file(), reason="needs fonts-dejavu-core")


def _canvas() -> np.ndarray:
    return np.full((240, 320, 3), (40, 110, 30), np.uint8)  # green felt


def test_pages_are_drawn_on_the_canvas_reproducibly() -> None:
    first, second = _canvas(), _canvas()
    draw_printed(first, np.random.default_rng(3))
    draw_printed(second, np.random.default_rng(3))
    assert (first == second).all()
    changed = (first != _canvas()).any(axis=2)
    assert changed.mean() > 0.02  # at least one page lies in the frame
    other = _canvas()
    draw_printed(other, np.random.default_rng(4))
    assert (other != first).any()


def test_pages_carry_ink_not_just_paper() -> None:
    """A page is paper with lines of text on it: inside a light page there are dark strokes."""
    inked = 0
    for seed in range(6):
        canvas = np.zeros((240, 320, 3), np.uint8)  # black table: pages stand out
        draw_printed(canvas, np.random.default_rng(seed))
        grey = canvas.mean(axis=2)
        paper = grey > 150
        if paper.sum() < 500:
            continue
        rows = np.flatnonzero(paper.sum(axis=1) > 20)
        band = grey[rows.min() : rows.max() + 1]
        inked += int(((band > 0) & (band < 110)).sum() > 50)
    assert inked >= 3


def test_a_float_canvas_as_scenes_are_drawn() -> None:
    canvas = _canvas().astype(np.float32) * 1.1
    draw_printed(canvas, np.random.default_rng(1))
    assert canvas.dtype == np.float32 and canvas.max() <= 255


def test_vocabulary_has_what_an_index_prints() -> None:
    assert {"A", "K", "Q", "J", "10", "Joker"} <= set(WORDS)
    assert printing_fonts()  # DejaVu at least

"""A still card table as a generated video, and a fake reader that "reads" it with noise.

Used by the live, webcam and tracking tests so that they do not depend on model accuracy:

- :func:`render_frame` draws the table (two hands of five cards on green felt, the banker's at
  the top) and writes the frame number into the top rows as ten black / white blocks that
  survive video compression;
- :class:`NoisyReader` decodes that number from the image it is given and returns the table's
  cards with per-frame noise drawn from ``default_rng([seed, frame])``: boxes jittered by a few
  pixels, a card missed now and then, a card misread as another code (with high confidence,
  the worst case for a display), and a ghost card for one frame.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray

from rules.cards import CARD_CLASSES
from vision.detections import CardReading, Reading

SIZE_WH = (640, 480)
BANKER = ("KH", "QS", "10D", "3C", "2C")
"""K + Q + 10 = 30 makes the bull, 3 + 2 = 5: Niu 5 (rule: the rest's points mod 10)."""
PLAYER = ("JH", "9S", "AD", "4C", "6H")
"""J + 9 + A = 20 makes the bull, 4 + 6 = 10: Niu Niu, which beats the banker's Niu 5."""
CARD_WH = (60, 84)
INDEX_WH = (22, 34)
SPACING = 44
BITS = 10
BIT_W, BIT_H = 32, 16


def _layout() -> list[tuple[str, tuple[float, float, float, float], tuple[int, int]]]:
    """(code, index box, card top-left) for every card of the still table."""
    placed = []
    for codes, top in ((BANKER, 90), (PLAYER, 300)):
        left = 200
        for position, code in enumerate(codes):
            x, y = left + position * SPACING, top
            box = (x + 4.0, y + 4.0, x + 4.0 + INDEX_WH[0], y + 4.0 + INDEX_WH[1])
            placed.append((code, box, (x, y)))
    return placed


LAYOUT = _layout()


def render_frame(index: int) -> NDArray[np.uint8]:
    """Frame ``index`` of the still table (BGR, 640 x 480), its number coded in the top rows."""
    width, height = SIZE_WH
    image = np.zeros((height, width, 3), np.uint8)
    image[:] = (40, 110, 30)
    for code, _, (x, y) in LAYOUT:
        cv2.rectangle(image, (x, y), (x + CARD_WH[0], y + CARD_WH[1]), (245, 245, 245), -1)
        cv2.rectangle(image, (x, y), (x + CARD_WH[0], y + CARD_WH[1]), (60, 60, 60), 1)
        colour = (0, 0, 200) if code[-1] in "HD" else (0, 0, 0)
        cv2.putText(image, code, (x + 4, y + 22), cv2.FONT_HERSHEY_SIMPLEX, 0.5, colour, 1)
    for bit in range(BITS):
        value = 255 if (index >> bit) & 1 else 0
        image[0:BIT_H, bit * BIT_W : (bit + 1) * BIT_W] = value
    return image


def frame_number(image: NDArray[np.uint8]) -> int:
    """The number written by :func:`render_frame` (read back after compression)."""
    number = 0
    for bit in range(BITS):
        block = image[2 : BIT_H - 2, bit * BIT_W + 4 : (bit + 1) * BIT_W - 4]
        if float(block.mean()) > 127:
            number |= 1 << bit
    return number


def write_video(path: Path, frames: int, fps: float = 25.0) -> Path:
    """An mp4 (``mp4v``) of ``frames`` frames of the still table."""
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"mp4v"), fps, SIZE_WH)
    assert writer.isOpened(), f"cannot write {path}"
    for index in range(frames):
        writer.write(render_frame(index))
    writer.release()
    return path


@dataclass
class NoisyReader:
    """A fake recognizer for the still table (see the module docstring).

    ``misread``, ``miss`` and ``ghost`` are per-card (ghost: per-frame) probabilities;
    ``frames_read`` lists the frame numbers it was asked to read.
    """

    seed: int = 0
    misread: float = 0.1
    miss: float = 0.05
    ghost: float = 0.05
    jitter_px: float = 2.0

    def __post_init__(self) -> None:
        self.frames_read: list[int] = []

    def reading_for(self, frame: int) -> Reading:
        """The noisy reading of frame ``frame``."""
        rng = np.random.default_rng([self.seed, frame])
        cards = []
        for code, box, _ in LAYOUT:
            if rng.random() < self.miss:
                continue
            shown = code
            if rng.random() < self.misread:
                shown = CARD_CLASSES[int(rng.integers(52))]
            shift = rng.uniform(-self.jitter_px, self.jitter_px, 4)
            jittered = tuple(float(v + s) for v, s in zip(box, shift, strict=True))
            cards.append(CardReading(shown, 0.9, jittered))  # type: ignore[arg-type]
        if rng.random() < self.ghost:
            x, y = float(rng.uniform(20, 560)), float(rng.uniform(200, 260))
            code = CARD_CLASSES[int(rng.integers(52))]
            cards.append(CardReading(code, 0.9, (x, y, x + 22, y + 34)))
        return Reading(SIZE_WH, tuple(cards))

    def read(self, image: NDArray[np.uint8]) -> Reading:
        """Decode the frame number from ``image`` and return that frame's noisy reading."""
        frame = frame_number(image)
        self.frames_read.append(frame)
        return self.reading_for(frame)

"""Test helpers for the web routes: a fake recognizer, images, a y4m video for a fake camera.

The fake reader replaces the models so that the tests check the service and the page, not the
models' accuracy: it "reads" the hands it is given from any image, each hand a row of index
boxes at a place given in fractions of the image (so any image or frame size works).
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.detections import CardReading, Reading

NO_NIU = "AS 2S 3S 4S 8S"
NIU_NIU = "KS QS 10S 5C 5S"
NIU_4 = "3H 7S KD 8C 6D"
NIU_TABLE = {NO_NIU: (0.4, 0.05), NIU_NIU: (0.1, 0.6), NIU_4: (0.6, 0.6)}
"""A banker game read with the banker on top: seat 0 No Niu (the banker), seat 1 Niu Niu and
seat 2 Niu 4 (``handreader.table``: reading order, rows from the top, left to right)."""


class FakeReader:
    """Reads ``hands`` (codes -> (x, y) fractions of the image) from any image; remembers the
    sizes of the images it was given. ``uncertain`` codes are read as uncertain."""

    def __init__(self, hands: dict[str, tuple[float, float]], uncertain: str = "") -> None:
        self.hands = dict(hands)
        self.uncertain = uncertain.split()
        self.sizes: list[tuple[int, int]] = []

    def read(self, image_bgr: NDArray[np.uint8]) -> Reading:
        height, width = image_bgr.shape[:2]
        self.sizes.append((width, height))
        step, size = width * 0.03, height * 0.05
        cards = []
        for codes, (fx, fy) in self.hands.items():
            for i, code in enumerate(codes.split()):
                x, y = fx * width + i * step, fy * height
                box = (x, y, x + 0.6 * size, y + size)
                confidence = 0.4 if code in self.uncertain else 0.95
                cards.append(CardReading(code, confidence, box, uncertain=code in self.uncertain))
        return Reading((width, height), tuple(cards))


def image_bytes(width: int = 640, height: int = 480, extension: str = ".jpg") -> bytes:
    """A noisy grey image encoded as JPEG or PNG."""
    rng = np.random.default_rng(1)
    image = rng.integers(60, 120, (height, width, 3), dtype=np.uint8)
    return cv2.imencode(extension, image)[1].tobytes()


def write_y4m(path: Path, width: int = 640, height: int = 480, frames: int = 20) -> Path:
    """A small grey video in YUV4MPEG2 (4:2:0), the format Chromium's fake camera plays.

    Luma 128 with a slowly moving darker band (so frames differ), chroma neutral (128): every
    pixel of the video is grey, so a coloured pixel on the page can only come from the overlay.
    """
    header = f"YUV4MPEG2 W{width} H{height} F10:1 Ip A1:1 C420jpeg\n".encode("ascii")
    chroma = np.full((height // 2) * (width // 2), 128, dtype=np.uint8).tobytes()
    with path.open("wb") as out:
        out.write(header)
        for index in range(frames):
            luma = np.full((height, width), 128, dtype=np.uint8)
            top = (index * 7) % (height - 20)
            luma[top : top + 20, :] = 90
            out.write(b"FRAME\n")
            out.write(luma.tobytes())
            out.write(chroma)
            out.write(chroma)
    return path

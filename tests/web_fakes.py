"""Test helpers for the web routes: a fake recognizer, images, a y4m video for a fake camera.

The fake reader replaces the models so that the tests check the service and the page, not the
models' accuracy: it "reads" the hands it is given from any image, each hand a row of index
boxes at a place given in fractions of the image (so any image or frame size works).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from fastapi.testclient import TestClient
from numpy.typing import NDArray

from handreader.service import app as serve
from handreader.service import deps as service_deps
from rules.cards import CARD_CLASSES
from vision.calibration import grid_order
from vision.detections import CardReading, Detections, Reading


@contextmanager
def fake_client(reader: object) -> Iterator[TestClient]:
    """A client of the app started without models, reading with ``reader``; an exception in a
    route comes back as the 500 a real client would get."""
    app = serve.create_app(settings=serve.Settings(models_dir=Path("/nonexistent")))
    app.dependency_overrides[service_deps.get_reader] = lambda: reader
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client


def error_message(response: Any, status: int, code: str) -> str:
    """The message of a JSON error answer, after checking its status and error code."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"} and body["error"]["code"] == code, body
    message: str = body["error"]["message"]
    return message


NO_NIU = "AS 2S 3S 4S 8S"
NIU_NIU = "KS QS 10S 5C 5S"
NIU_4 = "3H 7S KD 8C 6D"
NIU_TABLE = {NO_NIU: (0.4, 0.05), NIU_NIU: (0.1, 0.6), NIU_4: (0.6, 0.6)}
"""A banker game read with the banker on top: seat 0 No Niu (the banker), seat 1 Niu Niu and
seat 2 Niu 4 (``handreader.tables.scoring``: reading order, rows from the top, left to right)."""


class FakeReader:
    """Reads ``hands`` (codes -> (x, y) fractions of the image) from any image; remembers the
    sizes of the images it was given. ``uncertain`` codes are read as uncertain."""

    def __init__(self, hands: dict[str, tuple[float, float]], uncertain: str = "") -> None:
        self.hands = dict(hands)
        self.uncertain = uncertain.split()
        self.sizes: list[tuple[int, int]] = []
        self.letters: list[str] = []

    def with_indices(self, indices: str) -> FakeReader:
        """Itself, reading as before; the letters asked for are remembered (``letters``)."""
        self.letters.append(indices)
        return self

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


class DeckFakeReader(FakeReader):
    """A fake recognizer that also reads with a deck profile and calibrates (detect, classify,
    a manifest), so the deck routes and the page run without models.

    ``read(image, deck)`` records the deck's name (None without one: ``deck_calls``) and, with
    a deck, reads no card as uncertain (the effect calibration is meant to have). ``detect``
    finds two corner indices on a one-card photo, none on a photo of one colour (a black
    one, or its negative), and on a photo at least
    :data:`GRID_WIDTH` wide the 13 x 4 grid's indices, less the ``missing`` cells;
    ``classify`` reads a grid cell as its card in the documented order unless ``grid_reads``
    says otherwise, and gives unit embeddings that depend on the box.
    """

    GRID_WIDTH = 1300

    def __init__(self, hands: dict[str, tuple[float, float]], uncertain: str = "") -> None:
        super().__init__(hands, uncertain)
        self.manifest: dict[str, object] = {"classifier": {"sha256": "fake-classifier"}}
        self.deck_calls: list[str | None] = []
        self.missing: set[int] = set()
        self.grid_reads: dict[int, str] = {}

    def read(self, image_bgr: NDArray[np.uint8], deck: object = None) -> Reading:
        self.deck_calls.append(None if deck is None else str(getattr(deck, "name", deck)))
        if deck is None:
            return super().read(image_bgr)
        uncertain, self.uncertain = self.uncertain, []
        try:
            return super().read(image_bgr)
        finally:
            self.uncertain = uncertain

    def detect(self, image: NDArray[np.uint8]) -> Detections:
        height, width = image.shape[:2]
        boxes: list[list[float]] = []
        if width >= self.GRID_WIDTH:
            cell_w, cell_h = width / 13, height / 4
            for cell in range(52):
                if cell in self.missing:
                    continue
                row, column = divmod(cell, 13)
                x, y = column * cell_w, row * cell_h
                boxes += [
                    [x + 2, y + 2, x + 0.2 * cell_w, y + 0.25 * cell_h],
                    [x + 0.75 * cell_w, y + 0.7 * cell_h, x + cell_w - 2, y + cell_h - 2],
                ]
        elif float(image.std()) > 1:
            boxes = [
                [5, 5, 0.2 * width, 0.25 * height],
                [0.8 * width, 0.75 * height, width - 5, height - 5],
            ]
        count = len(boxes)
        xyxy = np.array(boxes, np.float32).reshape(count, 4)
        return Detections(xyxy, np.ones(count, np.float32), np.zeros(count, np.int64))

    def classify(
        self, image: NDArray[np.uint8], xyxy: NDArray[np.float32]
    ) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        height, width = image.shape[:2]
        probabilities = np.zeros((len(xyxy), len(CARD_CLASSES)), np.float32)
        embeddings = np.zeros((len(xyxy), 128), np.float32)
        for row, (x1, y1, x2, y2) in enumerate(xyxy):
            cell = int((y1 + y2) / 2 / (height / 4)) * 13 + int((x1 + x2) / 2 / (width / 13))
            code = self.grid_reads.get(cell, grid_order()[min(cell, 51)])
            probabilities[row, CARD_CLASSES.index(code)] = 1.0
            vector = np.random.default_rng(int(x1) * 7919 + int(y1)).normal(size=128)
            embeddings[row] = vector / np.linalg.norm(vector)
        return probabilities, embeddings

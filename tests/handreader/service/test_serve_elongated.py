"""The service answers a very elongated image with 200 and no card, never a 500.

A 35,000 x 32 PNG (1.1 megapixels, within every limit) used to fail in the shipped reader with
OpenCV's ``inv_scale_x > 0`` assertion: shrunk to the network's input, its short side rounded
to 0 pixels (``vision.letterbox`` keeps at least 1). Read with the shipped models.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from web_fakes import fake_client

from vision.reader import Reader


@pytest.fixture(scope="module")
def reader() -> Reader:
    return Reader.load()


def _strip_png(width: int, height: int) -> bytes:
    ok, buffer = cv2.imencode(".png", np.full((height, width, 3), 200, np.uint8))
    assert ok
    return buffer.tobytes()


@pytest.mark.parametrize("path", ["/v1/read", "/v1/score", "/v1/annotated"])
def test_the_service_answers_a_thin_strip(reader: Reader, path: str) -> None:
    with fake_client(reader) as client:
        files = {"image": ("strip.png", _strip_png(35_000, 32), "image/png")}
        response = client.post(path, files=files)
    assert response.status_code == 200, response.text
    if path == "/v1/read":
        assert response.json()["cards"] == []

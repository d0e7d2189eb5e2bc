"""A GIF whose first frame reaches past its logical screen is read (as browsers show it), and a
damaged GIF is answered 400 without OpenCV's own ``[ERROR:...] grfmt_gif.cpp`` lines in the
log (``handreader.service.app.quiet_decoder_errors``)."""

from __future__ import annotations

import io
import struct
from collections.abc import Iterator

import numpy as np
import pytest
from fastapi.testclient import TestClient
from PIL import Image
from web_fakes import NIU_TABLE, FakeReader, error_message, fake_client


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with fake_client(FakeReader(NIU_TABLE)) as running:
        yield running


def _gif(screen: tuple[int, int]) -> bytes:
    rng = np.random.default_rng(0)
    frame = Image.fromarray(rng.integers(0, 256, (300, 400, 3), dtype=np.uint8)).quantize(64)
    buffer = io.BytesIO()
    frame.save(buffer, "GIF")
    data = buffer.getvalue()
    return data[:6] + struct.pack("<HH", *screen) + data[10:]


def test_a_frame_past_the_screen_is_read_at_the_frame_s_size(
    client: TestClient, capfd: pytest.CaptureFixture[str]
) -> None:
    response = client.post("/v1/read", files={"image": ("a.gif", _gif((200, 150)), "image/gif")})
    assert response.status_code == 200, response.text
    assert response.json()["size"] == [400, 300]
    assert "[ERROR" not in capfd.readouterr().err


def test_a_damaged_gif_leaves_no_decoder_lines_in_the_log(
    client: TestClient, capfd: pytest.CaptureFixture[str]
) -> None:
    whole = _gif((400, 300))
    damaged = whole[:800] + bytes(len(whole) - 800)  # the frame's data zeroed past 800 bytes
    response = client.post("/v1/read", files={"image": ("a.gif", damaged, "image/gif")})
    error_message(response, 400, "corrupt")
    assert "[ERROR" not in capfd.readouterr().err

"""Where serve.py does its work: card codes on the event loop, photos in the thread pool.

Expectations come from serve.py's contract ("inference runs in the threadpool", and the event loop
keeps answering while it does) and from the speed target of the product's requirements (card-code
scoring 1,500 requests/s on one worker), which the hop to a worker thread and back made too costly:
scoring a table of codes takes well under a millisecond and never waits on anything.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from fastapi.testclient import TestClient
from numpy.typing import NDArray

from handreader.service import app as serve
from handreader.service.routes import scoring
from vision.detections import CardReading, Reading

NO_NIU = "AS 2S 3S 4S 8S"
NIU_NIU = "KS QS 10S 5C 5S"


def _on_event_loop() -> bool:
    """True when called from the thread running the app's event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class RowReader:
    """Reads two rows of five cards (a banker at the top, a player below) from any image;
    waits for ``gate`` first when one is given. Records whether it ran on the event loop."""

    def __init__(self, gate: threading.Event | None = None) -> None:
        self.gate = gate
        self.on_loop: list[bool] = []

    def read(self, image_bgr: NDArray[np.uint8]) -> Reading:
        self.on_loop.append(_on_event_loop())
        if self.gate is not None and not self.gate.wait(timeout=20):
            raise TimeoutError("the test never opened the gate")
        height, width = image_bgr.shape[:2]
        cards = [
            CardReading(code, 0.95, (x, y, x + 20.0, y + 30.0))
            for codes, y in ((NO_NIU, 0.05 * height), (NIU_NIU, 0.6 * height))
            for x, code in zip(np.linspace(0.1 * width, 0.3 * width, 5), codes.split(), strict=True)
        ]
        return Reading((width, height), tuple(cards))


def _jpeg() -> bytes:
    image = np.random.default_rng(5).integers(60, 120, (240, 320, 3), dtype=np.uint8)
    return cv2.imencode(".jpg", image)[1].tobytes()


@pytest.fixture
def reader() -> RowReader:
    return RowReader()


@pytest.fixture
def client(reader: RowReader) -> Iterator[TestClient]:
    app = serve.create_app(reader=reader, settings=serve.Settings(models_dir=Path("/nonexistent")))
    with TestClient(app) as test_client:
        yield test_client


def _spy(monkeypatch: pytest.MonkeyPatch, name: str) -> list[bool]:
    """Wrap ``scoring.<name>`` to record, for each call, whether it ran on the event loop."""
    calls: list[bool] = []
    original: Callable[..., Any] = getattr(scoring, name)

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append(_on_event_loop())
        return original(*args, **kwargs)

    monkeypatch.setattr(scoring, name, spy)
    return calls


@pytest.mark.parametrize(
    ("path", "body", "scorer"),
    [
        ("/v1/score", {"hands": [NO_NIU, NIU_NIU]}, "score_codes"),
        ("/v1/pits", {"play": "7H 7S", "table": "5H 5D"}, "judge_play"),
    ],
)
def test_card_codes_are_judged_on_the_event_loop(
    client: TestClient,
    monkeypatch: pytest.MonkeyPatch,
    path: str,
    body: dict[str, Any],
    scorer: str,
) -> None:
    calls = _spy(monkeypatch, scorer)
    response = client.post(path, json=body)
    assert response.status_code == 200, response.text
    assert calls == [True]


@pytest.mark.parametrize(
    ("path", "query", "scorer"),
    [("/v1/score", "", "score_reading"), ("/v1/pits", "?table=5H%205D", "judge_reading")],
)
def test_photos_are_decoded_read_and_scored_off_the_event_loop(
    client: TestClient,
    reader: RowReader,
    monkeypatch: pytest.MonkeyPatch,
    path: str,
    query: str,
    scorer: str,
) -> None:
    calls = _spy(monkeypatch, scorer)
    decodes = _spy(monkeypatch, "read_photo")
    response = client.post(path + query, content=_jpeg())
    assert response.status_code == 200, response.text
    assert calls == [False] and decodes == [False] and reader.on_loop == [False]


def test_code_scoring_answers_while_the_recognizer_is_busy() -> None:
    # A photo whose reading waits on the gate holds a worker thread; card codes, scored on the
    # loop, must still be answered (and right: seed 002, Niu Niu beats No Niu).
    gate = threading.Event()
    reader = RowReader(gate)
    app = serve.create_app(reader=reader, settings=serve.Settings(models_dir=Path("/nonexistent")))
    photo: dict[str, int] = {}
    with TestClient(app) as test_client:

        def post_photo() -> None:
            photo["status"] = test_client.post("/v1/score", content=_jpeg()).status_code

        waiting = threading.Thread(target=post_photo)
        waiting.start()
        try:
            for _ in range(200):  # until the recognizer holds the photo
                if reader.on_loop:
                    break
                threading.Event().wait(0.01)
            assert reader.on_loop == [False]
            codes = test_client.post("/v1/score", json={"hands": [NO_NIU, NIU_NIU]})
            assert codes.status_code == 200
            assert codes.json()["players"][0]["outcome"] == "win"
            assert "status" not in photo  # the photo is still being read
        finally:
            gate.set()
            waiting.join(timeout=20)
    assert photo == {"status": 200}

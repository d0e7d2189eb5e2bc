"""The service reads a large JPEG decoded at a reduced scale, and answers in the photo's pixels.

``handreader.service.deps.read_photo`` decodes an upload with ``vision.imageio.decode_reduced``
(a 4000 x 3000 JPEG at 2000 x 1500: the reader shrinks it to 1,400 px anyway) and maps the
reading back. Expectations: the endpoint documentation in serve.py (sizes and boxes are the
photo's; the annotated image has the input's size) and the fake reader of tests/web_fakes.py,
which places its boxes at fractions of the image it is given (so the expected boxes are those
it gives for the photo at full size) and records the sizes it saw.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import cv2
import numpy as np
import pytest
from fastapi.testclient import TestClient
from numpy.typing import NDArray
from web_fakes import NIU_TABLE, FakeReader, fake_client

GREY = 100


def _photo(extension: str = ".jpg", width: int = 4000, height: int = 3000) -> bytes:
    """A plain grey photo, 12 MP by default (the product's speed target)."""
    ok, buffer = cv2.imencode(extension, np.full((height, width, 3), GREY, np.uint8))
    assert ok
    return buffer.tobytes()


def _boxes_at_full_size(hands: dict[str, tuple[float, float]]) -> set[tuple[float, ...]]:
    """The boxes the fake gives for the 4000 x 3000 photo itself, rounded as answered."""
    reading = FakeReader(hands).read(np.zeros((3000, 4000, 3), np.uint8))
    return {tuple(round(v, 1) for v in card.box_xyxy) for card in reading.cards}


def _decoded(content: bytes) -> NDArray[np.uint8]:
    image = cv2.imdecode(np.frombuffer(content, np.uint8), cv2.IMREAD_COLOR)
    assert image is not None
    return np.asarray(image, dtype=np.uint8)


@pytest.fixture
def fake() -> FakeReader:
    return FakeReader(NIU_TABLE)


@pytest.fixture
def client(fake: FakeReader) -> Iterator[TestClient]:
    with fake_client(fake) as test_client:
        yield test_client


@pytest.mark.parametrize(
    ("extension", "seen"),
    [(".jpg", (2000, 1500)), (".png", (4000, 3000))],  # JPEG reduced by 2; PNG decoded whole
)
def test_read_answers_in_photo_pixels(
    client: TestClient, fake: FakeReader, extension: str, seen: tuple[int, int]
) -> None:
    response = client.post("/v1/read", content=_photo(extension))
    assert response.status_code == 200, response.text
    body = response.json()
    assert fake.sizes == [seen]
    assert body["size"] == [4000, 3000]
    assert {tuple(card["box"]) for card in body["cards"]} == _boxes_at_full_size(NIU_TABLE)


def test_score_answers_in_photo_pixels(client: TestClient, fake: FakeReader) -> None:
    response = client.post("/v1/score", files={"image": ("table.jpg", _photo(), "image/jpeg")})
    assert response.status_code == 200, response.text
    body = response.json()
    assert fake.sizes == [(2000, 1500)]
    assert body["size"] == [4000, 3000]
    boxes = {tuple(card["box"]) for hand in body["hands"] for card in hand["cards"]}
    assert len(body["hands"]) == 3 and boxes == _boxes_at_full_size(NIU_TABLE)


def test_a_game_answers_in_photo_pixels(client: TestClient, fake: FakeReader) -> None:
    # the games' routes (handreader.service.routes.games) read photos through the same read_photo
    fake.hands = {"9H 5C 3D": (0.1, 0.4), "KD 6S": (0.7, 0.4)}
    files = {"image": ("table.jpg", _photo(), "image/jpeg")}
    response = client.post("/v1/baccarat", files=files, data={"options": json.dumps({})})
    assert response.status_code == 200, response.text
    body = response.json()
    assert fake.sizes == [(2000, 1500)] and body["size"] == [4000, 3000]
    boxes = {tuple(card["box"]) for hand in body["hands"] for card in hand["cards"]}
    assert boxes == _boxes_at_full_size(fake.hands)


@pytest.mark.parametrize("query", ["?format=png", "?format=png&game=pits&table=5H%205D"])
def test_annotated_keeps_the_photos_size_with_the_boxes_in_place(
    client: TestClient, fake: FakeReader, query: str
) -> None:
    fake.hands = {"9H 9D": (0.25, 0.5)}
    response = client.post(f"/v1/annotated{query}", content=_photo())
    assert response.status_code == 200, response.text
    assert fake.sizes == [(2000, 1500)]
    drawn = _decoded(response.content).astype(int)
    assert drawn.shape == (3000, 4000, 3)
    # the first card's box at full size: 0.25 x 4000, 0.5 x 3000, 0.6 x 150 wide, 150 high
    change = np.abs(drawn - GREY).sum(axis=2)
    assert change[1500, 1010:1080].mean() > 60  # the outline along its top edge
    assert change[750, 505:540].mean() < 10  # nothing where the reduced box would be


def test_a_photo_s_header_is_walked_once_from_upload_to_decoding(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The limits, the decoding budget and the decoder share one walk of the header."""
    import contextlib

    from handreader.service import deps
    from vision import imagelimits

    walks: list[int] = []
    probe = imagelimits.probe_image

    def counted(data: bytes) -> object:
        walks.append(len(data))
        return probe(data)

    monkeypatch.setattr(imagelimits, "probe_image", counted)
    photo = cv2.imencode(".jpg", np.full((3000, 4000, 3), 90, np.uint8))[1].tobytes()

    class _Runtime:
        settings = deps.Settings()

        @staticmethod
        def hold(amount: int) -> contextlib.AbstractContextManager[None]:
            return contextlib.nullcontext()

    with deps.decoded_photo(photo, _Runtime()) as image:  # type: ignore[arg-type]
        assert image.factor > 1 and image.size_wh == (4000, 3000)
    assert walks == [len(photo)]


@pytest.mark.parametrize("query", ["", "?game=pits"])
def test_annotated_holds_its_memory_once_from_decoding_to_the_answer(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, query: str
) -> None:
    """The decoded photo never leaves the decoding budget while it waits for room to draw:
    one hold, the larger of the decoding's peak and the drawing's, spans the drawing."""
    import contextlib

    from handreader.drawing.annotate import Annotator
    from handreader.service import deps
    from vision.imageheader import probe_image
    from vision.imagelimits import decode_peak_bytes

    events: list[str] = []
    runtime = client.app.state.runtime  # type: ignore[attr-defined]
    hold = runtime.hold

    @contextlib.contextmanager
    def logged(amount: int) -> Iterator[None]:
        with hold(amount):
            events.append(f"hold {amount}")
            yield
            events.append(f"release {amount}")

    draw = Annotator.annotate

    def drawn(self: Annotator, *args: object, **kwargs: object) -> object:
        events.append("draw")
        return draw(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(runtime, "hold", logged)
    monkeypatch.setattr(Annotator, "annotate", drawn)
    photo = _photo()
    files = {"image": ("table.jpg", photo, "image/jpeg")}
    response = client.post(f"/v1/annotated{query}", files=files)
    assert response.status_code == 200, response.text
    peak = max(decode_peak_bytes(probe_image(photo), 2), deps.drawing_peak_bytes(4000, 3000, 2))
    assert events == [f"hold {peak}", "draw", f"release {peak}"]

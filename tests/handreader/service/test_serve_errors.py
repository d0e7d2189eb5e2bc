"""Bad input never breaks the API (serve.py): each gets its documented 4xx and a JSON error,
odd but valid images are read, and the server keeps serving after every error.

The cases are the product's list (zero bytes, truncated JPEG, a text file, a 1x1 image, CMYK
JPEG, 16-bit PNG, greyscale, alpha, animated GIF, EXIF rotation, malformed JSON, unknown
profile, too large upload, pixel bomb) plus the failures of the recognizer itself; statuses
come from the table in serve.py's docstring (``ERROR_STATUS``).
"""

from __future__ import annotations

import io
import json
import struct
import time
import zlib
from collections.abc import Iterator
from typing import Any

import cv2
import numpy as np
import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray
from PIL import Image

from handreader.service import app as serve
from handreader.service import deps as service_deps
from handreader.service import errors as service_errors
from handreader.service.routes import scoring
from vision.detections import CardReading, Reading

LIMIT = 200_000  # the upload limit of these tests' app (the default is 20 MB)


class ShapeReader:
    """Reads one hand and remembers the shapes and types of the images it was given."""

    def __init__(self, delay_s: float = 0.0, error: Exception | None = None) -> None:
        self.delay_s = delay_s
        self.error = error
        self.seen: list[tuple[int, ...]] = []

    def read(self, image_bgr: NDArray[np.uint8]) -> Reading:
        assert image_bgr.dtype == np.uint8 and image_bgr.ndim == 3 and image_bgr.shape[2] == 3
        self.seen.append(image_bgr.shape)
        time.sleep(self.delay_s)
        if self.error is not None:
            raise self.error
        height, width = image_bgr.shape[:2]
        codes = ["3H", "7S", "KD", "8C", "6D"]
        cards = tuple(
            CardReading(code, 0.9, (i * width / 6, 0.0, i * width / 6 + 5, 8.0))
            for i, code in enumerate(codes)
        )
        return Reading((width, height), cards)


@pytest.fixture
def reader() -> ShapeReader:
    return ShapeReader()


def _app(reader: ShapeReader, **limits: Any) -> TestClient:
    app = serve.create_app(reader=reader, settings=serve.Settings(max_bytes=LIMIT, **limits))
    app.dependency_overrides[service_deps.get_reader] = lambda: reader
    return TestClient(app, raise_server_exceptions=False)


@pytest.fixture
def client(reader: ShapeReader) -> Iterator[TestClient]:
    with _app(reader) as test_client:
        yield test_client


def _encode(image: NDArray[Any], extension: str) -> bytes:
    return cv2.imencode(extension, image)[1].tobytes()


def _pillow(image: Image.Image, fmt: str, **options: Any) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, fmt, **options)
    return buffer.getvalue()


def _picture(height: int = 120, width: int = 160) -> NDArray[np.uint8]:
    return np.random.default_rng(2).integers(0, 256, (height, width, 3), dtype=np.uint8)


def _png_bomb(width: int, height: int) -> bytes:
    def chunk(name: bytes, body: bytes) -> bytes:
        crc = struct.pack(">I", zlib.crc32(name + body))
        return struct.pack(">I", len(body)) + name + body + crc

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 99))


def _assert_error(response: Any, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}
    assert body["error"]["code"] == code and body["error"]["message"]
    assert service_errors.ERROR_STATUS[code] == status


JPEG = _encode(_picture(200, 200), ".jpg")

BAD_IMAGES = [
    # (case, bytes, status, code)
    ("zero bytes", b"", 400, "empty"),
    ("truncated jpeg", JPEG[: len(JPEG) // 2], 400, "corrupt"),
    ("jpeg without its last bytes", JPEG[:-2], 400, "corrupt"),
    ("text file", b"3H 7S KD 8C 6D\nnot an image\n", 415, "unsupported_type"),
    ("pdf", b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n", 415, "unsupported_type"),
    ("1x1 image", _encode(np.zeros((1, 1, 3), np.uint8), ".png"), 422, "too_small"),
    ("pixel bomb", _png_bomb(60_000, 60_000), 413, "too_many_pixels"),
    ("too large upload", b"\xff\xd8\xff" + b"\0" * LIMIT, 413, "too_large"),
]


@pytest.mark.parametrize(
    ("case", "data", "status", "code"), BAD_IMAGES, ids=[c[0] for c in BAD_IMAGES]
)
@pytest.mark.parametrize("endpoint", ["/v1/read", "/v1/score", "/v1/pits", "/v1/annotated"])
@pytest.mark.parametrize("how", ["raw", "multipart"])
def test_bad_images(
    client: TestClient, reader: ShapeReader, endpoint: str, how: str, case: str, data: bytes,
    status: int, code: str,
) -> None:  # fmt: skip
    if how == "raw":
        response = client.post(endpoint, content=data, headers={"content-type": "image/jpeg"})
    else:
        response = client.post(endpoint, files={"image": ("photo.jpg", data, "image/jpeg")})
    _assert_error(response, status, code)
    assert reader.seen == []  # refused before the recognizer
    assert client.post("/v1/read", content=JPEG).status_code == 200  # and still serving


def test_pixel_limit_is_a_setting(reader: ShapeReader) -> None:
    with _app(reader, max_pixels=10_000) as test_client:
        _assert_error(test_client.post("/v1/read", content=JPEG), 413, "too_many_pixels")


def test_upload_without_content_length_is_cut_at_the_limit(client: TestClient) -> None:
    def chunks() -> Iterator[bytes]:
        for _ in range(LIMIT // 10_000 + 2):
            yield b"\0" * 10_000

    _assert_error(client.post("/v1/read", content=chunks()), 413, "too_large")


def test_default_upload_limit_is_20_megabytes(reader: ShapeReader) -> None:
    app = serve.create_app(reader=reader)
    with TestClient(app) as test_client:
        data = b"\xff\xd8\xff" + b"\0" * (20 * 1024 * 1024 - 2)
        response = test_client.post("/v1/read", content=data)
        _assert_error(response, 413, "too_large")
        assert "20,971,520" in response.json()["error"]["message"]
        files = {"image": ("big.png", data + b"\0" * 70_000, "image/png")}
        response = test_client.post("/v1/read", files=files)
        _assert_error(response, 413, "too_large")
        told = "limit of 20,971,520 bytes for the photo (and 64 KiB of form)"
        assert response.json()["error"]["message"].endswith(told)


# --- odd but valid images are read ---------------------------------------------------------------


def _exif_rotated() -> bytes:
    exif = Image.Exif()
    exif[0x0112] = 6  # stored 160 wide, shown turned 90 degrees clockwise: 120 wide
    return _pillow(Image.fromarray(_picture()), "JPEG", exif=exif)


def _animated_gif() -> bytes:
    frames = [Image.new("RGB", (160, 120), colour) for colour in ((0, 200, 0), (200, 0, 0))]
    return _pillow(frames[0], "GIF", save_all=True, append_images=frames[1:], duration=50)


VALID_ODDITIES = [
    # (case, bytes, shape the recognizer must get)
    ("cmyk jpeg", _pillow(Image.fromarray(_picture()).convert("CMYK"), "JPEG"), (120, 160, 3)),
    ("16-bit png", _encode(_picture().astype(np.uint16) * 257, ".png"), (120, 160, 3)),
    ("greyscale png", _encode(_picture()[:, :, 0], ".png"), (120, 160, 3)),
    ("greyscale jpeg", _encode(_picture()[:, :, 0], ".jpg"), (120, 160, 3)),
    (
        "alpha png",
        _encode(np.dstack([_picture(), np.full((120, 160), 128, np.uint8)]), ".png"),
        (120, 160, 3),
    ),
    ("animated gif", _animated_gif(), (120, 160, 3)),
    ("exif rotation", _exif_rotated(), (160, 120, 3)),
    ("webp", _pillow(Image.fromarray(_picture()), "WEBP"), (120, 160, 3)),
    ("bmp", _encode(_picture(), ".bmp"), (120, 160, 3)),
    ("tiff", _encode(_picture(), ".tiff"), (120, 160, 3)),
]


@pytest.mark.parametrize(
    ("case", "data", "shape"), VALID_ODDITIES, ids=[c[0] for c in VALID_ODDITIES]
)
def test_odd_but_valid_images_are_read(
    client: TestClient, reader: ShapeReader, case: str, data: bytes, shape: tuple[int, ...]
) -> None:
    response = client.post(
        "/v1/score", files={"image": ("x.bin", data, "application/octet-stream")}
    )
    assert response.status_code == 200, response.text
    assert reader.seen == [shape]
    assert response.json()["size"] == [shape[1], shape[0]]
    drawn = client.post("/v1/annotated?format=png", content=data)
    image = cv2.imdecode(np.frombuffer(drawn.content, np.uint8), cv2.IMREAD_COLOR)
    assert image is not None and image.shape == shape  # the upright input's size


# --- bad JSON, options and card codes ------------------------------------------------------------

JSON = {"content-type": "application/json"}

BAD_REQUESTS = [
    # (case, endpoint, request arguments, status, code)
    (
        "malformed json",
        "/v1/score",
        {"content": b'{"hands": [', "headers": JSON},
        400,
        "malformed_json",
    ),
    (
        "json not an object",
        "/v1/score",
        {"content": b"[1, 2]", "headers": JSON},
        400,
        "malformed_json",
    ),
    (
        "not utf-8",
        "/v1/score",
        {"content": b'{"a": "\xff"}', "headers": JSON},
        400,
        "malformed_json",
    ),
    (
        "unknown profile",
        "/v1/score",
        {"json": {"hands": ["3H 7S KD 8C 6D"], "profile": "vegas"}},
        400,
        "unknown_profile",
    ),
    (
        "unknown bet",
        "/v1/score",
        {"json": {"hands": ["3H 7S KD 8C 6D"], "bet": "all-in"}},
        400,
        "bad_options",
    ),
    (
        "a bet the profile does not offer",
        "/v1/score",
        {"json": {"hands": ["3H 7S KD 8C 6D"], "profile": "app", "bet": "double"}},
        400,
        "bad_options",
    ),
    ("bad card text", "/v1/score", {"json": {"hands": ["3H 7S KD 8C 1X"]}}, 400, "bad_card"),
    ("four cards", "/v1/score", {"json": {"hands": ["3H 7S KD 8C"]}}, 400, "bad_hand"),
    (
        "duplicate card",
        "/v1/score",
        {"json": {"hands": ["3H 7S KD 8C 6D", "3H 2S 4S 5S 9S"]}},
        400,
        "bad_hand",
    ),
    (
        "banker out of range",
        "/v1/score",
        {"json": {"hands": ["3H 7S KD 8C 6D", "2S 4S 5S 9S QH"], "banker": 5}},
        400,
        "bad_options",
    ),
    (
        "stake as bad text",
        "/v1/score",
        {"json": {"hands": ["3H 7S KD 8C 6D"], "stake": "lots"}},
        400,
        "bad_options",
    ),
    ("hands not a list", "/v1/score", {"json": {"hands": 5}}, 422, "validation_error"),
    ("no hands", "/v1/score", {"json": {"profile": "app"}}, 422, "validation_error"),
    ("eight hands", "/v1/score", {"json": {"hands": ["AS"] * 8}}, 422, "validation_error"),
    (
        "negative stake",
        "/v1/score",
        {"json": {"hands": ["3H 7S KD 8C 6D"], "stake": -1}},
        400,
        "bad_options",
    ),
    (
        "unknown field",
        "/v1/score",
        {"json": {"hands": ["3H 7S KD 8C 6D"], "colour": 1}},
        422,
        "validation_error",
    ),
    (
        "pits table no combination",
        "/v1/pits",
        {"json": {"play": "7H 7S", "table": "3H 9S"}},
        400,
        "no_combination",
    ),
    ("pits bad card", "/v1/pits", {"json": {"play": "7H 7Z"}}, 400, "bad_card"),
    ("pits no play", "/v1/pits", {"json": {"table": "7H"}}, 422, "validation_error"),
    ("pits empty play", "/v1/pits", {"json": {"play": " "}}, 400, "bad_hand"),
    ("pits card played twice", "/v1/pits", {"json": {"play": "3H 3H"}}, 400, "bad_hand"),
    (
        "pits card both played and on the table",
        "/v1/pits",
        {"json": {"play": "3H 3D", "table": "3H 3C"}},
        400,
        "bad_hand",
    ),
    (
        "image options unknown profile",
        "/v1/score?profile=vegas",
        {"content": JPEG},
        400,
        "unknown_profile",
    ),
    (
        "image options bad region",
        "/v1/score",
        {"params": {"options": json.dumps({"banker_region": [1, 1, 0, 0]})}, "content": JPEG},
        400,
        "bad_options",
    ),
    (
        "image options bad link factor",
        "/v1/score?link_factor=-2",
        {"content": JPEG},
        422,
        "validation_error",
    ),
    (
        "image options malformed",
        "/v1/score?options=%7Bnope",
        {"content": JPEG},
        400,
        "malformed_json",
    ),
    (
        "options field malformed",
        "/v1/score",
        {"files": {"image": ("x.jpg", JPEG, "image/jpeg")}, "data": {"options": "{nope"}},
        400,
        "malformed_json",
    ),
    (
        "options field not an object",
        "/v1/score",
        {"files": {"image": ("x.jpg", JPEG, "image/jpeg")}, "data": {"options": "[]"}},
        400,
        "malformed_json",
    ),
    (
        "multipart without image",
        "/v1/score",
        {"files": {"photo": ("x.jpg", JPEG, "image/jpeg")}},
        422,
        "missing_image",
    ),
    (
        "multipart without boundary",
        "/v1/score",
        {"content": b"--x\r\n", "headers": {"content-type": "multipart/form-data"}},
        400,
        "malformed_multipart",
    ),
    ("annotated unknown format", "/v1/annotated?format=gif", {"content": JPEG}, 400, "bad_options"),
    (
        "annotated not acceptable",
        "/v1/annotated",
        {"content": JPEG, "headers": {"accept": "application/json"}},
        406,
        "not_acceptable",
    ),
    ("annotated unknown game", "/v1/annotated?game=poker", {"content": JPEG}, 400, "bad_options"),
    ("pits table bad card", "/v1/pits?table=9Z", {"content": JPEG}, 400, "bad_card"),
    (
        "banker as a boolean",  # true is no seat: never taken as seat 1
        "/v1/score",
        {"json": {"hands": ["3H 7S KD 8C 6D", "2S 4S 5S 9S QH"], "banker": True}},
        422,
        "validation_error",
    ),
    (
        "stake as a boolean",
        "/v1/score",
        {"json": {"hands": ["3H 7S KD 8C 6D"], "stake": True}},
        422,
        "validation_error",
    ),
    (
        "pick as a boolean",
        "/v1/trainer/check",
        {"json": {"hands": ["3H 7S KD 8C 6D", "2S 4S 5S 9S QH"], "pick": True}},
        422,
        "validation_error",
    ),
    (
        "baccarat stake as a boolean",
        "/v1/baccarat",
        {"json": {"player": "9H 5C", "banker": "KD 6S", "stake": False}},
        422,
        "validation_error",
    ),
    ("read unknown option", "/v1/read?dekc=mine", {"content": JPEG}, 422, "validation_error"),
    (
        "read unknown option field",
        "/v1/read",
        {"files": {"image": ("x.jpg", JPEG, "image/jpeg")}, "data": {"options": '{"frob": 1}'}},
        422,
        "validation_error",
    ),
]


@pytest.mark.parametrize(
    ("case", "endpoint", "arguments", "status", "code"), BAD_REQUESTS,
    ids=[c[0] for c in BAD_REQUESTS],
)  # fmt: skip
def test_bad_requests(
    client: TestClient, case: str, endpoint: str, arguments: dict[str, Any], status: int,
    code: str,
) -> None:  # fmt: skip
    _assert_error(client.post(endpoint, **arguments), status, code)
    assert client.post("/v1/score", json={"hands": ["3H 7S KD 8C 6D"]}).status_code == 200


def test_unknown_path_and_method(client: TestClient) -> None:
    _assert_error(client.get("/v2/score"), 404, "not_found")
    _assert_error(client.get("/v1/score"), 405, "method_not_allowed")


# --- the recognizer failing ----------------------------------------------------------------------


def test_a_slow_recognizer_is_a_503_and_the_server_keeps_serving() -> None:
    slow = ShapeReader(delay_s=1.0)
    with _app(slow, read_timeout_s=0.1) as test_client:
        response = test_client.post("/v1/read", content=JPEG)
        _assert_error(response, 503, "recognizer_timeout")
        assert "0.1 s" in response.json()["error"]["message"]
        assert test_client.post("/v1/score", json={"hands": ["3H 7S KD 8C 6D"]}).status_code == 200


def test_a_failing_recognizer_is_a_500_json_error() -> None:
    broken = ShapeReader(error=RuntimeError("session lost"))
    with _app(broken) as test_client:
        response = test_client.post("/v1/score", content=JPEG)
        _assert_error(response, 500, "recognizer_failed")
        assert "session lost" in response.json()["error"]["message"]
        assert test_client.get("/health").status_code == 200


def test_a_bug_is_a_500_json_error(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise KeyError("oops")

    monkeypatch.setattr(scoring, "score_reading", broken)
    response = client.post("/v1/score", content=JPEG)
    _assert_error(response, 500, "internal_error")
    assert "oops" not in response.text  # the bug's own text stays in the log
    assert "unexpected error" in response.json()["error"]["message"]
    monkeypatch.undo()
    assert client.post("/v1/score", content=JPEG).status_code == 200


# --- fuzz ----------------------------------------------------------------------------------------


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.binary(max_size=400),
    st.sampled_from(["image/jpeg", "application/json", "multipart/form-data; boundary=b", ""]),
)
def test_no_body_ever_makes_a_500(client: TestClient, data: bytes, content_type: str) -> None:
    headers = {"content-type": content_type} if content_type else {}
    response = client.post("/v1/score", content=data, headers=headers)
    assert response.status_code < 500, response.text
    if response.status_code != 200:
        assert set(response.json()) == {"error"}


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("null", "null"),
        ("[1]", "an array"),
        ('"x"', "a string"),
        ("5", "a number"),
        ("true", "true"),
    ],
)
def test_a_json_value_that_is_no_object_is_named_in_json_words(text: str, kind: str) -> None:
    from handreader.service.requests import MalformedJsonError, parse_json_object

    with pytest.raises(MalformedJsonError) as refused:
        parse_json_object(text, "a control message")
    assert str(refused.value) == f"a control message must be a JSON object, got {kind}"

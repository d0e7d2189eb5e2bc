"""The service under attack, in process: image bombs, frames that would block the event loop,
foreign web pages on the live WebSocket, errors that must stay expected, JSON nested to break
recursion, and bodies read past their limit.

Each case replays a probe of the service as an attacker on its network would run it; the
statuses and codes come from ``handreader.service.errors.ERROR_STATUS``. The clients raise
server exceptions (the default of the test client), so an error that escaped the handlers
fails the test rather than becoming a 500.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from image_bombs import png_header_only
from starlette.websockets import WebSocketDisconnect
from web_fakes import NIU_TABLE, DeckFakeReader, FakeReader, error_message, image_bytes

from handreader.service import app as serve
from handreader.service import deps as service_deps
from handreader.service.requests import JSON_DEPTH, JSON_LIMIT

TOKEN = "operator-token-for-tests"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
BOMB = png_header_only(7000, 7000, 16, 6)
"""A 16-bit RGBA PNG header of 7000 x 7000 pixels (under the 50-megapixel limit, 392 MB
decoded): refused by its header, nothing is decoded."""


def _app(reader: object, **settings: Any) -> Any:
    app = serve.create_app(settings=serve.Settings(models_dir=Path("/nonexistent"), **settings))
    app.dependency_overrides[service_deps.get_reader] = lambda: reader
    return app


@pytest.fixture
def environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HANDREADER_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("HANDREADER_AUDIT_TOKEN", TOKEN)
    monkeypatch.setenv("HANDREADER_AUDIT_DB", str(tmp_path / "audit.sqlite3"))
    monkeypatch.delenv("HANDREADER_OPERATOR_TOKEN", raising=False)
    monkeypatch.delenv("HANDREADER_OPEN_DECKS", raising=False)
    return tmp_path


@pytest.fixture
def client(environment: Path) -> Iterator[TestClient]:
    with TestClient(_app(DeckFakeReader(NIU_TABLE))) as test_client:
        yield test_client


# --- 1. image bombs ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "send",
    [
        lambda c: c.post("/v1/read", content=BOMB),
        lambda c: c.post("/v1/score", files={"image": ("b.png", BOMB, "image/png")}),
        lambda c: c.post("/v1/annotated", content=BOMB),
        lambda c: c.post("/v1/baccarat", content=BOMB),
        lambda c: c.post(
            "/v1/decks/mine", files={"photo": ("AS.png", BOMB, "image/png")}, headers=AUTH
        ),
    ],
    ids=["read", "score", "annotated", "baccarat", "calibrate"],
)
def test_a_bomb_under_the_pixel_limit_is_refused_by_its_decoded_size(
    client: TestClient, send: Any
) -> None:
    message = error_message(send(client), 413, "too_many_pixels")
    assert "392,000,000 bytes" in message


def test_a_bomb_frame_is_refused_and_the_stream_goes_on(client: TestClient) -> None:
    with client.websocket_connect("/v1/live") as socket:
        socket.send_bytes(BOMB)
        assert socket.receive_json()["error"]["code"] == "too_many_pixels"
        socket.send_bytes(image_bytes())
        assert "cards" in socket.receive_json()


def test_images_wait_for_the_decoding_budget_and_then_answer_busy(environment: Path) -> None:
    app = _app(FakeReader(NIU_TABLE), decode_memory=50_000_000, read_timeout_s=0.3)
    with TestClient(app) as test_client:
        runtime = app.state.runtime
        with runtime.hold(50_000_000):  # all of it, as a decoding image would
            busy = test_client.post("/v1/read", content=image_bytes())
        assert "decoding budget" in error_message(busy, 503, "busy")
        assert runtime.memory.held == 0
        assert test_client.post("/v1/read", content=image_bytes()).status_code == 200


# --- 2. the live WebSocket -----------------------------------------------------------------------


def test_a_frame_is_decoded_off_the_event_loop(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the frame's decoding waits until /health has answered: on the event loop it would stop
    # /health from answering, and the wait would run out first
    answered = threading.Event()
    seen: list[bool] = []

    def slow_decode(*args: Any, **kwargs: Any) -> Any:
        seen.append(answered.wait(timeout=5))
        return decode_checked(*args, **kwargs)

    from handreader.service.routes import reading

    decode_checked = service_deps.decode_checked
    monkeypatch.setattr(service_deps, "decode_checked", slow_decode)
    monkeypatch.setattr(reading, "decode_checked", slow_decode, raising=False)
    with client.websocket_connect("/v1/live") as socket:
        socket.send_bytes(image_bytes())
        assert client.get("/health").status_code in (200, 503)
        answered.set()
        assert "cards" in socket.receive_json()
    assert seen == [True]


def test_a_page_of_another_origin_cannot_open_the_live_stream(client: TestClient) -> None:
    with (
        pytest.raises(WebSocketDisconnect) as refused,
        client.websocket_connect("/v1/live", headers={"Origin": "https://evil.example"}),
    ):
        pass
    assert refused.value.code == 1008


@pytest.mark.parametrize(
    "origin", [None, "http://testserver", "http://TESTSERVER:80", "https://tables.example"]
)
def test_the_own_origin_an_allowed_one_and_programs_may_connect(
    environment: Path, origin: str | None
) -> None:
    app = _app(FakeReader(NIU_TABLE), allowed_origins=("https://tables.example:443",))
    headers = {} if origin is None else {"Origin": origin}
    with (
        TestClient(app) as test_client,
        test_client.websocket_connect("/v1/live", headers=headers) as socket,
    ):
        socket.send_bytes(image_bytes())
        assert "cards" in socket.receive_json()


# --- 3. expected errors stay expected ------------------------------------------------------------


def test_a_refused_token_is_one_line_and_no_exception(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO):
        response = client.get("/v1/audit", headers={"Authorization": "Bearer wrong"})
    error_message(response, 401, "unauthorized")
    records = [record for record in caplog.records if record.levelno >= logging.WARNING]
    assert len(records) == 1 and records[0].exc_info is None
    assert "\n" not in records[0].getMessage()


def test_a_bad_declaration_is_a_400_without_a_traceback(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    options = {"declared": {"players": [{"seat": "one", "outcome": "maybe"}]}}
    with caplog.at_level(logging.INFO):
        response = client.post(
            "/v1/verify",
            files={"image": ("round.jpg", image_bytes(), "image/jpeg")},
            data={"options": json.dumps(options)},
            headers=AUTH,
        )
    error_message(response, 400, "bad_declaration")
    assert not [record for record in caplog.records if record.exc_info]


class BrokenReader:
    """A recognizer that returns something that is no reading: a bug past the recognizer."""

    def read(self, image_bgr: Any) -> Any:
        return object()


def test_a_bug_is_a_500_json_error_logged_once_and_the_server_goes_on(
    environment: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with TestClient(_app(BrokenReader())) as test_client, caplog.at_level(logging.INFO):
        response = test_client.post("/v1/read", content=image_bytes())
        error_message(response, 500, "internal_error")
        assert test_client.get("/v1/trainer/deal").status_code == 200
    tracebacks = [record for record in caplog.records if record.exc_info]
    assert len(tracebacks) == 1


def test_a_405_names_the_allowed_methods(client: TestClient) -> None:
    response = client.delete("/v1/read")
    error_message(response, 405, "method_not_allowed")
    assert response.headers["allow"] == "POST"


# --- 4. nesting ----------------------------------------------------------------------------------

DEEP = "[" * 1000 + "]" * 1000
"""JSON nested 1,000 deep (2 kB): deeper than Python's recursion limit allows to parse."""
JUST_TOO_DEEP = json.dumps({"a": json.loads("[" * JSON_DEPTH + "]" * JSON_DEPTH)})


def _nested_requests(nested: str) -> list[tuple[str, Any]]:
    document = '{"hands": ' + nested + "}"
    photo = {"image": ("p.jpg", image_bytes(), "image/jpeg")}
    json_type = {"content-type": "application/json"}
    requests: list[tuple[str, Any]] = [
        (f"{path} body", lambda c, p=path: c.post(p, content=document, headers=json_type))
        for path in ("/v1/score", "/v1/pits", "/v1/baccarat", "/v1/blackjack", "/v1/paigow")
    ]
    return [
        *requests,
        ("trainer body", lambda c: c.post("/v1/trainer/check", content=document)),
        (
            "multipart options",
            lambda c: c.post("/v1/score", files=photo, data={"options": '{"x": ' + nested + "}"}),
        ),
        (
            "query options",
            lambda c: c.post(
                "/v1/read", params={"options": '{"x": ' + nested + "}"}, content=image_bytes()
            ),
        ),
        (
            "declared",
            lambda c: c.post(
                "/v1/verify",
                files=photo,
                data={"options": json.dumps({"declared": '{"x": ' + nested + "}"})},
                headers=AUTH,
            ),
        ),
    ]


@pytest.mark.parametrize("nested", [DEEP, JUST_TOO_DEEP], ids=["1000 deep", "33 deep"])
@pytest.mark.parametrize("index", range(len(_nested_requests(DEEP))))
def test_json_nested_too_deep_is_a_400_everywhere(
    client: TestClient, nested: str, index: int
) -> None:
    what, send = _nested_requests(nested)[index]
    message = error_message(send(client), 400, "malformed_json")
    assert f"deeper than {JSON_DEPTH} levels" in message, what


def test_json_nested_too_deep_on_the_live_stream(client: TestClient) -> None:
    with client.websocket_connect("/v1/live") as socket:
        socket.send_text('{"options": ' + DEEP + "}")
        assert socket.receive_json()["error"]["code"] == "malformed_json"
        socket.send_bytes(image_bytes())
        assert "cards" in socket.receive_json()
    with client.websocket_connect("/v1/live", params={"options": DEEP}) as socket:
        assert socket.receive_json()["error"]["code"] == "malformed_json"


# --- 7. bodies past their limit ------------------------------------------------------------------


def test_the_trainer_reads_no_more_than_the_json_limit(client: TestClient) -> None:
    padded = b'{"hands": ["3H 7S KD 8C 6D", "KS QS 10S 5C 5S"], "pick": 1}' + b" " * JSON_LIMIT
    response = client.post("/v1/trainer/check", content=padded)
    error_message(response, 413, "too_large")
    check = {"hands": ["3H 7S KD 8C 6D", "KS QS 10S 5C 5S"], "pick": 1}
    assert client.post("/v1/trainer/check", json=check).json()["correct"] is True
